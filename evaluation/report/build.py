"""Build the evaluation report from a run's stored answers and verdicts, and its checksum."""

from core.canonical import canonical_digest as report_digest  # noqa: F401 (re-exported: the report's checksum)
from evaluation import selectors
from evaluation.models import EvaluationRun
from evaluation.report.tables import report_tables


def build_report(run: EvaluationRun) -> dict:
    """Assemble every table of the report as plain JSON, from the facts the run's records hold."""
    return report_tables(selectors.evaluation_report_facts(run=run))

"""Build the evaluation report from a run's stored answers and verdicts, and its checksum."""

import hashlib

from core.canonical import canonical_json
from evaluation import selectors
from evaluation.models import EvaluationRun
from evaluation.report.tables import report_tables


def build_report(run: EvaluationRun) -> dict:
    """Assemble every table of the report as plain JSON, from the facts the run's records hold."""
    return report_tables(selectors.evaluation_report_facts(run=run))


def report_digest(report: dict) -> str:
    """Return the SHA-256 of the report's canonical JSON."""
    return hashlib.sha256(canonical_json(report).encode("utf-8")).hexdigest()

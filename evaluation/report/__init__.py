"""The evaluation report, rebuilt from the stored answers and verdicts alone (so recomputing gives the same bytes).

Objective: accuracy per model x dimension x language with Wilson intervals, macro/micro averages, paired bootstrap
differences with Benjamini-Hochberg, discriminability, position bias among wrong answers, multi-turn splits and the
crisis confusion matrix. Subjective: TrueSkill ratings per model x dimension x language (and overall per language)
from the judge's combined verdicts, and the win-rate matrix. Analyses: ΔZ typology and style metrics.
"""

from evaluation.report.build import build_report, report_digest
from evaluation.report.files import report_directory_files, report_file, report_files, report_files_names

__all__ = [
    "build_report",
    "report_digest",
    "report_directory_files",
    "report_file",
    "report_files",
    "report_files_names",
]

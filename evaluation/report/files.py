"""The downloadable files of an evaluation report: tables as CSV and LaTeX, figures as SVG, PNG and PDF, JSON."""

import json

from core.csvsafe import csv_text
from evaluation.charts import figures
from evaluation.models import EvaluationRun

CONTENT_TYPES = {
    "csv": "text/csv",
    "json": "application/json",
    "tex": "application/x-tex",
    "svg": "image/svg+xml",
    "png": "image/png",
    "pdf": "application/pdf",
}


def report_files_names(languages: list[str]) -> list[str]:
    """Return the names of the files a report offers for download, in the order the page lists them."""
    return [
        "report.json",
        "accuracy.csv",
        "ratings.csv",
        "bradley_terry.csv",
        "win_rates.csv",
        "leaderboard.tex",
        "scatter.svg",
        "delta_z.svg",
        "ratings.svg",
        "bradley_terry.svg",
        *[f"accuracy_{lang}.svg" for lang in languages],
        *[f"{name}.{fmt}" for name in ("scatter", "delta_z", "ratings", "bradley_terry") for fmt in ("png", "pdf")],
    ]


# Column order of each table, fixed here: a report read back from PostgreSQL's jsonb has its keys reordered, and
# the files must be the same bytes on every database.
COLUMNS = {
    "accuracy.csv": ["model", "dimension", "language", "n", "correct", "accuracy", "ci_low", "ci_high"],
    "ratings.csv": [
        "model",
        "dimension",
        "language",
        "mu",
        "sigma",
        "conservative",
        "display",
        "display_low",
        "display_high",
        "n",
    ],
    "bradley_terry.csv": [
        "model",
        "language",
        "strength",
        "low",
        "high",
        "elo",
        "elo_low",
        "elo_high",
        "rank",
        "rank_low",
        "rank_high",
        "wins",
        "n",
    ],
    "win_rates.csv": ["language", "a", "b", "wins", "losses", "draws", "rate", "p", "p_adjusted", "significant"],
}


def _csv(rows: list[dict], columns: list[str]) -> bytes:
    if not rows:
        return b""
    # Columns this version does not know (a report stored by a later one) follow the known ones, sorted.
    extra = sorted(set().union(*rows) - set(columns))
    # Text cells (model codes, dimensions) are quoted and escaped where a spreadsheet would run them; numbers not.
    return csv_text(rows, [*columns, *extra]).encode("utf-8")


def report_tables(report: dict) -> dict[str, bytes]:
    """Return the report's tables as CSV files by name (empty bytes for a table the report does not have)."""
    return {
        "accuracy.csv": _csv(report["objective"]["accuracy"], COLUMNS["accuracy.csv"]),
        "ratings.csv": _csv(report["subjective"]["ratings"], COLUMNS["ratings.csv"]),
        # Reports stored before Bradley-Terry was added have no such table.
        "bradley_terry.csv": _csv(report["subjective"].get("bradley_terry", []), COLUMNS["bradley_terry.csv"]),
        "win_rates.csv": _csv(report["subjective"]["win_rates"], COLUMNS["win_rates.csv"]),
    }


def _latex(report: dict) -> bytes:
    lines = [
        r"\begin{tabular}{llrrrr}",
        r"\toprule",
        r"Model & Lang. & Acc. (micro) & Acc. (macro) & Rating & $\Delta Z$ \\",
        r"\midrule",
    ]

    def f(v: object, digits: int = 3) -> str:
        return "--" if v is None else f"{v:.{digits}f}"

    for r in report["analysis"]["standing"]:
        lines.append(
            f"{r['model']} & {r['language']} & {f(r['accuracy'])} & {f(r['macro'])} & {f(r['rating'], 1)} & "
            f"{f(r['delta'], 2)} \\\\"
        )
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines).encode("utf-8")


def report_files(report: dict, *, with_raster: bool = True) -> dict[str, bytes]:
    """Return the downloadable files of a report (tables as CSV/LaTeX, figures as SVG, everything as JSON)."""
    files = {
        "report.json": json.dumps(report, ensure_ascii=False, indent=2, sort_keys=True).encode("utf-8"),
        **report_tables(report),
        "leaderboard.tex": _latex(report),
    }
    files.update({name: svg.encode("utf-8") for name, svg in figures(report).items()})
    if with_raster:
        from evaluation.report.raster import raster_files

        files.update(raster_files(report))
    return files


def report_file(run: EvaluationRun, name: str) -> tuple[bytes, str, str] | None:
    """Return one file of the run's report as (bytes, content type, file name); None if the report has no such file.

    The PNG and PDF figures are drawn only when one of them is asked for.
    """
    files = report_files(run.report, with_raster=name.endswith((".png", ".pdf")))
    if name not in files:
        return None
    return files[name], CONTENT_TYPES.get(name.rsplit(".", 1)[-1], "application/octet-stream"), f"{run.pk}-{name}"


def report_directory_files(report: dict) -> dict[str, bytes]:
    """Return the files the ``evaluation_report`` command writes: the downloads, with ``report.json`` unsorted.

    The downloaded ``report.json`` has sorted keys; the one written to a directory keeps the report's key order.
    """
    return report_files(report) | {"report.json": json.dumps(report, ensure_ascii=False, indent=2).encode("utf-8")}

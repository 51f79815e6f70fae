"""The downloadable files of an evaluation report: tables as CSV and LaTeX, figures as SVG, PNG and PDF, JSON."""

import hashlib
import json

from django.core.cache import cache, caches
from django.core.cache.backends.locmem import LocMemCache
from django.utils.translation import get_language

from annotation.items.models import Dimension
from core.csvsafe import csv_text
from core.figures import svg_data_uri
from core.i18n import in_ui_language
from core.latex import latex_escape
from evaluation.charts import figure_titles, figures, language_name
from evaluation.models import EvaluationRun

# Part of the cache key of drawn figures: bump it when the drawing changes so cached figures are redrawn.
FIGURES_VERSION = 4
FIGURE_STEMS = ("scatter", "delta_z", "ratings", "bradley_terry")
EICAP_FIGURES = ("heatmap", "turns", "agreement", "margins")
# The EiCAP tables as CSV: file name -> the key of the report's ``eicap`` section.
EICAP_TABLES = {
    "eicap_subcategories.csv": "subcategories",
    "eicap_layers.csv": "layers",
    "eicap_summary.csv": "summary",
    "eicap_turns.csv": "turns",
    "eicap_agreement.csv": "agreement",
    "eicap_margins.csv": "margins",
    "eicap_significance.csv": "significance",
    "eicap_significance_summary.csv": "significance_summary",
}

CONTENT_TYPES = {
    "csv": "text/csv",
    "json": "application/json",
    "tex": "application/x-tex",
    "svg": "image/svg+xml",
    "png": "image/png",
    "pdf": "application/pdf",
}


def report_files_names(
    languages: list[str], *, eicap_languages: list[str] | tuple[str, ...] = (), held_out: bool = False
) -> list[str]:
    """Return the names of the files a report offers for download, in the order the page lists them.

    ``eicap_languages``: the languages of the report's EiCAP analyses (its multi-turn choice probes), if any;
    ``held_out``: whether it scores a held-out probe set.
    """
    return [
        *table_file_names(eicap=bool(eicap_languages), held_out=held_out),
        *[f"{stem}.{fmt}" for stem in figure_stems(languages, eicap_languages) for fmt in ("svg", "png", "pdf")],
    ]


def table_file_names(*, eicap: bool = False, held_out: bool = False) -> list[str]:
    """Return the names of the report's files that are not figures (figures are offered beside each figure)."""
    names = ["report.json", "accuracy.csv", "ratings.csv", "bradley_terry.csv", "win_rates.csv", "leaderboard.tex"]
    return names + (list(EICAP_TABLES) + ["eicap_table2.tex"] if eicap else []) + (["held_out.csv"] if held_out else [])


def figure_stems(languages: list[str], eicap_languages: list[str] | tuple[str, ...] = ()) -> list[str]:
    """Return the file stems of a report's figures (an accuracy heatmap per language, EiCAP's four per language)."""
    return [
        *FIGURE_STEMS,
        *[f"accuracy_{lang}" for lang in languages],
        *[f"eicap_{figure}_{lang}" for lang in eicap_languages for figure in EICAP_FIGURES],
    ]


def report_eicap_languages(report: dict) -> list[str]:
    """Return the languages of a report's EiCAP analyses (none for a report without, or stored before them)."""
    return (report.get("eicap") or {}).get("languages", [])


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
    "held_out.csv": [
        "language", "model", "n_main", "main", "main_low", "main_high", "n_held_out", "held_out", "held_out_low",
        "held_out_high", "diff", "diff_low", "diff_high",
    ],
    "eicap_subcategories.csv": [
        "language", "model", "protocol", "layer", "subcategory", "n", "correct", "accuracy", "ci_low", "ci_high",
    ],
    "eicap_layers.csv": ["language", "model", "protocol", "layer", "n", "correct", "accuracy", "ci_low", "ci_high"],
    "eicap_summary.csv": [
        "language", "model", "protocol", "n", "micro", "micro_low", "micro_high", "macro", "subcategories", "chance",
        "baseline", "significant_better", "significant_worse",
    ],
    "eicap_turns.csv": [
        "language", "model", "protocol", "n", "turn1", "turn1_low", "turn1_high", "turn2", "turn2_low", "turn2_high",
        "both_wrong", "both_wrong_low", "both_wrong_high", "both_right", "only_first", "only_second", "gap",
        "gap_low", "gap_high", "gap_p", "undefined_reason",
    ],
    "eicap_agreement.csv": ["language", "protocol", "a", "b", "n", "same", "agreement"],
    "eicap_margins.csv": ["language", "model", "n", "mean", "median", "q1", "q3", "share_positive", "counts", "edges"],
    "eicap_significance.csv": [
        "language", "protocol", "model", "baseline", "layer", "subcategory", "n", "accuracy", "baseline_accuracy",
        "diff", "ci_low", "ci_high", "p", "p_adjusted", "significant", "undefined_reason",
    ],
    "eicap_significance_summary.csv": [
        "language", "protocol", "model", "baseline", "subcategories", "significant_better", "significant_worse",
    ],
}  # fmt: skip


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
        **_eicap_tables(report),
        **(
            {"held_out.csv": _csv(report["held_out"]["accuracy"], COLUMNS["held_out.csv"])}
            if (report.get("held_out") or {}).get("accuracy")
            else {}
        ),
    }


def _eicap_tables(report: dict) -> dict[str, bytes]:
    """Return the EiCAP tables as CSV (none for a report without multi-turn choice probes); lists as JSON cells."""
    eicap = report.get("eicap") or {}
    if not eicap:
        return {}
    files = {}
    for name, key in EICAP_TABLES.items():
        rows = [{k: json.dumps(v) if isinstance(v, list) else v for k, v in row.items()} for row in eicap.get(key, [])]
        files[name] = _csv(rows, COLUMNS[name])
    files["eicap_table2.tex"] = _eicap_latex(eicap)
    return files


def _eicap_latex(eicap: dict) -> bytes:
    """EiCAP's Table 2: each model's macro accuracy and subcategories significantly better than the baseline."""
    summary = {(r["language"], r["model"]): r for r in eicap.get("significance_summary", [])}
    lines = [r"\begin{tabular}{llrrl}", r"\toprule", r"Model & Lang. & Macro (\%) & Micro (\%) & Sig. \\", r"\midrule"]
    for r in eicap.get("summary", []):
        s = summary.get((r["language"], r["model"]))
        sig = f"{s['significant_better']}/{s['subcategories']}" if s else "--"
        mark = r"$^\dagger$" if r["protocol"] == "letter" else ""
        lines.append(
            f"{latex_escape(r['model'])}{mark} & {latex_escape(r['language'])} & {100 * r['macro']:.2f} & "
            f"{100 * r['micro']:.2f} & {sig} \\\\"
        )
    lines += [r"\bottomrule", r"\end{tabular}"]
    baselines = ", ".join(f"{latex_escape(v)} ({k})" for k, v in eicap.get("baselines", {}).items())
    lines.append(
        f"% Sig.: subcategories significantly better than the baseline {baselines} (paired bootstrap, "
        f"{eicap.get('resamples')} resamples, BH-FDR {eicap.get('fdr')})."
    )
    if eicap.get("mixed_protocols"):
        lines.append(r"% $^\dagger$ letter choice (chat-only API): a different protocol, not directly comparable.")
    return ("\n".join(lines) + "\n").encode("utf-8")


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
            f"{latex_escape(r['model'])} & {latex_escape(r['language'])} & {f(r['accuracy'])} & {f(r['macro'])} & "
            f"{f(r['rating'], 1)} & "
            f"{f(r['delta'], 2)} \\\\"
        )
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines).encode("utf-8")


def report_files(
    report: dict, *, with_figures: bool = True, dimension_names: dict[str, str] | None = None
) -> dict[str, bytes]:
    """Return the downloadable files of a report: tables as CSV/LaTeX, figures as SVG/PNG/PDF, everything as JSON.

    Figures are drawn in the active language, dimensions shown by ``dimension_names`` (code: name).
    """
    files = {
        "report.json": json.dumps(report, ensure_ascii=False, indent=2, sort_keys=True).encode("utf-8"),
        **report_tables(report),
        "leaderboard.tex": _latex(report),
    }
    if with_figures:
        files.update(figures(report, dimension_names))
    return files


def dimension_names(run: EvaluationRun, report: dict) -> dict[str, str]:
    """Return the name of each dimension of the report in the active language, by code (one query)."""
    codes = {r["dimension"] for r in report.get("objective", {}).get("accuracy", [])} | {
        r["dimension"] for r in report.get("subjective", {}).get("ratings", [])
    }
    codes |= {r["dimension"] for r in report.get("analysis", {}).get("cross_lingual", [])}
    eicap = report.get("eicap") or {}
    codes |= {r["layer"] for r in eicap.get("layers", [])} | {r["subcategory"] for r in eicap.get("subcategories", [])}
    rows = Dimension.objects.filter(benchmark__releases=run.release_id, code__in=codes).values_list(
        "code", "name_en", "name_zh"
    )
    return {code: in_ui_language(name_en, name_zh) for code, name_en, name_zh in rows}


def run_figures(
    run: EvaluationRun, fmt: str, names: dict[str, str] | None = None, *, draw: bool = True
) -> dict[str, bytes] | None:
    """Return the figures of a run's report in one format and the active language, drawn once, then cached.

    A report never changes under its checksum, so the figures are cached by run, checksum, language, format and
    the dimension names (a renamed dimension redraws them). The page needs only the SVGs; PNG and PDF (the PDF
    embeds font subsets, the slowest to write) are drawn when first downloaded. ``names``: the report's
    ``dimension_names``, when the caller has read them already. With ``draw`` false, None when they are not drawn.
    """
    names = dimension_names(run, run.report) if names is None else names
    language = get_language() or "en"
    names_key = hashlib.sha256(json.dumps(names, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]
    key = f"evaluation-figures:{FIGURES_VERSION}:{run.pk}:{run.report_digest}:{language}:{fmt}:{names_key}"
    drawn = cache.get(key)
    if drawn is None and not draw:
        return None
    if drawn is None:
        drawn = figures(run.report, names, formats=(fmt,))
        cache.set(key, drawn, timeout=None)
    return drawn


def figures_cache_shared() -> bool:
    """Whether figures a worker draws reach the web processes (a shared cache, not one per process)."""
    return not isinstance(caches["default"], LocMemCache)


def page_figures(run: EvaluationRun, names: dict[str, str] | None = None, *, draw: bool = True) -> list[dict] | None:
    """Return the figures shown on the run's page: stem, caption, the SVG as a data URI, and the download names.

    With ``draw`` false, None when they are not drawn yet (a worker is drawing them)."""
    drawn = run_figures(run, "svg", names, draw=draw)
    if drawn is None:
        return None
    titles = figure_titles()
    shown = []
    for stem in figure_stems(run.report.get("languages", []), report_eicap_languages(run.report)):
        if f"{stem}.svg" not in drawn:
            continue
        prefix, _sep, lang = stem.rpartition("_")
        title = titles.get(stem) or f"{titles.get(prefix, prefix)} ({language_name(lang)})"
        shown.append(
            {
                "stem": stem,
                "title": title,
                "uri": svg_data_uri(drawn[f"{stem}.svg"]),
                "files": [f"{stem}.{fmt}" for fmt in ("svg", "png", "pdf")],
            }
        )
    return shown


def report_file(run: EvaluationRun, name: str) -> tuple[bytes, str, str] | None:
    """Return one file of the run's report as (bytes, content type, file name); None if the report has no such file.

    Figures come from the cache of drawn figures (``run_figures``), tables are written on demand.
    """
    if name.endswith((".svg", ".png", ".pdf")):
        files = run_figures(run, name.rsplit(".", 1)[-1])
    else:
        files = report_files(run.report, with_figures=False)
    if name not in files:
        return None
    return files[name], CONTENT_TYPES.get(name.rsplit(".", 1)[-1], "application/octet-stream"), f"{run.pk}-{name}"


def report_directory_files(report: dict, *, dimension_names: dict[str, str] | None = None) -> dict[str, bytes]:
    """Return the files the ``evaluation_report`` command writes: the downloads, with ``report.json`` unsorted.

    The downloaded ``report.json`` has sorted keys; the one written to a directory keeps the report's key order.
    """
    return report_files(report, dimension_names=dimension_names) | {
        "report.json": json.dumps(report, ensure_ascii=False, indent=2).encode("utf-8")
    }

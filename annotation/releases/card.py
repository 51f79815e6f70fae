"""The dataset card (``README.md`` of an export), written in each language of the release from recorded facts.

No database reads: the facts (``annotation.releases.record.card_facts``) and the release identity in, Markdown out.
Every
sentence is a translatable message, counts go through ``ngettext`` so each language gets its plural forms; the
card is written once, at freeze, and kept with the release's files.
"""

from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext, pgettext

from annotation.items.content import LANGUAGES
from annotation.items.interchange import FORMAT
from annotation.releases.checks import CHECK_LABELS, checklist_display
from annotation.screening.models import DECISIONS, RoundItem

# Item languages and the interface locales their sections are written in; a section is headed by the name of its
# language in that language.
LOCALES = {"en": "en", "zh": "zh-hans"}
LANGUAGE_NAMES = {"en": "English", "zh": "中文"}
DECISION_LABELS = dict(DECISIONS)


def card_markdown(meta: dict, facts: dict, *, layout: int = 1) -> str:
    """Return the card: title and description as written, then one section per language of the release.

    ``layout``: the export layout the card describes (``annotation.releases.export.LAYOUTS``), for its list of files.
    """
    lines = [f"# {meta['title']}", ""]
    if meta.get("description"):
        lines += [meta["description"], ""]
    for lang in facts["languages"]:
        with translation.override(LOCALES[lang]):
            lines += _section(lang, meta, facts, layout)
    return "\n".join(lines)


def _section(lang: str, meta: dict, facts: dict, layout: int) -> list[str]:
    return [
        f"## {LANGUAGE_NAMES[lang]}",
        "",
        _identity(meta, facts),
        "",
        *_contents(facts),
        *_taxonomy(lang, facts),
        *_origins(facts),
        *_revisions(facts),
        *_screening(lang, facts),
        *_validation(facts),
        *_key_validation(facts),
        _heading(_("Licence")),
        "",
        meta.get("licence") or _("Not stated."),
        "",
        _heading(_("Citation")),
        "",
        "```",
        meta.get("citation") or _("Not stated."),
        "```",
        "",
        *_files(layout),
    ]


def _heading(title: str) -> str:
    # Messages are never marked inside f-strings: makemessages (xgettext) would not find them.
    return "### " + title


def _separator() -> str:
    return pgettext("list separator", ", ")


def _labelled(label: str, text: str) -> str:
    return _("%(label)s: %(text)s") % {"label": label, "text": text}


def _name(row: dict, lang: str, field: str = "name") -> str:
    return (row.get(f"{field}_zh") if lang == "zh" else "") or row.get(f"{field}_en") or ""


def _bullets(lines: list[str]) -> list[str]:
    return [f"- {line}" for line in lines] + [""]


def _identity(meta: dict, facts: dict) -> str:
    values = {"benchmark": meta["benchmark"], "version": meta["version"], "time": meta.get("frozen_at")}
    if facts["frozen"]:
        return _(
            "Benchmark `%(benchmark)s`, version %(version)s, frozen at %(time)s; content checksum "
            "(SHA-256 over the uid, revision number and revision hash of every pinned item) `%(checksum)s`."
        ) % {**values, "checksum": meta["content_checksum"]}
    return (
        _(
            "Benchmark `%(benchmark)s`, version %(version)s, a draft: this card is a preview, written again from "
            "the record when the release is frozen."
        )
        % values
    )


def _contents(facts: dict) -> list[str]:
    lines = [
        _heading(_("Contents")),
        "",
        "| " + " | ".join([_("dimension"), _("module"), *LANGUAGES]) + " |",
        "|---|---|" + "---|" * len(LANGUAGES),
    ]
    for dim in facts["dimensions"]:
        module = dim["module"]["code"] if dim["module"] else ""
        counts = " | ".join(str(dim["counts"][lang]) for lang in LANGUAGES)
        lines.append(f"| {dim['code']} | {module} | {counts} |")
    totals = " | ".join(str(sum(d["counts"][lang] for d in facts["dimensions"])) for lang in LANGUAGES)
    return [*lines, "| **" + _("total") + f"** | | {totals} |", ""]


def _taxonomy(lang: str, facts: dict) -> list[str]:
    lines = [_heading(_("Taxonomy")), ""]
    modules: dict[str, dict] = {}
    for dim in facts["dimensions"]:
        key = dim["module"]["code"] if dim["module"] else ""
        modules.setdefault(key, {"module": dim["module"], "dimensions": []})["dimensions"].append(dim)
    for key in sorted(modules):
        group = modules[key]
        indent = ""
        if group["module"]:
            lines.append(f"- `{key}` {_name(group['module'], lang)}")
            indent = "  "
        for dim in group["dimensions"]:
            definition = _name(dim, lang, "definition")
            lines.append(f"{indent}- `{dim['code']}` {_name(dim, lang)}" + (f" — {definition}" if definition else ""))
    return [*lines, ""]


def _origins(facts: dict) -> list[str]:
    origins = facts["origins"]
    lines = []
    if origins["expert"]:
        n = origins["expert"]
        lines.append(ngettext("%(n)s item written by experts", "%(n)s items written by experts", n) % {"n": n})
    for source, n in origins["imported"].items():
        if source:
            lines.append(
                ngettext("%(n)s item imported from %(source)s", "%(n)s items imported from %(source)s", n)
                % {"n": n, "source": source}
            )
        else:
            lines.append(
                ngettext(
                    "%(n)s item imported without a recorded source", "%(n)s items imported without a recorded source", n
                )
                % {"n": n}
            )
    if n := origins["llm_draft_revised"]:
        lines.append(
            ngettext(
                "%(n)s item drafted by a language model, then revised",
                "%(n)s items drafted by a language model, then revised",
                n,
            )
            % {"n": n}
        )
    if n := origins["llm_draft_unrevised"]:
        lines.append(
            ngettext(
                "%(n)s item drafted by a language model and not revised since",
                "%(n)s items drafted by a language model and not revised since",
                n,
            )
            % {"n": n}
        )
    return [_heading(_("Origins")), "", *_bullets(lines)]


def _revisions(facts: dict) -> list[str]:
    revisions = facts["revisions"]
    total, authors, unattributed = revisions["total"], revisions["authors"], revisions["unattributed"]
    lines = [
        ngettext(
            "%(n)s revision in the history of these items, up to the pinned ones",
            "%(n)s revisions in the history of these items, up to the pinned ones",
            total,
        )
        % {"n": total},
        ngettext("written by %(n)s named author", "written by %(n)s named authors", authors) % {"n": authors},
    ]
    if unattributed:
        lines.append(
            ngettext(
                "%(n)s revision has no named author (an import or a script wrote it)",
                "%(n)s revisions have no named author (imports or scripts wrote them)",
                unattributed,
            )
            % {"n": unattributed}
        )
    for count, items in revisions["per_item"]:
        lines.append(
            _("%(items)s with %(revisions)s")
            % {
                "items": ngettext("%(n)s item", "%(n)s items", items) % {"n": items},
                "revisions": ngettext("%(n)s revision", "%(n)s revisions", count) % {"n": count},
            }
        )
    return [_heading(_("Revisions")), "", *_bullets(lines)]


def _counts(counts: dict, labels: dict) -> str:
    return _separator().join(f"{labels.get(key, key)} {n}" for key, n in counts.items())


def _screening(lang: str, facts: dict) -> list[str]:
    lines = [_heading(_("Screening")), ""]
    outcome_labels = dict(RoundItem.Outcome.choices)
    for r in facts["rounds"]:
        title = _("Round %(number)s: %(title)s") % {"number": r["number"], "title": r["title"]}
        if r["open"]:
            title += " " + _("(still open)")
        points = _round_points(r, lang, outcome_labels)
        lines += [f"#### {title}", "", *_bullets(points)]
    if n := facts["unscreened"]:
        lines += [
            ngettext(
                "%(n)s item went through no screening round recorded in this instance.",
                "%(n)s items went through no screening round recorded in this instance.",
                n,
            )
            % {"n": n},
            "",
        ]
    return lines


def _round_points(r: dict, lang: str, outcome_labels: dict) -> list[str]:
    """Return the card's points on one screening round: criteria, reviewers, items, reviews, outcomes, agreement."""
    points = [
        _("Criteria: %(criteria)s") % {"criteria": _separator().join(_name(c, lang) for c in r["criteria"])},
        ngettext(
            "%(n)s reviewer in the round, %(per)s per item",
            "%(n)s reviewers in the round, %(per)s per item",
            r["reviewers"],
        )
        % {"n": r["reviewers"], "per": r["reviewers_per_item"]},
        ngettext(
            "%(n)s item of this release reviewed in this round",
            "%(n)s items of this release reviewed in this round",
            r["items"],
        )
        % {"n": r["items"]},
    ]
    if r["earlier_revision"]:
        points.append(
            ngettext(
                "%(n)s of them reviewed at an earlier revision than the one pinned",
                "%(n)s of them reviewed at earlier revisions than the ones pinned",
                r["earlier_revision"],
            )
            % {"n": r["earlier_revision"]}
        )
    if r["decisions"]:
        points.append(
            _("Reviews submitted on them: %(decisions)s") % {"decisions": _counts(r["decisions"], DECISION_LABELS)}
        )
    else:
        points.append(_("No review was submitted on them."))
    points.append(_("Outcomes: %(outcomes)s") % {"outcomes": _counts(r["outcomes"], outcome_labels)})
    if adjudicated := sum(r["adjudicated"].values()):
        points.append(
            ngettext(
                "%(n)s conflict adjudicated: %(outcomes)s", "%(n)s conflicts adjudicated: %(outcomes)s", adjudicated
            )
            % {"n": adjudicated, "outcomes": _counts(r["adjudicated"], outcome_labels)}
        )
    if r["alpha"] is not None:
        points.append(
            ngettext(
                "Agreement between reviewers over the round's %(n)s item: Krippendorff's alpha (nominal) %(alpha)s",
                "Agreement between reviewers over the round's %(n)s items: Krippendorff's alpha (nominal) %(alpha)s",
                r["round_items"],
            )
            % {"n": r["round_items"], "alpha": f"{r['alpha']:.3f}"}
        )
    else:
        points.append(
            _("Krippendorff's alpha is not defined for this round: %(reason)s") % {"reason": r["alpha_note"][lang]}
        )
    return points


def _validation(facts: dict) -> list[str]:
    checks = checklist_display(facts["checks"])
    lines = [
        ("✓ " if c["passed"] else "✗ ") + _labelled(str(CHECK_LABELS.get(c["code"], c["code"])), c["summary"])
        for c in checks
    ]
    failed = any(not c["passed"] for c in checks)
    values = {"user": facts["frozen_by"], "reason": facts["override_reason"]}
    statement = ""
    if facts["frozen"] and facts["frozen_by"]:
        statement = (
            _("Frozen by %(user)s despite failed checks. Reason given: %(reason)s")
            if failed
            else _("Frozen by %(user)s with every check passed.")
        ) % values
    elif facts["frozen"]:
        statement = (
            _("Frozen despite failed checks, with no user recorded. Reason given: %(reason)s")
            if failed
            else _("Frozen with every check passed, with no user recorded.")
        ) % values
    return [_heading(_("Validation")), "", *_bullets(lines), *([statement, ""] if statement else [])]


def _key_validation(facts: dict) -> list[str]:
    """The independent check of the EiCAP probe keys, for releases that pin probes a key validation judged."""
    found = facts.get("key_validation")
    if not found:
        return []
    if found["kappa"] is None:
        figure = _("Cohen's kappa is undefined: %(reason)s") % {"reason": found["undefined_reason"]}
    else:
        figure = _(
            "Cohen's kappa between the judge's answers and the keys: %(kappa)s (95%% bootstrap interval %(low)s to "
            "%(high)s, %(boot)s resamples), raw agreement %(agreement)s, over %(units)s answered probe turns"
        ) % {
            "kappa": f"{found['kappa']:.3f}",
            "low": f"{found['ci_low']:.3f}",
            "high": f"{found['ci_high']:.3f}",
            "boot": found["n_boot"],
            "agreement": f"{found['agreement']:.3f}",
            "units": found["n_units"],
        }
    lines = [
        _(
            "A second judge from another model family than the drafter answered the probes blind, by letter "
            "choice, as a model under evaluation sees them."
        ),
        figure,
        ngettext(
            "%(n)s probe of this release was judged (of %(total)s in the validation)",
            "%(n)s probes of this release were judged (of %(total)s in the validation)",
            found["pinned"],
        )
        % {"n": found["pinned"], "total": found["n_probes"]},
    ]
    if found["unanswered"]:
        lines.append(
            ngettext(
                "%(n)s probe turn answered with no option",
                "%(n)s probe turns answered with no option",
                found["unanswered"],
            )
            % {"n": found["unanswered"]}
        )
    return [_heading(_("Independent validation of the keys")), "", *_bullets(lines)]


def _layout_2_files() -> list[str]:
    return [
        _labelled(
            "`items.en.parquet`, `items.zh.parquet`, `items.bilingual.parquet`",
            _("the Hugging Face configurations en, zh and bilingual, typed; load one with %(command)s")
            % {"command": '`datasets.load_dataset(DIR, "en")`'},
        ),
        _labelled(
            "`inspect_task.py`", _("an Inspect AI task that runs the objective items as this benchmark's app does")
        ),
        _labelled(
            "`lm_eval.<lang>.yaml`, `lm_eval.<lang>.jsonl`",
            _("lm-evaluation-harness tasks: multiple choice by log-likelihood, one document per turn"),
        ),
        _labelled("`evals.<lang>.jsonl`", _("OpenAI evals samples (Match), one per turn")),
    ]


def _files(layout: int) -> list[str]:
    return [
        _heading(_("Files")),
        "",
        *_bullets(
            [
                _labelled("`items.<lang>.jsonl`", _("one record per item in that language")),
                _labelled(
                    "`items.bilingual.jsonl`",
                    _("both languages per record, in the %(format)s interchange format") % {"format": f"`{FORMAT}`"},
                ),
                _labelled("`items.csv`, `items.parquet`", _("one row per item and language")),
                *(_layout_2_files() if layout >= 2 else []),
                _labelled(
                    "`manifest.json`",
                    _("size and SHA-256 of every other file; check a copy with %(command)s")
                    % {"command": "`python manage.py verify_release DIR`"},
                ),
            ]
        ),
    ]

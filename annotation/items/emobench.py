"""Convert EmoBench rows into the project's interchange records (pure Python, no Django).

EmoBench (Sabour et al., ACL 2024; github.com/Sahandfer/EmoBench) ships two JSON Lines files:

- ``EA.jsonl`` (Emotional Application): one multiple-choice question per row; ``label`` is the answer text.
- ``EU.jsonl`` (Emotional Understanding): two questions per row, the emotion and its cause.

English and Chinese versions of one item are separate rows sharing ``qid``. Choice order is matched by
text within each language, never by position across languages. Faults in the source (a label that is not
among the choices, a missing language, duplicate or malformed rows, languages that disagree) never stop a
conversion: each one becomes a :class:`SourceFault`, and the affected language is left out or its answer
left as ``None`` so that the project's parity checks flag the item too. Nothing is invented.

Question wording follows EmoBench's own prompts (``src/configs/prompts.yaml`` at commit 3b4f843).
"""

import re
from dataclasses import asdict, dataclass

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

FORMAT = "eistudio-item/1"
LANGUAGES = ("en", "zh")
SOURCE_NAME = "EmoBench"
CITATION = "Sabour et al. (2024). EmoBench: Evaluating the Emotional Intelligence of Large Language Models. ACL 2024."

EA_MARKERS = frozenset({"category", "question type", "choices", "label"})
EU_MARKERS = frozenset(
    {
        "coarse_category",
        "finegrained_category",
        "emotion_choices",
        "emotion_label",
        "cause_choices",
        "cause_label",
    }
)

# Text fields every row needs, whatever the task; the first category field names the dimension.
COMMON_FIELDS = ("scenario", "subject")
CATEGORY_FIELDS = {"EA": ("category", "question type"), "EU": ("coarse_category", "finegrained_category")}
# (part, choices field, label field) for each question a row holds; part "" means the row's only question.
QUESTIONS = {
    "EA": (("", "choices", "label"),),
    "EU": (("emotion", "emotion_choices", "emotion_label"), ("cause", "cause_choices", "cause_label")),
}

EA_QUESTION = {
    "en": "In this scenario, what is the most effective {q_type} for {subject}?",
    "zh": "在这个场景中，{subject}最有效的{q_type}是什么？",
}
EU_QUESTION = {
    "emotion": {
        "en": "What emotion(s) would {subject} ultimately feel in this situation?",
        "zh": "在这种情况下，{subject}最终会感受到什么情绪？",
    },
    "cause": {
        "en": "Why would {subject} feel these emotions in this situation?",
        "zh": "{subject}为什么会在这种情况下感受到这些情绪？",
    },
}
# EmoBench's Chinese rows keep the English question type; these are the words used in Chinese questions.
ZH_QUESTION_TYPES = {"action": "行动", "response": "回应"}

_QID = re.compile(r"\d+")
# A label that matches no choice, or more than one, leaves the answer empty with this fault.
LABEL_FAULTS = {
    "not_found": gettext_noop(
        "qid %(qid)s (%(language)s): %(label_field)s %(label)s is not among the %(choices_field)s; "
        "the answer is left empty."
    ),
    "ambiguous": gettext_noop(
        "qid %(qid)s (%(language)s): %(label_field)s %(label)s matches more than one of the "
        "%(choices_field)s; the answer is left empty."
    ),
}


@dataclass(frozen=True)
class SourceFault:
    """A fault found in an EmoBench source file, located by line."""

    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.field}: {self.message}"

    def as_dict(self) -> dict:
        """Return a JSON-serialisable dict."""
        return asdict(self)


def dimension_code(task: str, category: str) -> str:
    """Return the dimension code of a category: ("EA", "Personal-Others") -> "ea_personal_others"."""
    slug = re.sub(r"[^a-z0-9]+", "_", category.casefold()).strip("_")
    return f"{task.lower()}_{slug}" if slug else ""


def detect_source(rows: list[tuple[int, dict]]) -> str:
    """Return "EA" or "EU" according to the keys of ``rows``; raise ValueError when that cannot be told."""
    ea_lines: list[int] = []
    eu_lines: list[int] = []
    for line, row in rows:
        if not isinstance(row, dict):
            continue
        keys = set(row)
        if keys & EU_MARKERS:
            eu_lines.append(line)
        elif keys & EA_MARKERS:
            ea_lines.append(line)
    if ea_lines and eu_lines:
        raise ValueError(
            _(
                "The rows mix EmoBench files: %(ea)s look like EA (first on line %(ea_line)s) and "
                "%(eu)s look like EU (first on line %(eu_line)s)."
            )
            % {"ea": len(ea_lines), "ea_line": ea_lines[0], "eu": len(eu_lines), "eu_line": eu_lines[0]}
        )
    if ea_lines:
        return "EA"
    if eu_lines:
        return "EU"
    if not rows:
        raise ValueError(_("There are no rows, so the EmoBench file (EA or EU) cannot be recognised."))
    raise ValueError(
        _("These rows are not EmoBench EA or EU rows: expected keys such as %(ea)s (EA) or %(eu)s (EU).")
        % {"ea": ", ".join(sorted(EA_MARKERS)), "eu": ", ".join(sorted(EU_MARKERS))}
    )


def emobench_records(
    rows: list[tuple[int, dict]], *, benchmark: str = "emobench"
) -> tuple[list[tuple[int, dict]], list[SourceFault]]:
    """Convert EmoBench rows to interchange records, reporting every fault in the source.

    Return ``(records, faults)``: one ``(line of the first row of its qid, record)`` per item, ordered by
    numeric qid and then emotion before cause, and the faults ordered by line. Uids are
    ``<benchmark>-ea-<qid>`` and ``<benchmark>-eu-<qid>-emotion|cause``. A language whose row is unusable
    is left out of the item; a question with no usable language yields no item (its faults say why).
    Raise ValueError, as :func:`detect_source` does, when the rows are not EmoBench EA or EU rows.
    """
    if not rows:
        return [], []
    task = detect_source(rows)
    faults: list[SourceFault] = []
    groups = _group_rows(rows, faults)
    records: list[tuple[int, dict]] = []
    for qid in sorted(groups, key=int):
        first_line, by_lang = groups[qid]
        records.extend(
            (first_line, record) for record in _convert_qid(task, qid, first_line, by_lang, benchmark, faults)
        )
    faults.sort(key=lambda f: (f.line, f.field, f.message))
    return records, faults


def _group_rows(rows: list[tuple[int, dict]], faults: list[SourceFault]) -> dict[str, tuple[int, dict]]:
    """Group rows by canonical qid, keeping the first row of each qid and language."""
    groups: dict[str, tuple[int, dict]] = {}
    for line, row in rows:
        if not isinstance(row, dict):
            message = _("Line %(line)s is a JSON %(type)s, not an object.") % {"line": line, "type": type(row).__name__}
            faults.append(SourceFault(line, "row", message))
            continue
        qid = _parse_qid(line, row, faults)
        if qid is None:
            continue
        lang = row.get("language")
        if "language" not in row:
            faults.append(SourceFault(line, "language", _("qid %(qid)s: the row has no language.") % {"qid": qid}))
            continue
        if not isinstance(lang, str):
            faults.append(
                SourceFault(
                    line,
                    "language",
                    _("qid %(qid)s: language must be text, got %(type)s %(value)s.")
                    % {"qid": qid, "type": type(lang).__name__, "value": repr(lang)},
                )
            )
            continue
        if lang not in LANGUAGES:
            message = _("qid %(qid)s: unknown language %(language)s; expected en or zh.") % {
                "qid": qid,
                "language": repr(lang),
            }
            faults.append(SourceFault(line, "language", message))
            continue
        first_line, by_lang = groups.setdefault(qid, (line, {}))
        if lang in by_lang:
            faults.append(
                SourceFault(
                    line,
                    "qid",
                    _("qid %(qid)s (%(language)s): duplicate row; the first one, on line %(line)s, is kept.")
                    % {"qid": qid, "language": lang, "line": by_lang[lang][0]},
                )
            )
            continue
        by_lang[lang] = (line, row)
        groups[qid] = (min(first_line, line), by_lang)
    return groups


def _parse_qid(line: int, row: dict, faults: list[SourceFault]) -> str | None:
    if "qid" not in row:
        message = _("The row has no qid (language %(language)s).") % {"language": repr(row.get("language"))}
        faults.append(SourceFault(line, "qid", message))
        return None
    value = row["qid"]
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return str(value)
    if isinstance(value, str) and _QID.fullmatch(value.strip()):
        return str(int(value.strip()))
    faults.append(
        SourceFault(
            line,
            "qid",
            _("qid %(qid)s (language %(language)s) is not a non-negative number.")
            % {"qid": repr(value), "language": repr(row.get("language"))},
        )
    )
    return None


def _convert_qid(
    task: str, qid: str, first_line: int, by_lang: dict, benchmark: str, faults: list[SourceFault]
) -> list[dict]:
    """Return the records of one qid (one for EA, up to two for EU)."""
    _report_missing_languages(qid, first_line, by_lang, faults)
    usable = {
        lang: by_lang[lang]
        for lang in LANGUAGES
        if lang in by_lang and _version_usable(task, qid, lang, by_lang[lang], faults)
    }
    if not usable:
        return []
    shared = {field: _shared_value(qid, first_line, usable, field, faults) for field in CATEGORY_FIELDS[task]}
    metadata = {
        "source": SOURCE_NAME,
        "citation": CITATION,
        "source_file": f"{task}.jsonl",
        "task": task,
        "qid": qid,
        **{field.replace(" ", "_"): value for field, value in shared.items()},
        "subject": {lang: row["subject"].strip() for lang, (_, row) in usable.items()},
        "source_lines": {lang: line for lang, (line, _) in usable.items()},
    }
    records = []
    for part, choices_field, label_field in QUESTIONS[task]:
        versions, matches = _build_versions(task, qid, part, choices_field, label_field, usable, faults)
        if not versions:
            continue
        _report_option_counts(qid, first_line, choices_field, versions, usable, faults)
        records.append(
            {
                "format": FORMAT,
                "uid": f"{benchmark}-{task.lower()}-{qid}" + (f"-{part}" if part else ""),
                "benchmark": benchmark,
                "dimension": dimension_code(task, shared[CATEGORY_FIELDS[task][0]]),
                "kind": "mcq",
                "scenario": None,
                "emotions": [],
                "crisis_level": None,
                "difficulty": "",
                "origin": "imported",
                "metadata": {**metadata, "answer_match": matches, **_part_metadata(task, qid, part, benchmark, usable)},
                "content": versions,
            }
        )
    return records


def _report_missing_languages(qid: str, first_line: int, by_lang: dict, faults: list[SourceFault]) -> None:
    present = ", ".join(
        _("%(language)s on line %(line)s") % {"language": other, "line": by_lang[other][0]}
        for other in LANGUAGES
        if other in by_lang
    )
    for lang in [lang for lang in LANGUAGES if lang not in by_lang]:
        message = _("qid %(qid)s: there is no %(language)s row (only %(present)s).") % {
            "qid": qid,
            "language": lang,
            "present": present,
        }
        faults.append(SourceFault(first_line, "language", message))


def _version_usable(task: str, qid: str, lang: str, found: tuple[int, dict], faults: list[SourceFault]) -> bool:
    """Whether a language's row has every text the item needs; report each missing one."""
    line, row = found
    problems = [_text_problem(row, field) for field in (*COMMON_FIELDS, *CATEGORY_FIELDS[task])]
    category_field = CATEGORY_FIELDS[task][0]
    category = row.get(category_field)
    if isinstance(category, str) and category.strip() and not dimension_code(task, category):
        problems.append(
            (category_field, _("%(value)s has no letters or digits to name a dimension") % {"value": repr(category)})
        )
    reported = [(field, problem) for field, problem in problems if field]
    for field, problem in reported:
        message = _("qid %(qid)s (%(language)s): %(problem)s; the %(language)s version is left out.") % {
            "qid": qid,
            "language": lang,
            "problem": problem,
        }
        faults.append(SourceFault(line, field, message))
    return not reported


def _report_option_counts(
    qid: str, first_line: int, choices_field: str, versions: dict, usable: dict, faults: list[SourceFault]
) -> None:
    counts = {lang: len(version["options"]) for lang, version in versions.items()}
    if len(set(counts.values())) < 2:
        return
    described = ", ".join(
        _("%(n)s in %(language)s (line %(line)s)") % {"n": n, "language": lang, "line": usable[lang][0]}
        for lang, n in counts.items()
    )
    faults.append(
        SourceFault(
            first_line,
            choices_field,
            _(
                "qid %(qid)s: the languages have different numbers of %(field)s: "
                "%(described)s; both are kept as they are."
            )
            % {"qid": qid, "field": choices_field, "described": described},
        )
    )


def _part_metadata(task: str, qid: str, part: str, benchmark: str, usable: dict) -> dict:
    """Return what an EU question adds to its item's metadata: which part it is, its twin, the emotion it explains."""
    if not part:
        return {}
    other = "cause" if part == "emotion" else "emotion"
    metadata = {"question": part, "paired_uid": f"{benchmark}-{task.lower()}-{qid}-{other}"}
    if part == "cause":
        metadata["emotion_label"] = {
            lang: row["emotion_label"] for lang, (_, row) in usable.items() if isinstance(row.get("emotion_label"), str)
        }
    return metadata


def _text_problem(row: dict, field: str) -> tuple[str, str]:
    """Return (field, problem) when ``row[field]`` is not non-empty text, else ("", "")."""
    if field not in row:
        return field, _("the row has no %(field)s") % {"field": repr(field)}
    value = row[field]
    if not isinstance(value, str):
        return field, _("%(field)s must be text, got %(type)s") % {"field": repr(field), "type": type(value).__name__}
    if not value.strip():
        return field, _("%(field)s is empty") % {"field": repr(field)}
    return "", ""


def _shared_value(qid: str, line: int, usable: dict, field: str, faults: list[SourceFault]) -> str:
    """Return a field both languages should share, reporting a disagreement; the first language wins."""
    values = {lang: row[field] for lang, (_, row) in usable.items()}
    chosen_lang = next(iter(values))
    if len(set(values.values())) > 1:
        described = ", ".join(f"{lang} {value!r}" for lang, value in values.items())
        faults.append(
            SourceFault(
                line,
                field,
                _("qid %(qid)s: %(field)s differs between languages (%(described)s); the %(language)s value is used.")
                % {"qid": qid, "field": repr(field), "described": described, "language": chosen_lang},
            )
        )
    return values[chosen_lang]


def _build_versions(
    task: str,
    qid: str,
    part: str,
    choices_field: str,
    label_field: str,
    usable: dict,
    faults: list[SourceFault],
) -> tuple[dict, dict]:
    """Return the language versions of one question and how each answer was matched."""
    versions: dict[str, dict] = {}
    matches: dict[str, str] = {}
    where = _("%(part)s question") % {"part": part} if part else _("question")
    for lang, (line, row) in usable.items():
        field, problem = (choices_field, _choices_problem(row, choices_field))
        if not problem:
            field, problem = _text_problem(row, label_field)
        if problem:
            message = _("qid %(qid)s (%(language)s): %(problem)s; the %(language)s %(where)s is left out.") % {
                "qid": qid,
                "language": lang,
                "problem": problem,
                "where": where,
            }
            faults.append(SourceFault(line, field, message))
            continue
        options = list(row[choices_field])
        label = row[label_field]
        duplicates = sorted({option for option in options if options.count(option) > 1})
        if duplicates:
            faults.append(
                SourceFault(
                    line,
                    choices_field,
                    _("qid %(qid)s (%(language)s): %(field)s repeat the same text: %(texts)s.")
                    % {
                        "qid": qid,
                        "language": lang,
                        "field": choices_field,
                        "texts": ", ".join(repr(option) for option in duplicates),
                    },
                )
            )
        answer, how = match_label(label, options)
        matches[lang] = how
        if how in LABEL_FAULTS:
            values = {"qid": qid, "language": lang, "label_field": label_field, "choices_field": choices_field}
            faults.append(SourceFault(line, label_field, _(LABEL_FAULTS[how]) % {**values, "label": repr(label)}))
        question = _question(task, part, lang, line, qid, row, faults)
        versions[lang] = {
            "context": row["scenario"].strip(),
            "question": question,
            "options": options,
            "answer": answer,
        }
    return versions, matches


def _choices_problem(row: dict, field: str) -> str:
    if field not in row:
        return _("the row has no %(field)s") % {"field": repr(field)}
    value = row[field]
    if not isinstance(value, list):
        return _("%(field)s must be a list of texts, got %(type)s") % {
            "field": repr(field),
            "type": type(value).__name__,
        }
    if len(value) < 2:
        return _("%(field)s needs at least 2 choices, got %(n)s") % {"field": repr(field), "n": len(value)}
    for i, option in enumerate(value):
        if not isinstance(option, str):
            return _("%(field)s must be text, got %(type)s") % {
                "field": f"{field!r}[{i}]",
                "type": type(option).__name__,
            }
        if not option.strip():
            return _("%(field)s is empty") % {"field": f"{field!r}[{i}]"}
    return ""


def match_label(label: str, options: list[str]) -> tuple[int | None, str]:
    """Return the 0-based index of ``label`` among ``options`` and how it matched.

    The match is exact, or else exact after stripping surrounding whitespace and case-folding; nothing
    fuzzier. The second value is "exact", "normalised", "ambiguous" or "not_found" (index None for the
    last two).
    """
    exact = [i for i, option in enumerate(options) if option == label]
    if len(exact) == 1:
        return exact[0], "exact"
    if exact:
        return None, "ambiguous"
    key = label.strip().casefold()
    loose = [i for i, option in enumerate(options) if option.strip().casefold() == key]
    if len(loose) == 1:
        return loose[0], "normalised"
    if loose:
        return None, "ambiguous"
    return None, "not_found"


def _question(task: str, part: str, lang: str, line: int, qid: str, row: dict, faults: list[SourceFault]) -> str:
    subject = row["subject"].strip()
    if task == "EU":
        return EU_QUESTION[part][lang].format(subject=subject)
    raw = row["question type"].strip()
    if lang == "en":
        q_type = raw.lower()
    elif raw.casefold() in ZH_QUESTION_TYPES:
        q_type = ZH_QUESTION_TYPES[raw.casefold()]
    else:
        q_type = raw
    if lang == "zh" and raw.casefold() not in ZH_QUESTION_TYPES and raw.isascii():
        faults.append(
            SourceFault(
                line,
                "question type",
                _(
                    "qid %(qid)s (zh): no Chinese wording is known for question type %(type)s; "
                    "the raw value is used in the question."
                )
                % {"qid": qid, "type": repr(raw)},
            )
        )
    return EA_QUESTION[lang].format(q_type=q_type, subject=subject)

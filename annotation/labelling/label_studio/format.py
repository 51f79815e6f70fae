"""Label Studio's side of the interchange (pure): the labelling config, task records and reading an export.

A task shows one comparison: its prompt and the two responses left and right, in the order ``shown_order`` says
(``AB``: response A on the left), drawn once per comparison from the set's seed so that every annotator of the task
sees the same order and left and right are balanced. The config pairs Label Studio's ``Pairwise`` control (the
better response: ``left`` or ``right``) with a ``Choices`` control named ``margin`` (``+`` to ``+++++``, or
``tie``), so a label keeps the app's five-step margin.

Label Studio's JSON export is a list of tasks, each with its ``data`` as exported here and ``annotations``, each
with ``completed_by`` (a user id, or an object with ``id`` and ``email``), ``lead_time`` (seconds),
``was_cancelled`` and ``result``: a list of regions, among them ``{"type": "pairwise", "value": {"selected":
"left"}}`` and ``{"type": "choices", "from_name": "margin", "value": {"choices": ["+++"]}}``. A pairwise choice
without a margin counts as ``+`` (a Label Studio project with the plain Pairwise template); a tie is the margin
choice ``tie`` with no pairwise choice.
"""

import json
import random
from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

from django.utils.translation import gettext as _

from annotation.items.interchange import LineError
from annotation.labelling.pairwise import MARGINS, plus_string
from core.inputs import json_too_deep_at, nul_path, nul_reason

PAIRWISE_NAME = "preference"
MARGIN_NAME = "margin"
TIE = "tie"
MARGIN_CHOICES = {plus_string(m): m for m in MARGINS}


def shown_order(*, seed: int, comparison: int) -> str:
    """Return the order a comparison's task shows its responses in, the same in every export of the set."""
    return "AB" if random.Random(f"label-studio:{seed}:{comparison}").random() < 0.5 else "BA"


def labelling_config(*, instructions: str, margin_header: str) -> str:
    """Return the Label Studio labelling config (XML) that shows a task and asks for a winner and a margin."""
    choices = "\n".join(f"    <Choice value={quoteattr(value)}/>" for value in [TIE, *MARGIN_CHOICES])
    return f"""<View>
  <Header value={quoteattr(instructions)}/>
  <Header value="$dimension_name"/>
  <Text name="context" value="$context"/>
  <Text name="prompt" value="$prompt"/>
  <View style="display: flex;">
    <View style="flex: 50%; margin-right: 1em;"><Text name="left" value="$left"/></View>
    <View style="flex: 50%;"><Text name="right" value="$right"/></View>
  </View>
  <Pairwise name="{PAIRWISE_NAME}" toName="left,right"/>
  <Header value={quoteattr(margin_header)}/>
  <Choices name="{MARGIN_NAME}" toName="prompt" choice="single-radio" showInline="true">
{choices}
  </Choices>
</View>
"""


@dataclass(frozen=True)
class Annotation:
    """One annotation of an export, read and checked for shape: who, which comparison, and the verdict on screen."""

    line: int
    task_id: object
    comparison: int
    item: str
    language: str
    shown_order: str
    annotator_id: str
    annotator_email: str
    winner: str  # left, right or tie
    margin: int | None
    seconds: int | None


@dataclass
class ExportRead:
    annotations: list[Annotation]
    errors: list[LineError]
    cancelled: int = 0
    tasks: int = 0


def _tasks(text: str) -> list[tuple[int, object]]:
    """Return each task of a JSON array (or of JSON lines) with the line it starts on."""
    decoder = json.JSONDecoder()
    start = len(text) - len(text.lstrip())
    if not text[start:].startswith("["):
        return [(n, json.loads(line)) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    found, position = [], start + 1
    while True:
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        if position >= len(text):
            raise json.JSONDecodeError("the list of tasks is not closed with ]", text, position)
        if text[position] == "]":
            return found
        value, end = decoder.raw_decode(text, position)
        found.append((text.count("\n", 0, position) + 1, value))
        position = end


def _annotator(value: object) -> tuple[str, str] | None:
    """Return (id, email) of ``completed_by``: an id, or an object with ``id`` and/or ``email``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | str) and str(value).strip():
        text = str(value).strip()
        return ("", text) if "@" in text else (text, "")
    if isinstance(value, dict):
        user_id, email = value.get("id"), value.get("email")
        found = ("" if user_id is None else str(user_id), str(email or "").strip())
        return found if any(found) else None
    return None


def _verdict(result: object) -> tuple[str, int | None]:
    """Return (winner on screen, margin) from an annotation's result; raise ValueError saying what is wrong."""
    if not isinstance(result, list):
        raise ValueError(_("expected a list of regions"))
    selected, margins = _choices(result)
    if len(selected) > 1 or len(margins) > 1:
        raise ValueError(_("more than one pairwise choice or margin"))
    margin = margins[0] if margins else None
    if margin is not None and margin != TIE and margin not in MARGIN_CHOICES:
        raise ValueError(_("margin %(margin)r is not tie or + to +++++") % {"margin": margin})
    if not selected:
        if margin == TIE:
            return "tie", None
        raise ValueError(_("no pairwise choice (left or right) and no tie"))
    if selected[0] not in ("left", "right"):
        raise ValueError(_("pairwise choice %(choice)r is not left or right") % {"choice": selected[0]})
    if margin == TIE:
        raise ValueError(_("a pairwise choice and a tie at once"))
    return selected[0], MARGIN_CHOICES.get(margin, 1)


def _choices(regions: list) -> tuple[list, list]:
    """Return the pairwise choices and the margins chosen in an annotation's regions (other regions are ignored)."""
    selected, margins = [], []
    for region in (r for r in regions if isinstance(r, dict)):
        value = region.get("value") if isinstance(region.get("value"), dict) else {}
        if region.get("type") == "pairwise":
            selected.append(value.get("selected"))
        elif region.get("type") == "choices" and region.get("from_name") == MARGIN_NAME:
            margins += list(value.get("choices") or [])
    return selected, margins


def _seconds(value: object) -> int | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return round(value)
    return None


def _read_task(line: int, task: object, read: ExportRead) -> None:
    def error(field: str, message: str) -> None:
        read.errors.append(LineError(line, field, message))

    if not isinstance(task, dict):
        error("task", _("expected an object with data and annotations"))
        return
    data = task.get("data")
    if not isinstance(data, dict):
        error("data", _("missing: export the project as JSON (tasks with their data)"))
        return
    comparison, order = data.get("comparison"), data.get("shown_order")
    if isinstance(comparison, bool) or not isinstance(comparison, int):
        error("data.comparison", _("missing or not a whole number: the tasks must come from this app's export"))
        return
    if order not in ("AB", "BA"):
        error("data.shown_order", _("expected AB or BA, as exported"))
        return
    annotations = task.get("annotations", [])
    if not isinstance(annotations, list):
        error("annotations", _("expected a list"))
        return
    for n, annotation in enumerate(annotations, start=1):
        where = f"annotations[{n}]"
        if not isinstance(annotation, dict):
            error(where, _("expected an object"))
            continue
        if annotation.get("was_cancelled"):
            read.cancelled += 1
            continue
        annotator = _annotator(annotation.get("completed_by"))
        if annotator is None:
            error(f"{where}.completed_by", _("missing: who made the annotation"))
            continue
        try:
            winner, margin = _verdict(annotation.get("result"))
        except ValueError as exc:
            error(f"{where}.result", str(exc))
            continue
        read.annotations.append(
            Annotation(
                line=line,
                task_id=task.get("id"),
                comparison=comparison,
                item=str(data.get("item", "")),
                language=str(data.get("language", "")),
                shown_order=order,
                annotator_id=annotator[0],
                annotator_email=annotator[1],
                winner=winner,
                margin=margin,
                seconds=_seconds(annotation.get("lead_time")),
            )
        )


def read_export(data: bytes, *, max_depth: int) -> ExportRead:
    """Read a Label Studio JSON export (a list of tasks, or one task per line); errors name the task's line."""
    read = ExportRead([], [])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        read.errors.append(LineError(1, "file", _("not UTF-8 text (byte %(byte)s)") % {"byte": exc.start}))
        return read
    deep = json_too_deep_at(text, max_depth)
    if deep is not None:
        line = text.count("\n", 0, deep) + 1
        read.errors.append(
            LineError(line, "file", _("JSON nested more than %(limit)s levels deep") % {"limit": max_depth})
        )
        return read
    try:
        tasks = _tasks(text)
    except json.JSONDecodeError as exc:
        read.errors.append(LineError(exc.lineno, "file", _("not JSON: %(reason)s") % {"reason": exc.msg}))
        return read
    if not tasks:
        read.errors.append(LineError(1, "file", _("holds no tasks")))
    for line, task in tasks:
        path = nul_path(task)
        if path is not None:
            read.errors.append(LineError(line, path, nul_reason()))
            continue
        read.tasks += 1
        _read_task(line, task, read)
    return read

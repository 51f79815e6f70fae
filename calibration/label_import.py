"""Read pairwise verdicts collected elsewhere (experts or judges) into a signed label table (no ORM).

Rows: ``item, language, dimension, model_a, model_b, rater, winner, margin[, order]``. ``winner`` is ``A``/``B``
(the models in the ``model_a``/``model_b`` columns), ``first``/``second`` (positions as shown; then ``order`` says
which model was shown first: ``AB`` or ``BA``) or ``tie``; ``margin`` is 1..5 (plus signs also accepted) and 0 or
empty for a tie. A unit is one (item, language, dimension, pair of models); its canonical A is the model whose name
sorts first, so verdicts given with the models in either column order land on the same unit.

A row whose optional ``excluded`` column is not empty records a verdict left out (an export's pair whose orders
were dropped or not parsed, with the reason) and is skipped.
"""

import csv
import io
from dataclasses import dataclass

import numpy as np

REQUIRED = ("item", "language", "dimension", "model_a", "model_b", "rater", "winner", "margin")
EXCLUDED = "excluded"


class LabelImportError(ValueError):
    """A row of the file is malformed; the message names the line and the field."""


@dataclass
class PairwiseTable:
    units: list[str]
    raters: list[str]
    values: np.ndarray  # units x raters, signed scores, NaN where missing


def _margin(text: str, line: int) -> int:
    text = (text or "").strip()
    if not text:
        return 0
    if set(text) == {"+"}:
        value = len(text)
    else:
        try:
            value = int(text)
        except ValueError:
            raise LabelImportError(f"line {line}: margin: expected 0 to 5 or + to +++++, got {text!r}") from None
    if not 0 <= value <= 5:
        raise LabelImportError(f"line {line}: margin: {value} is outside 0 to 5")
    return value


def _a_wins(row: dict, winner: str, line: int) -> bool:
    """Say whether the model in the ``model_a`` column won, from the winner named by column or by position."""
    if winner in ("first", "second"):
        order = (row.get("order") or "").strip().upper()
        if order not in ("AB", "BA"):
            raise LabelImportError(f"line {line}: order: positions need an order of AB or BA")
        return (winner == "first") == (order == "AB")
    if winner in ("a", "b"):
        return winner == "a"
    raise LabelImportError(f"line {line}: winner: expected A, B, first, second or tie, got {winner!r}")


def _score(row: dict, line: int) -> int:
    """Return the row's signed score for the model in the ``model_a`` column: +margin if it won, 0 for a tie."""
    winner = row["winner"].strip().lower()
    margin = _margin(row["margin"], line)
    if winner == "tie":
        if margin:
            raise LabelImportError(f"line {line}: margin: a tie has no margin")
        return 0
    if margin == 0:
        raise LabelImportError(f"line {line}: margin: a win needs a margin from 1 to 5")
    return margin if _a_wins(row, winner, line) else -margin


def _cell(row: dict, line: int) -> tuple[str, str, float]:
    """Return the row's unit (with the canonical A first), rater and signed score."""
    a, b = row["model_a"].strip(), row["model_b"].strip()
    if not a or not b or a == b:
        raise LabelImportError(f"line {line}: model_a/model_b: two different model names are required")
    score = _score(row, line)
    if a > b:
        a, b, score = b, a, -score
    unit = "|".join([row["item"].strip(), row["language"].strip(), row["dimension"].strip(), a, b])
    rater = row["rater"].strip()
    if not rater:
        raise LabelImportError(f"line {line}: rater: required")
    return unit, rater, float(score)


def read_pairwise_labels(text: str) -> PairwiseTable:
    """Parse the CSV text into a signed table; raise ``LabelImportError`` naming the first bad line and field."""
    reader = csv.DictReader(io.StringIO(text))
    missing = [name for name in REQUIRED if name not in (reader.fieldnames or [])]
    if missing:
        raise LabelImportError(f"line 1: header: missing column(s) {', '.join(missing)}")
    cells: dict[tuple[str, str], float] = {}
    for line, row in enumerate(reader, start=2):
        if (row.get(EXCLUDED) or "").strip():
            continue
        unit, rater, score = _cell(row, line)
        if (unit, rater) in cells:
            raise LabelImportError(f"line {line}: rater: {rater} already rated this comparison")
        cells[(unit, rater)] = score
    if not cells:
        raise LabelImportError("the file holds no verdicts")
    units = sorted({u for u, _ in cells})
    raters = sorted({r for _, r in cells})
    values = np.full((len(units), len(raters)), np.nan)
    for (unit, rater), score in cells.items():
        values[units.index(unit), raters.index(rater)] = score
    return PairwiseTable(units, raters, values)

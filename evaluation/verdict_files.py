"""Read pairwise verdict files from disk into ``(model_a, model_b, margin)`` verdicts for ranking.

Two layouts are recognised from the header:

- the label table that ``calibration.label_import`` reads (``item, language, dimension, model_a, model_b, rater,
  winner, margin[, order]``), validated by it; each rater's verdict on a comparison is one verdict with its
  signed margin;
- llmfao's comparison files (github.com/dustalov/llmfao): ``winner`` is ``left``, ``right`` or ``tie`` and the
  ``left``/``right`` columns name the models. Crowd files have one row per worker's vote (a ``worker`` column),
  judge files one row per pair; every row is one verdict, as the llmfao study counts them.
"""

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from calibration.label_import import REQUIRED, LabelImportError, read_pairwise_labels
from evaluation.ratings import Verdict

LLMFAO_COLUMNS = ("left", "right", "winner")
LLMFAO_WINNERS = {"left": 1.0, "right": -1.0, "tie": 0.0}


class VerdictFileError(ValueError):
    """The file cannot be read as verdicts; the message names the line and field at fault."""


@dataclass(frozen=True)
class VerdictFile:
    """The verdicts of one file and the layout they were read from (``labels`` or ``llmfao``)."""

    path: str
    layout: str
    verdicts: list[Verdict]

    def models(self) -> list[str]:
        """Return the models named in the verdicts, sorted."""
        return sorted({name for verdict in self.verdicts for name in verdict[:2]})


def read_verdict_file(path: Path) -> VerdictFile:
    """Read a verdict file, recognising its layout from the header; raise ``VerdictFileError`` when it is bad."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise VerdictFileError(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise VerdictFileError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise VerdictFileError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    header = next(csv.reader(io.StringIO(text)), None)
    columns = {cell.strip() for cell in header or []}
    if all(name in columns for name in REQUIRED):
        return VerdictFile(str(path), "labels", _label_verdicts(text, path))
    if all(name in columns for name in LLMFAO_COLUMNS):
        return VerdictFile(str(path), "llmfao", _llmfao_verdicts(text, path))
    raise VerdictFileError(
        f"{path}: line 1: header: expected the label columns ({', '.join(REQUIRED)}) or llmfao's "
        f"({', '.join(LLMFAO_COLUMNS)}); found {', '.join(header or []) or 'nothing'}"
    )


def _label_verdicts(text: str, path: Path) -> list[Verdict]:
    try:
        table = read_pairwise_labels(text)
    except LabelImportError as exc:
        raise VerdictFileError(f"{path}: {exc}") from None
    verdicts = []
    for unit, row in zip(table.units, table.values, strict=True):
        # A unit is "item|language|dimension|model_a|model_b" with model_a sorting first.
        parts = unit.split("|")
        if len(parts) != 5:
            raise VerdictFileError(f"{path}: comparison {unit!r}: a name contains '|', which cannot be told apart")
        model_a, model_b = parts[3], parts[4]
        verdicts += [Verdict(model_a, model_b, float(score)) for score in row if score == score]
    return verdicts


def _llmfao_verdicts(text: str, path: Path) -> list[Verdict]:
    verdicts = []
    reader = csv.DictReader(io.StringIO(text))
    for line, row in enumerate(reader, start=2):
        left, right = (row.get("left") or "").strip(), (row.get("right") or "").strip()
        if not left or not right or left == right:
            raise VerdictFileError(f"{path}: line {line}: left/right: two different model names are required")
        winner = (row.get("winner") or "").strip().lower()
        if winner not in LLMFAO_WINNERS:
            raise VerdictFileError(f"{path}: line {line}: winner: expected left, right or tie, got {winner!r}")
        verdicts.append(Verdict(left, right, LLMFAO_WINNERS[winner]))
    if not verdicts:
        raise VerdictFileError(f"{path}: the file holds no verdicts")
    return verdicts

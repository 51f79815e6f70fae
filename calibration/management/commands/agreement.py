import csv
import io
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand, CommandError, CommandParser

from calibration import agreement
from calibration.agreement import AgreementReport, Estimate
from calibration.label_import import LabelImportError, read_pairwise_labels

COLUMNS = ("unit", "rater", "value")
EXCLUDED = "excluded"
LABEL_WIDTH = 42
SCALE_RANGE = re.compile(r"(-?\d+)\.\.(-?\d+)")
MAX_SCALE_POINTS = 1001
ORIENTATION_AS_GIVEN = "scores as given in the file (+k: the unit's A wins by k)"
ORIENTATION_SORTED = "A is the model whose name sorts first in each comparison (+k: A wins by k)"
BOTH_ORIENTATIONS_NOTE = (
    "Kappa depends on which response of a pair is called A; 'both orientations' counts each unit once as given "
    "and once with A and B swapped, and does not."
)


@dataclass(frozen=True)
class LabelTable:
    """A label table read from CSV, with the names of its units, raters and (for word labels) categories."""

    values: np.ndarray
    units: list[str]
    raters: list[str]
    category_names: list[str] | None


@dataclass(frozen=True)
class _Rating:
    line: int
    unit: str
    rater: str
    value: str


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError as exc:
        raise CommandError(f"{path}: no such file") from exc
    except UnicodeDecodeError as exc:
        raise CommandError(f"{path}: not UTF-8 text (byte {exc.start})") from exc
    except OSError as exc:
        raise CommandError(f"{path}: cannot read it ({exc.strerror or exc})") from exc


def _read_ratings(path: Path) -> list[_Rating]:
    text = _read_text(path)
    if not text.strip():
        raise CommandError(f"{path} is empty: expected a header line 'unit,rater,value' and one row per rating")
    reader = csv.reader(io.StringIO(text))
    header = next((row for row in reader if any(cell.strip() for cell in row)), None)
    if header is None:
        raise CommandError(f"{path} has no header: expected a line 'unit,rater,value'")
    names = _header_names(header, line=reader.line_num)
    positions = [names.index(name) for name in COLUMNS]
    # An export's row of a verdict left out names why in its ``excluded`` column: it is not a rating.
    excluded = names.index(EXCLUDED) if EXCLUDED in names else None
    ratings: list[_Rating] = []
    seen: dict[tuple[str, str], int] = {}
    for row in reader:
        if not any(cell.strip() for cell in row):
            continue
        line = reader.line_num
        if len(row) != len(header):
            raise CommandError(f"line {line}: expected {len(header)} fields as in the header, found {len(row)}")
        if excluded is not None and row[excluded].strip():
            continue
        rating = _rating(row, positions, line=line)
        if (rating.unit, rating.rater) in seen:
            raise CommandError(
                f"line {line}: rater {rating.rater!r} already rated unit {rating.unit!r} on line "
                f"{seen[rating.unit, rating.rater]}"
            )
        seen[rating.unit, rating.rater] = line
        ratings.append(rating)
    if not ratings:
        raise CommandError(f"{path} has a header but no ratings")
    return ratings


def _header_names(header: list[str], *, line: int) -> list[str]:
    """Return the header's column names (trimmed, lower case), refused if one of unit, rater, value is missing or
    named twice."""
    names = [cell.strip().lower() for cell in header]
    for name in COLUMNS:
        if names.count(name) > 1:
            raise CommandError(f"line {line}: the header names the column {name!r} twice")
    missing = [name for name in COLUMNS if name not in names]
    if missing:
        raise CommandError(
            f"line {line}: the header must name the columns unit, rater and value; "
            f"missing: {', '.join(missing)} (found: {', '.join(header)})"
        )
    return names


def _rating(row: list[str], positions: list[int], *, line: int) -> _Rating:
    """Return the rating on a row (its unit, rater and value at ``positions``), refused if one of them is empty."""
    unit, rater, value = (row[position].strip() for position in positions)
    for name, cell in zip(COLUMNS, (unit, rater, value), strict=True):
        if not cell:
            hint = " (leave the row out for a missing rating)" if name == "value" else ""
            raise CommandError(f"line {line}: empty {name}{hint}")
    return _Rating(line, unit, rater, value)


def _number(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _numeric_values(
    ratings: list[_Rating], *, level: str, signed: bool, scale: np.ndarray | None = None
) -> list[float] | None:
    numbers = [_number(rating.value) for rating in ratings]
    for rating, number in zip(ratings, numbers, strict=True):
        problem = _value_problem(rating.value, number, level=level, signed=signed, scale=scale)
        if problem:
            raise CommandError(f"line {rating.line}: value {rating.value!r} {problem}")
    if any(number is None for number in numbers):
        return None
    return [float(number) for number in numbers if number is not None]


def _value_problem(value: str, number: float | None, *, level: str, signed: bool, scale: np.ndarray | None) -> str:
    """Return why a rating's value (read as ``number``, None if not a finite number) does not fit the level, the
    signed scores or the declared scale ("" when it does)."""
    if signed and (number is None or number != round(number) or abs(number) > agreement.SCALE_MAX):
        return (
            f"is not a signed score: --signed needs whole numbers from -{agreement.SCALE_MAX} to {agreement.SCALE_MAX}"
        )
    if number is None and (level != "nominal" or scale is not None):
        needs = f"level {level}" if level != "nominal" else "--scale"
        return f"is not a finite number ({needs} needs numbers)"
    if level == "ratio" and number is not None and number < 0:
        return "is negative: level ratio needs values of 0 or more"
    if scale is not None and number is not None and number not in scale:
        return f"is not on the scale {_scale_text(scale)} (--scale)"
    return ""


def parse_scale(text: str) -> np.ndarray:
    """Read a declared scale: ``LOW..HIGH`` (whole numbers, e.g. 1..5 or -5..5) or increasing numbers with commas.

    Raise CommandError when the text is neither, is not strictly increasing or has more than 1,001 points.
    """
    match = SCALE_RANGE.fullmatch(text.strip())
    if match:
        low, high = int(match.group(1)), int(match.group(2))
        points = np.arange(low, high + 1, dtype=float) if high - low < MAX_SCALE_POINTS else None
    else:
        numbers = [_number(part) for part in text.split(",")]
        points = None if None in numbers else np.array(numbers, dtype=float)
    if points is None or points.size > MAX_SCALE_POINTS:
        raise CommandError(
            f"--scale {text!r}: expected LOW..HIGH with whole numbers (e.g. 1..5, -5..5) or numbers separated by "
            f"commas (e.g. 1,1.5,2,2.5,3), at most {MAX_SCALE_POINTS} points"
        )
    if points.size < 2 or np.any(np.diff(points) <= 0):
        raise CommandError(f"--scale {text!r}: a scale needs two or more points in increasing order")
    return points


def _scale_text(scale: np.ndarray | tuple[float, ...]) -> str:
    points = np.asarray(scale, dtype=float)
    if points.size > 2 and np.all(points == np.round(points)) and np.all(np.diff(points) == 1):
        return f"{points[0]:g}..{points[-1]:g}"
    return ", ".join(f"{point:g}" for point in points)


def _category(value: str) -> tuple[tuple, str]:
    """Return a word label's sort key and name; a number is named alike however it is written ("1", "1.0", "+1").

    Numbers sort first, by value, then words alphabetically.
    """
    number = _number(value)
    if number is None:
        return (1, 0.0, value), value
    name = str(int(number)) if number == int(number) else repr(number)
    return (0, number, name), name


def read_label_table(path: Path, *, level: str, signed: bool, scale: np.ndarray | None = None) -> LabelTable:
    """Read rows unit,rater,value into a units x raters table; raise CommandError naming the faulty line.

    Values must be numbers for the ordinal, interval and ratio levels (0 or more for ratio) and on ``scale`` when
    one is declared; nominal labels may be words, which are coded 0, 1, ... in sorted order (numbers first, by
    value; a number is one category however it is written, "1" and "1.0" alike, as in an all-numeric table).
    """
    ratings = _read_ratings(path)
    numbers = _numeric_values(ratings, level=level, signed=signed, scale=scale)
    category_names = None
    if numbers is None:
        labels = [_category(rating.value) for rating in ratings]
        category_names = [name for _key, name in sorted(set(labels))]
        codes = {name: float(code) for code, name in enumerate(category_names)}
        numbers = [codes[name] for _key, name in labels]
    units = list(dict.fromkeys(rating.unit for rating in ratings))
    raters = list(dict.fromkeys(rating.rater for rating in ratings))
    unit_index = {unit: i for i, unit in enumerate(units)}
    rater_index = {rater: j for j, rater in enumerate(raters)}
    values = np.full((len(units), len(raters)), np.nan)
    for rating, number in zip(ratings, numbers, strict=True):
        values[unit_index[rating.unit], rater_index[rating.rater]] = number
    return LabelTable(values, units, raters, category_names)


def _format_estimate(estimate: Estimate) -> str:
    if estimate.value is None:
        return f"undefined: {estimate.undefined_reason}"
    if estimate.ci_low is None or estimate.ci_high is None:
        interval = "[no interval]"
    else:
        interval = f"[{estimate.ci_low:.3f}, {estimate.ci_high:.3f}]"
    text = f"{estimate.value:.3f}  {interval}  n={estimate.n_units}"
    if estimate.n_boot_defined < estimate.n_boot:
        text += f"  ({estimate.n_boot_defined} of {estimate.n_boot} resamples defined)"
    return text


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


class Command(BaseCommand):
    help = (
        "Print the agreement coefficients of a label table, with percentile bootstrap intervals. PATH is a CSV "
        "file with a header and rows unit,rater,value; a missing rating is an absent row (or a row whose "
        "'excluded' column gives a reason, as the app's verdict exports write)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="CSV file with columns unit, rater, value")
        parser.add_argument(
            "--level",
            default="nominal",
            choices=["nominal", "ordinal", "interval", "ratio"],
            help="level of measurement of the values (default: nominal)",
        )
        parser.add_argument(
            "--signed",
            action="store_true",
            help="values are signed pairwise scores -5..+5 (0: tie): add alpha on the winner and "
            "percent agreement without ties; nominal coefficients use the winner",
        )
        parser.add_argument(
            "--pairwise",
            action="store_true",
            help="PATH holds pairwise verdicts (item, language, dimension, model_a, model_b, rater, winner, margin, "
            "order) from experts or judges; implies --signed",
        )
        parser.add_argument(
            "--scale",
            metavar="SCALE",
            help="declared scale for the weighted kappas, LOW..HIGH (e.g. 1..5) or numbers separated by commas; "
            "weights then count positions on the whole scale (default: the values both raters gave on the units "
            "both rated, as R irr::kappa2; -5..5 for signed scores)",
        )
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default: 0)")
        parser.add_argument(
            "--bootstrap",
            type=int,
            default=agreement.DEFAULT_RESAMPLES,
            metavar="N",
            help=f"bootstrap resamples of units (default: {agreement.DEFAULT_RESAMPLES}; 0: none)",
        )

    def handle(self, *args: object, **options: object) -> None:
        path: Path = options["path"]
        level: str = options["level"]
        if options["bootstrap"] < 0:
            raise CommandError(f"--bootstrap must be 0 or more, got {options['bootstrap']}")
        signed = options["signed"] or options["pairwise"]
        if signed and level == "ratio":
            raise CommandError(
                "signed scores run from -5 to +5 through 0: level ratio does not apply (use ordinal or interval)"
            )
        scale = None if options["scale"] is None else parse_scale(options["scale"])
        if signed and scale is not None and not np.array_equal(scale, -scale[::-1]):
            raise CommandError(f"--scale {options['scale']!r}: a scale for signed scores is symmetric around 0")
        if options["pairwise"]:
            labels = self._pairwise_table(path)
            orientation = ORIENTATION_SORTED
        else:
            labels = read_label_table(path, level=level, signed=signed, scale=scale)
            orientation = ORIENTATION_AS_GIVEN if signed else None
        try:
            report = agreement.agreement_report(
                labels.values,
                level,
                raters=labels.raters,
                signed=signed,
                scale=scale,
                seed=options["seed"],
                n_boot=options["bootstrap"],
            )
        except ValueError as exc:
            raise CommandError(f"{path}: {exc}") from exc
        if options["json"]:
            body = {
                "path": str(path),
                "units": labels.units,
                "category_names": labels.category_names,
                "orientation": orientation,
            }
            body.update(report.as_dict())
            self.stdout.write(json.dumps(body, indent=2, ensure_ascii=False, allow_nan=False))
            return
        self._write_text(path, labels, report, orientation)

    def _pairwise_table(self, path: Path) -> LabelTable:
        try:
            table = read_pairwise_labels(_read_text(path))
        except LabelImportError as exc:
            raise CommandError(f"{path}: {exc}") from exc
        return LabelTable(units=table.units, raters=table.raters, values=table.values, category_names=None)

    def _write_text(self, path: Path, labels: LabelTable, report: AgreementReport, orientation: str | None) -> None:
        counts = ", ".join(
            _plural(count, noun)
            for count, noun in ((report.n_units, "unit"), (len(report.raters), "rater"), (report.n_ratings, "rating"))
        )
        self.stdout.write(f"{path}: {counts}; level {report.level}{', signed scores' if report.signed else ''}")
        self.stdout.write(f"Raters: {', '.join(report.raters)}")
        if labels.category_names is not None:
            self.stdout.write(f"Categories: {', '.join(labels.category_names)}")
        if orientation is not None:
            self.stdout.write(f"Orientation: {orientation}")
            self.stdout.write(BOTH_ORIENTATIONS_NOTE)
        if report.level != "nominal":
            if report.scale is None:
                weights = "positions among the values both raters gave on the units both rated (as R irr::kappa2)"
            else:
                weights = f"positions on the scale {_scale_text(report.scale)}"
            self.stdout.write(f"Kappa weights: {weights}")
        if report.n_boot:
            self.stdout.write(
                f"Intervals: {report.confidence:.0%} percentile bootstrap over units, {report.n_boot} resamples, "
                f"seed {report.seed}"
            )
        else:
            self.stdout.write("Intervals: none (--bootstrap 0)")
        if report.undefined_reason:
            self.stdout.write(self.style.WARNING(f"Agreement is undefined: {report.undefined_reason}."))
        self.stdout.write("")
        winner = " (winner)" if report.signed else ""
        self._line(f"Krippendorff's alpha ({report.level})", report.alpha)
        if report.alpha_winner is not None:
            self._line("Krippendorff's alpha (nominal, winner)", report.alpha_winner)
        self._line(f"Fleiss' kappa{winner}", report.fleiss_kappa)
        for pair in report.pairs:
            self.stdout.write("")
            self.stdout.write(f"{pair.rater_a} vs {pair.rater_b}")
            rows = [
                (f"  Cohen's kappa{winner}", pair.cohen_kappa),
                ("    both orientations", pair.cohen_kappa_both_orientations),
                ("  Cohen's kappa, linear weights", pair.cohen_kappa_linear),
                ("    both orientations", pair.cohen_kappa_linear_both_orientations),
                ("  Cohen's kappa, quadratic weights", pair.cohen_kappa_quadratic),
                ("    both orientations", pair.cohen_kappa_quadratic_both_orientations),
                (f"  percent agreement{winner}", pair.percent_agreement),
                (f"  percent agreement without ties{winner}", pair.percent_agreement_without_ties),
                ("  Spearman's rho", pair.spearman),
            ]
            for label, estimate in rows:
                if estimate is not None:
                    self._line(label, estimate)

    def _line(self, label: str, estimate: Estimate) -> None:
        self.stdout.write(f"{label:<{LABEL_WIDTH}}{_format_estimate(estimate)}")

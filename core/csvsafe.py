"""CSV that a spreadsheet opens as data, never as formulas: the one way the app writes CSV for download.

A spreadsheet runs a cell that begins with ``=``, ``+``, ``-`` or ``@`` as a formula (``=HYPERLINK(...)``,
``=cmd|...``); tab and carriage return are stripped before that test by some of them. Following OWASP's advice on
CSV injection, every text cell (a ``str``) whose first character is tab or carriage return, or whose first
character after leading white space and invisible format characters (Unicode category Cf: the byte-order mark
U+FEFF, zero-width spaces and joiners, direction marks, which a spreadsheet may drop) is one of ``= + - @``, is
prefixed with a single quote, and every text cell
is written between double quotes (inner double quotes doubled), so that a separator inside it (``,`` or a
locale's ``;``) cannot start a new cell. Numbers the code writes (``int``, ``float``, ``Decimal``) are neither
quoted nor escaped: ``-0.5`` stays a number. The escaped text is shown with its quote; the JSON files of the same
data are the exact, unescaped values.
"""

import csv
import io
import unicodedata
from collections.abc import Iterable, Mapping

FORMULA_STARTS = ("=", "+", "-", "@")
STRIPPED_STARTS = ("\t", "\r")


def csv_safe_cell(value: object) -> object:
    """Return ``value`` with a single quote in front if it is text a spreadsheet would run as a formula."""
    if isinstance(value, str) and (value.startswith(STRIPPED_STARTS) or _visible(value).startswith(FORMULA_STARTS)):
        return "'" + value
    return value


def _visible(text: str) -> str:
    """Return ``text`` from its first character that is neither white space nor an invisible format character."""
    for position, char in enumerate(text):
        if not (char.isspace() or unicodedata.category(char) == "Cf"):
            return text[position:]
    return ""


def csv_text(rows: Iterable[Mapping[str, object]], columns: list[str], *, restval: object = "") -> str:
    """Return a header line of ``columns`` and one line per row, every cell made safe with ``csv_safe_cell``.

    The header (column names chosen by the code) is written plainly; text cells are quoted, numbers are not;
    ``None`` is an empty cell. A row with a key not in ``columns`` is an error (``ValueError``).
    """
    buffer = io.StringIO(newline="")
    csv.writer(buffer, lineterminator="\n").writerow(columns)
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n", restval=restval, quoting=csv.QUOTE_STRINGS)
    for row in rows:
        writer.writerow({key: csv_safe_cell(value) for key, value in row.items()})
    return buffer.getvalue()

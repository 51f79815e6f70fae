"""LaTeX text that typesets as written: the one way the app puts user text (judge names, model codes) into LaTeX.

Every character LaTeX treats specially is replaced by the command that prints it, in one pass (so the
replacement of ``\\`` is not itself escaped again): ``\\ { } $ & # % _ ~ ^`` and ``< > |``, which the default
font encoding would print as other glyphs. A line break becomes a space, since a blank line ends a table row with
an error. So ``\\input{x}`` prints as text instead of reading a file, and ``100%`` does not comment out the rest
of the row.
"""

_REPLACEMENTS = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "%": r"\%",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "\n": " ",
    "\r": " ",
}
_TABLE = str.maketrans(_REPLACEMENTS)


def latex_escape(text: object) -> str:
    """Return ``str(text)`` with every LaTeX special character written as the command that prints it."""
    return str(text).translate(_TABLE)

"""Publication figures drawn once with matplotlib and written as SVG, PNG and PDF with reproducible bytes.

Every report figure is a matplotlib figure built by a function of plain data; ``figure_files`` writes it in the
three formats. The page shows the SVG as an ``<img>`` (a data URI: the strict CSP forbids the ``style`` attributes
matplotlib's SVG carries when inlined, and an image is its own document), scaled to its card's width.

Text is drawn in Noto Sans CJK when it is installed (fonts-noto-cjk), chosen by file path, so Chinese labels
render; glyphs are embedded as paths in SVG and as TrueType (Type 42) subsets in PDF, so files show the same
everywhere. Colours are the Okabe-Ito palette, distinguishable with the common colour-vision deficiencies.
"""

import base64
import io
import logging
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
from matplotlib import font_manager  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

# Okabe & Ito (2008), "Color Universal Design": orange, sky blue, bluish green, yellow, blue, vermillion,
# reddish purple, black.
OKABE_ITO = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"]
# The same palette without yellow (too light for points and thin lines on white).
CATEGORICAL = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000"]
POSITIVE, NEGATIVE, NEUTRAL = "#0072B2", "#D55E00", "#555555"

CJK_FONT_PATHS = [
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/truetype/noto/NotoSansCJK-Regular.ttc",
]
FORMATS = ("svg", "png", "pdf")
CONTENT_TYPES = {"svg": "image/svg+xml", "png": "image/png", "pdf": "application/pdf"}
# No dates and no software versions in the files, so the same data always gives the same bytes.
_METADATA = {
    "svg": {"Date": None, "Creator": None},
    "png": {"Software": None},
    "pdf": {"Creator": None, "Producer": None, "CreationDate": None},
}
# Width in inches of a figure: a column of a two-column paper is about 3.3 in, a full page width 6.5-7 in.
WIDTH = 6.4
DPI = 200

_font_family: list[str] | None = None
# fontTools logs every glyph of every font subset it embeds in a PDF at INFO.
logging.getLogger("fontTools").setLevel(logging.WARNING)


def font_family() -> list[str]:
    """Return the font families to draw with: DejaVu Sans, then a CJK font (when installed) for the glyphs it lacks."""
    global _font_family
    if _font_family is None:
        families = []
        for path in CJK_FONT_PATHS:
            if Path(path).exists():
                font_manager.fontManager.addfont(path)
                faces = {f.name for f in font_manager.fontManager.ttflist if f.fname == path}
                # A collection holds one face per region; the Simplified Chinese one draws the forms used here.
                families.append("Noto Sans CJK SC" if "Noto Sans CJK SC" in faces else sorted(faces)[0])
                break
        _font_family = ["DejaVu Sans", *families]
    return _font_family


def style() -> dict:
    """Return the rcParams every figure is drawn with."""
    return {
        # A list of families: matplotlib takes each glyph from the first family that has it.
        "font.family": font_family(),
        "font.size": 9,
        "axes.titlesize": 10,
        "axes.labelsize": 9,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.prop_cycle": matplotlib.cycler(color=CATEGORICAL),
        "axes.unicode_minus": False,
        "legend.fontsize": 8,
        "legend.frameon": False,
        "svg.fonttype": "path",
        "svg.hashsalt": "eistudio",
        "svg.id": "figure",
        "pdf.fonttype": 42,
        "ps.fonttype": 42,
        "image.cmap": "cividis",
        "figure.dpi": 100,
    }


def new_figure(height: float, width: float = WIDTH) -> Figure:
    """Return an empty figure of the given size in inches (no pyplot: nothing global, safe across threads)."""
    return Figure(figsize=(width, height), layout="constrained")


def draw(build: Callable[[], Figure]) -> Figure:
    """Run ``build`` with the house style applied."""
    with matplotlib.rc_context(style()):
        return build()


def figure_title(fig: Figure) -> str:
    """Return the title of a figure's first axes (the figure's title in its file metadata)."""
    return next((ax.get_title(loc="left") or ax.get_title() for ax in fig.axes), "")


def save(fig: Figure, fmt: str) -> bytes:
    """Write a figure in one format with fixed metadata (and its title, for screen readers and file browsers)."""
    metadata = dict(_METADATA[fmt])
    if fmt in ("svg", "pdf") and figure_title(fig):
        metadata["Title"] = figure_title(fig)
    buffer = io.BytesIO()
    with matplotlib.rc_context(style()):
        fig.savefig(buffer, format=fmt, metadata=metadata, dpi=DPI)
    return buffer.getvalue()


def figure_files(name: str, build: Callable[[], Figure], *, formats: tuple[str, ...] = FORMATS) -> dict[str, bytes]:
    """Draw a figure once and return it as ``<name>.svg``, ``<name>.png`` and ``<name>.pdf`` (or ``formats``)."""
    fig = draw(build)
    return {f"{name}.{fmt}": save(fig, fmt) for fmt in formats}


def svg_data_uri(svg: bytes) -> str:
    """Return an SVG as a ``data:`` URI for an ``<img>``."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")


def wrap_label(text: str, width: int = 28) -> str:
    """Break a long tick label onto lines of about ``width`` characters (CJK text counts double)."""
    if len(text) <= width:
        return text
    words, lines, line = text.split(" "), [], ""
    if len(words) == 1:
        step = width // 2 if any(ord(ch) > 0x2E80 for ch in text) else width
        return "\n".join(text[i : i + step] for i in range(0, len(text), step))
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    lines.append(line)
    return "\n".join(lines)

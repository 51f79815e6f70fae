"""A comparison set as Label Studio tasks (a JSON list, streamed) and its labelling config.

The texts are anonymised with the set's model names, as experts see them in the app, and no model name is in a
task: annotators in Label Studio label blind too.
"""

import json
from collections.abc import Iterator

from django.utils.translation import gettext as _

from annotation.labelling.label_studio.format import labelling_config, shown_order
from annotation.labelling.models import Comparison, ComparisonSet
from annotation.labelling.pairwise import anonymise
from annotation.labelling.selectors import set_model_names

CHUNK = 500


def set_config() -> str:
    """Return the labelling config to paste into the Label Studio project (Settings, Labeling Interface, Code)."""
    return labelling_config(
        instructions=_("Which response is better on this dimension? Click it, then choose by how much."),
        margin_header=_("Margin: + (slightly) to +++++ (far better), or tie (then click neither response)"),
    )


def task_records(*, comparison_set: ComparisonSet) -> Iterator[dict]:
    """Yield one Label Studio task per comparison of the set, by comparison id."""
    names = set_model_names(comparison_set=comparison_set)
    comparisons = (
        Comparison.objects.filter(comparison_set=comparison_set)
        .select_related("item__current_revision", "dimension", "response_a", "response_b")
        .order_by("id")
    )
    for c in comparisons.iterator(chunk_size=CHUNK):
        order = shown_order(seed=comparison_set.seed, comparison=c.pk)
        left, right = (c.response_a, c.response_b) if order == "AB" else (c.response_b, c.response_a)
        revision = c.item.current_revision
        content = revision.content.get(c.language, {}) if revision else {}
        yield {
            "data": {
                "comparison": c.pk,
                "comparison_set": comparison_set.pk,
                "item": c.item.uid,
                "language": c.language,
                "dimension": c.dimension.code,
                "dimension_name": c.dimension.name,
                "context": content.get("context", "") or "",
                "prompt": content.get("prompt", "") or "",
                "left": anonymise(left.text, names),
                "right": anonymise(right.text, names),
                "shown_order": order,
            }
        }


def task_chunks(*, comparison_set: ComparisonSet) -> Iterator[bytes]:
    """Yield the set's tasks as one JSON list, a task a line, as Label Studio imports it."""
    yield b"["
    for n, task in enumerate(task_records(comparison_set=comparison_set)):
        yield ((",\n" if n else "\n") + json.dumps(task, ensure_ascii=False)).encode("utf-8")
    yield b"\n]\n"

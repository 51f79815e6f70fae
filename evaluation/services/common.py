"""What the evaluation services share: the purpose of their LLM runs and the release entries of a run."""

from evaluation.models import EvaluationRun

EVALUATION_PURPOSE = "evaluation"
OBJECTIVE = ("mcq", "multi_turn_choice")


def release_entries(run: EvaluationRun) -> list:
    """Return the run's release entries (item and pinned revision), by item uid."""
    return list(run.release.entries.select_related("item", "revision", "item__dimension").order_by("item__uid"))

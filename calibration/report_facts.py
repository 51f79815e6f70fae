"""What the calibration report is built from: plain records of a run's comparisons, labels and verdicts (pure).

``calibration.selectors.calibration_report_facts`` reads them from the database; ``calibration.report`` builds the
report from these alone, so that it can be tested without one.
"""

from dataclasses import dataclass, field
from decimal import Decimal


@dataclass(frozen=True)
class ComparisonFacts:
    """One comparison of the set: the item and stratum it belongs to and the texts of its two responses."""

    id: int
    item_id: int
    dimension: str
    language: str
    text_a: str
    text_b: str


@dataclass(frozen=True)
class LabelFacts:
    """One expert's signed score on a comparison."""

    comparison_id: int
    expert: str
    score: int
    seconds_spent: int | None = None


@dataclass(frozen=True)
class VerdictFacts:
    """One judge's verdict on a comparison in one presentation order (``AB`` or ``BA``)."""

    judge: str
    comparison_id: int
    order: str
    parsed: bool
    score: int | None


@dataclass(frozen=True)
class CalibrationFacts:
    """Everything the report is built from; comparisons in the order of their ids.

    ``spent``: what each judge's LLM run cost, by judge name (juries ask nothing: ``juries`` names their members);
    ``served``: for a set served in active order, each served comparison's id and draw probability, in order.
    """

    name: str
    comparison_set: str
    combine_rule: str
    seed: int
    bootstrap: int
    comparisons: list[ComparisonFacts]
    labels: list[LabelFacts]
    judges: list[str]
    verdicts: list[VerdictFacts]
    spent: dict[str, Decimal] = field(default_factory=dict)
    juries: dict[str, list[str]] = field(default_factory=dict)
    served: list[tuple[int, float]] | None = None

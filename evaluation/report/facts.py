"""What the evaluation report is built from: plain records of a run's models, answers, verdicts and responses (pure).

``evaluation.selectors.evaluation_report_facts`` reads them from the database; the report's tables are built from
these alone, so that they can be tested without one.
"""

from dataclasses import dataclass, field

# The dimension whose answers are also scored as a crisis-level confusion matrix (on items with a crisis level).
CRISIS_DIMENSION = "crisis_recognition"


@dataclass(frozen=True)
class RunFacts:
    """The settings of the run that the report states or computes with."""

    name: str
    release: str
    judge: str | None
    protocol: str
    pairing: str
    adaptive: bool
    combine_rule: str
    margin_mapping: str
    seed: int
    languages: list[str]
    notes: list[str] = field(default_factory=list)
    held_out_release: str | None = None


@dataclass(frozen=True)
class ModelFacts:
    code: str
    label: str


@dataclass(frozen=True)
class AnswerFacts:
    """One turn of a model's answer to an objective item; ``options`` (the item's options in the answer's language)
    only for the first turn of a crisis-recognition item with a crisis level, the one place they are read.

    ``layer``: the code of the dimension's parent (an EiCAP subcategory's layer); ``protocol``: how the answer was
    scored (``logprob`` or ``letter``; None: the run's protocol); ``means``: for log-probability answers to
    multi-turn choice probes, each option's mean per-token log-probability by option index (the score margins).
    """

    model: str
    item: str
    dimension: str
    kind: str
    crisis: bool
    language: str
    turn: int
    option_order: list[int]
    correct_index: int | None
    chosen_index: int | None
    parsed: bool
    correct: bool
    options: list[str] | None = None
    layer: str | None = None
    protocol: str | None = None
    means: dict[int, float | None] | None = None
    # The item belongs to the run's held-out release (scored beside the release, reported apart).
    held_out: bool = False


def needs_options(*, crisis: bool, dimension: str, turn: int) -> bool:
    """Say whether the crisis confusion matrix reads the options of this answer."""
    return crisis and dimension == CRISIS_DIMENSION and turn == 0


@dataclass(frozen=True)
class VerdictFacts:
    """One judge verdict on a pair of models' responses to an open item, in one order."""

    item_id: int
    item: str
    dimension: str
    language: str
    model_a: str
    model_b: str
    order: str
    round: int
    parsed: bool
    score: int | None


@dataclass(frozen=True)
class ResponseFacts:
    """A usable (``ok``) open response of a model."""

    model: str
    item_id: int
    language: str
    text: str


@dataclass(frozen=True)
class ReportFacts:
    """Everything the report is built from; lists in the order of their ids, models by code."""

    run: RunFacts
    models: list[ModelFacts]
    answers: list[AnswerFacts]
    verdicts: list[VerdictFacts]
    responses: list[ResponseFacts]
    # Every dimension code of the release's benchmark in taxonomy order (layers before their subcategories).
    dimension_order: list[str] = field(default_factory=list)

"""Read EQ-Bench 3's judge calls from disk (``pairwise_comparisons_compact.jsonl``).

The reader checks every line and recomputes each side's plus signs from the criterion verdicts and the
presentation order. Turning the resulting ``EqBenchJudgement`` records into verdicts, and rating them, is pure
arithmetic in ``evaluation.ratings`` (``eqbench3_verdicts``, ``rate_verdicts``). See docs/statistics.md.
"""

import json
from collections.abc import Mapping
from pathlib import Path

from evaluation.ratings import EqBenchJudgement

__all__ = ["EQBENCH3_FIRST_CODE", "EQBENCH3_SECOND_CODE", "EqBenchJudgement", "eqbench3_load", "eqbench3_plus_counts"]

EQBENCH3_FIRST_CODE = "A0493"
EQBENCH3_SECOND_CODE = "A0488"


def eqbench3_plus_counts(criterion_verdicts: Mapping[str, object]) -> tuple[int, int]:
    """Count the ``+`` signs won by the first (A0493) and second (A0488) respondent over all criteria.

    This is EQ-Bench 3's ``interpret_pairwise_result``: a verdict such as ``A0488+++`` gives three to the
    respondent it names; non-string values and the chain of thought are ignored.
    """
    first = second = 0
    for key, verdict in criterion_verdicts.items():
        if key == "chain_of_thought_reasoning" or not isinstance(verdict, str):
            continue
        if EQBENCH3_FIRST_CODE in verdict:
            first += verdict.count("+")
        elif EQBENCH3_SECOND_CODE in verdict:
            second += verdict.count("+")
    return first, second


def eqbench3_load(path: Path | str) -> list[EqBenchJudgement]:
    """Read ``pairwise_comparisons_compact.jsonl``; raise ValueError naming the line and field at fault.

    The plus counts are recomputed from ``criterion_verdicts`` and the presentation ``order``, and must agree
    with the stored ``plus_for_test`` / ``plus_for_other``.
    """
    judgements = []
    with Path(path).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"line {number}: not valid JSON ({error.msg})") from error
            except RecursionError as error:
                raise ValueError(f"line {number}: JSON nested too deeply") from error
            if not isinstance(row, dict):
                raise ValueError(f"line {number}: not a JSON object")
            for key in ("scenario_id", "iteration_index", "test_model", "neighbor_model", "order"):
                if not isinstance(row.get(key), str) or not row[key]:
                    raise ValueError(f"line {number}: field {key!r} is missing or not a non-empty string")
            if not isinstance(row.get("criterion_verdicts"), dict):
                raise ValueError(f"line {number}: field 'criterion_verdicts' is missing or not an object")
            order = row["order"]
            if order.startswith(f"{EQBENCH3_FIRST_CODE}:test"):
                test_first = True
            elif order.startswith(f"{EQBENCH3_FIRST_CODE}:other"):
                test_first = False
            else:
                raise ValueError(f"line {number}: field 'order' has unknown value {order!r}")
            first, second = eqbench3_plus_counts(row["criterion_verdicts"])
            plus_test, plus_other = (first, second) if test_first else (second, first)
            stored = (row.get("plus_for_test"), row.get("plus_for_other"))
            if stored != (None, None) and stored != (plus_test, plus_other):
                raise ValueError(
                    f"line {number}: fields 'plus_for_test'/'plus_for_other' {stored} disagree with the "
                    f"criterion verdicts ({plus_test}, {plus_other})"
                )
            judgements.append(
                EqBenchJudgement(
                    scenario_id=row["scenario_id"],
                    iteration=row["iteration_index"],
                    test_model=row["test_model"],
                    neighbor_model=row["neighbor_model"],
                    test_shown_first=test_first,
                    plus_for_test=plus_test,
                    plus_for_other=plus_other,
                )
            )
    return judgements

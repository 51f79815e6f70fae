"""Reads for evaluation pages."""

from evaluation import ratings
from evaluation.models import EvaluationRun


def pairing_comparison(*, run: EvaluationRun) -> list[dict]:
    """Compare this run with finished runs of the other pairing strategy on the same release, models and languages.

    Return per language the judge calls each strategy used and Kendall's tau between their overall rankings.
    """
    if not run.report:
        return []
    endpoints = {m.endpoint_id: m.code for m in run.models.all()}
    others = (
        EvaluationRun.objects.filter(release=run.release, phase=EvaluationRun.Phase.DONE)
        .exclude(pk=run.pk)
        .exclude(pairing=run.pairing)
        .prefetch_related("models")
    )
    rows = []
    for other in others:
        other_codes = {m.endpoint_id: m.code for m in other.models.all()}
        if set(other_codes) != set(endpoints) or sorted(other.languages) != sorted(run.languages) or not other.report:
            continue
        # Rankings are compared by endpoint, since the anonymous codes may differ between runs.
        for lang in run.languages:
            mine = {str(endpoint): _overall(run.report, code, lang) for endpoint, code in endpoints.items()}
            theirs = {str(endpoint): _overall(other.report, code, lang) for endpoint, code in other_codes.items()}
            mine = {k: v for k, v in mine.items() if v is not None}
            theirs = {k: v for k, v in theirs.items() if v is not None}
            agreement = ratings.rank_agreement(mine, theirs)
            rows.append(
                {
                    "other": other,
                    "language": lang,
                    "calls_here": run.report["subjective"]["judge_calls"],
                    "calls_other": other.report["subjective"]["judge_calls"],
                    "tau": agreement.tau,
                    "reason": agreement.undefined_reason,
                }
            )
    return rows


def _overall(report: dict, code: str, language: str) -> float | None:
    for row in report["subjective"]["ratings"]:
        if row["model"] == code and row["language"] == language and row["dimension"] == "overall":
            return row["mu"]
    return None

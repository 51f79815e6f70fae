"""Where an evaluation run stands: its phase, an overall percentage and the time left, for the run page and the API."""

from datetime import datetime

from django.db.models import Count
from django.utils import timezone

from evaluation.models import EvaluationLLMRun, EvaluationRun, ModelUnderTest
from llm.models import Run

RUNNING_PHASES = (EvaluationRun.Phase.RESPONSES, EvaluationRun.Phase.JUDGING)
FINISHED_PHASES = (EvaluationRun.Phase.DONE, EvaluationRun.Phase.CANCELLED)
# Share of the overall bar given to collecting responses when judging follows; judging gets the rest.
RESPONSES_SHARE = 0.5


def _expects_judging(run: EvaluationRun, models: int) -> bool:
    return bool(run.judge_id) and models >= 2


def overall_percent(
    *, phase: str, responses: tuple[int, int], judging: tuple[int, int], expects_judging: bool
) -> float:
    """Return the run's overall percentage from (processed, planned) calls of each phase.

    Collecting responses fills the first half of the bar when judging follows (all of it otherwise); judging
    fills the second half. How many judge calls a phase will need is known only once it starts, so the bar moves
    by phase, never backwards.
    """
    if phase == EvaluationRun.Phase.DONE:
        return 100.0
    if phase == EvaluationRun.Phase.DRAFT:
        return 0.0

    def fraction(pair: tuple[int, int]) -> float:
        processed, planned = pair
        return min(processed / planned, 1.0) if planned else 0.0

    share = RESPONSES_SHARE if expects_judging else 1.0
    if phase == EvaluationRun.Phase.JUDGING or (phase == EvaluationRun.Phase.CANCELLED and judging[1]):
        percent = share + (1 - share) * fraction(judging) if expects_judging else fraction(responses)
    else:
        percent = share * fraction(responses)
    return round(100.0 * min(percent, 0.999), 1)


def estimate_seconds_left(*, percent: float, elapsed_seconds: float | None) -> int | None:
    """Return the time left at the pace so far, or None before anything is measurable."""
    if elapsed_seconds is None or elapsed_seconds <= 0 or percent <= 0 or percent >= 100:
        return None
    return int(elapsed_seconds * (100.0 - percent) / percent)


def _rows_of(llm_runs: list[EvaluationLLMRun]) -> list[dict]:
    """Sum the run's LLM runs per kind (a few rows a run: one per model and phase)."""
    rows: dict[str, dict] = {}
    for link in llm_runs:
        llm_run = link.llm_run
        row = rows.setdefault(
            link.kind,
            {
                "kind": link.kind,
                "planned": 0,
                "done": 0,
                "cached": 0,
                "failed": 0,
                "runs": 0,
                "collected": 0,
                "unfinished": 0,
                "started": None,
            },
        )
        for key in ("planned", "done", "cached", "failed"):
            row[key] += getattr(llm_run, key) or 0
        row["runs"] += 1
        row["collected"] += bool(link.collected)
        row["unfinished"] += llm_run.status not in Run.FINISHED
        if llm_run.started_at and (row["started"] is None or llm_run.started_at < row["started"]):
            row["started"] = llm_run.started_at
    return list(rows.values())


def _kind_counts(rows: list[dict]) -> tuple[dict[str, dict], datetime | None]:
    """Return the call counts of each kind of LLM run (from ``_rows_of``) and when the first of them started."""
    by_kind: dict[str, dict] = {}
    started = None
    for row in rows:
        planned, done, failed = row["planned"] or 0, row["done"] or 0, row["failed"] or 0
        by_kind[row["kind"]] = {
            "planned": planned,
            "done": done,
            "cached": row["cached"] or 0,
            "failed": failed,
            "remaining": max(planned - done - failed, 0),
            "runs": row["runs"],
            "collected": row["collected"],
            "unfinished": row["unfinished"],
        }
        if row["started"] and (started is None or row["started"] < started):
            started = row["started"]
    return by_kind, started


def run_progress(
    run: EvaluationRun, *, models: int | None = None, llm_runs: list[EvaluationLLMRun] | None = None
) -> dict:
    """Return the run's phase, overall percentage, estimated seconds left, whether it is done, and call counts.

    Two queries, whatever the size of the run: the run's LLM runs with theirs (none when the caller gives
    ``llm_runs``, the run's ``EvaluationLLMRun`` rows with their ``llm_run``, read already), and its number of models
    (none when the caller gives ``models``).
    ``counts`` holds planned, done, cached, failed and remaining calls over every LLM run started so far, and the
    same per kind (``responses``/``probe`` and ``judging``) under ``by_kind``.
    """
    if llm_runs is None:
        llm_runs = list(EvaluationLLMRun.objects.filter(run=run).select_related("llm_run").order_by("id"))
    by_kind, started = _kind_counts(_rows_of(llm_runs))
    totals = {
        key: sum(kind[key] for kind in by_kind.values())
        for key in ("planned", "done", "cached", "failed", "remaining", "runs", "collected", "unfinished")
    }
    models = run.models.count() if models is None else models

    def pair(*kinds: str) -> tuple[int, int]:
        processed = sum(by_kind[k]["done"] + by_kind[k]["failed"] for k in kinds if k in by_kind)
        return processed, sum(by_kind[k]["planned"] for k in kinds if k in by_kind)

    responses = pair(EvaluationLLMRun.Kind.RESPONSES, EvaluationLLMRun.Kind.PROBE)
    judging = pair(EvaluationLLMRun.Kind.JUDGING)
    percent = overall_percent(
        phase=run.phase, responses=responses, judging=judging, expects_judging=_expects_judging(run, models)
    )
    # Every call planned so far has its answer but the run goes on: its results are being stored, the next phase
    # planned or the report built. No time left is estimated then (the pace of calls says nothing of that step).
    collecting = run.phase in RUNNING_PHASES and totals["planned"] > 0 and totals["remaining"] == 0
    eta_seconds = None
    if run.phase in RUNNING_PHASES and not collecting:
        elapsed = (timezone.now() - started).total_seconds() if started else None
        eta_seconds = estimate_seconds_left(percent=percent, elapsed_seconds=elapsed)
    return {
        "phase": run.phase,
        "phase_label": str(run.get_phase_display()),
        "running": run.phase in RUNNING_PHASES,
        "done": run.phase == EvaluationRun.Phase.DONE,
        "finished": run.phase in FINISHED_PHASES,
        "percent": percent,
        "eta_seconds": eta_seconds,
        "collecting": collecting,
        # Every LLM run of the phase finished but not yet collected: the collector has not caught up (or failed).
        "awaiting_collection": run.phase in RUNNING_PHASES
        and totals["runs"] > 0
        and totals["unfinished"] == 0
        and totals["collected"] < totals["runs"],
        "has_report": run.report is not None,
        "counts": {**totals, "by_kind": by_kind},
    }


def runs_progress(runs: list[EvaluationRun]) -> dict[int, dict]:
    """Return ``run_progress`` of each of ``runs`` by id, in two queries for all of them: their LLM runs (a few per
    run: one per model and phase) and their numbers of models."""
    ids = [run.pk for run in runs]
    if not ids:
        return {}
    links: dict[int, list[EvaluationLLMRun]] = {pk: [] for pk in ids}
    for link in EvaluationLLMRun.objects.filter(run_id__in=ids).select_related("llm_run").order_by("id"):
        links[link.run_id].append(link)
    counted = ModelUnderTest.objects.filter(run_id__in=ids).values("run_id").annotate(n=Count("id"))
    models = dict(counted.values_list("run_id", "n"))
    return {run.pk: run_progress(run, models=models.get(run.pk, 0), llm_runs=links[run.pk]) for run in runs}

"""The benchmark's research data, for scripts/bench_pages.py: a calibration study and a finished evaluation run.

Written with ``bulk_create`` like the rest of the benchmark's data; the stored reports are then computed by the
product's own services (``calibration_report_compute``, ``evaluation_report_compute``), so the report pages show
what a real study stores.

- Calibration: a validation set of ``CALIBRATION_COMPARISONS`` comparisons of the bench responses, three experts
  each, four judges with verdicts in both orders, a computed report and a primary-judge selection.
- Evaluation: a release of ``RELEASE_ITEMS`` accepted items frozen by the product, four models under test with an
  answer to every objective item in both languages, open responses and pair verdicts in both orders for every pair
  of models on the open items, and the report computed from them.
"""

import itertools
import random
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    from annotation.items.models import Benchmark
    from llm.models import Endpoint, Run

CALIBRATION_COMPARISONS = 1000
RELEASE_ITEMS = 2000
MODELS = ("model-a", "model-b", "model-c", "model-d")


def studies_built() -> bool:
    """Return whether the studies of a benchmark database are complete (the evaluation report is the last step)."""
    from evaluation.models import EvaluationRun

    return EvaluationRun.objects.filter(name="bench evaluation").exclude(report=None).exists()


def studies_reset() -> None:
    """Delete what a build stopped half-way through its studies left behind."""
    from annotation.labelling.models import ComparisonSet
    from annotation.releases.models import Release
    from calibration.models import CalibrationRun, Judge, JudgeSelection
    from evaluation.models import EvaluationRun
    from llm.models import Endpoint, Run

    for run in EvaluationRun.objects.filter(name="bench evaluation"):
        run.delete()
    JudgeSelection.objects.filter(calibration_run__name="bench calibration").delete()
    CalibrationRun.objects.filter(name="bench calibration").delete()
    Judge.objects.filter(name__startswith="bench judge").delete()
    Run.objects.filter(name__startswith="bench calibration judge").delete()
    Endpoint.objects.filter(name__startswith="bench ").delete()
    ComparisonSet.objects.filter(name="bench validation set").delete()
    if Release.objects.filter(version="9.0.0", title="bench release").exists():
        # A frozen release cannot be deleted (the database refuses it, as for any frozen release).
        raise SystemExit("the build stopped after freezing its release: give the benchmark an empty database")


def _endpoint(name: str, model: str) -> "Endpoint":
    from llm.models import Endpoint

    return Endpoint.objects.get_or_create(
        name=name, defaults={"base_url": "http://127.0.0.1:9/v1", "model": model, "api_key_env": ""}
    )[0]


def _finished_run(name: str, endpoint: "Endpoint", purpose: str, planned: int) -> "Run":
    from django.utils import timezone

    from llm.models import Run

    return Run.objects.create(
        name=name,
        purpose=purpose,
        endpoint=endpoint,
        parser="json",
        status=Run.Status.DONE,
        planned=planned,
        done=planned,
        collected_at=timezone.now(),
    )


def build_calibration(
    *,
    benchmark: "Benchmark",
    lead: "AbstractBaseUser",
    researcher: "AbstractBaseUser",
    experts: list,
    rng: random.Random,
) -> None:
    """A calibration run on a validation set of the bench responses, with its report and the judge chosen."""
    from annotation.labelling import services as labelling_services
    from annotation.labelling.models import Comparison, ComparisonSet, ExpertLabel, LabelAssignment
    from calibration import services as calibration
    from calibration.models import CalibrationJudgeRun, CalibrationRun, Judge, JudgeVerdict

    source = ComparisonSet.objects.get(name="bench set")
    comparison_set = ComparisonSet.objects.create(
        name="bench validation set", benchmark=benchmark, created_by=researcher, experts_per_comparison=3
    )
    labellers = experts[:3]
    comparison_set.experts.set(labellers)
    picked = list(source.comparisons.order_by("pk")[:CALIBRATION_COMPARISONS])
    Comparison.objects.bulk_create(
        [
            Comparison(
                comparison_set=comparison_set,
                item_id=c.item_id,
                language=c.language,
                dimension_id=c.dimension_id,
                response_a_id=c.response_a_id,
                response_b_id=c.response_b_id,
            )
            for c in picked
        ]
    )
    comparisons = list(comparison_set.comparisons.order_by("pk"))
    truth = {c.pk: rng.choice([-3, -2, -1, 0, 1, 2, 3]) for c in comparisons}
    LabelAssignment.objects.bulk_create(
        [
            LabelAssignment(
                comparison=c,
                comparison_set=comparison_set,
                expert=e,
                shown_order=rng.choice(["AB", "BA"]),
                position=k,
            )
            for k, c in enumerate(comparisons)
            for e in labellers
        ],
        batch_size=5000,
    )
    ExpertLabel.objects.bulk_create(
        [
            ExpertLabel(
                assignment=a,
                score=max(-5, min(5, truth[a.comparison_id] + rng.choice([-1, 0, 0, 1]))),
                shown_order=a.shown_order,
                seconds_spent=rng.randint(20, 240),
            )
            for a in LabelAssignment.objects.filter(comparison__comparison_set=comparison_set)
        ],
        batch_size=5000,
    )
    # Labels written directly: fill in the stored counts the labelling services keep.
    labelling_services.comparison_set_recount(comparison_set=comparison_set)
    prompt_set = calibration.judge_prompts_load_defaults(benchmark=benchmark)
    run = CalibrationRun.objects.create(
        name="bench calibration", comparison_set=comparison_set, combine_rule="facet_tie", created_by=researcher
    )
    verdicts = []
    for j, noise in enumerate((0.4, 0.6, 0.8, 1.2)):
        endpoint = _endpoint(f"bench judge {j}", f"judge-{j}")
        judge = Judge.objects.create(name=f"bench judge {j}", endpoint=endpoint, prompt_set=prompt_set)
        llm_run = _finished_run(f"bench calibration judge {j}", endpoint, "calibration", 2 * len(comparisons))
        CalibrationJudgeRun.objects.create(calibration_run=run, judge=judge, llm_run=llm_run)
        for c in comparisons:
            for order in ("AB", "BA"):
                score = max(-5, min(5, round(truth[c.pk] + rng.gauss(0, 1) * noise * 2)))
                verdicts.append(
                    JudgeVerdict(
                        calibration_run=run,
                        judge=judge,
                        comparison=c,
                        order=order,
                        raw_output=f'{{"winner": "{score}"}}',
                        parsed=True,
                        score=score,
                    )
                )
    JudgeVerdict.objects.bulk_create(verdicts, batch_size=5000)
    report = calibration.calibration_report_compute(run=run)
    run.refresh_from_db()
    chosen = Judge.objects.get(name=report["suggestion"]["judge"] or "bench judge 0")
    calibration.judge_select(
        run=run, judge=chosen, user=researcher, report_digest=run.report_digest, reason="bench: the suggested judge"
    )


def build_evaluation(
    *, benchmark: "Benchmark", lead: "AbstractBaseUser", researcher: "AbstractBaseUser", rng: random.Random
) -> None:
    """A frozen release and a finished evaluation run on it with every answer and verdict stored, and its report."""
    from annotation.items.models import Item
    from annotation.releases import services as releases
    from calibration.models import JudgeSelection
    from evaluation import services as evaluation
    from evaluation.models import Answer, EvaluationRun, ModelUnderTest, OpenResponse, PairVerdict

    uids = list(
        Item.objects.filter(uid__startswith="bench-", status="accepted", has_en=True, has_zh=True)
        .order_by("uid")
        .values_list("uid", flat=True)[:RELEASE_ITEMS]
    )
    release = releases.release_create(
        benchmark=benchmark,
        version="9.0.0",
        title="bench release",
        user=lead,
        filters={"status": "accepted", "languages": "both"},
    )
    keep = set(uids)
    drop = list(release.entries.exclude(item__uid__in=keep).values_list("item__uid", flat=True))
    if drop:
        releases.release_items_change(release=release, user=lead, add=[], remove=drop)
    releases.release_freeze(release=release, user=lead, override_reason="bench data")
    judge = JudgeSelection.objects.order_by("-pk").first().judge
    run = EvaluationRun.objects.create(
        name="bench evaluation",
        release=release,
        languages=["en", "zh"],
        judge=judge,
        combine_rule="facet_tie",
        created_by=researcher,
        phase=EvaluationRun.Phase.DONE,
    )
    models = [
        ModelUnderTest.objects.create(run=run, endpoint=_endpoint(f"bench {m}", m), code=f"M{k + 1}", label=m)
        for k, m in enumerate(MODELS)
    ]
    skill = {m.pk: 0.45 + 0.1 * k for k, m in enumerate(models)}
    entries = list(release.entries.select_related("item", "revision").order_by("pk"))
    answers, opens, verdicts = [], [], []
    for entry in entries:
        item = entry.item
        for lang in run.languages:
            if item.kind == "open_prompt":
                for m in models:
                    opens.append(
                        OpenResponse(
                            run=run,
                            model=m,
                            item=item,
                            language=lang,
                            text=f"{m.label} answers {item.uid} in {lang}. " * rng.randint(2, 8),
                            ok=True,
                        )
                    )
                for a, b in itertools.combinations(models, 2):
                    lean = round((skill[a.pk] - skill[b.pk]) * 10 + rng.gauss(0, 1.5))
                    for order in ("AB", "BA"):
                        score = max(-5, min(5, lean))
                        verdicts.append(
                            PairVerdict(
                                run=run,
                                item=item,
                                language=lang,
                                model_a=a,
                                model_b=b,
                                order=order,
                                parsed=True,
                                score=score,
                                raw=str(score),
                            )
                        )
            else:
                for m in models:
                    chosen = 0 if rng.random() < skill[m.pk] + 0.2 else rng.randint(1, 3)
                    answers.append(
                        Answer(
                            run=run,
                            model=m,
                            item=item,
                            revision=entry.revision,
                            language=lang,
                            option_order=[0, 1, 2, 3],
                            correct_index=0,
                            chosen_index=chosen,
                            parsed=True,
                            correct=chosen == 0,
                            raw="ABCD"[chosen],
                        )
                    )
    Answer.objects.bulk_create(answers, batch_size=5000)
    OpenResponse.objects.bulk_create(opens, batch_size=5000)
    PairVerdict.objects.bulk_create(verdicts, batch_size=5000)
    evaluation.evaluation_report_compute(run=run)


def build_extras(*, rng: random.Random) -> None:
    """Write the rows of ``_extras`` in one transaction (a failed step leaves nothing half-written)."""
    from django.db import transaction

    with transaction.atomic():
        _extras(rng)


def _extras(rng: random.Random) -> None:
    """The rows every route of ``scripts/bench_routes.py`` needs besides the studies; each written once.

    An admin account, LLM calls and run items of the judges' runs (a run page lists its items, a call page shows
    one), a drafting job, a jury, a draft release on the accepted items, a budget pool, a provider batch, a status
    decision, an API token, a task result and a failed sign-in (the admin site lists each).
    """
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.utils import timezone
    from django_tasks_db.models import DBTaskResult
    from rest_framework.authtoken.models import Token

    from annotation.items.models import Benchmark, Dimension, DraftingJob, Item, ItemTemplate, StatusDecision
    from annotation.releases import services as releases
    from annotation.releases.models import Release
    from calibration import services as calibration
    from calibration.models import Judge
    from llm.models import BudgetPool, LLMCall, Run, RunBatch, RunChunk, RunItem

    users = get_user_model().objects
    lead = users.get(username="bench_lead")
    admin = users.filter(username="bench_admin").first()
    if admin is None:
        admin = users.create_superuser("bench_admin", password="bench-pass-2026")
        admin.groups.add(Group.objects.get(name="admin"))
    benchmark = Benchmark.objects.get(slug="facet")
    for run in Run.objects.filter(name__startswith="bench calibration judge").exclude(items__isnull=False):
        chunk = RunChunk.objects.create(run=run, number=1, status="done")
        calls = LLMCall.objects.bulk_create(
            [
                LLMCall(
                    endpoint=run.endpoint,
                    request_hash=f"bench-{run.pk}-{k}",
                    request={"messages": [{"role": "user", "content": f"Compare pair {k}."}]},
                    status="succeeded",
                    http_status=200,
                    response_text=f'{{"winner": "{rng.randint(-3, 3)}"}}',
                    parsed=True,
                    input_tokens=200,
                    output_tokens=10,
                    latency_ms=rng.randint(200, 900),
                )
                for k in range(60)
            ]
        )
        RunItem.objects.bulk_create(
            [
                RunItem(
                    run=run,
                    chunk=chunk,
                    key=f"pair-{k}",
                    position=k,
                    request=call.request,
                    request_hash=call.request_hash,
                    call=call,
                    status="done",
                    result={"score": 0},
                )
                for k, call in enumerate(calls)
            ]
        )
        RunBatch.objects.get_or_create(key=f"bench-batch-{run.pk}", defaults={"run": run, "chunk": chunk})
    if not DraftingJob.objects.exists():
        template = ItemTemplate.objects.create(
            dimension=Dimension.objects.filter(benchmark=benchmark, children__isnull=True).order_by("pk").first(),
            version=1,
            instructions="Write a short scenario about a colleague's feelings.",
            created_by=lead,
        )
        endpoint = Run.objects.order_by("pk").first().endpoint
        DraftingJob.objects.create(template=template, endpoint=endpoint, count=10, languages=["en"], created_by=lead)
    if not Judge.objects.filter(kind="jury").exists():
        members = list(Judge.objects.filter(kind="single", name__startswith="bench judge").order_by("name")[:3])
        calibration.jury_create(name="bench jury", members=members, aggregation="majority")
    if not Release.objects.filter(title="bench draft release").exists():
        releases.release_create(
            benchmark=benchmark, version="9.1.0", title="bench draft release", user=lead, filters={"status": "accepted"}
        )
    BudgetPool.objects.get_or_create(name="bench pool")
    if not StatusDecision.objects.exists():
        item = Item.objects.filter(status="accepted").order_by("pk").first()
        StatusDecision.objects.create(
            item=item,
            from_status="draft",
            to_status="accepted",
            source="lead_decision",
            decided_by=lead,
            reason="bench",
        )
    Token.objects.get_or_create(user=admin)
    from core.models import UserProfile

    for user in (lead, admin):
        UserProfile.objects.get_or_create(user=user)
    if not DBTaskResult.objects.exists():
        DBTaskResult.objects.create(
            status="SUCCESSFUL",
            args_kwargs={"args": [0], "kwargs": {}},
            task_path="llm.tasks.run_collect",
            backend_name="default",
            run_after=timezone.now(),
            exception_class_path="",
            traceback="",
        )
    from axes.models import AccessAttempt, AccessFailureLog, AccessLog

    fields = {"user_agent": "bench", "ip_address": "127.0.0.1", "username": "nobody", "http_accept": "*/*"}
    if not AccessAttempt.objects.exists():
        AccessAttempt.objects.create(**fields, path_info="/login/", get_data="", post_data="", failures_since_start=1)
    if not AccessLog.objects.exists():
        AccessLog.objects.create(**fields, path_info="/login/")
    if not AccessFailureLog.objects.exists():
        AccessFailureLog.objects.create(**fields, path_info="/login/", locked_out=False)

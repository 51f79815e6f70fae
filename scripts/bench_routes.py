"""Every GET route of the URL resolver, filled with the page benchmark's data, for scripts/bench_pages.py.

``discover()`` walks the resolver (``tests.core.crawl.routes``: included apps, namespaces, DRF routers, the admin
site) and keys each pattern by its name, or its route string when it has none. ``cases()`` turns every key into the
requests the benchmark makes, each as the role that uses the page: ids of real objects (the first, a middle and the
last), the first, middle and last page of lists, filters, and searches in English and Chinese with one and two
characters; htmx partials with ``HX-Request``. The admin site is filled by rule for every registered model
(changelist with its first, middle and last page and a search, add, change, history, delete and its redirect).

A key that is neither filled nor in ``EXCLUDED`` (scripts/bench_excluded.py, each with its reason) makes the
benchmark fail, and so does a fill that finds no object to show: ``tests/test_bench_pages.py`` keeps both lists
complete as routes are added.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from bench_excluded import DOWNLOAD, EXCLUDED, POST_ONLY  # noqa: F401 - the routes not requested, read from here

EXPERT, LEAD, RESEARCHER, ADMIN = "bench_2", "bench_lead", "bench_1", "bench_admin"
ROLE_NAMES = {EXPERT: "expert", LEAD: "lead_expert", RESEARCHER: "researcher", ADMIN: "admin"}
ADMIN_VIEWS = ("changelist", "add", "history", "delete", "change")

@dataclass(frozen=True)
class Case:
    """One request of the benchmark: what it shows, as whom, where, and whether htmx asks for it."""

    page: str
    username: str
    url: str
    htmx: bool = False
    route: str = ""
    refused: bool = False  # the product answers 403 to every user here (an admin page no one may use)

    @property
    def role(self) -> str:
        return ROLE_NAMES[self.username]


class Unfilled(Exception):
    """A route the benchmark cannot fill from its data."""


def discover() -> dict[str, object]:
    """Return every URL pattern of the resolver by its key (its name, else its route string)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.core import crawl

    return {route.name or route.route: route for route in crawl.routes()}


def _spread(values: list) -> list:
    """Return the first, a middle and the last of a list (fewer when it is shorter), in order."""
    if not values:
        return []
    picked = [values[0], values[len(values) // 2], values[-1]]
    return list(dict.fromkeys(picked))


def _ids(queryset: object, what: str) -> list[int]:
    """Return the first, a middle and the last primary key of a queryset; fail when it is empty."""
    ids = list(queryset.order_by("pk").values_list("pk", flat=True))
    if not ids:
        raise Unfilled(f"no {what} in the benchmark's data")
    return _spread(ids)


def _pages(count: int, size: int) -> list[int]:
    last = max(1, -(-count // size))
    return list(dict.fromkeys([1, max(1, last // 2), last]))


# Searches the issue asks for: English and Chinese, one and two characters (and a word).
SEARCHES = ("colleague", "co", "c", "同事", "生")


def _app_cases() -> dict[str, list[Case]]:  # noqa: PLR0915 - one table of the project's routes
    from annotation.items.api_replysets import ReplySetPagination
    from annotation.items.models import (
        Benchmark,
        CrisisLevel,
        Dimension,
        DraftingJob,
        EmotionCategory,
        Item,
        ItemImportJob,
        ItemRevision,
        KeyJudgement,
        KeyValidation,
        NearDuplicateReport,
        Reply,
        ReplySet,
        Scenario,
        ScenarioDomain,
    )
    from annotation.labelling.models import ComparisonSet, ExpertLabel, LabelAssignment
    from annotation.releases.models import Release
    from annotation.screening.models import ReviewAssignment, RoundItem, ScreeningRound
    from calibration.models import CalibrationRun, Judge, JudgePrompt, JudgeSelection, PromptSet
    from evaluation.models import ContaminationCheck, EvaluationRun
    from llm.models import Endpoint, LLMCall, Run

    items = Item.objects.count()
    uids = _spread(list(Item.objects.order_by("uid").values_list("uid", flat=True)))
    open_round = ScreeningRound.objects.get(title="bench round 2")
    closed_round = ScreeningRound.objects.get(title="bench round 1")
    comparison_set = ComparisonSet.objects.get(name="bench set")
    reviews = _ids(ReviewAssignment.objects.filter(round=open_round, reviewer__username=EXPERT), "review")
    labels = _ids(LabelAssignment.objects.filter(comparison_set=comparison_set, expert__username=EXPERT), "label")
    disputed = _ids(RoundItem.objects.filter(round=open_round), "round item")
    frozen = Release.objects.get(title="bench release")
    draft = Release.objects.filter(title="bench draft release").first()
    if draft is None:
        raise Unfilled("no draft release in the benchmark's data")
    calibration = CalibrationRun.objects.get(name="bench calibration")
    evaluation = EvaluationRun.objects.get(name="bench evaluation")
    cell = evaluation.pair_verdicts.select_related("model_a", "item__dimension").order_by("pk").first()
    drill = f"model={cell.model_a.code}&dimension={cell.item.dimension.code}&language={cell.language}"
    runs = _ids(Run.objects.all(), "LLM run")
    calls = _ids(LLMCall.objects.all(), "LLM call")
    endpoints = _ids(Endpoint.objects.all(), "endpoint")
    jobs = _ids(DraftingJob.objects.all(), "drafting job")
    import_jobs = _ids(ItemImportJob.objects.filter(created_by__username=LEAD), "item import job")
    juries = _ids(Judge.objects.filter(kind="jury"), "jury")
    reply_sets = _spread(list(ReplySet.objects.order_by("uid").values_list("uid", flat=True)))
    if not reply_sets:
        raise Unfilled("no reply set in the benchmark's data")
    replies = _ids(Reply.objects.filter(turn__reply_set__uid__in=reply_sets), "reply")
    validation = KeyValidation.objects.filter(collected=True).order_by("-pk").first()
    if validation is None or not KeyJudgement.objects.filter(validation=validation).exclude(chosen=None).exists():
        raise Unfilled("no collected key validation in the benchmark's data")
    checks = _ids(ContaminationCheck.objects.filter(status="done"), "contamination check")
    eicap_leaf = ReplySet.objects.order_by("pk").values_list("dimension__code", flat=True).first()
    open_reviews = KeyJudgement.objects.filter(validation=validation, review="open").exclude(chosen=None).count()
    dimension = Dimension.objects.filter(children__isnull=True).order_by("pk").first()
    # The clusters a worker stored (bench_pages.py stores them before measuring, as the worker would).
    zh_clusters = (
        NearDuplicateReport.objects.filter(benchmark__slug="facet", language="zh", threshold="0.85")
        .values_list("cluster_count", flat=True)
        .first()
        or 0
    )
    E, L, R = EXPERT, LEAD, RESEARCHER  # noqa: N806
    item_pages = _pages(items, 25)
    api_pages = _pages(items, 50)
    c: dict[str, list[Case]] = {
        "home": [Case("home", u, "/") for u in (E, L, R, ADMIN)],
        "items:item-list": [
            *[Case(f"item list, page {p}", E, f"/items/?page={p}") for p in item_pages],
            *[Case(f"item search {q}", E, f"/items/?q={quote(q)}") for q in SEARCHES],
            Case("item list, filters", E, f"/items/?status=accepted&kind=mcq&dimension={dimension.code}"),
            Case("item list, valence filter", E, "/items/?valence=negative"),
            Case("item list, languages, parity", E, "/items/?languages=both&parity=mismatch"),
            Case("item list results (htmx)", E, "/items/?q=colleague&page=2", htmx=True),
        ],
        "items:item-create": [Case("new item", L, "/items/new/")],
        "items:item-import": [Case("item import", L, "/items/import/")],
        "items:near-duplicates": [
            Case("near-duplicates", L, "/items/near-duplicates/"),
            *[
                Case(f"near-duplicates, zh, page {p}", L, f"/items/near-duplicates/?benchmark=facet&lang=zh&page={p}")
                for p in _pages(zh_clusters, 50)
            ],
        ],
        "items:coverage": [
            Case("coverage", L, "/coverage/"),
            Case("coverage by dimension, zh", L, "/coverage/?benchmark=facet&by=dimension&lang=zh"),
        ],
        "items:item-detail": [Case("item detail", E, f"/items/{u}/") for u in uids],
        "items:item-edit": [Case("item edit", L, f"/items/{u}/edit/") for u in uids],
        "items:item-history": [Case("item history", E, f"/items/{u}/history/") for u in uids],
        "items:taxonomy": [Case("taxonomy", E, "/taxonomy/")],
        "items:item-schema": [Case("item schema", E, "/schema/item.json")],
        "items:drafting": [Case("drafting", L, "/drafting/")],
        "items:drafting-job": [Case("drafting job", L, f"/drafting/jobs/{pk}/") for pk in jobs],
        "items:item-import-job": [Case("item import job", L, f"/items/imports/{pk}/") for pk in import_jobs],
        "screening:round-list": [Case("screening rounds", L, "/screening/")],
        "screening:round-open": [Case("new round form", L, "/screening/new/")],
        "screening:round-detail": [
            Case("round, open (lead)", L, f"/screening/{open_round.pk}/"),
            *[
                Case(f"round, closed (lead), page {p}", L, f"/screening/{closed_round.pk}/?page={p}")
                for p in _pages(RoundItem.objects.filter(round=closed_round).count(), 50)
            ],
        ],
        "screening:review-next": [Case("review next", E, f"/screening/{open_round.pk}/review/")],
        "screening:review": [Case("review page", E, f"/screening/{open_round.pk}/review/{a}/") for a in reviews],
        "screening:adjudicate": [
            Case("adjudicate", L, f"/screening/{open_round.pk}/adjudicate/{pk}/") for pk in disputed
        ],
        "labelling:set-list": [Case("labelling sets", E, "/labelling/"), Case("labelling sets", R, "/labelling/")],
        "labelling:set-create": [Case("new comparison set form", R, "/labelling/new/")],
        "labelling:set-data": [Case("comparison set data page", R, f"/labelling/{comparison_set.pk}/data/")],
        "labelling:responses-import": [Case("responses import", R, "/labelling/responses/import/")],
        "labelling:label-next": [Case("label next", E, f"/labelling/{comparison_set.pk}/next/")],
        "labelling:label": [Case("label page", E, f"/labelling/{comparison_set.pk}/{a}/") for a in labels],
        "releases:release-list": [Case("releases", R, "/releases/")],
        "releases:release-create": [Case("new release form", ADMIN, "/releases/new/")],
        "releases:release-compare": [
            Case("release compare", R, f"/releases/facet/compare/?old={frozen.version}&new={draft.version}")
        ],
        "releases:release-detail": [
            *[
                Case(f"frozen release, page {p}", R, f"/releases/facet/{frozen.version}/?page={p}")
                for p in _pages(frozen.entries.count(), 100)
            ],
            Case("draft release", L, f"/releases/facet/{draft.version}/"),
        ],
        "llm:run-list": [
            Case("LLM runs", R, "/llm/"),
            Case("LLM runs, done", R, "/llm/?status=done"),
            Case("LLM runs (htmx)", R, "/llm/?page=1", htmx=True),
        ],
        "llm:run-create": [Case("new LLM run form", R, "/llm/runs/new/")],
        "llm:run-detail": [
            *[Case("LLM run", R, f"/llm/runs/{pk}/") for pk in runs],
            Case("LLM run, items, last page", R, f"/llm/runs/{runs[-1]}/?items=done&page=999"),
        ],
        "llm:run-progress": [Case("LLM run progress (htmx)", R, f"/llm/runs/{pk}/progress/", True) for pk in runs],
        "llm:call-detail": [Case("LLM call", R, f"/llm/calls/{pk}/") for pk in calls],
        "llm:endpoint-list": [Case("endpoints", R, "/llm/endpoints/")],
        "llm:endpoint-create": [Case("new endpoint form", ADMIN, "/llm/endpoints/new/")],
        "llm:endpoint-edit": [Case("endpoint edit", ADMIN, f"/llm/endpoints/{pk}/edit/") for pk in endpoints],
        "calibration:overview": [Case("calibration overview", R, "/calibration/")],
        "calibration:prompts": [Case("judge prompts", R, "/calibration/prompts/")],
        "calibration:judge-create": [Case("new judge form", R, "/calibration/judges/new/")],
        "calibration:run-start": [Case("new calibration run form", R, "/calibration/runs/new/")],
        "calibration:run": [
            Case("calibration run", R, f"/calibration/runs/{calibration.pk}/"),
            Case("calibration run progress (htmx)", R, f"/calibration/runs/{calibration.pk}/?part=progress", True),
        ],
        "calibration:run-report": [Case("calibration run report", R, f"/calibration/runs/{calibration.pk}/report/")],
        "calibration:run-select": [Case("judge selection form", R, f"/calibration/runs/{calibration.pk}/select/")],
        "evaluation:run-list": [Case("evaluation runs", R, "/evaluation/")],
        "evaluation:run-create": [Case("new evaluation run form", R, "/evaluation/new/")],
        "evaluation:run": [
            Case("evaluation run report", R, f"/evaluation/{evaluation.pk}/"),
            Case("evaluation run live (htmx)", R, f"/evaluation/{evaluation.pk}/?part=live", True),
        ],
        "evaluation:drill": [
            Case("evaluation drill-down", R, f"/evaluation/{evaluation.pk}/drill/?{drill}"),
            Case("evaluation drill-down, page 2", R, f"/evaluation/{evaluation.pk}/drill/?{drill}&page=2"),
            Case("evaluation drill-down, unfiltered", R, f"/evaluation/{evaluation.pk}/drill/"),
        ],
        # EiCAP reply sets, key validations and contamination checks
        "items:replyset-list": [
            *[
                Case(f"reply sets, page {p}", E, f"/reply-sets/?page={p}")
                for p in _pages(ReplySet.objects.count(), 50)
            ],
            Case("reply sets, to audit", E, "/reply-sets/?state=to_audit"),
            Case("reply sets, expanded, leaf", E, f"/reply-sets/?state=expanded&dimension={eicap_leaf}"),
        ],
        "items:replyset-detail": [Case("reply set", E, f"/reply-sets/{u}/") for u in reply_sets],
        "items:key-disagreements": [
            *[
                Case(f"key disagreements, page {p}", E, f"/reply-sets/disagreements/?page={p}")
                for p in _pages(open_reviews, 25)
            ],
            Case("key disagreements, all", E, "/reply-sets/disagreements/?review="),
        ],
        "calibration:key-validations": [Case("key validations", R, "/calibration/key-validation/")],
        "calibration:key-validation": [
            Case("key validation", R, f"/calibration/key-validation/{validation.pk}/"),
            Case("key validation (htmx)", R, f"/calibration/key-validation/{validation.pk}/", htmx=True),
        ],
        "evaluation:contamination-list": [Case("contamination checks", R, "/evaluation/contamination/")],
        "evaluation:contamination": [
            Case("contamination check", R, f"/evaluation/contamination/{pk}/") for pk in checks
        ],
        # API
        "items-api-root": [Case("API root", R, "/api/")],
        "api-schema": [Case("API schema", R, "/api/schema/")],
        "api-docs": [Case("API docs", R, "/api/docs/")],
        "item-list": [
            *[Case(f"API items, page {p}", R, f"/api/items/?page={p}") for p in api_pages],
            *[Case(f"API item search {q}", R, f"/api/items/?q={quote(q)}") for q in SEARCHES],
            Case("API items, filters", R, f"/api/items/?status=accepted&dimension={dimension.code}"),
        ],
        "item-detail": [Case("API item", R, f"/api/items/{u}/") for u in uids],
        "item-import-list": [Case("API item imports", L, "/api/item-imports/")],
        "item-import-detail": [Case("API item import", L, f"/api/item-imports/{pk}/") for pk in import_jobs],
        "item-revisions": [Case("API item revisions", R, f"/api/items/{u}/revisions/") for u in uids],
        "item-status-decisions": [Case("API item status decisions", R, f"/api/items/{u}/status/") for u in uids],
        "revision-list": [
            Case(f"API revisions, page {p}", R, f"/api/revisions/?page={p}")
            for p in _pages(ItemRevision.objects.count(), 50)
        ],
        "revision-detail": [
            Case("API revision", R, f"/api/revisions/{pk}/") for pk in _ids(ItemRevision.objects, "revision")
        ],
        "benchmark-list": [Case("API benchmarks", R, "/api/benchmarks/")],
        "benchmark-detail": [
            Case("API benchmark", R, f"/api/benchmarks/{s}/") for s in Benchmark.objects.values_list("slug", flat=True)
        ],
        "dimension-list": [Case("API dimensions", R, "/api/dimensions/")],
        "dimension-detail": [
            Case("API dimension", R, f"/api/dimensions/{pk}/") for pk in _ids(Dimension.objects, "dim")
        ],
        "emotion-list": [Case("API emotions", R, "/api/emotions/")],
        "emotion-detail": [
            Case("API emotion", R, f"/api/emotions/{c}/")
            for c in _spread(list(EmotionCategory.objects.order_by("pk").values_list("code", flat=True)))
        ],
        "scenario-domain-list": [Case("API scenario domains", R, "/api/scenario-domains/")],
        "scenario-domain-detail": [
            Case("API scenario domain", R, f"/api/scenario-domains/{c}/")
            for c in _spread(list(ScenarioDomain.objects.order_by("pk").values_list("code", flat=True)))
        ],
        "scenario-list": [Case("API scenarios", R, "/api/scenarios/")],
        "scenario-detail": [
            Case("API scenario", R, f"/api/scenarios/{c}/")
            for c in _spread(list(Scenario.objects.order_by("pk").values_list("code", flat=True)))
        ],
        "crisis-level-list": [Case("API crisis levels", R, "/api/crisis-levels/")],
        "crisis-level-detail": [
            Case("API crisis level", R, f"/api/crisis-levels/{v}/")
            for v in _spread(list(CrisisLevel.objects.order_by("pk").values_list("level", flat=True)))
        ],
        "llm-api-root": [Case("API LLM root", R, "/api/llm/")],
        "llm-endpoint-list": [Case("API endpoints", R, "/api/llm/endpoints/")],
        "llm-endpoint-detail": [Case("API endpoint", R, f"/api/llm/endpoints/{pk}/") for pk in endpoints],
        "llm-run-list": [Case("API LLM runs", R, "/api/llm/runs/")],
        "llm-run-detail": [Case("API LLM run", R, f"/api/llm/runs/{pk}/") for pk in runs],
        "llm-run-progress": [Case("API LLM run progress", R, f"/api/llm/runs/{pk}/progress/") for pk in runs],
        "llm-run-results": [Case("API LLM run results", R, f"/api/llm/runs/{pk}/results/") for pk in runs],
        "llm-call-list": [Case("API LLM calls", R, "/api/llm/calls/")],
        "llm-call-detail": [Case("API LLM call", R, f"/api/llm/calls/{pk}/") for pk in calls],
        "screening-api-root": [Case("API screening root", L, "/api/screening/")],
        "screening-round-list": [Case("API screening rounds", L, "/api/screening/rounds/")],
        "screening-round-detail": [
            Case("API screening round", L, f"/api/screening/rounds/{r.pk}/") for r in (open_round, closed_round)
        ],
        "screening-round-items": [
            Case("API round items", L, f"/api/screening/rounds/{r.pk}/items/") for r in (open_round, closed_round)
        ],
        "screening-round-statistics": [
            Case("API round statistics", L, f"/api/screening/rounds/{r.pk}/statistics/")
            for r in (open_round, closed_round)
        ],
        "screening-assignment-list": [
            Case("API my review assignments", E, f"/api/screening/assignments/?round={open_round.pk}"),
            Case("API my review assignments, open", E, f"/api/screening/assignments/?round={open_round.pk}&state=open"),
        ],
        "screening-assignment-next": [
            Case("API next review", E, f"/api/screening/assignments/next/?round={open_round.pk}")
        ],
        "screening-assignment-detail": [
            Case("API review assignment", E, f"/api/screening/assignments/{a}/") for a in reviews
        ],
        "screening-round-item-detail": [
            Case("API round item", L, f"/api/screening/round-items/{pk}/") for pk in disputed
        ],
        "labelling-api-root": [Case("API labelling root", R, "/api/labelling/")],
        "labelling-set-list": [Case("API comparison sets", R, "/api/labelling/sets/")],
        "labelling-set-detail": [
            Case("API comparison set", R, f"/api/labelling/sets/{pk}/")
            for pk in _ids(ComparisonSet.objects, "comparison set")
        ],
        "labelling-set-next": [Case("API next comparison", E, f"/api/labelling/sets/{comparison_set.pk}/next/")],
        "labelling-set-progress": [Case("API set progress", E, f"/api/labelling/sets/{comparison_set.pk}/progress/")],
        "labelling-set-experts": [
            Case("API per-expert statistics", R, f"/api/labelling/sets/{comparison_set.pk}/experts/")
        ],
        "labelling-assignment-list": [
            Case("API my label assignments", E, f"/api/labelling/assignments/?set={comparison_set.pk}")
        ],
        "labelling-assignment-detail": [
            Case("API label assignment", E, f"/api/labelling/assignments/{a}/") for a in labels
        ],
        "labelling-label-list": [Case("API labels", E, "/api/labelling/labels/")],
        "labelling-label-detail": [
            Case("API label", E, f"/api/labelling/labels/{pk}/")
            for pk in _ids(ExpertLabel.objects.filter(assignment__expert__username=E), "label of the expert")
        ],
        "calibration-api-root": [Case("API calibration root", R, "/api/calibration/")],
        "calibration-prompt-list": [Case("API judge prompts", R, "/api/calibration/prompts/")],
        "calibration-prompt-detail": [
            Case("API judge prompt", R, f"/api/calibration/prompts/{pk}/")
            for pk in _ids(JudgePrompt.objects, "judge prompt")
        ],
        "calibration-prompt-set-list": [Case("API prompt sets", R, "/api/calibration/prompt-sets/")],
        "calibration-prompt-set-detail": [
            Case("API prompt set", R, f"/api/calibration/prompt-sets/{pk}/")
            for pk in _ids(PromptSet.objects, "prompt set")
        ],
        "calibration-judge-list": [Case("API judges", R, "/api/calibration/judges/")],
        "calibration-judge-detail": [
            Case("API judge", R, f"/api/calibration/judges/{pk}/") for pk in _ids(Judge.objects, "judge")
        ],
        "calibration-jury-list": [Case("API juries", R, "/api/calibration/juries/")],
        "calibration-jury-detail": [Case("API jury", R, f"/api/calibration/juries/{pk}/") for pk in juries],
        "calibration-run-list": [Case("API calibration runs", R, "/api/calibration/runs/")],
        "calibration-run-detail": [Case("API calibration run", R, f"/api/calibration/runs/{calibration.pk}/")],
        "calibration-run-report": [
            Case("API calibration report", R, f"/api/calibration/runs/{calibration.pk}/report/")
        ],
        "calibration-run-report-status": [
            Case("API calibration report state", R, f"/api/calibration/runs/{calibration.pk}/report/status/")
        ],
        "calibration-run-suggestion": [
            Case("API judge suggestion", R, f"/api/calibration/runs/{calibration.pk}/suggestion/")
        ],
        "calibration-selection-list": [Case("API judge selections", R, "/api/calibration/selections/")],
        "calibration-selection-detail": [
            Case("API judge selection", R, f"/api/calibration/selections/{pk}/")
            for pk in _ids(JudgeSelection.objects, "judge selection")
        ],
        "evaluation-api-root": [Case("API evaluation root", R, "/api/evaluation/")],
        "evaluation-run-list": [Case("API evaluation runs", R, "/api/evaluation/runs/")],
        "evaluation-run-detail": [Case("API evaluation run", R, f"/api/evaluation/runs/{evaluation.pk}/")],
        "evaluation-run-drill": [
            Case("API drill-down", R, f"/api/evaluation/runs/{evaluation.pk}/drill/?{drill}"),
            Case("API drill-down, page 2", R, f"/api/evaluation/runs/{evaluation.pk}/drill/?{drill}&page=2"),
        ],
        "evaluation-run-estimate": [
            Case("API evaluation estimate", R, f"/api/evaluation/runs/{evaluation.pk}/estimate/")
        ],
        "evaluation-run-files": [Case("API evaluation files", R, f"/api/evaluation/runs/{evaluation.pk}/files/")],
        "evaluation-run-progress": [
            Case("API evaluation progress", R, f"/api/evaluation/runs/{evaluation.pk}/progress/")
        ],
        "evaluation-run-report": [Case("API evaluation report", R, f"/api/evaluation/runs/{evaluation.pk}/report/")],
        "reply-set-list": [
            *[
                Case(f"API reply sets, page {p}", E, f"/api/reply-sets/?page={p}")
                for p in _pages(ReplySet.objects.count(), ReplySetPagination.page_size)
            ],
            Case("API reply sets, audited", E, "/api/reply-sets/?state=audited"),
        ],
        "reply-set-detail": [Case("API reply set", E, f"/api/reply-sets/{u}/") for u in reply_sets],
        "reply-detail": [Case("API reply", E, f"/api/replies/{pk}/") for pk in replies],
        "key-disagreement-list": [
            Case("API key disagreements", E, "/api/key-disagreements/"),
            Case("API key disagreements, open", E, "/api/key-disagreements/?review=open"),
        ],
        "calibration-key-validation-list": [Case("API key validations", R, "/api/calibration/key-validations/")],
        "calibration-key-validation-detail": [
            Case("API key validation", R, f"/api/calibration/key-validations/{validation.pk}/")
        ],
        "calibration-key-validation-disagreements": [
            Case(
                "API key disagreements of a validation",
                R,
                f"/api/calibration/key-validations/{validation.pk}/disagreements/",
            )
        ],
        "evaluation-contamination-list": [Case("API contamination checks", R, "/api/evaluation/contamination/")],
        "evaluation-contamination-detail": [
            Case("API contamination check", R, f"/api/evaluation/contamination/{pk}/") for pk in checks
        ],
        "release-list": [Case("API releases", R, "/api/releases/")],
        "release-detail": [Case("API release", R, f"/api/releases/{r.pk}/") for r in (frozen, draft)],
        "release-compare": [Case("API release compare", R, f"/api/releases/{draft.pk}/compare/?against={frozen.pk}")],
        "release-validation": [
            Case("API release validation", R, f"/api/releases/{r.pk}/validation/") for r in (frozen, draft)
        ],
        # The admin site's own pages (the model pages are filled by rule, below)
        "admin:index": [Case("admin index", ADMIN, "/admin/")],
        "admin:password_change": [Case("admin password change", ADMIN, "/admin/password_change/")],
        "admin:password_change_done": [Case("admin password changed", ADMIN, "/admin/password_change/done/")],
    }
    return c


def _admin_cases(keys: set[str]) -> dict[str, list[Case]]:
    """Fill the admin pages of every registered model: its first, middle and last objects and changelist pages."""
    from django.contrib import admin
    from django.contrib.auth import get_user_model
    from django.test import RequestFactory

    request = RequestFactory().get("/admin/")
    request.user = get_user_model().objects.get(username=ADMIN)
    result: dict[str, list[Case]] = {}
    labels = sorted({model._meta.app_label for model in admin.site._registry})
    result["admin:app_list"] = [Case(f"admin app {label}", ADMIN, f"/admin/{label}/") for label in labels]
    for model, model_admin in admin.site._registry.items():
        meta = model._meta
        base = f"/admin/{meta.app_label}/{meta.model_name}/"
        name = f"{meta.app_label}.{meta.model_name}"
        ids = _ids(model._default_manager.all(), f"{name} (admin)")
        count = model._default_manager.count()
        pages = _pages(count, model_admin.list_per_page)
        changelist = [Case(f"admin {name} list, page {p}", ADMIN, f"{base}?p={p}") for p in pages]
        if model_admin.search_fields:
            changelist += [Case(f"admin {name} search {q}", ADMIN, f"{base}?q={quote(q)}") for q in SEARCHES]
        prefix = f"admin:{meta.app_label}_{meta.model_name}"
        result[f"{prefix}_changelist"] = changelist
        # Read-only admins refuse adding and deleting to everyone: measured as the 403 they answer.
        refused = {"add": not model_admin.has_add_permission(request)}

        def refuses(view: str, pk: object, model: type = model, model_admin: object = model_admin) -> bool:
            if view != "delete":
                return False
            return not model_admin.has_delete_permission(request, model._default_manager.get(pk=pk))

        result[f"{prefix}_add"] = [Case(f"admin {name} add", ADMIN, f"{base}add/", refused=refused["add"])]
        for view in ("history", "delete", "change"):
            result[f"{prefix}_{view}"] = [
                Case(f"admin {name} {view}", ADMIN, f"{base}{quote(str(pk))}/{view}/", refused=refuses(view, pk))
                for pk in ids
            ]
        result[f"{base[1:]}<path:object_id>/"] = [Case(f"admin {name} redirect", ADMIN, f"{base}{quote(str(ids[0]))}/")]
        if meta.app_label == "auth" and meta.model_name == "user":
            result["admin:auth_user_password_change"] = [
                Case("admin user password", ADMIN, f"{base}{pk}/password/") for pk in ids
            ]
    return {k: v for k, v in result.items() if k in keys or k.startswith("admin:")}


def cases(only: Callable[[Case], bool] | None = None) -> tuple[int, list[Case]]:
    """Return the number of GET routes and every request of the benchmark, in resolver order.

    Raises ``Unfilled`` for a route that is neither filled nor excluded, or filled with no request.
    """
    routes = discover()
    filled = {**_app_cases(), **_admin_cases(set(routes))}
    missing = [key for key in routes if key not in filled and key not in EXCLUDED]
    empty = [key for key in routes if key in filled and not filled[key]]
    unknown = [key for key in filled if key not in routes]
    if missing or empty or unknown:
        raise Unfilled(
            "routes the benchmark cannot fill: "
            + "; ".join(
                [f"{k}: neither filled nor excluded" for k in missing]
                + [f"{k}: no request" for k in empty]
                + [f"{k}: not a route" for k in unknown]
            )
        )
    result = []
    for key in routes:
        for case in filled.get(key, []):
            case = Case(case.page, case.username, case.url, case.htmx, key, case.refused)
            if only is None or only(case):
                result.append(case)
    return sum(1 for key in routes if key not in EXCLUDED), result


def placeholder_url(route: object) -> str:
    """Return a URL of a route with each parameter filled by a placeholder (for checking POST-only routes)."""
    from django.utils.regex_helper import normalize

    fmt, names = normalize(route.regex)[0]
    numeric = {name: bool(re.search(rf"\(\?P<{name}>(\[0-9\]\+|\\d\+)\)", route.regex)) for name in names}
    return "/" + fmt % {name: "1" if numeric[name] or name == "pk" else "x" for name in names}

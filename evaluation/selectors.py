"""Reads of evaluation runs shared by pages, the API and reports: runs, their parts, the evidence behind a cell."""

from django.db.models import Prefetch, QuerySet

from annotation.items.models import Dimension, ItemRevision
from annotation.releases.models import ReleaseItem
from core.inputs import PAGE_MAX
from evaluation import ratings
from evaluation.models import Answer, EvaluationLLMRun, EvaluationRun, ModelUnderTest, OpenResponse, PairVerdict
from evaluation.progress import run_progress
from evaluation.report.facts import (
    AnswerFacts,
    ModelFacts,
    ReportFacts,
    ResponseFacts,
    RunFacts,
    VerdictFacts,
    needs_options,
)
from llm.models import Run


def evaluation_run_list() -> QuerySet[EvaluationRun]:
    """Return every evaluation run, newest first, with its release's benchmark and its judge."""
    return EvaluationRun.objects.select_related("release__benchmark", "judge").order_by("-created_at", "-id")


def evaluation_runs_with_models() -> QuerySet[EvaluationRun]:
    """Return evaluation runs with release, judge, author and models under test (with endpoints), without reports."""
    models = ModelUnderTest.objects.select_related("endpoint").order_by("code")
    return (
        EvaluationRun.objects.select_related("release__benchmark", "judge", "created_by", "budget_pool")
        .prefetch_related(Prefetch("models", queryset=models))
        .defer("report")
    )


def evaluation_run_progress(*, run: EvaluationRun) -> dict:
    """Return ``evaluation.progress.run_progress`` with the run's id and the number of its paused LLM runs."""
    paused = run.llm_runs.filter(llm_run__status=Run.Status.PAUSED).count()
    return {"id": run.pk, **run_progress(run), "paused_llm_runs": paused}


def evaluation_run_llm_runs(*, run: EvaluationRun) -> list[EvaluationLLMRun]:
    """Return the run's LLM runs with the model each one asks, in the order they were started."""
    return list(run.llm_runs.select_related("llm_run", "model").order_by("id"))


def evaluation_run_models(*, run: EvaluationRun) -> list[ModelUnderTest]:
    """Return the run's models under test with their endpoints."""
    return list(run.models.select_related("endpoint"))


# Rows of each list on one page of evidence: the API's (large, for scripts) and the drill-down page's (to read).
EVIDENCE_PAGE_API = {"answers": 500, "opens": 200, "verdicts": 500}
EVIDENCE_PAGE_HTML = {"answers": 50, "opens": 25, "verdicts": 50}


def _letter(index: int) -> str:
    return chr(ord("A") + index)


def answer_options_shown(answer: Answer) -> list[dict]:
    """Return the options of an answer in the order the model saw them: the letter it saw, the item's own letter,
    the text, and whether it is the model's choice or the key (``chosen_index`` and ``correct_index`` are the
    item's own indices; the model's raw reply uses the letters it saw)."""
    version = (answer.revision.content or {}).get(answer.language) or {}
    if "turns" in version:
        turns = version.get("turns") or []
        options = (turns[answer.turn] if answer.turn < len(turns) else {}).get("options") or []
    else:
        options = version.get("options") or []
    shown = []
    for position, original in enumerate(answer.option_order or []):
        shown.append(
            {
                "seen_as": _letter(position),
                "letter": _letter(original),
                "text": options[original] if 0 <= original < len(options) else "",
                "chosen": original == answer.chosen_index,
                "key": original == answer.correct_index,
            }
        )
    return shown


def evaluation_run_evidence(
    *,
    run: EvaluationRun,
    model: str | None = None,
    dimension: str | None = None,
    language: str | None = None,
    page: int = 1,
    sizes: dict[str, int] | None = None,
) -> dict:
    """Return one page of the answers, open responses and judge verdicts behind a cell of the report.

    Each filter (model code, dimension code, language) is optional; each list is ordered by item, and ``page`` (from
    1) holds ``sizes[list]`` rows of each (``EVIDENCE_PAGE_API`` by default). ``has_next`` says whether any list goes
    on; no list is counted.
    """
    # The item's uid and dimension are shown, not its search text or metadata; a call is linked by its id only.
    heavy = ("item__search_text", "item__metadata")
    answers = Answer.objects.filter(run=run).select_related("model", "item__dimension", "revision").defer(*heavy)
    opens = OpenResponse.objects.filter(run=run).select_related("model", "item__dimension").defer(*heavy)
    verdicts = PairVerdict.objects.filter(run=run).select_related("model_a", "model_b", "item__dimension").defer(*heavy)
    if model:
        answers, opens = answers.filter(model__code=model), opens.filter(model__code=model)
        verdicts = verdicts.filter(model_a__code=model) | verdicts.filter(model_b__code=model)
    if dimension:
        answers = answers.filter(item__dimension__code=dimension)
        opens = opens.filter(item__dimension__code=dimension)
        verdicts = verdicts.filter(item__dimension__code=dimension)
    if language:
        answers, opens, verdicts = (
            answers.filter(language=language),
            opens.filter(language=language),
            verdicts.filter(language=language),
        )
    sizes = sizes or EVIDENCE_PAGE_API
    page = min(max(1, page), PAGE_MAX)
    result: dict = {"page": page, "has_next": False}
    for name, rows in (
        # By item in the order items were created (their id: the unique indexes on run, model and item serve it
        # without sorting the cell), then language and turn.
        ("answers", answers.order_by("item_id", "language", "turn", "model__code")),
        ("opens", opens.order_by("item_id", "language", "model__code")),
        ("verdicts", verdicts.order_by("item_id", "language", "model_a__code", "model_b__code", "order")),
    ):
        size = sizes[name]
        # One row more than the page holds tells whether the list goes on, without counting it.
        found = list(rows[(page - 1) * size : page * size + 1])
        result[name] = found[:size]
        if name == "answers":
            for answer in result[name]:
                answer.shown = answer_options_shown(answer)
        result["has_next"] |= len(found) > size
    return result


def pairing_comparison(*, run: EvaluationRun, models: list[ModelUnderTest] | None = None) -> list[dict]:
    """Compare this run with finished runs of the other pairing strategy on the same release, models and languages.

    Return per language the judge calls each strategy used and Kendall's tau between their overall rankings.
    ``models``: the run's models, when the caller has read them already.
    """
    if not run.report:
        return []
    endpoints = {m.endpoint_id: m.code for m in (run.models.all() if models is None else models)}
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


def evaluation_report_facts(*, run: EvaluationRun) -> ReportFacts:
    """Read what the run's report is built from: its settings, models, answers, verdicts and usable responses."""
    models = list(run.models.order_by("code"))
    facts = RunFacts(
        name=run.name,
        release=str(run.release),
        judge=run.judge.name if run.judge_id else None,
        protocol=run.protocol,
        pairing=run.pairing,
        adaptive=EvaluationRun.Pairing(run.pairing).in_rounds,
        combine_rule=run.combine_rule,
        margin_mapping=run.margin_mapping,
        seed=run.seed,
        languages=run.languages,
        notes=run.notes,
        held_out_release=str(run.held_out_release) if run.held_out_release_id else None,
    )
    return ReportFacts(
        run=facts,
        models=[ModelFacts(code=m.code, label=m.label) for m in models],
        answers=_report_answers(run),
        verdicts=[
            VerdictFacts(
                item_id=v.item_id,
                item=v.item.uid,
                dimension=v.item.dimension.code,
                language=v.language,
                model_a=v.model_a.code,
                model_b=v.model_b.code,
                order=v.order,
                round=v.round,
                parsed=v.parsed,
                score=v.score,
            )
            for v in PairVerdict.objects.filter(run=run)
            .select_related("model_a", "model_b", "item__dimension")
            .order_by("id")
        ],
        responses=[
            ResponseFacts(model=o.model.code, item_id=o.item_id, language=o.language, text=o.text)
            for o in OpenResponse.objects.filter(run=run, ok=True).select_related("model").order_by("id")
        ],
        dimension_order=_dimension_order(run),
    )


def _dimension_order(run: EvaluationRun) -> list[str]:
    """Return the codes of the release's benchmark's dimensions in taxonomy order: each parent before its children,
    siblings by position (one query)."""
    rows = Dimension.objects.filter(benchmark__releases=run.release_id).values_list("pk", "parent_id", "code")
    children: dict[int | None, list[tuple[int, str]]] = {}
    for pk, parent, code in rows.order_by("position", "code"):
        children.setdefault(parent, []).append((pk, code))
    order: list[str] = []
    stack = list(reversed(children.get(None, [])))
    while stack:
        pk, code = stack.pop()
        order.append(code)
        stack += reversed(children.get(pk, []))
    return order


def _report_answers(run: EvaluationRun) -> list[AnswerFacts]:
    """Return the run's answers; the options of the pinned revision only where the crisis matrix reads them."""
    answers = list(Answer.objects.filter(run=run).select_related("model", "item__dimension__parent").order_by("id"))
    wanted = {
        a.pk: a.revision_id
        for a in answers
        if needs_options(crisis=bool(a.item.crisis_level_id), dimension=a.item.dimension.code, turn=a.turn)
    }
    held = set()
    if run.held_out_release_id:
        held = set(ReleaseItem.objects.filter(release_id=run.held_out_release_id).values_list("item_id", flat=True))
    revisions = set(wanted.values())
    contents = dict(ItemRevision.objects.filter(pk__in=revisions).values_list("pk", "content")) if revisions else {}
    return [
        AnswerFacts(
            model=a.model.code,
            item=a.item.uid,
            dimension=a.item.dimension.code,
            kind=a.item.kind,
            crisis=bool(a.item.crisis_level_id),
            language=a.language,
            turn=a.turn,
            option_order=a.option_order,
            correct_index=a.correct_index,
            chosen_index=a.chosen_index,
            parsed=a.parsed,
            correct=a.correct,
            options=contents[wanted[a.pk]][a.language]["options"] if a.pk in wanted else None,
            layer=a.item.dimension.parent.code if a.item.dimension.parent_id else None,
            protocol=EvaluationRun.Protocol.LETTER if a.scores is None else EvaluationRun.Protocol.LOGPROB,
            means=_option_means(a.scores) if a.item.kind == "multi_turn_choice" and a.scores is not None else None,
            held_out=a.item_id in held,
        )
        for a in answers
    ]


def _option_means(scores: dict) -> dict[int, float | None]:
    """Return each option's mean per-token log-probability by option index, from an answer's stored scores."""
    return {int(option): (score or {}).get("mean") for option, score in scores.items()}

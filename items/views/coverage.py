"""Coverage dashboard and near-duplicate clusters."""

from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _

from core.permissions import permission_required
from items import selectors
from items.content import LANGUAGES
from items.models import Benchmark, EmotionCategory, Item
from items.similarity import clusters, near_duplicates

BREAKDOWNS = ("domain", "valence", "difficulty")


def _items_url(**filters: str) -> str:
    return reverse("items:item-list") + "?" + urlencode({k: v for k, v in filters.items() if v})


def _benchmark(request: HttpRequest) -> Benchmark | None:
    slug = request.GET.get("benchmark")
    return Benchmark.objects.filter(slug=slug).first() if slug else Benchmark.objects.order_by("slug").first()


@permission_required("items.view_item")
def coverage(request: HttpRequest) -> HttpResponse:
    benchmark = _benchmark(request)
    lang = request.GET.get("lang") if request.GET.get("lang") in LANGUAGES else "en"
    breakdown = request.GET.get("by") if request.GET.get("by") in BREAKDOWNS else "domain"
    context: dict = {"benchmarks": Benchmark.objects.all(), "benchmark": benchmark, "lang": lang, "by": breakdown}
    if benchmark is None:
        return render(request, "items/coverage.html", context)
    data = selectors.coverage(benchmark=benchmark)
    if breakdown == "domain":
        columns = [(d.code, d.name) for d in data["domains"]]
    elif breakdown == "valence":
        columns = [(v, label) for v, label in EmotionCategory.Valence.choices]
    else:
        columns = [(v, label) for v, label in Item.Difficulty.choices] + [("none", _("not set"))]
    rows, totals = [], {"en": [0, 0, 0], "zh": [0, 0, 0]}
    for dim in data["dimensions"]:
        counts = data["table"][dim.pk]
        per_lang = []
        for language in LANGUAGES:
            accepted = counts["lang"][language]["accepted"]
            candidate = counts["lang"][language]["candidate"]
            target = dim.target_items
            per_lang.append(
                {
                    "accepted": accepted,
                    "candidate": candidate,
                    "target": target,
                    "gap": max(target - accepted, 0) if target else None,
                    "url": _items_url(benchmark=benchmark.slug, dimension=dim.code, status="accepted", lang=language),
                    "candidate_url": _items_url(
                        benchmark=benchmark.slug, dimension=dim.code, status="candidate", lang=language
                    ),
                }
            )
            totals[language][0] += accepted
            totals[language][1] += candidate
            totals[language][2] += target or 0
        cells = []
        for code, _label in columns:
            cell = counts[breakdown][(lang, code)]
            cells.append(
                {
                    **cell,
                    "url": _items_url(
                        benchmark=benchmark.slug, dimension=dim.code, status="accepted", lang=lang, **{breakdown: code}
                    ),
                }
            )
        rows.append({"dimension": dim, "languages": per_lang, "cells": cells})
    context.update({"rows": rows, "columns": columns, "totals": totals, "languages": LANGUAGES})
    return render(request, "items/coverage.html", context)


@permission_required("items.view_item")
def near_duplicate_clusters(request: HttpRequest) -> HttpResponse:
    benchmark = _benchmark(request)
    lang = request.GET.get("lang") if request.GET.get("lang") in LANGUAGES else "en"
    try:
        threshold = float(request.GET.get("threshold", settings.NEAR_DUPLICATE_THRESHOLD))
    except ValueError:
        threshold = settings.NEAR_DUPLICATE_THRESHOLD
    threshold = min(max(threshold, 0.1), 1.0)
    groups, pairs = [], []
    if benchmark is not None:
        pairs = near_duplicates(selectors.benchmark_texts(benchmark=benchmark, lang=lang), threshold=threshold)
        scores = {}
        for p in pairs:
            scores[p.a] = max(scores.get(p.a, 0), p.score)
            scores[p.b] = max(scores.get(p.b, 0), p.score)
        groups = [[(uid, scores[uid]) for uid in group] for group in clusters(pairs)]
    return render(
        request,
        "items/near_duplicates.html",
        {
            "benchmarks": Benchmark.objects.all(),
            "benchmark": benchmark,
            "lang": lang,
            "threshold": threshold,
            "groups": groups,
            "pair_count": len(pairs),
        },
    )

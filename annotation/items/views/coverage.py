"""Coverage dashboard and near-duplicate clusters."""

import math
from urllib.parse import urlencode

from django.conf import settings
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django_htmx.http import HttpResponseClientRefresh

from annotation.items import near_duplicates, selectors
from annotation.items.content import LANGUAGES
from annotation.items.lsh import LOWEST_THRESHOLD
from annotation.items.models import Benchmark, EmotionCategory, Item
from core.permissions import permission_required

BREAKDOWNS = ("domain", "valence", "difficulty")
CLUSTERS_PER_PAGE = 50


def _items_url(**filters: str) -> str:
    return reverse("items:item-list") + "?" + urlencode({k: v for k, v in filters.items() if v})


@permission_required("items.view_item")
def coverage(request: HttpRequest) -> HttpResponse:
    benchmarks = list(Benchmark.objects.order_by("slug"))
    slug = request.GET.get("benchmark")
    benchmark = next((b for b in benchmarks if b.slug == slug), None) if slug else next(iter(benchmarks), None)
    lang = request.GET.get("lang") if request.GET.get("lang") in LANGUAGES else "en"
    breakdown = request.GET.get("by") if request.GET.get("by") in BREAKDOWNS else "domain"
    context: dict = {"benchmarks": benchmarks, "benchmark": benchmark, "lang": lang, "by": breakdown}
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
    """List a benchmark's near-duplicate clusters in one language, largest first, a page at a time, as a worker
    stored them (``annotation.items.near_duplicates``); ``part=state`` is the poll while it computes them."""
    # The benchmarks are read once, for the choice and the chosen one (as the coverage page does).
    benchmarks = list(Benchmark.objects.all())
    slug = request.GET.get("benchmark")
    if slug:
        benchmark = next((b for b in benchmarks if b.slug == slug), None)
    else:
        benchmark = min(benchmarks, key=lambda b: b.slug, default=None)
    lang = request.GET.get("lang") if request.GET.get("lang") in LANGUAGES else "en"
    try:
        threshold = float(request.GET.get("threshold", settings.NEAR_DUPLICATE_THRESHOLD))
    except ValueError:
        threshold = settings.NEAR_DUPLICATE_THRESHOLD
    if not math.isfinite(threshold):
        threshold = settings.NEAR_DUPLICATE_THRESHOLD
    # Below the lowest threshold the index is tuned for, pairs would be missed without a word: refuse to go there.
    # Two decimals, as the form offers it and the reports are stored.
    rounded = near_duplicates.threshold_rounded(threshold)
    stored = None
    if benchmark is not None:
        stored = near_duplicates.clusters_stored(benchmark=benchmark, language=lang, threshold=rounded)
    report = stored.report if stored else None
    query = {"benchmark": benchmark.slug if benchmark else "", "lang": lang, "threshold": rounded}
    context = {
        "stored": stored,
        "report": report,
        "query": urlencode({k: v for k, v in query.items() if v != ""}),
    }
    if request.htmx and request.GET.get("part") == "state":
        if stored is None or stored.current:
            return HttpResponseClientRefresh()  # computed: the clusters change, so the page loads again
        return render(request, "items/near_duplicates.html#compute_state", context)
    page = Paginator(stored.stored if stored else [], CLUSTERS_PER_PAGE).get_page(request.GET.get("page"))
    context.update(
        {
            "benchmarks": benchmarks,
            "benchmark": benchmark,
            "lang": lang,
            "threshold": float(rounded),
            "lowest_threshold": LOWEST_THRESHOLD,
            "page": page,
            "groups": page.object_list,
            "pair_count": report.pairs if report else 0,
        }
    )
    return render(request, "items/near_duplicates.html", context)

"""Loading taxonomy documents: benchmarks, dimensions, emotions, scenarios, crisis levels."""

import itertools
import json
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings
from django.db import transaction

from annotation.items.models import Benchmark, CrisisLevel, Dimension, EmotionCategory, Scenario, ScenarioDomain

FIXTURES = Path(settings.BASE_DIR) / "fixtures"


@transaction.atomic
def taxonomy_load(*, data: dict) -> dict[str, int]:
    """Create or update taxonomy rows from a taxonomy document; return how many rows of each kind it holds.

    Rows are matched by code, so loading the same document twice changes nothing.
    """
    counts = {"benchmarks": 0, "dimensions": 0, "emotions": 0, "domains": 0, "scenarios": 0, "crisis_levels": 0}
    for bench in data.get("benchmarks", []):
        benchmark, _created = Benchmark.objects.update_or_create(
            slug=bench["slug"],
            defaults={k: bench.get(k, "") for k in ("name_en", "name_zh", "description_en", "description_zh")},
        )
        counts["benchmarks"] += 1
        counts["dimensions"] += _dimensions_load(bench.get("dimensions", []), benchmark, None, itertools.count(1))
    counts["emotions"] = _emotions_load(data.get("emotion_categories", []))
    counts["domains"], counts["scenarios"] = _scenarios_load(data.get("scenario_domains", []))
    for level in data.get("crisis_levels", []):
        CrisisLevel.objects.update_or_create(
            level=level["level"],
            defaults={k: level[k] for k in ("name_en", "name_zh", "definition_en", "definition_zh")},
        )
        counts["crisis_levels"] += 1
    return counts


def _dimensions_load(
    nodes: list[dict], benchmark: Benchmark, parent: Dimension | None, positions: Iterator[int]
) -> int:
    """Create or update a benchmark's dimension tree, numbered in document order; return how many it holds."""
    count = 0
    for node in nodes:
        dimension, _created = Dimension.objects.update_or_create(
            benchmark=benchmark,
            code=node["code"],
            defaults={
                "parent": parent,
                "level": node["level"],
                "name_en": node["name_en"],
                "name_zh": node["name_zh"],
                "subjective": bool(node.get("subjective", False)),
                "provisional": bool(node.get("provisional", False)),
                "target_items": node.get("target_items"),
                "definition_en": node.get("definition_en", ""),
                "definition_zh": node.get("definition_zh", ""),
                "position": next(positions),
            },
        )
        dimension.full_clean()
        count += 1 + _dimensions_load(node.get("children", []), benchmark, dimension, positions)
    return count


def _emotions_load(emotions: list[dict]) -> int:
    """Create or update the emotion categories in document order; return how many."""
    for position, emotion in enumerate(emotions, start=1):
        EmotionCategory.objects.update_or_create(
            code=emotion["code"],
            defaults={
                "name_en": emotion["name_en"],
                "name_zh": emotion["name_zh"],
                "valence": emotion["valence"],
                "position": position,
            },
        )
    return len(emotions)


def _scenarios_load(domains: list[dict]) -> tuple[int, int]:
    """Create or update the scenario domains and their scenarios in document order; return how many of each."""
    scenarios = 0
    for d_position, domain_data in enumerate(domains, start=1):
        domain, _created = ScenarioDomain.objects.update_or_create(
            code=domain_data["code"],
            defaults={"name_en": domain_data["name_en"], "name_zh": domain_data["name_zh"], "position": d_position},
        )
        for position, scenario in enumerate(domain_data.get("scenarios", []), start=1):
            Scenario.objects.update_or_create(
                code=scenario["code"],
                defaults={
                    "domain": domain,
                    "name_en": scenario["name_en"],
                    "name_zh": scenario["name_zh"],
                    "position": position,
                },
            )
            scenarios += 1
    return len(domains), scenarios


def taxonomy_load_fixture(name: str = "taxonomy.json") -> dict[str, int]:
    """Load a taxonomy document from ``fixtures/``."""
    return taxonomy_load(data=json.loads((FIXTURES / name).read_text(encoding="utf-8")))

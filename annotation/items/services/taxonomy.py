"""Loading taxonomy documents: benchmarks, dimensions, emotions, scenarios, crisis levels."""

import json
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
        position = 0

        def load_dimensions(nodes: list[dict], parent: Dimension | None, benchmark: Benchmark = benchmark) -> None:
            nonlocal position
            for node in nodes:
                position += 1
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
                        "position": position,
                    },
                )
                dimension.full_clean()
                counts["dimensions"] += 1
                load_dimensions(node.get("children", []), dimension)

        load_dimensions(bench.get("dimensions", []), None)
    for position, emotion in enumerate(data.get("emotion_categories", []), start=1):
        EmotionCategory.objects.update_or_create(
            code=emotion["code"],
            defaults={
                "name_en": emotion["name_en"],
                "name_zh": emotion["name_zh"],
                "valence": emotion["valence"],
                "position": position,
            },
        )
        counts["emotions"] += 1
    for d_position, domain_data in enumerate(data.get("scenario_domains", []), start=1):
        domain, _created = ScenarioDomain.objects.update_or_create(
            code=domain_data["code"],
            defaults={"name_en": domain_data["name_en"], "name_zh": domain_data["name_zh"], "position": d_position},
        )
        counts["domains"] += 1
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
            counts["scenarios"] += 1
    for level in data.get("crisis_levels", []):
        CrisisLevel.objects.update_or_create(
            level=level["level"],
            defaults={k: level[k] for k in ("name_en", "name_zh", "definition_en", "definition_zh")},
        )
        counts["crisis_levels"] += 1
    return counts


def taxonomy_load_fixture(name: str = "taxonomy.json") -> dict[str, int]:
    """Load a taxonomy document from ``fixtures/``."""
    return taxonomy_load(data=json.loads((FIXTURES / name).read_text(encoding="utf-8")))

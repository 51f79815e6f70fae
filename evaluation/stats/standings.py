"""Standing across models: z-scores, ΔZ = Z(subjective) - Z(objective) per language and the ΔZ typology."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from evaluation.stats._common import _Serialisable

Typology = Literal["cognition-dominant", "interaction-dominant", "context-dependent", "balanced"]


@dataclass(frozen=True)
class ZScores(_Serialisable):
    """Standard scores ``(x - mean) / sd`` across models; None with a reason when the spread is zero."""

    values: dict[str, float | None]
    mean: float | None
    sd: float | None
    ddof: int
    undefined_reason: str | None = None


def z_scores(values: Mapping[str, float], *, ddof: int = 0) -> ZScores:
    """Standardise one score per model across models (``ddof=0``: population sd, as ``scipy.stats.zscore``)."""
    names = list(values)
    array = np.asarray([values[name] for name in names], dtype=float)
    if not np.all(np.isfinite(array)):
        raise ValueError("scores must be finite numbers")
    if len(array) <= ddof or len(array) < 2:
        return ZScores(dict.fromkeys(names), None, None, ddof, "needs at least two models")
    mean = float(array.mean())
    sd = float(array.std(ddof=ddof))
    if sd <= 1e-12 * max(1.0, abs(mean)):
        return ZScores(dict.fromkeys(names), mean, sd, ddof, "every model has the same score")
    return ZScores(dict(zip(names, ((array - mean) / sd).tolist(), strict=True)), mean, sd, ddof)


@dataclass(frozen=True)
class ModelGap(_Serialisable):
    """One model's z-scores and ΔZ per language and its typology."""

    model: str
    z_objective: dict[str, float | None]
    z_subjective: dict[str, float | None]
    delta_z: dict[str, float | None]
    typology: Typology | None
    undefined_reason: str | None = None


@dataclass(frozen=True)
class DeltaZResult(_Serialisable):
    """ΔZ = Z(subjective) - Z(objective) per model and language, with the typology and its settings."""

    models: list[ModelGap]
    languages: list[str]
    dead_band: float
    ddof: int
    notes: dict[str, str]


def typology(delta_by_language: Sequence[float], *, dead_band: float = 0.0) -> Typology:
    """Classify a model from its ΔZ in each language (two or more languages).

    Each ΔZ is negative if below ``-dead_band``, positive if above ``+dead_band``, neutral otherwise.
    Negative everywhere: cognition-dominant; positive everywhere: interaction-dominant; neutral everywhere:
    balanced (only possible with a dead band, or ΔZ exactly 0); any other mix: context-dependent.
    """
    if len(delta_by_language) < 2:
        raise ValueError("the typology compares at least two languages")
    if dead_band < 0:
        raise ValueError("dead_band cannot be negative")
    signs = {(-1 if delta < -dead_band else 1 if delta > dead_band else 0) for delta in delta_by_language}
    if signs == {-1}:
        return "cognition-dominant"
    if signs == {1}:
        return "interaction-dominant"
    if signs == {0}:
        return "balanced"
    return "context-dependent"


def delta_z(
    objective: Mapping[str, Mapping[str, float]],
    subjective: Mapping[str, Mapping[str, float]],
    *,
    dead_band: float = 0.0,
    ddof: int = 0,
) -> DeltaZResult:
    """Compare objective and subjective standing: ``ΔZ = Z(subjective) - Z(objective)`` per language.

    ``objective[language][model]`` is an accuracy, ``subjective[language][model]`` a rating. In each language
    both z-scores are taken across the same models: those with both scores there. The typology needs a ΔZ in
    at least two languages.
    """
    languages = [language for language in objective if language in subjective]
    notes: dict[str, str] = {}
    per_language: dict[str, tuple[ZScores, ZScores]] = {}
    for language in languages:
        per_language[language] = _language_z_scores(objective[language], subjective[language], ddof=ddof)
        for label, result in zip(("objective", "subjective"), per_language[language], strict=True):
            if result.undefined_reason:
                notes[f"{language} {label}"] = result.undefined_reason
    models = sorted({model for language in languages for model in per_language[language][0].values})
    gaps = [_model_gap(model, per_language, dead_band=dead_band) for model in models]
    return DeltaZResult(gaps, languages, dead_band, ddof, notes)


def _language_z_scores(
    objective: Mapping[str, float], subjective: Mapping[str, float], *, ddof: int
) -> tuple[ZScores, ZScores]:
    """Return both z-scores in one language, across the models with both scores there."""
    shared = [model for model in objective if model in subjective]
    return (
        z_scores({model: objective[model] for model in shared}, ddof=ddof),
        z_scores({model: subjective[model] for model in shared}, ddof=ddof),
    )


def _model_gap(model: str, per_language: dict[str, tuple[ZScores, ZScores]], *, dead_band: float) -> ModelGap:
    """Return one model's ΔZ per language, and its typology if it has one in every language (two at least)."""
    languages = list(per_language)
    z_obj = {lang: per_language[lang][0].values.get(model) for lang in languages}
    z_subj = {lang: per_language[lang][1].values.get(model) for lang in languages}
    deltas = {
        lang: (z_subj[lang] - z_obj[lang]) if z_subj[lang] is not None and z_obj[lang] is not None else None
        for lang in languages
    }
    defined = [delta for delta in deltas.values() if delta is not None]
    if len(defined) == len(languages) >= 2:
        return ModelGap(model, z_obj, z_subj, deltas, typology(defined, dead_band=dead_band))
    missing = [lang for lang, delta in deltas.items() if delta is None]
    reason = f"no ΔZ in {', '.join(missing)}" if missing else "the typology needs ΔZ in at least two languages"
    return ModelGap(model, z_obj, z_subj, deltas, None, reason)

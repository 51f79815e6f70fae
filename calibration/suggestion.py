"""The rule that suggests a calibration run's primary judge from its report's overall stratum, with its reasoning.

Pure: ``calibration.report`` applies it when it builds the report, ``calibration.selectors.judge_rule_exclusion``
when a user picks a judge the rule excluded.
"""

import numpy as np


def significantly_worse(estimate: dict, base: float | None) -> bool:
    """Whether the interval of alpha with a judge added lies wholly below the experts' own alpha ``base``."""
    high = estimate.get("ci_high")
    return base is not None and high is not None and high < base


def excluded(estimate: dict, base: float | None) -> bool:
    """Whether the rule excludes a judge: its alpha with the experts is undefined, or significantly worse."""
    return estimate["value"] is None or significantly_worse(estimate, base)


def suggest(overall: dict) -> dict:
    """Suggest the primary judge by an explicit rule, with the reasoning spelled out.

    Rule: among judges not significantly worse than the expert baseline (the upper bound of the interval of alpha
    with the judge added reaches the experts' own alpha), choose the highest lower bound of that interval.
    """
    base = overall["baseline"]["alpha_ordinal"]["value"]
    reasoning, eligible = [], []
    if base is None:
        reasoning.append(
            f"The experts' own alpha is undefined: {overall['baseline']['alpha_ordinal']['undefined_reason']}"
        )
    for name, row in sorted(overall["judges"].items()):
        estimate = row["alpha_with_judge"]
        if estimate["value"] is None:
            reasoning.append(f"{name}: alpha with the judge is undefined ({estimate['undefined_reason']}).")
            continue
        low, high = estimate["ci_low"], estimate["ci_high"]
        worse = significantly_worse(estimate, base)
        reasoning.append(
            f"{name}: alpha with judge {estimate['value']:.3f} [{_fmt(low)}, {_fmt(high)}] vs experts "
            f"{_fmt(base)}: {'significantly worse, excluded' if worse else 'not significantly worse'}."
        )
        if not worse:
            eligible.append((low if low is not None else -np.inf, name))
    if not eligible:
        return {"judge": None, "rule": suggest.__doc__.split("\n\n")[1].strip(), "reasoning": reasoning}
    best = max(eligible)
    reasoning.append(f"Highest lower bound: {best[1]} ({_fmt(best[0])}).")
    return {"judge": best[1], "rule": suggest.__doc__.split("\n\n")[1].strip(), "reasoning": reasoning}


def _fmt(value: float | None) -> str:
    return "—" if value is None or not np.isfinite(value) else f"{value:.3f}"

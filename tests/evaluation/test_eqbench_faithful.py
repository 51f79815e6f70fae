"""EQ-Bench 3 replayed as its solver was at the data's commit (8c3a125), next to our order-independent mode.

At that commit a solve gives one pseudo-game per matchup (bin size 1) and makes one TrueSkill pass over the
matchups in file order, from the prior; the published ratings were written by the canonical re-solve
(``merge_results_to_canonical.py``), which also leaves out pairs more than 8 places apart on the ladder the
canonical ratings had before it. See docs/statistics.md.
"""

import json
from pathlib import Path

import numpy as np
import pytest
import trueskill
from scipy import stats as scipy_stats

from evaluation import eqbench, ratings
from evaluation.ratings import EqBenchJudgement

EQBENCH3 = Path(__file__).resolve().parents[2].parent / "shared/data/external/eqbench3"
needs_eqbench3 = pytest.mark.skipif(
    not (EQBENCH3 / "pairwise_comparisons_compact.jsonl").exists(),
    reason=f"EQ-Bench 3 data not found at {EQBENCH3}",
)


def judgement(test: str, other: str, plus_test: int, plus_other: int, scenario: str = "1") -> EqBenchJudgement:
    return EqBenchJudgement(scenario, "1", test, other, True, plus_test, plus_other)


# Both orders of a matchup are summed: (alpha 9, beta 3) is one alpha win however large; gamma-beta is a draw.
CALLS = [
    judgement("alpha", "beta", 5, 1),
    judgement("beta", "alpha", 2, 4),
    judgement("gamma", "beta", 3, 3),
    judgement("gamma", "alpha", 0, 7, scenario="2"),
    judgement("beta", "gamma", 6, 0, scenario="2"),
    judgement("alpha", "gamma", 1, 2, scenario="3"),
]


def replay_with_the_trueskill_package(calls: list[EqBenchJudgement]) -> dict[str, trueskill.Rating]:
    """Replay EQ-Bench's solver with the ``trueskill`` package: matchups in order of first call, bin size 1.

    The package's default backend, as EQ-Bench used it (with SciPy's, a draw at ``draw_probability=0`` raises).
    """
    env = trueskill.TrueSkill(mu=1200, sigma=350 / 3, beta=350 / 6, tau=0, draw_probability=0)
    totals: dict[tuple[str, str, str], list[int]] = {}
    for call in calls:
        first, second = sorted((call.test_model, call.neighbor_model))
        plus = totals.setdefault((first, second, call.scenario_id), [0, 0])
        mine, theirs = (0, 1) if call.test_model == first else (1, 0)
        plus[mine] += call.plus_for_test
        plus[theirs] += call.plus_for_other
    players = {name: env.create_rating() for call in calls for name in (call.test_model, call.neighbor_model)}
    for (first, second, _), (plus_first, plus_second) in totals.items():
        if plus_first == plus_second:
            players[first], players[second] = trueskill.rate_1vs1(players[first], players[second], drawn=True, env=env)
        elif plus_first > plus_second:
            players[first], players[second] = trueskill.rate_1vs1(players[first], players[second], env=env)
        else:
            players[second], players[first] = trueskill.rate_1vs1(players[second], players[first], env=env)
    return players


def test_the_faithful_mode_is_one_pass_of_single_games_in_file_order():
    result = ratings.eqbench3_rate(CALLS, mode="faithful").by_model()
    expected = replay_with_the_trueskill_package(CALLS)
    assert sorted(result) == sorted(expected)
    for name, rating in expected.items():
        assert result[name].mu == pytest.approx(rating.mu, rel=1e-6)
        assert result[name].sigma == pytest.approx(rating.sigma, rel=1e-6)
        assert result[name].pass_sigma == result[name].sigma
    reversed_calls = CALLS[::-1]
    assert ratings.eqbench3_rate(reversed_calls, mode="faithful").by_model()["alpha"].mu == pytest.approx(
        replay_with_the_trueskill_package(reversed_calls)["alpha"].mu, rel=1e-6
    )


def test_the_default_mode_does_not_depend_on_the_file_order_and_the_faithful_mode_does():
    assert ratings.eqbench3_rate(CALLS) == ratings.eqbench3_rate(CALLS[::-1])
    faithful = ratings.eqbench3_rate(CALLS, mode="faithful").by_model()
    assert faithful != ratings.eqbench3_rate(CALLS[::-1], mode="faithful").by_model()


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="unknown EQ-Bench 3 mode 'exact'"):
        ratings.eqbench3_rate(CALLS, mode="exact")


@pytest.fixture(scope="module")
def eqbench3_data() -> tuple[dict, list[EqBenchJudgement]]:
    with (EQBENCH3 / "published_ratings_2025-04-28.json").open(encoding="utf-8") as handle:
        published = json.load(handle)["ratings"]
    return published, eqbench.eqbench3_load(EQBENCH3 / "pairwise_comparisons_compact.jsonl")


def fit(result: ratings.Ratings, published: dict) -> dict[str, float]:
    """Compare with the published file: rank agreement, normalised and raw differences, sigma, offset of mu."""
    ours = result.by_model()
    names = sorted(published)
    assert sorted(ours) == names
    mine = np.array([ours[name].display for name in names])
    theirs = np.array([published[name]["elo_norm"] for name in names])
    mu = np.array([ours[name].mu for name in names])
    published_mu = np.array([published[name]["elo"] for name in names])
    sigma = np.array([ours[name].pass_sigma for name in names])
    return {
        "spearman": scipy_stats.spearmanr(mine, theirs).statistic,
        "kendall": scipy_stats.kendalltau(mine, theirs).statistic,
        "max_norm": float(np.max(np.abs(mine - theirs))),
        "max_mu": float(np.max(np.abs(mu - published_mu))),
        "max_sigma": float(np.max(np.abs(sigma - np.array([published[name]["sigma"] for name in names])))),
        "offset": float(published_mu.mean() - mu.mean()),
    }


@needs_eqbench3
def test_the_final_solve_at_the_data_commit_halves_the_offset_and_tightens_the_fit(eqbench3_data):
    published, judgements = eqbench3_data
    ladder = sorted(published, key=lambda name: published[name]["elo"])
    default = fit(ratings.eqbench3_rate(judgements, ladder=ladder), published)
    faithful = fit(ratings.eqbench3_rate(judgements, mode="faithful"), published)
    assert default["offset"] == pytest.approx(111.1, abs=1.0) and default["max_norm"] == pytest.approx(46.6, abs=0.1)
    assert faithful["offset"] == pytest.approx(57.6, abs=0.1) and faithful["max_norm"] == pytest.approx(34.7, abs=0.1)
    assert faithful["spearman"] >= 0.999 and faithful["kendall"] >= 0.99
    assert faithful["max_sigma"] <= 1.5


@needs_eqbench3
def test_the_canonical_re_solve_reproduces_the_published_ratings_given_its_ladder(eqbench3_data):
    """The re-solve leaves out pairs more than 8 places apart on the ladder of the ratings before it.

    That ladder is not in the files. The published one leaves out 45 matchups of claude-3.5-sonnet with
    gemini-2.0-flash-001 (9 places apart) and stays 10.6 mu off. The published ladder with grok-3-mini-beta, the
    last model in the file, three places lower (just below gemini-2.0-flash-001) keeps them and reproduces every
    published mu to 0.3 and every sigma to 0.02.
    """
    published, judgements = eqbench3_data
    ladder = sorted(published, key=lambda name: published[name]["elo"])
    on_published_ladder = fit(ratings.eqbench3_rate(judgements, mode="faithful", ladder=ladder), published)
    assert on_published_ladder["max_norm"] <= 17 and abs(on_published_ladder["offset"]) <= 11
    solve_time_ladder = [name for name in ladder if name != "grok-3-mini-beta"]
    solve_time_ladder.insert(solve_time_ladder.index("google/gemini-2.0-flash-001"), "grok-3-mini-beta")
    replayed = fit(ratings.eqbench3_rate(judgements, mode="faithful", ladder=solve_time_ladder), published)
    assert replayed["max_mu"] <= 0.3 and abs(replayed["offset"]) <= 0.05
    assert replayed["max_norm"] <= 0.6 and replayed["max_sigma"] <= 0.02

"""Bradley-Terry maximum likelihood against published fits, closed forms and an independent algorithm (no database).

References: Agresti (2002), Categorical Data Analysis, 2nd ed., Table 10.11 (1987 American League baseball, the
values BradleyTerry2's own tests pin); Stigler's (1994) journal citations as fitted in Agresti p. 448 and Turner &
Firth (2012); Hunter's (2004) MM algorithm, written here independently of the Newton optimiser under test.
"""

import json
import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from evaluation import ratings
from evaluation.ratings.bradley_terry import _percentile, _resample_strengths

# Agresti (2002), Table 10.10: wins of the row team over the column team, 13 games per pair, 1987 AL East.
BASEBALL_TEAMS = ["Milwaukee", "Detroit", "Toronto", "New York", "Boston", "Cleveland", "Baltimore"]
BASEBALL_WINS = np.array(
    [
        [0, 7, 9, 7, 7, 9, 11],
        [6, 0, 7, 5, 11, 9, 9],
        [4, 6, 0, 7, 7, 8, 12],
        [6, 8, 6, 0, 6, 7, 10],
        [6, 2, 6, 7, 0, 7, 12],
        [4, 4, 5, 6, 6, 0, 6],
        [2, 4, 1, 3, 1, 7, 0],
    ],
    dtype=float,
)
# Agresti (2002), Table 10.11: log-strengths with Baltimore = 0.
BASEBALL_PUBLISHED = [1.58, 1.44, 1.29, 1.25, 1.11, 0.68, 0.0]

# Stigler (1994) via Agresti (2002) p. 448 / BradleyTerry2's ``citations``: times the row journal was cited by the
# column journal; a citation is a win for the cited journal. Published log-abilities, Biometrika = 0.
JOURNALS = ["Biometrika", "Comm Statist", "JASA", "JRSS-B"]
CITATIONS = np.array([[714, 730, 498, 221], [33, 425, 68, 17], [320, 813, 1072, 142], [284, 276, 325, 188]], float)
CITATIONS_PUBLISHED = [0.0, -2.9491, -0.4796, 0.2690]


def verdicts_from_wins(names: list[str], wins: np.ndarray) -> list[ratings.Verdict]:
    verdicts = []
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i != j:
                verdicts += [ratings.Verdict(a, b, 1.0)] * int(wins[i, j])
    return verdicts


def hunter_mm(wins: np.ndarray, iterations: int = 100_000) -> np.ndarray:
    """Return log-strengths (mean zero) by Hunter's (2004) MM iteration: gamma_i = W_i / sum_j N_ij/(g_i + g_j)."""
    games = wins + wins.T
    won = wins.sum(axis=1)
    gamma = np.ones(len(wins))
    for _ in range(iterations):
        updated = won / (games / (gamma[:, None] + gamma[None, :])).sum(axis=1)
        updated /= updated.sum()
        if np.max(np.abs(np.log(updated) - np.log(gamma))) < 1e-14:
            break
        gamma = updated
    theta = np.log(updated)
    return theta - theta.mean()


def test_strengths_reproduce_agrestis_baseball_table():
    result = ratings.bradley_terry(verdicts_from_wins(BASEBALL_TEAMS, BASEBALL_WINS), n_resamples=0)
    strengths = result.scores()
    relative = [strengths[team] - strengths["Baltimore"] for team in BASEBALL_TEAMS]
    assert relative == pytest.approx(BASEBALL_PUBLISHED, abs=5e-3)
    assert result.ranking() == BASEBALL_TEAMS
    assert sum(strengths.values()) == pytest.approx(0, abs=1e-12)
    # Agresti: the standard errors relative to Baltimore are all about 0.3 (BradleyTerry2 checks them rounded).
    # This checks the observed information the Newton steps use.
    theta, _ = ratings.fit_strengths(BASEBALL_WINS)
    played = BASEBALL_WINS + BASEBALL_WINS.T
    p = 1 / (1 + np.exp(-(theta[:, None] - theta[None, :])))
    information = np.diag((played * p * p.T).sum(axis=1)) - played * p * p.T
    standard_errors = np.sqrt(np.diag(np.linalg.inv(information[:-1, :-1])))
    assert np.round(standard_errors, 1).tolist() == [0.3] * 6


def test_strengths_reproduce_the_published_journal_citation_fit():
    names, wins = JOURNALS, CITATIONS.copy()
    np.fill_diagonal(wins, 0)
    theta, _ = ratings.fit_strengths(wins)
    assert (theta - theta[0]).tolist() == pytest.approx(CITATIONS_PUBLISHED, abs=5e-5)
    assert names[int(np.argmax(theta))] == "JRSS-B"


def test_two_models_have_the_closed_form_log_odds_with_a_tie_as_half_a_win_each_way():
    # A beats B twice, loses once, ties once: A has 2.5 wins, B 1.5; the MLE difference is ln(2.5 / 1.5).
    verdicts = [("a", "b", 3), ("a", "b", 1), ("b", "a", 2), ("a", "b", 0)]
    result = ratings.bradley_terry(verdicts, n_resamples=0)
    by_model = result.by_model()
    assert by_model["a"].strength - by_model["b"].strength == pytest.approx(math.log(2.5 / 1.5), abs=1e-12)
    assert by_model["a"].strength == pytest.approx(-by_model["b"].strength)
    assert (by_model["a"].wins, by_model["b"].wins) == (2.5, 1.5)
    assert by_model["a"].elo - by_model["b"].elo == pytest.approx(400 / math.log(10) * math.log(5 / 3))
    # The margin's size does not matter, only its sign.
    assert ratings.bradley_terry(
        [("a", "b", 1), ("a", "b", 1), ("b", "a", 1), ("a", "b", 0)], n_resamples=0
    ).scores() == (pytest.approx(result.scores(), abs=1e-12))


def test_newton_optimiser_agrees_with_hunters_mm_algorithm_on_random_tournaments():
    rng = np.random.default_rng(5)
    for n_models in (3, 8, 20):
        skill = rng.normal(0, 1.5, n_models)
        wins = np.zeros((n_models, n_models))
        for _ in range(40 * n_models):
            i, j = rng.choice(n_models, size=2, replace=False)
            u = rng.random()
            p = 1 / (1 + math.exp(skill[j] - skill[i]))
            if u < 0.1:  # a tie
                wins[i, j] += 0.5
                wins[j, i] += 0.5
            elif u < 0.1 + 0.9 * p:
                wins[i, j] += 1
            else:
                wins[j, i] += 1
        assert ratings.mle_missing_reason(wins, [str(k) for k in range(n_models)]) is None
        theta, iterations = ratings.fit_strengths(wins)
        assert theta == pytest.approx(hunter_mm(wins), abs=1e-8)
        assert iterations < 20


def test_missing_maximum_likelihood_is_reported_and_virtual_draws_make_it_finite():
    verdicts = [("a", "b", 1), ("b", "c", 1), ("c", "a", 1), ("a", "d", 1), ("b", "d", 2)]
    result = ratings.bradley_terry(verdicts, n_resamples=10)
    assert result.undefined_reason is not None and "d never beat or tied" in result.undefined_reason
    assert all(r.strength is None for r in result.ratings) and result.ranking() == []
    assert result.by_model()["d"].n_verdicts == 2
    regularised = ratings.bradley_terry(verdicts, n_resamples=20, virtual_draws=1)
    assert regularised.undefined_reason is None
    assert regularised.ranking()[-1] == "d" and all(math.isfinite(r.strength) for r in regularised.ratings)
    assert regularised.n_resamples_without_mle == 0
    apart = ratings.bradley_terry([("a", "b", 1), ("b", "a", 1), ("c", "d", 1), ("d", "c", 1)], n_resamples=0)
    assert "never compared" in apart.undefined_reason
    assert ratings.bradley_terry([], n_resamples=0).undefined_reason == "fewer than two models have verdicts"


def test_virtual_draws_shrink_towards_the_virtual_opponent_with_the_closed_form():
    # One win of a over b and v draws each against a virtual opponent at 0: by symmetry theta_a = -theta_b = t
    # with  sigma(-2t) + v (1/2 - sigma(t)) = 0.
    v = 2.0
    result = ratings.bradley_terry([("a", "b", 1)], virtual_draws=v, n_resamples=0)
    t = result.by_model()["a"].strength

    def equation(x: float) -> float:
        return 1 / (1 + math.exp(2 * x)) + v * (0.5 - 1 / (1 + math.exp(-x)))

    assert equation(t) == pytest.approx(0, abs=1e-10)
    assert result.by_model()["b"].strength == pytest.approx(-t)


def test_models_without_verdicts_are_listed_without_a_strength():
    result = ratings.bradley_terry([("a", "b", 1), ("b", "a", 1)], models=["z"], n_resamples=5)
    z = result.by_model()["z"]
    assert (z.strength, z.rank, z.n_verdicts) == (None, None, 0)
    assert result.ratings[-1].model == "z"


def test_bootstrap_is_seeded_and_independent_of_verdict_order_and_orientation():
    rng = np.random.default_rng(3)
    models = [f"m{i}" for i in range(6)]
    verdicts = []
    for _ in range(300):
        a, b = rng.choice(models, size=2, replace=False)
        verdicts.append((str(a), str(b), float(rng.choice([-2, -1, 0, 1, 3]))))
    result = ratings.bradley_terry(verdicts, n_resamples=200, seed=4)
    shuffled = [verdicts[k] for k in rng.permutation(len(verdicts))]
    mirrored = [(b, a, -m) for a, b, m in shuffled]
    assert ratings.bradley_terry(mirrored, n_resamples=200, seed=4) == result
    other = ratings.bradley_terry(verdicts, n_resamples=200, seed=5)
    assert other.scores() == result.scores() and other != result
    for rating in result.ratings:
        assert rating.low <= rating.strength <= rating.high
        assert rating.rank_low <= rating.rank <= rating.rank_high
        assert rating.elo == pytest.approx(1000 + 400 / math.log(10) * rating.strength)
    assert 0 < result.rank_stability <= 1
    json.dumps(result.as_dict(), allow_nan=False)


def test_bootstrap_intervals_cover_the_truth_at_about_the_nominal_rate():
    rng = np.random.default_rng(8)
    truth = np.array([-1.0, -0.3, 0.0, 0.4, 0.9])
    models = [f"m{i}" for i in range(len(truth))]
    covered = total = 0
    for seed in range(30):
        verdicts = []
        for _ in range(250):
            i, j = rng.choice(len(truth), size=2, replace=False)
            won = rng.random() < 1 / (1 + math.exp(truth[j] - truth[i]))
            verdicts.append((models[i], models[j], 1 if won else -1))
        result = ratings.bradley_terry(verdicts, n_resamples=300, seed=seed, confidence=0.9)
        for k, name in enumerate(models):
            rating = result.by_model()[name]
            covered += rating.low <= truth[k] - truth.mean() <= rating.high
            total += 1
    assert 0.8 <= covered / total <= 0.97


def test_percentiles_match_numpy_and_an_infinite_neighbour_makes_the_bound_unbounded():
    values = np.random.default_rng(1).normal(size=101)
    for q in (0.025, 0.5, 0.975):
        assert _percentile(values, q) == pytest.approx(np.quantile(values, q))
    with_infinity = np.concatenate([values, [-np.inf] * 5, [np.nan] * 3])
    assert _percentile(with_infinity, 0.025) is None
    assert _percentile(with_infinity, 0.975) == pytest.approx(np.quantile(np.concatenate([values, [-1e9] * 5]), 0.975))


def test_a_resample_without_maximum_likelihood_is_taken_in_the_limit():
    # a, b, c beat each other in a cycle; d lost everything; e beat everyone it met and never lost.
    names = ["a", "b", "c", "d", "e"]
    wins = np.zeros((5, 5))
    wins[0, 1] = wins[1, 2] = wins[2, 0] = wins[1, 0] = 1
    wins[0, 3] = wins[2, 3] = 1
    wins[4, 0] = 1
    assert ratings.mle_missing_reason(wins, names) is not None
    values, exists = _resample_strengths(wins, np.zeros(5), 0.0)
    assert not exists
    assert values[3] == -np.inf and values[4] == np.inf
    assert np.isfinite(values[:3]).all() and values[:3].mean() == pytest.approx(0)
    # Real data: GPT-3.5 Turbo won 87 of 90 llmfao GPT-4 verdicts, so in some resamples it never loses and its
    # upper bound is unbounded; that is tested on the real file in test_rank_models.py.


def test_rank_correlations_use_minimum_ranks_for_ties():
    a = {"w": 4.0, "x": 3.0, "y": 3.0, "z": 1.0}
    b = {"w": 2.0, "x": 4.0, "y": 1.0, "z": 0.0, "extra": 9.0}
    assert ratings.competition_ranks(a) == {"w": 1, "x": 2, "y": 2, "z": 4}
    result = ratings.rank_correlations(a, b)
    shared = ["w", "x", "y", "z"]
    assert result.n_models == 4
    assert result.pearson_on_ranks == pytest.approx(scipy_stats.pearsonr([1, 2, 2, 4], [2, 1, 3, 4]).statistic)
    assert result.spearman == pytest.approx(
        scipy_stats.spearmanr([a[k] for k in shared], [b[k] for k in shared]).statistic
    )
    assert result.kendall_tau_b == pytest.approx(
        scipy_stats.kendalltau([a[k] for k in shared], [b[k] for k in shared]).statistic
    )
    assert ratings.rank_correlations({"a": 1, "b": 2}, {"a": 1, "b": 2}).undefined_reason is not None


def test_a_model_absent_from_some_resamples_gets_its_interval_from_the_others():
    verdicts = [("a", "b", 1), ("b", "c", 1), ("c", "a", 1), ("b", "a", 1), ("c", "b", 2), ("a", "c", 0)] * 5
    verdicts.append(("a", "z", 0))  # z's only verdict: a tie, left out of about a third of the resamples
    result = ratings.bradley_terry(verdicts, n_resamples=200, seed=2)
    assert result.undefined_reason is None and 40 < result.n_resamples_without_mle < 120
    z = result.by_model()["z"]
    assert z.strength == pytest.approx(result.by_model()["a"].strength)
    assert z.low is not None and z.high is not None and z.rank_low is not None
    assert result.rank_stability is not None and math.isfinite(result.rank_stability)

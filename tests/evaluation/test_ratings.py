"""TrueSkill ratings against the trueskill package, order independence, pairing, and EQ-Bench 3's published
leaderboard; no database."""

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
import trueskill
from scipy import stats as scipy_stats

from evaluation import eqbench, ratings
from evaluation.ratings import verdicts as ratings_verdicts

EXTERNAL = Path(__file__).resolve().parents[2].parent / "shared/data/external"
EQBENCH3 = EXTERNAL / "eqbench3"
needs_eqbench3 = pytest.mark.skipif(
    not (EQBENCH3 / "pairwise_comparisons_compact.jsonl").exists(),
    reason=f"EQ-Bench 3 data not found at {EQBENCH3}",
)


def library_env(environment: ratings.TrueSkillEnvironment) -> trueskill.TrueSkill:
    """Return the trueskill package's environment with its exact (SciPy) normal functions."""
    return trueskill.TrueSkill(
        mu=environment.mu,
        sigma=environment.sigma,
        beta=environment.beta,
        tau=environment.tau,
        draw_probability=environment.draw_probability,
        backend="scipy",
    )


def simulated_verdicts(n_models: int, rounds: int, seed: int) -> tuple[list[ratings.Verdict], dict[str, float]]:
    rng = np.random.default_rng(seed)
    models = [f"model-{i}" for i in range(n_models)]
    skill = dict(zip(models, np.linspace(-6, 6, n_models), strict=True))
    verdicts = []
    for _ in range(rounds):
        for a, b in ratings.pairs_round_robin(models):
            performance = skill[a] - skill[b] + rng.normal(0, math.sqrt(2) * 25 / 6)
            margin = min(5, round(abs(performance) / 2))
            verdicts.append(ratings.Verdict(a, b, math.copysign(margin, performance) if margin else 0))
    return verdicts, skill


# --- the update rule ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "environment",
    [
        ratings.TrueSkillEnvironment(),
        ratings.TrueSkillEnvironment(tau=0.4, draw_probability=0.3),
        ratings.EQBENCH3_ENVIRONMENT,
    ],
)
def test_rate_1vs1_equals_the_trueskill_package(environment):
    rng = random.Random(5)
    exact = library_env(environment)
    # With no draws allowed the exact draw margin is 0 and the package's SciPy backend refuses a drawn game; its
    # default backend approximates the normal quantile, so its margin is tiny but not 0: the limit we implement.
    approximate = environment.as_trueskill()
    for _ in range(200):
        a = (environment.mu + rng.uniform(-2, 2) * environment.sigma, environment.sigma * rng.uniform(0.1, 1.2))
        b = (environment.mu + rng.uniform(-2, 2) * environment.sigma, environment.sigma * rng.uniform(0.1, 1.2))
        drawn = rng.random() < 0.3
        env, tolerance = (approximate, 1e-5) if drawn and environment.draw_probability == 0 else (exact, 1e-9)
        expected = trueskill.rate_1vs1(env.create_rating(*a), env.create_rating(*b), drawn=drawn, env=env)
        got = ratings.rate_1vs1(a, b, drawn=drawn, environment=environment)
        for (mu, sigma), rating in zip(got, expected, strict=True):
            assert mu == pytest.approx(rating.mu, abs=tolerance * environment.sigma)
            assert sigma == pytest.approx(rating.sigma, abs=tolerance * environment.sigma)


def test_a_heavy_upset_stays_finite_where_the_package_gives_up():
    environment = ratings.TrueSkillEnvironment()
    (mu_w, sigma_w), (mu_l, sigma_l) = ratings.rate_1vs1((-200.0, 1.0), (200.0, 1.0), environment=environment)
    assert all(math.isfinite(value) for value in (mu_w, sigma_w, mu_l, sigma_l))
    assert mu_w > -200 and mu_l < 200 and 0 < sigma_w <= 1


def test_a_single_pass_replays_the_package_update_by_update():
    verdicts, _ = simulated_verdicts(5, 3, seed=2)
    environment = ratings.TrueSkillEnvironment(draw_probability=0.2)
    result = ratings.rate_verdicts(verdicts, environment=environment, margin_mapping="linear", n_passes=1, seed=4)
    env = library_env(environment)
    state = {name: env.create_rating() for name in result.by_model()}
    units = ratings.pass_orders(verdicts, n_passes=1, seed=4)[0]
    assert sorted(v for unit in units for v in unit) == sorted(
        ratings.Verdict(*((a, b) if m > 0 or (m == 0 and a < b) else (b, a)), abs(m)) for a, b, m in verdicts
    )
    for unit in units:
        assert len(unit) == 1  # no two models have mirror-identical records here
        winner, loser, margin = unit[0]
        if margin == 0:
            state[winner], state[loser] = trueskill.rate_1vs1(state[winner], state[loser], drawn=True, env=env)
            continue
        for _ in range(int(abs(margin))):
            state[winner], state[loser] = trueskill.rate_1vs1(state[winner], state[loser], env=env)
    for name, rating in result.by_model().items():
        assert rating.mu == pytest.approx(state[name].mu, abs=1e-8)
        assert rating.sigma == pytest.approx(state[name].sigma, abs=1e-8)


# --- margins ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mapping", "expected"),
    [
        ("linear", [1, 2, 3, 4, 5]),
        ("sqrt", [1, math.sqrt(2), math.sqrt(3), 2, math.sqrt(5)]),
        ("log", [1, 1 + math.log(2), 1 + math.log(3), 1 + math.log(4), 1 + math.log(5)]),
        ("fixed", [1, 1, 1, 1, 1]),
    ],
)
def test_margin_repeats_follow_the_documented_mappings(mapping, expected):
    assert [ratings.margin_repeats(k, mapping) for k in (1, 2, 3, -4, 5)] == pytest.approx(expected)
    assert ratings.margin_repeats(0, mapping) == 0


def test_a_larger_margin_moves_ratings_more_unless_the_mapping_is_fixed():
    def winner_mu(margin: int, mapping: str) -> float:
        result = ratings.rate_verdicts([("a", "b", margin)], margin_mapping=mapping, n_passes=1)
        return result.by_model()["a"].mu

    for mapping in ("linear", "sqrt", "log"):
        gains = [winner_mu(k, mapping) for k in range(1, 6)]
        assert all(later > earlier for earlier, later in zip(gains, gains[1:], strict=False))
    assert len({round(winner_mu(k, "fixed"), 12) for k in range(1, 6)}) == 1


def test_a_fractional_repeat_lies_between_the_whole_numbers_of_updates():
    one, two = (ratings.rate_verdicts([("a", "b", k)], margin_mapping="linear", n_passes=1) for k in (1, 2))
    between = ratings.rate_verdicts([("a", "b", 2)], margin_mapping="sqrt", n_passes=1)
    assert one.by_model()["a"].mu < between.by_model()["a"].mu < two.by_model()["a"].mu
    custom = ratings.rate_verdicts([("a", "b", 3)], margin_mapping=lambda k: 2.0, n_passes=1)
    assert custom.by_model()["a"].mu == pytest.approx(two.by_model()["a"].mu)


def test_a_draw_pulls_ratings_together():
    result = ratings.rate_verdicts([("a", "b", 3), ("a", "b", 0)], n_passes=1, margin_mapping="fixed")
    only_win = ratings.rate_verdicts([("a", "b", 3)], n_passes=1, margin_mapping="fixed")
    gap = result.by_model()["a"].mu - result.by_model()["b"].mu
    assert 0 < gap < only_win.by_model()["a"].mu - only_win.by_model()["b"].mu


@pytest.mark.parametrize(
    ("verdict", "message"),
    [(("a", "a", 1), "itself"), (("a", "b", 6), "within"), (("a", "b", float("nan")), "finite"), (("a",), "expected")],
)
def test_bad_verdicts_are_rejected_with_their_index(verdict, message):
    with pytest.raises(ValueError, match=message) as error:
        ratings.rate_verdicts([("x", "y", 1), verdict])
    assert "verdict 1" in str(error.value)


# --- order independence -----------------------------------------------------------------------------------


def test_permuted_and_reoriented_verdicts_give_identical_ratings_with_equal_seeds():
    verdicts, _ = simulated_verdicts(6, 4, seed=1)
    shuffled = list(verdicts)
    random.Random(3).shuffle(shuffled)
    flipped = [(b, a, -m) for a, b, m in shuffled]
    first = ratings.rate_verdicts(verdicts, seed=7)
    assert ratings.rate_verdicts(shuffled, seed=7) == first
    assert ratings.rate_verdicts(flipped, seed=7) == first


def _random_tournament(rng: random.Random) -> list[tuple[str, str, int]]:
    models = [f"m{i}" for i in range(rng.randint(3, 8))]
    n_verdicts = rng.randint(len(models), 6 * len(models))
    return [(*rng.sample(models, 2), rng.choice(range(-5, 6))) for _ in range(n_verdicts)]


def test_renaming_the_models_changes_no_rating():
    for seed in range(20):
        verdicts = _random_tournament(random.Random(seed))
        names = sorted({name for a, b, _m in verdicts for name in (a, b)})
        renamed = dict(zip(names, random.Random(seed).sample([f"x{n}" for n in range(50)], len(names)), strict=True))
        first = ratings.rate_verdicts(verdicts, seed=3).by_model()
        second = ratings.rate_verdicts([(renamed[a], renamed[b], m) for a, b, m in verdicts], seed=3).by_model()
        for name, rating in first.items():
            assert (second[renamed[name]].mu, second[renamed[name]].sigma) == (rating.mu, rating.sigma), (seed, name)


def test_models_with_mirror_identical_records_get_equal_ratings():
    # "a" and "z" beat "m" alike, lose to "b" alike and draw with each other: nothing but their names differ.
    verdicts = [("a", "m", 2), ("z", "m", 2), ("b", "a", 1), ("b", "z", 1), ("a", "z", 0), ("m", "b", 3)] * 2
    for seed in range(5):
        by_model = ratings.rate_verdicts(verdicts, seed=seed).by_model()
        assert by_model["a"].mu == by_model["z"].mu and by_model["a"].sigma == by_model["z"].sigma
    # Each beats the other once by the same margin: still alike, whichever verdict comes first.
    both_ways = [("a", "m", 2), ("z", "m", 2), ("a", "z", 3), ("z", "a", 3), ("m", "b", 1)]
    for given in (both_ways, both_ways[::-1]):
        by_model = ratings.rate_verdicts(given).by_model()
        assert by_model["a"].mu == by_model["z"].mu == ratings.rate_verdicts(both_ways).by_model()["a"].mu


def _round_robin(rng: random.Random) -> list[tuple[str, str, int]]:
    """Every pair of 3 to 9 models, once to three times, with margins from latent skills and noise."""
    models = [f"q{i}" for i in range(rng.randint(3, 9))]
    skill = {m: rng.gauss(0, 1) for m in models}
    return [
        (a, b, max(-5, min(5, round(2 * (skill[a] - skill[b] + rng.gauss(0, 1))))))
        for _ in range(rng.randint(1, 3))
        for a in models
        for b in models
        if a < b
    ]


@pytest.mark.parametrize("tournament", [_random_tournament, _round_robin])
def test_a_larger_margin_leaves_every_verdict_where_it_was_in_every_pass(tournament):
    # The orders depend on who played whom and on results, never on the margins' sizes: raising a margin only
    # raises the updates of its own pair, copy by copy.
    for seed in range(100):
        rng = random.Random(seed * 31 + 5)
        verdicts = tournament(rng)
        index = rng.randrange(len(verdicts))
        winner, loser, _margin = verdicts[index]
        prepared = []
        for margin in (1, 5):
            verdicts[index] = (winner, loser, margin)
            prepared.append(ratings_verdicts._prepare(verdicts, (), "linear", 5))
        assert prepared[0].unit_keys == prepared[1].unit_keys, seed
        assert [len(unit) for unit in prepared[0].units] == [len(unit) for unit in prepared[1].units], seed
        for before, after in zip(prepared[0].units, prepared[1].units, strict=True):
            # A unit's verdicts are rated side by side, in no order: compare them as multisets.
            updates = [sorted((w, lo, whole + part) for w, lo, whole, part, _drawn in unit) for unit in (before, after)]
            assert [step[:2] for step in updates[0]] == [step[:2] for step in updates[1]], seed
            assert all(a[2] <= b[2] for a, b in zip(*updates, strict=True)), seed


@pytest.mark.parametrize("pass_seed", [0, 1, 7])
def test_a_larger_margin_never_lowers_the_winners_mu_in_200_random_tournaments(pass_seed):
    lowered = []
    for seed in range(200):
        rng = random.Random(seed * 31 + 5 if pass_seed else seed)
        verdicts = _random_tournament(rng)
        index = rng.randrange(len(verdicts))
        winner, loser, _margin = verdicts[index]
        mu = []
        for margin in (1, 5):
            verdicts[index] = (winner, loser, margin)
            mu.append(ratings.rate_verdicts(verdicts, margin_mapping="linear", seed=pass_seed).by_model()[winner].mu)
        if mu[1] < mu[0]:
            lowered.append(seed)
    assert lowered == []


def test_ratings_report_the_spread_across_passes():
    verdicts, _ = simulated_verdicts(6, 4, seed=1)
    result = ratings.rate_verdicts(verdicts)
    assert result.order_sd_max == max(rating.order_sd for rating in result.ratings) > 0
    assert result.as_dict()["order_sd_max"] == result.order_sd_max


def test_different_pass_seeds_agree_within_the_order_noise():
    verdicts, _ = simulated_verdicts(6, 4, seed=1)
    passes = 60
    first = ratings.rate_verdicts(verdicts, seed=1, n_passes=passes).by_model()
    second = ratings.rate_verdicts(verdicts, seed=2, n_passes=passes).by_model()
    for name, rating in first.items():
        # Two independent means of `passes` passes: the difference has sd order_sd * sqrt(2 / passes).
        tolerance = 4 * max(rating.order_sd, second[name].order_sd) * math.sqrt(2 / passes)
        assert abs(rating.mu - second[name].mu) <= tolerance
        assert tolerance < 0.2 * ratings.DEFAULT_ENVIRONMENT.sigma


def test_ratings_recover_the_true_order_of_simulated_models():
    verdicts, skill = simulated_verdicts(8, 6, seed=3)
    result = ratings.rate_verdicts(verdicts)
    agreement = ratings.rank_agreement(result.ranking(), sorted(skill, key=skill.get, reverse=True))
    assert agreement.tau >= 0.85


def test_sigma_combines_pass_uncertainty_and_order_spread():
    verdicts, _ = simulated_verdicts(5, 3, seed=6)
    for rating in ratings.rate_verdicts(verdicts, n_passes=8).ratings:
        assert rating.sigma >= rating.pass_sigma - 1e-12
        assert rating.sigma**2 == pytest.approx(rating.pass_sigma**2 + rating.order_sd**2, rel=0.2)
        assert rating.conservative == pytest.approx(rating.mu - 3 * rating.sigma)


# --- display scale ----------------------------------------------------------------------------------------


def test_display_scale_without_anchors_puts_the_prior_at_the_centre_in_elo_units():
    result = ratings.rate_verdicts([("a", "b", 1)], models=["idle"])
    idle = result.by_model()["idle"]
    assert idle.display == pytest.approx(1000.0)
    points = ratings.elo_points_per_mu()
    assert points == pytest.approx(400 * 1.702 / (math.log(10) * math.sqrt(2) * 25 / 6))
    a, b = result.by_model()["a"], result.by_model()["b"]
    assert a.display - b.display == pytest.approx(points * (a.mu - b.mu))
    assert a.display_low < a.display < a.display_high


def test_display_scale_maps_two_anchor_models_to_their_values():
    verdicts, _ = simulated_verdicts(5, 3, seed=2)
    anchors = {"model-4": 1500.0, "model-0": 200.0}
    result = ratings.rate_verdicts(verdicts, anchors=anchors).by_model()
    assert result["model-4"].display == pytest.approx(1500.0)
    assert result["model-0"].display == pytest.approx(200.0)
    one = ratings.rate_verdicts(verdicts, anchors={"model-2": 1000.0}).by_model()
    assert one["model-2"].display == pytest.approx(1000.0)


def test_display_scale_with_an_unknown_anchor_is_undefined_and_json_clean():
    result = ratings.rate_verdicts([("a", "b", 2)], anchors={"a": 1500, "ghost": 200})
    assert result.display_scale.undefined_reason == "anchor model(s) without a rating: ghost"
    assert all(rating.display is None for rating in result.ratings)
    json.dumps(result.as_dict(), allow_nan=False)


# --- pairing and rank agreement ---------------------------------------------------------------------------


def test_round_robin_lists_every_pair_once_or_in_both_orders():
    pairs = ratings.pairs_round_robin(["a", "b", "c", "d"])
    assert len(pairs) == 6 and len({frozenset(pair) for pair in pairs}) == 6
    both = ratings.pairs_round_robin(["a", "b", "c"], both_orders=True)
    assert sorted(both) == sorted([("a", "b"), ("a", "c"), ("b", "c"), ("b", "a"), ("c", "a"), ("c", "b")])


def test_adaptive_pairing_prefers_close_uncertain_pairs_and_is_seeded():
    current = {"a": (25.0, 8.0), "b": (25.5, 8.0), "c": (40.0, 1.0), "d": (10.0, 1.0)}
    chosen = ratings.pairs_adaptive(current, n_pairs=3, seed=1)
    assert {chosen[0].model_a, chosen[0].model_b} == {"a", "b"}
    env = ratings.DEFAULT_ENVIRONMENT.as_trueskill()
    expected = trueskill.quality_1vs1(env.create_rating(25.0, 8.0), env.create_rating(25.5, 8.0), env=env)
    assert chosen[0].quality == pytest.approx(expected)
    assert chosen == ratings.pairs_adaptive(current, n_pairs=3, seed=1)
    capped = ratings.pairs_adaptive(current, n_pairs=3, seed=1, max_per_model=1)
    assert len(capped) == 2
    assert {frozenset((p.model_a, p.model_b)) for p in capped} == {frozenset("ab"), frozenset("cd")}
    skipped = ratings.pairs_adaptive(current, n_pairs=1, seed=1, exclude=[("b", "a")])
    assert {skipped[0].model_a, skipped[0].model_b} != {"a", "b"}


def test_adaptive_pairing_reaches_the_round_robin_ranking_with_half_the_judge_calls():
    rng = np.random.default_rng(11)
    models = [f"m{i}" for i in range(8)]
    skill = dict(zip(models, np.linspace(-6, 6, 8), strict=True))

    def judge(a: str, b: str) -> ratings.Verdict:
        performance = skill[a] - skill[b] + rng.normal(0, math.sqrt(2) * 25 / 6)
        return ratings.Verdict(a, b, math.copysign(max(1, min(5, round(abs(performance) / 2))), performance))

    round_robin = [judge(a, b) for _ in range(6) for a, b in ratings.pairs_round_robin(models)]
    adaptive: list[ratings.Verdict] = []
    current = {name: (25.0, 25 / 3) for name in models}
    while len(adaptive) < len(round_robin) // 2:
        for choice in ratings.pairs_adaptive(current, n_pairs=4, seed=len(adaptive), max_per_model=1):
            adaptive.append(judge(choice.model_a, choice.model_b))
        rated = ratings.rate_verdicts(adaptive, n_passes=3, models=models)
        current = {rating.model: (rating.mu, rating.sigma) for rating in rated.ratings}
    truth = sorted(models, key=skill.get, reverse=True)
    full = ratings.rate_verdicts(round_robin).ranking()
    fewer = ratings.rate_verdicts(adaptive).ranking()
    assert ratings.rank_agreement(fewer, truth).tau >= ratings.rank_agreement(full, truth).tau - 0.15
    assert ratings.rank_agreement(fewer, full).tau >= 0.7


def test_rank_agreement_is_kendall_tau_b_over_shared_models():
    assert ratings.rank_agreement(["a", "b", "c"], ["a", "b", "c"]).tau == pytest.approx(1)
    assert ratings.rank_agreement(["a", "b", "c"], ["c", "b", "a"]).tau == pytest.approx(-1)
    scores_a = {"a": 3.0, "b": 1.0, "c": 2.0, "d": 0.5, "x": 9.0}
    scores_b = {"a": 2.0, "b": 2.5, "c": 1.0, "d": 0.0}
    shared = ["a", "b", "c", "d"]
    expected = scipy_stats.kendalltau([scores_a[k] for k in shared], [scores_b[k] for k in shared])
    result = ratings.rank_agreement(scores_a, scores_b)
    assert (result.tau, result.p_value, result.n_models) == (pytest.approx(expected.statistic), expected.pvalue, 4)
    assert ratings.rank_agreement(["a"], ["a", "b"]).tau is None


# --- EQ-Bench 3 import ------------------------------------------------------------------------------------

FIXTURE_ROWS = [
    {
        "scenario_id": "7", "test_model": "alpha", "neighbor_model": "beta", "iteration_index": "1",
        "order": "A0493:test / A0488:other", "plus_for_test": 7, "plus_for_other": 2,
        "criterion_verdicts": {"demonstrated_empathy": "A0493+++", "pragmatic_ei": "A0493++",
                               "depth_of_insight": "A0488++", "overall_eq": "A0493++"},
    },
    {
        "scenario_id": "7", "test_model": "alpha", "neighbor_model": "beta", "iteration_index": "1",
        "order": "A0493:other / A0488:test", "plus_for_test": 3, "plus_for_other": 1,
        "criterion_verdicts": {"demonstrated_empathy": "A0488++", "pragmatic_ei": "A0493+",
                               "depth_of_insight": "A0488+", "overall_eq": None},
    },
    {
        "scenario_id": "9", "test_model": "gamma", "neighbor_model": "alpha", "iteration_index": "1",
        "order": "A0493:test / A0488:other", "plus_for_test": 2, "plus_for_other": 2,
        "criterion_verdicts": {"overall_eq": "A0493++", "depth_of_insight": "A0488++"},
    },
]  # fmt: skip


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_eqbench3_import_counts_plus_signs_per_side_and_order(tmp_path):
    judgements = eqbench.eqbench3_load(write_jsonl(tmp_path / "compact.jsonl", FIXTURE_ROWS))
    assert [(j.plus_for_test, j.plus_for_other, j.test_shown_first) for j in judgements] == [
        (7, 2, True),
        (3, 1, False),
        (2, 2, True),
    ]
    verdicts = ratings.eqbench3_verdicts(judgements)
    # alpha: 7 + 3 = 10 plus signs, beta: 2 + 1 = 3; diff 7: blend(7/30) = (1 - exp(-3 (7/30)^0.75)) /
    # (1 - exp(-3)) = 0.6680, fraction 0.8340, ceil(0.3340 / 0.025) = 14 pseudo-wins. gamma vs alpha: a draw.
    assert verdicts == [ratings.Verdict("alpha", "beta", 14), ratings.Verdict("alpha", "gamma", 0)]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"plus_for_test": 6}, "line 1: fields 'plus_for_test'/'plus_for_other'"),
        ({"order": "sideways"}, "line 1: field 'order'"),
        ({"test_model": ""}, "line 1: field 'test_model'"),
        ({"criterion_verdicts": "A0493+"}, "line 1: field 'criterion_verdicts'"),
    ],
)
def test_eqbench3_import_names_the_line_and_field_at_fault(tmp_path, change, message):
    rows = [FIXTURE_ROWS[0] | change]
    with pytest.raises(ValueError, match=message):
        eqbench.eqbench3_load(write_jsonl(tmp_path / "bad.jsonl", rows))
    (tmp_path / "broken.jsonl").write_text("{not json\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 1: not valid JSON"):
        eqbench.eqbench3_load(tmp_path / "broken.jsonl")
    (tmp_path / "list.jsonl").write_text("[1, 2]\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 1: not a JSON object"):
        eqbench.eqbench3_load(tmp_path / "list.jsonl")
    (tmp_path / "deep.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 1: JSON nested too deeply"):
        eqbench.eqbench3_load(tmp_path / "deep.jsonl")


def test_eqbench3_margin_bins_follow_eqbench():
    assert ratings.eqbench3_margin(0, 0) == 0
    assert ratings.eqbench3_margin(1, 0) == 4  # smoothstep zone: blend(1/30) = 0.1783, ceil(0.0892 / 0.025)
    assert ratings.eqbench3_margin(0, 80) == -20
    assert ratings.eqbench3_margin(12, 2, bin_size=3) == 3
    assert ratings.eqbench3_margin(2, 1, bin_size=1) == 1


@needs_eqbench3
def test_eqbench3_blend_reproduces_the_stored_margins_of_every_judgement():
    with (EQBENCH3 / "pairwise_comparisons_compact.jsonl").open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    for row in rows:
        blended = ratings.eqbench3_blend(row["plus_diff_normalized"])
        assert blended == pytest.approx(row["plus_diff_blended"], abs=1e-12)
        if row["outcome_for_test_model"] != 0.5:
            fraction = 0.5 + blended / 2 if row["outcome_for_test_model"] == 1.0 else 0.5 - blended / 2
            assert fraction == pytest.approx(row["fraction_for_test"], abs=1e-12)


@needs_eqbench3
def test_eqbench3_published_ratings_are_reproduced_within_the_order_noise():
    """Reproduce published_ratings_2025-04-28.json from the verdicts (see docs/statistics.md).

    EQ-Bench's solver: both orders' plus signs summed per matchup, margin blend, bins of 20 pseudo-wins,
    TrueSkill (mu 1200, sigma 350/3, beta 350/6, tau 0, no draws), pairs more than 16 ladder places apart left
    out, o3 -> 1500 and llama-3.2-1b -> 200. A single TrueSkill pass depends on the verdict order, which the
    published file does not record; the bound is therefore stated in units of that order noise.
    """
    with (EQBENCH3 / "published_ratings_2025-04-28.json").open(encoding="utf-8") as handle:
        published = json.load(handle)["ratings"]
    judgements = eqbench.eqbench3_load(EQBENCH3 / "pairwise_comparisons_compact.jsonl")
    ladder = sorted(published, key=lambda name: published[name]["elo"])
    verdicts = ratings.eqbench3_verdicts(judgements, ladder=ladder, rank_window=ratings.EQBENCH3_RANK_WINDOW)
    settings = {
        "environment": ratings.EQBENCH3_ENVIRONMENT,
        "margin_mapping": "linear",
        "max_margin": ratings.EQBENCH3_BIN_SIZE,
        "anchors": ratings.EQBENCH3_ANCHORS,
    }
    ours = ratings.rate_verdicts(verdicts, n_passes=20, seed=0, **settings).by_model()
    names = sorted(published)
    assert sorted(ours) == names
    mine = np.array([ours[name].display for name in names])
    theirs = np.array([published[name]["elo_norm"] for name in names])
    assert scipy_stats.spearmanr(mine, theirs).statistic >= 0.99
    assert scipy_stats.kendalltau(mine, theirs).statistic >= 0.95
    assert np.max(np.abs(mine - theirs)) <= 75  # points on the 200..1500 anchored scale

    single_passes = [
        ratings.rate_verdicts(verdicts, n_passes=1, seed=seed, **settings).by_model() for seed in range(20)
    ]
    singles = np.array([[single[name].display for name in names] for single in single_passes])
    order_sd = singles.std(axis=0, ddof=1)
    assert np.all(np.abs(mine - theirs) <= 3 * order_sd)

    # The published sigma matches one pseudo-game per matchup (see docs/statistics.md on bin sizes).
    one_game = ratings.eqbench3_verdicts(
        judgements, bin_size=1, ladder=ladder, rank_window=ratings.EQBENCH3_RANK_WINDOW
    )
    sigma = ratings.rate_verdicts(one_game, n_passes=20, seed=0, **settings).by_model()
    sigmas = np.array([sigma[name].pass_sigma for name in names])
    assert np.max(np.abs(sigmas - np.array([published[name]["sigma"] for name in names]))) <= 2.0

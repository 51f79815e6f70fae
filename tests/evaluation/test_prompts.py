"""Evaluation prompts (pure): the shuffled option order is stored, reproducible and differs between models."""

from evaluation import prompts


def test_option_order_is_stored_reproducible_and_differs_between_models():
    a = prompts.option_order(uid="x", model_code="M01", language="en", turn=0, seed=1, n=4)
    assert a == prompts.option_order(uid="x", model_code="M01", language="en", turn=0, seed=1, n=4)
    assert sorted(a) == [0, 1, 2, 3]
    orders = {
        tuple(prompts.option_order(uid="x", model_code=f"M{i}", language="en", turn=0, seed=1, n=4)) for i in range(8)
    }
    assert len(orders) > 1

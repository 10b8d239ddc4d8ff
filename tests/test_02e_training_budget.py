"""further/02e_training_budget.py and its train_ensemble: stacked seeds train exactly as
separate runs do; the study's verdicts on hand-made rows; its quick run."""
import math

import pytest
import torch

import helpers
from conftest import run_quick
from engine import lesson02 as engine

lesson = helpers.load_concept("02_multihead_model")
study = helpers.load_concept("02e_training_budget")
SEEDS = [0, 1, 2]


def data(T=8):
    train, valid, _ = lesson.make_data(T, 4, 300, 100, seed=0)
    return train, valid


def built(seed, h=4):
    helpers.seed_everything(seed)
    return lesson.MultiHeadModel(n_heads=h, head_dim=8, width=32)


@pytest.mark.parametrize("keep_best", [False, True])
def test_stacked_seeds_train_exactly_as_separate_runs(keep_best):
    """Each seed's losses, checkpoints, final errors and weights, stacked or alone."""
    train, valid = data()
    options = dict(steps=60, batch_size=16, lr=1e-2, evaluate_every=10, keep_best=keep_best)
    alone = []
    for seed in SEEDS:
        model = built(seed)
        alone.append((model, engine.train_with_checkpoints(model, train, valid, seed=seed,
                                                           **options)))
    stacked_models = [built(seed) for seed in SEEDS]
    stacked = study.train_ensemble(stacked_models, SEEDS, train, valid, **options)
    for (model, one), together, member in zip(alone, stacked, stacked_models):
        assert one["selection"] == together["selection"]
        for key in ("valid_nmse", "last_valid_nmse", "train_nmse"):
            assert together[key] == pytest.approx(one[key], rel=1e-4), key
        assert [p["step"] for p in one["history"]] == [p["step"] for p in together["history"]]
        assert [p["valid_nmse"] for p in together["history"]] == pytest.approx(
            [p["valid_nmse"] for p in one["history"]], rel=1e-4)
        for name, value in model.state_dict().items():
            torch.testing.assert_close(member.state_dict()[name], value, rtol=1e-4, atol=1e-5)


def test_stacked_losses_are_each_seeds_own():
    """The per-step losses of a member equal the loss the same seed records alone (fit())."""
    train, valid = data()
    steps = 40
    recorded = []
    for seed in SEEDS:
        model = built(seed)
        batches = helpers.draw_batches(len(train[1]), steps, 16, seed, "cpu")
        x, y = train
        recorded.append(helpers.fit(
            model, lambda step, model=model, batches=batches:
            torch.mean((model(x[batches[step]]) - y[batches[step]]) ** 2), steps=steps, lr=1e-2))
    stacked = study.train_ensemble([built(seed) for seed in SEEDS], SEEDS, train, valid,
                                     steps=steps, batch_size=16, lr=1e-2)
    for alone, together in zip(recorded, stacked):
        torch.testing.assert_close(together["losses"], alone, rtol=1e-4, atol=1e-6)


def test_ensemble_refuses_a_non_finite_loss_with_the_names():
    train, valid = data()
    with pytest.raises(helpers.NonFiniteLoss, match="T=8 seed=0"):
        study.train_ensemble([built(0), built(1)], [0, 1], train, valid, steps=200,
                               batch_size=16, lr=1e30, names=["T=8 seed=0", "T=8 seed=1"])


def row(h, steps, values):
    """A hand-made row of train_seeds: last = best = train = the given values, one per seed."""
    return {"part": "budget", "T": 8, "h": h, "steps": steps, "batch_size": 64, "lr": 1e-2,
            "per_seed": [{"seed": s, "last": v, "best": v, "best_step": steps, "train": v,
                          "curve": []} for s, v in enumerate(values)]}


def test_verdicts_find_where_the_error_stops_falling():
    rows = [row(4, 100, [1e-3, 1.1e-3, 0.9e-3]), row(4, 300, [1e-4, 1.2e-4, 0.8e-4]),
            row(4, 1000, [1.1e-4, 0.9e-4, 1.0e-4]),
            row(3, 100, [1e-2] * 3), row(3, 300, [5e-3, 6e-3, 4e-3]),
            row(3, 1000, [1e-3, 1.1e-3, 0.9e-3])]
    found = study.verdicts(rows, None)["8"]
    assert found["by_h"]["4"]["stops_falling_at"] == 300       # 100 -> 300 falls; then flat
    assert found["by_h"]["3"]["stops_falling_at"] is None      # still falling at 1000
    assert found["by_h"]["4"]["changes"]["100->300"]["verdict"] == "falls"
    ratio = found["ratios_at_largest"]["3/4"]
    assert 10 ** ratio["mean"] == pytest.approx(10.0, rel=0.05)   # h = 3 ten times h = 4
    assert found["by_h"]["3"]["budgets"]["1000"]["last"]["mean"] == pytest.approx(1e-3)


def test_a_head_trained_at_one_budget_gets_no_stopping_line(capsys):
    """Where a head was trained at one budget only there is no fall to compare, so the report
    says nothing of where it stops; a head with two budgets still gets its line."""
    rows = [row(4, 100, [1e-3, 1.1e-3, 0.9e-3]), row(4, 300, [1e-4, 1.2e-4, 0.8e-4]),
            row(3, 300, [1e-2] * 3)]
    study.report({"recipe": {"batch_size": 256, "lr": 3e-3},
                  "budget": {"rows": rows, "verdicts": study.verdicts(rows, None)}})
    printed = capsys.readouterr().out
    assert printed.count("no further fall shown from") == 1          # h = 4's, not h = 3's


def test_main_quick(tmp_path):
    result = run_quick("02e_training_budget", tmp_path)
    assert result["search"]["pick"] == result["recipe"]
    assert {(r["batch_size"], r["lr"]) for r in result["search"]["rows"]} == {
        (64, 3e-3), (64, 1e-2)}
    verdicts = result["budget"]["verdicts"]["8"]
    assert set(verdicts["by_h"]) == {"2", "3", "4"}            # heads, and heads_below
    assert set(verdicts["by_h"]["2"]["budgets"]) == {"300"}     # the largest budget only
    for entry in verdicts["by_h"].values():
        for stats in entry["budgets"].values():
            assert 0 < stats["best"]["min"] <= stats["last"]["min"] + 1e-12
            assert all(0 < v < 2 for v in stats["train"]["seeds"])
    for rows in (result["budget"]["rows"], result["search"]["rows"]):
        for one in rows:
            assert [s["seed"] for s in one["per_seed"]] == [0, 1]
            assert all(math.isfinite(s["last"]) for s in one["per_seed"])
    assert result["stacking"]["8"]["stacked"] > 0

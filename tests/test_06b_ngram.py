"""further/06b_ngram.py: the 4-gram target, the hand-built reference, the quick run."""
import math

import pytest
import torch

import helpers
from conftest import RUN_KEYS, assert_rejected, run_quick

study = helpers.load_concept("06b_ngram")


@pytest.fixture(scope="module")
def quick_result(tmp_path_factory):
    """The study's --quick run, once for this file (its notebook replays a committed run)."""
    return run_quick("06b_ngram", tmp_path_factory.mktemp("06b"))


def test_ngram_target_by_a_slow_loop_over_t_and_j():
    matrices = study.ngram_matrices()
    x = torch.randn(3, 9, study.NGRAM_DIM, generator=torch.Generator().manual_seed(0))
    for task in study.NGRAM_TASKS:
        y = study.ngram_target(x, matrices, task)
        for n in range(3):
            for t in range(9):
                z = sum(matrices[j] @ x[n, t - j] for j in range(study.NGRAM_LAGS)
                        if t - j >= 0)                                  # zero before the start
                expected = z if task == "linear" else torch.tanh(study.NGRAM_SHARPNESS * z)
                torch.testing.assert_close(y[n, t], expected, rtol=1e-5, atol=1e-6)
    variance = study.ngram_target(torch.randn(4000, 8, 4), matrices, "linear")[:, 3:].var()
    assert float(variance) == pytest.approx(1.0, abs=0.1)                   # scaled to 1


def exact_lag_heads(x, matrices, head_dim):
    """The hand-built model: the residual carries x_t; for each lag j = 1, 2, 3, ceil(p / d)
    heads with a one-hot weight on position t - j, each carrying d of its coordinates; the
    read-out sum_j A_j x_{t-j} from what arrived."""
    n, seq_len, dim = x.shape
    y = x @ matrices[0].T
    for lag in range(1, study.NGRAM_LAGS):
        weights = torch.zeros(seq_len, seq_len)
        for t in range(lag, seq_len):
            weights[t, t - lag] = 1.0                                       # exact position
        pieces = [weights @ x[..., first:first + head_dim]                  # one head each
                  for first in range(0, dim, head_dim)]
        y = y + torch.cat(pieces, dim=-1)[..., :dim] @ matrices[lag].T
    return y


@pytest.mark.parametrize("budget, heads", [(32, 4), (32, 8), (32, 16), (16, 8), (64, 32)])
def test_the_exact_lag_reference_is_exact_where_the_heads_can_carry_every_lag(budget, heads):
    head_dim = budget // heads
    assert 3 * math.ceil(study.NGRAM_DIM / head_dim) <= heads and head_dim >= 2
    matrices = study.ngram_matrices()
    x = torch.randn(50, 12, study.NGRAM_DIM)
    y = study.ngram_target(x, matrices, "linear")
    assert study.ngram_nmse(exact_lag_heads(x, matrices, head_dim), y) < 1e-10
    assert study.ngram_reference(budget, heads) == 0.0
    assert study.task_reference("tanh", budget, heads) == 0.0
    assert study.ngram_reference(budget, budget) is None      # d = 1: no exact head


def test_the_lag_averaging_reference_against_least_squares():
    """H = 1 and 2 lag-averaging heads: the reference's NMSE equals a least-squares read-out of
    x_t and the heads' outputs, with the reference's best weights, on sampled data (and no
    other nonnegative weights a grid finds do better)."""
    import itertools
    matrices = study.ngram_matrices()
    lagged = matrices[1:].flatten(1).double()
    gram = (lagged @ lagged.T).numpy()
    total = float((matrices.double() ** 2).sum())
    unexplained_0 = total - float((matrices[0].double() ** 2).sum())
    one = study.ngram_reference(32, 1)
    two = study.ngram_reference(32, 2)
    assert 0 < two < one < unexplained_0 / total < 1
    grid = [torch.tensor(w, dtype=torch.double) for w in itertools.product(
        [0.0, 0.25, 0.5, 0.75, 1.0], repeat=3) if any(w)]
    best_on_grid = max(float(w @ torch.tensor(gram) @ w / (w @ w)) for w in grid)
    assert (unexplained_0 - best_on_grid) / total >= one - 1e-9            # the search wins
    x = torch.randn(10000, 8, study.NGRAM_DIM, dtype=torch.double,
                    generator=torch.Generator().manual_seed(1))
    y = study.ngram_target(x, matrices.double(), "linear")[:, 3:].flatten(0, 1)
    w = torch.tensor(study.best_lag_weight_vectors(gram, 1)[0])
    z = sum(w[j - 1] * x[:, 3 - j:8 - j] for j in (1, 2, 3)).flatten(0, 1)
    features = torch.cat([x[:, 3:].flatten(0, 1), z, torch.ones(len(z), 1,
                                                              dtype=torch.double)], dim=1)
    fitted = features @ torch.linalg.lstsq(features, y).solution
    assert helpers.nmse(fitted, y) == pytest.approx(one, abs=0.01)


def test_main_quick(quick_result):
    """Every (task, budget, H) trained with its seeds; the reference where it exists."""
    args = study.config(["--quick"])
    result = quick_result
    assert set(result) - RUN_KEYS == {"ngram"}
    for task, by_budget in result["ngram"]["tasks"].items():
        for budget, entry in by_budget.items():
            heads = [2 ** k for k in range(int(math.log2(int(budget))) + 1)]
            assert list(entry["trained"]) == [str(H) for H in heads]
            assert all(len(e["seeds"]) == args.ngram_seeds for e in entry["trained"].values())
            assert all(H in heads for H in entry["lowest_H_per_seed"])
            assert entry["reference"][str(budget)] is None                  # d = 1
            if task == "linear":
                assert entry["reference"]["1"] > entry["reference"]["2"] > 0


@pytest.mark.parametrize("flags, flag_name", [
    (["--ngram-budgets", "24"], "--ngram-budgets"), (["--ngram-T", "3"], "--ngram-T"),
    (["--ngram-seeds", "1"], "--ngram-seeds"), (["--parts", "a"], "--parts"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("06b_ngram", flags, flag_name)

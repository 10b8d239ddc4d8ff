"""further/06b_ngram.py: the 4-gram target, the hand-built reference, the quick run."""
import json
import math

import pytest
import torch

import conftest
import helpers
from conftest import ROOT, RUN_KEYS, assert_rejected, run_quick

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


X, POSITION, EMPTY, LAGGED = 0, 4, 8, 9   # the residual's coordinates (see below)


def exact_lag_model(n_heads, head_dim, scale, seq_len=12, width=32):
    """The hand-built reference inside the study's own NGramModel (float64), weights set by hand.
    The residual carries x_t (coordinates 0-3), scale * (cos wt, sin wt, -cos wt, -sin wt)
    (4-7, mean 0, so the layer norms' std is about scale * sqrt(2 / width) at every t), a
    coordinate that stays 0 (8: every reading row's weights sum to 0 through it, so the norms'
    mean drops out) and the fetched lags (9-20). Piece k of the lags' coordinates (lag j, up to d
    of them) goes to head k, whose score scale * cos(w (s - t + j)) peaks at s = t - j; pieces
    beyond n_heads are not carried. The MLP is zero; the read-out applies sum_j A_j. As the
    scale grows the norms' dependence on x and the weight off t - j both vanish."""
    assert head_dim >= 2, "the cosine score needs two dimensions"
    p, lags = study.NGRAM_DIM, study.NGRAM_LAGS
    model = study.NGramModel(n_heads, head_dim, width, seq_len).double()
    omega, t = 2 * math.pi / seq_len, torch.arange(seq_len, dtype=torch.double)
    sigma = scale * math.sqrt(2 / width)            # the layer norms' std, x aside

    def reading(weights):                           # a row over the residual, weights sum to 0
        row = torch.zeros(width, dtype=torch.double)
        for coordinate, weight in weights.items():
            row[coordinate] += weight
        row[EMPTY] -= row.sum()
        return row

    cos = reading({POSITION: 0.5, POSITION + 2: -0.5}) * sigma / scale   # LN(u) . cos ~ cos wt
    sin = reading({POSITION + 1: 0.5, POSITION + 3: -0.5}) * sigma / scale
    pieces = [(lag, first) for lag in range(1, lags) for first in range(0, p, head_dim)]
    matrices = study.ngram_matrices().double()
    block = model.block
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.zero_()
        block.norm_attention.weight.fill_(1.0)
        block.norm_mlp.weight.fill_(1.0)
        model.norm.weight.fill_(1.0)
        model.embed.weight[X:X + p] = torch.eye(p, dtype=torch.double)
        model.position[:, POSITION:POSITION + 4] = scale * torch.stack(
            [torch.cos(omega * t), torch.sin(omega * t), -torch.cos(omega * t),
             -torch.sin(omega * t)], dim=1)
        for head, (lag, first) in enumerate(pieces[:n_heads]):
            c, s = math.cos(omega * lag), math.sin(omega * lag)    # rotate back by lag steps
            rotated = math.sqrt(head_dim) * scale   # cancels the 1/sqrt(d) logit scale
            block.W_Q[head, 0] = rotated * (c * cos + s * sin)       # cos(w (t - lag))
            block.W_Q[head, 1] = rotated * (c * sin - s * cos)       # sin(w (t - lag))
            block.W_K[head, 0], block.W_K[head, 1] = cos, sin
            for i in range(min(head_dim, p - first)):
                block.W_V[head, i] = sigma * reading({X + first + i: 1.0})          # x_s
                block.W_O.weight[LAGGED + (lag - 1) * p + first + i, head * head_dim + i] = 1.0
        for o in range(p):
            weights = {X + i: float(matrices[0, o, i]) for i in range(p)}
            weights.update({LAGGED + (lag - 1) * p + i: float(matrices[lag, o, i])
                            for lag in range(1, lags) for i in range(p)})
            model.out.weight[o] = sigma * reading(weights)
    return model


def exact_lag_errors(n_heads, head_dim, scales=(10, 100, 1000)):
    """The hand-built model's NMSE on the linear task at each scale (fixed sample)."""
    x = torch.randn(100, 12, study.NGRAM_DIM, dtype=torch.double,
                    generator=torch.Generator().manual_seed(0))
    y = study.ngram_target(x, study.ngram_matrices().double(), "linear")
    with torch.no_grad():
        return [study.ngram_nmse(exact_lag_model(n_heads, head_dim, scale)(x), y)
                for scale in scales]


@pytest.mark.parametrize("budget, heads", [(16, 4), (32, 4), (32, 8), (32, 16), (16, 8),
                                           (64, 32)])
def test_the_exact_lag_reference_is_exact_where_the_heads_can_carry_every_lag(budget, heads):
    """Built in the model with `heads` heads of dimension budget / heads, its error falls to 0 as
    the scale grows; the reference says 0 there, and None at d = 1."""
    head_dim = budget // heads
    errors = exact_lag_errors(heads, head_dim)
    assert errors[0] > errors[1] > errors[2] and errors[2] < 1e-8, errors
    assert study.ngram_reference(budget, heads) == 0.0
    assert study.task_reference("tanh", budget, heads) == 0.0
    assert study.ngram_reference(budget, budget) is None      # d = 1: no single hard head


@pytest.mark.parametrize("budget, heads", [(16, 2), (32, 2), (8, 4)])
def test_too_few_heads_leave_a_lag_out_at_every_scale(budget, heads):
    """Fewer heads than 3 ceil(p / d) leave a piece of a lag behind: the same construction
    stays far from 0, and the reference is not 0 there."""
    assert heads < 3 * math.ceil(study.NGRAM_DIM / (budget // heads))
    assert min(exact_lag_errors(heads, budget // heads)) > 0.05
    assert study.ngram_reference(budget, heads) != 0.0


@pytest.mark.parametrize("lag", [1, 2, 3])
def test_a_rank_1_score_attends_exactly_to_lag_1_and_to_no_longer_lag(lag):
    """d = 1: the score is a_t b_s, and as its scale grows a head attends to the largest b_s
    among s <= t (a_t > 0) or the smallest (a_t < 0; a_t = 0 is uniform). Over every strict
    order of b_0 ... b_{T-1} and every sign of a_t (T = lag + 3), some choice picks s = t - lag
    at every t >= lag only for lag 1; there a_t = (-1)^(t+1), b_s = (-1)^s s does it, through
    the model's own softmax and causal mask. So no single d = 1 head, in the hard limit of a
    large scale, carries lag 2 or 3 exactly; combinations of soft heads are not covered."""
    import itertools
    seq_len = lag + 3

    def picks(rank, signs):
        return all((max if sign > 0 else min)(range(t + 1), key=rank.__getitem__) == t - lag
                   for t, sign in zip(range(lag, seq_len), signs))

    found = any(picks(rank, signs) for rank in itertools.permutations(range(seq_len))
                for signs in itertools.product((1, -1), repeat=seq_len - lag))
    assert found == (lag == 1)
    steps = torch.arange(8, dtype=torch.double)
    a, b = (-1.0) ** (steps + 1), (-1.0) ** steps * steps
    weights = helpers.attention_weights(a[:, None] * b[None, :], 50.0,
                                        mask=study.allocation.causal_mask(8))   # [T, T]
    assert torch.all(weights[torch.arange(1, 8), torch.arange(0, 7)] > 1 - 1e-12)


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
    (["--ngram-seeds", "1"], "--ngram-seeds"), (["--parts", "f"], "--parts"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("06b_ngram", flags, flag_name)


def test_a_replay_writes_what_it_recomputes_beside_the_committed_run(tmp_path):
    """`--replay results/06b_ngram_full.json` writes the d = 1 and d = 2 comparisons across
    budgets, which the committed file lacks, to a file of their own; the committed file stays
    byte for byte; the numbers are the paired log10 differences of its per-seed errors."""
    committed = ROOT / "results" / "06b_ngram_full.json"
    before = committed.read_bytes()
    conftest.run_in_process("06b_ngram", "--replay", str(committed), "--out", str(tmp_path))
    assert committed.read_bytes() == before
    written = sorted(path.name for path in (tmp_path / "results").glob("*.json"))
    assert written == ["06b_ngram_analysis_of_06b_ngram_full.json"]
    analysis = json.loads((tmp_path / "results" / written[0]).read_text(encoding="utf-8"))
    trained = json.loads(before)["ngram"]["tasks"]["linear"]
    few, many = trained["16"]["trained"]["16"]["seeds"], trained["64"]["trained"]["64"]["seeds"]
    by_hand = sum(math.log10(a / b) for a, b in zip(few, many)) / len(few)
    found = analysis["same_head_dim"]["linear"]["1"]
    assert found["H"] == [16, 64]
    assert abs(found["log10_fewest_minus_most"]["mean"] - by_hand) < 1e-12
    assert {task: set(by_d) for task, by_d in analysis["same_head_dim"].items()} == \
        {"linear": {"1", "2"}, "tanh": {"1", "2"}}
    assert analysis["same_head_dim"]["tanh"]["2"]["H"] == [8, 32]
    assert set(analysis["reference_over_trained"]) == {"linear", "tanh"}
    at_16 = trained["16"]                                  # H = 1: the reference over the mean
    assert analysis["reference_over_trained"]["linear"]["16"]["1"] == pytest.approx(
        at_16["reference"]["1"] / at_16["trained"]["1"]["mean"], rel=1e-12)
    assert set(analysis) - conftest.RUN_KEYS == {"same_head_dim", "reference_over_trained"}

"""further/06h_grouped_heads.py: the target against a slow loop, the couplings' ranks, the
grouped layer against a literal loop over its heads, the budgets, the quick run, the committed
run's verdicts against its intervals, and bad input."""
import json
import math
from pathlib import Path

import pytest
import torch

import helpers
from conftest import RUN_KEYS, assert_rejected

ROOT = Path(__file__).resolve().parent.parent

study = helpers.load_concept("06h_grouped_heads")


def test_the_couplings_have_their_ranks_and_each_half_of_the_variance():
    matrices = study.couplings()
    for token, rank in study.RANKS.items():
        assert torch.linalg.matrix_rank(matrices[token]) == rank
        assert float(matrices[token].norm() ** 2) == pytest.approx(study.DIM / 2)
    x = torch.randn(20000, 6, study.DIM, generator=torch.Generator().manual_seed(0))
    y = study.target(x, matrices)[:, study.FIRST_SCORED:]
    assert float(y.var()) == pytest.approx(1.0, rel=0.03)


def test_the_target_against_a_slow_loop():
    matrices = study.couplings()
    x = torch.randn(3, 5, study.DIM, generator=torch.Generator().manual_seed(1))
    y = study.target(x, matrices)
    for n in range(3):
        for t in range(5):
            expected = torch.zeros(study.DIM)
            for token, lag in study.LAGS.items():
                if t - lag >= 0:
                    expected += matrices[token] @ x[n, t - lag]
            torch.testing.assert_close(y[n, t], expected)


def slow_block(block, u, mask):
    """The grouped block, head by head and position by position."""
    normed = block.norm_attention(u)
    batch, seq_len, _ = u.shape
    outputs, head = [], 0
    for (H, d), W_Q, W_K, W_V in zip(block.groups, block.W_Q, block.W_K, block.W_V):
        for h in range(H):
            out = torch.zeros(batch, seq_len, d)
            for b in range(batch):
                for t in range(seq_len):
                    logits = []
                    for s in range(t + 1):
                        score = float((W_Q[h] @ normed[b, t]) @ (W_K[h] @ normed[b, s]))
                        logits.append(score / math.sqrt(d) + float(block.offset_bias[head, t - s]))
                    weights = torch.tensor(logits).softmax(dim=0)
                    out[b, t] = sum(w * (W_V[h] @ normed[b, s]) for s, w in enumerate(weights))
            outputs.append(out)
            head += 1
    u = u + block.W_O(torch.cat(outputs, dim=-1))
    return u + block.mlp(block.norm_mlp(u))


def test_the_grouped_block_against_a_loop_over_its_heads():
    torch.manual_seed(0)
    block = study.GroupedBlock(width=6, groups=[(2, 3), (1, 2)], lags=(1, 2), seq_len=5)
    with torch.no_grad():
        block.offset_bias.add_(torch.randn_like(block.offset_bias))
    u = torch.randn(2, 5, 6)
    mask = torch.arange(5)[None, :] > torch.arange(5)[:, None]
    with torch.no_grad():
        torch.testing.assert_close(block(u, mask), slow_block(block, u, mask), rtol=1e-4,
                                   atol=1e-5)


def test_each_group_starts_on_its_token_and_the_budget_is_its_sum():
    block = study.GroupedBlock(width=8, groups=[(2, 4), (2, 2)], lags=(1, 2), seq_len=6)
    start = block.offset_bias.detach()
    assert (start[:2, 1] == study.PRIOR).all() and (start[2:, 2] == study.PRIOR).all()
    assert int((start != 0).sum()) == 4                                    # nothing else
    assert block.W_O.in_features == study.attention_budget([(2, 4), (2, 2)]) == 12
    free = study.GroupedBlock(width=8, groups=[(2, 3), (2, 3)], lags=(1, 2), seq_len=6, prior=0)
    assert int((free.offset_bias != 0).sum()) == 0
    for budget in (6, 12, 18):                       # every allocation spends the whole budget
        for name in study.HEAD_DIMS:
            assert study.attention_budget(study.groups_of(name, budget)) == budget


def test_the_shares_read_the_weight_on_each_token_s_offset():
    """A model whose groups attend only to their token (a huge bias) has shares 1 and 0."""
    model = study.GroupedModel([(1, 4), (1, 2)], width=8, seq_len=6, prior=50.0)
    x = torch.randn(4, 6, study.DIM)
    with torch.no_grad():
        shares = study.attention_shares(model, x)
    assert shares["hard"]["hard"] == pytest.approx([1.0], abs=1e-6)
    assert shares["easy"]["easy"] == pytest.approx([1.0], abs=1e-6)
    assert shares["hard"]["easy"] == pytest.approx([0.0], abs=1e-6)
    assert study.focus(shares) == pytest.approx(1.0, abs=1e-6)


def test_main_quick(notebook_run):
    args = study.config(["--quick"])
    result = notebook_run("06h_grouped_heads")
    assert set(result) - RUN_KEYS == {"grouped"}
    for budget in args.budgets:
        entry = result["grouped"]["budgets"][str(budget)]
        assert set(entry["allocations"]) == set(study.HEAD_DIMS)
        for name, found in entry["allocations"].items():
            assert len(found["valid_nmse"]["seeds"]) == args.seeds
            assert ("keeps_to_its_token" in found) == (name != study.FREE)
        assert len(entry["paired"]) == 3


def test_the_committed_verdicts_follow_their_intervals():
    path = ROOT / "results" / "06h_grouped_heads.json"
    grouped = json.loads(path.read_text(encoding="utf-8"))["grouped"]
    for entry in grouped["budgets"].values():
        for difference in entry["paired"].values():
            low, high = difference["ci95"]
            assert len(difference["per_seed"]) >= 5
            assert (difference["verdict"] == "no clear difference") == (low <= 0 <= high)


@pytest.mark.parametrize("flags, flag_name", [
    (["--budgets", "8"], "--budgets"), (["--seeds", "1"], "--seeds"), (["--T", "2"], "--T"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("06h_grouped_heads", flags, flag_name)

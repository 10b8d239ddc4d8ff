"""06_allocation.py: equal budgets, the tasks, the mask, the block against a slow loop.
(Study 06g's fixed budget is tested in test_06g_fixed_budget.py.)"""
import json
import math
from pathlib import Path

import pytest
import torch

import helpers
import plumbing
from conftest import RUN_KEYS, assert_rejected, run_quick

ROOT = Path(__file__).resolve().parent.parent

allocation = helpers.load_concept("06_allocation")


def slow_attention(block, u):
    """Causal multi-head attention with loops over batch, heads, queries and keys."""
    batch, seq_len, _ = u.shape
    out = torch.zeros(batch, seq_len, block.n_heads * block.head_dim)
    for b in range(batch):
        for h in range(block.n_heads):
            for t in range(seq_len):
                q = block.W_Q[h] @ u[b, t]
                scores = [float(q @ (block.W_K[h] @ u[b, s])) / math.sqrt(block.head_dim)
                          for s in range(t + 1)]                      # only s <= t (causal)
                total = sum(math.exp(v) for v in scores)
                value = sum(math.exp(v) / total * (block.W_V[h] @ u[b, s])
                            for s, v in enumerate(scores))
                out[b, t, h * block.head_dim:(h + 1) * block.head_dim] = value
    return block.W_O(out)


@pytest.mark.parametrize("heads, head_dim", [(1, 4), (3, 2), (4, 5)])
def test_block_attention_equals_a_slow_loop(heads, head_dim):
    torch.manual_seed(0)
    block = allocation.Block(width=8, n_heads=heads, head_dim=head_dim)
    u = torch.randn(2, 5, 8)
    with torch.no_grad():
        future = torch.ones(5, 5, dtype=torch.bool).triu(1)                # the causal mask
        torch.testing.assert_close(block.attention(u, future), slow_attention(block, u),
                                   rtol=1e-4, atol=1e-5)


def test_block_is_causal():
    """Changing the input at position 4 leaves the outputs before it as they were."""
    torch.manual_seed(0)
    block = allocation.Block(width=8, n_heads=2, head_dim=4)
    u = torch.randn(1, 6, 8)
    changed = u.clone()
    changed[0, 4] += 1
    with torch.no_grad():
        mask = allocation.causal_mask(6)
        torch.testing.assert_close(block(u, mask)[0, :4], block(changed, mask)[0, :4])
        assert not torch.allclose(block(u, mask)[0, 4], block(changed, mask)[0, 4])


def test_block_without_a_mask_sees_every_position():
    """Lesson 07 stacks the block with no mask: the first position then sees the last."""
    torch.manual_seed(0)
    block = allocation.Block(8, 2, 4)
    u = torch.randn(1, 5, 8)
    changed = u.clone()
    changed[0, -1] = torch.randn(8)  # a new last token (a constant shift would vanish in LN)
    with torch.no_grad():
        assert not torch.allclose(block(u, None)[0, 0], block(changed, None)[0, 0])


def test_compared_allocations_have_exactly_equal_budgets():
    for rich in (4, 6, 8, 16):
        compared = allocation.allocations(rich, 2)
        budgets = {name: allocation.attention_budget(layers) for name, layers in compared.items()}
        assert budgets["front-loaded"] == budgets["back-loaded"]
        assert budgets["front-reduced"] < budgets["front-loaded"]


def test_the_tasks_targets_by_slow_loops():
    x, y = allocation.match_aggregate_task(4, 6, 3, seed=0)
    for n in range(4):
        total = 0.0
        for t in range(1, 6):
            partner = [s for s in range(t) if torch.allclose(x[n, s, :3], x[n, t, 3:6])]
            assert partner                                                  # an earlier token
            total += float(x[n, partner[0], -1])                           # v_pi(t)
        assert float(y[n]) == pytest.approx(total / math.sqrt(5), abs=1e-5)
    x, y = allocation.prefix_match_task(4, 6, 3, seed=0)
    for n in range(4):
        s = [t for t in range(5) if torch.allclose(x[n, t, :3], x[n, -1, :3])][0]
        expected = sum(float(x[n, t, -1]) for t in range(s + 1)) / math.sqrt(s + 1)
        assert float(y[n]) == pytest.approx(expected, abs=1e-5)


def test_paired_statistics_on_known_numbers():
    table = {"front-loaded": [1.0, 2.0, 3.0, 4.0, 5.0], "back-loaded": [2.0, 3.0, 4.0, 5.0, 6.0],
             "uniform": [1.0, 3.0, 2.0, 5.0, 4.0]}
    result = helpers.load_concept("06a_text_allocation").paired(table)   # 06a's pairs
    same = result["front-loaded - back-loaded"]
    assert same["mean"] == -1.0 and same["ci95"] == [-1.0, -1.0]   # constant difference
    assert same["verdict"] == "front-loaded better"
    noisy = result["front-loaded - uniform"]                        # 0, -1, 1, -1, 1
    half = helpers.t_quantile(4) * math.sqrt(4 / 4) / math.sqrt(5)     # sample variance 1
    assert noisy["ci95"] == pytest.approx([-half, half], abs=1e-9)
    assert noisy["verdict"] == "no clear difference"


@pytest.mark.parametrize("seq_len", [1, 5, 8])
def test_causal_mask_against_a_loop(seq_len):
    """Position t may look at s iff s <= t."""
    mask = allocation.causal_mask(seq_len)
    for t in range(seq_len):
        for s in range(seq_len):
            assert bool(mask[t, s]) == (s > t)


def test_main_quick(notebook_run):
    args = allocation.config(["--quick"])
    result = notebook_run("06_allocation")   # the --quick run, as its notebook executes it
    assert set(result) - RUN_KEYS == {"comparison"}
    for task, entry in result["comparison"].items():
        for allocated in entry["allocations"].values():     # the budget, from the layers
            assert allocated["budget"] == sum(h * d for h, d in allocated["layers"])
        budgets = {name: a["budget"] for name, a in entry["allocations"].items()}
        assert budgets["front-loaded"] == budgets["back-loaded"]
        assert budgets["front-reduced"] < budgets["front-loaded"]   # thinner late layer
        assert all(len(a["seeds"]) == args.seeds for a in entry["allocations"].values())


@pytest.mark.parametrize("flags, flag_name", [
    (["--fixed-heads", "1,4,8"], "--fixed-heads"),  # a flag of study 06g's, not the lesson's
    (["--key-dim", "2"], "--key-dim"), (["--T", "2"], "--T"),
    (["--seeds", "1"], "--seeds"),
    (["--device", "no-such-device"], "--device"),
    (["--ab-budget", "12", "--layers-n", "3"], "--ab-budget"),  # flags of the old version
    (["--text-seeds", "2"], "--text-seeds"),     # a flag of 06a's, not of this file's
    (["--parts", "allocations,x"], "--parts"), (["--parts", "b"], "--parts"),
    (["--parts", ""], "--parts"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("06_allocation", flags, flag_name)


@pytest.mark.parametrize("layers", [[(4, 8)], [(2, 5), (2, 5)], [(2, 8), (1, 2)]])
def test_last_position_shortcut_is_the_same_function(layers):
    """The model computes only the last position in its last block; every block computing
    every position must give the same answer at the last one."""
    torch.manual_seed(0)
    model = allocation.AllocatedTransformer(layers, width=8, seq_len=6, token_dim=5)
    x = torch.randn(3, 6, 5)
    with torch.no_grad():
        u = model.embed(x) + model.position
        for block in model.blocks:
            u = block(u, model.mask)                     # every position, the full computation
        full = model.out(model.norm(u))[:, -1, 0]
        torch.testing.assert_close(model(x), full)

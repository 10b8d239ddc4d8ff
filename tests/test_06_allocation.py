"""06_allocation.py: equal budgets, allocate() rules, the fit, the block against a slow loop."""
import json
import math

import pytest
import torch

import helpers
from conftest import assert_rejected

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


def test_model_is_causal():
    torch.manual_seed(0)
    model = allocation.AllocatedTransformer([(2, 4), (3, 2)], width=8, seq_len=6, vocab=10)
    x = torch.randint(10, (1, 6))
    changed = x.clone()
    changed[0, 4] = (x[0, 4] + 1) % 10
    with torch.no_grad():
        torch.testing.assert_close(model(x)[0, :4], model(changed)[0, :4])


@pytest.mark.parametrize("budget, layers_n, D, seq_len", [
    (48, 3, 4, 16), (96, 4, 4, 64), (256, 6, 8, 512), (10, 2, 3, 8), (7, 1, 7, 32)])
def test_allocate_follows_its_rules(budget, layers_n, D, seq_len):
    layers = allocation.allocate(budget, layers_n, D, seq_len)
    assert len(layers) == layers_n
    assert layers[0][0] == D                                   # the extraction layer: D heads
    assert all(later[1] <= layers[0][1] for later in layers[1:])  # later: smaller head dims
    assert allocation.attention_budget(layers) <= budget
    smallest_head = min(h * d for h, d in layers) if layers_n == 1 else min(d for _, d in layers)
    assert budget - allocation.attention_budget(layers) < layers_n * max(smallest_head, 1) + D


def test_allocate_halves_late_heads_again_on_long_sequences():
    short = allocation.allocate(256, 4, 4, 64)
    long = allocation.allocate(256, 4, 4, 1024)
    assert long[1][1] < short[1][1]


def test_budgets_too_small_are_rejected():
    with pytest.raises(ValueError, match="too small"):
        allocation.allocate(5, 3, 4, 32)


def test_compared_allocations_have_equal_budgets_within_one_head(quick_args):
    for budget, layers_n in [(48, 3), (24, 2), (100, 4)]:
        args = quick_args(allocation, "--ab-budget", str(budget), "--layers-n", str(layers_n))
        compared = allocation.allocations(args)
        budgets = [allocation.attention_budget(layers) for layers in compared.values()]
        largest_head = max(d for layers in compared.values() for _, d in layers)
        assert max(budgets) - min(budgets) <= largest_head


def test_fit_recovers_known_parameters():
    A, a, B, b, budget = 2.0, 1.0, 0.5, 1.5, 64
    heads = [1, 2, 4, 8, 16, 32, 64]
    errors = [A * h ** -a + B * (budget / h) ** -b for h in heads]
    fit = allocation.fit_tradeoff(heads, errors, budget)
    assert fit["a"] == pytest.approx(a, rel=0.05) and fit["b"] == pytest.approx(b, rel=0.05)
    assert fit["A"] == pytest.approx(A, rel=0.1) and fit["B"] == pytest.approx(B, rel=0.1)
    expected = (a * A / (b * B)) ** (1 / (a + b)) * budget ** (b / (a + b))
    assert fit["H_star"] == pytest.approx(expected, rel=0.1)


def test_text_encoding_and_stdlib_corpus():
    text = allocation.stdlib_docstrings()
    assert len(text) > 100_000 and text == allocation.stdlib_docstrings()  # deterministic
    ids, alphabet = allocation.encode_text("ab\né")
    assert [alphabet[i] for i in ids.tolist()] == ["a", "b", "\n", "?"]


def test_main_quick(quick_args, tmp_path):
    result = allocation.main(quick_args(allocation, "--workers", "2"))
    json.dumps(result)
    assert set(result["text_bpc"]) == {"uniform", "front-loaded", "back-loaded"}
    assert all(b < 7 for values in result["text_bpc"].values() for b in values)  # < log2(96)
    rows = allocation.closing_table(result, {})
    assert all({"rule", "evidence", "strength"} <= set(row) for row in rows)


@pytest.mark.parametrize("flags, flag_name", [
    (["--ab-budget", "3"], "--ab-budget"), (["--fixed-heads", "3", "--budget", "32"],
                                            "--fixed-heads"),
    (["--layers-n", "1"], "--layers-n"), (["--text", "/no/such/file"], "--text"),
    (["--text", __file__, "--T", "100000"], "--text"),
    (["--device", "no-such-device"], "--device"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("06_allocation", flags, flag_name)

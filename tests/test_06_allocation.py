"""06_allocation.py: equal budgets, allocate() rules, the masks, the block against a slow loop."""
import math

import pytest
import torch

import helpers
import plumbing
from conftest import RUN_KEYS, assert_rejected, run_quick

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
    (48, 3, 4, 16), (96, 4, 4, 64), (256, 6, 8, 512), (10, 2, 3, 8), (7, 1, 7, 32),
    (20, 5, 1, 16), (5, 3, 3, 8)])
def test_allocate_follows_its_rules(budget, layers_n, D, seq_len):
    layers = allocation.allocate(budget, layers_n, D)
    assert len(layers) == layers_n
    assert layers[0][0] == D                                   # the extraction layer: D heads
    assert all(later[1] <= layers[0][1] for later in layers[1:])  # later: no larger head dims
    assert allocation.attention_budget(layers) <= budget


def test_allocate_never_exceeds_its_budget_on_a_grid():
    """Including small budgets spread over many layers (e.g. allocate(20, 5, 1))."""
    checked = 0
    for budget in range(1, 200):
        for n_layers in range(1, 9):
            for D in range(1, 17):
                if budget < D + n_layers - 1:
                    with pytest.raises(ValueError, match=f"minimum .* is {D + n_layers - 1}"):
                        allocation.allocate(budget, n_layers, D)
                    continue
                layers = allocation.allocate(budget, n_layers, D)
                assert allocation.attention_budget(layers) <= budget, (budget, n_layers, D)
                assert all(isinstance(h, int) and isinstance(d, int) and h >= 1 and d >= 1
                           for h, d in layers)
                checked += 1
    assert checked > 10_000


@pytest.mark.parametrize("bad", [20.0, 20.5, "20", True, 0, -3])
def test_allocate_takes_whole_numbers_only(bad):
    with pytest.raises(ValueError, match="whole number"):
        allocation.allocate(bad, 2, 1)
    with pytest.raises(ValueError, match="whole number"):
        allocation.allocate(20, 2, bad)


def test_compared_allocations_have_exactly_equal_budgets():
    for rich in (4, 6, 8, 16):
        compared = allocation.allocations(rich, 2)
        budgets = {name: allocation.attention_budget(layers) for name, layers in compared.items()}
        assert budgets["uniform"] == budgets["front-loaded"] == budgets["back-loaded"]
        assert budgets["front-reduced"] < budgets["uniform"]


def test_recall_target_by_a_slow_loop():
    x, y, (keys, values, queries) = allocation.recall_task(5, 6, 3, 2, seed=0)
    assert x.shape == (5, 7, 3 * 3 + 2)
    for n in range(5):
        expected = 0.0
        for m in range(2):
            query = x[n, -1, 3 * (m + 1):3 * (m + 2)]
            match = [s for s in range(6) if torch.allclose(x[n, s, :3], query)]
            assert len(match) == 1                                          # an exact copy
            angle = (m + 1) * math.pi / 2
            expected += math.cos(angle) * float(x[n, match[0], -2]) + math.sin(angle) * float(
                x[n, match[0], -1])
        assert float(y[n]) == pytest.approx(expected, abs=1e-5)


def test_recall_oracle_is_a_u_with_its_minimum_at_M():
    x, y, parts = allocation.recall_task(2000, 16, 8, 4, seed=1)
    oracle = {H: allocation.recall_oracle(parts, y, H) for H in (1, 2, 4, 8, 16, 32)}
    assert min(oracle, key=oracle.get) == 4
    assert oracle[4] < 0.01
    assert oracle[1] > oracle[2] > oracle[4] < oracle[8] < oracle[16] < oracle[32]


def test_part_b_targets_by_slow_loops():
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


@pytest.mark.parametrize("task", ["match-aggregate", "prefix-match"])
def test_no_match_baseline_is_the_best_linear_prediction_from_the_values(task):
    """E[y | values] is linear in the values, so least squares on them must find the same NMSE."""
    baseline = allocation.no_match_baseline(task, 20000, 8, 4, seed=3)
    x, y = allocation.TASKS[task](20000, 8, 4, seed=3)
    features = torch.cat([x[:, :, -1], torch.ones(len(y), 1)], dim=1).double()
    fitted = features @ torch.linalg.lstsq(features, y.double()[:, None]).solution[:, 0]
    assert baseline == pytest.approx(helpers.nmse(fitted, y.double()), abs=0.01)
    assert 0.1 < baseline < 0.9                      # values alone explain part of y, not all


def test_paired_statistics_on_known_numbers():
    table = {"front-loaded": [1.0, 2.0, 3.0, 4.0, 5.0], "back-loaded": [2.0, 3.0, 4.0, 5.0, 6.0],
             "uniform": [1.0, 3.0, 2.0, 5.0, 4.0]}
    result = allocation.paired(table)
    same = result["front-loaded - back-loaded"]
    assert same["mean"] == -1.0 and same["ci95"] == [-1.0, -1.0]   # constant difference
    assert same["verdict"] == "front-loaded better"
    noisy = result["front-loaded - uniform"]                        # 0, -1, 1, -1, 1
    half = helpers.t_quantile(4) * math.sqrt(4 / 4) / math.sqrt(5)     # sample variance 1
    assert noisy["ci95"] == pytest.approx([-half, half], abs=1e-9)
    assert noisy["verdict"] == "no clear difference"


@pytest.mark.parametrize("seq_len, n_layers, context", [(6, 1, None), (6, 2, 3), (7, 1, 3),
                                                         (8, 2, 5), (5, 3, 4)])
def test_causal_mask_against_a_loop(seq_len, n_layers, context):
    """Position t may look at s in one layer iff s <= t and, with a context, t - s < w."""
    mask = allocation.causal_mask(seq_len, n_layers, context)
    w = seq_len if context is None else (context - 1) // n_layers + 1
    for t in range(seq_len):
        for s in range(seq_len):
            assert bool(mask[t, s]) == (not (s <= t and t - s < w))


def test_context_limit_is_not_a_whole_number_of_hops():
    with pytest.raises(ValueError, match="context of 4"):
        allocation.causal_mask(6, 2, 4)


@pytest.mark.parametrize("context", [None, 3])
def test_limited_model_sees_exactly_the_last_characters(context):
    """Perturb each input character: the output at t changes iff s is among the last `context`
    characters up to t (all of 0 .. t without a limit): the receptive field of the stack."""
    torch.manual_seed(0)
    seq_len = 8
    model = allocation.AllocatedTransformer([(2, 5), (2, 5)], width=8, seq_len=seq_len, vocab=10,
                                            context=context)
    x = torch.randint(10, (1, seq_len))
    with torch.no_grad():
        base = model(x)[0]
        for s in range(seq_len):
            changed = x.clone()
            changed[0, s] = (x[0, s] + 1) % 10
            moved = (model(changed)[0] - base).abs().amax(dim=-1) > 1e-6     # [T]
            for t in range(seq_len):
                seen = s <= t and (context is None or t - s < context)
                assert bool(moved[t]) == seen, (s, t)


def test_main_quick(notebook_run):
    args = allocation.config(["--quick"])
    result = notebook_run("06_allocation")   # the --quick run, as its notebook executes it
    assert set(result) - RUN_KEYS == {"fixed_budget", "comparison", "allocate_tables", "rules"}
    for task, entry in result["comparison"].items():
        for allocated in entry["allocations"].values():     # the budget, from the layers
            assert allocated["budget"] == sum(h * d for h, d in allocated["layers"])
        budgets = {name: a["budget"] for name, a in entry["allocations"].items()}
        assert budgets["uniform"] == budgets["front-loaded"] == budgets["back-loaded"]
        assert budgets["front-reduced"] < budgets["front-loaded"]   # thinner late layer
        assert all(len(a["seeds"]) == args.seeds for a in entry["allocations"].values())
    assert set(result["fixed_budget"]["oracle"]) == set(map(str, args.fixed_heads))
    assert result["fixed_budget"]["best_H_oracle"] in args.fixed_heads
    assert len(result["fixed_budget"]["best_H_per_seed"]) == args.fixed_seeds
    # e: a's row, then b's 3 rules on each task; no text rule (06a reads text)
    rows, fixed = result["rules"], result["fixed_budget"]
    assert len(rows) == 1 + 2 * 3
    assert rows[0]["rule"] == allocation.FIXED_BUDGET_RULE
    at_M = {*fixed["best_H_per_seed"], fixed["best_H_oracle"]} == {fixed["M"]}
    assert rows[0]["strength"] == ("lowest at H = M" if at_M else "not only at H = M")
    assert rows[0]["strength"] in rows[0]["evidence"]
    assert not any("text" in row["evidence"] or "characters" in row["rule"] for row in rows)
    pairs = [pair for entry in result["comparison"].values() for key, pair in
             entry["paired"].items() if key in allocation.RULES]
    assert len(pairs) == len(rows) - 1
    for row, pair in zip(rows[1:], pairs):    # each rule's strength is its interval's verdict
        low, high = pair["ci95"]
        assert row["strength"] == pair["verdict"]
        assert (pair["verdict"] == "no clear difference") == (low <= 0 <= high)
        assert f"{pair['mean']:+.3f} [{low:+.3f}, {high:+.3f}]" in row["evidence"]


def test_the_fixed_budget_row_follows_where_each_curve_is_lowest():
    fixed = {"M": 4, "best_H_per_seed": [4, 4], "best_H_oracle": 4}
    assert allocation.fixed_budget_row(fixed)["strength"] == "lowest at H = M"
    for moved in ({"best_H_per_seed": [4, 8]}, {"best_H_oracle": 2}):
        assert allocation.fixed_budget_row({**fixed, **moved})["strength"] == "not only at H = M"


def test_parts_runs_only_what_it_names(quick_args, tmp_path):
    """--parts b trains part b alone; part e reads whichever parts ran."""
    result = run_quick("06_allocation", tmp_path, "--parts", "b,e", "--workers", "2",
                       "--steps", "2")
    assert set(result) - RUN_KEYS == {"comparison", "allocate_tables", "rules"}
    assert {row["evidence"].split(":")[0] for row in result["rules"]} == set(allocation.TASKS)
    args = quick_args(allocation, "--parts", "a")
    assert args.parts == ["a"]
    assert plumbing.output_suffix(args, allocation.PARTS) == "_quick_parts_a"


@pytest.mark.parametrize("flags, flag_name", [
    (["--fixed-heads", "3,4,8"], "--fixed-heads"), (["--fixed-heads", "1,4"], "--fixed-heads"),
    (["--key-dim", "5"], "--key-dim"), (["--memory", "1"], "--memory"), (["--T", "2"], "--T"),
    (["--seeds", "1"], "--seeds"),
    (["--device", "no-such-device"], "--device"),
    (["--ab-budget", "12", "--layers-n", "3"], "--ab-budget"),  # flags of the old version
    (["--text-seeds", "2"], "--text-seeds"),     # a flag of 06a's, not of this file's
    (["--parts", "b,x"], "--parts"), (["--parts", "c"], "--parts"), (["--parts", ""], "--parts"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("06_allocation", flags, flag_name)


@pytest.mark.parametrize("layers", [[(4, 8)], [(2, 5), (2, 5)], [(2, 8), (1, 2)]])
def test_last_position_shortcut_is_the_same_function(layers):
    """The regression model computes only the last position in its last block; a language model
    with the same weights computes every position: the last one must agree."""
    torch.manual_seed(0)
    model = allocation.AllocatedTransformer(layers, width=8, seq_len=6, token_dim=5)
    x = torch.randn(3, 6, 5)
    with torch.no_grad():
        model.language_model = True                      # every position, the full computation
        full = model(x)[:, -1, 0]
        model.language_model = False                     # the shortcut
        torch.testing.assert_close(model(x), full)

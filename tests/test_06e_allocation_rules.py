"""further/06e_allocation_rules.py: allocate() follows its rules and its budget, and each rule's
row carries the verdict of the lesson's numbers behind it."""
import pytest

import helpers
from conftest import RUN_KEYS, assert_rejected, run_quick

study = helpers.load_concept("06e_allocation_rules")
allocation = helpers.load_concept("06_allocation")


@pytest.mark.parametrize("budget, layers_n, D, seq_len", [
    (48, 3, 4, 16), (96, 4, 4, 64), (256, 6, 8, 512), (10, 2, 3, 8), (7, 1, 7, 32),
    (20, 5, 1, 16), (5, 3, 3, 8)])
def test_allocate_follows_its_rules(budget, layers_n, D, seq_len):
    layers = study.allocate(budget, layers_n, D)
    assert len(layers) == layers_n
    assert layers[0][0] == D                                   # the extraction layer: D heads
    assert all(later[1] <= layers[0][1] for later in layers[1:])  # later: no larger head dims
    assert allocation.attention_budget(layers) <= budget


def test_allocate_does_what_its_text_says():
    """Rule 2: d_1 = min(budget / 2, budget - n + 1) // D; rule 3: each later layer an equal
    share of what is left, heads of dimension min(d_1 // 2, share), as many as fit."""
    assert study.allocate(20, 5, 1) == [(1, 10), (1, 2), (1, 2), (1, 3), (1, 3)]
    for budget, n_layers, D in [(48, 3, 4), (96, 4, 4), (256, 6, 8), (20, 5, 1), (31, 4, 3)]:
        layers = study.allocate(budget, n_layers, D)
        first_dim = max(1, min(budget // 2, budget - n_layers + 1) // D)
        assert layers[0] == (D, first_dim)
        rest = budget - D * first_dim
        for index, (heads, head_dim) in enumerate(layers[1:]):
            share = rest // (n_layers - 1 - index)
            assert head_dim == min(max(1, first_dim // 2), share)
            assert heads == share // head_dim
            rest -= heads * head_dim


def test_allocate_never_exceeds_its_budget_on_a_grid():
    """Including small budgets spread over many layers (e.g. allocate(20, 5, 1))."""
    checked = 0
    for budget in range(1, 200):
        for n_layers in range(1, 9):
            for D in range(1, 17):
                if budget < D + n_layers - 1:
                    with pytest.raises(ValueError, match=f"minimum .* is {D + n_layers - 1}"):
                        study.allocate(budget, n_layers, D)
                    continue
                layers = study.allocate(budget, n_layers, D)
                assert allocation.attention_budget(layers) <= budget, (budget, n_layers, D)
                assert all(isinstance(h, int) and isinstance(d, int) and h >= 1 and d >= 1
                           for h, d in layers)
                checked += 1
    assert checked > 10_000


@pytest.mark.parametrize("bad", [20.0, 20.5, "20", True, 0, -3])
def test_allocate_takes_whole_numbers_only(bad):
    with pytest.raises(ValueError, match="whole number"):
        study.allocate(bad, 2, 1)
    with pytest.raises(ValueError, match="whole number"):
        study.allocate(20, 2, bad)


def test_the_fixed_budget_row_follows_where_each_curve_is_lowest():
    fixed = {"M": 4, "best_H_per_seed": [4, 4]}
    assert study.fixed_budget_row(fixed)["strength"] == "lowest at H = M"
    for moved in ({"best_H_per_seed": [4, 8]}, {"best_H_per_seed": [2, 2]}):
        assert study.fixed_budget_row({**fixed, **moved})["strength"] == "not only at H = M"


def test_main_quick(tmp_path):
    """The rules read against the committed runs: study 06g's row, then the lesson's 2 rules on
    each task, each rule's strength its interval's verdict."""
    result = run_quick("06e_allocation_rules", tmp_path)
    assert set(result) - RUN_KEYS == {"allocate_tables", "rules"}
    assert result["allocate_tables"]["budget=20 layers=5 D=1"] == [[1, 10], [1, 2], [1, 2],
                                                                   [1, 3], [1, 3]]
    import json
    committed = json.loads(study.COMMITTED_EVIDENCE.read_text(encoding="utf-8"))
    budget = json.loads(study.COMMITTED_BUDGET.read_text(encoding="utf-8"))
    rows, fixed = result["rules"], budget["fixed_budget"]
    assert len(rows) == 1 + 2 * 2          # the uniform allocation is not in the lesson's run
    assert rows[0]["rule"] == study.FIXED_BUDGET_RULE
    at_M = set(fixed["best_H_per_seed"]) == {fixed["M"]}
    assert rows[0]["strength"] == ("lowest at H = M" if at_M else "not only at H = M")
    assert rows[0]["strength"] in rows[0]["evidence"]
    assert not any("text" in row["evidence"] or "characters" in row["rule"] for row in rows)
    pairs = [pair for entry in committed["comparison"].values() for key, pair in
             entry["paired"].items() if key in study.RULES]
    assert len(pairs) == len(rows) - 1
    for row, pair in zip(rows[1:], pairs):    # each rule's strength is its interval's verdict
        low, high = pair["ci95"]
        assert row["strength"] == pair["verdict"]
        assert (pair["verdict"] == "no clear difference") == (low <= 0 <= high)
        assert f"{pair['mean']:+.3f} [{low:+.3f}, {high:+.3f}]" in row["evidence"]


def test_only_the_parts_that_ran_give_rows():
    """The lesson's run without a fixed budget beside it gives the lesson's rows only."""
    comparison = {"match-aggregate": {"paired": {
        "front-loaded - back-loaded": helpers.paired_difference([-0.1, -0.2, -0.15])}}}
    rows = study.closing_table({"comparison": comparison}, {})
    assert [row["rule"] for row in rows] == [study.RULES["front-loaded - back-loaded"]]
    assert rows[0]["strength"] == "below 0"


@pytest.mark.parametrize("flags, flag_name", [
    (["--evidence", "/no/such/file.json"], "--evidence"),
    (["--budget-evidence", "/no/such/file.json"], "--budget-evidence"),
    (["--seed", "x"], "--seed")])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("06e_allocation_rules", flags, flag_name)

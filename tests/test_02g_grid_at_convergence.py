"""further/02g_grid_at_convergence.py: the three statistics of a drop and the reversal score's
bootstrap against slow loops, the stopping budget on hand-made rows, and its quick run on the
committed files."""
import itertools
import math
import statistics

import pytest

import helpers
from conftest import RUN_KEYS, run_quick

study = helpers.load_concept("02g_grid_at_convergence")
variants = helpers.load_concept("02d_variants")


def row(h, steps, values, T=8, train=None):
    """A hand-made row of study 02e: one validation NMSE per seed (last = best)."""
    train = train or values
    return {"part": "budget", "T": T, "h": h, "steps": steps, "batch_size": 64, "lr": 1e-2,
            "per_seed": [{"seed": s, "last": v, "best": v, "best_step": steps, "train": t,
                          "curve": []} for s, (v, t) in enumerate(zip(values, train))]}


def test_a_drop_is_three_statistics_each_as_its_definition():
    fewer = {0: 4e-3, 1: 1e-3, 2: 2e-3}
    more = {0: 1e-5, 1: 4e-5, 2: 1e-5}
    found = study.drop(fewer, more, T=8, h=3)
    assert found["ratio_of_means"] == pytest.approx(
        (sum(fewer.values()) / 3) / (sum(more.values()) / 3))
    assert found["ratio_of_minima"] == pytest.approx(1e-3 / 1e-5)
    per_seed = [fewer[s] / more[s] for s in range(3)]
    geometric = math.prod(per_seed) ** (1 / 3)
    assert found["paired"]["geometric_mean"] == pytest.approx(geometric)
    low, high = found["paired"]["ci95"]
    assert low < geometric < high
    logs = [math.log10(r) for r in per_seed]
    half = helpers.t_quantile(2) * statistics.stdev(logs) / math.sqrt(3)
    assert math.log10(high) - math.log10(low) == pytest.approx(2 * half)
    table_2, table_3 = study.model.PAPER_TABLE_2, study.engine.PAPER_TABLE_3
    assert found["paper_ratio_of_means"] == pytest.approx(table_2[3][8] / table_2[4][8])
    assert found["paper_ratio_of_minima"] == pytest.approx(table_3[3][8] / table_3[4][8])
    assert study.drop(fewer, more, T=9, h=3)["paper_ratio_of_means"] is None


def test_the_stopping_budget_is_02e_rule_on_h_equal_D():
    """Falling from 100 to 300 steps in every seed, then flat: it stops at 300; still falling at
    the largest budget: the largest, marked as still falling."""
    flat = [row(4, 100, [1e-3, 2e-3, 3e-3]), row(4, 300, [1e-5, 2e-5, 3e-5]),
            row(4, 900, [1.1e-5, 1.9e-5, 3.2e-5])]
    assert study.stopping_budget(flat, 8) == (300, False)
    falling = [row(4, 100, [1e-3, 2e-3, 3e-3]), row(4, 300, [1e-5, 2e-5, 3e-5])]
    assert study.stopping_budget(falling, 8) == (300, True)


def test_a_row_in_two_files_is_taken_from_the_first(tmp_path):
    import json
    first = {"budget": {"rows": [row(4, 100, [1.0, 2.0])]}}
    second = {"budget": {"rows": [row(4, 100, [5.0, 6.0]), row(3, 100, [7.0, 8.0])]}}
    paths = []
    for index, numbers in enumerate((first, second)):
        paths.append(tmp_path / f"{index}.json")
        paths[-1].write_text(json.dumps(numbers), encoding="utf-8")
    rows = study.read_rows(paths)
    assert sorted((r["h"], r["per_seed"][0]["last"]) for r in rows) == [(3, 7.0), (4, 1.0)]


def test_the_gap_is_validation_over_training_per_seed():
    found = study.gap(row(4, 100, [4e-6, 9e-6], train=[1e-6, 1e-6]))
    assert found["ratio_of_means"] == pytest.approx(6.5e-6 / 1e-6)
    assert found["paired"]["geometric_mean"] == pytest.approx(math.sqrt(4 * 9))


def test_the_reversal_bootstrap_against_every_resample_by_hand():
    """With 2 seeds per T, each resample is one of 3 multisets per T; the bootstrap's percentiles
    lie within the range of R over every combination of them, and its point is R of the means."""
    grid = {8: {0: 3e-3, 1: 1e-3}, 32: {0: 2e-3, 1: 4e-3}, 128: {0: 1e-3, 1: 5e-3}}
    found = study.reversal(grid, 3, resamples=400, seed=0)["from_mean"]
    means = [statistics.mean(grid[T].values()) for T in sorted(grid)]
    assert found["value"] == pytest.approx(variants.reversal_score(means))
    choices = [[statistics.mean(pick) for pick in
                itertools.combinations_with_replacement(grid[T].values(), 2)] for T in sorted(grid)]
    every = [variants.reversal_score(list(c)) for c in itertools.product(*choices)]
    assert min(every) - 1e-12 <= found["ci95"][0] <= found["ci95"][1] <= max(every) + 1e-12
    table_2 = study.model.PAPER_TABLE_2
    assert found["paper"] == pytest.approx(
        variants.reversal_score([table_2[3][T] for T in sorted(grid)]))


def test_identical_seeds_give_an_interval_of_one_point():
    grid = {8: {0: 2e-3, 1: 2e-3, 2: 2e-3}, 32: {0: 1e-3, 1: 1e-3, 2: 1e-3}}
    for kind in ("from_mean", "from_min"):
        found = study.reversal(grid, 4, resamples=50, seed=1)[kind]
        assert found["ci95"] == [found["value"], found["value"]] == [1.0, 1.0]


def test_quick_run_on_the_committed_files(tmp_path):
    result = run_quick("02g_grid_at_convergence", tmp_path)
    assert RUN_KEYS <= set(result)
    assert result["provenance"]["inputs"]               # the files it read, with their sha256
    at_8 = result["grid"]["8"]
    assert at_8["stopping_budget"] == 20000 and not at_8["still_falling"]
    assert set(at_8["drops"]) == {"3/4", "4/5"}
    assert {"3", "4"} <= set(result["reversal"]["by_h"])   # h = 5 where every T has it
    assert set(result["gaps"]["8"]["4"]) == {"6000", "20000", "60000", "200000"}   # every budget
    assert set(result["data_control"]["64"]) == {"3", "4"}


def test_a_data_control_is_set_beside_the_run_it_repeats(tmp_path):
    import json
    control = {"config": {"n_train": 32000},
               "budget": {"rows": [row(4, 100, [1e-6, 1e-5, 1e-4], T=64)]}}
    path = tmp_path / "control.json"
    path.write_text(json.dumps(control), encoding="utf-8")
    base = [row(4, 100, [1e-5, 1e-4, 1e-3], T=64)]
    found = study.data_control(base, [path])["64"]["4"]
    assert found["n_train"] == 32000 and found["steps"] == 100
    assert found["change_log10"]["per_seed"] == pytest.approx([-1.0, -1.0, -1.0])

"""further/06f_controls.py: the oracle's U, the baseline against least squares, the committed
controls beside the committed runs of lesson 06 and study 06g, the refusal of a missing run."""
import json

import pytest
import torch

import helpers
from conftest import RUN_KEYS, assert_rejected, run_quick

study = helpers.load_concept("06f_controls")
allocation = helpers.load_concept("06_allocation")
fixed_budget = helpers.load_concept("06g_fixed_budget")
ROOT = helpers.ROOT


def test_recall_oracle_is_a_u_with_its_minimum_at_M():
    x, y, parts = fixed_budget.recall_task(2000, 16, 8, 4, seed=1)
    oracle = {H: study.recall_oracle(parts, y, H) for H in (1, 2, 4, 8, 16, 32)}
    assert min(oracle, key=oracle.get) == 4
    assert oracle[4] < 0.01
    assert oracle[1] > oracle[2] > oracle[4] < oracle[8] < oracle[16] < oracle[32]


@pytest.mark.parametrize("task", ["match-aggregate", "prefix-match"])
def test_no_match_baseline_is_the_best_linear_prediction_from_the_values(task):
    """E[y | values] is linear in the values, so least squares on them must find the same NMSE."""
    baseline = study.no_match_baseline(task, 20000, 8, 4, seed=3)
    x, y = allocation.TASKS[task](20000, 8, 4, seed=3)
    values = x[:, :, -1]
    values = values[:, values.abs().sum(dim=0) > 0]       # prefix-match's query token has none
    features = torch.cat([values, torch.ones(len(y), 1)], dim=1).double()   # full column rank
    fitted = features @ torch.linalg.lstsq(features, y.double()[:, None]).solution[:, 0]
    assert baseline == pytest.approx(helpers.nmse(fitted, y.double()), abs=0.01)
    assert 0.1 < baseline < 0.9                      # values alone explain part of y, not all


def test_the_committed_controls_stand_beside_the_committed_runs():
    """The oracle is lowest at H = M in the committed run, and each task's right allocation
    lies below its no-match baseline; the trained numbers are study 06g's and the lesson's."""
    controls = json.loads((ROOT / "results" / "06f_controls.json").read_text(encoding="utf-8"))
    lesson = json.loads((ROOT / "results" / "06_allocation.json").read_text(encoding="utf-8"))
    budget = json.loads((ROOT / "results" / "06g_fixed_budget.json").read_text(encoding="utf-8"))
    fixed = controls["fixed_budget"]
    assert fixed["trained"] == budget["fixed_budget"]["trained"]
    assert fixed["best_H_oracle"] == fixed["M"] and fixed["oracle"][str(fixed["M"])] < 0.01
    for task, right in (("match-aggregate", "front-loaded"), ("prefix-match", "back-loaded")):
        entry = controls["comparison"][task]
        assert entry["allocations"] == lesson["comparison"][task]["allocations"]
        assert entry["allocations"][right]["mean"] < entry["no_match_baseline"]


def test_main_quick_on_the_committed_lesson_run(tmp_path):
    result = run_quick("06f_controls", tmp_path)
    assert set(result) - RUN_KEYS == {"fixed_budget", "comparison"}
    assert set(result["fixed_budget"]["oracle"]) == set(map(str, result["fixed_budget"]["H"]))
    assert all("no_match_baseline" in entry for entry in result["comparison"].values())


def test_a_missing_run_is_refused(tmp_path):
    assert_rejected("06f_controls", ["--lesson-run", str(tmp_path / "none.json")],
                    "--lesson-run")
    assert_rejected("06f_controls", ["--budget-run", str(tmp_path / "none.json")],
                    "--budget-run")


def test_each_part_reads_only_its_own_run(quick_args, tmp_path):
    """The oracle alone needs no lesson run, the baseline alone no fixed-budget run."""
    missing = str(tmp_path / "none.json")
    assert quick_args(study, "--parts", "oracle", "--lesson-run", missing).parts == ["oracle"]
    assert quick_args(study, "--parts", "baseline", "--budget-run", missing).parts == [
        "baseline"]

"""further/06g_fixed_budget.py: the recall target against a slow loop, the quick run, the U of
the committed default run, and bad input."""
import json
import math
from pathlib import Path

import pytest
import torch

import helpers
from conftest import RUN_KEYS, assert_rejected

ROOT = Path(__file__).resolve().parent.parent

study = helpers.load_concept("06g_fixed_budget")


def test_recall_target_by_a_slow_loop():
    x, y, (keys, values, queries) = study.recall_task(5, 6, 3, 2, seed=0)
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


def test_main_quick(notebook_run):
    args = study.config(["--quick"])
    result = notebook_run("06g_fixed_budget")   # the --quick run, as its notebook executes it
    assert set(result) - RUN_KEYS == {"fixed_budget"}
    fixed = result["fixed_budget"]
    assert fixed["H"] == args.fixed_heads and fixed["budget"] == args.queries * args.key_dim
    assert len(fixed["best_H_per_seed"]) == args.fixed_seeds
    assert all(len(fixed["trained"][str(H)]["seeds"]) == args.fixed_seeds for H in fixed["H"])


def test_the_default_grid_shows_the_u_at_its_committed_depth():
    """The committed default: H = M at most 0.15 and at most a third of both ends, per the
    seeds' mean, and H = M lowest for every seed (study 06f tests the oracle's)."""
    path = ROOT / "results" / "06g_fixed_budget.json"
    fixed = json.loads(path.read_text(encoding="utf-8"))["fixed_budget"]
    trained, M = fixed["trained"], str(fixed["M"])
    ends = [trained[str(fixed["H"][0])]["mean"], trained[str(fixed["H"][-1])]["mean"]]
    assert trained[M]["mean"] <= 0.15 and trained[M]["mean"] <= min(ends) / 3
    assert set(fixed["best_H_per_seed"]) == {fixed["M"]}


@pytest.mark.parametrize("flags, flag_name", [
    (["--fixed-heads", "3,4,8"], "--fixed-heads"), (["--fixed-heads", "1,4"], "--fixed-heads"),
    (["--memory", "1"], "--memory"), (["--T", "12"], "--T"),   # --T is the lesson's flag
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("06g_fixed_budget", flags, flag_name)

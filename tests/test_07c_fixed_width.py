"""further/07c_fixed_width.py: equal parameters at a fixed width, the width's part against a
hand computation, the parts, a shared shape read rather than retrained, the figure, the quoted
--full numbers, and bad input."""
import json
import math
from pathlib import Path

import pytest

import helpers
from conftest import assert_rejected, run_quick
from engine import lesson07 as engine

study = helpers.load_concept("07c_fixed_width")
real = helpers.load_concept("07_real_data")
ROOT = Path(__file__).resolve().parent.parent


def test_fixed_width_sweep_has_equal_parameter_counts():
    counts = {helpers.count_parameters(real.VisionTransformer(4, 64, 32, h, 32 // h, 2))
              for h in (1, 2, 4, 8, 16, 32)}
    assert len(counts) == 1
    growing = [helpers.count_parameters(real.VisionTransformer(4, 64, 8 * h, h, 8, 2))
               for h in (1, 2, 4, 8)]
    assert growing == sorted(growing) and len(set(growing)) == 4


def test_fixed_width_shapes_keep_only_the_head_counts_that_divide_the_width(quick_args):
    args = quick_args(study, "--width", "12", "--heads", "1,2,4,8")
    assert study.fixed_width_shapes(args) == {1: (12, 12), 2: (12, 6), 4: (12, 3)}


def test_main_quick_writes_both_sweeps(notebook_run):
    args = study.config(["--quick"])
    result = notebook_run("07c_fixed_width")   # the --quick run, as its notebook executes it
    assert set(result["accuracy"]) == {"fixed-head-dim", "fixed-width"}
    assert set(result["gain_difference"]) == set(map(str, result["T"]))
    for T in map(str, result["T"]):
        fixed = result["accuracy"]["fixed-width"][T]
        assert len({entry["parameters"] for entry in fixed.values()}) == 1
        for entry in fixed.values():
            assert 0 <= entry["train"]["min"] <= entry["train"]["mean"] <= 1
            assert len(entry["valid"]["seeds"]) == args.seeds


def test_parts_run_only_what_they_name_and_a_shared_shape_is_not_retrained(notebook_run,
                                                                           tmp_path):
    both = notebook_run("07c_fixed_width")
    alone = run_quick("07c_fixed_width", tmp_path, "--workers", "2", "--parts", "fixed-width")
    assert set(alone["accuracy"]) == set(alone["train_gain_with_heads"]) == {"fixed-width"}
    assert alone["accuracy"]["fixed-width"] == both["accuracy"]["fixed-width"]    # same numbers
    # quick: h = 2 (E = 8, d = 4) is in both sweeps; run alone, fixed-width trains it itself
    shared = both["accuracy"]["fixed-head-dim"]["16"]["2"]
    assert (shared["width"], shared["head_dim"]) == (8, 4)


def test_the_protocol_is_the_lessons_to_the_last_digit(notebook_run):
    """The study's fixed-head-dim sweep is lesson 07's quick run, number for number."""
    assert (notebook_run("07c_fixed_width")["accuracy"]["fixed-head-dim"]
            == notebook_run("07_real_data")["accuracy"]["fixed-head-dim"])


def test_widths_part_is_the_paired_difference_of_the_two_gains():
    """Synthetic gains: per seed 0.3 - 0.1, 0.5 - 0.29, 0.4 - 0.21 -> 0.2, 0.21, 0.19."""
    gains = {"fixed-head-dim": {"64": {"from": 1, "to": 8, "per_seed": [0.3, 0.5, 0.4]}},
             "fixed-width": {"64": {"from": 1, "to": 8, "per_seed": [0.1, 0.29, 0.21]}}}
    entry = study.widths_part(gains)["64"]
    assert entry["per_seed"] == pytest.approx([0.2, 0.21, 0.19])
    half = helpers.t_quantile(2) * 0.01 / math.sqrt(3)                 # sample std 0.01
    assert entry["mean"] == pytest.approx(0.2)
    assert entry["ci95"] == pytest.approx([0.2 - half, 0.2 + half])
    assert entry["verdict"] == "the width brings part of the rise"
    assert study.widths_part({"fixed-width": gains["fixed-width"]}) == {}  # one sweep only
    gains["fixed-width"]["64"]["to"] = 4                               # different h_max: none
    assert study.widths_part(gains) == {}


def test_width_check_only_when_the_fixed_width_part_runs(quick_args):
    args = quick_args(study, "--width", "3", "--heads", "2,4", "--parts", "fixed-head-dim")
    assert args.parts == ["fixed-head-dim"]


@pytest.mark.parametrize("flags, flag_name", [
    (["--width", "3", "--heads", "2,4"], "--width"), (["--seeds", "1"], "--seeds"),
    (["--sides", "9"], "--sides"), (["--parts", "fixed-depth"], "--parts"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("07c_fixed_width", flags, flag_name)


def test_the_study_quotes_its_runs_as_their_jsons_say():
    """The default run's fixed-width means, gain and width's part, and the --full intervals."""
    default = json.loads((ROOT / "results" / "07c_fixed_width.json").read_text(encoding="utf-8"))
    full = json.loads((ROOT / "results" / "07c_fixed_width_full.json").read_text(encoding="utf-8"))
    text = (ROOT / "further" / "07c_fixed_width.py").read_text(encoding="utf-8")

    def quoted(entry):
        low, high = entry["ci95"]
        return f"{entry['mean']:+.3f} [{low:+.3f}, {high:+.3f}]"

    for entry in (full["train_gain_with_heads"]["fixed-width"]["64"],
                  full["train_gain_with_heads"]["fixed-head-dim"]["64"],
                  full["train_gain_with_heads"]["fixed-head-dim"]["16"],
                  full["gain_difference"]["64"]):
        assert quoted(entry) in text, quoted(entry)
    for result in (default, full):
        means = [f"{e['train']['mean']:.3f}"
                 for e in result["accuracy"]["fixed-width"]["64"].values()]
        assert ", ".join(means) in text.replace(" (h = 1),", ",").replace(" (h = 8)", "")
    assert f"{default['train_gain_with_heads']['fixed-width']['64']['mean']:+.3f}" in text
    assert f"{default['gain_difference']['64']['mean']:+.3f}" in text


def test_the_figure_draws_the_protocol_beside_the_fixed_width(notebook_run):
    """One column (the fixed width), with the protocol's means dashed: one line more per T."""
    import matplotlib
    matplotlib.use("agg")
    result = notebook_run("07c_fixed_width")
    figure = engine.plot_fixed_width(result)
    assert len(figure.axes) == 2
    beside = [label for label in (line.get_label() for line in figure.axes[0].get_lines())
              if label.startswith("width grows")]
    assert len(beside) == len(result["T"])

"""07_real_data.py and engine/lesson07.py (its studies' sweeps): placement and patches
against loops, the digits split, the ViT, the presets, one progress line per group of runs,
the summary's quoted --full numbers, and bad input. (The fixed-width sweep is tested in
test_07c_fixed_width.py, the CIFAR-10 reader in test_07b_cifar10.py.)"""
import json
import math
from pathlib import Path

import pytest
import torch

import helpers
import harness
import plumbing
from conftest import assert_rejected, run_quick
from engine import lesson07 as engine

real = helpers.load_concept("07_real_data")
ROOT = Path(__file__).resolve().parent.parent


def test_place_copies_the_image_and_extends_its_border_by_a_slow_loop():
    torch.manual_seed(0)
    images = torch.rand(3, 2, 4, 4)
    offsets = torch.tensor([[0, 0], [3, 1], [5, 5]])
    frames = real.place(images, 9, offsets)
    assert frames.shape == (3, 2, 9, 9)
    for n in range(3):
        a, b = offsets[n].tolist()
        for channel in range(2):
            for i in range(9):
                for j in range(9):
                    source = images[n, channel, min(max(i - a, 0), 3), min(max(j - b, 0), 3)]
                    assert frames[n, channel, i, j] == source
        torch.testing.assert_close(frames[n, :, a:a + 4, b:b + 4], images[n])   # exact copy


def test_patches_by_a_slow_loop():
    frames = torch.arange(2 * 3 * 4 * 4, dtype=torch.float).view(2, 3, 4, 4)
    cut = real.patches(frames, 2)
    assert cut.shape == (2, 4, 12)
    for n in range(2):
        for row in range(2):
            for col in range(2):
                expected = frames[n, :, 2 * row:2 * row + 2, 2 * col:2 * col + 2].reshape(-1)
                torch.testing.assert_close(cut[n, 2 * row + col], expected)


def test_offsets_cover_every_place_and_stay_inside():
    offsets = real.random_offsets(5000, 16, 8, torch.Generator().manual_seed(0))
    assert int(offsets.min()) == 0 and int(offsets.max()) == 8
    assert len({tuple(o) for o in offsets.tolist()}) == 81                  # all 9 x 9 places


def test_digits_split_is_fixed_disjoint_and_scaled():
    digits = real.load_digits()                                            # all 1,797 digits
    (train_x, train_y), (valid_x, valid_y) = digits["train"], digits["valid"]
    assert digits["name"] == "digits" and train_x.shape == (1500, 1, 8, 8) and valid_x.shape == (297, 1, 8, 8)
    assert 0 <= float(train_x.min()) and float(train_x.max()) <= 1
    flat = {tuple(x.flatten().tolist()) for x in train_x}
    assert sum(tuple(x.flatten().tolist()) in flat for x in valid_x) < 5   # (a few duplicates)
    again = real.load_digits()
    torch.testing.assert_close(again["valid"][0], valid_x)
    assert set(train_y.tolist()) == set(range(10))


def test_vision_transformer_shapes_and_sees_every_patch():
    torch.manual_seed(0)
    model = real.VisionTransformer(patch_dim=4, n_patches=16, width=16, n_heads=4, head_dim=4,
                                   n_layers=2)
    x = torch.randn(3, 16, 4)
    changed = x.clone()
    changed[:, -1] += 1.0                                                   # the last patch
    with torch.no_grad():
        assert model(x).shape == (3, 10)
        assert not torch.allclose(model(x), model(changed))                 # no causal mask


def test_paired_gain_has_the_one_layout(notebook_run):
    result = notebook_run("07_real_data")
    for gain in result["train_gain_with_heads"]["fixed-head-dim"].values():
        assert set(gain) == {"from", "to", "per_seed", "mean", "ci95", "verdict"}
        assert len(gain["per_seed"]) == 2 and gain["ci95"][0] <= gain["mean"] <= gain["ci95"][1]


def test_gains_with_heads_are_per_seed_differences_at_each_T():
    rows = {(16, 1): {"train": [0.5, 0.6]}, (16, 8): {"train": [0.9, 0.7]},
            (64, 1): {"train": [0.3, 0.2]}, (64, 8): {"train": [0.2, 0.4]}}
    gains = real.gains_with_heads(rows, 1, 8)
    assert list(gains) == ["16", "64"] and gains["16"]["from"] == 1 and gains["16"]["to"] == 8
    assert gains["16"]["per_seed"] == pytest.approx([0.4, 0.1])
    assert gains["64"]["per_seed"] == pytest.approx([-0.1, 0.2])
    assert gains["16"]["mean"] == pytest.approx(0.25)


def test_progress_is_one_line_per_group_and_results_keep_the_runs_order(capsys):
    """plumbing.run_sweep with group alone (07a's and 07c's sweeps) trains every run once,
    returns the results in the order of the runs (not the costliest-first order it trains them
    in), and prints one line per group."""
    runs = [{"device": "cpu", "h": h, "seed": seed} for h in (1, 2, 4) for seed in (0, 1, 2)]
    results = plumbing.run_sweep(runs, 1, lambda run: {**run, "value": 10 * run["h"] + run["seed"]},
                                 group=lambda run: f"h={run['h']}", cost=lambda run: run["h"])
    assert [r["value"] for r in results] == [10 * r["h"] + r["seed"] for r in runs]
    lines = [line for line in capsys.readouterr().out.splitlines()
             if line.startswith("[")]                    # after the line naming the sweep's path
    shown = [line.split("] ")[1].split(":")[0] for line in lines]
    assert shown == ["h=4", "h=2", "h=1"]                              # costliest first
    assert all("3 runs trained" in line for line in lines)


def test_unknown_part_is_refused():
    assert_rejected("07_real_data", ["--parts", "fixed-depth"], "--parts")


@pytest.mark.parametrize("flags, flag_name", [
    (["--sides", "6"], "--sides"), (["--sides", "9"], "--sides"),
    (["--seeds", "1"], "--seeds"),
    (["--sides", "130"], "--sides"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("07_real_data", flags, flag_name)


def test_the_presets_and_the_committed_runs_file_names(tmp_path):
    """The default trains T = 64 only (400 steps); --sides 8,16 --steps 600 (T = 16 and 64) is
    the variant results/07c_fixed_width_sides8-16_steps600.json ran; --full keeps T = 16 and 64."""
    default = real.config(["--out", str(tmp_path)])
    assert (default.sides, default.steps, default.seeds) == ([16], 400, 2)
    both = real.config(["--sides", "8,16", "--steps", "600", "--out", str(tmp_path)])
    assert harness.output_suffix(both) == "_sides8-16_steps600"
    full = real.config(["--full", "--out", str(tmp_path)])
    assert (full.sides, full.steps, full.seeds) == ([8, 16], 1500, 5)
    assert harness.output_suffix(full) == "_full"


def test_the_lesson_quotes_the_full_run_as_its_json_says():
    """Every interval the lesson's text quotes from --full is the committed file's, to 3 places."""
    full = json.loads((ROOT / "results" / "07c_fixed_width_full.json").read_text(encoding="utf-8"))
    text = (ROOT / "07_real_data.py").read_text(encoding="utf-8")

    def quoted(entry):
        low, high = entry["ci95"]
        return f"{entry['mean']:+.3f} [{low:+.3f}, {high:+.3f}]"

    gains = full["train_gain_with_heads"]
    for entry in (gains["fixed-head-dim"]["64"], gains["fixed-width"]["64"]):
        assert quoted(entry) in text, quoted(entry)
    means = [f"{e['train']['mean']:.3f}" for e in full["accuracy"]["fixed-head-dim"]["64"].values()]
    assert ", ".join(means) in text
    assert "47.8" in text and "95.1 %" in text and real.PAPER_TABLE_8_T65[8] == 95.1


def test_the_figure_is_the_protocol_with_table_8(notebook_run):
    """The figure adds Table 8's T = 65 column (CIFAR-10) to the protocol's training panel."""
    import matplotlib
    matplotlib.use("agg")
    result = notebook_run("07_real_data")
    assert set(result["accuracy"]) == {"fixed-head-dim"}                 # one sweep: the protocol
    labels = [line.get_label() for line in real.plot_fixed_head_dim(result).axes[0].get_lines()]
    assert "paper A, Table 8: CIFAR-10, T = 65" in labels

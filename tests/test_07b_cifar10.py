"""further/07b_cifar10.py: the CIFAR-10 reader on a tiny archive written here, a corrupt or
missing archive, the dry run (no --data-dir: nothing downloaded, nothing trained), lesson 07's
sweeps on the tiny archive for two steps, and bad input. Nothing here downloads."""
import hashlib
import io
import pickle
import subprocess
import sys
import tarfile
import urllib.request
from pathlib import Path

import pytest
import torch

import helpers
from conftest import assert_rejected, run_quick

cifar = helpers.load_concept("07b_cifar10")
real = helpers.load_concept("07_real_data")
ROOT = Path(__file__).resolve().parent.parent


def write_tiny_cifar(folder, images_per_batch=6):
    """A CIFAR-10 python archive in the official layout, with a few random images per batch."""
    generator = torch.Generator().manual_seed(0)
    path = Path(folder) / cifar.CIFAR10_FILE
    with tarfile.open(path, "w:gz") as archive:
        for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
            batch = {b"data": torch.randint(256, (images_per_batch, 3072), generator=generator)
                     .to(torch.uint8).numpy(),
                     b"labels": torch.randint(10, (images_per_batch,), generator=generator)
                     .tolist()}
            payload = pickle.dumps(batch)
            info = tarfile.TarInfo(f"cifar-10-batches-py/{name}")
            info.size = len(payload)
            archive.addfile(info, io.BytesIO(payload))
    return path


def tiny_cifar(folder, n_train=20, n_valid=4):
    """The tiny archive read with its own MD5 (the official one would refuse it)."""
    path = write_tiny_cifar(folder)
    return cifar.load_cifar10(folder, n_train, n_valid, hashlib.md5(path.read_bytes()).hexdigest())


def test_cifar10_reader_on_a_tiny_archive(tmp_path):
    data = tiny_cifar(tmp_path)
    (train_x, train_y), (valid_x, valid_y) = data["train"], data["valid"]
    assert data["name"] == "cifar10"
    assert train_x.shape == (20, 3, 32, 32) and valid_x.shape == (4, 3, 32, 32)
    assert train_y.shape == (20,) and int(train_y.max()) < 10
    frames = real.place(train_x[:2], 64, torch.tensor([[0, 32], [16, 8]]))
    assert real.patches(frames, 8).shape == (2, 64, 192)


def test_cifar10_corrupt_or_missing_archive_is_one_clear_error(tmp_path, monkeypatch):
    write_tiny_cifar(tmp_path)
    with pytest.raises(ValueError, match="corrupt .* download"):
        cifar.cifar10_archive(tmp_path)                                      # the official MD5

    def offline(*args, **kwargs):
        raise OSError("no network")

    monkeypatch.setattr(cifar.urllib.request, "urlretrieve", offline)
    with pytest.raises(ValueError, match="missing and could not be downloaded"):
        cifar.cifar10_archive(tmp_path / "empty")


def test_cifar10_run_with_a_corrupt_archive_ends_in_one_line_exit_2(tmp_path):
    write_tiny_cifar(tmp_path)
    done = subprocess.run([sys.executable, str(ROOT / "further" / "07b_cifar10.py"), "--quick",
                           "--data-dir", str(tmp_path), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=120, encoding="utf-8")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "--data-dir" in done.stderr
    assert "corrupt" in done.stderr
    assert not (tmp_path / "results").exists()


def test_main_quick_is_a_dry_run(notebook_run):
    """Without --data-dir (the notebook's run): the plan, then the paper's tables; no accuracy."""
    result = notebook_run("07b_cifar10")   # the --quick run, as its notebook executes it
    assert "accuracy" not in result
    plan = result["plan"]
    args = cifar.config(["--quick"])
    assert plan["T"] == [(side // args.patch) ** 2 for side in args.sides]
    assert plan["shapes"]["fixed-width"] == {"1": [8, 8], "2": [8, 4]}
    assert plan["runs"] == len(args.sides) * 3 * args.seeds     # h = 2 (E = 8, d = 4) once
    shown = "".join("".join(o.get("text", "")) for o in notebook_run.outputs["07b_cifar10"])
    assert "a dry run" in shown and "h = 24" in shown           # the plan, then Table 8


def test_a_dry_run_neither_downloads_nor_trains(tmp_path, monkeypatch):
    def refused(*args, **kwargs):
        raise AssertionError("a dry run tried to download or train")

    monkeypatch.setattr(urllib.request, "urlretrieve", refused)
    monkeypatch.setattr(helpers, "fit", refused)
    result = run_quick("07b_cifar10", tmp_path)
    assert set(result) >= {"plan", "config"} and "accuracy" not in result
    assert (tmp_path / "figures" / "07b_table_8_quick.png").exists()


def test_the_plan_counts_the_runs_lesson_07_would_train(tmp_path):
    """The plan's count is what lesson 07's sweeps train: each distinct shape once per side and
    seed, here for the paper's grid (--full)."""
    args = cifar.config(["--full", "--out", str(tmp_path)])
    plan = cifar.plan(args)
    assert plan["T"] == [64, 144, 256, 576, 1024]                  # + CLS: Table 8's T
    assert plan["runs"] == 5 * (12 + 4) * 3   # h = 1, 2, 4, 16 at width 128 are not protocol shapes
    only = cifar.config(["--full", "--parts", "fixed-head-dim", "--out", str(tmp_path)])
    assert set(cifar.plan(only)["shapes"]) == {"fixed-head-dim"}


def test_lesson_07_sweeps_run_on_the_tiny_archive(tmp_path):
    """The real path for two steps: both sweeps, three channels, equal parameters at a fixed
    width, and the protocol's shape read back rather than trained twice."""
    args = cifar.config(["--quick", "--data-dir", str(tmp_path), "--sides", "32", "--steps",
                         "2", "--workers", "1", "--device", "cpu", "--out", str(tmp_path)])
    result = cifar.run_sweeps(args, tiny_cifar(tmp_path, args.n_train, args.n_valid))
    assert result["data"] == "cifar10" and result["image_side"] == 32 and result["T"] == [16]
    fixed = result["accuracy"]["fixed-width"]["16"]
    assert len({entry["parameters"] for entry in fixed.values()}) == 1
    assert fixed["2"] == result["accuracy"]["fixed-head-dim"]["16"]["2"]  # E = 8, d = 4: shared
    assert set(result["gain_difference"]) == {"16"}
    assert cifar.plot_beside_table_8(result).axes[0].get_title().endswith("ours beside Table 8")


@pytest.mark.parametrize("flags, flag_name", [
    (["--sides", "16"], "--sides"), (["--sides", "36"], "--sides"), (["--patch", "33"], "--patch"),
    (["--n-train", "50001"], "--n-train"), (["--n-valid", "10001"], "--n-valid"),
    (["--width", "3", "--heads", "2,4"], "--width"), (["--seeds", "1"], "--seeds"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("07b_cifar10", flags, flag_name)


def test_lesson_07_draws_table_8_s_first_column_as_this_study_holds_it():
    assert {h: cifar.PAPER_TABLE_8[h][0] for h in real.PAPER_TABLE_8_T65} == real.PAPER_TABLE_8_T65

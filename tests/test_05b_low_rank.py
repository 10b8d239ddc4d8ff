"""further/05b_low_rank.py: the SVD truncation of a head, the measurements of a trained one, the
study's runs as file 05's, the JSON format, the replays and its refusals."""
import math

import pytest
import torch

import conftest
import helpers
from conftest import ROOT, RUN_KEYS, assert_rejected, run_quick

saturation = helpers.load_concept("05_saturation")
low_rank = helpers.load_concept("05b_low_rank")


def test_svd_truncation_is_exact_at_full_rank_and_has_rank_r():
    torch.manual_seed(0)
    head = saturation.SingleHead(dim=8, head_dim=5)
    W_Q, W_K = low_rank.truncate_qk(head.W_Q, head.W_K, 5)
    torch.testing.assert_close(W_Q.T @ W_K, head.W_Q.T @ head.W_K, rtol=1e-4, atol=1e-5)
    x, y = torch.randn(40, 9, 8), torch.randn(40)
    curve = low_rank.truncation_curve(head, (x, y), [1, 2, 5])
    assert curve[-1]["valid_nmse"] == pytest.approx(helpers.evaluate_nmse(head, (x, y)),
                                                    rel=1e-4)
    for rank in (1, 2, 4):
        W_Q, W_K = low_rank.truncate_qk(head.W_Q, head.W_K, rank)
        assert W_Q.shape == (rank, 8)
        assert int(torch.linalg.matrix_rank(W_Q.T @ W_K)) == rank


def test_a_probed_run_is_part_b_s_run_with_its_measurements():
    run = dict(task="match", L=16, cap=2.0, seed=0, dim=8, match_rank=4, n_match=2,
               sharpness=3.0, steps=20, batch_size=32, lr=1e-2, n_train=200, n_valid=100,
               data_seed=0, device="cpu", head_dim=4)
    _, _, trained = saturation.train_match_head(run)
    capped = low_rank.train_and_probe({**run, "truncate": False})
    assert capped["valid_nmse"] == trained["valid_nmse"]                    # the same training
    assert capped["truncation"] == [] and capped["logit_max_abs"] <= 2.0    # below the cap
    free = low_rank.train_and_probe({**run, "cap": None, "truncate": True})
    assert [point["rank"] for point in free["truncation"]] == [1, 2, 3]     # every rank below d


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """The study's --quick run, trained once for this file (its notebook replays instead)."""
    return run_quick("05b_low_rank", tmp_path_factory.mktemp("quick"))


def test_main_quick_writes_the_documented_format(quick, notebook_run):
    args = low_rank.config(["--quick"])
    side = quick["model_side"]
    for kind in (side["logit_spread"]["free"], *side["logit_spread"]["capped"].values()):
        for L in map(str, args.L):
            assert len(kind[L]["logit_max_abs"]) == len(kind[L]["logit_std"]) == args.seeds
    for B in args.caps:
        for entry in side["logit_spread"]["capped"][f"{B:g}"].values():
            assert max(entry["logit_max_abs"]) <= B                         # the cap holds
    for L in map(str, args.L):
        by_rank = side["truncation_free"][L]
        assert list(by_rank) == [str(r) for r in range(1, args.head_dims[-1])]
        assert all(len(seeds) == args.seeds and all(map(math.isfinite, seeds))
                   for seeds in by_rank.values())
    assert set(quick) - RUN_KEYS == {"model_side"}
    lesson = notebook_run("05_saturation")["model_side"]  # file 05's --quick run: part b alone
    assert set(side) == set(lesson) | {"logit_spread", "truncation_free"}
    for L in map(str, args.L):                            # the same heads: the same errors
        for d in map(str, args.head_dims):
            assert side["free"][L][d]["seeds"] == pytest.approx(lesson["free"][L][d]["seeds"])


def draw(out, path):
    """`python further/05b_low_rank.py --replay PATH --out OUT` in this process."""
    conftest.run_in_process("05b_low_rank", "--replay", str(path), "--out", str(out), "--device", "cpu")


@pytest.mark.parametrize("committed, suffix, largest_d", [
    ("05b_low_rank.json", "", 8), ("05b_low_rank_full.json", "_full", 16)])
def test_a_replay_draws_the_committed_run_under_its_figures_names(committed, suffix, largest_d,
                                                                   tmp_path, capsys):
    draw(tmp_path, ROOT / "results" / committed)
    assert sorted(path.name for path in (tmp_path / "figures").iterdir()) == [
        f"05_logit_spread{suffix}.png", f"05_truncation{suffix}.png"]
    assert not (tmp_path / "results").exists()                              # writes no JSON
    printed = capsys.readouterr().out
    assert f"replaying results/{committed}" in printed
    assert f"free d = {largest_d} heads cut to rank" in printed             # the run's own d


@pytest.mark.parametrize("flags, flag_name", [
    (["--head-dims", "1,32"], "--head-dims"), (["--match-rank", "16"], "--match-rank"),
    (["--head-dims", "1,4"], "--head-dims"), (["--L", "3"], "--L"), (["--seeds", "1"], "--seeds"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("05b_low_rank", flags, flag_name)

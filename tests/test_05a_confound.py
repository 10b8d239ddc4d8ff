"""further/05a_confound.py: the confound target (its coupling's spectrum, a slow loop), the oracle
on it, the variance split, the JSON format, the replays and its refusals."""
import math

import pytest
import torch

import conftest
import helpers
from conftest import ROOT, RUN_KEYS, assert_rejected, run_quick

saturation = helpers.load_concept("05_saturation")
confound = helpers.load_concept("05a_confound")


def test_softmax_target_equals_a_slow_loop():
    M, _ = confound.coupling(4, 4, 1.0, 2.0, seed=0)
    value = torch.tensor([0.5, -1.0, 2.0, 0.0])
    x, _, _ = confound.spectrum_task(3, 6, 4, M, seed=2)
    y = saturation.softmax_target(x, M, value, cap=1.5)
    for k in range(3):
        logits = [1.5 * math.tanh(float(x[k, -1] @ M @ x[k, s]) / 1.5) for s in range(6)]
        weights = [math.exp(v) / sum(math.exp(u) for u in logits) for v in logits]
        expected = sum(w * float(x[k, s] @ value) for s, w in enumerate(weights))
        assert float(y[k]) == pytest.approx(expected, rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("rank, alpha", [(16, 1.0), (5, 0.5), (1, 2.0), (6, 0.0)])
def test_spectrum_coupling_has_the_configured_rank_and_spectrum(rank, alpha):
    M, sigma = confound.coupling(16, rank, alpha, scale=3.0, seed=1)
    singular = torch.linalg.svdvals(M)
    assert int((singular > 1e-5).sum()) == rank
    torch.testing.assert_close(singular[:rank], sigma[:rank], rtol=1e-4, atol=1e-5)
    ratios = sigma[:rank] / sigma[0]
    torch.testing.assert_close(ratios, torch.arange(1, rank + 1).float() ** -alpha)
    assert float(torch.linalg.matrix_norm(M)) == pytest.approx(3.0, rel=1e-4)


@pytest.mark.parametrize("cap", [None, 1.0])
def test_oracle_at_full_rank_is_exact_and_never_worse_with_more_rank(cap):
    M, _ = confound.coupling(6, 6, 1.0, 2.0, seed=0)
    x, M, value = confound.spectrum_task(300, 20, 6, M, seed=0)
    y = saturation.softmax_target(x, M, value, cap)
    assert saturation.oracle_nmse(x, y, M, value, 6, cap) < 1e-10
    assert saturation.oracle_nmse(x, y, M, value, 1, cap) <= 1.0 + 1e-9   # factor 0 is allowed


@pytest.mark.parametrize("seq_len", [2, 16, 64])
def test_variance_split_adds_up_to_the_variance(seq_len):
    M, _ = confound.coupling(8, 8, 1.0, 2.0, seed=0)
    split = confound.variance_split(40, 10, seq_len, M, cap=2.0, seed=1)
    assert split["query_part"] + split["context_part"] == pytest.approx(split["total"], rel=1e-4)
    assert split["query_part"] >= 0 and split["context_part"] >= 0


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """The study's --quick run, trained once for this file (its notebook replays instead)."""
    return run_quick("05a_confound", tmp_path_factory.mktemp("quick"))


def test_main_quick_writes_the_documented_format(quick):
    args = confound.config(["--quick"])
    result = quick["confound"]
    paired = {"per_seed", "mean", "ci95", "verdict"}                        # helpers' layout
    assert set(result["gain_change_trained"]) == paired
    for L in map(str, args.confound_L):
        assert set(result["variance_split"][L]) >= {"query_part", "context_part"}
        assert result["oracle"][L][str(args.rank)] < 1e-6                   # full rank: exact
        for d in map(str, args.confound_head_dims):
            assert len(result["trained"][L][d]["seeds"]) == args.seeds
        assert math.isfinite(result["gain_trained"][L] + result["gain_oracle"][L])
    assert set(quick) - RUN_KEYS == {"confound"}


def draw(out, path):
    """`python further/05a_confound.py --replay PATH --out OUT` in this process."""
    conftest.run_in_process("05a_confound", "--replay", str(path), "--out", str(out), "--device", "cpu")


@pytest.mark.parametrize("committed, figure, longest", [
    ("05_saturation_before_split.json", "05_confound.png", "L = 256 "),
    ("05_saturation_full.json", "05_confound_full.png", "L = 1024 ")])
def test_a_replay_draws_the_committed_run_under_its_figure_s_name(committed, figure, longest,
                                                                  tmp_path, capsys):
    draw(tmp_path, ROOT / "results" / committed)
    assert sorted(path.name for path in (tmp_path / "figures").iterdir()) == [figure]
    assert not (tmp_path / "results").exists()                              # writes no JSON
    printed = capsys.readouterr().out
    assert f"replaying results/{committed}" in printed and longest in printed


@pytest.mark.parametrize("flags, flag_name", [
    (["--rank", "40"], "--rank"), (["--confound-L", "1"], "--confound-L"),
    (["--confound-head-dims", "4,2"], "--confound-head-dims"),
    (["--confound-head-dims", "1,32"], "--confound-head-dims"),
    (["--confound-L", "8192"], "--confound-L"), (["--seeds", "1"], "--seeds"),
    (["--alpha", "0"], "--alpha"), (["--cap", "0"], "--cap"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("05a_confound", flags, flag_name)

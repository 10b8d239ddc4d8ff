"""further/05a_confound.py: the oracle on lesson 05's target and on the confound target, the
match share, the confound target (its coupling's spectrum, a slow loop), the variance split, the
JSON format, the replays and its refusals."""
import json
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
    assert confound.oracle_nmse(x, y, M, value, 6, cap) < 1e-10
    assert confound.oracle_nmse(x, y, M, value, 1, cap) <= 1.0 + 1e-9   # factor 0 is allowed


def test_match_share_by_a_slow_loop():
    x, M, _ = saturation.match_task(20, 10, 6, 4, 2, sharpness=3.0, seed=3)
    shares = []
    for k in range(20):
        scores = [float(x[k, -1] @ M @ x[k, s]) for s in range(10)]
        total = sum(math.exp(v) for v in scores)
        shares.append(sum(math.exp(scores[s]) / total for s in range(9)
                          if torch.allclose(x[k, s, :4], x[k, -1, :4])))
    assert confound.match_share(x, M, 4) == pytest.approx(sum(shares) / 20, rel=1e-5)


def test_match_target_does_not_get_easier_for_rank_1_as_L_grows():
    """The property lesson 05's target rests on (this study's part-b target fails it)."""
    oracle = {}
    for L in (16, 256):
        x, M, value = saturation.match_task(1000, L, 16, 8, 2, sharpness=3.0, seed=L)
        y = saturation.softmax_target(x, M, value)
        oracle[L] = confound.oracle_nmse(x, y, M, value, rank=1)
    assert oracle[256] >= oracle[16]


@pytest.mark.parametrize("cap", [None, 1.0])
def test_oracle_on_the_match_target_is_exact_at_full_rank(cap):
    x, M, value = saturation.match_task(300, 20, 8, 4, 2, sharpness=3.0, seed=0)
    y = saturation.softmax_target(x, M, value, cap)
    assert confound.oracle_nmse(x, y, M, value, 4, cap) < 1e-10
    assert confound.oracle_nmse(x, y, M, value, 1, cap) <= 1.0 + 1e-9   # factor 0 is allowed



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
    lesson = json.loads((ROOT / args.lesson_run).read_text(encoding="utf-8"))  # part a's run
    oracle = quick["model_side"]["oracle"]
    for L in map(str, lesson["config"]["L"]):
        assert oracle["free"][L][str(lesson["config"]["match_rank"])] < 1e-6  # rank r: exact
        assert 0 < oracle["target_match_share"][L] < 1
        for B in lesson["config"]["caps"]:
            assert set(oracle["capped"][f"{B:g}"][L]) == set(map(str, lesson["config"]["head_dims"]))
    assert quick["model_side"]["free"] == lesson["model_side"]["free"]      # set beside its heads
    result = quick["confound"]
    paired = {"per_seed", "mean", "ci95", "verdict"}                        # helpers' layout
    assert set(result["gain_change_trained"]) == paired
    for L in map(str, args.confound_L):
        assert set(result["variance_split"][L]) >= {"query_part", "context_part"}
        assert result["oracle"][L][str(args.rank)] < 1e-6                   # full rank: exact
        for d in map(str, args.confound_head_dims):
            assert len(result["trained"][L][d]["seeds"]) == args.seeds
        assert math.isfinite(result["gain_trained"][L] + result["gain_oracle"][L])
    assert set(quick) - RUN_KEYS == {"model_side", "confound"}


def test_the_oracle_at_a_lesson_run_s_settings_is_the_lesson_s_target(tmp_path):
    """Part a on another lesson run: its settings (here --quick's) pick the oracle's sequences."""
    lesson = helpers.load_concept("05_saturation").config(["--quick"])
    written = {"config": {**vars(lesson), "out": str(lesson.out)},
               "model_side": {"free": {}, "capped": {}}}
    (tmp_path / "lesson.json").write_text(json.dumps(written), encoding="utf-8")
    args = confound.config(["--quick", "--lesson-run", str(tmp_path / "lesson.json")])
    oracle = confound.run_oracle(args)["model_side"]["oracle"]
    x, M, value = saturation.match_task(lesson.n_valid, 32, saturation.DIM, lesson.match_rank,
                                        saturation.N_MATCH, saturation.SHARPNESS,
                                        confound.ORACLE_SEED_OFFSET)
    y = saturation.softmax_target(x, M, value)
    assert oracle["free"]["32"]["1"] == confound.oracle_nmse(x, y, M, value, 1)
    assert list(oracle["free"]) == ["16", "32"] and list(oracle["capped"]) == ["2"]


def draw(out, path):
    """`python further/05a_confound.py --replay PATH --out OUT` in this process."""
    conftest.run_in_process("05a_confound", "--replay", str(path), "--out", str(out), "--device", "cpu")


@pytest.mark.parametrize("committed, figure, longest", [
    ("05a_confound.json", "05_confound.png", "L = 256 "),
    ("05a_confound_full.json", "05_confound_full.png", "L = 1024 ")])
def test_a_replay_draws_the_committed_run_under_its_figure_s_name(committed, figure, longest,
                                                                  tmp_path, capsys):
    draw(tmp_path, ROOT / "results" / committed)
    assert sorted(path.name for path in (tmp_path / "figures").iterdir()) == [figure]
    assert not (tmp_path / "results").exists()                              # writes no JSON
    printed = capsys.readouterr().out
    assert f"replaying results/{committed}" in printed and longest in printed
    assert "largest |difference|" in printed                                # part a drawn too


@pytest.mark.parametrize("flags, flag_name", [
    (["--rank", "40"], "--rank"), (["--confound-L", "1"], "--confound-L"),
    (["--confound-head-dims", "4,2"], "--confound-head-dims"),
    (["--confound-head-dims", "1,32"], "--confound-head-dims"),
    (["--confound-L", "8192"], "--confound-L"), (["--seeds", "1"], "--seeds"),
    (["--alpha", "0"], "--alpha"), (["--cap", "0"], "--cap"),
    (["--lesson-run", "results/no-such-run.json"], "--lesson-run"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("05a_confound", flags, flag_name)

"""further/05c_bounded_logits.py: the bounded-logit lemma and the entropy floor against the worst
cases by hand and adversarial logits, the JSON it writes, and its refusals."""
import math

import pytest
import torch

import helpers
from conftest import RUN_KEYS, assert_rejected

lemma = helpers.load_concept("05c_bounded_logits")


@pytest.mark.parametrize("B", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("seq_len", [1, 2, 17, 1000])
def test_bounded_logit_lemma_and_entropy_bound_hold_including_the_extremes(B, seq_len):
    row = lemma.lemma_extremes(B, seq_len, n_random=300, seed=seq_len)
    assert row["lower"] * (1 - 1e-9) <= row["L_min_p"] <= row["L_max_p"] <= row["upper"] * (
        1 + 1e-9)
    assert row["min_normalised_entropy"] >= row["entropy_bound"] - 1e-9
    # the worst case (one logit at +B, the rest at -B) by hand
    expected = seq_len * math.exp(B) / (math.exp(B) + (seq_len - 1) * math.exp(-B))
    assert row["L_max_p"] == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("B", [0.5, 2.0])
def test_entropy_bound_holds_for_adversarial_logits(B):
    torch.manual_seed(0)
    for seq_len in (8, 100, 5000):
        # the entropy's minimiser puts few logits at +B and the rest at -B: try every count
        for n_high in (1, 2, seq_len // 10 + 1, seq_len // 2):
            logits = torch.full((seq_len,), -B, dtype=torch.float64)
            logits[:n_high] = B
            p = logits.softmax(0)
            entropy = float(-(p * p.log()).sum()) / math.log(seq_len)
            assert entropy >= lemma.entropy_bound(B, seq_len) - 1e-12


def test_entropy_approaches_uniform_as_L_grows():
    entropies = [lemma.lemma_extremes(1.0, L, 200, 0)["mean_normalised_entropy"]
                 for L in (4, 64, 4096)]
    assert entropies[0] < entropies[1] < entropies[2] <= 1


def test_main_quick_measures_every_bound_and_length(notebook_run):
    args = lemma.config(["--quick"])
    result = notebook_run("05c_bounded_logits")   # the --quick run, as its notebook executes it
    assert set(result) - RUN_KEYS == {"lemma"}
    assert [(row["B"], row["L"]) for row in result["lemma"]] == [
        (B, L) for B in args.bounds for L in args.L]
    for row in result["lemma"]:
        assert row["L_max_p"] <= row["upper"] * (1 + 1e-9)
        assert row["min_normalised_entropy"] >= row["entropy_bound"] - 1e-9


@pytest.mark.parametrize("flags, flag_name", [
    (["--L", "1"], "--L"), (["--L", "2,2000000"], "--L"), (["--bounds", "0"], "--bounds"),
    (["--draws", "0"], "--draws"), (["--bounds", "x"], "--bounds"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("05c_bounded_logits", flags, flag_name)

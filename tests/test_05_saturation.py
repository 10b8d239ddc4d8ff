"""05_saturation.py: the bounded-logit lemma, the target's spectrum, SVD truncation, training."""
import json
import math

import pytest
import torch

import helpers
from conftest import assert_rejected

saturation = helpers.load_concept("05_saturation")


@pytest.mark.parametrize("B", [0.1, 1.0, 3.0])
@pytest.mark.parametrize("seq_len", [1, 2, 17, 1000])
def test_bounded_logit_lemma_holds_including_the_extremes(B, seq_len):
    row = saturation.lemma_extremes(B, seq_len, n_random=300, seed=seq_len)
    assert row["lower"] * (1 - 1e-9) <= row["L_min_p"] <= row["L_max_p"] <= row["upper"] * (
        1 + 1e-9)
    # the worst case (one logit at +B, the rest at -B) by hand
    expected = seq_len * math.exp(B) / (math.exp(B) + (seq_len - 1) * math.exp(-B))
    assert row["L_max_p"] == pytest.approx(expected, rel=1e-9)


def test_entropy_approaches_uniform_as_L_grows():
    entropies = [saturation.lemma_extremes(1.0, L, 200, 0)["mean_normalised_entropy"]
                 for L in (4, 64, 4096)]
    assert entropies[0] < entropies[1] < entropies[2] <= 1


@pytest.mark.parametrize("rank, alpha", [(16, 1.0), (5, 0.5), (1, 2.0)])
def test_target_coupling_has_the_configured_rank_and_spectrum(rank, alpha):
    M, sigma = saturation.coupling(16, rank, alpha, scale=3.0, seed=1)
    singular = torch.linalg.svdvals(M)
    assert int((singular > 1e-5).sum()) == rank
    torch.testing.assert_close(singular[:rank], sigma[:rank], rtol=1e-4, atol=1e-5)
    ratios = sigma[:rank] / sigma[0]
    torch.testing.assert_close(ratios, torch.arange(1, rank + 1).float() ** -alpha)
    assert float(torch.linalg.matrix_norm(M)) == pytest.approx(3.0, rel=1e-4)


def test_target_equals_a_slow_loop():
    M, _ = saturation.coupling(4, 4, 1.0, 2.0, seed=0)
    value = torch.tensor([0.5, -1.0, 2.0, 0.0])
    x, y = saturation.make_saturation_data(3, 6, 4, M, value, seed=2, cap=1.5)
    for k in range(3):
        logits = [1.5 * math.tanh(float(x[k, -1] @ M @ x[k, s]) / 1.5) for s in range(6)]
        weights = [math.exp(v) / sum(math.exp(u) for u in logits) for v in logits]
        expected = sum(w * float(x[k, s] @ value) for s, w in enumerate(weights))
        assert float(y[k]) == pytest.approx(expected, rel=1e-4, abs=1e-6)


def test_svd_truncation_is_exact_at_full_rank_and_has_rank_r():
    torch.manual_seed(0)
    head = saturation.SingleHead(dim=8, head_dim=5)
    W_Q, W_K = saturation.truncate_qk(head.W_Q, head.W_K, 5)
    torch.testing.assert_close(W_Q.T @ W_K, head.W_Q.T @ head.W_K, rtol=1e-4, atol=1e-5)
    x = torch.randn(4, 9, 8)
    full = saturation.SingleHead(8, 5)
    with torch.no_grad():
        full.W_Q.copy_(W_Q), full.W_K.copy_(W_K), full.w_V.copy_(head.w_V)
        torch.testing.assert_close(full(x), head(x), rtol=1e-4, atol=1e-5)
    for rank in (1, 2, 4):
        W_Q, W_K = saturation.truncate_qk(head.W_Q, head.W_K, rank)
        assert W_Q.shape == (rank, 8)
        assert int(torch.linalg.matrix_rank(W_Q.T @ W_K)) == rank


def test_tiny_training_full_d_beats_d_1():
    base = dict(L=16, T=16, cap=None, seed=0, dim=8, rank=8, alpha=1.0, logit_scale=2.0,
                steps=600, batch_size=128, lr=1e-2, n_train=2000, n_valid=500, data_seed=0,
                device="cpu")
    small = saturation.train_head({**base, "head_dim": 1})
    full = saturation.train_head({**base, "head_dim": 8})
    assert full["valid_nmse"] < small["valid_nmse"]


def test_main_quick(quick_args):
    result = saturation.main(quick_args(saturation, "--workers", "2"))
    json.dumps(result)
    assert set(result["saturation"]) == {"free", "capped"}


@pytest.mark.parametrize("flags, flag_name", [
    (["--head-dims", "1,32"], "--head-dims"), (["--rank", "40"], "--rank"),
    (["--head-dims", "4,2"], "--head-dims"), (["--L", "0"], "--L"),
    (["--device", "no-such-device"], "--device"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("05_saturation", flags, flag_name)

"""05_saturation.py: the match target, capped logits, training, the JSON format and its refusals
(the lemma: test_05c_bounded_logits.py; the oracle and the confound target: test_05a_confound.py;
the SVD truncation of trained heads: test_05b_low_rank.py)."""
import math

import pytest
import torch

import helpers
from conftest import RUN_KEYS, assert_rejected

saturation = helpers.load_concept("05_saturation")


def test_match_task_plants_exact_matches_and_reads_only_values():
    n, L, dim, rank, n_match = 50, 12, 10, 6, 3
    x, M, value = saturation.match_task(n, L, dim, rank, n_match, sharpness=3.0, seed=0)
    keys, values = x[..., :rank], x[..., rank:]
    torch.testing.assert_close(keys.norm(dim=-1), torch.ones(n, L))
    assert torch.all(values[:, -1] == 0)                                    # the query's value
    matches = (keys[:, :-1] - keys[:, -1:]).abs().amax(dim=-1) < 1e-6       # [n, L-1]
    assert torch.all(matches.sum(dim=1) == n_match)
    assert int(torch.linalg.matrix_rank(M)) == rank
    assert float(M[0, 0]) == pytest.approx(3.0 * math.log(L))
    assert torch.all(value[:rank] == 0) and float(value.norm()) == pytest.approx(1.0)


def test_capped_logits_never_exceed_B():
    torch.manual_seed(0)
    head = saturation.SingleHead(dim=8, head_dim=4, cap=1.5)
    with torch.no_grad():
        head.W_Q.mul_(100), head.W_K.mul_(100)                              # huge raw scores
        logits = head.logits(torch.randn(20, 30, 8))
    assert float(logits.abs().max()) <= 1.5
    assert float(logits.abs().max()) > 1.4                                  # and the cap is hit


def test_attention_scale_is_one_over_sqrt_head_dim():
    torch.manual_seed(0)
    head = saturation.SingleHead(dim=5, head_dim=4)
    x = torch.randn(2, 3, 5)
    by_hand = torch.stack([torch.stack([(head.W_Q @ x[n, -1]) @ (head.W_K @ x[n, s]) / 2.0
                                        for s in range(3)]) for n in range(2)])
    torch.testing.assert_close(head.logits(x), by_hand)


@pytest.mark.parametrize("df, table", [(1, 12.706), (4, 2.776), (30, 2.042)])
def test_t_quantile_matches_the_standard_table(df, table):
    assert helpers.t_quantile(df) == pytest.approx(table, abs=2e-3)


def test_t_interval_contains_the_mean_and_is_a_point_without_spread():
    mean, low, high = helpers.t_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    assert low < mean == 3.0 < high
    assert high - mean == pytest.approx(2.776 * math.sqrt(2.5) / math.sqrt(5), rel=1e-3)
    assert helpers.t_interval([0.5, 0.5]) == (0.5, 0.5, 0.5)
    with pytest.raises(ValueError):
        helpers.t_interval([1.0])


def test_tiny_training_full_rank_beats_rank_1_on_the_match_task():
    base = dict(task="match", L=16, cap=None, seed=0, dim=8, match_rank=4, n_match=2,
                sharpness=3.0, steps=600, batch_size=128, lr=1e-2, n_train=2000, n_valid=500,
                data_seed=0, device="cpu")
    _, _, small = saturation.train_match_head({**base, "head_dim": 1})
    model, valid, full = saturation.train_match_head({**base, "head_dim": 4})
    assert full["valid_nmse"] < small["valid_nmse"] - 0.2
    assert model.W_Q.shape == (4, 8) and len(valid[0]) == 500     # the trained head, 500 to check
    assert full["valid_nmse"] == pytest.approx(helpers.evaluate_nmse(model, valid), rel=1e-4)


def test_main_quick_writes_the_documented_format(notebook_run):
    args = saturation.config(["--quick"])
    result = notebook_run("05_saturation")   # the --quick run, as its notebook executes it
    side = result["model_side"]
    for L in map(str, args.L):
        for d in map(str, args.head_dims):
            entry = side["free"][L][d]
            assert len(entry["seeds"]) == args.seeds
            assert entry["min"] <= entry["mean"]
        for B in args.caps:
            assert set(side["capped"][f"{B:g}"][L]) == set(map(str, args.head_dims))
            assert math.isfinite(side["gain"]["capped"][f"{B:g}"][L])
        assert math.isfinite(side["gain"]["free"][L])
    paired = {"per_seed", "mean", "ci95", "verdict"}                        # helpers' layout
    for change in (side["gain_change"]["free"], *side["gain_change"]["capped"].values()):
        assert set(change) == paired and change["verdict"] in ("shrinks", "grows",
                                                                "no clear difference")
    assert set(side["capped_minus_free_change"]) == paired | {"B"}
    assert set(result) - RUN_KEYS == {"model_side"}


def test_unknown_part_is_refused_with_one_line():
    assert_rejected("05_saturation", ["--parts", "lemma"], "--parts")  # the lesson is one part


@pytest.mark.parametrize("flags, flag_name", [
    (["--head-dims", "1,32"], "--head-dims"), (["--head-dims", "4,2"], "--head-dims"),
    (["--device", "no-such-device"], "--device"), (["--caps", "0"], "--caps"),
    (["--match-rank", "16"], "--match-rank"), (["--head-dims", "1,4"], "--head-dims"),
    (["--L", "3"], "--L"), (["--seeds", "1"], "--seeds"), (["--L", "8192"], "--L"),
    (["--head-dims", "1"], "--head-dims"), (["--steps", "0"], "--steps"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("05_saturation", flags, flag_name)

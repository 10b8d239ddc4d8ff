"""03_bounds.py: the hand-built model within its bound, k by hand, Corollary 1, the script."""
import math

import pytest
import torch

import helpers
from conftest import RUN_KEYS, assert_rejected, run_quick

bounds = helpers.load_concept("03_bounds")


@pytest.mark.parametrize("seq_len", [8, 37, 256, 1024])
@pytest.mark.parametrize("beta", [1.0, 7.0, 50.0, 400.0])
def test_construction_error_stays_within_its_bound(seq_len, beta):
    rows = bounds.construction_errors([seq_len], [beta], D=3, dim=2, n=200, seed=seq_len)
    assert rows[0]["max_error"] <= rows[0]["bound"]


def test_construction_equals_a_direct_soft_min_loop():
    centres, subsets, _ = bounds.construction_task(12, D=2, dim=2, seed=0)
    x = torch.rand(3, 12, 2)
    z_tilde = bounds.run_construction(x, centres, subsets, beta=5.0)
    for k in range(3):
        for i, (centre, subset) in enumerate(zip(centres, subsets)):
            psi = [float(((x[k, t] - centre) ** 2).sum() / 2) for t in range(12)]
            logits = [5.0 * (-psi[t] + (0.0 if t in subset else -2.0)) for t in range(12)]
            weights = [math.exp(v) for v in logits]
            expected = sum(w * p for w, p in zip(weights, psi)) / sum(weights)
            assert float(z_tilde[k, i]) == pytest.approx(expected, rel=1e-5)


def test_construction_error_falls_with_beta_at_every_length():
    rows = bounds.construction_errors([16, 512], [2, 20, 200], D=2, dim=2, n=100, seed=1)
    for seq_len in (16, 512):
        errors = [row["max_error"] for row in rows if row["T"] == seq_len]
        assert errors[0] > errors[1] > errors[2]


def test_bound_is_monotone_in_beta():
    values = [bounds.construction_bound(32, 128, beta) for beta in [1, 2, 5, 10, 100, 1000]]
    assert all(later < earlier for earlier, later in zip(values, values[1:]))


@pytest.mark.parametrize("seq_len, s, D, n, expected", [
    (128, 3, 4, 8, 26 / 28 - 1), (1024, 3, 4, 8, 250 / 28 - 1), (4096, 3, 4, 8, 1018 / 28 - 1),
    (128, 1, 2, 2, 30 / 4 - 1), (1024, 1, 2, 2, 254 / 4 - 1),
])
def test_lower_bound_exponent_by_hand(seq_len, s, D, n, expected):
    assert bounds.lower_bound_exponent(seq_len, s, D, n) == pytest.approx(expected)


def test_first_nonvacuous_length():
    for s, D, n in [(3, 4, 8), (1, 2, 2), (2, 4, 8)]:
        T = bounds.first_nonvacuous_length(s, D, n)
        assert bounds.lower_bound_exponent(T, s, D, n) > 0
        assert bounds.lower_bound_exponent(T - 1, s, D, n) <= 0


def test_corollary_thresholds_by_hand():
    (row,) = bounds.corollary_table([(1, 2)])
    assert row["condition_T"] == 250  # 1^2 + 2^2 = 5 = 250 / 50
    T = row["k_exceeds_gamma_beyond_T"]
    assert bounds.lower_bound_exponent(T, 1, 2, n=2) == pytest.approx(2)  # k = gamma exactly
    assert bounds.lower_bound_exponent(T + 1, 1, 2, n=2) > 2
    assert row["k_at_condition_T"] > row["gamma"]  # the paper's condition is sufficient


def test_fit_slope_recovers_a_power_law():
    x = [10, 100, 1000]
    assert bounds.fit_slope(x, [3 * v ** -0.7 for v in x]) == pytest.approx(-0.7)


def test_main_quick(notebook_run):
    result = notebook_run("03_bounds")   # the --quick run, as its notebook executes it
    assert all(row["max_error"] <= row["bound"] for row in result["construction"])


@pytest.mark.parametrize("flags, flag_name", [
    (["--betas", "0"], "--betas"),
    (["--construction-T", "0"], "--construction-T"), (["--device", "no-such-device"], "--device"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("03_bounds", flags, flag_name)


def test_parts_runs_only_what_it_names(tmp_path):
    result = run_quick("03_bounds", tmp_path, "--parts", "b,d")
    assert set(result) - RUN_KEYS == {"lower_bound", "corollary"}
    assert result["script"] == "03_bounds_quick_parts_b_d.py"


@pytest.mark.parametrize("parts", ["a,e", "c"])   # c, Fig. 1b trained, is the study 03a now
def test_an_unknown_part_is_refused_with_one_line(parts):
    assert_rejected("03_bounds", ["--parts", parts], "--parts")

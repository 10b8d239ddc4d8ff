"""03_bounds.py: the hand-built model within its bound, k by hand, the printout of the quick
run, the script."""
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


def test_fit_slope_recovers_a_power_law():
    x = [10, 100, 1000]
    assert bounds.fit_slope(x, [3 * v ** -0.7 for v in x]) == pytest.approx(-0.7)


def test_the_printout_shows_the_worst_errors_and_the_lower_bound_at_the_paper_s_longest_T(notebook_run):
    """Part a's printout holds the beta = 10, 100 and 1000 cells of the shortest and longest T
    and the fitted slopes, as the quick run computed them; part b, k at T = 128."""
    result = notebook_run("03_bounds")
    printed = "".join("".join(o.get("text", "")) for o in notebook_run.outputs["03_bounds"])
    assert f"every error within its bound: {result['within_bound']}" in printed
    row = next(r for r in result["construction"] if r["T"] == 64 and r["beta"] == 10)
    assert f"beta=10: {row['max_error']:.1e} ({row['bound']:.1e})" in printed
    assert f"T=64: {result['construction_rate']['64']:.2f}" in printed
    k = bounds.lower_bound_exponent(128, s=3, D=4, n=8)               # part b: h = D - 1 at T = 128
    assert f"s=3 D=4 n=8: {k:.2f}, s=2 D=4 n=8: " in printed and f"{k:.2f}" == "-0.07"


def test_main_quick(notebook_run):
    result = notebook_run("03_bounds")   # the --quick run, as its notebook executes it
    assert all(row["max_error"] <= row["bound"] for row in result["construction"])


@pytest.mark.parametrize("flags, flag_name", [
    (["--betas", "0"], "--betas"),
    (["--construction-T", "0"], "--construction-T"), (["--construction-T", "8,5000"],
                                                        "--construction-T"),
    (["--device", "no-such-device"], "--device"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("03_bounds", flags, flag_name)


def test_a_quick_run_records_both_parts_and_the_file_that_ran(tmp_path):
    result = run_quick("03_bounds", tmp_path)
    assert set(result) - RUN_KEYS == {"construction", "within_bound", "construction_rate",
                                      "lower_bound"}
    assert result["script"] == "03_bounds.py"


def test_a_lesson_has_no_parts_to_choose():
    assert_rejected("03_bounds", ["--parts", "b"], "--parts")

"""further/03b_uniqueness.py: Corollary 1's thresholds by hand, the quick run, the committed run,
the script's refusals."""
import json

import pytest

import helpers
from conftest import ROOT, RUN_KEYS, assert_rejected

bounds = helpers.load_concept("03_bounds")
study = helpers.load_concept("03b_uniqueness")


def test_corollary_thresholds_by_hand():
    (row,) = study.corollary_table([(1, 2)])
    assert row["condition_T"] == 250  # 1^2 + 2^2 = 5 = 250 / 50
    T = row["k_exceeds_gamma_beyond_T"]
    assert bounds.lower_bound_exponent(T, 1, 2, n=2) == pytest.approx(2)  # k = gamma exactly
    assert bounds.lower_bound_exponent(T + 1, 1, 2, n=2) > 2
    assert row["k_at_condition_T"] > row["gamma"]  # the paper's condition is sufficient


def test_the_contradiction_starts_before_the_paper_s_condition_for_every_pair():
    for row in study.corollary_table([(D1, D1 + 1) for D1 in range(1, 9)]):
        assert row["k_exceeds_gamma_beyond_T"] < row["condition_T"]


def test_main_quick(notebook_run):
    result = notebook_run("03b_uniqueness")   # the --quick run, as its notebook executes it
    assert set(result) - RUN_KEYS == {"corollary"}
    assert [(row["D1"], row["D2"]) for row in result["corollary"]] == [(1, 2), (2, 3), (3, 4),
                                                                      (4, 5)]


def test_the_committed_run_holds_the_numbers_the_text_quotes():
    path = ROOT / "results" / "03b_uniqueness.json"
    rows = json.loads(path.read_text(encoding="utf-8"))["corollary"]
    assert [row["condition_T"] for row in rows] == [250, 650, 1250, 2050]
    assert [row["k_exceeds_gamma_beyond_T"] for row in rows] == [56, 128, 224, 344]
    assert [round(row["k_at_condition_T"], 1) for row in rows] == [14.1, 21.6, 29.6, 37.8]


@pytest.mark.parametrize("flags, flag_name", [
    (["--D1", "0"], "--D1"), (["--D1", "1,,2"], "--D1"),
    (["--device", "no-such-device"], "--device"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("03b_uniqueness", flags, flag_name)

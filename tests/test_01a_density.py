"""further/01a_density.py: Lemma 2's features and both Lemma 3 selectors against slow loops, the
demo's error against its bound, the quick run's JSON and its refusals."""
import itertools
import json
import math

import pytest
import torch

import helpers
from conftest import RUN_KEYS, assert_rejected, printed_help, run_quick

task = helpers.load_concept("01_retrieval_task")
density = helpers.load_concept("01a_density")


def test_lemma_2_features_equal_their_definition_by_loops():
    x = task.sample_inputs(4, 7, 1, seed=4, distribution="uniform")[..., 0]  # [4, 7]
    m = 2
    Y, U, v, w = density.subset_features(x, m)
    for k in range(4):
        values = x[k].tolist()
        subsets = list(itertools.combinations(range(7), m))
        for t in range(7):
            with_t = [A for A in subsets if t in A]
            assert float(Y[k, t]) == max(min(values[u] for u in A) for A in with_t)
            assert float(U[k, t]) == min(max(values[u] for u in A) for A in with_t)
        assert float(v[k]) == sorted(values, reverse=True)[m - 1]  # the m-th largest
        assert float(w[k]) == sorted(values)[m - 1]                # the m-th smallest
        # Lemma 2's closed form: Y = min(x, v_m)
        assert Y[k].tolist() == [min(value, float(v[k])) for value in values]


def test_density_demo_error_shrinks_with_q_and_obeys_its_bound():
    result = density.density_demo(seq_len=8, sharpness=[1, 10, 100, 1000], n=100, dim=2, seed=0)
    errors = [row["max_error"] for row in result["rows"]]
    assert all(later < earlier for earlier, later in zip(errors, errors[1:]))
    assert all(row["max_error"] <= row["bound"] for row in result["rows"])


def test_papers_selector_converges_on_the_density_demo():
    result = density.density_demo(seq_len=8, sharpness=[1, 10, 100, 1000], n=100, dim=2, seed=0)
    errors = [row["paper_max_error"] for row in result["rows"]]
    assert all(later < earlier for earlier, later in zip(errors, errors[1:]))
    assert errors[-1] < 1e-2                                   # q = 1000


def test_papers_selector_against_its_formula_by_loops():
    Y, U = torch.tensor([[0.2, 0.7, 0.5]]), torch.tensor([[0.4, 0.7, 0.6]])
    v, w, q = torch.tensor([0.5]), torch.tensor([0.4]), 30.0
    got = density.paper_select(Y, U, v, w, q)
    for t in range(3):
        a, b = math.exp(q * (U[0, t] - w[0]) ** 2), math.exp(q * (Y[0, t] - v[0]) ** 2)
        assert float(got[0, t]) == pytest.approx((a * U[0, t] + b * Y[0, t]) / (a + b))
    huge = density.paper_select(Y, U, v, w, 1e6)               # e^{q(.)^2} overflows a float
    assert torch.isfinite(huge).all()


def test_our_selector_against_its_formula_by_loops():
    Y, U, v, q = torch.tensor([[0.2, 0.5, 0.5]]), torch.tensor([[0.4, 0.7, 0.6]]), \
        torch.tensor([0.5]), 30.0
    got = density.smooth_select(Y, U, v, q)
    for t in range(3):
        expected = Y[0, t] + (U[0, t] - Y[0, t]) * math.exp(-q * (Y[0, t] - v[0]) ** 2)
        assert float(got[0, t]) == pytest.approx(float(expected))
    assert got[0, 1:].tolist() == U[0, 1:].tolist()            # Y = v: the selector takes U


def test_main_quick_writes_the_documented_format(tmp_path):
    result = run_quick("01a_density", tmp_path)
    args = density.config(["--quick"])
    assert set(result) - RUN_KEYS == {"density"}
    demo = result["density"]
    assert demo["seq_len"] == args.T and demo["subset_size"] == math.ceil(args.T / 4)
    assert demo["n_subsets"] == math.comb(args.T, demo["subset_size"])
    assert [row["q"] for row in demo["rows"]] == args.q
    assert all(set(row) == {"q", "max_error", "bound", "paper_max_error"} for row in demo["rows"])
    assert [path.name for path in (tmp_path / "figures").iterdir()] == ["01a_density_quick.png"]
    json.dumps(result)


def test_help_documents_every_flag():
    shown = printed_help(density)
    for flag in ["--quick", "--full", "--device", "--seed", "--out", "--T", "--d", "--n-samples",
                 "--q"]:
        assert flag in shown


@pytest.mark.parametrize("flags, flag_name", [
    (["--T", "40"], "--T"), (["--T", "1"], "--T"), (["--q", "-1"], "--q"), (["--q", "0"], "--q"),
    (["--n-samples", "0"], "--n-samples"), (["--d", "0"], "--d"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("01a_density", flags, flag_name)

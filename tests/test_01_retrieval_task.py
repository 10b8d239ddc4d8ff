"""01_retrieval_task.py: the task against slow loops, its directions, the script contract."""
import json
import math
import re

import pytest
import torch

import conftest
import helpers
import harness
import plumbing
from conftest import assert_rejected, printed_help, run_script

task = helpers.load_concept("01_retrieval_task")


def test_synthetic_target_equals_a_direct_loop():
    x, y, positions = task.sample_synthetic(20, 12, D=3, dim=4, seed=1, directions="orthonormal")
    assert x.shape == (20, 12, 4) and y.shape == (20,) and positions.shape == (20, 3)
    for k in range(20):
        expected, argmax = 0.0, []
        for i in range(3):  # a_i = e_i, S_i = [T], F_0 = sum
            scores = [float(x[k, t, i]) for t in range(12)]
            expected += max(scores)
            argmax.append(scores.index(max(scores)))
        assert float(y[k]) == pytest.approx(expected, abs=1e-5)
        assert positions[k].tolist() == argmax


def test_max_plus_min_toy_task():
    x, y, positions = task.sample_max_plus_min(30, 9, seed=2)
    assert x.shape == (30, 9, 1) and float(x.min()) >= 0 and float(x.max()) <= 1
    for k in range(30):
        values = x[k, :, 0].tolist()
        assert float(y[k]) == pytest.approx(max(values) + min(values), abs=1e-6)
        assert positions[k].tolist() == [values.index(max(values)), values.index(min(values))]


def test_general_task_with_subsets_min_and_a_nonlinear_outer_function():
    seq_len = 8
    general = task.RetrievalTask(
        score_functions=[lambda x: (x ** 2).sum(-1), lambda x: torch.sin(x[..., 1])],
        subsets=[[0, 2, 4], [5, 6, 7, 1]], modes=["min", "max"],
        outer=lambda z: torch.exp(z[:, 0]) * z[:, 1])
    x = task.sample_inputs(15, seq_len, 2, seed=3)
    y, z, positions = general(x)
    for k in range(15):
        first = {t: float((x[k, t] ** 2).sum()) for t in [0, 2, 4]}
        second = {t: math.sin(float(x[k, t, 1])) for t in [5, 6, 7, 1]}
        t1, t2 = min(first, key=first.get), max(second, key=second.get)
        assert positions[k].tolist() == [t1, t2]
        assert float(y[k]) == pytest.approx(math.exp(first[t1]) * second[t2], rel=1e-5)


def test_subsets_smaller_than_a_quarter_are_rejected():
    with pytest.raises(ValueError, match="T/4"):
        task.check_subsets([[0, 1]], seq_len=12)
    with pytest.raises(ValueError, match="distinct positions"):
        task.check_subsets([[0, 0, 1, 2]], seq_len=8)
    with pytest.raises(ValueError, match="distinct positions"):
        task.check_subsets([[0, 1, 9]], seq_len=8)
    task.check_subsets([[0, 1, 2]], seq_len=12)  # exactly T/4 is allowed


def test_same_seed_same_data_other_seed_other_data():
    first = task.sample_synthetic(50, 16, seed=7)
    again = task.sample_synthetic(50, 16, seed=7)
    other = task.sample_synthetic(50, 16, seed=8)
    assert all(torch.equal(a, b) for a, b in zip(first, again))
    assert not torch.equal(first[0], other[0])


def test_D_out_of_range_is_rejected():
    with pytest.raises(ValueError, match="D must be between"):
        task.synthetic_task(5, seq_len=8, dim=4)


def test_main_quick_returns_its_numbers(notebook_run):
    result = notebook_run("01_retrieval_task")   # the --quick run, as its notebook executes it
    variances = [stats["var"] for stats in result["target_stats"].values()]
    assert variances[0] > variances[-1]  # Var(y) shrinks as T grows: the reason for NMSE
    json.dumps(result)  # everything main returns is JSON-ready


def test_the_printout_shows_the_lengths_and_the_cosines_of_the_directions(notebook_run):
    notebook_run("01_retrieval_task")
    printed = "".join("".join(o.get("text", "")) for o in notebook_run.outputs["01_retrieval_task"])
    directions = task.task_directions(4, 4, "gaussian")
    lengths = [math.sqrt(sum(float(value) ** 2 for value in a)) for a in directions]
    assert "lengths [" + " ".join(f"{length:.2f}".rstrip("0") for length in lengths) in printed
    cosine = float(directions[0] @ directions[3]) / (lengths[0] * lengths[3])
    assert f"{cosine:.2f}" in printed.split("cosines")[1]


def test_script_writes_json_and_figures(tmp_path):
    done = run_script("01_retrieval_task", "--quick", "--device", "cpu", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    payload = json.loads((tmp_path / "results" / "01_retrieval_task_quick.json")
                         .read_text(encoding="utf-8"))  # a --quick run is named so
    assert payload["config"]["preset"] == "quick" and payload["wall_time_s"] > 0
    assert len(list((tmp_path / "figures").glob("01_*.png"))) == 2
    assert "device: cpu" in done.stdout


@pytest.mark.parametrize("flags, flag_name", [
    (["--T", "0"], "--T"), (["--D", "5"], "--D"), (["--n-samples", "1"], "--n-samples"),
    (["--device", "no-such-device"], "--device"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("01_retrieval_task", flags, flag_name)


def test_help_documents_every_flag():
    shown = printed_help(task)
    for flag in ["--quick", "--full", "--device", "--seed", "--out", "--T", "--D", "--d",
                 "--directions", "--n-samples"]:
        assert flag in shown


def test_random_directions_are_fixed_unit_vectors_and_change_the_target():
    random = task.task_directions(4, 4, "random")
    torch.testing.assert_close(random.norm(dim=1), torch.ones(4))
    assert torch.equal(random, task.task_directions(4, 4, "random"))      # "fixed"
    x, y, _ = task.sample_synthetic(50, 8, seed=3, directions="random")
    by_loops = [sum(max(float(x[k, t] @ a) for t in range(8)) for a in random) for k in range(50)]
    torch.testing.assert_close(y, torch.tensor(by_loops), rtol=1e-5, atol=1e-5)


def test_gaussian_directions_are_the_random_draws_unnormalised():
    random, gaussian = task.task_directions(4, 4, "random"), task.task_directions(4, 4, "gaussian")
    norms = gaussian.norm(dim=1, keepdim=True)
    torch.testing.assert_close(gaussian / norms, random)
    assert not torch.allclose(norms, torch.ones_like(norms))             # unequal lengths
    assert torch.equal(gaussian, task.task_directions(4, 4, "gaussian"))  # fixed
    with pytest.raises(ValueError, match="directions must be one of"):
        task.task_directions(4, 4, "diagonal")


# The files with a --directions row in their settings: 01 and the files that train on its task.
WITH_DIRECTIONS = [script.stem for script in conftest.SCRIPTS if re.search(
    r"""["']directions["']: *(task\.SETTINGS|Setting)\b""", script.read_text(encoding="utf-8"))]


def test_the_task_s_trainers_have_a_directions_flag():
    assert "01_retrieval_task" in WITH_DIRECTIONS and len(WITH_DIRECTIONS) >= 2, WITH_DIRECTIONS


@pytest.mark.parametrize("name", WITH_DIRECTIONS)
def test_every_file_that_samples_the_task_has_the_same_directions_flag(name, tmp_path):
    """--directions: one flag, one set of values, one default, in every file that has it."""
    module = helpers.load_concept(name)
    assert module.SETTINGS["directions"] is task.SETTINGS["directions"]     # one row, shared
    parser = harness.build_parser(module.SETTINGS)
    action = next(a for a in parser._actions if a.dest == "directions")
    assert tuple(action.choices) == task.DIRECTIONS
    assert f"default: {task.DEFAULT_DIRECTIONS}" in action.help         # --help says the default
    assert module.config(["--quick", "--out", str(tmp_path)]).directions == task.DEFAULT_DIRECTIONS
    args = module.config(["--quick", "--directions", "random", "--out", str(tmp_path)])
    assert args.directions == "random"


@pytest.mark.parametrize("D", [1, 3, 4])
def test_each_reading_gives_D_directions_of_the_promised_kind(D):
    orthonormal = task.task_directions(D, 4, "orthonormal")
    assert torch.equal(orthonormal @ orthonormal.T, torch.eye(D))        # exactly orthonormal
    random = task.task_directions(D, 4, "random")
    torch.testing.assert_close(random.norm(dim=1), torch.ones(D))        # unit vectors
    assert task.task_directions(D, 4, "gaussian").shape == (D, 4)


@pytest.mark.parametrize("name", WITH_DIRECTIONS)
def test_an_unknown_reading_is_refused_with_one_line(name):
    assert_rejected(name, ["--directions", "diagonal"], "--directions")

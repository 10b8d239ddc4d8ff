"""The teaching kit: the reference exercises pass their checks, the generated handout runs with
every check "to do" (as .py and as a notebook), every check reports a wrong answer, and the
stripper refuses bad markers and leaves no solution line behind."""
import contextlib
import importlib.util
import io
import math
import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = sorted((ROOT / "exercises").glob("ex[0-9][0-9]_*.py"))


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


handout = load(ROOT / "exercises" / "make_handout.py", "make_handout")


def run_file(path):
    """Run an exercise file as a script in this process (a fresh `check` each time); stdout."""
    sys.modules.pop("check", None)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        runpy.run_path(str(path), run_name="__main__")
    sys.modules.pop("check", None)
    return buffer.getvalue()


def check_lines(output):
    return [line for line in output.splitlines() if line.startswith("[")]


def test_there_are_at_least_ten_exercises_each_with_a_check():
    text = "".join(path.read_text() for path in EXERCISES)
    checks = load(ROOT / "exercises" / "check.py", "check_module")
    names = [name for name in dir(checks) if name.startswith("ex0")]
    assert len(EXERCISES) == 6 and len(names) >= 10
    assert all(f"check.{name}(" in text for name in names)                  # every check used
    assert text.count("## ") >= 10 and all(word in text for word in ("easy", "medium", "hard"))


@pytest.mark.parametrize("path", EXERCISES, ids=lambda path: path.stem)
def test_reference_exercises_pass_every_check(path):
    lines = check_lines(run_file(path))
    assert lines and all(line.startswith(("[ok]", "[answered]")) for line in lines), lines


@pytest.fixture(scope="module")
def student_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("handout")
    handout.make_handout(folder)
    return folder


@pytest.mark.parametrize("path", EXERCISES, ids=lambda path: path.stem)
def test_handout_runs_to_the_end_with_every_check_to_do(path, student_folder):
    lines = check_lines(run_file(student_folder / path.name))
    assert lines and all(line.startswith("[to do]") for line in lines), lines


@pytest.mark.parametrize("path", EXERCISES, ids=lambda path: path.stem)
def test_handout_notebook_executes(path, student_folder):
    notebook = nbformat.read(student_folder / f"{path.stem}.ipynb", as_version=4)
    assert not any(cell.get("outputs") for cell in notebook.cells)         # made without outputs
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(student_folder)}}).execute()
    printed = "".join(out.get("text", "") for cell in notebook.cells
                      for out in cell.get("outputs", []))
    assert "[to do]" in printed and "[error]" not in printed and "[ok]" not in printed


@pytest.mark.parametrize("path", EXERCISES, ids=lambda path: path.stem)
def test_no_solution_line_survives_in_the_handout(path, student_folder):
    reference = path.read_text().splitlines()
    inside, outside, hidden = False, set(), set()
    for line in reference:
        if handout.MARKER.match(line):
            inside = "BEGIN" in line
            continue
        (hidden if inside else outside).add(line.strip())
    student = {line.strip() for line in (student_folder / path.name).read_text().splitlines()}
    leaked = {line for line in hidden - outside if line} & student
    assert not leaked
    assert "### BEGIN" not in (student_folder / path.name).read_text()


def wrong(name):
    """A plausible wrong answer for each check."""
    import torch
    return {
        "ex01_nmse": lambda p, t: 0.5,
        "ex01_retrieval_target": lambda x, a: x.sum(dim=(1, 2)),
        "ex02_parameter_count": lambda model: sum(p.numel() for p in model.parameters()),
        "ex02_knee_for_D3": 4,
        "ex03_exponent": lambda T, s, D, n: T / 4,
        "ex03_first_useful_T": lambda s, D, n: 1,
        "ex03_hand_built_head": lambda layer, D: None,                      # random weights
        "ex04_memorising_tokens": lambda x: x.repeat(1, 1, x.shape[1]),
        "ex04_read_back": lambda average, T, d: average.reshape(-1, T, d),  # forgot the T
        "ex05_softmax_band": lambda B, L: (math.exp(-B) / L, math.exp(B) / L),
        "ex05_entropy_floor": lambda B, L: 1 - B / math.log(L),
        "ex06_attention_parameters": lambda layers, E: 3 * E * sum(h * d for h, d in layers),
        "ex06_winners": lambda task: "uniform",
        "_torch": torch,
    }.get(name)


def test_every_check_reports_a_wrong_answer_and_never_raises(capsys):
    checks = load(ROOT / "exercises" / "check.py", "check_wrong")
    for name in (name for name in dir(checks) if name.startswith("ex0")):
        answer = wrong(name)
        if name in ("ex01_why_nmse", "ex06_why"):                           # written answers
            assert getattr(checks, name)("") == "to do"
            assert getattr(checks, name)("my answer") == "answered"
            continue
        assert answer is not None, f"add a wrong answer for {name}"
        assert getattr(checks, name)(answer) == "not yet", name

        def broken(*args):
            raise ValueError("a bug in the student's code")

        assert getattr(checks, name)(broken if callable(answer) else "x") in ("error", "not yet")
    out = capsys.readouterr().out
    assert "Traceback" not in out
    assert checks.summary()["not yet"] >= 13


@pytest.mark.parametrize("text, message", [
    ("### BEGIN SOLUTION\nx = 1\n", "never closed"),
    ("x = 1\n### END SOLUTION\n", "without a BEGIN"),
    ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION\n### END SOLUTION\n", "nested"),
    ("### BEGIN ANSWER a\na = 1\n### END SOLUTION\n", "closes the ANSWER block"),
    ("### BEGIN ANSWER\na = 1\n### END ANSWER\n", "needs the answer's name"),
])
def test_stripper_rejects_bad_markers(text, message):
    with pytest.raises(handout.MarkerError, match=message):
        handout.strip(text, "bad.py")


def test_stripper_keeps_indentation_and_names_the_answer():
    text = ("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n"
            "### BEGIN ANSWER my_answer\nmy_answer = 'x'\n### END ANSWER\n")
    assert handout.strip(text) == ('def f():\n    raise NotImplementedError("your code here")\n'
                                   "my_answer = None  # your answer here, as a string\n")


def test_command_line_refuses_bad_markers_in_one_line(tmp_path, monkeypatch, capsys):
    source = tmp_path / "source"
    source.mkdir()
    (source / "ex01_bad.py").write_text("### BEGIN SOLUTION\nx = 1\n")
    (source / "check.py").write_text("REPOSITORY = None\n")
    monkeypatch.setattr(handout, "HERE", source)
    with pytest.raises(SystemExit) as stopped:
        handout.main([str(tmp_path / "out")])
    assert stopped.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "ex01_bad.py:1" in error[0]                 # one line


def fake_clone(folder):
    """The parts of a clone the checks read: helpers.py, the numbered files, results/."""
    folder.mkdir(parents=True)
    for path in [ROOT / "helpers.py", *ROOT.glob("0[1-7]_*.py")]:
        shutil.copy(path, folder / path.name)
    shutil.copytree(ROOT / "results", folder / "results")
    return folder


def run_as_student(path, cwd, **environment):
    """`python path` in a fresh process, as a student runs it: (exit code, stdout, stderr)."""
    env = {key: value for key, value in os.environ.items() if key != "HEADS_REPOSITORY"}
    done = subprocess.run([sys.executable, str(path)], cwd=cwd, capture_output=True, text=True,
                          env={**env, **environment}, timeout=120)
    return done.returncode, done.stdout, done.stderr


def test_a_handout_moved_into_another_clone_reads_that_clone(tmp_path):
    """Made in clone A, copied into clone B at another path, A removed: it runs, reading B."""
    first = tmp_path / "a" / "handout"
    handout.make_handout(first)
    second = fake_clone(tmp_path / "b") / "handout"
    shutil.copytree(first, second)
    shutil.rmtree(tmp_path / "a")
    code, out, err = run_as_student(second / "ex02_model.py", cwd=tmp_path)
    lines = check_lines(out)
    assert code == 0 and "Traceback" not in err, err
    assert lines and all(line.startswith("[to do]") for line in lines), lines
    (tmp_path / "b" / "results" / "02_multihead_model_D3.json").unlink()      # B is what it reads
    filled = (second / "ex02_model.py").read_text().replace("predicted_knee = None", "predicted_knee = 3")
    (second / "ex02_model.py").write_text(filled)
    code, out, _ = run_as_student(second / "ex02_model.py", cwd=tmp_path)
    assert any(line.startswith("[error]") and "2.2" in line for line in check_lines(out)), out


def test_outside_a_clone_one_line_says_how_to_point_at_one(tmp_path):
    handout.make_handout(tmp_path / "loose")
    code, out, err = run_as_student(tmp_path / "loose" / "ex01_retrieval.py", cwd=tmp_path)
    assert code == 2 and not check_lines(out)
    assert len(err.strip().splitlines()) == 1 and "HEADS_REPOSITORY" in err
    code, out, err = run_as_student(tmp_path / "loose" / "ex02_model.py", cwd=tmp_path,
                                    HEADS_REPOSITORY=str(ROOT))
    assert code == 0 and check_lines(out), err


def test_a_second_handout_keeps_students_work(tmp_path, capsys):
    folder = tmp_path / "handout"
    handout.main([str(folder)])
    handout.main([str(folder)])                                # unchanged files: rewritten freely
    work = (folder / "ex01_retrieval.py").read_text() + "\nmy_work = 1\n"
    (folder / "ex01_retrieval.py").write_text(work)
    with pytest.raises(SystemExit) as stopped:
        handout.main([str(folder)])
    assert stopped.value.code == 2 and (folder / "ex01_retrieval.py").read_text() == work
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "ex01_retrieval.py" in error[0] and "--force" in error[0]
    handout.main([str(folder), "--force"])
    assert "my_work" not in (folder / "ex01_retrieval.py").read_text()

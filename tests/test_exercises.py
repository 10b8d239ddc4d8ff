"""The teaching kit: the reference exercises pass their checks, the generated handout runs with
every check "to do" (as .py and as a notebook), every check reports a wrong answer, and the
stripper refuses bad markers and leaves no solution line behind."""
import contextlib
import importlib.util
import io
import json
import math
import os
import runpy
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy
import pytest

import conftest
import harness
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
    text = "".join(path.read_text(encoding="utf-8") for path in EXERCISES)
    checks = load(ROOT / "exercises" / "check.py", "check_module")
    names = [name for name in dir(checks) if name.startswith("ex0")]
    assert len(EXERCISES) == 7 and len(names) >= 20
    assert all(f"check.{name}(" in text for name in names)                  # every check used
    assert text.count("## ") >= 20 and all(word in text for word in ("easy", "medium", "hard"))


@pytest.mark.parametrize("path", EXERCISES, ids=lambda path: path.stem)
def test_reference_exercises_pass_every_check(path):
    lines = check_lines(run_file(path))
    assert lines and all(line.startswith(("[ok]", "[answered]", "[recorded]", "[reveal]"))
                         for line in lines), lines
    recorded = [line.split()[1] for line in lines if line.startswith("[recorded]")]
    judged = [line.split()[1] for line in lines if line.startswith("[ok]")]
    assert all(number in judged for number in recorded), lines      # each judged at its reveal


@pytest.fixture(scope="module")
def student_folder(tmp_path_factory):
    """A handout outside any clone, pointed at this one by $HEADS_REPOSITORY (as a student with
    the handout in their home folder would)."""
    folder = tmp_path_factory.mktemp("handout")
    handout.make_handout(folder)
    before = os.environ.get("HEADS_REPOSITORY")
    os.environ["HEADS_REPOSITORY"] = str(ROOT)
    yield folder
    if before is None:
        del os.environ["HEADS_REPOSITORY"]
    else:
        os.environ["HEADS_REPOSITORY"] = before


@pytest.mark.parametrize("path", EXERCISES, ids=lambda path: path.stem)
def test_handout_runs_to_the_end_with_every_check_to_do(path, student_folder):
    lines = check_lines(run_file(student_folder / path.name))
    assert lines and all(line.startswith(("[to do]", "[reveal]")) for line in lines), lines


@pytest.mark.parametrize("path", EXERCISES, ids=lambda path: path.stem)
def test_handout_notebooks_match_their_scripts(path, student_folder):
    notebook = nbformat.read(student_folder / f"{path.stem}.ipynb", as_version=4)
    nbformat.validate(notebook)
    assert not any(cell.get("outputs") for cell in notebook.cells)         # made without outputs
    assert notebook.metadata.kernelspec.name == "python3"
    script = (student_folder / path.name).read_text(encoding="utf-8")
    assert all(cell.source.strip() in script for cell in notebook.cells if cell.source.strip()
               and cell.cell_type == "code")


def test_a_handout_notebook_executes(student_folder):
    """One notebook is executed (each takes seconds to start a kernel; the .py files all run)."""
    path = EXERCISES[0]
    notebook = nbformat.read(student_folder / f"{path.stem}.ipynb", as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(student_folder)}}).execute()
    printed = "".join(out.get("text", "") for cell in notebook.cells
                      for out in cell.get("outputs", []))
    assert "[to do]" in printed and "[error]" not in printed and "[ok]" not in printed


def test_in_a_notebook_on_macos_the_worker_names_the_student_s_line_and_stops_a_runaway():
    """A notebook's cells live in the kernel's linecache, not in a file: the worker process that
    runs the check on macOS and Windows still shows the student's line, still finds a stub
    left in place, and is killed at the limit whatever the cell's loop catches."""
    cells = [f"import sys\nsys.path[:0] = [{str(ROOT / 'tests')!r}, {str(ROOT / 'exercises')!r}]\n"
             "import simulated_os\nsimulated_os.simulate('macos')\nimport check\n"
             "check.TIME_LIMIT = 1",
             "def nmse(prediction, target):\n    scale = 1.0\n"
             "    return float(((prediction - target) ** 2).mean()) / 0 * scale\n"
             "check.ex01_nmse(nmse)",
             "def nmse(prediction, target):\n    started = True\n    raise NotImplementedError\n"
             "check.ex01_nmse(nmse)",
             "def nmse(prediction, target):\n    while True:\n        try:\n"
             "            pass\n        except:\n            pass\n"
             "check.ex01_nmse(nmse)"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    said = ["".join(out.get("text", "") for out in cell.get("outputs", []))
            for cell in notebook.cells[1:]]
    assert "[error]" in said[0] and "your line 3: return float(((prediction" in said[0]
    assert "[to do]" in said[1] and "`raise NotImplementedError` left on line 3" in said[1]
    assert "time limit" in said[2] and "may still be running" not in said[2]


@pytest.mark.parametrize("path", EXERCISES, ids=lambda path: path.stem)
def test_no_solution_line_survives_in_the_handout(path, student_folder):
    reference = path.read_text(encoding="utf-8").splitlines()
    inside, outside, hidden = False, set(), set()
    for line in reference:
        if handout.MARKER.match(line):
            inside = "BEGIN" in line
            continue
        (hidden if inside else outside).add(line.strip())
    student_text = (student_folder / path.name).read_text(encoding="utf-8")
    student = {line.strip() for line in student_text.splitlines()}
    leaked = {line for line in hidden - outside if line} & student
    assert not leaked
    assert "### BEGIN" not in (student_folder / path.name).read_text(encoding="utf-8")


def wrong(name):
    """Plausible wrong answers for each check, among them the shortcuts a student could take."""
    return {
        "ex01_nmse": [lambda p, t: 0.5, lambda p, t: str(float(((p - t) ** 2).mean() / t.var())),
                      lambda p, t: float(((p - t) ** 2).mean() / (t ** 2).mean())],   # E[y^2]
        "ex01_retrieval_target": [lambda x, a: x.sum(dim=(1, 2)),
                                  lambda x, a: x[..., :a.shape[0]].max(dim=1).values.sum(dim=1)],
        "ex01_smallest_q": [lambda e: 1 / e ** 2, lambda e: 1 / (2 * e ** 2),
                            lambda e: 1.01 / (2 * math.e * e ** 2)],         # 1 % above
        "ex02_parameter_count": [lambda model: sum(p.numel() for p in model.parameters())],
        "ex02_knee_for_D3": [4, "4", "three"],
        "ex02_directions_covered": [
            lambda a: len(a), lambda a: len(a[0]),
            lambda a: len({max(range(len(a)), key=lambda h: a[h][i])      # arg-max over heads
                           for i in range(len(a[0]))}),
            lambda a: sum(any(row[i] > 0.5 for row in a) for i in range(len(a[0])))],  # > 0.5
        "ex02_reversal_score": [lambda e: sum(max(e[i] - e[i + 1], 0) for i in range(len(e) - 1))],
        "ex02_decades": [lambda e: [math.log(a / b) for a, b in zip(e, e[1:])],       # natural log
                         lambda e: [a / b for a, b in zip(e, e[1:])],                  # no log
                         lambda e: [math.log10(b / a) for a, b in zip(e, e[1:])],     # sign
                         lambda e: [math.log10(e[0] / b) for b in e[1:]]],            # from h = 1
        "ex03_exponent": [lambda T, s, D, n: T / 4,
                          lambda T, s, D, n: (T // 4 - s - D + 1) / ((n + 1) * s + 1) - 1,
                          lambda T, s, D, n: (-(-T // 4) - s - D + 1) / ((n + 1) * s + 1) - 1],
        "ex03_first_useful_T": [lambda s, D, n: 1, lambda s, D, n: 4 * ((n + 2) * s + D)],
        "ex03_hand_built_head": [lambda layer, D: None],                     # random weights
        "ex04_memorising_tokens": [lambda x: x.repeat(1, 1, x.shape[1])],
        "ex04_read_back": [lambda average, T, d: average.reshape(-1, T, d)],  # forgot the T
        "ex04_lemma9_weights": [lambda T, n: T * n, lambda T, n: 3 * T * n],
        "ex05_softmax_band": [lambda B, L: (math.exp(-B) / L, math.exp(B) / L),
                              lambda B, L: (0.0, 1.0)],
        "ex05_entropy_floor": [lambda B, L: 1 - B / math.log(L),
                               lambda B, L: max(0.0, 1 - 2 * B / math.log(L)) if L > 1 else 0.0],
        "ex05_variance_split": [lambda y: (float(y.var()), 0.0),
                                lambda y: (float(y.mean(dim=1).var()), float(y.var(dim=1).mean()))],
        "ex06_attention_parameters": [lambda layers, E: 3 * E * sum(h * d for h, d in layers),
                                      lambda layers, E: str(4 * E * sum(h * d for h, d in layers))],
        "ex06_winners": [lambda task: "uniform", lambda task: 0, lambda task: "front"],
        "ex06_best_heads": [1, "16"],
        "ex07_fixed_width": [not check_module()._fixed_width_excludes_zero(), "maybe"],
        "ex07_interval": [interval_with(lambda n: 1.959963984540054),              # a z-interval
                          interval_with(lambda n: scipy_t(n), population=True),    # std over n
                          interval_with(lambda n: scipy_t(n + 1)),                 # n degrees
                          interval_with(lambda n: scipy_t(n), root=False)],        # s / n
        "ex07_text_width_share": [  # the mean of per-seed ratios; the sweeps swapped; a constant
            lambda text: {T: sum((a - b) / a for a, b in zip(
                wide["per_seed"], text["train_gain_with_heads"]["fixed-width"][T]["per_seed"]))
                / len(wide["per_seed"]) for T, wide in text["train_gain_with_heads"][
                    "fixed-head-dim"].items()},
            lambda text: {T: sum(b - a for a, b in zip(
                wide["per_seed"], text["train_gain_with_heads"]["fixed-width"][T]["per_seed"]))
                / sum(wide["per_seed"]) for T, wide in text["train_gain_with_heads"][
                    "fixed-head-dim"].items()},
            lambda text: {"16": 0.5, "32": 2 / 3},
            lambda text: (text["train_gain_with_heads"]["fixed-head-dim"].clear(), {})[1]],
    }.get(name)          # the last one empties its input: the check's reference comes first


def scipy_t(n):
    """Student's t quantile t_{0.975, n - 1}."""
    import scipy.stats
    return float(scipy.stats.t.ppf(0.975, n - 1))


def interval_with(quantile, population=False, root=True):
    """A 7.4 answer built with a given quantile, standard deviation and scaling."""
    def interval(differences):
        n = len(differences)
        mean = sum(differences) / n
        std = math.sqrt(sum((x - mean) ** 2 for x in differences) / (n if population else n - 1))
        half = quantile(n) * std / (math.sqrt(n) if root else n)
        return mean - half, mean + half
    return interval


def interval_as_an_array(differences):
    """A right 7.4 in another form: statistics' mean and stdev, an array of the two ends."""
    half = scipy_t(len(differences)) * statistics.stdev(differences) / math.sqrt(len(differences))
    return statistics.mean(differences) + numpy.array([-1, 1]) * half


def new_hand_built_layer(layer, D):
    """A right 3.3 that builds a layer of its own and returns it, leaving the given one alone."""
    import torch
    built = type(layer)(2 * D, n_heads=D, head_dim=2)
    with torch.no_grad():
        for weight in (built.W_Q, built.W_K, built.W_V):
            weight.zero_()
        for i in range(D):
            built.W_Q[i, 0, 0] = 1.0
            built.W_K[i, 0, 2 * i], built.W_K[i, 0, 2 * i + 1] = -1.0, 1.0
            built.W_V[i, 0, 2 * i], built.W_V[i, 1, 2 * i + 1] = 1.0, 1.0
        built.W_O.weight.copy_(torch.eye(2 * D))
    return built


def right(name):
    """Right answers in other forms than the reference's, which must be accepted."""
    return {
        "ex03_hand_built_head": [new_hand_built_layer],
        "ex02_knee_for_D3": ["3", 3.0, " 3 "],
        "ex05_softmax_band": [lambda B, L: (math.exp(-B) / (math.exp(-B) + (L - 1) * math.exp(B)),
                                            math.exp(B) / (math.exp(B) + (L - 1) * math.exp(-B)))],
        "ex06_best_heads": ["4"],
        "ex07_fixed_width": [str(check_module()._fixed_width_excludes_zero())],
        "ex02_decades": [lambda e: numpy.log10(e[:-1]) - numpy.log10(e[1:]),    # an array
                         lambda e: (math.log10(a / b) for a, b in zip(e, e[1:])),  # a generator
                         lambda e: tensor_decades(e),
                         lambda e: tuple(math.log10(e[h - 1]) - math.log10(e[h])
                                         for h in range(1, len(e)))],
        "ex07_interval": [lambda d: list(interval_with(scipy_t)(d)),
                          interval_as_an_array],
    }.get(name, [])


def check_module(name="check_wrong"):
    return load(ROOT / "exercises" / "check.py", name)


WRITTEN = ("ex01_why_nmse", "ex06_why", "ex07_width_share")   # for discussion, not checked


# Each prediction's check, with a reason that names what the prediction rests on.
PREDICTIONS = {"ex02_knee_for_D3": "one head per token to retrieve",
               "ex06_winners": "the rich layer is the one that matches",
               "ex06_best_heads": "one head per query",
               "ex07_fixed_width": "where the interval lies against 0"}


def tensor_decades(errors):
    """2.5 answered with torch, returning a tensor."""
    import torch
    errors = torch.tensor(errors, dtype=torch.float64)
    return errors[:-1].log10() - errors[1:].log10()


def answered(checks, name, answer):
    """A check called as an exercise file calls it: a prediction with a reason beside it."""
    if name in PREDICTIONS:
        return getattr(checks, name)(answer, PREDICTIONS[name])
    return getattr(checks, name)(answer)


def test_every_check_refuses_each_wrong_answer_and_never_raises(monkeypatch):
    """Printed to an ASCII console, as a redirected Windows console may be: what it cannot show
    is written plainly, never an encoding error (every ASCII line is also a cp932 one)."""
    console = io.TextIOWrapper(io.BytesIO(), encoding="ascii")    # strict, as a console is
    monkeypatch.setattr(sys, "stdout", console)
    checks = check_module()
    checks.reveal()                              # the class has seen the figures: judged at once
    for name in (name for name in dir(checks) if name.startswith("ex0") and name not in WRITTEN):
        answers = wrong(name)
        assert answers, f"add wrong answers for {name}"
        for answer in answers:
            assert answered(checks, name, answer) in ("not yet", "error"), (name, answer)
        if callable(answers[0]):
            def broken(*args):
                raise ValueError("a bug in the student's code")

            assert answered(checks, name, broken) == "error", name
    checks.reveal("2.2")
    checks.summary()
    console.flush()
    out = console.buffer.getvalue().decode("ascii")
    assert "[not yet]" in out and "summary:" in out and "Traceback" not in out


def test_right_answers_in_other_forms_are_accepted(capsys):
    checks = check_module("check_right")
    checks.reveal()
    for name in (name for name in dir(checks) if name.startswith("ex0")):
        for answer in right(name):
            assert answered(checks, name, answer) == "ok", (name, answer)


def test_a_prediction_is_recorded_alike_right_or_wrong_and_judged_at_its_reveal(capsys):
    """Before the reveal a right and a wrong choice get the same line but for the choice, so
    trying choices tells nothing; reveal() prints the answers and judges every recorded one."""
    checks = check_module("check_reveal")
    knee = sorted(checks._knees_for_D3())[0]
    lines = {}
    for choice in (knee, knee + 1):
        assert checks.ex02_knee_for_D3(choice, "a head per retrieved token") == "recorded"
        lines[choice] = capsys.readouterr().out.replace(f"chose {choice}", "chose X")
    assert lines[knee] == lines[knee + 1]
    winners = checks._winners()
    chosen = {task: "front-loaded" for task in winners}                   # the same for both
    assert checks.ex06_winners(lambda task: chosen[task], "the first layer matches") == "recorded"
    said = capsys.readouterr().out
    assert "not yet" not in said and "another" not in said and "back-loaded" not in said
    checks.reveal()
    said = capsys.readouterr().out
    assert f"h = {knee}" in said                                          # the answers, now
    assert said.count("[reveal]") == len(checks.REVEAL)
    expected_6_2 = "[ok]" if chosen == winners else "[missed]"
    assert "[missed]     2.2" in said and f"{expected_6_2}".ljust(13) + "6.2" in said
    assert checks.RESULTS["2.2"] == "missed"
    assert checks.ex02_knee_for_D3(knee, "a head per retrieved token") == "ok"   # judged at once
    checks.reveal("9.9")
    assert "only" in capsys.readouterr().out


def first_useful_T_on(exponent_k):
    """A right 3.2, as a student writes it, on top of the given 3.1 (seen through its closure)."""
    def first_useful_T(s, D, n):
        T = 1
        while exponent_k(T, s, D, n) <= 0:
            T += 1
        return T
    return first_useful_T


def test_a_stub_used_by_another_exercise_is_named(capsys):
    checks = check_module("check_stub")

    def exponent_k(seq_len, s, D, n):
        raise NotImplementedError("your code here")

    assert checks.ex03_first_useful_T(first_useful_T_on(exponent_k)) == "to do"
    assert "exponent_k()" in capsys.readouterr().out


def test_a_right_3_2_on_a_wrong_3_1_points_at_3_1(capsys):
    checks = check_module("check_blame")

    def exponent_k(seq_len, s, D, n):
        return (seq_len // 4 - s - D + 1) / ((n + 1) * s + 1) - 1          # T // 4: wrong

    assert checks.ex03_first_useful_T(first_useful_T_on(exponent_k)) == "not yet"
    assert "exponent_k (3.1)" in capsys.readouterr().out


def test_a_right_3_2_on_a_3_1_that_never_turns_positive_is_told_to_fix_3_1(capsys, monkeypatch):
    """A right 3.2 loops until k > 0; on a 3.1 that never gets there it would run to the limit
    and ask "does your code finish?". It is told about 3.1 at once."""
    import time
    checks = check_module("check_never_positive")
    monkeypatch.setattr(checks, "TIME_LIMIT", 5)
    started = time.monotonic()
    assert checks.ex03_first_useful_T(first_useful_T_on(lambda T, s, D, n: -1.0)) == "not yet"
    assert time.monotonic() - started < 4
    said = capsys.readouterr().out
    assert "fix 3.1 first" in said and "time limit" not in said


def test_a_never_ending_answer_is_stopped_by_the_time_limit(capsys, monkeypatch):
    checks = check_module("check_loop")
    monkeypatch.setattr(checks, "TIME_LIMIT", 1)

    def first_useful_T(s, D, n):
        while True:
            pass

    assert checks.ex03_first_useful_T(first_useful_T) == "not yet"
    assert "time limit" in capsys.readouterr().out


def test_students_prints_are_shown_and_a_rerun_replaces_its_result(capsys):
    checks = check_module("check_rerun")

    def nmse(prediction, target):
        print("my debugging line")
        return 0.5

    for _ in range(3):
        checks.ex01_nmse(nmse)
    assert capsys.readouterr().out.count("my debugging line") >= 3
    checks.ex01_nmse(lambda p, t: float(((p - t) ** 2).mean() / t.var(unbiased=False)))
    assert checks.summary() == {"ok": 1, "answered": 0, "recorded": 0, "missed": 0,
                                "not yet": 0, "to do": 0, "error": 0}


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
                                   "my_answer = None  # your answer here\n")


def test_command_line_refuses_bad_markers_in_one_line(tmp_path, monkeypatch, capsys):
    source = tmp_path / "source"
    source.mkdir()
    (source / "ex01_bad.py").write_text("### BEGIN SOLUTION\nx = 1\n", encoding="utf-8")
    (source / "check.py").write_text("REPOSITORY = None\n", encoding="utf-8")
    monkeypatch.setattr(handout, "HERE", source)
    with pytest.raises(SystemExit) as stopped:
        handout.main([str(tmp_path / "out")])
    assert stopped.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "ex01_bad.py:1" in error[0]                 # one line


def fake_clone(folder):
    """The parts of a clone the checks read: helpers.py, harness.py, plumbing.py, the lessons,
    further/, results/."""
    folder.mkdir(parents=True)
    shared = ["helpers.py", "harness.py", "plumbing.py"]
    for path in [*(ROOT / name for name in shared), *ROOT.glob("0[1-7]_*.py")]:
        shutil.copy(path, folder / path.name)
    shutil.copytree(ROOT / "further", folder / "further")
    shutil.copytree(ROOT / "results", folder / "results")
    return folder


def run_as_student(path, cwd, **environment):
    """`python path` in a fresh process, as a student runs it: (exit code, stdout, stderr)."""
    env = {key: value for key, value in os.environ.items() if key != "HEADS_REPOSITORY"}
    done = subprocess.run([sys.executable, str(path)], cwd=cwd, capture_output=True, text=True,
                          env={**env, **environment}, timeout=120, encoding="utf-8")
    return done.returncode, done.stdout, done.stderr


def test_a_handout_moved_into_another_clone_reads_that_clone(tmp_path):
    """Made in clone A, copied into clone B at another path, A removed: it runs, reading B."""
    first = tmp_path / "a" / "handout"
    handout.make_handout(first)
    second = fake_clone(tmp_path / "b") / "handout"
    shutil.copytree(first, second)
    shutil.rmtree(tmp_path / "a")
    exercise = second / "ex07_real_data.py"          # the lightest file: it reads one JSON
    code, out, err = run_as_student(exercise, cwd=tmp_path)
    lines = check_lines(out)
    assert code == 0 and "Traceback" not in err, err
    assert lines and all(line.startswith(("[to do]", "[reveal]")) for line in lines), lines
    for stem in ("07_real_data", "07c_fixed_width"):                       # 7.1's files
        for result in (tmp_path / "b" / "results").glob(f"{stem}*.json"):
            result.unlink()                                                 # B is what it reads
    answered = exercise.read_text(encoding="utf-8").replace(
        "_is_clear = None", "_is_clear = True").replace("because_7_1 = None", "because_7_1 = 'its ends'")
    exercise.write_text(answered, encoding="utf-8")
    code, out, _ = run_as_student(exercise, cwd=tmp_path)
    assert any(line.startswith("[error]") and "7.1" in line for line in check_lines(out)), out


def test_outside_a_clone_one_line_says_how_to_point_at_one(tmp_path):
    handout.make_handout(tmp_path / "loose")
    code, out, err = run_as_student(tmp_path / "loose" / "ex01_retrieval.py", cwd=tmp_path)
    assert code == 2 and not check_lines(out)
    assert len(err.strip().splitlines()) == 1 and "HEADS_REPOSITORY" in err
    code, out, err = run_as_student(tmp_path / "loose" / "ex07_real_data.py", cwd=tmp_path,
                                    HEADS_REPOSITORY=str(ROOT))
    assert code == 0 and check_lines(out), err


def test_a_second_handout_keeps_students_work(tmp_path, capsys):
    folder = tmp_path / "handout"
    handout.main([str(folder)])
    handout.main([str(folder)])                                # unchanged files: rewritten freely
    work = (folder / "ex01_retrieval.py").read_text(encoding="utf-8") + "\nmy_work = 1\n"
    (folder / "ex01_retrieval.py").write_text(work, encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        handout.main([str(folder)])
    assert stopped.value.code == 2
    assert (folder / "ex01_retrieval.py").read_text(encoding="utf-8") == work
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "ex01_retrieval.py" in error[0] and "--force" in error[0]
    handout.main([str(folder), "--force"])
    assert "my_work" not in (folder / "ex01_retrieval.py").read_text(encoding="utf-8")


def test_written_answers_are_answered_and_said_to_be_unchecked(capsys):
    """No word list tells a right sentence from a wrong one (a right 1.2 without "variance",
    a wrong 6.3 with "layer" and "match"): any answer is "answered", and the line says so."""
    checks = check_module("check_written")
    for name in WRITTEN:
        assert getattr(checks, name)(None) == "to do"
        for answer in ("the range of y gets smaller", "variance", "every layer should match"):
            assert getattr(checks, name)(answer) == "answered"
    assert capsys.readouterr().out.count("not checked") == 3 * len(WRITTEN)


def test_an_error_names_the_input_that_caused_it(capsys):
    checks = check_module("check_inputs")

    def reversal_score(errors):                      # no guard for equal errors
        spread = max(errors) - min(errors)
        return sum(max(errors[i] - errors[j], 0.0) for i in range(len(errors))
                   for j in range(i + 1, len(errors))) / spread

    def entropy_floor(B, L):                         # no case for L = 1
        return max(0.0, 1 - 2 * B / math.log(L))

    assert checks.ex02_reversal_score(reversal_score) == "error"
    assert checks.ex05_entropy_floor(entropy_floor) == "error"
    out = capsys.readouterr().out
    assert "ZeroDivisionError" in out and "errors [1.0, 1.0]" in out and "B=0.5, L=1" in out


def test_a_closed_form_3_2_is_not_blamed_on_an_untouched_3_1(capsys):
    checks = check_module("check_closed_form")

    handout_file = {}                                # both at the top level, as in the file
    exec("def exponent_k(seq_len, s, D, n):\n"       # 3.1 as the handout leaves it
         "    raise NotImplementedError('your code here')\n"
         "def first_useful_T(s, D, n):\n"             # off by one; exponent_k is not used
         "    return 4 * ((n + 2) * s + D)\n", handout_file)
    assert checks.ex03_first_useful_T(handout_file["first_useful_T"]) == "not yet"
    out = capsys.readouterr().out
    assert "exponent_k" not in out and "too low" in out and "by " not in out.split("vacuous")[1]


def test_a_loop_that_swallows_exceptions_is_still_stopped(capsys, monkeypatch):
    checks = check_module("check_swallow")
    monkeypatch.setattr(checks, "TIME_LIMIT", 1)

    def first_useful_T(s, D, n):
        while True:
            try:
                pass
            except Exception:                        # noqa: BLE001 — what a student may write
                pass

    assert checks.ex03_first_useful_T(first_useful_T) == "not yet"
    assert "time limit" in capsys.readouterr().out


def test_reveal_takes_the_number_as_a_number_too(capsys):
    checks = check_module("check_reveal_number")
    checks.reveal(2.2)
    said = capsys.readouterr().out
    assert "h = 3" in said and "only" not in said


def test_a_lone_exercise_file_ends_in_one_line_or_reads_the_clone(tmp_path):
    lone = tmp_path / "ex07_real_data.py"
    shutil.copy(ROOT / "exercises" / "ex07_real_data.py", lone)
    code, out, err = run_as_student(lone, cwd=tmp_path)
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1
    assert "HEADS_REPOSITORY" in err
    code, out, err = run_as_student(lone, cwd=tmp_path, HEADS_REPOSITORY=str(ROOT))
    assert code == 0 and "Traceback" not in err, err
    assert check_lines(out), out



# ----------------------------------------------------------------------------------------------
# A check can never hang, end the student's file or give the answer away
# ----------------------------------------------------------------------------------------------
def test_a_bare_except_loop_is_stopped_at_the_limit(capsys, monkeypatch):
    """A bare `except:` swallows any exception a check could raise inside the student's code;
    the code runs in a child process, killed at the limit."""
    import time
    checks = check_module("check_bare_except")
    monkeypatch.setattr(checks, "TIME_LIMIT", 1)

    def nmse(prediction, target):
        while True:
            try:
                time.sleep(0.05)
            except:  # noqa: E722 — what a student may write
                pass

    started = time.monotonic()
    assert checks.ex01_nmse(nmse) == "not yet"
    assert time.monotonic() - started < 5
    assert "time limit" in capsys.readouterr().out


def test_torch_runs_in_the_checks_child_after_the_kernel_used_its_threads(capsys, monkeypatch):
    """A kernel that has run torch in parallel (any lesson) holds OpenMP threads a forked child
    does not inherit; a parallel op in the child must still finish, not wait for them."""
    import torch
    checks = check_module("check_after_torch")
    monkeypatch.setattr(checks, "TIME_LIMIT", 10)
    big = torch.randn(1000, 1000)
    (big @ big).exp().sum()                                 # the parent's thread pool in use

    def parallel_op():
        (big @ big).exp().sum()
        return ("ok", "")

    assert checks._run("0.0", "torch in the child", parallel_op) == "ok"
    assert "time limit" not in capsys.readouterr().out


def test_outside_the_main_thread_a_check_still_returns(capsys, monkeypatch):
    """From a thread other than the main one (no signals there) the forked child stops at the
    limit as from the main thread. (Without fork: the worker process's tests below.)"""
    import threading
    import time
    checks = check_module("check_no_fork")
    monkeypatch.setattr(checks, "TIME_LIMIT", 1)

    def nmse(prediction, target):            # busy for 3 s, then a wrong answer
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            pass
        return 0.0

    from_a_thread = []
    worker = threading.Thread(target=lambda: from_a_thread.append(checks.ex01_nmse(nmse)))
    worker.start()
    worker.join(10)
    assert from_a_thread == ["not yet"]
    assert capsys.readouterr().out.count("time limit") == 1


def alive(pid):
    """Whether a process of this id still runs (not a zombie waiting to be collected)."""
    status = Path(f"/proc/{pid}/stat")
    try:
        return status.read_text(encoding="utf-8").split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_on_macos_a_check_runs_in_a_worker_process_that_is_killed_at_the_limit(capsys,
                                                                               monkeypatch):
    """macOS has os.fork but makes spawn Python's start method (a forked process with threads
    can hang there): the check must not fork. Its worker process (loky's) runs the student's
    loop, even one whose bare `except:` swallows everything, and is killed at the limit; the
    next check starts another. The worker is the checks' own: joblib's worker processes, which
    a lesson's sweep in the same notebook uses, start and train before and after it."""
    import multiprocessing
    import time
    checks = check_module("check_macos")
    monkeypatch.setattr(checks, "TIME_LIMIT", 0.5)
    monkeypatch.setattr(multiprocessing, "get_start_method", lambda allow_none=False: "spawn")
    assert hasattr(os, "fork") and not checks._fork_is_safe()
    monkeypatch.setattr(os, "fork", lambda: pytest.fail("the check forked on macOS"))
    runs = [{"device": "cpu", "index": index} for index in range(4)]

    def right(prediction, target):   # defined here, so that it travels by value, as a student's
        return float(((prediction - target) ** 2).mean() / target.var(unbiased=False))

    def swallows_everything(prediction, target):
        while True:
            try:
                time.sleep(0.001)
            except:  # noqa: E722 — what a student may write
                pass

    assert checks.ex01_nmse(right) == "ok"                    # the worker starts first
    _, worker = checks._worker_pid()
    assert harness.run_sweep(runs, 2, dict, cost=len) == runs
    started = time.monotonic()
    assert checks.ex01_nmse(swallows_everything) == "not yet"
    assert time.monotonic() - started < 2
    said = capsys.readouterr().out
    assert "time limit" in said and "may still be running" not in said
    assert not alive(worker)
    assert harness.run_sweep(runs, 2, dict, cost=len) == runs
    assert checks.ex01_nmse(right) == "ok" and checks._worker_pid()[1] != worker


def test_code_the_worker_cannot_load_runs_here_instead(tmp_path, monkeypatch):
    """The worker learns sys.path when it starts: a module the student imports from a folder
    added later cannot be imported there, so that check runs in a thread here, and passes."""
    checks = check_module("check_unloadable")
    monkeypatch.setattr(checks, "_fork_is_safe", lambda: False)
    checks._worker_pid()                                        # started before the folder
    (tmp_path / "students_own.py").write_text(
        "import torch\n\ndef nmse(p, t):\n"
        "    return float(((p - t) ** 2).mean() / t.var(unbiased=False))\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    own = importlib.import_module("students_own")
    monkeypatch.setitem(sys.modules, "students_own", own)
    assert checks.ex01_nmse(own.nmse) == "ok"


def test_code_that_cannot_be_pickled_runs_in_a_thread_stopped_at_the_limit(capsys,
                                                                            monkeypatch):
    """Windows, macOS: a student's function that holds a lock cannot be sent to the worker
    process, so it runs in a thread: a loop that never ends stops at the limit (an exception
    raised in its thread), `except Exception` inside it included; a bare `except:` that
    swallows even that keeps running, and the line says so."""
    import threading
    import time
    checks = check_module("check_thread_stop")
    monkeypatch.setattr(checks, "TIME_LIMIT", 0.5)
    monkeypatch.setattr(checks, "_fork_is_safe", lambda: False)
    monkeypatch.setattr(checks, "_worker_pid", lambda *_: pytest.fail("sent to the worker"))
    steps, lock = [], threading.Lock()

    def nmse(prediction, target):
        while True:
            try:
                with lock:
                    steps.append(1)
                time.sleep(0.001)
            except Exception:  # noqa: BLE001 — what a student may write
                pass

    threads = set(threading.enumerate())
    assert checks.ex01_nmse(nmse) == "not yet"
    counted = len(steps)
    time.sleep(0.3)
    assert len(steps) == counted and set(threading.enumerate()) <= threads   # it stopped
    assert "may still be running" not in capsys.readouterr().out
    stop = threading.Event()

    def swallows_everything(prediction, target):
        while not stop.is_set():
            try:
                with lock:
                    time.sleep(0.001)
            except:  # noqa: E722 — catches the check's stop as well
                pass

    assert checks.ex01_nmse(swallows_everything) == "not yet"
    assert "may still be running" in capsys.readouterr().out
    stop.set()                                                 # this test's own cleanup


def test_python_3_14_s_forkserver_on_linux_still_forks_the_check(monkeypatch):
    import multiprocessing
    checks = check_module("check_forkserver")
    monkeypatch.setattr(multiprocessing, "get_start_method",
                        lambda allow_none=False: "forkserver")
    assert checks._fork_is_safe() == hasattr(os, "fork")


def test_os_exit_without_fork_is_one_line_and_the_file_goes_on(tmp_path):
    """Without fork (Windows) the student's code runs in a worker process, which os._exit()
    ends: one error line, and the file goes on. Run on a simulated Windows."""
    script = tmp_path / "student.py"
    script.write_text(
        "import os, sys\n"
        f"sys.path.insert(0, {str(ROOT / 'exercises')!r})\n"
        "import check\n"
        "check.ex01_nmse(lambda prediction, target: os._exit(3))\n"
        "print('the file goes on')\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "simulated_os.py"), "windows",
                           str(script)], capture_output=True, text=True, timeout=120,
                          encoding="cp932", cwd=tmp_path,   # a Japanese code page's console
                          env={**os.environ, "PYTHONIOENCODING": "cp932"})
    assert done.returncode == 0, done.stderr
    lines = check_lines(done.stdout)
    assert len(lines) == 1 and lines[0].startswith("[error]") and "os._exit()" in lines[0]
    assert done.stdout.rstrip().endswith("the file goes on")


def test_a_missing_library_is_named_with_what_to_do(tmp_path):
    """torch not importable (the environment not activated, or Jupyter's kernel not the
    course's): one line naming torch and the fix, not "needs check.py beside it"."""
    script = tmp_path / "no_torch.py"
    script.write_text(
        "import runpy, sys\n"
        "class NoTorch:                               # import torch fails, as without it\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'torch':\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, NoTorch())\n"
        f"runpy.run_path({str(ROOT / 'exercises' / 'ex03_bounds.py')!r}, run_name='__main__')\n",
        encoding="utf-8")
    code, out, err = run_as_student(script, cwd=tmp_path)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("torch is not installed in this Python") and "activate" in err
    assert "check.py" not in err


def test_sys_exit_is_an_error_line_and_the_file_goes_on(capsys):
    checks = check_module("check_exit")

    def nmse(prediction, target):
        sys.exit()

    assert checks.ex01_nmse(nmse) == "error"
    assert checks.ex01_nmse(lambda p, t: float(((p - t) ** 2).mean() / t.var(unbiased=False)))\
        == "ok"
    out = capsys.readouterr().out
    assert "sys.exit()" in out and "[ok]" in out


@pytest.mark.parametrize("name", ["ex01_retrieval_target", "ex04_memorising_tokens",
                                  "ex04_read_back", "ex05_softmax_band", "ex05_variance_split",
                                  "ex01_nmse", "ex07_text_width_share"])
def test_a_forgotten_return_is_asked_about(name, capsys):
    checks = check_module(f"check_none_{name}")

    def forgot(*args):
        len(args)                             # some work, no return

    assert getattr(checks, name)(forgot) == "not yet"
    out = capsys.readouterr().out
    assert "returned None" in out and "did you forget `return`?" in out, out


@pytest.mark.parametrize("wrong", [1.5, 1.05, 1.001, 3.0, 0.5])
def test_a_wrong_real_number_says_which_way_and_a_band_never_the_distance(wrong, capsys):
    """1.1 with the reference's NMSE times `wrong`: the line says too high or too low and a
    band of relative size, and holds no number from which the reference could be computed."""
    import re
    import helpers
    checks = check_module("check_band")
    assert checks.ex01_nmse(lambda prediction, target: helpers.nmse(prediction, target)
                            * wrong) == "not yet"
    line = capsys.readouterr().out.splitlines()[-1]
    assert ("too high" if wrong > 1 else "too low") in line, line
    verdict = line.split(": ", 1)[1].split("(")[0]            # after the title, before the input
    assert "differs" not in verdict and not re.search(r"\d\.\d", verdict), line


def test_nan_is_named_not_measured(capsys):
    checks = check_module("check_nan")
    assert checks.ex01_nmse(lambda prediction, target: float("nan")) == "not yet"
    line = capsys.readouterr().out.splitlines()[-1]
    assert "nan" in line and "the answer is a finite number" in line, line


@pytest.mark.parametrize("system", ["linux", "macos"])
def test_ctrl_c_during_a_check_leaves_no_process_running(system, tmp_path):
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) while a check waits on
    a bare-except loop: the script ends and the process running the student's code (the forked
    child on Linux, the worker on a simulated macOS) is gone."""
    import signal
    import time
    if not hasattr(os, "killpg"):
        pytest.skip("a process group to send Ctrl-C to exists only on Unix")
    pid_file = tmp_path / "child.pid"
    script = tmp_path / "student.py"
    script.write_text(f"""
import importlib.util, os, time
spec = importlib.util.spec_from_file_location("check", {str(ROOT / "exercises" / "check.py")!r})
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)

def nmse(prediction, target):
    open({str(pid_file)!r}, "w").write(str(os.getpid()))
    while True:
        try:
            time.sleep(0.01)
        except:
            pass

check.ex01_nmse(nmse)
""", encoding="utf-8")
    command = [sys.executable, str(script)] if system == "linux" else [
        sys.executable, str(ROOT / "tests" / "simulated_os.py"), system, str(script)]
    student = subprocess.Popen(command, cwd=tmp_path, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True, encoding="utf-8")
    deadline = time.monotonic() + 60
    while not pid_file.exists() or not pid_file.read_text(encoding="utf-8"):
        assert time.monotonic() < deadline and student.poll() is None, student.communicate()
        time.sleep(0.1)
    child = int(pid_file.read_text(encoding="utf-8"))
    os.killpg(student.pid, signal.SIGINT)
    out, err = student.communicate(timeout=10)
    assert "KeyboardInterrupt" in err and "BrokenPipe" not in err, err
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)


def test_an_error_names_the_student_s_line(capsys):
    checks = check_module("check_line")

    def memorising_tokens(x):
        positions = x.shape[1]
        return x.reshape(positions, -1, 7)    # the line the message must quote

    assert checks.ex04_memorising_tokens(memorising_tokens) == "error"
    out = capsys.readouterr().out
    assert "a made-up random [3, 5, 2] batch" in out
    assert "return x.reshape(positions, -1, 7)" in out and "your line" in out


@pytest.mark.parametrize("name, args", [("ex03_first_useful_T", 3), ("ex04_lemma9_weights", 2),
                                        ("ex02_directions_covered", 1),
                                        ("ex02_parameter_count", 1)])
def test_a_wrong_whole_number_says_too_low_never_by_how_much(name, args, capsys):
    checks = check_module(f"check_whole_{name}")
    assert getattr(checks, name)(lambda *given: 0) == "not yet"
    out = capsys.readouterr().out
    assert "too low" in out and "differs" not in out and " by " not in out, out


def test_a_library_s_not_implemented_error_is_an_error_and_a_leftover_stub_is_named(
        capsys, tmp_path):
    checks = check_module("check_not_implemented")
    library = tmp_path / "some_library.py"
    library.write_text("def kernel(x):\n    raise NotImplementedError('no kernel for this dtype')\n",
                       encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        import some_library
    finally:
        sys.path.remove(str(tmp_path))

    def nmse(prediction, target):
        return some_library.kernel(prediction)

    def nmse_half_done(prediction, target):
        error = ((prediction - target) ** 2).mean()
        raise NotImplementedError("your code here")
        return error

    assert checks.ex01_nmse(nmse) == "error"
    assert checks.ex01_nmse(nmse_half_done) == "to do"
    out = capsys.readouterr().out
    assert "no kernel for this dtype" in out and "another exercise" not in out
    assert "reaches the `raise NotImplementedError`" in out


def test_centring_y_in_place_is_still_right(capsys):
    checks = check_module("check_in_place")

    def variance_split(y):
        query_part = y.mean(dim=1).var(unbiased=False)
        y -= y.mean(dim=1, keepdim=True)                  # centred in place
        return float(query_part), float((y ** 2).mean())

    assert checks.ex05_variance_split(variance_split) == "ok", capsys.readouterr().out


def test_7_3_from_the_results_file_s_own_mean_fields_is_right(capsys):
    checks = check_module("check_means")

    def text_width_share(text):
        gains = text["train_gain_with_heads"]
        return {T: (gains["fixed-head-dim"][T]["mean"] - gains["fixed-width"][T]["mean"])
                / gains["fixed-head-dim"][T]["mean"] for T in gains["fixed-head-dim"]}

    assert checks.ex07_text_width_share(text_width_share) == "ok", capsys.readouterr().out


def test_a_check_and_the_summary_show_no_out_value_in_a_notebook(capsys):
    """IPython formats a cell's last value for its Out[...]: a check's status and the summary's
    counts format to nothing, so the cell shows only their printed lines."""
    from IPython.core.formatters import DisplayFormatter
    formatter = DisplayFormatter()
    checks = check_module("check_display")
    status = checks._run("0.0", "nothing", lambda: None)
    counts = checks.summary()
    assert status == "ok" and counts["ok"] == 1
    assert formatter.format(status) == ({}, {}) and formatter.format(counts) == ({}, {})
    assert formatter.format({"ok": 1}) != ({}, {})            # a plain value would show


def test_a_clone_older_than_the_handout_is_told_to_update(tmp_path):
    """check.py of a handout knows its commit; a clone without that commit stops in one line;
    a clone at or after it passes; a missing lesson says to update, not a traceback."""
    repository, head = conftest.git_tree(tmp_path)
    head_time = int(subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=repository,
                                   capture_output=True, text=True, encoding="utf-8").stdout)
    checks = check_module("check_version")
    checks.check_clone_version(repository, (head, head_time))         # the same commit: passes
    with pytest.raises(SystemExit) as stopped:                        # a newer commit it lacks
        checks.check_clone_version(repository, ("0" * 40, head_time + 3600))
    assert stopped.value.code == 2
    stamped = handout.stamped((ROOT / "exercises" / "check.py").read_text(encoding="utf-8"))
    assert "MADE_FROM = None" not in stamped and 'MADE_FROM = ("' in stamped
    made_from = stamped.split("MADE_FROM = ", 1)[1].split("#")[0]
    assert made_from.strip().startswith('("') and made_from.strip().endswith(")")


def test_a_shallow_clone_newer_than_the_handout_passes(tmp_path):
    """`git clone --depth 1` of a newer commit lacks the handout's commit but is newer: it
    passes; the same shallow clone of a commit older than the handout's stops in one line."""
    repository, first = conftest.git_tree(tmp_path)
    (repository / "a.py").write_text("x = 2\n", encoding="utf-8")
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "b",
                    "--date", "2030-01-01T00:00:00"], cwd=repository, check=True,
                   env={**os.environ, "GIT_COMMITTER_DATE": "2030-01-01T00:00:00"})
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repository}", str(shallow)],
                   check=True)
    first_time = int(subprocess.run(["git", "log", "-1", "--format=%ct", first], cwd=repository,
                                    capture_output=True, text=True, encoding="utf-8").stdout)
    checks = check_module("check_shallow")
    checks.check_clone_version(shallow, (first, first_time))          # older handout: passes
    with pytest.raises(SystemExit):
        checks.check_clone_version(shallow, ("0" * 40, 2_000_000_000))   # 2033: stops
    with pytest.raises(checks.StudentError, match="update it"):
        checks._concept("02z_not_in_this_clone")


def test_a_nan_q_is_named_and_a_tighter_true_entropy_floor_is_told_apart(capsys):
    """1.4: NaN is not "not positive"; 5.2: a floor above the lemma's that still holds (the exact
    least entropy) is told so, not just "too high"."""
    checks = check_module("check_small_items")
    assert checks.ex01_smallest_q(lambda epsilon: float("nan")) == "not yet"
    said = capsys.readouterr().out
    assert "nan" in said and "positive" not in said
    assert checks.ex05_entropy_floor(checks._least_entropy) == "not yet"
    assert "a true floor at every B and L tried, tighter" in capsys.readouterr().out
    assert checks.ex05_entropy_floor(lambda B, L: 0.99) == "not yet"        # not a floor at all
    assert "tighter" not in capsys.readouterr().out
    one_b = lambda B, L: max(0.0, 1 - B / math.log(L)) if L > 1 else 1.0    # noqa: E731
    assert checks.ex05_entropy_floor(one_b) == "not yet"    # above the least entropy at B = 3
    assert "tighter" not in capsys.readouterr().out


def test_the_checks_hold_expected_values_not_solutions():
    """2.3, 5.3 and 7.3 compare with values check.py holds for fixed inputs; recomputed here by
    slow, obvious loops, and no function of check.py computes an answer from a student's input."""
    checks = check_module("check_expected")
    mechanism = json.loads((ROOT / "results" / "02f_attention_maps.json")
                           .read_text(encoding="utf-8"))["mechanism"]
    for h, expected in checks.COMMITTED_MAPS_COVER.items():
        rows = mechanism[h]["attention_on_targets"]
        assert expected == len({row.index(max(row)) for row in rows})
    assert set(checks.COMMITTED_MAPS_COVER) == set(mechanism)
    for rows, query_part, context_part, _ in checks.VARIANCE_SPLITS:
        means = [sum(row) / len(row) for row in rows]
        grand = sum(means) / len(means)
        assert math.isclose(query_part, sum((m - grand) ** 2 for m in means) / len(means))
        spreads = [sum((v - m) ** 2 for v in row) / len(row) for row, m in zip(rows, means)]
        assert math.isclose(context_part, sum(spreads) / len(spreads))
    for seed, shares in checks.MADE_UP_SHARES.items():
        gains = checks._made_up_gains(seed)["train_gain_with_heads"]
        for T, share in shares.items():
            a = gains["fixed-head-dim"][T]["per_seed"]
            b = gains["fixed-width"][T]["per_seed"]
            assert math.isclose(share, sum(x - y for x, y in zip(a, b)) / sum(a), rel_tol=1e-9)
        assert set(shares) == set(gains["fixed-head-dim"])
    assert not any(hasattr(checks, name) for name in ("_width_shares",))
    for errors, decades in checks.DECADE_CASES:
        assert all(math.isclose(want, math.log10(errors[h - 1] / errors[h]), abs_tol=1e-12)
                   for h, want in enumerate(decades, start=1))
    for differences, ends in checks.INTERVAL_CASES:
        assert all(math.isclose(a, b, rel_tol=1e-12)
                   for a, b in zip(ends, interval_with(scipy_t)(differences)))


def test_a_prediction_is_kept_only_beside_a_reason_that_names_what_it_rests_on(capsys):
    """A choice without a reason, or with one that names nothing it could rest on, is not yet
    recorded, and the line says why; with one it is."""
    checks = check_module("check_reasons")
    knee = sorted(checks._knees_for_D3())[0]
    for because in (None, "", "   "):
        assert checks.ex02_knee_for_D3(knee, because) == "not yet"
        assert "reason" in capsys.readouterr().out
    for number, call in (("2.2", lambda because: checks.ex02_knee_for_D3(knee, because)),
                         ("6.4", lambda because: checks.ex06_best_heads(4, because)),
                         ("7.1", lambda because: checks.ex07_fixed_width(True, because))):
        assert call("x") == "not yet", number
        assert "does not say" in capsys.readouterr().out
    assert checks.ex02_knee_for_D3(knee, "one head per retrieved token") == "recorded"
    assert checks.ex02_knee_for_D3(None) == "to do"                    # nothing chosen yet
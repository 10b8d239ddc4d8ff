"""The lessons on Windows and macOS, simulated on Linux (tests/simulated_os.py): every lesson's
--quick and lesson 07's notebook run there, and give the numbers they give on Linux. On macOS
each lesson runs as a student who copied it out would run it: from a folder of its own holding
it, helpers.py, harness.py and the earlier lessons it loads, nothing else (standalone_copy).

What differs there for this course is how new processes start: no fork on Windows, spawn as
the default on macOS. A sweep's workers are new interpreters on every system (joblib's loky
starts them so, and sends a notebook's functions to them by value), and the exercise kit cannot
fork there (tests/test_exercises.py runs it on the simulated systems)."""
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest
from nbclient import NotebookClient

import simulated_os
from conftest import LESSONS, ROOT

TIMING = ("second", "wall", "time")   # keys that measure the machine, not the model


def numbers_of(payload):
    """A results file without what depends on the machine or the folder: its timings, its
    provenance, where it was written (config.out) and how many processes trained it."""
    if isinstance(payload, dict):
        return {key: numbers_of(value) for key, value in payload.items()
                if key not in ("provenance", "out", "workers")
                and not any(word in key for word in TIMING)}
    if isinstance(payload, list):
        return [numbers_of(value) for value in payload]
    return payload


PATHS = {"windows": ["--workers", "2"],   # every sweep in joblib's worker processes
         "macos": ["--workers", "1"]}     # the other path: one after another in this process
CONSOLES = {"windows": "cp932",   # a Windows console in a Japanese code page: no en dash, no minus
            "macos": "utf-8"}


def loaded_lessons(path):
    """The earlier lessons a lesson loads (helpers.load_concept), and those they load."""
    names = re.findall(r'load_concept\("(0\d_\w+)"\)', path.read_text(encoding="utf-8"))
    return {name for found in names for name in {found, *loaded_lessons(ROOT / f"{found}.py")}}


def standalone_copy(lesson, folder):
    """A folder of lesson's own holding it, helpers.py, harness.py and the lessons it loads: what
    a student who copies the lesson out needs, and all it may use. Returns the lesson's path there."""
    folder.mkdir(parents=True)
    for name in {lesson.stem, *loaded_lessons(lesson)}:
        shutil.copy(ROOT / f"{name}.py", folder)
    for shared in ("helpers.py", "harness.py"):
        shutil.copy(ROOT / shared, folder)
    return folder / lesson.name


def start_lessons(system, out):
    """Start every lesson's quick run, one after another, started as on `system` (QUICK=1, as
    the notebooks the numbers are compared with), with its PATHS flags: on Windows all in one
    process from the repository; on macOS each in a process of its own, from its standalone
    copy. The output goes to out/stdout.txt and out/stderr.txt in its CONSOLES encoding.
    Returns the running process."""
    out.mkdir(parents=True, exist_ok=True)
    flags = ["--out", str(out), *PATHS[system]]
    tests = str(ROOT / "tests")
    if system == "macos":
        lessons = [standalone_copy(path, out / "copies" / path.stem) for path in LESSONS]
        run = (f"    subprocess.run([sys.executable, '-c', 'import sys; sys.path.insert(0, ' + "
               f"repr({tests!r}) + '); import simulated_os; simulated_os.run_script(' + "
               f"repr({system!r}) + ', ' + repr(lesson) + ', *' + repr({flags!r}) + ')'], "
               f"cwd=os.path.dirname(lesson), check=True)\n")
    else:
        lessons = LESSONS
        run = f"    simulated_os.run_script({system!r}, lesson, *{flags!r})\n"
    driver = (f"import os, subprocess, sys; sys.path.insert(0, {tests!r}); import simulated_os\n"
              f"if hasattr(os, 'nice'):\n"
              f"    os.nice(19)   # in the background: the suite's own tests come first\n"
              f"for lesson in {[str(path) for path in lessons]!r}:\n" + run)
    environment = {key: value for key, value in os.environ.items() if key != "ARGS"}
    with open(out / "stdout.txt", "w", encoding="utf-8") as stdout, \
            open(out / "stderr.txt", "w", encoding="utf-8") as stderr:
        return subprocess.Popen([sys.executable, "-c", driver], cwd=ROOT, stdout=stdout,
                                stderr=stderr, env={**environment, "QUICK": "1",
                                                    "MPLBACKEND": "agg",
                                                    "PYTHONIOENCODING": CONSOLES[system]})


def start_in_the_background(folder):
    """Both systems' lesson runs, started once the notebooks have run (tests/conftest.py): they
    keep two cores busy for half a minute, and the rest of the suite leaves one idle much of
    the time. {system: (process, its folder)}."""
    return {system: (start_lessons(system, folder / system), folder / system)
            for system in simulated_os.SYSTEMS}


def test_every_lesson_runs_on_simulated_windows_and_macos_with_linux_s_numbers(
        simulated_lesson_runs, notebook_run):
    """Between them the two runs take each path a sweep has on a laptop: joblib's worker
    processes (Windows) and this process on one thread (macOS, --workers 1). Every number
    equals the Linux notebook's."""
    for system, (process, out) in simulated_lesson_runs.items():
        code = process.wait(timeout=600)
        stdout = (out / "stdout.txt").read_text(encoding=CONSOLES[system])
        assert code == 0, (system, (out / "stderr.txt").read_text(
            encoding=CONSOLES[system])[-3000:])
        assert ("worker processes (joblib)" in stdout) == (system == "windows")
        assert ("one after another in this process" in stdout) == (system == "macos")
        for lesson in LESSONS:
            written = out / "results" / f"{lesson.stem}_quick.json"
            payload = json.loads(written.read_text(encoding="utf-8"))
            assert numbers_of(payload) == numbers_of(notebook_run(lesson.stem)), (
                system, lesson.stem)
            figures = list((out / "figures").glob(f"{lesson.stem[:2]}_*_quick.png"))
            assert figures, (system, lesson.stem)                 # and its figure


def test_a_lesson_copied_out_loads_only_helpers_harness_and_earlier_lessons(tmp_path):
    """What the macOS run copies: each lesson with helpers.py, harness.py and the lessons it
    loads, and nothing of the repository's beside them (no study, plumbing.py or engine/)."""
    for lesson in LESSONS:
        copied = standalone_copy(lesson, tmp_path / lesson.stem)
        names = sorted(path.name for path in copied.parent.iterdir())
        shared = {"helpers.py", "harness.py"}
        assert shared <= set(names) and all(name in shared or name[:2].isdigit()
                                            for name in names), names
        for path in copied.parent.glob("0*.py"):
            text = path.read_text(encoding="utf-8")
            assert not re.search(r"^\s*(import|from) (plumbing|engine)\b", text, re.M), path
    assert loaded_lessons(ROOT / "04_single_head_memorization.py") == {
        "01_retrieval_task", "02_multihead_model"}


def simulated_notebook(system, stem, out):
    """notebooks/<stem>.ipynb at the quick preset (QUICK=1, OUT=out) in a kernel that starts
    processes as on `system` (a first cell simulates it): (its results file, what it printed)."""
    notebook = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(
        f"import os, sys; sys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        f"if hasattr(os, 'nice'):\n"
        f"    os.nice(19)   # in the background: the suite's own tests come first\n"
        f"os.environ.update(QUICK='1', OUT={str(out)!r}, MPLBACKEND='agg')\n"
        f"os.environ['ARGS'] = '--workers 2'   # --quick alone trains in the kernel\n"
        f"import simulated_os; simulated_os.simulate({system!r})"))
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={
        "metadata": {"path": str(ROOT / "notebooks")}}).execute()
    printed = "".join(output.get("text", "") for cell in notebook.cells
                      for output in cell.get("outputs", []))
    return json.loads((out / "results" / f"{stem}_quick.json").read_text(encoding="utf-8")), printed


NOTEBOOK_STEMS = ["07_real_data"]   # its sweep sends the notebook's train_vit to the workers


def start_notebooks_in_the_background(folder):
    """Each of NOTEBOOK_STEMS on both systems, a kernel per core, started with the lesson runs
    (tests/conftest.py): {(system, stem): the future of simulated_notebook's result}."""
    pool = ThreadPoolExecutor(len(simulated_os.SYSTEMS))
    futures = {(system, stem): pool.submit(simulated_notebook, system, stem,
                                           folder / f"{system}-{stem}")
               for stem in NOTEBOOK_STEMS for system in simulated_os.SYSTEMS}
    pool.shutdown(wait=False)                           # the kernels finish on their own
    return futures


@pytest.mark.parametrize("stem", NOTEBOOK_STEMS)
def test_a_lesson_notebook_runs_on_simulated_windows_and_macos(stem, simulated_notebook_runs,
                                                              notebook_run):
    """A notebook's functions go to joblib's 2 worker processes there as on Linux (new
    processes cannot import them: they are sent by value), and the numbers are Linux's."""
    results = {system: simulated_notebook_runs[(system, stem)].result(timeout=600)
               for system in simulated_os.SYSTEMS}
    for system, (payload, printed) in results.items():
        assert "runs trained in 2 worker processes (joblib)" in printed, system
        assert numbers_of(payload) == numbers_of(notebook_run(stem)), system


UNIX_ONLY = ("os.fork", "os.kill", "signal.SIGKILL", "signal.SIGALRM", "signal.alarm",
             "signal.setitimer", "select.select")       # absent on Windows, or pipes only there
FORK_PATH = {"_forked", "_collect", "_end"}   # check.py's functions that run only where it forks


def test_nothing_unix_only_outside_the_fork_path():
    """Windows has no fork, no SIGKILL, SIGALRM or alarm, and select() there takes sockets only:
    such calls may appear only in check.py's fork path, which runs where fork is Python's start
    method (check._fork_is_safe)."""
    import ast
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT)
        if relative.parts[0] in ("tests", "runs") or relative.parts[0].startswith("."):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        fork_path = [function for function in ast.walk(tree)
                     if isinstance(function, ast.FunctionDef) and function.name in FORK_PATH
                     and relative.name == "check.py"]
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and ast.unparse(node) in UNIX_ONLY and not any(
                    function.lineno <= node.lineno <= function.end_lineno
                    for function in fork_path):
                found.append(f"{relative}:{node.lineno}: {ast.unparse(node)}")
    assert not found, found

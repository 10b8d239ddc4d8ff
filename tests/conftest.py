"""Shared test fixtures: the repository root on sys.path, and a quick-preset config helper."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import helpers  # noqa: E402


RUN_KEYS = {"script", "config", "device", "torch_version", "python_version", "wall_time_s",
            "provenance"}
LESSONS = sorted(ROOT.glob("0[1-7]_*.py"))                # the path: 01 ... 07
FURTHER = sorted((ROOT / "further").glob("0[1-7]*_*.py"))  # going further: one step off it
SCRIPTS = LESSONS + FURTHER


NOTEBOOK_WORKERS = 2   # notebooks executed at once: one kernel per core


@pytest.fixture(scope="session")
def notebook_run(tmp_path_factory, request):
    """notebook_run(stem): the JSON of notebooks/<stem>.ipynb executed once per session with
    QUICK=1 (the file's --quick run, as a reader's notebook runs it); its cells' outputs are in
    notebook_run.outputs[stem]. tests/test_notebooks.py checks that it runs; each file's
    test_main_quick checks its numbers, so the quick run is not trained twice. A study whose
    notebook replays its committed run (NOTEBOOK_ARGS) writes no quick run (at most its analysis
    of the replayed file): {}.

    The first call executes, two at a time, the notebook of every file this session's tests
    name (most of a kernel's time is its start and imports, which do not share a core)."""
    import concurrent.futures
    import json
    import os

    import nbformat
    from nbclient import NotebookClient
    out, done = tmp_path_factory.mktemp("notebook_runs"), {}
    named = [script.stem for script in SCRIPTS
             if any(script.stem in item.nodeid for item in request.session.items)]

    def execute(stem):
        notebook = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
        NotebookClient(notebook, timeout=300, kernel_name="python3", resources={
            "metadata": {"path": str(ROOT / "notebooks")}}).execute()
        return notebook

    def run(stem):
        if stem not in done:
            stems = [name for name in named if name not in done]
            stems += [stem] if stem not in stems else []
            saved = {key: os.environ.get(key) for key in ("QUICK", "OUT", "MPLBACKEND", "ARGS")}
            os.environ.update(QUICK="1", OUT=str(out), MPLBACKEND="agg")   # the kernels' env
            os.environ.pop("ARGS", None)                       # each notebook's own flags
            try:
                with concurrent.futures.ThreadPoolExecutor(NOTEBOOK_WORKERS) as pool:
                    notebooks = dict(zip(stems, pool.map(execute, stems)))
            finally:
                for key, value in saved.items():
                    os.environ.pop(key, None) if value is None else os.environ.update({key: value})
            for name, notebook in notebooks.items():
                written = out / "results" / f"{name}_quick.json"   # a replay: its analysis only
                done[name] = (json.loads(written.read_text(encoding="utf-8"))
                              if written.exists() else {})
                run.outputs[name] = [output for cell in notebook.cells
                                     for output in cell.get("outputs", [])]
            start_simulated_runs(request.config)         # the kernels are done with the cores
        return done[stem]
    run.outputs = {}          # notebook_run.outputs[stem]: every output of its cells
    return run


SIMULATED_TESTS = ("tests/test_simulated_os.py::test_every_lesson_runs_on_simulated_windows",
                   "tests/test_simulated_os.py::test_a_lesson_notebook_runs_on_simulated_windows")


def pytest_collection_finish(session):
    """Note whether the simulated-OS tests are to run: their lesson runs and notebooks then
    start in the background, at the lowest priority, once the notebooks have run
    (start_simulated_runs)."""
    session.config.simulated_runs = None
    session.config.simulated_pending = any(item.nodeid.startswith(SIMULATED_TESTS)
                                           for item in session.items)


def start_simulated_runs(config):
    """Start the simulated-OS lesson runs and notebooks (test_simulated_os) once: they take two
    cores' worth of most of a minute, which the rest of the suite, leaving a core idle much of
    the time, lends them."""
    if getattr(config, "simulated_pending", False) and config.simulated_runs is None:
        import tempfile
        import test_simulated_os
        folder = Path(tempfile.mkdtemp(prefix="simulated_os_"))
        config.simulated_runs = {
            "folder": folder,
            "lessons": test_simulated_os.start_in_the_background(folder / "lessons"),
            "notebooks": test_simulated_os.start_notebooks_in_the_background(folder)}


def pytest_sessionfinish(session):
    """Stop the background lesson runs if a test run ended before they did, let the notebooks
    finish, and remove their folder."""
    started = getattr(session.config, "simulated_runs", None)
    if started:
        import shutil
        for process, _ in started["lessons"].values():
            if process.poll() is None:
                process.kill()
            process.wait()
        for future in started["notebooks"].values():
            future.exception()                           # waits; a failure is the test's
        shutil.rmtree(started["folder"], ignore_errors=True)


def simulated(request, key):
    """The simulated-OS runs of one kind ("lessons" or "notebooks"), started now if the
    notebooks did not start them."""
    start_simulated_runs(request.config)
    if request.config.simulated_runs is None:
        pytest.skip("started only when the suite collects the simulated-OS tests")
    return request.config.simulated_runs[key]


@pytest.fixture(scope="session")
def simulated_lesson_runs(request):
    """{system: (the process, its folder)} of the simulated-OS lesson runs."""
    return simulated(request, "lessons")


@pytest.fixture(scope="session")
def simulated_notebook_runs(request):
    """{(system, stem): the future of its simulated notebook's (results, printout)}."""
    return simulated(request, "notebooks")


@pytest.fixture
def quick_args(tmp_path):
    """quick_args(module, *flags): the module's --quick config, writing under a temporary --out."""
    def make(module, *flags):
        return module.config(["--quick", "--out", str(tmp_path), "--device", "cpu", *flags])
    return make


def run_in_process(name, *flags):
    """Run `python NAME.py FLAGS` in this process: the script's cells top to bottom, as a
    user's command line runs them."""
    import runpy
    import matplotlib
    matplotlib.use("agg")
    saved = sys.argv
    path = helpers.script_path(name)
    sys.argv = [str(path), *flags]
    try:
        runpy.run_path(str(path), run_name="__main__")
    finally:
        sys.argv = saved


def run_quick(name, out, *flags):
    """Run `python NAME.py --quick --device cpu --out OUT FLAGS` in this process; the JSON it
    wrote."""
    import json
    run_in_process(name, "--quick", "--device", "cpu", "--out", str(out), *flags)
    written = sorted((Path(out) / "results").glob("*.json"))
    assert len(written) == 1, written
    return json.loads(written[0].read_text(encoding="utf-8"))


def run_script(name, *flags, timeout=120):
    """Run a numbered script as a user would; returns the CompletedProcess."""
    return subprocess.run([sys.executable, str(helpers.script_path(name)), *flags], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, encoding="utf-8")


def assert_rejected(name, flags, flag_name):
    """A bad flag value ends with exit code 2 and one line naming the flag, before any work.

    The checks all live in the script's config(), so calling it is what the command line does
    (tests/test_flag_contract.py runs one real command line to prove it)."""
    import contextlib
    import io
    stderr = io.StringIO()
    with pytest.raises(SystemExit) as stop, contextlib.redirect_stderr(stderr):
        helpers.load_concept(name).config([*flags, "--out", str(ROOT / "no-run")])
    assert stop.value.code == 2
    assert stderr.getvalue().count("\n") == 1 and flag_name in stderr.getvalue()


def git_tree(tmp_path):
    """A git repository of one committed file, and its commit."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n", encoding="utf-8")
    for command in (["init", "-q"], ["add", "a.py"],
                    ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "a"]):
        subprocess.run(["git", *command], cwd=root, check=True, capture_output=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                            text=True, encoding="utf-8").stdout.strip()
    return root, commit

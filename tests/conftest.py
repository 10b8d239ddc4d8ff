"""Shared test fixtures: the repository root on sys.path, and a quick-preset config helper."""
import contextlib
import io
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

# The tests run on one core while the notebooks' kernel, then the simulated-OS runs, take the
# other (NotebookRuns): one thread each, here and in every process they start (torch reads this
# when it is imported), as two threads would wait on a core that is busy.
os.environ["OMP_NUM_THREADS"] = "1"

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import helpers  # noqa: E402


RUN_KEYS = {"script", "config", "device", "torch_version", "python_version", "wall_time_s",
            "provenance"}
LESSONS = sorted(ROOT.glob("0[1-7]_*.py"))                # the path: 01 ... 07
FURTHER = sorted((ROOT / "further").glob("0[1-7]*_*.py"))  # going further: one step off it
SCRIPTS = LESSONS + FURTHER


NOTEBOOK_WORKERS = 1   # kernels at once: the tests run beside it, on the other core
# Run before a study's notebook in a kernel that ran another study: it forgets that notebook's
# variables and every module of this repository it loaded (helpers, harness, plumbing, engine, the
# numbered files), and closes its figures. torch and the other libraries stay imported: their
# import is most of a study's quick run.
FRESH_START = f"""\
import sys
for name, module in list(sys.modules.items()):
    spec = getattr(module, "__spec__", None)       # a package without __init__.py (engine)
    folders = getattr(spec, "submodule_search_locations", None) or []   # has its folder only
    files = [getattr(module, "__file__", None) or "", *folders]
    if any(file.startswith({str(ROOT)!r}) and "site-packages" not in file for file in files):
        del sys.modules[name]
import matplotlib.pyplot
matplotlib.pyplot.close("all")
get_ipython().run_line_magic("reset", "-f")"""


LESSON_STEMS = {script.stem for script in LESSONS}


def shut_down(kernel):
    """Stop a kernel a worker kept running (None: nothing to stop)."""
    if kernel is not None:
        from jupyter_core.utils import run_sync
        run_sync(kernel.shutdown_kernel)(now=True)


class NotebookRuns:
    """The notebook of every file this session's tests name, executed with QUICK=1 in the
    background while the tests run, NOTEBOOK_WORKERS at a time, in the order the tests read
    them; a test waits only for the notebook it reads. When the last has run, `then()`.
    Each lesson runs in a fresh kernel, as a reader's does; the studies a worker runs share its
    kernel, each after FRESH_START (a kernel's start and imports take about 3 s, most of a
    study's quick run). An error in one notebook is that notebook's."""

    def __init__(self, stems, out, then=None):
        self.out, self.lock, self.then = out, threading.Lock(), then
        self.queue = sorted(stems)            # taken from the front, in the tests' order
        self.running = NOTEBOOK_WORKERS
        self.finished = {stem: threading.Event() for stem in stems}
        self.results, self.outputs, self.errors = {}, {}, {}
        self.environment = {**{key: value for key, value in os.environ.items() if key != "ARGS"},
                            "QUICK": "1", "OUT": str(out), "MPLBACKEND": "agg",
                            "TQDM_DISABLE": "1"}   # captured: the progress lines, no bar
        # What a worker imports, imported here first: an IPython that a worker's kernel lookup is
        # still importing breaks pyplot in a test's thread (pyplot looks it up in sys.modules).
        import IPython  # noqa: F401
        import nbclient  # noqa: F401
        self.workers = [threading.Thread(target=self.work, daemon=True)
                        for _ in range(NOTEBOOK_WORKERS)]
        for worker in self.workers:
            worker.start()

    def __call__(self, stem):
        """The JSON its quick run wrote ({} for a replay that writes none); executed here in a
        fresh kernel when no test named it."""
        if stem not in self.finished:
            self.finished[stem] = threading.Event()
            self.execute(stem)
        self.finished[stem].wait()
        if stem in self.errors:
            raise self.errors[stem]
        return self.results[stem]

    def work(self):
        """Take the next notebook until none is left; the studies share one kernel."""
        shared = None                                       # this worker's kernel for studies
        try:
            while True:
                with self.lock:
                    if not self.queue:
                        break
                    stem = self.queue.pop(0)
                if stem in LESSON_STEMS:
                    self.execute(stem)
                else:
                    shared = self.execute(stem, shared, keep_kernel=True)
        finally:
            shut_down(shared)
            with self.lock:
                self.running -= 1
                then = self.then if self.running == 0 else None
            if then is not None:
                then()

    def execute(self, stem, kernel=None, keep_kernel=False):
        """Execute notebooks/<stem>.ipynb, in `kernel` (after FRESH_START) or a new one; returns
        the kernel, still running, with keep_kernel (None after an error)."""
        import json

        import nbformat
        from nbclient import NotebookClient
        notebook = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
        if kernel is not None:
            notebook.cells.insert(0, nbformat.v4.new_code_cell(FRESH_START))
        client = NotebookClient(notebook, km=kernel, timeout=300, kernel_name="python3",
                                allow_errors=True,
                                resources={"metadata": {"path": str(ROOT / "notebooks")}})
        try:
            client.execute(env=self.environment, cleanup_kc=not keep_kernel)
        except Exception as error:  # noqa: BLE001 - the test that reads this notebook fails
            self.errors[stem] = error
            shut_down(client.km if keep_kernel else None)
            return None                                   # the next study starts a new kernel
        else:
            if kernel is not None:
                del notebook.cells[0]
            written = self.out / "results" / f"{stem}_quick.json"   # a replay: its analysis only
            self.results[stem] = (json.loads(written.read_text(encoding="utf-8"))
                                  if written.exists() else {})
            self.outputs[stem] = [output for cell in notebook.cells
                                  for output in cell.get("outputs", [])]
            return client.km if keep_kernel else None
        finally:
            if keep_kernel and client.kc is not None:
                client.kc.stop_channels()
            self.finished[stem].set()

    def stop(self):
        """Run no notebook after the ones running now, start nothing after them, and wait for
        them (a session that ends early leaves no kernel behind)."""
        with self.lock:
            self.queue.clear()
            self.then = None
        for worker in self.workers:
            worker.join()


@pytest.fixture(scope="session", autouse=True)
def notebook_runs(tmp_path_factory, request):
    """The NotebookRuns of this session, started before its first test; when they are done, the
    simulated-OS runs start on the core they leave."""
    items = [item.nodeid for item in request.session.items]
    named = [script.stem for script in SCRIPTS if any(script.stem in item for item in items)]
    request.config.notebook_runs = NotebookRuns(
        named, tmp_path_factory.mktemp("notebook_runs"),
        then=lambda: start_simulated_runs(request.config))
    return request.config.notebook_runs


@pytest.fixture(scope="session")
def notebook_run(notebook_runs):
    """notebook_run(stem): the JSON of notebooks/<stem>.ipynb executed once per session with
    QUICK=1 (the file's --quick run, as a reader's notebook runs it); its cells' outputs are in
    notebook_run.outputs[stem]. tests/test_notebooks.py checks that it runs; each file's
    test_main_quick checks its numbers, so the quick run is not trained twice. A study whose
    notebook replays its committed run (NOTEBOOK_ARGS) writes no quick run (at most its analysis
    of the replayed file): {}."""
    return notebook_runs


SIMULATED_TESTS = ("tests/test_simulated_os.py::test_every_lesson_runs_on_simulated_windows",
                   "tests/test_simulated_os.py::test_a_lesson_notebook_runs_on_simulated_windows")


def pytest_collection_finish(session):
    """Note whether the simulated-OS tests are to run: their lesson runs and notebooks then
    start in the background, at the lowest priority, once the notebooks have run
    (start_simulated_runs)."""
    session.config.simulated_runs = None
    session.config.simulated_pending = any(item.nodeid.startswith(SIMULATED_TESTS)
                                           for item in session.items)


SIMULATED_START = threading.Lock()   # the notebooks' thread or a test's, whichever comes first


def start_simulated_runs(config):
    """Start the simulated-OS lesson runs and notebooks (test_simulated_os) once: they take two
    cores' worth of most of a minute, which the rest of the suite, leaving a core idle much of
    the time, lends them."""
    import tempfile
    import test_simulated_os
    with SIMULATED_START:
        if not getattr(config, "simulated_pending", False) or config.simulated_runs is not None:
            return
        folder = Path(tempfile.mkdtemp(prefix="simulated_os_"))
        config.simulated_runs = {
            "folder": folder,
            "lessons": test_simulated_os.start_in_the_background(folder / "lessons"),
            "notebooks": test_simulated_os.start_notebooks_in_the_background(folder)}


def pytest_sessionfinish(session):
    """Stop the notebooks after those running, stop the background lesson runs if a test run
    ended before they did, let the simulated notebooks finish, and remove their folder."""
    notebooks = getattr(session.config, "notebook_runs", None)
    if notebooks is not None:
        notebooks.stop()
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


def printed_help(module):
    """What `--help` prints for a numbered file's config, in this process; it must exit 0 (a
    real command line's refusal is tested once, in test_flag_contract)."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), pytest.raises(SystemExit) as stop:
        module.config(["--help"])
    assert stop.value.code == 0
    return printed.getvalue()


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

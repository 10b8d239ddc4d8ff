"""How long a sweep takes on each engine (results/sweep_timing.json):

- lesson 02's --quick and default, run as a user runs them, with the hand-written process pool
  the course used before joblib (a checkout of that code, --before) and with today's engine,
  alternated so that both see the same machine;
- lesson 07's notebook at the default preset on simulated Windows (tests/simulated_os.py),
  where the pool trained a notebook's runs in the kernel, one at a time, and joblib trains them
  in worker processes;
- what a Dask LocalCluster of 2 worker processes adds per run: a sweep of runs that do
  nothing, on the cluster and in joblib's 2 workers, after a first sweep has started them.

    git worktree add ../base 084d547        # the last commit with the hand-written pool
    python tests/sweep_timing.py --before ../base

About 10 minutes on 2 cores. Nothing else should run meanwhile: the numbers are wall times.
"""
import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import harness
import plumbing  # noqa: E402
from harness import Setting, positive_int  # noqa: E402

def presets(text):
    """A comma-separated list of lesson 02's presets: quick, default."""
    words = text.split(",")
    if not set(words) <= {"quick", "default"}:
        raise argparse.ArgumentTypeError(f"expected quick and/or default, got {text!r}")
    return words


SETTINGS = {
    "before": Setting(None, ..., ..., Path, "a checkout of the code before joblib (required)"),
    "rounds": Setting(2, 1, ..., positive_int, "alternated rounds of each lesson 02 command"),
    "noop_runs": Setting(200, 20, ..., positive_int, "runs that do nothing, to time the "
                                                     "engines' own cost per run"),
    "presets": Setting(["quick", "default"], ["quick"], ..., presets,
                       "lesson 02's presets to time (and lesson 07's notebook at the last)"),
}
FLAGS = {"quick": ["--quick"], "default": []}


def config(argv=None):
    return harness.config(SETTINGS, argv, __doc__.split("\n")[0], full="as the default")


def check_before(args):
    """--before must be a checkout of the course (checked once the run has its name, so that a
    clone without that checkout still knows which file the command writes)."""
    if args.before is None or not (args.before / "02_multihead_model.py").is_file():
        harness.refuse("--before", "give a checkout of the code before joblib (see --help)")


def timed_command(root, flags, out):
    """Seconds of `python 02_multihead_model.py FLAGS --out OUT` in root, start to exit, and
    the run's own wall time from its JSON (without the interpreter's start and imports)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "02_multihead_model.py", *flags, "--out", str(out)],
                   cwd=root, check=True, capture_output=True, encoding="utf-8",
                   env={**os.environ, "TQDM_DISABLE": "1"})
    seconds = time.perf_counter() - started
    written = next((Path(out) / "results").glob("02_multihead_model*.json"))
    run_s = json.loads(written.read_text(encoding="utf-8"))["wall_time_s"]
    return {"command_s": seconds, "run_s": run_s}


def lesson_02(args, scratch):
    """{preset: {"before": [...], "now": [...]}}, one entry per round, before then now."""
    times = {}
    for preset in args.presets:
        flags = FLAGS[preset]
        times[preset] = {"before": [], "now": []}
        for round_ in range(args.rounds):
            for side, root in (("before", args.before), ("now", ROOT)):
                out = scratch / f"{preset}-{side}-{round_}"
                times[preset][side].append(timed_command(root, flags, out))
                print(f"lesson 02 {preset:<8} {side:<6} round {round_ + 1}: "
                      f"{times[preset][side][-1]['command_s']:.1f} s", flush=True)
    return times


def notebook_on_windows(root, out, preset):
    """Seconds to execute root's notebooks/07_real_data.ipynb at the preset in a kernel that
    starts processes as Windows does (--quick with 2 workers), and the line saying where its
    sweep trained."""
    notebook = nbformat.read(root / "notebooks" / "07_real_data.ipynb", as_version=4)
    environment = {"OUT": str(out), "MPLBACKEND": "agg", "TQDM_DISABLE": "1",
                   **({"QUICK": "1", "ARGS": "--workers 2"} if preset == "quick" else {})}
    notebook.cells.insert(0, nbformat.v4.new_code_cell(
        f"import os, sys; sys.path.insert(0, {str(root / 'tests')!r})\n"
        f"for name in ('QUICK', 'ARGS'):\n"
        f"    os.environ.pop(name, None)\n"
        f"os.environ.update({environment!r})\n"
        f"import simulated_os; simulated_os.simulate('windows')"))
    started = time.perf_counter()
    NotebookClient(notebook, timeout=1200, kernel_name="python3", resources={
        "metadata": {"path": str(root / "notebooks")}}).execute()
    seconds = time.perf_counter() - started
    printed = "".join(output.get("text", "") for cell in notebook.cells
                      for output in cell.get("outputs", []))
    where = next(line for line in printed.splitlines() if " runs trained " in line)
    return {"seconds": seconds, "sweep": where}


def nothing(run):
    """A run that trains nothing: what is left is the engine's cost."""
    return run


def cost_per_run(runs, workers):
    """Seconds per run of a sweep of runs that do nothing, after a first sweep has started the
    workers (their start is timed apart)."""
    batch = [dict(device="cpu", index=index) for index in range(runs)]
    with contextlib.redirect_stdout(io.StringIO()):          # its line: not timed here
        started = time.perf_counter()
        harness.run_sweep(batch[:workers], workers, nothing, cost=len)
        start_up = time.perf_counter() - started
        started = time.perf_counter()
        harness.run_sweep(batch, workers, nothing, cost=len)
    return {"first_sweep_s": start_up, "per_run_s": (time.perf_counter() - started) / runs}


def dask_overhead(args):
    """The engines' own cost per run: joblib's 2 workers, then a LocalCluster of 2."""
    from distributed import LocalCluster
    overhead = {"loky": cost_per_run(args.noop_runs, 2)}
    started = time.perf_counter()
    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        overhead["cluster_start_s"] = time.perf_counter() - started
        dask_path = harness.dask_path()
        dask_path.connect(cluster.scheduler_address)
        overhead["dask"] = cost_per_run(args.noop_runs, 2)
        dask_path.CLIENT["client"].close()
        dask_path.CLIENT["client"] = None
    return overhead


def main(argv=None):
    args = config(argv)
    run = plumbing.Run("sweep_timing", args, named=("before",), script=Path(__file__))
    check_before(args)
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        numbers = {"lesson_02": lesson_02(args, scratch)}
        numbers["notebook_07_windows"] = {
            side: notebook_on_windows(root, scratch / f"notebook-{side}", args.presets[-1])
            for side, root in (("before", args.before), ("now", ROOT))}
        for side, entry in numbers["notebook_07_windows"].items():
            print(f"lesson 07's notebook on simulated Windows, {side}: {entry['seconds']:.1f} s "
                  f"({entry['sweep']})", flush=True)
        numbers["overhead"] = dask_overhead(args)
    overhead = numbers["overhead"]
    print(f"per run that does nothing: joblib {overhead['loky']['per_run_s'] * 1e3:.1f} ms, "
          f"Dask LocalCluster {overhead['dask']['per_run_s'] * 1e3:.1f} ms")
    numbers["before_commit"] = harness.git(args.before, "rev-parse", "HEAD")
    args.before = os.path.relpath(args.before, ROOT)   # recorded from the repository's root
    run.record(numbers)
    run.finish()


if __name__ == "__main__":
    main()

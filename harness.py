"""The run's harness: a reader of the course need not read this file. No idea of a lesson
depends on it; it turns a lesson into a command-line program and a reproducible record.

    Setting, config                     a lesson's settings table and its command line: one flag
                                        per row, presets, one-line refusals (exit code 2)
    Run                                 its numbers, figures and results file, with provenance
    run_sweep                           training runs in joblib's processes, or on Dask (cluster.py)
    label_log_axis, plot_lines          plain log-axis ticks; a line per label, a dot per seed

The course's vocabulary (seeding, NMSE, attention, statistics, the training loop) is helpers.py.
"""

import argparse
import functools
import importlib.util
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

import joblib
import torch
import tqdm.auto
from torch.backends import cpu as torch_cpu

import helpers
from helpers import NonFiniteLoss

ROOT = Path(__file__).resolve().parent


# ==== A lesson's command line: its settings table, one flag per row ===========================
# Every numbered file declares its settings at its top, one row each, with its default, --quick
# and --full values side by side (`...`: as the default).
class Setting(NamedTuple):
    """One row of a settings table. type: a function of the text (one of the types below, Path,
    str) or a tuple of accepted words."""
    default: Any
    quick: Any
    full: Any
    type: Any
    help: str

    def value(self, preset):
        """Its value in the preset "default", "quick" or "full"."""
        value = getattr(self, preset)
        return self.default if value is Ellipsis else value


def positive_int(text):
    """An integer >= 1."""
    return _number(text, int, lambda value: value >= 1, "must be at least 1")


def positive_float(text):
    """A finite number > 0."""
    return _number(text, float, lambda value: math.isfinite(value) and value > 0,
                   "must be a finite number > 0")


def seed_int(text):
    """A seed from 0 to 2**32 - 1 (the range NumPy and torch both accept)."""
    return _number(text, int, lambda value: 0 <= value < 2**32,
                   f"must be between 0 and {2**32 - 1}")


def _number(text, kind, accepted, rule):
    """kind(text) when accepted(it), else argparse's error naming the rule."""
    try:
        value = kind(text)
    except ValueError:
        noun = "a whole number" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"expected {noun}, got {text!r}") from None
    if not accepted(value):
        raise argparse.ArgumentTypeError(f"{rule}, got {text}")
    return value


def int_list(text):
    """A comma-separated list of integers >= 1, e.g. "8,32,128"."""
    return [positive_int(part) for part in _items(text)]


def float_list(text):
    """A comma-separated list of numbers > 0, e.g. "1,4,16"."""
    return [positive_float(part) for part in _items(text)]


def _items(text):
    """The items of "8,32,128"; an empty list or item ("8,,32", "8,") is refused."""
    items = [part.strip() for part in text.split(",")]
    if not all(items):
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of values "
                                         f"without empty items, got {text!r}")
    return items


class Parser(argparse.ArgumentParser):
    """argparse, but a bad value ends with ONE line naming the flag, and exit code 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def refuse(flag, reason, smallest=None):
    """End a run before any work with Parser's one-line error; smallest: the smallest value
    accepted given the other flags."""
    Parser().error(f"argument {flag}: {reason}"
                   + ("" if smallest is None else f"; smallest accepted: {smallest}"))


def _shown(value):
    """A preset value as --help shows it: 8,32,128 for a list, 0.01 for a number."""
    if isinstance(value, (list, tuple)):
        return ",".join(_shown(v) for v in value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def build_parser(settings, description="", full="the paper's scale"):
    """The common flags, then one flag per row of `settings`, its preset values in its help."""
    parser = Parser(description=description)
    preset = parser.add_mutually_exclusive_group()
    preset.add_argument("--quick", action="store_true",
                        help="tiny sizes that run in seconds (what the tests use; also QUICK=1)")
    preset.add_argument("--full", action="store_true", help=full)
    parser.add_argument("--device", default=os.environ.get("DEVICE", "auto"),
                        help="auto (CUDA when available, else CPU), cpu or cuda "
                             "(default: auto, or $DEVICE)")
    parser.add_argument("--seed", type=seed_int, default=0, help="base random seed (default: 0)")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", RUNS)),
                        help="folder that receives results/ and figures/ (default: runs/, "
                             "which git ignores, or $OUT); `--out .` from the repository's "
                             "root refreshes the committed results and figures")
    parser.add_argument("--workers", type=positive_int,
                        help="parallel training processes on the CPU (default: all cores; "
                             "1 with --quick, whose runs take less than starting a process)")
    parser.add_argument("--scheduler", default=os.environ.get("DASK_SCHEDULER"),
                        help="train the sweeps on the Dask cluster whose scheduler is at this "
                             "address, e.g. tcp://host:8786 (default: none, or $DASK_SCHEDULER)")
    for name, row in settings.items():
        values = [row.value(preset) for preset in ("default", "quick", "full")]
        shown = "default: " + ("none" if values[0] is None else _shown(values[0]))
        if values[1:] != [values[0]] * 2:
            shown += f"; --quick: {_shown(values[1])}; --full: {_shown(values[2])}"
        accepted = {"choices": row.type} if isinstance(row.type, tuple) else {"type": row.type}
        parser.add_argument("--" + name.replace("_", "-"), **accepted, help=f"{row.help} ({shown})")
    return parser


def config(settings, argv=None, description="", full="the paper's scale", refusals=None,
           parser=None):
    """Parse the flags and fill every flag left unset from the preset's column. args.changed:
    the settings that differ from the preset (Run names the files after them). refusals(args) ->
    [(flag, accepted, why not, smallest or None)]: the first not accepted ends the run. parser:
    build_parser's, with a study's own flags added."""
    argv = cli_argv() if argv is None else argv
    parser = parser or build_parser(settings, description, full)
    args = parser.parse_args(argv)
    args.argv = list(argv)                  # the flags as typed, for the provenance
    args.preset = "quick" if args.quick or os.environ.get("QUICK") == "1" else \
        "full" if args.full else "default"
    if args.workers is None:
        args.workers = 1 if args.preset == "quick" else joblib.cpu_count()
    args.changed = ["seed"] if args.seed != 0 else []
    for name, row in settings.items():
        preset_value = anchored(row.value(args.preset), ROOT)
        if getattr(args, name) is None:
            setattr(args, name, preset_value)
            continue
        setattr(args, name, anchored(getattr(args, name), Path.cwd()))
        if getattr(args, name) != preset_value:
            args.changed.append(name)
    if args.scheduler and args.device == "auto":
        args.device = "cpu"                  # a cluster's runs train on its workers' CPUs
    try:
        args.device = pick_device(args.device)
    except ValueError as error:
        refuse("--device", str(error))
    check_out(args.out)
    if args.scheduler:
        if args.device != "cpu":
            refuse("--scheduler", f"a cluster trains on its workers' CPUs, not on --device "
                                  f"{args.device}: leave out one of the two")
        dask_path().connect(args.scheduler)
    for flag in ("n_train", "n_valid"):   # NMSE divides by a variance, standardising by a std
        if getattr(args, flag, 2) < 2:
            refuse("--" + flag.replace("_", "-"), f"a variance needs at least two samples, "
                   f"got {getattr(args, flag)}", smallest=2)
    for flag, accepted, why, smallest in refusals(args) if refusals else []:
        if not accepted:
            refuse(flag, why, smallest=smallest)
    return args


def pick_device(name="auto"):
    """"auto" -> "cuda" when available, else "cpu"; ValueError for a device we cannot use."""
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("cuda was asked for but this machine has no CUDA device")
    if name not in ("cpu", "cuda"):
        raise ValueError(f"expected auto, cpu or cuda, got {name!r}")
    return name


def anchored(value, folder):
    """A path made absolute: a typed one from the current folder, a settings table's from the
    repository's root (a notebook runs in notebooks/)."""
    if isinstance(value, (list, tuple)):
        return [anchored(item, folder) for item in value]
    return (folder / value).resolve() if isinstance(value, Path) else value


def check_out(out):
    """--out must be a folder we can create and write in (checked before any work)."""
    existing = next(folder for folder in (Path(out), *Path(out).parents) if folder.exists())
    if not existing.is_dir():
        refuse("--out", f"{existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        refuse("--out", f"cannot write in {existing}")


def in_notebook():
    """True inside a Jupyter kernel (launched as python -m ipykernel_launcher)."""
    return Path(sys.argv[0]).stem == "ipykernel_launcher"


def cli_argv(notebook_args=""):
    """sys.argv[1:] for a script; in a notebook, whose arguments are the kernel's, $ARGS or
    notebook_args."""
    if not in_notebook():
        return sys.argv[1:]
    return shlex.split(os.environ.get("ARGS") or notebook_args)


# ==== A lesson's run: its numbers, figures and results file, with where they come from ========
RUNS = ROOT / "runs"              # the default --out
RUN_OUTPUTS = ("results", "figures", "notebooks")   # what runs write: results, not code
NOT_IN_FILE_NAMES = {"workers", "scheduler", "data_dir"}   # where a run goes, not what it is
LIBRARIES = {"torch": "torch", "numpy": "numpy", "scipy": "scipy", "sklearn": "scikit-learn",
             "matplotlib": "matplotlib", "joblib": "joblib", "tqdm": "tqdm", "dask": "dask",
             "distributed": "distributed"}         # module: the name pip knows it by


class Run:
    """One run of a numbered file, from its flags to its results file: Run(stem, args) prints
    the device and starts the clock; then record(), figure() and finish(). The files' suffix
    says what differs from the default run (`_full`, `_steps100`)."""

    def __init__(self, stem, args, script=None):
        self.stem, self.args, self.numbers = stem, args, {}
        self.script = Path(script or helpers.script_path(stem))
        self.suffix = output_suffix(args)
        provenance()                    # the code as the run starts, not as it ends
        self.invocation = {"command": command_line(self.script, getattr(args, "argv", [])),
                           "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        SWEEPS.clear()
        TRAINED_ON.clear()
        self.started = time.perf_counter()
        print(f"device: {args.device}   preset: {args.preset}", flush=True)
        if not in_notebook():
            sys.excepthook = stop_in_one_line

    def record(self, numbers):
        """Keep numbers for the JSON; a NaN or infinity ends the run in one line."""
        bad = first_non_finite(numbers)
        if bad:
            sys.exit(f"stopped: the result {bad[0]} is {bad[1]}; nothing was written")
        self.numbers.update(numbers)
        return numbers

    def figure(self, figure, name):
        """Save the figure as figures/<name><suffix>.png; shown inline in a notebook."""
        if figure is None:
            return None
        path = save_figure(figure, name + self.suffix, self.args.out)
        if in_notebook():
            from IPython.display import display
            display(figure)
        import matplotlib.pyplot as plt
        plt.close(figure)
        return path

    def finish(self):
        """Write results/<stem><suffix>.json with every recorded number."""
        return self.write(self.stem + self.suffix)

    def write(self, name):
        seconds = time.perf_counter() - self.started
        ran = shown_path(self.script) if self.script.exists() else f"{self.stem}.py"
        path = save_results(name, self.numbers, self.args, seconds, script=ran,
                            record=self.provenance_record())
        print(f"wrote {shown_path(path)} in {seconds:.1f} s")
        return path

    def provenance_record(self):
        """Where the numbers come from: the code, the machine, the command, the libraries."""
        return {**provenance(), **self.invocation, "versions": library_versions(),
                **({"sweeps": SWEEPS} if SWEEPS else {}),
                **({"cluster": sys.modules["cluster"].machines(TRAINED_ON)} if TRAINED_ON else {})}


def output_suffix(args, named=()):
    """"" for a default run; else what differs: "_steps100_T8-32", "_full".
    named: flags the file names in its own variant (02's _D3)."""
    def text(value):
        if isinstance(value, (list, tuple)):
            return "-".join(text(v) for v in value)
        return Path(value).stem if isinstance(value, Path) else f"{value:g}" \
            if isinstance(value, float) else str(value)

    words = [f"{flag}{text(getattr(args, flag))}" for flag in args.changed
             if flag not in named and flag not in NOT_IN_FILE_NAMES
             and not isinstance(getattr(args, flag), bool)]
    if args.preset != "default":
        words.append(args.preset)
    return "".join(f"_{word}" for word in words)


def save_results(stem, numbers, args, wall_time_s, script=None, record=None):
    """Write OUT/results/<stem>.json atomically (a temporary file, then a rename); a NaN or an
    infinity anywhere raises ValueError and writes nothing."""
    folder = Path(args.out) / "results"
    folder.mkdir(parents=True, exist_ok=True)
    payload = {
        "script": script or f"{stem}.py",
        "config": {key: recorded(value) for key, value in vars(args).items() if key != "argv"},
        "device": args.device,
        "torch_version": torch.__version__,
        "python_version": sys.version.split()[0],
        "wall_time_s": round(wall_time_s, 2),
        "provenance": record or {**provenance(), "versions": library_versions()},
        **numbers,
    }
    bad = first_non_finite(payload, stem)
    if bad:
        raise ValueError(f"{bad[0]} is {bad[1]}: refusing to write a non-finite number")
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=folder, suffix=".tmp",
                                     delete=False) as handle:
        json.dump(payload, handle, indent=1, allow_nan=False)
    os.chmod(handle.name, 0o644)   # readable like any other file (temporary files are private)
    os.replace(handle.name, folder / f"{stem}.json")
    return folder / f"{stem}.json"


def save_figure(figure, name, out):
    """Save a figure as OUT/figures/<name>.png atomically."""
    folder = Path(out) / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    temporary = folder / f".{name}.tmp.png"
    figure.savefig(temporary, dpi=120, bbox_inches="tight")
    os.replace(temporary, folder / f"{name}.png")
    return folder / f"{name}.png"


def first_non_finite(value, key="result"):
    """(key path, value) of the first NaN or infinity in nested dicts and lists, else None."""
    if isinstance(value, float) and not math.isfinite(value):
        return key, value
    items = value.items() if isinstance(value, dict) else \
        enumerate(value) if isinstance(value, (list, tuple)) else ()
    for name, item in items:
        found = first_non_finite(item, f"{key}[{name!r}]")
        if found:
            return found
    return None


def cached(function):
    """function, computed once per arguments. functools.lru_cache does the same, but a Dask
    worker could not unpickle it: it travels by its module's name, which a worker without the
    checkout cannot import (cluster.py sends the course's modules by value)."""
    results = {}

    @functools.wraps(function)
    def once(*args):
        if args not in results:
            results[args] = function(*args)
        return results[args]

    once.cache, once.cache_clear = results, results.clear
    return once


@cached
def provenance(root=ROOT):
    """The code's git commit and whether tracked files other than RUN_OUTPUTS differ from it
    (dirty; both None outside a checkout), and the machine."""
    commit = git(root, "rev-parse", "HEAD")
    changes = git(root, "status", "--porcelain", "--untracked-files=no", "--", ".",
                  *(f":(exclude){folder}" for folder in RUN_OUTPUTS)) if commit else None
    return {"commit": commit, "dirty": None if changes is None else bool(changes),
            "machine": {"cpu": cpu_model(),
                        "cpu_capability": torch_cpu.get_cpu_capability(),
                        "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
                        "platform": platform.platform()}}


def git(root, *command):
    """git's output in root, stripped; None when it fails or git is missing."""
    try:
        done = subprocess.run(["git", *command], cwd=root, capture_output=True, text=True,
                              timeout=20, encoding="utf-8")
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def cpu_model():
    """The processor's name (Linux: /proc/cpuinfo's model name), else what platform knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def library_versions():
    """Python's version and that of every library of LIBRARIES this process imported."""
    versions = {"python": sys.version.split()[0]}
    for module, name in LIBRARIES.items():
        if module in sys.modules:
            versions[name] = getattr(sys.modules[module], "__version__", "unknown")
    return versions


def command_line(script, argv):
    """The command as typed from the repository's root: "python 02_multihead_model.py --full"."""
    typed = shlex.join(["python", shown_path(script), *argv])
    return typed + " (in its notebook)" if in_notebook() else typed


def shown_path(path):
    """A path as printed and recorded: from the repository's root when inside it."""
    try:
        return Path(path).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


def recorded(value):
    """A setting as a results file records it: paths from the repository's root."""
    if isinstance(value, (list, tuple)):
        return [recorded(item) for item in value]
    return shown_path(value) if isinstance(value, Path) else value


def stop_in_one_line(kind, error, trace):
    """A script's excepthook: a diverging loss or a failed sweep is one line, exit code 1."""
    if issubclass(kind, (NonFiniteLoss, SweepFailed)):
        print(f"stopped: {error}", file=sys.stderr)
    else:
        sys.__excepthook__(kind, error, trace)


# ==== Sweeps: many training runs, in joblib's processes (on a Dask cluster: cluster.py) ========
class SweepFailed(RuntimeError):
    """A run of a sweep raised, or the process or cluster training it went away."""


SWEEPS = []                    # where this run's sweeps trained, for the provenance
TRAINED_ON = []                # (run, machine) of each run trained on a Dask cluster (cluster.py)


def run_sweep(runs, workers, train, cost=None, report=None):
    """[train(run) for run in runs] (each a plain dict with its "device"), each on one torch
    thread, the costliest first by cost(run): in `workers` joblib processes, on the Dask cluster
    of --scheduler, or here (one worker, or a GPU). A tqdm bar counts the runs, and one line at
    the end says where they trained; a study's report(index, results so far) returns a line to
    print above the bar as each run ends, or None (plumbing.run_sweep's labels)."""
    if not runs:
        return []
    workers = min(workers, len(runs))
    engine, where, how = sweep_engine(runs[0]["device"], workers)
    if where not in SWEEPS:
        SWEEPS.append(where)
    queue = sorted(enumerate(runs), key=lambda item: -cost(item[1]) if cost else 0)
    started, results = time.perf_counter(), {}
    done = (trained(train, item) for item in queue) if engine == "here" else \
        parallel_results(engine, workers, train, queue, results)
    with tqdm.auto.tqdm(total=len(runs), unit="run", disable=not live_output(),
                        leave=False) as bar:
        for index, result in done:
            results[index] = result
            bar.update()
            line = report(index, results) if report else None
            if line:
                bar.write(f"{line}  ({time.perf_counter() - started:.1f} s)")
    print(f"{len(runs)} runs trained {how} ({time.perf_counter() - started:.1f} s)", flush=True)
    return [results[index] for index in range(len(runs))]


def sweep_engine(device, workers):
    """(engine, where for the provenance, how, to follow "N runs trained") of a sweep."""
    if device != "cpu":
        return "here", f"this process, on {device}", \
            f"one after another on {device}, in this process"
    cluster = sys.modules.get("cluster")     # imported by --scheduler (dask_path)
    if cluster is not None and cluster.CLIENT["client"] is not None:
        return ("dask", *cluster.engine())
    if workers == 1:
        return "here", "this process, one thread", \
            "one after another in this process, on one thread"
    return "loky", f"{workers} joblib worker processes", \
        f"in {workers} worker processes (joblib), one thread each"


def trained(train, item):
    """(index, train(run)) for item = (index, run), on one torch thread on a CPU."""
    index, run = item
    threads = torch.get_num_threads()
    try:
        if run["device"] == "cpu":
            torch.set_num_threads(1)
        return index, train(run)
    except NonFiniteLoss:
        raise
    except Exception as error:
        raise SweepFailed(f"the run {run_name(run)} raised {type(error).__name__}: "
                          f"{error}") from None
    finally:
        torch.set_num_threads(threads)


def run_name(run):
    """A run in one line, by its short settings: "T=32 h=4 seed=1"."""
    shown = [f"{key}={value}" for key, value in run.items() if key != "device"
             and isinstance(value, (int, float, str)) and len(str(value)) <= 20]
    return " ".join(shown) or "with no short settings"


def parallel_results(engine, workers, train, queue, results):
    """(index, result) of the queue's runs as they finish, from joblib's processes or Dask."""
    picklers = []                      # Dask's cloudpickle, and joblib's own copy before 1.6
    for pickler in ("cloudpickle", "joblib.externals.cloudpickle"):
        try:
            picklers.append(importlib.import_module(pickler))
        except ImportError:
            pass
    for name, module in list(sys.modules.items()):
        if name[:2].isdigit():         # load_concept's numbered files: no worker can import
            for pickler in picklers:   # them by name, so they travel by value
                pickler.register_pickle_by_value(module)
    try:
        if engine == "dask":
            yield from sys.modules["cluster"].on_the_cluster(train, queue)
            return
        with joblib.parallel_config(backend="loky", n_jobs=workers, inner_max_num_threads=1,
                                    max_nbytes=None):
            tasks = (joblib.delayed(trained)(train, item) for item in queue)
            yield from joblib.Parallel(return_as="generator_unordered", batch_size=1,
                                       pre_dispatch="all")(tasks)
    except (SweepFailed, NonFiniteLoss):
        raise
    except Exception as error:      # not the run's own error: its worker or cluster went away
        waiting = [run for index, run in queue if index not in results]
        said = " ".join(str(error).split())
        raise SweepFailed(f"the sweep stopped ({type(error).__name__}: {said}) with "
                          f"{len(waiting)} runs unfinished, among them "
                          f"{run_name(waiting[0]) if waiting else 'none'}") from None


def dask_path():
    """cluster.py, the Dask path beside this file, imported only for --scheduler."""
    try:
        import cluster
    except ImportError:
        refuse("--scheduler", "cluster.py, the course's Dask path, is not beside harness.py")
    return cluster


def live_output():
    """True where a progress bar can redraw: a terminal, or a notebook being watched
    (TQDM_DISABLE=1 keeps it out of notebooks executed to be committed)."""
    return os.environ.get("TQDM_DISABLE") != "1" and (in_notebook() or sys.stderr.isatty())


# ==== Plotting ================================================================================
def label_log_axis(axis, values, which="x"):
    """Log-axis ticks at `values`, labelled plainly (8, 32, 128)."""
    import matplotlib.ticker as ticker
    target = axis.xaxis if which == "x" else axis.yaxis
    target.set_major_locator(ticker.FixedLocator(values))
    target.set_major_formatter(ticker.FixedFormatter([f"{v:g}" for v in values]))
    target.set_minor_formatter(ticker.NullFormatter())


def plot_lines(axis, lines, statistic="mean", seeds=True, **properties):
    """A line per label of lines = {label: {x: y}}, x a number or its string; y a number, or
    seed_stats (its statistic drawn, a dot per seed when seeds). properties: axis.set's
    (xscale="log", xlabel=...). Returns the lines."""
    axis.set(**properties)            # before the lines: a log axis is not set on zeros alone
    drawn = {}
    for label, points in lines.items():
        xs = [float(x) for x in points]
        ys = [y[statistic] if isinstance(y, dict) else y for y in points.values()]
        line, = axis.plot(xs, ys, "o-", label=label)
        for x, y in zip(xs, points.values()):
            if isinstance(y, dict) and seeds:
                axis.plot([x] * len(y["seeds"]), y["seeds"], ".", ms=4, color=line.get_color())
        drawn[label] = line
    if properties.get("xscale") == "log":
        label_log_axis(axis, sorted({float(x) for points in lines.values() for x in points}))
    axis.legend(fontsize=7)
    return drawn

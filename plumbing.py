"""The command line and the files of a run: nothing here teaches, and a student need not open it.

Every numbered file declares its settings at its top, one row each, with its default, --quick
and --full values side by side:

    SETTINGS = {
        "T":  Setting([8, 32, 128], [8], [8, 16, 32, 64, 128], int_list, "sequence lengths T"),
        "lr": Setting(1e-2, ..., ..., positive_float, "AdamW's peak learning rate"),
    }

(`...` is "as the default"). `config(SETTINGS, ...)` turns each row into its flag once, parses
the command line and fills every flag left unset from the chosen preset. A run cell then calls
`Run(stem, args)` once; each part records its numbers and figures there, and `finish()` writes
the JSON with the wall time of the whole run.

    Setting, positive_int, ...     a row of a settings table, and the types of its flags
    config(settings, argv, ...)    parse the flags; --quick/--full/QUICK=1 pick the preset
    refuse(flags, reason, ...)     the one-line, exit-2 answer of every pre-flight check
    Run                            the run: device line, record(), figure(), finish()
    run_sweep                      independent training runs, costliest first, one thread
                                   each: in joblib's worker processes, on a Dask cluster
                                   (--scheduler), or here; a tqdm bar counts them
    save_results, save_figure      atomic JSON (finite numbers only) and PNG under --out
    read_input                     a results file a run reads, its sha256 kept for provenance
"""

import argparse
import collections
import contextlib
import functools
import hashlib
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

import torch

import helpers

ROOT = Path(__file__).resolve().parent
RUNS = ROOT / "runs"  # the default --out: git ignores it; `--out .` refreshes the committed files


# ----------------------------------------------------------------------------------------------
# The types of the flags: a bad value is refused in one line naming the flag
# ----------------------------------------------------------------------------------------------
def positive_int(text):
    """An integer >= 1 (for sizes, steps, counts)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_float(text):
    """A finite number > 0 (for learning rates, sharpness, scales)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


def seed_int(text):
    """A seed: a whole number from 0 to 2**32 - 1 (the range NumPy and torch both accept)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"must be between 0 and {2**32 - 1}, got {value}")
    return value


def int_list(text):
    """A comma-separated list of integers >= 1, e.g. "8,32,128" (for sweep dimensions)."""
    return [positive_int(part) for part in _items(text)]


def float_list(text):
    """A comma-separated list of numbers > 0, e.g. "1,4,16"."""
    return [positive_float(part) for part in _items(text)]


def path_list(text):
    """A comma-separated list of file paths, e.g. "results/a.json,results/b.json"."""
    return [Path(part) for part in _items(text)]


def _items(text):
    """The items of "8,32,128"; an empty list or an empty item ("8,,32", "8,") is refused."""
    items = [part.strip() for part in text.split(",")]
    if not all(items):
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of values "
                                         f"without empty items, got {text!r}")
    return items


class Setting(NamedTuple):
    """One row of a file's settings table: its value in each preset, its type, what it sets.

    `...` for quick or full means "as the default". type is a function of the text (one of the
    types above, Path, str), or a tuple of the accepted words (a choice)."""
    default: Any
    quick: Any
    full: Any
    type: Any
    help: str

    def value(self, preset):
        """The value of this setting in the preset "default", "quick" or "full"."""
        value = getattr(self, preset)
        return self.default if value is Ellipsis else value


# A side study's row: draw a committed run again from its JSON instead of training (Run, replay).
REPLAY = Setting(None, ..., ..., Path, "draw this committed results file again instead of "
                 "training")


# ----------------------------------------------------------------------------------------------
# Parsing the command line
# ----------------------------------------------------------------------------------------------
class Parser(argparse.ArgumentParser):
    """argparse, but a bad value ends with ONE line naming the flag, and exit code 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _shown(value):
    """A preset value as --help shows it: 8,32,128 for a list, 0.01 for a number."""
    if isinstance(value, (list, tuple)):
        return ",".join(_shown(v) for v in value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def build_parser(settings, description="", parts=None, full="the paper's scale"):
    """The parser of a file: the common flags, then one flag per row of `settings` (--head-dim
    for "head_dim"), with its three preset values in its help; --parts when `parts` is given."""
    parser = Parser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    preset = parser.add_mutually_exclusive_group()
    preset.add_argument("--quick", action="store_true",
                        help="tiny sizes that run in seconds (what the tests use; also QUICK=1)")
    preset.add_argument("--full", action="store_true", help=full)
    parser.add_argument("--device", default=os.environ.get("DEVICE", "auto"),
                        help="auto (CUDA when available, else CPU), cpu or cuda "
                             "(default: auto, or $DEVICE when set)")
    parser.add_argument("--seed", type=seed_int, default=0,
                        help="base random seed, 0 .. 2**32 - 1 (default: 0)")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", RUNS)),
                        help="folder that receives results/ and figures/ (default: runs/, "
                             "which git ignores, or $OUT when set); `--out .` from the "
                             "repository's root refreshes the committed results and figures")
    parser.add_argument("--workers", type=positive_int,
                        help="parallel training processes on the CPU (default: all cores; "
                             "1 with --quick, whose runs take less than starting a process)")
    parser.add_argument("--scheduler", default=os.environ.get("DASK_SCHEDULER"),
                        help="train the sweeps on the Dask cluster whose scheduler is at this "
                             "address, e.g. tcp://host:8786 (default: none, this machine; "
                             "or $DASK_SCHEDULER when set)")
    for name, row in settings.items():
        values = [row.value(preset) for preset in ("default", "quick", "full")]
        shown = (f"default: {_shown(values[0])}" if values[0] is not None else "default: none")
        if values[1:] != [values[0]] * 2:
            shown += f"; --quick: {_shown(values[1])}; --full: {_shown(values[2])}"
        flag = "--" + name.replace("_", "-")
        if isinstance(row.type, tuple):
            parser.add_argument(flag, choices=row.type, help=f"{row.help} ({shown})")
        else:
            parser.add_argument(flag, type=row.type, help=f"{row.help} ({shown})")
    if parts is not None:
        parser.add_argument("--parts", help=f"only these parts, comma-separated, each with the "
                                            f"parts it needs: {','.join(parts)} (default: all)")
    return parser


def config(settings, argv=None, description="", parts=None, full="the paper's scale",
           variants=None, notebook_args="", refusals=None):
    """Parse the flags, then fill every flag left unset from the chosen preset's column.

    The preset is --quick, --full or the default; QUICK=1 in the environment selects the quick
    one too (how the tests run the notebooks). parts: {part: the parts it needs}; args.parts
    becomes the parts to run, in the file's order. variants: {setting: {value: rows}}, rows of
    the same shape that replace the table's when that setting has that value (07's CIFAR-10
    sizes under --data cifar10). args.changed lists the settings whose value differs from the
    preset's (Run names the files after them). notebook_args: the flags of the file's notebook
    when $ARGS is unset ("--replay ../results/<stem>.json" for a study that trains for long).
    refusals: a function of the parsed args returning [(flag, accepted, why not, the smallest
    value accepted or None)], declared beside the file's settings; the first one not accepted
    ends the run before any work (refuse_unaccepted)."""
    argv = cli_argv(notebook_args) if argv is None else argv
    for name, tables in (variants or {}).items():
        probe = argparse.ArgumentParser(add_help=False)
        probe.add_argument("--" + name.replace("_", "-"), default=settings[name].default)
        value = probe.parse_known_args(argv)[0].__dict__[name]
        settings = {**settings, **tables.get(value, {})}
    parser = build_parser(settings, description, parts, full)
    args = parser.parse_args(argv)
    args.argv = list(argv)     # the flags as typed, for the provenance (not a setting)
    if args.quick or os.environ.get("QUICK") == "1":
        args.preset = "quick"
    else:
        args.preset = "full" if args.full else "default"
    if args.workers is None:
        args.workers = 1 if args.preset == "quick" else usable_cores()
    args.changed = ["seed"] if args.seed != 0 else []
    for name, row in settings.items():
        preset_value = anchored(row.value(args.preset), ROOT)
        if getattr(args, name) is None:
            setattr(args, name, preset_value)
            continue
        setattr(args, name, anchored(getattr(args, name), Path.cwd()))
        if getattr(args, name) != preset_value:
            args.changed.append(name)
    try:
        args.device = str(pick_device(args.device))
    except ValueError as error:
        refuse("--device", str(error))
    check_out(args.out)
    if args.scheduler:
        connect(args.scheduler)
    for flag in ("n_train", "n_valid"):
        value = getattr(args, flag, None)
        if value is not None and value < 2:  # NMSE divides by a variance, standardising by a std
            refuse("--" + flag.replace("_", "-"), f"a variance needs at least two samples, "
                   f"got {value}", smallest=2)
    if parts is not None:
        args.parts = chosen_parts(parts, args.parts)
    if refusals is not None:
        refuse_unaccepted(refusals(args))
    return args


def usable_cores():
    """The cores this process may use (its CPU affinity and container limits, as joblib counts
    them), not all the machine's."""
    import joblib
    return joblib.cpu_count()


def anchored(value, folder):
    """A path setting made absolute: a path typed on the command line is relative to the folder
    the command runs in, as for any command; a path in a settings table is relative to the
    repository's root, wherever the run starts (a notebook runs in notebooks/). Lists of paths
    item by item; any other value as it is."""
    if isinstance(value, (list, tuple)):
        return [anchored(item, folder) for item in value]
    if isinstance(value, Path):
        return (folder / value).resolve()
    return value


def refuse(flags, reason, smallest=None):
    """End a run before any work: one line naming the flag(s) and the reason, exit code 2.

    smallest: the smallest value of the (first) flag that would be accepted given the others,
    when there is one, so the user knows what to type instead; "--other VALUE" when the fix is
    to raise another flag (e.g. --d when --D is larger than it)."""
    message = f"argument {flags}: {reason}" + ("" if smallest is None
                                               else f"; smallest accepted: {smallest}")
    Parser().error(message)


def refuse_unaccepted(checks):
    """Refuse the first of checks [(flag, accepted, why not, the smallest value accepted or
    None)] that is not accepted (see refuse); returns nothing when all are."""
    for flag, accepted, why, smallest in checks:
        if not accepted:
            refuse(flag, why, smallest=smallest)


def check_out(out):
    """--out must be a folder we can create and write in (checked before any work)."""
    out = Path(out)
    existing = next(folder for folder in (out, *out.parents) if folder.exists())
    if not existing.is_dir():
        refuse("--out", f"{existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        refuse("--out", f"cannot write in {existing}")


def chosen_parts(parts, text):
    """The parts --parts names, with the parts they need, in the file's order; one line and
    exit 2 for an unknown or empty name. None: every part."""
    if text is None:
        return list(parts)
    asked = [name.strip() for name in text.split(",")]
    unknown = [name for name in asked if name not in parts]
    if unknown:
        refuse("--parts", f"unknown part {unknown[0]!r}; this file's parts are "
               f"{', '.join(parts)}")
    for name in list(asked):
        asked += parts[name]
    return [name for name in parts if name in asked]


def in_notebook():
    """True inside a Jupyter kernel (recognised by its launcher: python -m ipykernel_launcher);
    a test process may import ipykernel without being a kernel."""
    return Path(sys.argv[0]).stem == "ipykernel_launcher"


def cli_argv(notebook_args=""):
    """sys.argv[1:] for a script. Inside a Jupyter kernel, whose arguments are its own, the
    flags in $ARGS, else notebook_args (none by default: the notebook runs the default preset;
    a long study's notebook replays its committed run)."""
    if not in_notebook():
        return sys.argv[1:]
    return shlex.split(os.environ.get("ARGS") or notebook_args)


def pick_device(name="auto"):
    """"auto" -> CUDA when available, else CPU. Raises ValueError for a device we cannot use."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name == "cuda":
        if not torch.cuda.is_available():
            raise ValueError("cuda was asked for but this machine has no CUDA device")
        return torch.device("cuda")
    raise ValueError(f"expected auto, cpu or cuda, got {name!r}")


# ----------------------------------------------------------------------------------------------
# A run: its numbers, its figures, its JSON
# ----------------------------------------------------------------------------------------------
# Settings that change where or how fast a run goes, not its numbers (or that name it otherwise).
NOT_IN_FILE_NAMES = {"workers", "scheduler", "data_dir"}


class Run:
    """One run of a numbered file, from its flags to its JSON.

    Run(stem, args) prints the device and starts the clock; record(numbers) keeps a part's
    numbers for the JSON (a NaN or infinity ends the run in one line, before anything is
    printed or written); figure(figure, name) saves a PNG and, in a notebook, shows it where
    the cell is; finish() writes results/<stem><suffix>.json with the wall time of the whole
    run. The suffix says what differs from the default run (`_full`, `_steps100`, `_parts_b`;
    `variant` is a file's own, such as 02's `_D3`), so no other run lands on its files."""

    def __init__(self, stem, args, parts=None, variant="", named=(), script=None):
        self.stem, self.args, self.numbers = stem, args, {}
        self.script = script or helpers.script_path(stem)   # the file that runs, by its path
        self.suffix = variant + output_suffix(args, parts, named)
        provenance()  # read now, once per process: the code as it starts, not as it ends
        self.invocation = {"command": command_line(self.script, getattr(args, "argv", [])),
                           "started": started_now()}
        REPLAYED.clear()  # the results files this run reads (read_input), from here on
        SWEEPS.clear()    # where its sweeps train, from here on
        self.started = time.perf_counter()
        print(f"device: {args.device}   preset: {args.preset}", flush=True)
        if not in_notebook():
            sys.excepthook = stop_in_one_line

    def record(self, numbers):
        """Keep a part's numbers (a dict) for the JSON; returns them."""
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
        """Write the JSON of every recorded number; prints where, and the run's wall time."""
        return self.write(self.stem + self.suffix)

    def finish_analysis(self):
        """Write what a replay recomputed from a committed run (`--replay FILE`) as a file of its
        own, results/<stem>_analysis_of_<FILE's stem>.json, so the committed run stays as its
        run wrote it."""
        return self.write(analysis_name(self.stem, self.args.replay))

    def write(self, name):
        seconds = time.perf_counter() - self.started
        ran = shown_path(self.script) if Path(self.script).exists() else f"{self.stem}.py"
        path = save_results(name, self.numbers, self.args, seconds, script=ran,
                            invocation=self.invocation)
        print(f"wrote {shown_path(path)} in {seconds:.1f} s")
        return path


def analysis_name(stem, replayed):
    """The results file of a new analysis of a committed run: 06b_ngram + 06b_ngram_full.json
    -> 06b_ngram_analysis_of_06b_ngram_full."""
    return f"{stem}_analysis_of_{Path(replayed).stem}"


def replay(path):
    """The numbers of a committed results file, to draw its tables and figures again without
    training; prints which run wrote them (its command's flags and its wall time). The file's
    sha256 is kept for the provenance of what this process writes (with_replayed_inputs)."""
    if not Path(path).is_file():
        refuse("--replay", f"no results file at {path}")
    written = read_input(path)
    flags = " ".join(f"--{key}" for key in written["config"].get("changed", []))
    print(f"replaying {shown_path(path)}: written by {written['script']} "
          f"({written['config']['preset']} preset{', changed: ' + flags if flags else ''}) "
          f"in {written['wall_time_s']:.0f} s on {written['device']}")
    return {key: value for key, value in written.items() if key not in
            ("script", "config", "device", "torch_version", "python_version", "wall_time_s",
             "provenance")}


def read_input(path):
    """The content of a results file this run reads (a replay, a lesson run a control stands
    beside), kept with its sha256 for the provenance of what this process writes."""
    content = Path(path).read_bytes()
    REPLAYED[shown_path(path)] = hashlib.sha256(content).hexdigest()
    return json.loads(content.decode("utf-8"))


def replay_suffix(args):
    """The files' suffix of a replay: "_full" when the replayed file is a --full run, so its
    figures keep the committed names (05_confound_full.png); none otherwise."""
    return "_full" if args.replay and Path(args.replay).stem.endswith("_full") else ""


def stop_in_one_line(kind, error, trace):
    """sys.excepthook of a script: a diverging loss or a failed sweep is one line ("stopped:
    ..."), exit code 1."""
    if issubclass(kind, (helpers.NonFiniteLoss, SweepFailed)):
        print(f"stopped: {error}", file=sys.stderr)
    else:
        sys.__excepthook__(kind, error, trace)


def output_suffix(args, parts=None, named=()):
    """"" for a default run; else what differs, e.g. "_steps100_T8-32", "_full", "_parts_b".

    named: flags the file already names in its own variant (02's _D3, _E32, ...)."""
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
    asked = getattr(args, "parts", None)
    if parts is not None and asked and list(asked) != list(parts):
        words.append("parts_" + "_".join(asked))
    return "".join(f"_{word}" for word in words)


def first_non_finite(value, key="result"):
    """(key path, value) of the first NaN or infinity in nested dicts/lists, else None."""
    if isinstance(value, float) and not math.isfinite(value):
        return key, value
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    else:
        return None
    for name, item in items:
        found = first_non_finite(item, f"{key}[{name!r}]")
        if found:
            return found
    return None


def shown_path(path):
    """A path as printed: relative to the repository when inside it (no machine's prefix)."""
    try:
        return Path(path).resolve().relative_to(ROOT).as_posix()  # the same on every system
    except ValueError:
        return str(path)


# What runs write into the repository: a change there is a result, not a change of the code.
RUN_OUTPUTS = ("results", "figures", "notebooks")


def git(root, *command):
    """git's output of a command run in root, stripped; None when it fails or git is missing."""
    try:
        done = subprocess.run(["git", *command], cwd=root, capture_output=True, text=True,
                              timeout=20, encoding="utf-8")
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


@functools.lru_cache(maxsize=None)
def fresh_interpreter(code, *args):
    """What `python -c CODE ARGS` prints, run in a new interpreter once per process: what it
    reads does not depend on what this process imported or replaced before (pytest, a notebook's
    earlier cells)."""
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          check=True, encoding="utf-8")
    return done.stdout


REPLAYED = {}   # the results files read_input() read for this run: path -> sha256 of its bytes


def with_replayed_inputs(record, root=None):
    """A provenance record plus, for a run that replayed committed files, each one's sha256 and
    whether it is the committed file (tracked, and unchanged since HEAD); dirty then also
    covers what the run read (the code's check leaves results/ out)."""
    if not REPLAYED:
        return record
    root = Path(root or ROOT)
    inputs = {path: {"sha256": digest,
                     "as_committed": git(root, "ls-files", "--error-unmatch", path) is not None
                     and git(root, "diff", "--quiet", "HEAD", "--", path) is not None}
              for path, digest in REPLAYED.items()}
    dirty = record["dirty"]
    if dirty is not None:
        dirty = dirty or not all(entry["as_committed"] for entry in inputs.values())
    return {**record, "dirty": dirty, "inputs": inputs}


@functools.lru_cache(maxsize=None)
def provenance(root=None):
    """Where a run comes from: the code's git commit and whether tracked files other than the
    runs' outputs (RUN_OUTPUTS) differed from it (dirty), and the machine (CPU model, the
    vector instructions torch's kernels use, cores, torch's threads). Outside a git checkout commit and dirty are None. Once per
    process."""
    root = Path(root or ROOT)
    commit = git(root, "rev-parse", "HEAD")
    changes = git(root, "status", "--porcelain", "--untracked-files=no", "--", ".",
                  *(f":(exclude){folder}" for folder in RUN_OUTPUTS)) if commit else None
    return {"commit": commit, "dirty": None if changes is None else bool(changes),
            "machine": {"cpu": cpu_model(),
                        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
                        "cores": os.cpu_count(),
                        "torch_threads": torch.get_num_threads(),
                        "platform": platform.platform()}}


def command_line(script, argv):
    """The command that ran, as one would type it from the repository's root:
    "python further/06d_head_dim_context.py --full --out ."; a notebook's ends with
    "(in its notebook)", since its flags came from $ARGS or the notebook's own."""
    typed = shlex.join(["python", shown_path(script), *argv])
    return typed + " (in its notebook)" if in_notebook() else typed


def started_now():
    """The time a run starts, in UTC to the second: "2026-12-06T04:52:10Z"."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# The libraries a run may import, by module and by the name pip knows them by.
LIBRARIES = {"torch": "torch", "numpy": "numpy", "scipy": "scipy", "sklearn": "scikit-learn",
             "matplotlib": "matplotlib", "joblib": "joblib", "tqdm": "tqdm", "dask": "dask",
             "distributed": "distributed"}


def library_versions():
    """Python's version and that of every library of LIBRARIES this process has imported (by
    its pip name: scikit-learn for 07's digits), read when the results are written."""
    versions = {"python": sys.version.split()[0]}
    for module, name in LIBRARIES.items():
        if module in sys.modules:
            versions[name] = getattr(sys.modules[module], "__version__", "unknown")
    return versions


def cpu_model():
    """The processor's name (Linux: /proc/cpuinfo's model name), else what platform knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def recorded(value):
    """A setting as a results file records it: a path from the repository's root (shown_path),
    lists item by item."""
    if isinstance(value, (list, tuple)):
        return [recorded(item) for item in value]
    return shown_path(value) if isinstance(value, Path) else value


def save_results(stem, numbers, args, wall_time_s, script=None, invocation=None):
    """Write OUT/results/<stem>.json atomically (temporary file, then rename).

    Stores the numbers with the config that produced them, the device, torch's and Python's
    versions, the wall time of the whole run and its provenance (commit, the versions of every
    library it imported, machine; with `invocation`, Run's command line and start time), so
    every figure and README number can be traced to a run; `script` is the file that ran, from
    the repository's root (default: <stem>.py). Returns the path. Strict JSON: a NaN or infinity
    anywhere raises ValueError naming its key (nothing written)."""
    folder = Path(args.out) / "results"
    folder.mkdir(parents=True, exist_ok=True)
    payload = {
        "script": script or f"{stem}.py",   # the file that ran, from the repository's root
        "config": {key: recorded(value) for key, value in vars(args).items() if key != "argv"},
        "device": args.device,
        "torch_version": torch.__version__,
        "python_version": sys.version.split()[0],   # 06's corpus ships with Python
        "wall_time_s": round(wall_time_s, 2),
        "provenance": with_replayed_inputs({**provenance(), **(invocation or {}),
                                            "versions": library_versions(),
                                            **({"sweeps": SWEEPS} if SWEEPS else {})}),
        **numbers,
    }
    bad = first_non_finite(payload, stem)
    if bad:
        raise ValueError(f"{bad[0]} is {bad[1]}: refusing to write a non-finite number")
    path = folder / f"{stem}.json"
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=folder, suffix=".tmp",
                                     delete=False) as handle:
        json.dump(payload, handle, indent=1, allow_nan=False)
    os.chmod(handle.name, 0o644)  # readable like any other file (temporary files are private)
    os.replace(handle.name, path)
    return path


def save_figure(figure, name, out):
    """Save a matplotlib figure as OUT/figures/<name>.png atomically; returns the path."""
    folder = Path(out) / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    temporary = folder / f".{name}.tmp.png"
    figure.savefig(temporary, dpi=120, bbox_inches="tight")
    os.replace(temporary, path)
    return path


# ----------------------------------------------------------------------------------------------
# Training many runs at once: joblib's worker processes, or a Dask cluster
# ----------------------------------------------------------------------------------------------
class SweepFailed(RuntimeError):
    """A run of a sweep raised, or the process or cluster training it went away: the message
    names the run (a script prints it as one line, "stopped: ...")."""


SCHEDULER = {"client": None}   # the Dask cluster --scheduler connected to (config), else None
SWEEPS = []                    # where this process's sweeps ran, for the provenance


def run_name(run):
    """A run as one line names it: its short settings, "T=32 h=4 seed=1" (no device)."""
    shown = [f"{key}={value}" for key, value in run.items() if key != "device"
             and isinstance(value, (int, float, str)) and len(str(value)) <= 20]
    return " ".join(shown) or "with no short settings"


@contextlib.contextmanager
def one_thread():
    """torch on one thread inside the block (then as before): each run of a sweep trains so,
    wherever it runs, and so gives the same numbers in a worker as in this process."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def trained(train, item):
    """(index, train(run)) for item = (index, run), on one torch thread: a sweep's unit of work.
    A diverging loss keeps its own message (it names the run); any other error comes back as
    SweepFailed naming the run."""
    index, run = item
    try:
        with one_thread() if run["device"] == "cpu" else contextlib.nullcontext():
            return index, train(run)
    except helpers.NonFiniteLoss:
        raise
    except Exception as error:
        raise SweepFailed(f"the run {run_name(run)} raised {type(error).__name__}: "
                          f"{error}") from None


def connect(address, seconds=10):
    """The Dask client of the scheduler at address ("tcp://host:8786"), kept for every sweep of
    this process; the flag is refused in one line when none answers within `seconds`."""
    try:
        from distributed import Client
    except ImportError:
        refuse("--scheduler", "Dask is not installed: pip install -r requirements-cluster.txt")
    try:
        SCHEDULER["client"] = Client(address, timeout=f"{seconds}s", set_as_default=False)
    except (OSError, TimeoutError, ValueError) as error:
        refuse("--scheduler", f"no Dask scheduler answered at {address} within {seconds} s "
                              f"({type(error).__name__})")
    return SCHEDULER["client"]


def sweep_engine(device, workers):
    """Where a sweep's runs train: ("here" | "loky" | "dask", where in a few words for the
    provenance, the line that says so)."""
    client = SCHEDULER["client"]
    if device != "cpu":
        return "here", f"this process, on {device}", \
            f"the runs go one after another on {device}, in this process"
    if client is not None:
        address = client.scheduler.address
        threads = client.nthreads()                      # {worker: its threads}
        if any(count != 1 for count in threads.values()):
            refuse("--scheduler", f"the workers at {address} run {sorted(set(threads.values()))} "
                                  f"threads each; start them with --nthreads 1, so that each "
                                  f"run trains alone on its thread")
        count = len(threads)
        return "dask", f"the Dask cluster at {address}, {count} workers", \
            f"the runs train on the Dask cluster at {address} ({count} workers), one thread each"
    if workers == 1:
        return "here", "this process, one thread", \
            "the runs go one after another in this process, on one thread"
    return "loky", f"{workers} joblib worker processes", \
        f"the runs train in {workers} worker processes (joblib), one thread each"


def send_the_numbered_files_by_value():
    """A worker finds helpers, plumbing and engine by name, as this process does; a numbered
    file (helpers.load_concept: "06a_text_allocation", a name `import` refuses, maybe in
    further/) it might not, so its functions and classes travel by value (cloudpickle, which
    joblib and Dask both use), as a script's or a notebook's own do."""
    import cloudpickle
    for name, module in list(sys.modules.items()):
        if name[:2].isdigit():
            cloudpickle.register_pickle_by_value(module)


def on_the_cluster(client, train, queue, wait_s=600):
    """(index, result) of every (index, run) of the queue as it finishes on the Dask cluster,
    in the costliest-first order of the queue; it waits up to wait_s for a first worker (a
    batch job may be queued). A task the scheduler fails (its workers gone, the cluster closed)
    raises here."""
    from distributed import as_completed
    client.wait_for_workers(1, timeout=wait_s)
    with client.as_current():
        futures = [client.submit(trained, train, item, pure=False, priority=-position)
                   for position, item in enumerate(queue)]            # costliest first
        for future in as_completed(futures):
            yield future.result()


def parallel_results(engine, workers, train, queue, results):
    """(index, result) of every (index, run) of the queue as it finishes, from joblib's worker
    processes (loky) or the Dask cluster (on_the_cluster). A worker process or a cluster that
    goes away ends the sweep with SweepFailed, naming a run that did not finish (results: those
    that did)."""
    send_the_numbered_files_by_value()
    try:
        if engine == "dask":
            yield from on_the_cluster(SCHEDULER["client"], train, queue)
            return
        import joblib
        with joblib.parallel_config(backend="loky", n_jobs=workers, inner_max_num_threads=1,
                                    max_nbytes=None):
            tasks = (joblib.delayed(trained)(train, item) for item in queue)
            yield from joblib.Parallel(return_as="generator_unordered", batch_size=1,
                                       pre_dispatch="all")(tasks)
    except (SweepFailed, helpers.NonFiniteLoss):
        raise
    except Exception as error:      # not the run's own error: its worker or cluster went away
        waiting = [run for index, run in queue if index not in results]
        said = " ".join(str(error).split())      # one line, however the library wrapped it
        raise SweepFailed(f"the sweep stopped ({type(error).__name__}: {said}) with "
                          f"{len(waiting)} runs unfinished, among them "
                          f"{run_name(waiting[0]) if waiting else 'none'}") from None


def run_sweep(runs, workers, train, label, cost, group=None):
    """Train every run with train(run), the costliest first by cost(run) (a guess at its
    seconds, only for scheduling), each on one torch thread: with workers > 1 in joblib's worker
    processes (on every system, a notebook's function too), on the Dask cluster of --scheduler
    when there is one, else one after another in this process; it prints one line saying
    which. Returns the results in the order of `runs`, however they happen to finish.

    A progress bar (tqdm, in a terminal or a notebook) counts the runs; above it goes one line
    per run, label(result), as each finishes; with group (a run -> the name of its group), one
    line per group instead, label(the group's results), when its last run ends."""
    import tqdm.auto
    if not runs:
        return []
    queue = sorted(enumerate(runs), key=lambda item: -cost(item[1]))   # costliest first
    started, results = time.perf_counter(), {}
    members = collections.defaultdict(list)                 # group -> the indices of its runs
    for index, run in enumerate(runs):
        members[group(run) if group else index].append(index)
    device = runs[0]["device"]
    workers = min(workers, len(runs))
    engine, where, why = sweep_engine(device, workers)
    print(why, flush=True)
    if where not in SWEEPS:
        SWEEPS.append(where)
    bar = tqdm.auto.tqdm(total=len(runs), unit="run", disable=not live_output(), leave=False)
    reported = 0
    with bar:
        done = (trained(train, item) for item in queue) if engine == "here" else \
            parallel_results(engine, workers, train, queue, results)
        for index, result in done:
            results[index] = result
            bar.update()
            name = group(result) if group else index
            if all(member in results for member in members[name]):
                reported += 1
                shown = [results[member] for member in members[name]] if group else result
                bar.write(report(reported, len(members), label(shown), started))
    return [results[index] for index in range(len(runs))]


def live_output():
    """True where a progress bar can redraw itself: a terminal, or a notebook someone is
    watching (TQDM_DISABLE=1 keeps it out of notebooks executed to be committed)."""
    if os.environ.get("TQDM_DISABLE") == "1":
        return False
    return in_notebook() or sys.stderr.isatty()


def report(done, total, text, started):
    """One line per finished run or group of a sweep: [3/10] T=32 h=2 ... (4.1 s)."""
    return f"[{done}/{total}] {text}  ({time.perf_counter() - started:.1f} s)"

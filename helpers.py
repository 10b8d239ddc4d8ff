"""Shared tiny helpers for the numbered concept files.

Only what several files need lives here; each concept's own code (the task, the model, a
construction) stays in its numbered file. Contents, in order of use:

    load_concept("01_retrieval_task")   import a numbered file (its name starts with a digit)
    Parser, positive_int, int_list, ... argparse with one-line errors and the common flags
    add_training_flags                  --seeds, --steps, --n-train, --n-valid, --workers
    config(parser, presets, argv)       parse flags, fill unset ones from --quick/default/--full
    refuse(parser, flags, reason, ...)  the one-line, exit-2 answer of every pre-flight check
    cli_argv()                          the command-line arguments, or [] inside a notebook
    pick_device, seed_everything        "auto" -> CUDA when available; one seeding helper
    nmse, count_parameters              the metric of both papers; parameter counting
    attention_logits, attention_weights the one attention-scale convention: where beta and B live
    by_seed, seed_stats, t_interval     a configuration's seeds/min/mean/std; paired 95% t
    train_regression                    AdamW + warm-up/cosine schedule, held-out NMSE
    run_sweep                           independent training runs in CPU processes, longest first
    run_main                            main(args), timed; a non-finite number ends it in one line
    save_results, save_figure           atomic JSON (finite numbers only) and PNG under --out
    label_log_axis, progress            plain log-axis ticks; one line per finished config
"""

import argparse
import functools
import importlib.util
import json
import math
import multiprocessing
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent


# ----------------------------------------------------------------------------------------------
# Importing an earlier concept
# ----------------------------------------------------------------------------------------------
def load_concept(name):
    """Import a numbered file such as "01_retrieval_task" (a name Python's `import` refuses)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # registered first so dataclasses and pickling can find it
    spec.loader.exec_module(module)
    return module


# ----------------------------------------------------------------------------------------------
# Command-line flags
# ----------------------------------------------------------------------------------------------
class Parser(argparse.ArgumentParser):
    """argparse, but a bad value ends with ONE line naming the flag, and exit code 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


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


def _items(text):
    """The items of "8,32,128"; an empty list or an empty item ("8,,32", "8,") is refused."""
    items = [part.strip() for part in text.split(",")]
    if not all(items):
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of values "
                                         f"without empty items, got {text!r}")
    return items


def make_parser(description):
    """The parser every numbered file starts from, with the common flags already added."""
    parser = Parser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    preset = parser.add_mutually_exclusive_group()
    preset.add_argument("--quick", action="store_true",
                        help="tiny sizes that run in seconds (what the tests use; also QUICK=1)")
    preset.add_argument("--full", action="store_true",
                        help="the paper's scale (a GPU is recommended)")
    parser.add_argument("--device", default=os.environ.get("DEVICE", "auto"),
                        help="auto (CUDA when available, else CPU), cpu or cuda "
                             "(default: auto, or $DEVICE when set)")
    parser.add_argument("--seed", type=seed_int, default=0,
                        help="base random seed, 0 .. 2**32 - 1 (default: 0)")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ROOT)),
                        help="folder that receives results/ and figures/ "
                             "(default: the repository, or $OUT when set)")
    return parser


def add_training_flags(parser):
    """The flags every training sweep shares; unset ones come from the presets."""
    parser.add_argument("--seeds", type=positive_int, help="seeds per configuration")
    parser.add_argument("--steps", type=positive_int, help="training steps per run")
    parser.add_argument("--n-train", type=positive_int,
                        help="training sequences per length (at least 2)")
    parser.add_argument("--n-valid", type=positive_int,
                        help="validation sequences per length (at least 2)")
    parser.add_argument("--workers", type=positive_int, default=os.cpu_count(),
                        help="parallel training processes on the CPU (default: all cores)")


def config(parser, presets, argv=None):
    """Parse flags, then fill every flag left unset (None) from the chosen preset.

    presets = {"quick": {...}, "default": {...}, "full": {...}}: one dict of sweep sizes each.
    QUICK=1 in the environment selects the quick preset too (used to run notebooks fast).
    """
    args = parser.parse_args(cli_argv() if argv is None else argv)
    if args.quick or os.environ.get("QUICK") == "1":
        args.preset = "quick"
    else:
        args.preset = "full" if args.full else "default"
    for key, value in presets[args.preset].items():
        if getattr(args, key, None) is None:
            setattr(args, key, value)
    try:
        args.device = str(pick_device(args.device))
    except ValueError as error:
        parser.error(f"argument --device: {error}")
    check_out(parser, args.out)
    for flag in ("n_train", "n_valid"):  # the flags of add_training_flags
        value = getattr(args, flag, None)
        if value is not None and value < 2:  # NMSE divides by a variance, standardising by a std
            refuse(parser, "--" + flag.replace("_", "-"), f"a variance needs at least two "
                   f"samples, got {value}", smallest=2)
    return args


def refuse(parser, flags, reason, smallest=None):
    """End a run before any work: one line naming the flag(s) and the reason, exit code 2.

    smallest: the smallest value of the (first) flag that would be accepted given the others,
    when there is one, so the user knows what to type instead; "--other VALUE" when the fix is
    to raise another flag (e.g. --d when --D is larger than it).
    """
    parser.error(f"argument {flags}: {reason}"
                 + ("" if smallest is None else f"; smallest accepted: {smallest}"))


def check_out(parser, out):
    """--out must be a folder we can create and write in (checked before any work)."""
    out = Path(out)
    existing = next(folder for folder in (out, *out.parents) if folder.exists())
    if not existing.is_dir():
        refuse(parser, "--out", f"{existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        refuse(parser, "--out", f"cannot write in {existing}")


def cli_argv():
    """sys.argv[1:] for a script; [] inside a Jupyter kernel, whose arguments are its own.

    The kernel is recognised by its launcher (python -m ipykernel_launcher -f ...), not by
    ipykernel being imported: a test process may import it without being a kernel."""
    in_kernel = Path(sys.argv[0]).stem == "ipykernel_launcher"
    return [] if in_kernel else sys.argv[1:]


# ----------------------------------------------------------------------------------------------
# Device and seeds
# ----------------------------------------------------------------------------------------------
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


def seed_everything(seed):
    """Seed Python, NumPy and torch (CPU and CUDA); the same seed gives the same numbers on CPU."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)  # also seeds every CUDA device


# ----------------------------------------------------------------------------------------------
# Metric and parameter counting
# ----------------------------------------------------------------------------------------------
def nmse(prediction, target):
    """Normalised MSE = MSE / Var(target) = 1 - R^2 (paper A, Appendix B.1).

    Raw MSE is not comparable across sequence lengths: Var(y) shrinks as T grows (see 01).
    """
    prediction, target = torch.as_tensor(prediction), torch.as_tensor(target)
    mse = torch.mean((prediction - target) ** 2)
    return float(mse / torch.var(target, unbiased=False))


def count_parameters(module):
    """Number of trainable scalars in a torch module."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


# ----------------------------------------------------------------------------------------------
# Attention logits: one convention for every file
# ----------------------------------------------------------------------------------------------
def attention_logits(scores, scale, cap=None):
    """The logits that enter the softmax, from raw scores (W_Q x)^T (W_K y).

    The one attention-scale convention of this repository: s = scale * score, where files 05
    and 06 use scale = 1/sqrt(head_dim) (the usual transformer scale) and file 02 uses paper A's
    beta of eq. 5 (1 by default). "Bounded logits" (paper B, Theorem 5.1; file 05) always means
    |s| <= B for these scaled logits; with cap = B they are squeezed to B tanh(s / B).
    """
    logits = scale * scores
    return logits if cap is None else cap * torch.tanh(logits / cap)       # |s| <= B


def attention_weights(scores, scale, cap=None, mask=None):
    """Softmax over the last axis of attention_logits(...); mask (True = not allowed) last."""
    logits = attention_logits(scores, scale, cap)
    if mask is not None:
        logits = logits.masked_fill(mask, -math.inf)
    return logits.softmax(dim=-1)


def t_quantile(df, level=0.975):
    """The Student-t quantile t_{level, df}, by bisection on the CDF integrated numerically."""
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)

    def cdf(x, pieces=2000):                                                # Simpson on [0, x]
        density = [math.exp(log_norm - (df + 1) / 2 * math.log1p((x * i / pieces) ** 2 / df))
                   for i in range(pieces + 1)]
        weights = [1 if i in (0, pieces) else 4 if i % 2 else 2 for i in range(pieces + 1)]
        return 0.5 + x / pieces / 3 * sum(w * f for w, f in zip(weights, density))

    low, high = 0.0, 1000.0
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if cdf(middle) < level else (low, middle)
    return (low + high) / 2


def by_seed(results, key, **match):
    """The `key` of every result whose fields equal `match`, in seed order (for paired seeds)."""
    rows = [r for r in results if all(r.get(k) == v for k, v in match.items())]
    return [r[key] for r in sorted(rows, key=lambda r: r["seed"])]


def seed_stats(values):
    """{"seeds", "min", "mean", "std"} of one configuration over seeds (sample std, n - 1;
    0 for a single seed)."""
    values = [float(v) for v in values]
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / max(1, len(values) - 1))
    return {"seeds": values, "min": min(values), "mean": mean, "std": std}


def t_interval(values):
    """(mean, low, high): the mean of n >= 2 paired differences and its 95% t-interval."""
    n = len(values)
    if n < 2:
        raise ValueError("a confidence interval needs at least two seeds")
    stats = seed_stats(values)
    half = t_quantile(n - 1) * stats["std"] / math.sqrt(n)
    return stats["mean"], stats["mean"] - half, stats["mean"] + half


# ----------------------------------------------------------------------------------------------
# Training
# ----------------------------------------------------------------------------------------------
class NonFiniteLoss(RuntimeError):
    """Raised when the loss becomes NaN or infinite; the message names the run."""


def warmup_cosine(step, steps, warmup_fraction=0.05):
    """Learning-rate factor: linear warm-up over the first 5% of steps, then cosine to zero."""
    warmup = max(1, int(warmup_fraction * steps))
    if step < warmup:
        return (step + 1) / warmup
    return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))


def train_regression(model, train, valid, *, steps, batch_size, lr, weight_decay=0.0,
                     seed=0, name="model", evaluate_every=0, keep_best=False):
    """Fit model(x) -> y with the MSE loss; return the held-out NMSE and the loss history.

    evaluate_every > 0 records the validation NMSE every that many steps ("history"); with
    keep_best the model ends with the weights of its best recorded checkpoint ("selection":
    "best_checkpoint", else "last"). The validation set is read for nothing else: training
    draws the same batches and takes the same steps either way.

    train, valid: tuples (x [n, ...], y [n]) already on the model's device.
    AdamW with a warm-up/cosine schedule; mini-batches drawn with replacement from a seeded CPU
    generator, all at once before the first step (the same indices as one draw per step, and no
    copy from the host per step). Non-finite data or a non-finite loss stop training with
    NonFiniteLoss naming the run, the step and the loss.
    """
    x_train, y_train = train
    for split, (x, y) in (("training", train), ("validation", valid)):
        if not (torch.isfinite(x).all() and torch.isfinite(y).all()):
            raise NonFiniteLoss(f"{name}: the {split} data hold NaN or infinite values "
                                f"(before step 0)")
    generator = torch.Generator(device="cpu").manual_seed(seed)
    batches = torch.randint(len(y_train), (steps, batch_size), generator=generator)
    batches = batches.to(y_train.device)                                    # [steps, batch]
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: warmup_cosine(s, steps))
    history, losses = [], LossLog(steps, y_train.device, name, lr)
    model.train()
    for step in range(steps):
        index = batches[step]
        loss = torch.mean((model(x_train[index]) - y_train[index]) ** 2)
        losses.record(step, loss)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        schedule.step()
        if evaluate_every and (step + 1) % evaluate_every == 0:
            history.append({"step": step + 1, "valid_nmse": evaluate_nmse(model, valid)})
            if keep_best and history[-1]["valid_nmse"] <= min(h["valid_nmse"] for h in history):
                best = {k: v.detach().clone() for k, v in model.state_dict().items()}
    last_valid_nmse = valid_nmse = evaluate_nmse(model, valid)
    if keep_best and history:
        model.load_state_dict(best)
        valid_nmse = evaluate_nmse(model, valid)
    return {"train_nmse": evaluate_nmse(model, train), "valid_nmse": valid_nmse,
            "last_valid_nmse": last_valid_nmse, "history": history,
            "selection": "best_checkpoint" if keep_best and history else "last"}


class LossLog:
    """The loss of every step, kept on the model's device and checked every `every` steps.

    Checking a loss needs its value on the host, which makes a GPU wait for the step to finish;
    one check per 100 steps instead of one per step keeps the GPU busy. The check finds the
    first non-finite loss, so the message names the exact step and value.
    """

    def __init__(self, steps, device, name, lr, every=100):
        self.losses = torch.zeros(steps, device=device)
        self.steps, self.name, self.lr, self.every, self.checked = steps, name, lr, every, 0

    def record(self, step, loss):
        self.losses[step] = loss.detach()
        if (step + 1) % self.every == 0 or step + 1 == self.steps:
            recent = self.losses[self.checked: step + 1]
            bad = (~torch.isfinite(recent)).nonzero()                      # one host sync
            if len(bad):
                first = self.checked + int(bad[0])
                raise NonFiniteLoss(diverged(self.name, float(self.losses[first]), first,
                                             self.lr))
            self.checked = step + 1


def diverged(name, loss, step, lr):
    """The message for a non-finite loss on finite data: what is known, and one likely cause."""
    return (f"{name}: loss became {loss} at step {step} of training on finite data "
            f"(peak learning rate {lr:g}); the optimisation diverged, a smaller --lr may help")


def numbered(train, item):
    """(index, train(run)) for item = (index, run): run_sweep's unit of work."""
    index, run = item
    return index, train(run)


def run_sweep(runs, workers, train, label):
    """Train every run with train(run); on the CPU in `workers` processes with one thread each,
    the costliest runs first (run["T"] * run["steps"]). Prints label(result) as each finishes
    and returns the results in the order of `runs`, however the workers happen to finish."""
    costliest_first = sorted(enumerate(runs), key=lambda item: -item[1]["T"] * item[1]["steps"])
    started, results = time.perf_counter(), {}

    def finished(index, result):
        results[index] = result
        progress(len(results), len(runs), label(result), started)

    if workers > 1 and runs[0]["device"] == "cpu":
        context = multiprocessing.get_context("fork")  # fork: works from notebooks too
        with context.Pool(workers, initializer=torch.set_num_threads, initargs=(1,)) as pool:
            for index, result in pool.imap_unordered(functools.partial(numbered, train),
                                                     costliest_first):
                finished(index, result)
    else:
        if workers > 1:
            print(f"on {runs[0]['device']} the runs go one after another in this process "
                  f"(--workers sets CPU processes)", flush=True)
        for item in costliest_first:
            finished(*numbered(train, item))
    return [results[index] for index in range(len(runs))]


def run_main(main, args):
    """(main(args), seconds). A non-finite loss, or a NaN/infinity among the results, ends the
    script with one line and exit 1, before anything is printed, plotted or written."""
    started = time.perf_counter()
    try:
        result = main(args)
    except NonFiniteLoss as error:
        sys.exit(f"stopped: {error}")
    bad = first_non_finite(result)
    if bad:
        sys.exit(f"stopped: the result {bad[0]} is {bad[1]}; nothing was written")
    return result, time.perf_counter() - started


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


@torch.no_grad()
def evaluate_nmse(model, data, batch_size=4096):
    """NMSE of model on (x, y), evaluated in chunks without gradients."""
    x, y = data
    was_training = model.training
    model.eval()
    prediction = torch.cat([model(x[i:i + batch_size]) for i in range(0, len(y), batch_size)])
    model.train(was_training)
    return nmse(prediction.cpu(), y.cpu())


# ----------------------------------------------------------------------------------------------
# Writing results and figures
# ----------------------------------------------------------------------------------------------
def save_results(stem, numbers, args, wall_time_s):
    """Write OUT/results/<stem>.json atomically (temporary file, then rename).

    Stores the numbers with the config that produced them, the device, torch's version and the
    wall time, so every figure and README number can be traced to a run. Returns the path.
    Strict JSON: a NaN or infinity anywhere raises ValueError naming its key (nothing written).
    """
    folder = Path(args.out) / "results"
    folder.mkdir(parents=True, exist_ok=True)
    payload = {
        "script": f"{stem}.py",
        "config": {k: _portable(v) for k, v in vars(args).items()},
        "device": args.device,
        "torch_version": torch.__version__,
        "wall_time_s": round(wall_time_s, 2),
        **numbers,
    }
    bad = first_non_finite(payload, stem)
    if bad:
        raise ValueError(f"{bad[0]} is {bad[1]}: refusing to write a non-finite number")
    path = folder / f"{stem}.json"
    with tempfile.NamedTemporaryFile("w", dir=folder, suffix=".tmp", delete=False) as handle:
        json.dump(payload, handle, indent=1, allow_nan=False)
    os.chmod(handle.name, 0o644)  # readable like any other file (temporary files are private)
    os.replace(handle.name, path)
    return path


def _portable(value):
    """A path inside the repository as a relative string (no machine-specific prefix)."""
    if not isinstance(value, Path):
        return value
    try:
        return str(value.resolve().relative_to(ROOT))
    except ValueError:
        return str(value)


def label_log_axis(axis, values, which="x"):
    """Ticks of a log axis at the given values, labelled plainly (8, 32, 128), no minor labels."""
    import matplotlib.ticker as ticker
    target = axis.xaxis if which == "x" else axis.yaxis
    target.set_major_locator(ticker.FixedLocator(values))
    target.set_major_formatter(ticker.FixedFormatter([f"{v:g}" for v in values]))
    target.set_minor_formatter(ticker.NullFormatter())


def save_figure(figure, name, args):
    """Save a matplotlib figure as OUT/figures/<name>.png atomically; returns the path."""
    folder = Path(args.out) / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    temporary = folder / f".{name}.tmp.png"
    figure.savefig(temporary, dpi=120, bbox_inches="tight")
    os.replace(temporary, path)
    return path


# ----------------------------------------------------------------------------------------------
# Progress
# ----------------------------------------------------------------------------------------------
def progress(done, total, text, started):
    """Print one line per finished config of a sweep: [3/10] T=32 h=2 ... (4.1 s)."""
    print(f"[{done}/{total}] {text}  ({time.perf_counter() - started:.1f} s)", flush=True)

"""Shared tiny helpers for the numbered concept files.

Only what several files need lives here; each concept's own code (the task, the model, a
construction) stays in its numbered file. Contents, in order of use:

    load_concept("01_retrieval_task")   import a numbered file (its name starts with a digit)
    Parser, positive_int, int_list, ... argparse with one-line errors and the common flags
    add_training_flags                  --seeds, --steps, --n-train, --n-valid, --workers
    add_preset_flags                    a flag for each documented preset key
    config(parser, presets, argv)       parse flags, fill unset ones from --quick/default/--full
    refuse(parser, flags, reason, ...)  the one-line, exit-2 answer of every pre-flight check
    cli_argv()                          the command-line arguments, or [] inside a notebook
    pick_device, seed_everything        "auto" -> CUDA when available; one seeding helper
    nmse, count_parameters              paper A's metric; parameter counting
    attention_logits, attention_weights the one attention-scale convention: where beta and B live
    Block                               a pre-LN block with H heads of dimension d (06 and 07)
    standardised_split                  (train, valid) with y standardised on the training part
    by_seed, seed_stats                 a configuration's seeds, min, mean and std (n - 1)
    t_interval, paired_difference       a paired difference: per_seed, mean, ci95, verdict
    fit                                 THE training loop: AdamW, warm-up/cosine, LossLog, step
    train_regression                    fit() on MSE mini-batches, held-out NMSE
    run_sweep                           independent training runs in CPU processes, costliest first
    Part, add_parts_flag, run_parts     a file's experiments; --parts runs only the named ones
    run_script                          a script's whole run: parts, printout, figures, JSON
    run_main                            main(args); a non-finite number ends it in one line
    output_suffix                       what a run's file names say about its flags
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
from typing import Callable, NamedTuple

import numpy as np
import scipy.stats
import torch
from torch import nn

ROOT = Path(__file__).resolve().parent
RUNS = ROOT / "runs"  # the default --out: git ignores it; `--out .` refreshes the committed files


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


def make_parser(description, full="the paper's scale (a GPU is recommended)"):
    """The parser every numbered file starts from, with the common flags already added; `full`
    says what --full runs (and where) in this file."""
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


def add_preset_flags(parser, presets, meanings):
    """A flag for every preset key in `meanings` ({"fixed_heads": "what it means", ...}): the
    key with dashes (--fixed-heads), its type read from the default preset's value (a list of
    whole numbers, a whole number or a number, each > 0), `meanings` as its help. Unset, it
    takes the preset's value (config)."""
    for key, meaning in meanings.items():
        value = presets["default"][key]
        kind = (int_list if all(isinstance(v, int) for v in value) else float_list) \
            if isinstance(value, list) else positive_int if isinstance(value, int) \
            else positive_float
        parser.add_argument("--" + key.replace("_", "-"), type=kind, help=meaning)


def config(parser, presets, argv=None, parts=None):
    """Parse flags, then fill every flag left unset (None) from the chosen preset.

    presets = {"quick": {...}, "default": {...}, "full": {...}}: one dict of sweep sizes each.
    QUICK=1 in the environment selects the quick preset too (used to run notebooks fast).
    parts: the file's PARTS when it has a --parts flag (add_parts_flag); args.parts becomes the
    list of parts to run, in the file's order. args.changed lists the flags whose value differs
    from the preset's (output_suffix names the files after them).
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
    if parts is not None:
        args.parts = chosen_parts(parser, parts, args.parts)
    args.changed = [action.dest for action in parser._actions
                    if action.dest not in NOT_IN_FILE_NAMES and action.option_strings
                    and getattr(args, action.dest, None) != presets[args.preset].get(
                        action.dest, action.default)]
    return args


# Flags that change where or how fast a run goes, not its numbers (or that name it otherwise).
NOT_IN_FILE_NAMES = {"help", "quick", "full", "device", "workers", "out", "parts", "data_dir"}


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


# ----------------------------------------------------------------------------------------------
# A pre-layer-norm transformer block (files 06 and 07)
# ----------------------------------------------------------------------------------------------
class Block(nn.Module):
    """Pre-LN block with n_heads heads of dimension head_dim: u <- u + MHA(LN(u)), then
    u <- u + MLP(LN(u)); logits scaled by 1/sqrt(head_dim). File 06 stacks it with a causal
    mask (AllocatedTransformer), file 07 without one (its vision transformer)."""

    def __init__(self, width, n_heads, head_dim):
        super().__init__()
        scale = 1 / math.sqrt(width)
        self.n_heads, self.head_dim = n_heads, head_dim
        self.W_Q = nn.Parameter(torch.randn(n_heads, head_dim, width) * scale)  # [H, d, E]
        self.W_K = nn.Parameter(torch.randn(n_heads, head_dim, width) * scale)
        self.W_V = nn.Parameter(torch.randn(n_heads, head_dim, width) * scale)
        self.W_O = nn.Linear(n_heads * head_dim, width, bias=False)
        self.norm_attention, self.norm_mlp = nn.LayerNorm(width), nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                 nn.Linear(4 * width, width))

    def attention(self, u, mask, last_only=False):
        """Multi-head attention: u [B, T, E], mask [T, T] (True = not allowed) or None
        -> [B, T, E]; with last_only, the last position's output alone, [B, 1, E]."""
        asking = u[:, -1:] if last_only else u                             # [B, T', E]
        q = torch.einsum("bte,hde->bhtd", asking, self.W_Q)                # queries [B, H, T', d]
        k = torch.einsum("bte,hde->bhtd", u, self.W_K)                     # keys    [B, H, T, d]
        v = torch.einsum("bte,hde->bhtd", u, self.W_V)                     # values  [B, H, T, d]
        if last_only and mask is not None:
            mask = mask[-1:]
        weights = attention_weights(q @ k.transpose(-1, -2),                # [B, H, T', T]
                                    1 / math.sqrt(self.head_dim), mask=mask)
        heads = weights @ v                                                # [B, H, T', d]
        return self.W_O(heads.transpose(1, 2).flatten(2))                 # concat, W_O

    def forward(self, u, mask, last_only=False):
        """u [B, T, E] -> [B, T, E], or [B, 1, E] with last_only (file 06's regression models
        read only the last position)."""
        normed = self.norm_attention(u)
        u = u[:, -1:] if last_only else u
        u = u + self.attention(normed, mask, last_only)
        return u + self.mlp(self.norm_mlp(u))


# ----------------------------------------------------------------------------------------------
# Statistics over seeds: one vocabulary for every file
# ----------------------------------------------------------------------------------------------
def standardised_split(x, y, n_train):
    """((x, y) train, (x, y) valid): the first n_train samples train; y is standardised with the
    training part's mean and (n - 1) std. NMSE is unchanged by an affine map of prediction and
    target, and a read-out no longer has to learn an offset first."""
    y = (y - y[:n_train].mean()) / y[:n_train].std()
    return (x[:n_train], y[:n_train]), (x[n_train:], y[n_train:])


def by_seed(results, key, **match):
    """The `key` of every result whose fields equal `match`, in seed order (for paired seeds)."""
    rows = [r for r in results if all(r.get(k) == v for k, v in match.items())]
    return [r[key] for r in sorted(rows, key=lambda r: r["seed"])]


def seed_stats(values):
    """{"seeds", "min", "mean", "std"} of one configuration over its seeds. The std is the
    sample std (divided by n - 1) everywhere in this repository; 0 for a single seed."""
    values = [float(v) for v in values]
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / max(1, len(values) - 1))
    return {"seeds": values, "min": min(values), "mean": mean, "std": std}


def t_quantile(df, level=0.975):
    """The Student-t quantile t_{level, df} (scipy.stats)."""
    return float(scipy.stats.t.ppf(level, df))


def t_interval(values):
    """(mean, low, high): the mean of n >= 2 paired differences and its 95% t-interval."""
    n = len(values)
    if n < 2:
        raise ValueError("a confidence interval needs at least two seeds")
    stats = seed_stats(values)
    half = t_quantile(n - 1) * stats["std"] / math.sqrt(n)
    return stats["mean"], stats["mean"] - half, stats["mean"] + half


def paired_difference(per_seed, below="below 0", above="above 0"):
    """{"per_seed", "mean", "ci95": [low, high], "verdict"} of paired per-seed differences.

    The verdict follows the interval, not the mean: `below` when the whole 95% t-interval is
    below 0, `above` when it is above 0, else "no clear difference"."""
    mean, low, high = t_interval(per_seed)
    verdict = below if high < 0 else above if low > 0 else "no clear difference"
    return {"per_seed": [float(v) for v in per_seed], "mean": mean, "ci95": [low, high],
            "verdict": verdict}


def describe_difference(name, entry):
    """'name: +0.012 [-0.003, +0.027] (verdict)' for a paired_difference entry."""
    low, high = entry["ci95"]
    return f"{name}: {entry['mean']:+.3f} [{low:+.3f}, {high:+.3f}] ({entry['verdict']})"


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


def fit(model, loss_at, *, steps, lr, weight_decay=0.0, name="model", after_step=None):
    """THE training loop of every file: AdamW with the warm-up/cosine schedule, `steps` steps.

    loss_at(step) -> the scalar loss of that step's mini-batch (each caller draws its own
    batches); after_step(step), when given, runs after each optimiser step (e.g. to evaluate a
    checkpoint). Every loss is kept on the model's device and checked by LossLog: a NaN or
    infinity stops training with NonFiniteLoss naming the run, the step and the loss.
    Returns the losses, [steps], on the model's device."""
    device = next(model.parameters()).device
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: warmup_cosine(s, steps))
    losses = LossLog(steps, device, name, lr)
    model.train()
    for step in range(steps):
        loss = loss_at(step)
        losses.record(step, loss)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        schedule.step()
        if after_step is not None:
            after_step(step)
    return losses.losses


def train_regression(model, train, valid, *, steps, batch_size, lr, weight_decay=0.0,
                     seed=0, name="model", evaluate_every=0, keep_best=False):
    """Fit model(x) -> y with the MSE loss (fit()); return the held-out NMSE and its history.

    evaluate_every > 0 records the validation NMSE every that many steps ("history"); with
    keep_best the model ends with the weights of its best recorded checkpoint ("selection":
    "best_checkpoint", else "last"). The validation set is read for nothing else: training
    draws the same batches and takes the same steps either way.

    train, valid: tuples (x [n, ...], y [n]) already on the model's device.
    Mini-batches are drawn with replacement from a seeded CPU generator, all at once before the
    first step (the same indices as one draw per step, and no copy from the host per step).
    Non-finite data stop training before step 0 with NonFiniteLoss naming the run.
    """
    x_train, y_train = train
    for split, (x, y) in (("training", train), ("validation", valid)):
        if not (torch.isfinite(x).all() and torch.isfinite(y).all()):
            raise NonFiniteLoss(f"{name}: the {split} data hold NaN or infinite values "
                                f"(before step 0)")
    generator = torch.Generator(device="cpu").manual_seed(seed)
    batches = torch.randint(len(y_train), (steps, batch_size), generator=generator)
    batches = batches.to(y_train.device)                                    # [steps, batch]
    history, best = [], {}

    def mse_at(step):
        index = batches[step]
        return torch.mean((model(x_train[index]) - y_train[index]) ** 2)

    def checkpoint(step):
        if evaluate_every and (step + 1) % evaluate_every == 0:
            history.append({"step": step + 1, "valid_nmse": evaluate_nmse(model, valid)})
            if keep_best and history[-1]["valid_nmse"] <= min(h["valid_nmse"] for h in history):
                best.update({k: v.detach().clone() for k, v in model.state_dict().items()})

    fit(model, mse_at, steps=steps, lr=lr, weight_decay=weight_decay, name=name,
        after_step=checkpoint)
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


def run_sweep(runs, workers, train, label, cost):
    """Train every run with train(run); on the CPU in `workers` processes with one thread each,
    the costliest runs first by cost(run) (a guess at its seconds, only for scheduling). Prints
    label(result) as each finishes and returns the results in the order of `runs`, however
    the workers happen to finish."""
    costliest_first = sorted(enumerate(runs), key=lambda item: -cost(item[1]))
    started, results = time.perf_counter(), {}

    def finished(index, result):
        results[index] = result
        progress(len(results), len(runs), label(result), started)

    if workers > 1 and runs[0]["device"] == "cpu":
        torch.optim.AdamW([torch.zeros(1, requires_grad=True)])  # its lazy imports, once, here:
        context = multiprocessing.get_context("fork")  # the forked workers inherit them
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


# ----------------------------------------------------------------------------------------------
# A file's parts, and a script's whole run
# ----------------------------------------------------------------------------------------------
class Part(NamedTuple):
    """One experiment of a numbered file, defined where its prose is.

    run(args, result) -> {JSON key: value}: its numbers (result holds the earlier parts' keys,
    for a part that reads them; a key starting with "_", such as trained models, is passed to
    the later parts but not written); report(result, args) prints them; figures: {figure name:
    plot(result, args) -> a matplotlib figure, or None to draw nothing; a figure that several
    parts name is drawn once, after all of them, from whatever ran}; needs: the parts whose
    results it reads (--parts runs them too); by_default: False for a part that runs only
    when --parts names it (07's text part, a default of its own)."""
    run: Callable
    report: Callable
    figures: dict
    needs: tuple = ()
    by_default: bool = True


def default_parts(parts):
    """The parts a run without --parts runs, in the file's order."""
    return [name for name, part in parts.items() if part.by_default]


def add_parts_flag(parser, parts):
    """--parts a,c: rerun only the named parts of a file (default: all, in the file's order)."""
    parser.add_argument("--parts", help=f"only these parts, comma-separated: "
                                        f"{','.join(parts)} (default: "
                                        f"{','.join(default_parts(parts))})")


def chosen_parts(parser, parts, text):
    """The parts --parts names, with the parts they need, in the file's order; one line and
    exit 2 for an unknown or empty name."""
    if text is None:
        return default_parts(parts)
    asked = [name.strip() for name in text.split(",")]
    unknown = [name for name in asked if name not in parts]
    if unknown:
        refuse(parser, "--parts", f"unknown part {unknown[0]!r}; this file's parts are "
               f"{', '.join(parts)}")
    for name in list(asked):
        asked += parts[name].needs
    return [name for name in parts if name in asked]


def run_parts(parts, args):
    """main(args) of a file with parts: every part in args.parts, in order; one dict (without
    the "_" keys the parts passed to each other)."""
    result = {}
    for name in getattr(args, "parts", None) or default_parts(parts):
        result.update(parts[name].run(args, result))
    return {key: value for key, value in result.items() if not key.startswith("_")}


def run_script(stem, main, parts, args, named=(), suffix=""):
    """A script's whole run: main(args), then each part's printout and figures, then the JSON.

    Its wall_time_s is this whole run, timed the same way in every file: from here (the flags
    are parsed) to the JSON's write, printout and figures included. File names carry
    output_suffix(args, named) after `suffix`, so a partial or non-default run never lands on
    the file of the default run."""
    started = time.perf_counter()
    print(f"device: {args.device}   preset: {args.preset}", flush=True)
    result = run_main(main, args)
    suffix += output_suffix(args, named, parts)
    figures = {}
    for name in getattr(args, "parts", None) or default_parts(parts):
        parts[name].report(result, args)
        figures.update(parts[name].figures)                # a shared figure: drawn once
    for figure_name, plot in figures.items():
        figure = plot(result, args)
        if figure is not None:
            save_figure(figure, figure_name + suffix, args)
    path = save_results(stem + suffix, result, args, time.perf_counter() - started)
    print(f"wrote {path} in {time.perf_counter() - started:.1f} s")
    return result


def output_suffix(args, named=(), parts=None):
    """"" for a default run; else what differs, e.g. "_steps100_T8-32", "_full", "_parts_b".

    named: flags the file already names in its own suffix (02's _D3, _E32, ...)."""
    def text(value):
        if isinstance(value, (list, tuple)):
            return "-".join(text(v) for v in value)
        return Path(value).stem if isinstance(value, Path) else f"{value:g}" \
            if isinstance(value, float) else str(value)

    words = [f"{flag}{text(getattr(args, flag))}" for flag in getattr(args, "changed", [])
             if flag not in named and not isinstance(getattr(args, flag), bool)]
    if args.preset != "default":
        words.append(args.preset)
    asked = getattr(args, "parts", None)
    if parts is not None and asked and list(asked) != default_parts(parts):
        words.append("parts_" + "_".join(asked))
    return "".join(f"_{word}" for word in words)


def run_main(main, args):
    """main(args). A non-finite loss, or a NaN/infinity among the results, ends the script
    with one line and exit 1, before anything is printed, plotted or written."""
    try:
        result = main(args)
    except NonFiniteLoss as error:
        sys.exit(f"stopped: {error}")
    bad = first_non_finite(result)
    if bad:
        sys.exit(f"stopped: the result {bad[0]} is {bad[1]}; nothing was written")
    return result


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

    Stores the numbers with the config that produced them, the device, torch's and Python's
    versions and the wall time of the whole run (run_script), so every figure and README number
    can be traced to a run. Returns the path.
    Strict JSON: a NaN or infinity anywhere raises ValueError naming its key (nothing written).
    """
    folder = Path(args.out) / "results"
    folder.mkdir(parents=True, exist_ok=True)
    payload = {
        "script": f"{stem}.py",
        "config": {k: _portable(v) for k, v in vars(args).items()},
        "device": args.device,
        "torch_version": torch.__version__,
        "python_version": sys.version.split()[0],   # 06's corpus ships with Python
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

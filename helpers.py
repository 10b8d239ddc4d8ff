"""The course's vocabulary: what a lesson's idea uses, one convention each, read top to bottom.

A lesson's own task, model, figure and printout stay in its numbered file, which imports from
the repository only this file, harness.py (its command line, results file and sweeps, which no
idea depends on) and earlier lessons through load_concept, so it runs copied out with them.

    load_concept("01_retrieval_task")   import a numbered file (its name starts with a digit)
    seed_everything                     the one seeding helper
    nmse, count_parameters              paper A's metric; parameter counting
    attention_logits, attention_weights the one attention-scale convention: where beta and B live
    standardised_split                  (train, valid), y standardised on the training part
    by_seed, seed_stats                 a configuration's seeds, min, mean and std (n - 1)
    t_interval, paired_difference       a paired difference: per_seed, mean, ci95, verdict
    describe_difference                 one printed line of it
    fit, NonFiniteLoss                  THE training loop: AdamW, warm-up/cosine, a loss check
    train_regression, train_seeded      fit() on MSE mini-batches, held-out NMSE; one seeded run
    evaluate_nmse                       a model's NMSE on (x, y), in chunks
"""

import importlib.util
import math
import random
import sys
from pathlib import Path

import numpy as np
import scipy.special
import torch

ROOT = Path(__file__).resolve().parent


# ==== Importing an earlier concept ============================================================
def load_concept(name):
    """Import a numbered file such as "01_retrieval_task", a name Python's `import` refuses."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, script_path(name))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # registered first so dataclasses and pickling can find it
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]   # no half-made module left behind
        raise
    return module


def script_path(name):
    """A lesson's file, or else a going-further study's in further/ ("02c_seed_count")."""
    lesson = ROOT / f"{name}.py"
    return lesson if lesson.exists() else ROOT / "further" / f"{name}.py"


# ==== Seeds ===================================================================================
def seed_everything(seed):
    """Seed Python, NumPy and torch; the same seed gives the same numbers on CPU."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)  # also seeds every CUDA device


# ==== Metric and parameter counting ===========================================================
def nmse(prediction, target):
    """Normalised MSE = MSE / Var(target) = 1 - R^2 (paper A, Appendix B.1); raw MSE is not
    comparable across sequence lengths, as Var(y) shrinks as T grows (see 01)."""
    prediction, target = torch.as_tensor(prediction), torch.as_tensor(target)
    mse = torch.mean((prediction - target) ** 2)
    return float(mse / torch.var(target, unbiased=False))


def count_parameters(module):
    """Number of trainable scalars."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


# ==== Attention logits: one convention for every file =========================================
def attention_logits(scores, scale, cap=None):
    """The logits s = scale * score that enter the softmax, from raw scores (W_Q x)^T (W_K y).

    The one attention-scale convention: lessons 05-07 use the usual transformer scale
    1/sqrt(head_dim), lessons 02-04 paper A's beta of eq. 5 (1 by default). "Bounded logits"
    (paper B, Theorem 5.1; lesson 05) always means |s| <= B for these scaled logits; cap = B
    squeezes them to B tanh(s / B)."""
    logits = scale * scores
    return logits if cap is None else cap * torch.tanh(logits / cap)


def attention_weights(scores, scale, cap=None, mask=None):
    """Softmax over the last axis of attention_logits(...), mask (True = not allowed) last."""
    logits = attention_logits(scores, scale, cap)
    if mask is not None:
        logits = logits.masked_fill(mask, -math.inf)
    return logits.softmax(dim=-1)


# ==== Statistics over seeds: one vocabulary for every file ====================================
def standardised_split(x, y, n_train):
    """The first n_train samples train; y is standardised by the training part's mean and
    (n - 1) std: NMSE is unchanged by an affine map of prediction and target, and a read-out no
    longer has to learn an offset first."""
    y = (y - y[:n_train].mean()) / y[:n_train].std()
    return (x[:n_train], y[:n_train]), (x[n_train:], y[n_train:])


def by_seed(results, key, **match):
    """The `key` of every result matching `match`, in seed order (for paired seeds)."""
    rows = [r for r in results if all(r.get(k) == v for k, v in match.items())]
    return [r[key] for r in sorted(rows, key=lambda r: r["seed"])]


def seed_stats(values):
    """Statistics of one configuration over its seeds; the std is the sample std (divided by
    n - 1) everywhere in this repository, 0 for a single seed."""
    values = [float(v) for v in values]
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / max(1, len(values) - 1))
    return {"seeds": values, "min": min(values), "mean": mean, "std": std}


def t_quantile(df, level=0.975):
    """Student's t quantile t_{level, df}; scipy.stats.t.ppf gives the same, slower to import."""
    return float(scipy.special.stdtrit(df, level))


def t_interval(values):
    """The mean of paired differences and its 95% t-interval."""
    n = len(values)
    if n < 2:
        raise ValueError("a confidence interval needs at least two seeds")
    stats = seed_stats(values)
    half = t_quantile(n - 1) * stats["std"] / math.sqrt(n)
    return stats["mean"], stats["mean"] - half, stats["mean"] + half


def paired_difference(per_seed, below="below 0", above="above 0"):
    """Paired per-seed differences summarised; the verdict follows the interval, not the mean:
    `below` if the whole 95% t-interval is below 0, `above` if above 0, else no clear difference."""
    mean, low, high = t_interval(per_seed)
    verdict = below if high < 0 else above if low > 0 else "no clear difference"
    return {"per_seed": [float(v) for v in per_seed], "mean": mean, "ci95": [low, high],
            "verdict": verdict}


def describe_difference(name, entry):
    """'name: +0.012 [-0.003, +0.027] (verdict)' for a paired_difference entry."""
    low, high = entry["ci95"]
    return f"{name}: {entry['mean']:+.3f} [{low:+.3f}, {high:+.3f}] ({entry['verdict']})"


# ==== Training ================================================================================
class NonFiniteLoss(RuntimeError):
    """The loss became NaN or infinite, or the data hold such a value; the message names the
    run."""


def warmup_cosine(step, steps, warmup_fraction=0.05):
    """Learning-rate factor: a linear warm-up, then a cosine down to zero."""
    warmup = max(1, int(warmup_fraction * steps))
    if step < warmup:
        return (step + 1) / warmup
    return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))


# A loss check reads the loss on the host, making a GPU wait for the step: hence one per 100 steps.
CHECK_EVERY = 100


def fit(model, loss_at, *, steps, lr, weight_decay=0.0, name="model", after_step=None):
    """THE training loop of every file: AdamW with the warm-up/cosine schedule, `steps` steps.

    loss_at(step) -> that step's mini-batch loss (each caller draws its own batches);
    after_step(step) runs after each optimiser step (e.g. to evaluate a checkpoint). The losses
    stay on the model's device, checked every CHECK_EVERY steps: a NaN or infinity stops training
    with NonFiniteLoss naming the run, the step and the loss. Returns the losses, [steps]."""
    device = next(model.parameters()).device
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: warmup_cosine(s, steps))
    losses = torch.zeros(steps, device=device)
    model.train()
    for step in range(steps):
        loss = loss_at(step)
        losses[step] = loss.detach()
        if (step + 1) % CHECK_EVERY == 0 or step + 1 == steps:
            check_losses(losses, step, name, lr)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        schedule.step()
        if after_step is not None:
            after_step(step)
    return losses


def check_losses(losses, step, name, lr):
    """NonFiniteLoss at the first NaN or infinity among the losses since the last check."""
    first = step - step % CHECK_EVERY
    bad = (~torch.isfinite(losses[first: step + 1])).nonzero()              # one host sync
    if len(bad):
        at = first + int(bad[0])
        raise NonFiniteLoss(f"{name}: loss became {float(losses[at])} at step {at} of training "
                            f"on finite data (peak learning rate {lr:g}); the optimisation "
                            f"diverged, a smaller learning rate may help")


def train_regression(model, train, valid, *, steps, batch_size, lr, weight_decay=0.0,
                     seed=0, name="model", after_step=None):
    """Fit model(x) -> y by fit() on MSE mini-batches; return the training and validation NMSE.

    train, valid: (x [n, ...], y [n]) on the model's device; after_step: fit()'s (a study's
    checkpoints may read validation there). This loop reads validation only at the end: it never
    steers training."""
    x_train, y_train = train
    check_finite_data(name, train, valid)
    batches = draw_batches(len(y_train), steps, batch_size, seed, y_train.device)  # [steps, B]

    def mse_at(step):
        index = batches[step]
        return torch.mean((model(x_train[index]) - y_train[index]) ** 2)

    fit(model, mse_at, steps=steps, lr=lr, weight_decay=weight_decay, name=name,
        after_step=after_step)
    return {"train_nmse": evaluate_nmse(model, train), "valid_nmse": evaluate_nmse(model, valid)}


def train_seeded(run, build, train, valid, **options):
    """One seeded run of a lesson: build() on run["device"], fitted by train_regression.
    train and valid come split and standardised, on the CPU. Returns (model, valid on the
    device, train_regression's dict)."""
    train, valid = [tuple(t.to(run["device"]) for t in part) for part in (train, valid)]
    seed_everything(run["seed"])
    model = build().to(run["device"])
    return model, valid, train_regression(model, train, valid, seed=run["seed"], **options)


def draw_batches(n, steps, batch_size, seed, device):
    """Every mini-batch's indices, [steps, batch_size], drawn at once with replacement: the
    same indices as one draw per step, without a copy from the host per step."""
    generator = torch.Generator(device="cpu").manual_seed(seed)
    return torch.randint(n, (steps, batch_size), generator=generator).to(device)


def check_finite_data(name, train, valid):
    """NonFiniteLoss naming the run and the split when the data hold a NaN or an infinity."""
    for split, (x, y) in (("training", train), ("validation", valid)):
        if not (torch.isfinite(x).all() and torch.isfinite(y).all()):
            raise NonFiniteLoss(f"{name}: the {split} data hold NaN or infinite values "
                                f"(before step 0)")


@torch.no_grad()
def evaluate_nmse(model, data, batch_size=4096):
    """NMSE of model on (x, y), evaluated in chunks."""
    x, y = data
    was_training = model.training
    model.eval()
    prediction = torch.cat([model(x[i:i + batch_size]) for i in range(0, len(y), batch_size)])
    model.train(was_training)
    return nmse(prediction.cpu(), y.cpu())

"""What several concepts share, and a student should read: one convention each.

Only what several files need lives here; each concept's own code (the task, the model, a
construction) stays in its numbered file, and the command line and the files of a run live in
plumbing.py (nothing there teaches). Contents, in order of use:

    load_concept("01_retrieval_task")   import a numbered file (its name starts with a digit)
    seed_everything                     the one seeding helper
    nmse, count_parameters              paper A's metric; parameter counting
    attention_logits, attention_weights the one attention-scale convention: where beta and B live
    truncate_qk                         a head's score W_Q^T W_K cut to rank r (studies 05b and 06a)
    Block, causal_mask                  a pre-LN block of H heads of dimension d (lessons 06-07)
    standardised_split                  (train, valid) with y standardised on the training part
    by_seed, seed_stats                 a configuration's seeds, min, mean and std (n - 1)
    expected_minimum                    the minimum over k of n seeds, averaged over subsets
    t_interval, paired_difference       a paired difference: per_seed, mean, ci95, verdict
    fit                                 THE training loop: AdamW, warm-up/cosine, LossLog, step
    train_regression                    fit() on MSE mini-batches, held-out NMSE
    Ensemble, train_ensemble            S seeds of one model trained as one (torch.func.vmap)
    label_log_axis                      plain log-axis ticks
"""

import copy
import importlib.util
import math
import random
import sys
from pathlib import Path

import numpy as np
import scipy.special
import torch
from torch import nn

ROOT = Path(__file__).resolve().parent


# ----------------------------------------------------------------------------------------------
# Importing an earlier concept
# ----------------------------------------------------------------------------------------------
def load_concept(name):
    """Import a numbered file such as "01_retrieval_task" (a name Python's `import` refuses):
    a lesson at the top of the repository, or a study in further/."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, script_path(name))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # registered first so dataclasses and pickling can find it
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]   # a failed import leaves no half-made module behind
        raise
    return module


def script_path(name):
    """The file of a lesson ("02_multihead_model") or of a going-further study ("02c_seed_count")."""
    lesson = ROOT / f"{name}.py"
    return lesson if lesson.exists() else ROOT / "further" / f"{name}.py"


# ----------------------------------------------------------------------------------------------
# Seeds
# ----------------------------------------------------------------------------------------------
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

    The one attention-scale convention of this repository: s = scale * score, where lessons
    05-07 use scale = 1/sqrt(head_dim) (the usual transformer scale) and lessons 02-04 use paper
    A's beta of eq. 5 (1 by default). "Bounded logits" (paper B, Theorem 5.1; lesson 05) always
    means |s| <= B for these scaled logits; with cap = B they are squeezed to B tanh(s / B).
    """
    logits = scale * scores
    return logits if cap is None else cap * torch.tanh(logits / cap)       # |s| <= B


def attention_weights(scores, scale, cap=None, mask=None, bias=None):
    """Softmax over the last axis of attention_logits(...); a `bias` added to the logits
    (06d's learned bias per offset), then mask (True = not allowed) last."""
    logits = attention_logits(scores, scale, cap)
    if bias is not None:
        logits = logits + bias
    if mask is not None:
        logits = logits.masked_fill(mask, -math.inf)
    return logits.softmax(dim=-1)


def truncate_qk(W_Q, W_K, rank):
    """(W_Q', W_K') of head dimension `rank` with W_Q'^T W_K' the best rank-r approximation of
    W_Q^T W_K (its SVD cut to r; study 05b explains it; study 06a applies it by layer).
    W_Q, W_K [d, p] -> [r, p], [r, p]."""
    U, S, Vh = torch.linalg.svd(W_Q.T @ W_K)                                # [p, p] coupling
    root = S[:rank].sqrt()
    return root[:, None] * U[:, :rank].T, root[:, None] * Vh[:rank]         # [r, p], [r, p]


# ----------------------------------------------------------------------------------------------
# The transformer block that lessons 06-07 and their studies stack
# ----------------------------------------------------------------------------------------------
class Block(nn.Module):
    """Pre-LN block: n_heads heads of dimension head_dim, logits scaled by 1/sqrt(head_dim)."""

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

    def queries_keys(self, asking, u):
        """asking [B, T', E], u [B, T, E] -> q [B, H, T', d], k [B, H, T, d]"""
        q = torch.einsum("bte,hde->bhtd", asking, self.W_Q)
        k = torch.einsum("bte,hde->bhtd", u, self.W_K)
        return q, k

    def attention(self, u, mask, last_only=False):
        """u [B, T, E], mask [T, T] (True: not allowed) or None -> [B, T' = T or 1, E]"""
        asking = u[:, -1:] if last_only else u                             # [B, T', E]
        q, k = self.queries_keys(asking, u)
        v = torch.einsum("bte,hde->bhtd", u, self.W_V)                     # [B, H, T, d]
        if last_only:
            mask = mask[-1:]
        weights = attention_weights(q @ k.transpose(-1, -2),               # [B, H, T', T]
                                    1 / math.sqrt(self.head_dim), mask=mask)
        heads = weights @ v                                                # [B, H, T', d]
        return self.W_O(heads.transpose(1, 2).flatten(2))                 # concat, W_O

    def forward(self, u, mask, last_only=False):
        normed = self.norm_attention(u)
        u = u[:, -1:] if last_only else u
        u = u + self.attention(normed, mask, last_only)
        return u + self.mlp(self.norm_mlp(u))


def causal_mask(seq_len):
    """[T, T], True where t may not look at s: s > t."""
    return torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1)


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


def expected_minimum(values, k):
    """{"mean", "std", "lowest", "highest"} of the minimum over k seeds drawn without
    replacement from the n seeds `values`, over all C(n, k) subsets alike.

    Sorted ascending x_(1) <= ... <= x_(n), the i-th value is a subset's minimum when the subset
    holds it and k - 1 of the n - i larger ones: P(min = x_(i)) = C(n - i, k - 1) / C(n, k)."""
    ordered, n = sorted(float(v) for v in values), len(values)
    if not 1 <= k <= n:
        raise ValueError(f"expected_minimum: k must be between 1 and {n} seeds, got {k}")
    chance = [math.comb(n - i, k - 1) / math.comb(n, k) for i in range(1, n + 1)]  # sums to 1
    mean = sum(p * x for p, x in zip(chance, ordered))
    second_moment = sum(p * x * x for p, x in zip(chance, ordered))
    return {"mean": mean, "std": math.sqrt(max(0.0, second_moment - mean ** 2)),
            "lowest": ordered[0], "highest": ordered[n - k]}   # the k largest: its minimum


def t_quantile(df, level=0.975):
    """The Student-t quantile t_{level, df}: the inverse of Student's t distribution function
    (scipy.special.stdtrit; scipy.stats.t.ppf gives the same and takes longer to import)."""
    return float(scipy.special.stdtrit(df, level))


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


def fit_slope(x, y):
    """Least-squares slope of log10(y) against log10(x): the exponent of a power law y ~ x^a."""
    log_x = torch.tensor(x, dtype=torch.float64).log10()
    log_y = torch.tensor(y, dtype=torch.float64).log10()
    centred = log_x - log_x.mean()
    return float((centred * (log_y - log_y.mean())).sum() / (centred ** 2).sum())


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
    first step (draw_batches). Non-finite data stop training before step 0 with NonFiniteLoss
    naming the run.
    """
    x_train, y_train = train
    check_finite_data(name, train, valid)
    batches = draw_batches(len(y_train), steps, batch_size, seed, y_train.device)  # [steps, B]
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


def draw_batches(n, steps, batch_size, seed, device):
    """The indices of every mini-batch of one run, [steps, batch_size], drawn with replacement
    from a CPU generator seeded by `seed` (the same indices as one draw per step, and no copy
    from the host per step)."""
    generator = torch.Generator(device="cpu").manual_seed(seed)
    return torch.randint(n, (steps, batch_size), generator=generator).to(device)


def check_finite_data(name, train, valid):
    """NonFiniteLoss naming the run and the split when the data hold a NaN or an infinity."""
    for split, (x, y) in (("training", train), ("validation", valid)):
        if not (torch.isfinite(x).all() and torch.isfinite(y).all()):
            raise NonFiniteLoss(f"{name}: the {split} data hold NaN or infinite values "
                                f"(before step 0)")


class Ensemble(torch.nn.Module):
    """S models of one architecture trained as one (torch.func): each parameter stacked on a
    new first axis [S, ...], the forward pass vmapped over it.

    Why it is the same as training them apart: the loss is the SUM of the members' losses, so
    each member's slice of a gradient is its own loss's gradient; AdamW and its weight decay
    act element by element, so each slice takes the step it would take alone. Only the order
    of floating-point sums differs. It pays where a step is mostly fixed cost per operation,
    which S members share: on a CPU for the smallest models only (02e measures it)."""

    def __init__(self, models):
        super().__init__()
        stacked, buffers = torch.func.stack_module_state(models)
        if buffers:
            raise ValueError("Ensemble: models with buffers are not supported")
        self.names = list(stacked)
        self.weights = torch.nn.ParameterList(
            [torch.nn.Parameter(stacked[name]) for name in self.names])     # each [S, ...]
        self.template = (copy.deepcopy(models[0]).to("meta"),)  # a tuple: not a submodule

    def forward(self, x):
        """x [S, B, ...] (a batch per member) -> [S, B, ...]."""
        def one(weights, x_member):
            parameters = dict(zip(self.names, weights))
            return torch.func.functional_call(self.template[0], parameters, (x_member,))
        return torch.func.vmap(one)(tuple(self.weights), x)

    def member(self, i):
        """The state dict of member i, for a model of the original class."""
        return {name: w[i].detach().clone() for name, w in zip(self.names, self.weights)}


def train_ensemble(models, seeds, train, valid, *, steps, batch_size, lr, weight_decay=0.0,
                   names=None, evaluate_every=0, keep_best=False):
    """train_regression for S models at once, model i with the batches of seeds[i], on the same
    data: one fit() of their Ensemble on the sum of their MSE losses. Each model ends with its
    trained weights (its best checkpoint's with keep_best). Returns one train_regression result
    per model, each with its "losses" [steps] as well."""
    names = names or [f"model {i}" for i in range(len(models))]
    check_finite_data(names[0], train, valid)
    x_train, y_train = train
    device = y_train.device
    batches = torch.stack([draw_batches(len(y_train), steps, batch_size, seed, device)
                           for seed in seeds], dim=1)                       # [steps, S, batch]
    ensemble = Ensemble(models).to(device)
    losses = torch.zeros(steps, len(models), device=device)               # each member's loss
    histories = [[] for _ in models]
    best = [None] * len(models)

    def mse_at(step):
        index = batches[step]                                               # [S, batch]
        members = torch.mean((ensemble(x_train[index]) - y_train[index]) ** 2, dim=1)  # [S]
        losses[step] = members.detach()
        return members.sum()

    def checkpoint(step):
        if evaluate_every and (step + 1) % evaluate_every == 0:
            for i, score in enumerate(evaluate_members(ensemble, valid)):
                histories[i].append({"step": step + 1, "valid_nmse": score})
                if keep_best and score <= min(h["valid_nmse"] for h in histories[i]):
                    best[i] = ensemble.member(i)

    fit(ensemble, mse_at, steps=steps, lr=lr, weight_decay=weight_decay,
        name=" / ".join(names), after_step=checkpoint)
    results = []
    last_valid = evaluate_members(ensemble, valid)
    for i, model in enumerate(models):
        selected = bool(keep_best and histories[i])                         # a best checkpoint
        model.load_state_dict(best[i] if selected else ensemble.member(i))
        results.append({"train_nmse": evaluate_nmse(model, train),
                        "valid_nmse": evaluate_nmse(model, valid) if selected else last_valid[i],
                        "last_valid_nmse": last_valid[i], "history": histories[i],
                        "selection": "best_checkpoint" if selected else "last",
                        "losses": losses[:, i]})
    return results


@torch.no_grad()
def evaluate_members(ensemble, data, batch_size=4096):
    """The NMSE of each member of an Ensemble on the same (x, y): a list of S floats."""
    x, y = data
    size = len(ensemble.weights[0])
    was_training = ensemble.training
    ensemble.eval()
    chunks = [x[i:i + batch_size] for i in range(0, len(y), batch_size)]
    prediction = torch.cat([ensemble(chunk.expand(size, *chunk.shape)) for chunk in chunks],
                           dim=1)                                           # [S, n]
    ensemble.train(was_training)
    return [nmse(p.cpu(), y.cpu()) for p in prediction]


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


@torch.no_grad()
def evaluate_nmse(model, data, batch_size=4096):
    """NMSE of model on (x, y), evaluated in chunks without gradients."""
    x, y = data
    was_training = model.training
    model.eval()
    prediction = torch.cat([model(x[i:i + batch_size]) for i in range(0, len(y), batch_size)])
    model.train(was_training)
    return nmse(prediction.cpu(), y.cpu())


def label_log_axis(axis, values, which="x"):
    """Ticks of a log axis at the given values, labelled plainly (8, 32, 128), no minor labels."""
    import matplotlib.ticker as ticker
    target = axis.xaxis if which == "x" else axis.yaxis
    target.set_major_locator(ticker.FixedLocator(values))
    target.set_major_formatter(ticker.FixedFormatter([f"{v:g}" for v in values]))
    target.set_minor_formatter(ticker.NullFormatter())

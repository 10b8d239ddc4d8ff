# %% [markdown]
# # 06b · Paper B's own task: a 4-gram on white noise at a fixed budget (a study of 06)
#
# Paper B's reviewers report (arXiv 2510.03784; the paper's body is not in our sources) that its
# best head count on "a 4-gram task on white noise" was 8 heads where its Eq. (3) predicted 32
# (its Fig. 2). Where does the lowest error fall on our reconstruction, and does it move with
# the budget, as an Eq. (3)-type trade-off would? It deepens study 06g with paper B's own
# task, beside a hand-built reference.
# `python further/06b_ngram.py` (50 s on 2 cores; the notebook replays the committed runs
# `results/06b_ngram.json`, that default run, and
# `results/06b_ngram_full.json`, three budgets).

# %%
"""06b · Paper B's 4-gram on white noise: the head count at fixed budgets, beside a reference."""
import math
import sys
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch
from torch import nn

# the shared files from the repository root (the script's command) or from notebooks/ (its notebook)
sys.path[:0] = [str(Path.cwd()), str(Path.cwd().parent)]
import helpers
import harness
import plumbing
from harness import Setting, int_list, positive_int

allocation = helpers.load_concept("06_allocation")  # its pre-LN Block


# %% [markdown]
# ## Settings
#
# Each row's default, `--quick` (seconds, for the tests) and `--full` values side by side
# (`...`: as the default); each row is a flag. `replay` draws a committed run again from its
# JSON instead of training (the notebook draws the committed runs this way).

# %%
SETTINGS = {
    # name: Setting(default, --quick, --full, type, what it sets)
    "ngram_budgets": Setting([32], [8], [16, 32, 64], int_list,
                             "a: attention budgets H d (powers of 2), H = 1, 2, 4 ... budget"),
    "ngram_T": Setting(32, 8, 32, positive_int, "a: sequence length (at least 4)"),
    "ngram_width": Setting(32, 16, 32, positive_int, "a: model width E"),
    "ngram_seeds": Setting(2, 2, 5, positive_int, "a: paired seeds (at least 2)"),
    "ngram_steps": Setting(600, 40, 2000, positive_int, "a: training steps per run"),
    "replay": plumbing.REPLAY,
}
PARTS = {"a": ()}  # the study is one part

# the notebook draws the committed run: this study's models at the default, with 06a's and 06c's
NOTEBOOK_ARGS = "--replay ../results/06b_ngram.json"
DEFAULT_RUN = "06b_ngram.json"   # the default run the notebook draws
FULL_RUN = "06b_ngram_full.json"            # the --full run: three budgets, 5 seeds

NGRAM_LAGS = 4  # y_t reads x_t, x_{t-1}, x_{t-2}, x_{t-3}, a 4-gram
NGRAM_DIM = 4          # p: the white noise's dimension
NGRAM_TASK_SEED = 2024  # the fixed A_j (the same task in every run)
NGRAM_SHARPNESS = 2.0  # the nonlinear target is tanh(2 z)
NGRAM_BATCH = 32       # sequences per step
NGRAM_LR = 3e-2        # AdamW's peak learning rate (3e-3 and 1e-2 learn the lags far slower)
NGRAM_VALID = 1000     # held-out sequences
NGRAM_VALID_SEED = 99_999  # their seed, the same for every run
NGRAM_TASKS = ("linear", "tanh")
SMALL_HEAD_DIMS = (1, 2)   # the right side's head dimensions, compared across budgets

# %% [markdown]
# ## f. Paper B's own task: a 4-gram on white noise at a fixed budget
#
# **The paper's experiment** [summary, reviewers]. Paper B's headline synthetic task is "a 4-gram
# task on white noise" (its Fig. 2): at a fixed budget $H d$ the best configuration had **8
# heads**, where its Eq. (3) predicted **32**, as its reviewers report it (reviewer 4; the
# paper's body is not in our sources). Its budget, sequence length, dimensions and training are
# not in our sources, nor is Eq. (3) itself.
#
# **Our reconstruction** [inferred]. White noise $x_t \sim \mathcal N(0, I_p)$, $p = 4$, and
#
# $$y_t = \sum_{j=0}^{3} A_j\, x_{t-j} \quad\text{(linear)}, \qquad
#   y_t = \tanh\Big(2 \sum_{j=0}^{3} A_j\, x_{t-j}\Big) \quad\text{(a smooth nonlinear } F),$$
#
# with fixed random $4 \times 4$ matrices $A_j$ (scaled so that each coordinate of the sum has
# variance 1), predicted at every position $t \ge 3$ (where all four tokens exist; earlier positions
# are not scored). The model: the input map and learned absolute positions, one causal
# `Block` of lesson 06 with $H$ heads of dimension $d = \text{budget}/H$ (a residual around the attention
# and the MLP, which the nonlinear $F$ needs), and a linear read-out at every position. Fresh white
# noise at every step, the same batches for every $H$ of a seed; NMSE on a fixed held-out set.

# %%
def ngram_matrices(dim=NGRAM_DIM, lags=NGRAM_LAGS, seed=NGRAM_TASK_SEED):
    """The fixed A_j, [lags, p, p], scaled so that each coordinate of sum_j A_j x_{t-j} has
    variance 1 for white noise."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(lags, dim, dim, generator=generator) / math.sqrt(dim * lags)


def ngram_target(x, matrices, task):
    """x [n, T, p] -> y [n, T, p]: sum_j A_j x_{t-j} (zero before the start), or tanh(2 .)."""
    y = torch.zeros_like(x)
    for lag, matrix in enumerate(matrices):
        y[:, lag:] += x[:, :x.shape[1] - lag] @ matrix.T                    # A_j x_{t-j}
    return y if task == "linear" else torch.tanh(NGRAM_SHARPNESS * y)


class NGramModel(nn.Module):
    """x [B, T, p] -> y_hat [B, T, p]: the input map and learned positions, one causal Block
    with n_heads heads of dimension head_dim, a linear read-out at every position."""

    def __init__(self, n_heads, head_dim, width, seq_len, dim=NGRAM_DIM):
        super().__init__()
        self.embed = nn.Linear(dim, width)
        self.position = nn.Parameter(torch.randn(seq_len, width) * 0.02)
        self.block = allocation.Block(width, n_heads, head_dim)
        self.norm = nn.LayerNorm(width)
        self.out = nn.Linear(width, dim)
        self.register_buffer("mask", allocation.causal_mask(seq_len), persistent=False)

    def forward(self, x):
        u = self.embed(x) + self.position[:x.shape[1]]                      # [B, T, E]
        return self.out(self.norm(self.block(u, self.mask)))                # [B, T, p]


def ngram_nmse(prediction, y):
    """NMSE over the scored positions t >= 3 (all four tokens exist) and coordinates."""
    return helpers.nmse(prediction[:, NGRAM_LAGS - 1:], y[:, NGRAM_LAGS - 1:])


def train_ngram(run):
    """Part a: one (task, budget, H, seed) model on fresh white noise each step."""
    started = time.perf_counter()
    matrices = ngram_matrices()
    generator = torch.Generator().manual_seed(run["seed"])       # the batches of this seed
    x_valid = torch.randn(NGRAM_VALID, run["T"], NGRAM_DIM,
                          generator=torch.Generator().manual_seed(NGRAM_VALID_SEED))
    y_valid = ngram_target(x_valid, matrices, run["task"])
    helpers.seed_everything(run["seed"])
    model = NGramModel(run["H"], run["budget"] // run["H"], run["width"], run["T"])

    def loss_at(step):
        x = torch.randn(NGRAM_BATCH, run["T"], NGRAM_DIM, generator=generator)
        y = ngram_target(x, matrices, run["task"])
        return torch.mean((model(x) - y)[:, NGRAM_LAGS - 1:] ** 2)

    helpers.fit(model, loss_at, steps=run["steps"], lr=NGRAM_LR, name=run["name"])
    model.eval()
    with torch.no_grad():
        valid_nmse = ngram_nmse(model(x_valid), y_valid)
    return {**run, "valid_nmse": valid_nmse, "seconds": time.perf_counter() - started}


# %% [markdown]
# **The hand-built reference** [training-free]. The residual already carries $x_t$; each of the
# lags $j = 1, 2, 3$ must be fetched by attention. *Exact positional attention*: a head puts all
# its weight on position $t - j$ (the limit of a score $\cos(\omega(s - t + j))$ with two
# coordinates of position and a growing scale) and carries $\min(d, p)$ coordinates of
# $x_{t-j}$. With $3\lceil p/d \rceil \le H$ heads and $d \ge 2$ every lag arrives whole, and the
# read-out ($\sum_j A_j x_{t-j}$, or $F$ of it) is exact: **NMSE 0** (the tests build it inside
# `NGramModel` with hand-set weights). That threshold is $H = 3$ for $d \ge 4$; our grid of
# powers of two jumps from $H = 2$ to $4$, so $H = 4$ is its first point past it. With $d = 1$
# the score is a rank-1 product $a_t b_s$, and as its scale grows a head attends to the largest
# $b_s$ among $s \le t$ (if $a_t > 0$) or the smallest (if $a_t < 0$). Lag 1 is possible:
# $a_t = (-1)^{t+1}$, $b_s = (-1)^s s$ picks $s = t - 1$ at every $t$. Lags $j \ge 2$ are not:
# $b_{t-j}$, the extreme of $b_0 \dots b_t$, is above (or below) $b_{t-j+1}$, so at $t + 1$ the
# key $t - j + 1$ must be the extreme of the other kind; then $b_{t-j+2}$, inside both windows
# when $j \ge 2$, lies strictly between the two and can be neither at $t + 2$. So no single
# $d = 1$ head, in the hard limit of a large scale, picks $t - j$ at every position for
# $j \ge 2$: lags 2 and 3 do not arrive exactly through one such head (combinations of soft
# heads are not covered by this argument), and the reference is not computed there (`None`).
# With fewer heads than lags, a head averages lags with weights $w \ge 0$;
# for the linear task the best $H$ such heads and a linear read-out explain
# $\max_{W \ge 0} \operatorname{tr}(P_W G)$ of the lags' variance, $G_{jk} = \langle A_j, A_k
# \rangle_F$ and $P_W$ the projection onto the span of the heads' weight vectors (found by a
# search over $W$). That is what *positional* averages read *linearly* can do; the trained block
# (layer norm before its attention, an MLP after it) is not held to it, and we print how far it
# gets below. So the reference is exact on a **plateau**: at budgets 16 to 64 every power of
# two $H \ge 4$ with $d \ge 2$ can be exact, $H \le 2$ cannot, nor can $d = 1$ by single hard
# heads. An Eq. (3)-type trade-off ($H^\star \propto \text{budget}^{b/(a+b)}$) predicts a best
# $H$ that grows with the budget. Per seed we report the $H$ with the lowest error.

# %%
@harness.cached
def ngram_reference(budget, n_heads):
    """The hand-built reference's NMSE on the linear task (see above): 0 when the heads can
    carry every lag exactly, None for d = 1 (no single hard head picks lag 2 or 3), else the
    best H lag-averaging heads with a linear read-out (a search, so computed once per budget
    and H)."""
    matrices = ngram_matrices()
    head_dim = budget // n_heads
    if head_dim == 1:
        return None
    lagged = matrices[1:].flatten(1).double()                               # [3, p*p]
    gram = lagged @ lagged.T                                                # G_jk
    total = float((matrices.double() ** 2).sum())                           # Var(y), all lags
    if n_heads >= (NGRAM_LAGS - 1) * math.ceil(NGRAM_DIM / head_dim):
        return 0.0
    if head_dim < NGRAM_DIM:
        return None                                     # partial lags: not computed
    explained = lag_variance_explained(gram.numpy(), best_lag_weight_vectors(gram.numpy(),
                                                                             n_heads))
    return (total - float((matrices[0].double() ** 2).sum()) - explained) / total


def task_reference(task, budget, n_heads):
    """The reference on either task: the linear one's NMSE (above); on the tanh target, 0 where
    every lag arrives exactly (F itself is then the read-out), else None (not computed)."""
    linear = ngram_reference(budget, n_heads)
    return linear if task == "linear" or linear == 0.0 else None


def lag_variance_explained(gram, weights):
    """tr(P_W G) for the heads' lag weights W [H, 3]: the lags' variance their averages and a
    linear read-out explain."""
    projection = weights.T @ np.linalg.pinv(weights @ weights.T) @ weights
    return float(np.trace(projection @ gram))


def best_lag_weight_vectors(gram, n_heads, starts=8):
    """The nonnegative lag weights W [H, 3] (one row per head) that maximise tr(P_W G): a
    seeded search (L-BFGS-B) from several starts, each row exp(theta) > 0."""
    import scipy.optimize

    def lost(theta):
        return -lag_variance_explained(gram, np.exp(theta.reshape(n_heads, -1)))

    generator = np.random.default_rng(0)
    best = min((scipy.optimize.minimize(lost, generator.normal(size=n_heads * len(gram)) * 2,
                                        method="L-BFGS-B") for _ in range(starts)),
               key=lambda found: found.fun)
    return np.exp(best.x.reshape(n_heads, -1))

# %% [markdown]
# Every (task, budget, H, seed), paired by seed across H; per seed the H of the lowest error, and
# the lowest mean's H against its neighbours H / 2 and 2 H by paired intervals on log10 NMSE.

# %%
def run_ngram(args):
    """Part a: every (task, budget, H, seed), paired by seed across H; the reference; the
    lowest H per seed."""
    runs = [dict(task=task, budget=budget, H=H, T=args.ngram_T, width=args.ngram_width,
                 steps=args.ngram_steps, seed=args.seed + s, device=args.device,
                 name=f"a: {task} budget={budget} H={H} d={budget // H}")
            for task in NGRAM_TASKS for budget in args.ngram_budgets
            for H in ngram_heads(budget) for s in range(args.ngram_seeds)]
    results = plumbing.run_sweep(runs, args.workers, train_ngram,
                                 lambda r: f"{r['name']:<30} seed={r['seed']}  NMSE "
                                           f"{r['valid_nmse']:.3f}",
                                 lambda run: run["T"] * run["steps"])
    found = {}
    for task in NGRAM_TASKS:
        found[task] = {}
        for budget in args.ngram_budgets:
            heads = ngram_heads(budget)
            trained = {str(H): helpers.seed_stats(helpers.by_seed(
                results, "valid_nmse", task=task, budget=budget, H=H)) for H in heads}
            found[task][str(budget)] = {
                "trained": trained,
                "lowest_H_per_seed": [min(heads, key=lambda H: trained[str(H)]["seeds"][s])
                                      for s in range(args.ngram_seeds)],
                **against_neighbours(trained, heads),
                "reference": {str(H): task_reference(task, budget, H) for H in heads}}
            found[task][str(budget)]["reference_over_trained"] = reference_over_trained(
                found[task][str(budget)])
    same_head_dim = {task: {str(d): across_budgets(found[task], d) for d in SMALL_HEAD_DIMS}
                     for task in NGRAM_TASKS}
    return {"ngram": {"T": args.ngram_T, "p": NGRAM_DIM, "lags": NGRAM_LAGS,
                      "width": args.ngram_width, "steps": args.ngram_steps, "tasks": found,
                      "same_head_dim": same_head_dim, "paper": {"best_H": 8, "eq_3_H": 32}}}


def against_neighbours(trained, heads):
    """The H of the lowest mean NMSE, and per seed log10 NMSE(that H) - log10 NMSE(H') for its
    neighbours H' = H / 2 and 2 H, as paired differences (below 0: the lowest mean's H wins)."""
    best = min(heads, key=lambda H: trained[str(H)]["mean"])
    return {"lowest_mean_H": best, "log10_lowest_minus_neighbour": {
        str(other): helpers.paired_difference(
            [math.log10(a) - math.log10(b) for a, b in zip(trained[str(best)]["seeds"],
                                                           trained[str(other)]["seeds"])],
            below=f"H={best} lower", above=f"H={other} lower")
        for other in (best // 2, best * 2) if other in heads}}


def reference_over_trained(entry):
    """{H: the reference's NMSE over the trained mean NMSE} where the reference is above 0 (the
    lag-averaging heads, too few for the lags)."""
    return {H: entry["reference"][H] / stats["mean"] for H, stats in entry["trained"].items()
            if entry["reference"][H]}


def across_budgets(by_budget, head_dim):
    """At one head dimension d: the fewest heads (the smallest budget / d) against the most (the
    largest budget / d), as the ratio of mean NMSE and per seed log10 NMSE(fewest) - log10
    NMSE(most) (above 0: more heads of the same size do better); None with one budget. Seeds
    pair across budgets: each budget's runs use the same seeds, hence the same batches."""
    budgets = sorted(by_budget, key=int)
    if len(budgets) < 2:
        return None
    few, many = (str(int(budget) // head_dim) for budget in (budgets[0], budgets[-1]))
    fewest, most = by_budget[budgets[0]]["trained"][few], by_budget[budgets[-1]]["trained"][many]
    return {"H": [int(few), int(many)], "budgets": [int(budgets[0]), int(budgets[-1])],
            "ratio": fewest["mean"] / most["mean"],
            "log10_fewest_minus_most": helpers.paired_difference(
                [math.log10(a) - math.log10(b) for a, b in zip(fewest["seeds"], most["seeds"])],
                below=f"H={few} lower", above=f"H={many} lower")}


def recomputed(ngram):
    """What a replay adds to a committed run that lacks it (the committed files predate these
    keys): per task and budget the reference over the trained mean, and per task the d = 1 and
    d = 2 comparisons across budgets (None with one budget)."""
    return {"reference_over_trained": {task: {budget: reference_over_trained(entry)
                                              for budget, entry in by_budget.items()}
                                       for task, by_budget in ngram["tasks"].items()},
            "same_head_dim": {task: {str(d): across_budgets(by_budget, d)
                                     for d in SMALL_HEAD_DIMS}
                              for task, by_budget in ngram["tasks"].items()}}


def ngram_heads(budget):
    """H = 1, 2, 4, ... up to the budget (d = budget / H down to 1)."""
    return [2 ** k for k in range(int(math.log2(budget)) + 1)]


def plot_ngram(result, args):
    """Part a: held-out NMSE against H, one panel per task, one line per budget (mean over
    seeds, each seed a dot); the reference's non-zero values as open squares."""
    ngram = result["ngram"]
    figure, axes = plt.subplots(1, len(ngram["tasks"]), figsize=(5.6 * len(ngram["tasks"]), 3.9),
                                squeeze=False)
    for axis, (task, by_budget) in zip(axes[0], ngram["tasks"].items()):
        for index, (budget, entry) in enumerate(by_budget.items()):
            heads = [int(H) for H in entry["trained"]]
            axis.loglog(heads, [entry["trained"][str(H)]["mean"] for H in heads], "o-",
                        color=f"C{index}", label=f"budget H d = {budget}")
            for H in heads:
                seeds = entry["trained"][str(H)]["seeds"]
                axis.loglog([H] * len(seeds), seeds, ".", color=f"C{index}", ms=3)
            inexact = [(H, entry["reference"][str(H)]) for H in heads
                       if entry["reference"][str(H)]]
            if inexact:
                axis.loglog(*zip(*inexact), "s", mfc="none", color=f"C{index}", ms=8,
                            label=f"reference, {budget} (0 elsewhere, none at d = 1)")
        harness.label_log_axis(axis, sorted({int(H) for e in by_budget.values()
                                             for H in e["trained"]}))
        axis.set_xlabel("heads H (head dimension = budget / H)")
        axis.set_ylabel("held-out NMSE")
        axis.set_title(f"4-gram on white noise, {task} target, T = {ngram['T']}")
        axis.legend(fontsize=6)
    figure.tight_layout()
    return figure


def report_ngram(result, args):
    """Part a: per task and budget, the mean NMSE per H [the reference], the lowest H per
    seed, and the paper's observation beside ours."""
    ngram = result["ngram"]
    for task, by_budget in ngram["tasks"].items():
        for budget, entry in by_budget.items():
            seeds = len(entry["trained"]["1"]["seeds"])          # H = 1 is in every sweep
            print(f"f. 4-gram, {task}, budget H d = {budget}, T = {ngram['T']}: held-out NMSE "
                  f"mean over {seeds} seed(s) [hand-built reference]")
            cells = []
            for H, stats in entry["trained"].items():
                reference = entry["reference"][H]
                shown = "none" if reference is None else f"{reference:.1e}"
                cells.append(f"H={H}: {stats['mean']:.1e} [{shown}]")
            print("   " + "  ".join(cells))
            print(f"   lowest H per seed: {entry['lowest_H_per_seed']}")
            for other, pair in entry["log10_lowest_minus_neighbour"].items():
                print("   " + helpers.describe_difference(
                    f"log10 NMSE, H = {entry['lowest_mean_H']} minus H = {other} (95% t, paired "
                    f"seeds)", pair))
            ratios = reference_over_trained(entry)
            if ratios:
                print("   the reference over the trained mean: " + ", ".join(
                    f"H={H}: x{ratio:.1f}" for H, ratio in ratios.items()))
        for head_dim in SMALL_HEAD_DIMS:
            found = across_budgets(by_budget, head_dim)
            if found:
                (few, many), (small, large) = found["H"], found["budgets"]
                print(f"   {task}, d = {head_dim}: H = {few} (budget {small}) -> H = {many} "
                      f"(budget {large}): mean NMSE x{found['ratio']:.1f} lower; " +
                      helpers.describe_difference(f"log10 NMSE, H = {few} minus H = {many}",
                                                  found["log10_fewest_minus_most"]))
    print(f"   [paper B, Fig. 2 (reviewers): best H = {ngram['paper']['best_H']}, Eq. (3) "
          f"predicted H = {ngram['paper']['eq_3_H']}; its budget, T and task details are not "
          f"in our sources]")



# %% [markdown]
# ## Running it
#
# The script (or the notebook) starts its run here: it parses the flags, refuses a run that
# cannot finish in one line naming the flag, and starts the clock; with `--replay FILE` it reads
# a committed run's numbers instead of training (the notebook's way), and writes only what it
# recomputes from them, as a file of its own (`results/06b_ngram_analysis_of_<file>.json`).
# Imported, it runs nothing.

# %%
def config(argv=None):
    """Parse the flags (the table above) and refuse a run that cannot finish: one line naming
    the flag, exit code 2."""
    args = plumbing.config(SETTINGS, argv, __doc__.split("\n")[0], PARTS,
                           full="three budgets, 5 seeds, 2,000 steps: 37 minutes",
                           notebook_args=NOTEBOOK_ARGS)
    checks = [  # (flag, accepted, why not, the smallest value accepted or None)
        ("--ngram-budgets", all(b >= 2 and b & (b - 1) == 0 for b in args.ngram_budgets),
         f"each a power of 2 (H = 1, 2, 4 ... budget), got {args.ngram_budgets}", 2),
        ("--ngram-T", args.ngram_T >= NGRAM_LAGS, f"a 4-gram is scored from position "
         f"{NGRAM_LAGS} on", NGRAM_LAGS),
        ("--ngram-seeds", args.ngram_seeds >= 2, "paired differences need at least two seeds",
         2)]
    plumbing.refuse_unaccepted(checks)
    return args


if __name__ == "__main__":
    args = config()
    run = plumbing.Run("06b_ngram", args, PARTS)

# %%
if __name__ == "__main__" and "a" in args.parts:
    if args.replay:
        ngram = {"ngram": plumbing.replay(args.replay)["ngram"]}
        run.record(recomputed(ngram["ngram"]))      # the replay's analysis: a file of its own
    else:
        ngram = run.record(run_ngram(args))
    run.figure(plot_ngram(ngram, args), "06_ngram")
    report_ngram(ngram, args)

# %% [markdown]
# **What we saw** (the committed default run: budget 32, 2 seeds, 600 steps, T = 32). Held-out
# NMSE, mean over seeds [the reference], H = 1 … 32: linear 2.8e-1 [2.8e-1], 4.2e-2 [6.7e-2],
# **7.7e-4** [0], 1.6e-3 [0], 4.8e-3 [0], 2.1e-2 [none, d = 1]; tanh 3.4e-1, 1.1e-1, **2.0e-3**,
# 5.2e-3, 1.5e-2, 5.3e-2. H = 4 is the lowest for both seeds on both tasks; H = 4 beats H = 2
# (log10 NMSE −1.744 [−2.367, −1.120] and −1.747 [−2.065, −1.429]) but not clearly H = 8 (−0.309
# [−1.011, +0.393] and −0.411 [−1.482, +0.660]). Paper B's best H = 8 (Eq. (3): 32), as its
# reviewers report it (the paper's body is not in our sources), stands beside it, not like for
# like. Whether the minimum moves with the budget needs more than one budget; the reference run
# below has three and does not settle it.

# %% [markdown]
# ## The reference run
#
# `python further/06b_ngram.py --full` (84 min 4 s, with other work sharing the cores and
# pausing it: its time is not its cost;
# `results/06b_ngram_full.json`;
# budgets 16, 32, 64, H = 1 … budget, 5 paired seeds, 2,000 steps, T = 32), held-out NMSE, mean over
# seeds:
#
# | task, budget | H = 1 | 2 | 4 | 8 | 16 | 32 | 64 | lowest H per seed |
# |---|---|---|---|---|---|---|---|---|
# | linear, 16 | 9.5e-2 | 2.1e-2 | **1.5e-4** | 5.4e-4 | 6.8e-3 (d = 1) | | | 4, 4, 4, 4, 4 |
# | linear, 32 | 1.1e-1 | 1.1e-2 | **1.4e-4** | 1.6e-4 | 3.3e-4 | 1.4e-3 (d = 1) | | 4, 4, 4, 4, 4 |
# | linear, 64 | 1.0e-1 | 1.2e-2 | **1.4e-4** | 1.5e-4 | 1.8e-4 | 3.3e-4 | 6.6e-4 (d = 1) | 4, 8, 4, 4, 4 |
# | tanh, 16 | 1.9e-1 | 4.9e-2 | **3.3e-4** | 2.3e-3 | 3.8e-2 (d = 1) | | | 4, 4, 4, 4, 4 |
# | tanh, 32 | 2.0e-1 | 4.6e-2 | **3.1e-4** | 3.3e-4 | 1.2e-3 | 7.7e-3 (d = 1) | | 4, 8, 8, 4, 4 |
# | tanh, 64 | 1.9e-1 | 4.2e-2 | **3.2e-4** | 4.0e-4 | 4.0e-4 | 9.7e-4 | 2.5e-3 (d = 1) | 4, 4, 4, 4, 4 |
# | reference (linear) | 0.28 | 0.067 | 0 | 0 | 0 (budgets 32, 64); none (16, d = 1) | 0 (64); none (32, d = 1) | none (d = 1) | |
#
# "none": the JSON's `null`, where d = 1 and no single hard head picks lag 2 or 3 (above), and
# the lag-averaging value is not computed either.
#
# - the error is U-shaped in H at every budget, and its lowest mean is at H = 4 on both
#   tasks and all three budgets; H = 4 is the lowest for 27 of the 30 (task, budget, seed) runs
#   (H = 8 for the other 3). That the minimum does not move with the budget is not shown: the
#   budgets span only 4×, and at budgets 32 and 64 H = 4 and 8 differ by 5–23 % in the mean and
#   are not separated per seed (log10 NMSE, H = 4 minus H = 8, 95 % t: linear −0.040 [−0.085,
#   +0.006] and −0.032 [−0.074, +0.010], tanh −0.015 [−0.138, +0.108] and −0.084 [−0.203,
#   +0.036]), so a one-step move to H = 8 is not excluded; only at budget 16 does H = 4 beat
#   H = 8 (d = 2) on both tasks (−0.560 [−0.646, −0.475] and −0.780 [−1.035, −0.525]). This run
#   therefore neither supports nor counts against an Eq. (3)-type optimum that grows with the
#   budget. The left side is consistent with too few heads for the 3 lags (H = 3 not run; the
#   trained H ≤ 2 beat the lag-averaging reference 2.7–6.3× on the linear task): every H = 4
#   beats H = 2 by a paired interval, H = 2 stays 75–148× and H = 1 576–756× above H = 4 at every
#   budget, and H = 4 is the first grid point past the reference's threshold of H = 3. The right
#   side comes with a small head dimension (the d = 1 point is the highest right of H = 4) but
#   not with it alone: at d = 1, 4× the heads (H = 16 at budget 16 → H = 64 at budget 64) lower
#   the error 10× on the linear task (log10 +1.010 [+0.797, +1.222]) and 15× on tanh (+1.188
#   [+0.944, +1.432]); at d = 2 (H = 8 → 32) 1.6× (+0.221 [+0.090, +0.353]) and 2.4× in the
#   mean (+0.313 [−0.014, +0.640], not separated; these four ratios and intervals are the full
#   run's `same_head_dim`). The
#   trained single and double heads end 2.7–6.3× below the lag-averaging reference on the
#   linear task (H = 1 2.7–3.0×, H = 2 3.2–6.3×; the same file's `reference_over_trained`),
#   which holds positional averages read linearly; we think the layer norm (which gives each
#   position's value its own direction) and the MLP, which knows t, let them do better, and did
#   not test it. Paper B's observation, best H = 8 against Eq. (3)'s 32, is reported by the
#   paper's reviewers (the paper's body is not in our sources); it stands beside ours (lowest
#   mean at H = 4) without a like-for-like comparison: its budget, T, p and training are not in
#   our sources.
#
# Drawn again by `python further/06b_ngram.py --replay results/06b_ngram_full.json`
# (its committed figure is `figures/06b_ngram_full.png`) and, in the notebook, by the
# cell below.

# %%
if __name__ == "__main__" and args.replay and Path(args.replay).name == DEFAULT_RUN:
    reference = plumbing.replay(Path(args.replay).parent / FULL_RUN)
    run.figure(plot_ngram(reference, args), "06b_ngram_full")
    report_ngram(reference, args)

# %% [markdown]
# ## Summary beside the paper
#
# | claim | paper B | ours (`--full`: budgets 16, 32, 64, 5 seeds) | where we differ |
# |---|---|---|---|
# | the best H at a fixed budget on a 4-gram on white noise (Fig. 2, reviewers) | best H = 8; Eq. (3) predicted 32 (as its reviewers report it) | lowest mean at H = 4 at every budget and on both tasks; H = 4 the lowest for 27 of 30 runs | our task, budget, T and training are ours: not like for like |
# | an Eq. (3)-type optimum grows with the budget | H* ∝ budget^{b/(a+b)} (Eq. (3) not in our sources) | the lowest mean stays at H = 4 from budget 16 to 64 (4×), but at 32 and 64 H = 4 and 8 are not separated (e.g. linear, 64: −0.032 [−0.074, +0.010]) | a one-step move is not excluded: neither for nor against |
#
# The error is U-shaped in H: on the left H = 1 and 2 stay 75–756× above H = 4, consistent with
# too few heads for the lags (H = 3 not run), and on the right a small head dimension (the d = 1
# point is the highest right of H = 4), though at d = 1 more heads still lower the error 10–15×.
# The default run (one budget, 2 seeds) agrees at budget 32.

# %% [markdown]
# ## Commands and files
#
#     python further/06b_ngram.py               # budget 32, 2 seeds, 600 steps (default): 50 s on a 2-core CPU
#     python further/06b_ngram.py --full        # budgets 16, 32, 64, 5 seeds, 2,000 steps: 84 min 4 s here
#     python further/06b_ngram.py --quick       # seconds; what the tests use
#     python further/06b_ngram.py --replay results/06b_ngram_full.json   # the full run, drawn again
#     python further/06b_ngram.py --replay results/06b_ngram.json        # the default run, drawn again
#
# The full run's committed numbers are `results/06b_ngram_full.json` and its figure
# `figures/06b_ngram_full.png`. Output (under runs/, which git ignores; `--out .`
# refreshes the committed files): `results/06b_ngram.json` with `ngram`;
# `figures/06_ngram.png`. A run stores per budget `reference_over_trained` and, beside `tasks`,
# `same_head_dim` (the d = 1 and d = 2 comparisons across budgets; null with one budget), both
# committed runs among them. A replay computes both again from `trained` and `reference`, for a
# file that predates them, and writes them to a file of its own,
# `results/06b_ngram_analysis_of_<file>.json` (under runs/ unless `--out .`), leaving the
# replayed file as its run wrote it.

# %% [markdown]
# ## The run's file
#
# Every number above, with the flags that produced them and the run's wall time (a replay
# writes only what it recomputed, beside the committed file, which stays as its run wrote it).

# %%
if __name__ == "__main__":
    run.finish_analysis() if args.replay else run.finish()

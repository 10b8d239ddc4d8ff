# %% [markdown]
# # 03 · What the heads cost: the upper and the lower bound
#
# Paper A (arXiv 2510.06662), Theorem 2 (1)–(2) with their proofs (Appendix A.2) and Corollary 1
# (A.4): with $h = D$ heads a D-retrieval task costs $C/\varepsilon^\gamma$ parameters whatever
# $T$, with $s < D$ heads at least $1/\varepsilon^{k}$ with $k$ linear in $T$. This file builds the
# upper bound's layer by hand and checks its error bound at every $T$, shows where the lower
# bound's exponent says nothing, and does Corollary 1's arithmetic; nothing trains.
# `python 03_bounds.py` (1.8 s on 2 cores).

# %%
"""03 · Upper and lower bounds on the parameter cost of a D-retrieval task (paper A, Thm 2)."""
import math
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import torch

sys.path.append(str(Path.cwd().parent))  # lets the notebook in notebooks/ find helpers.py
import helpers
import plumbing
from plumbing import Setting, float_list, int_list, positive_int

task = helpers.load_concept("01_retrieval_task")
model_file = helpers.load_concept("02_multihead_model")

# %% [markdown]
# ## Settings
#
# Every size of this file, one row each: its default, `--quick` (seconds, for the tests) and
# `--full` values (`...`: as the default). Each row is a flag (`construction_T` is
# `--construction-T`). Part c, Fig. 1b trained, is the study `further/03a_params_vs_error.py`;
# parts a, b and d keep their letters, so `--parts` and the file names it gives stay the same.

# %%
SETTINGS = {
    # name: Setting(default, --quick, --full, type, what it sets)
    "construction_T": Setting([8, 16, 32, 64, 128, 256, 512, 1024], [8, 64], ..., int_list,
                              "a: sequence lengths of the hand-built model"),
    "betas": Setting([1, 2, 5, 10, 20, 50, 100, 200, 500, 1000], [1, 10, 100],
                     [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000], float_list,
                     "a: softmax scales beta"),
    "construction_samples": Setting(500, 50, 2000, positive_int, "a: random sequences per T"),
}
PARTS = {"a": (), "b": (), "d": ()}  # this file's parts, each with the parts it needs
MAX_CONSTRUCTION_T = 4096  # the longest sequence of the hand-built model


# %% [markdown]
# ## a. The upper bound, built by hand (Theorem 2(1), proof in A.2.1)
#
# A retrieval task that meets the theorem's assumptions: tokens $x(t) \in [0,1]^d$, scores
# $f_i(x) = \|x - c_i\|^2 / d \in [0, 1]$ (a unique minimiser $c_i$, positive-definite Hessian:
# Assumption 2), random position sets $S_i$ with $|S_i| = \lceil T/4 \rceil$, and $F_0 = $ sum.

# %%
CONSTRUCTION_D = 3    # part a's task: D retrieved values z_i, so h = D = 3 heads
CONSTRUCTION_DIM = 2  # its token dimension d: x(t) in [0, 1]^2
OUTSIDE_GATE = -2.0   # the position gate r_i(t) outside S_i (ours; the paper's -1 leaves a gap)


def construction_task(seq_len, D, dim, seed):
    """Centres c_i, position sets S_i (|S_i| = ceil(T/4)) and the RetrievalTask of part a."""
    generator = torch.Generator().manual_seed(seed)
    centres = torch.rand(D, dim, generator=generator)                       # c_i in [0,1]^d
    size = math.ceil(seq_len / 4)
    subsets = [torch.randperm(seq_len, generator=generator)[:size].sort().values.tolist()
               for _ in range(D)]
    retrieval = task.RetrievalTask(
        score_functions=[lambda x, c=c: ((x - c) ** 2).sum(-1) / dim for c in centres],
        subsets=subsets, modes=["min"] * D, outer=lambda z: z.sum(dim=1))
    return centres, subsets, retrieval


# %% [markdown]
# The proof's weights, put into file 02's `AttentionLayer` (so the construction runs through the
# same attention code as the trained models), with $h = D$ heads and $n = 2$:
#
# * encoder: head $i$ owns the block $\hat x^{(i)}(t) = (\Psi_i(x(t)),\ r_i(t))$ of
#   $\hat x(t) \in \mathbb{R}^{2D}$; we take $\Psi_i = f_i$ exactly (the theorem lets a small MLP
#   approximate it to $\delta$; we skip that step to isolate the attention's error);
# * the position gate $r_i(t) = 0$ for $t \in S_i$ and $-2$ otherwise;
# * $W_{Q,i}\hat c_0 = (1, 0)$ and $W_{K,i}$ maps the block to $(-\Psi_i + r_i, 0)$, so the score
#   is $\rho_i(t) = -\Psi_i(x(t)) + r_i(t)$: a soft arg-min inside $S_i$;
# * $W_{V,i}$ copies the block, $W_O = I$, and the read-out keeps the first coordinate of each
#   head, $\tilde z_i$, and applies the exact $F_0$.

# %%
def construction_layer(D):
    """File 02's AttentionLayer with the weights of the proof: h = D heads, n = 2, E = 2D."""
    width = 2 * D
    layer = model_file.AttentionLayer(width, n_heads=D, head_dim=2)
    cls = torch.zeros(width)
    cls[0] = 1.0                                                            # c_0 = e_1
    with torch.no_grad():
        for p in (layer.W_Q, layer.W_K, layer.W_V):
            p.zero_()
        for i in range(D):
            layer.W_Q[i, 0, 0] = 1.0                                        # W_Q,i c_0 = (1, 0)
            layer.W_K[i, 0, 2 * i] = -1.0                                   # -Psi_i ...
            layer.W_K[i, 0, 2 * i + 1] = 1.0                                # ... + r_i
            layer.W_V[i, 0, 2 * i] = 1.0                                    # copies Psi_i
            layer.W_V[i, 1, 2 * i + 1] = 1.0                                # copies r_i
        layer.W_O.weight.copy_(torch.eye(width))                            # W_O = I
    return layer, cls


# %% [markdown]
# The encoder writes each token's blocks $(\Psi_i, r_i)$, the layer reads them at the CLS token,
# and the first coordinate of each head's output is its retrieved $\tilde z_i$:

# %%
def run_construction(x, centres, subsets, beta):
    """Retrieved z_tilde [n, D] of the hand-built model for inputs x [n, T, d] (on the CPU:
    a small exact construction, nothing to train)."""
    x = x.cpu()
    n, seq_len, dim = x.shape
    D = len(centres)
    blocks = []
    for centre, subset in zip(centres, subsets):
        psi = ((x - centre) ** 2).sum(-1) / dim                             # Psi_i = f_i, [n, T]
        gate = torch.full((seq_len,), OUTSIDE_GATE)
        gate[subset] = 0.0                                                  # r_i(t)
        blocks += [psi, gate.expand(n, -1)]
    tokens = torch.stack(blocks, dim=2)                                     # x_hat(t), [n, T, 2D]
    layer, cls = construction_layer(D)
    with torch.no_grad():
        update, _ = layer(cls.expand(n, 1, -1), tokens, beta)               # W_O Concat[...]
    return update[:, 0, 0::2]                                               # first coord per head


# %% [markdown]
# **The bound.** Inside $S_i$ a token $\delta$ above the minimum gets at most $e^{-\beta\delta}$
# times the weight of the minimum and adds at most $\delta e^{-\beta\delta} \le 1/(e\beta)$ to the
# error; outside $S_i$ a token's score is at least 1 below the best one in $S_i$, so its weight is
# at most $e^{-\beta}$ and it moves $\tilde z_i$ by at most $e^{-\beta}$. Hence
# $|\tilde z_i - \min_{S_i} f_i| \le (|S_i| - 1)/(e\beta) + T e^{-\beta}$.
# **Our gate is $-2$, not the paper's $-1$** (A.2.1, after eq. 10) [inferred]: with
# $\Psi \in [0,1]$ a gate of $-1$ lets an outside token with $\Psi = 0$ tie with an inside token
# with $\Psi = 1$ — then the error is 0.5 at every $\beta$ and the $T e^{-\beta}$ term fails. A gate
# of $-2$ repairs this gap in the proof and changes nothing else.

# %%
def construction_bound(subset_size, seq_len, beta):
    """(|S_i| - 1)/(e beta) + T e^{-beta}: the retrieval error bound of the proof."""
    return (subset_size - 1) / (math.e * beta) + seq_len * math.exp(-beta)


# %% [markdown]
# The apparatus of part a: the worst error over random sequences per $(T, \beta)$ beside its
# bound, the rate in $\beta$ (a log-log slope), the figure and the printout.

# %%
RATE_FROM_BETA = 10   # the rate in beta is fitted over beta >= 10 (the large-beta end)


def construction_errors(seq_lens, betas, D, dim, n, seed):
    """Worst |z_tilde_i - min_{S_i} f_i| and |y_tilde - y| over n random sequences, per (T, beta)."""
    rows = []
    for seq_len in seq_lens:
        centres, subsets, retrieval = construction_task(seq_len, D, dim, seed)
        x = task.sample_inputs(n, seq_len, dim, seed + seq_len, distribution="uniform")
        y, z, _ = retrieval(x)
        for beta in betas:
            z_tilde = run_construction(x, centres, subsets, beta)
            rows.append({"T": seq_len, "beta": beta,
                         "max_error": float((z_tilde - z).abs().max()),
                         "max_output_error": float((z_tilde.sum(1) - y).abs().max()),
                         "bound": construction_bound(len(subsets[0]), seq_len, beta)})
    return rows


def fit_slope(x, y):
    """Least-squares slope of log10(y) against log10(x)."""
    log_x = torch.tensor(x, dtype=torch.float64).log10()
    log_y = torch.tensor(y, dtype=torch.float64).log10()
    centred = log_x - log_x.mean()
    return float((centred * (log_y - log_y.mean())).sum() / (centred ** 2).sum())


def construction_rates(rows):
    """{T: slope of log error against log beta over beta >= RATE_FROM_BETA}; errors that
    underflow to 0 (T <= 4: |S_i| = 1) are left out, and so is a T left with under two betas."""
    rate = {}
    for seq_len in dict.fromkeys(row["T"] for row in rows):                # in the order of T
        points = [(row["beta"], row["max_error"]) for row in rows
                  if row["T"] == seq_len and row["beta"] >= RATE_FROM_BETA and row["max_error"] > 0]
        if len({beta for beta, _ in points}) >= 2:
            rate[str(seq_len)] = fit_slope(*zip(*points))
    return rate


def run_upper_bound(args):
    """Part a's numbers: the worst error and its bound per (T, beta), and the rate per T."""
    rows = construction_errors(args.construction_T, args.betas, D=CONSTRUCTION_D,
                               dim=CONSTRUCTION_DIM, n=args.construction_samples, seed=args.seed)
    return {"construction": rows, "construction_rate": construction_rates(rows)}


def plot_upper_bound(result, args):
    """Worst retrieval error against beta, one line per T, with the bound dashed."""
    figure, axis = plt.subplots(figsize=(6.5, 4.2))
    lengths = sorted({row["T"] for row in result["construction"]})
    colours = plt.cm.viridis(torch.linspace(0, 0.9, len(lengths)).tolist())
    for seq_len, colour in zip(lengths, colours):
        rows = [row for row in result["construction"] if row["T"] == seq_len]
        betas = [row["beta"] for row in rows]
        axis.loglog(betas, [row["max_error"] for row in rows], "o-", color=colour,
                    label=f"T = {seq_len}")
        axis.loglog(betas, [row["bound"] for row in rows], "--", color=colour, lw=0.8)
    axis.set_xlabel(r"softmax scale $\beta$"), axis.set_ylabel(r"max $|\tilde z_i - z_i|$")
    axis.set_title("Hand-built h = D model: error (solid) and bound (dashed)")
    axis.legend(fontsize=7, ncol=2)
    return figure


def report_upper_bound(result, args):
    rows = result["construction"]
    within = all(row["max_error"] <= row["bound"] for row in rows)
    print(f"a. hand-built h = D = {CONSTRUCTION_D} model, n = 2: every error within its bound: "
          f"{within}")
    for seq_len in sorted({row["T"] for row in rows}):
        line = [row for row in rows if row["T"] == seq_len]
        print(f"   T = {seq_len:<5}" + "  ".join(
            f"beta={row['beta']:g}: {row['max_error']:.1e} (<= {row['bound']:.1e})"
            for row in line[:: max(1, len(line) // 4)]))
    print(f"   slope of log error against log beta (beta >= {RATE_FROM_BETA}): " + ", ".join(
        f"T={T}: {slope:.2f}" for T, slope in result["construction_rate"].items()))


# %% [markdown]
# ## Running it
#
# Run as a script or in the notebook, the file starts its run here: `config()` parses the flags
# (the table above) and refuses, in one line naming the flag, a run that could not finish; the
# clock starts; each part below records its numbers, shows its figure and prints ours beside the
# paper's, and the last cell writes the JSON. `--parts a,d` runs only the named parts, into files
# named after them, so a partial run never replaces the full result. Imported by a later file
# (`helpers.load_concept`), it runs nothing.

# %%
def config(argv=None):
    """Parse the flags (the table above), and check before any work that the run they describe
    can finish with finite numbers (else one line naming the flag, exit code 2)."""
    args = plumbing.config(SETTINGS, argv, __doc__.split("\n")[0], PARTS,
                           full="beta up to 2000, 2000 sequences per T")
    if max(args.construction_T) > MAX_CONSTRUCTION_T:
        plumbing.refuse("--construction-T", f"at most {MAX_CONSTRUCTION_T}, got "
                        f"{max(args.construction_T)}")
    return args


if __name__ == "__main__":
    args = config()
    run = plumbing.Run("03_bounds", args, PARTS)


# %%
if __name__ == "__main__" and "a" in args.parts:
    upper = run.record(run_upper_bound(args))
    run.figure(plot_upper_bound(upper, args), "03_construction")
    report_upper_bound(upper, args)

# %% [markdown]
# **What we saw** (`results/03_bounds.json`). Every retrieved value is within the proof's bound
# $(|S_i| - 1)/(e\beta) + T e^{-\beta}$ at every T from 8 to 1024 and β from 1 to 1000, and the
# error falls like 1/β (fitted slopes −0.94 to −1.17 for β ≥ 10):
#
# | worst error (bound) | β = 10 | β = 100 | β = 1000 |
# |---|---|---|---|
# | T = 8 | 2.8e-2 (3.7e-2) | 2.8e-3 (3.7e-3) | 2.8e-4 (3.7e-4) |
# | T = 1024 | 9.7e-2 (9.4e+0) | 1.3e-2 (9.4e-1) | 1.1e-3 (9.4e-2) |
#
# At T = 1024 the bound is 70–100× loose. The layer's size does not change with T; what must grow
# is the scale β — a scale, not a parameter the theorem counts.

# %% [markdown]
# ## b. The lower bound (Theorem 2(2), proof in A.2.2)
#
# With $s < D$ heads of dimension $n$, any model that $\varepsilon$-approximates the task needs
# $\Omega(1/\varepsilon^{k})$ FFN parameters, where
#
# $$k(T, s, D, n) = \frac{T/4 - s - D + 1}{(n+1)s + 1} - 1 .$$
#
# $k$ grows linearly in $T$ (the headline $\varepsilon^{-cT}$), but the bound says something only
# when $k > 0$, that is $T > 4((n+2)s + D)$. The upper bound with $D$ heads is $C/\varepsilon^\gamma$
# with $\gamma$ independent of $T$ ($\gamma = 2$ for a finite Barron norm, at worst
# $\max(d, D)$). The constants of both bounds are not explicit, so the comparison below sets them
# to 1: it shows the *exponents*, not parameter counts.

# %%
def lower_bound_exponent(seq_len, s, D, n):
    """k of Theorem 2(2)."""
    return (seq_len / 4 - s - D + 1) / ((n + 1) * s + 1) - 1


def first_nonvacuous_length(s, D, n):
    """Smallest T with k > 0, i.e. T > 4((n + 2)s + D)."""
    return 4 * ((n + 2) * s + D) + 1


# %% [markdown]
# The apparatus of part b: $k$ tabulated for a few $(s, D, n)$, the first $T$ with $k > 0$, the
# figure (with the vacuous region shaded, and $k$ beside the upper bound's $\gamma$) and the
# printout.

# %%
LOWER_BOUND_T = [16, 32, 64, 128, 256, 512, 1024, 4096]  # sequence lengths where k is tabulated
LOWER_BOUND_CASES = [(3, 4, 8), (1, 2, 2), (2, 4, 8), (3, 4, 2)]  # (s heads, D, head dim n)
COMPARED_CASE = (1, 2, 2)  # the (s, D, n) whose k the right panel sets beside gamma
BARRON_GAMMA = 2           # the upper bound's exponent gamma for a finite Barron norm
PAPER_LARGEST_T = 128      # the longest T of the paper's synthetic experiment (dotted line)


def case_name(s, D, n):
    """The JSON key of one (s, D, n) case: "s=3 D=4 n=8"."""
    return f"s={s} D={D} n={n}"


def run_lower_bound(args):
    """Part b's numbers: k at every LOWER_BOUND_T and the first T with k > 0, per case."""
    return {"lower_bound": {case_name(s, D, n): {
        "k": {str(T): lower_bound_exponent(T, s, D, n) for T in LOWER_BOUND_T},
        "first_nonvacuous_T": first_nonvacuous_length(s, D, n)}
        for s, D, n in LOWER_BOUND_CASES}}


def plot_lower_bound(result, args):
    """k(T) for a few (s, D, n), with the vacuous region, and the exponents compared."""
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    for name, entry in result["lower_bound"].items():
        lengths = [int(T) for T in entry["k"]]
        left.semilogx(lengths, list(entry["k"].values()), "o-", label=name)
    left.set_yscale("symlog", linthresh=1)
    left.axhspan(-1.5, 0, color="red", alpha=0.1, label="k <= 0: vacuous")
    left.axvline(PAPER_LARGEST_T, color="grey", ls=":", label="paper's largest T")
    left.set_xlabel("sequence length T"), left.set_ylabel("exponent k")
    left.set_title("Lower-bound exponent of Theorem 2(2)"), left.legend(fontsize=7)
    s, D, _ = COMPARED_CASE
    entry = result["lower_bound"][case_name(*COMPARED_CASE)]
    lengths = [int(T) for T in entry["k"]]
    right.semilogx(lengths, [max(k, 0) for k in entry["k"].values()], "o-",
                   label=f"h = {s} < D = {D}: k (lower bound 1/eps^k)")
    right.semilogx(lengths, [BARRON_GAMMA] * len(lengths), "s--",
                   label=f"h = D: gamma = {BARRON_GAMMA} (Barron)")
    right.set_xlabel("sequence length T"), right.set_ylabel("exponent of 1/eps")
    right.set_title("Parameter cost ~ (1/eps)^exponent (constants set to 1)")
    right.legend(fontsize=7)
    figure.tight_layout()
    return figure


def report_lower_bound(result, args):
    print("b. lower-bound exponent k(T, s, D, n) (k <= 0: the bound says nothing)")
    for name, entry in result["lower_bound"].items():
        print(f"   {name:<14}" + "  ".join(f"T={T}: {k:.2f}" for T, k in entry["k"].items())
              + f"   k > 0 from T = {entry['first_nonvacuous_T']}")


# %%
if __name__ == "__main__" and "b" in args.parts:
    lower = run.record(run_lower_bound(args))
    run.figure(plot_lower_bound(lower, args), "03_lower_bound")
    report_lower_bound(lower, args)

# %% [markdown]
# **What we saw.** With s < D heads the exponent grows linearly in T but is vacuous (k ≤ 0) until
# T > 4((n + 2)s + D). At the paper's sizes (D = 4, n = 8) that depends on s: for s = 3,
# k = −0.07 at T = 128 (positive from T = 137); for s = 2, k = 0.42 at T = 128 (from T = 97). So
# for h = D − 1 the bound says nothing at any T the paper trains (T ≤ 128), although file 02's
# trained models drop 9–14× from h = 3 to h = 4 there: the experiments show the trend, not the
# bound.

# %% [markdown]
# ## d. Corollary 1: the intrinsic dimension is unique
#
# If a target has two representations with $D_1 < D_2$, the upper bound with $D_1$ heads
# ($C/\varepsilon^\gamma$, $\gamma \le D_2$) would contradict the lower bound of the second
# representation with $s = D_1$ heads and $n = 2$, $k = (T/4 - D_1 - D_2 + 1)/(3D_1 + 1) - 1$,
# as soon as $k > \gamma$. The paper's sufficient condition is $D_1^2 + D_2^2 \le T/50$.

# %%
COROLLARY_HEAD_DIM = 2  # n of the lower bound set against the D1-head upper bound (the proof's)
CONDITION_DIVISOR = 50  # the paper's sufficient condition D1^2 + D2^2 <= T/50


def corollary_table(pairs):
    """For each (D1, D2): the T the paper's condition needs, and the T where k > gamma already.

    gamma <= max(D1, D2) (the worst case of Assumption 3), and k uses s = D1 heads with n = 2.
    """
    n, rows = COROLLARY_HEAD_DIM, []
    for D1, D2 in pairs:
        gamma = max(D1, D2)
        condition_T = CONDITION_DIVISOR * (D1 ** 2 + D2 ** 2)             # D1^2 + D2^2 <= T/50
        contradiction_T = 4 * ((gamma + 1) * ((n + 1) * D1 + 1) + D1 + D2 - 1)  # k > gamma after
        rows.append({"D1": D1, "D2": D2, "gamma": gamma, "condition_T": condition_T,
                     "k_at_condition_T": lower_bound_exponent(condition_T, D1, D2, n=n),
                     "k_exceeds_gamma_beyond_T": contradiction_T})
    return rows


# %% [markdown]
# The apparatus of part d: the table for four pairs $(D_1, D_2)$ and its printout (no figure).

# %%
COROLLARY_PAIRS = [(1, 2), (2, 3), (3, 4), (4, 5)]  # (D1, D2): the two representations


def run_corollary(args):
    """Part d's numbers: the table of COROLLARY_PAIRS."""
    return {"corollary": corollary_table(COROLLARY_PAIRS)}


def report_corollary(result, args):
    print("d. Corollary 1 (gamma = max(D1, D2)): the paper's condition D1^2 + D2^2 <= T/50, and "
          "where k > gamma already")
    for row in result["corollary"]:
        print(f"   D1={row['D1']} D2={row['D2']}: condition from T = {row['condition_T']} "
              f"(k there {row['k_at_condition_T']:.1f}); k > gamma for T > "
              f"{row['k_exceeds_gamma_beyond_T']}")


# %%
if __name__ == "__main__" and "d" in args.parts:
    corollary = run.record(run_corollary(args))
    report_corollary(corollary, args)

# %% [markdown]
# **What we saw.** Corollary 1 assumes $D_1^2 + D_2^2 \le T/50$: T ≥ 250 for
# $(D_1, D_2) = (1, 2)$; the two bounds already contradict each other for T > 56 (T > 128, 224 and
# 344 for the pairs (2, 3), (3, 4), (4, 5), against the condition's 650, 1250 and 2050).

# %% [markdown]
# ## Summary beside the paper
#
# | claim | paper's number (its statistic) | ours (same statistic, default run) | where we differ |
# |---|---|---|---|
# | Thm 2(1): h = D heads retrieve each $z_i$ within $(\lvert S_i\rvert - 1)/(e\beta) + T e^{-\beta}$ | the bound (a worst case over inputs) | worst error over 500 sequences within it at every T = 8 … 1024, β = 1 … 1000; T = 1024, β = 100: 1.3e-2 against 9.4e-1 | our position gate is −2, not −1 (the paper's leaves a tie) |
# | Thm 2(2): with s < D heads at least $1/\varepsilon^k$ parameters, k linear in T | k by its formula; no value at the paper's sizes | s = 3, D = 4, n = 8: k = −0.07 at T = 128, positive from T = 137; s = 2: 0.42 at T = 128 | none in k; at the paper's T ≤ 128 the bound is vacuous for h = D − 1 |
# | Cor. 1: the intrinsic dimension is unique once $D_1^2 + D_2^2 \le T/50$ | T ≥ 250 for (1, 2) | the bounds contradict each other for T > 56 | the paper's condition is sufficient, 4–6× above where the contradiction starts |
#
# The hand-built layer meets its bound by a wide margin at long T, and its error falls like 1/β.
# The lower bound is the reason for "h ≥ D", but at the lengths the paper trains it is vacuous for
# three heads: the drop at h = D that file 02 sees is an observation the theorem does not force
# there.

# %% [markdown]
# ## Going further
#
# - [03a · error against parameters, trained (Fig. 1b)](03a_params_vs_error.ipynb)
#   (`further/03a_params_vs_error.py`): file 02's model with its MLP width swept, h = 3 and 4, the
#   slope of log NMSE against log parameters beside the paper's figure.

# %% [markdown]
# ## Commands and files
#
#     python 03_bounds.py              # default: 1.8 s on a 2-core CPU
#     python 03_bounds.py --full       # beta up to 2000, 2000 sequences per T
#     python 03_bounds.py --quick      # seconds; what the tests use
#     python 03_bounds.py --parts b,d  # only the named parts
#
# Output (under `runs/`, which git ignores; `--out .` refreshes the committed files):
# `results/03_bounds.json` with the keys `construction` and `construction_rate` (part a),
# `lower_bound` (b) and `corollary` (d); `figures/03_construction.png`,
# `figures/03_lower_bound.png`. The run before part c became a study, with its key `widths`, is
# `results/03_bounds_before_split.json`.

# %% [markdown]
# ## The run's file
#
# Every number above, with the flags that produced them and the run's wall time.

# %%
if __name__ == "__main__":
    run.finish()

# %% [markdown]
# # 03 · What the heads cost: the upper and the lower bound
#
# Paper A (arXiv 2510.06662), Theorem 2 (1)–(2) with their proofs (Appendix A.2), Corollary 1
# (A.4) and Fig. 1b (Section 6.1).

# %%
"""03 · Upper and lower bounds on the parameter cost of a D-retrieval task (paper A, Thm 2).

What it shows
    a. Theorem 2(1), by hand: h = D heads with n = 2 dimensions each retrieve every z_i with
       no training; the error of each retrieved value stays under (|S_i| - 1)/(e beta) + T e^-beta
       for every T from 8 to 1024 and falls like 1/beta at every T.
    b. Theorem 2(2): the lower-bound exponent k(T, s, D, n) = (T/4 - s - D + 1)/((n+1)s + 1) - 1
       grows linearly in T, but with s = 3 heads it is vacuous (k <= 0) at the paper's own
       synthetic sizes (D = 4, n = 8, T <= 128); with s = 2 it is positive from T = 97.
    c. Fig. 1b, trained: min validation NMSE against the parameter count (MLP width N swept), for
       h < D and h >= D, one line per T, with fitted log-log slopes.
    d. Corollary 1 as arithmetic: when D_1^2 + D_2^2 <= T/50 forces the intrinsic dimension to be
       unique.

Run it
    python 03_bounds.py            # default: 4 min 0 s on a 2-core CPU
    python 03_bounds.py --full     # wider N sweep, 5 T, 3 seeds (GPU not yet timed)
    python 03_bounds.py --quick    # seconds; what the tests use
    python 03_bounds.py --parts a,b,d  # only the parts without training

Output (under runs/, which git ignores; `--out .` refreshes the committed files)
    results/03_bounds.json; figures/03_construction.png, 03_lower_bound.png, 03_params_vs_nmse.png
"""
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
# Every size of this file in one table: a row's default, `--quick` (seconds, for the tests)
# and `--full` values side by side (`...`: as the default), its type and what it sets; each row
# is a flag (`construction_T` is `--construction-T`), and a flag set by hand wins over its
# preset. Parts a, b and d train nothing; part c trains file 02's model with file 02's recipe
# (`model_file.RECIPE`: head dimension, batch size, learning rate).

# %%
SETTINGS = {
    # name: Setting(default, --quick, --full, type, what it sets)
    "construction_T": Setting([8, 16, 32, 64, 128, 256, 512, 1024], [8, 64], ..., int_list,
                              "a: sequence lengths of the hand-built model"),
    "betas": Setting([1, 2, 5, 10, 20, 50, 100, 200, 500, 1000], [1, 10, 100],
                     [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000], float_list,
                     "a: softmax scales beta"),
    "construction_samples": Setting(500, 50, 2000, positive_int, "a: random sequences per T"),
    "T": Setting([8, 32], [8], [8, 16, 32, 64, 128], int_list,
                 "c: sequence lengths of the width sweep"),
    "heads": Setting([3, 4], [1, 2], [1, 2, 3, 4], int_list, "c: head counts h (D - 1 and D)"),
    "widths": Setting([8, 16, 32, 64], [8, 32], [8, 12, 16, 24, 32, 48, 64], int_list,
                      "c: MLP widths N"),
    "D": Setting(4, ..., ..., positive_int, "intrinsic dimension D, 1..4"),
    "directions": task.SETTINGS["directions"],
    "seeds": Setting(2, 1, 3, positive_int, "c: seeds per (T, h, N)"),
    "steps": Setting(3000, 300, 10000, positive_int, "c: training steps per run"),
    "n_train": Setting(8000, 2000, 8000, positive_int,
                       "c: training sequences per T (Appendix B.1)"),
    "n_valid": Setting(2000, 500, 2000, positive_int,
                       "c: validation sequences per T (Appendix B.1)"),
}
PARTS = {"a": (), "b": (), "c": (), "d": ()}  # this file's parts, each with the parts it needs
MAX_CONSTRUCTION_T = 4096  # the longest sequence of the hand-built model


def config(argv=None):
    """Parse the flags (the table above), and check before any work that the run they describe
    can finish with finite numbers (else one line naming the flag, exit code 2)."""
    args = plumbing.config(SETTINGS, argv, __doc__.split("\n")[0], PARTS,
                           full="a wider N sweep, 5 T, 3 seeds")
    if args.D > 4:
        plumbing.refuse("--D", f"must be between 1 and d = 4, got {args.D}")
    if max(args.construction_T) > MAX_CONSTRUCTION_T:
        plumbing.refuse("--construction-T", f"at most {MAX_CONSTRUCTION_T}, got "
                        f"{max(args.construction_T)}")
    if len(set(args.widths)) < 2:
        plumbing.refuse("--widths", "give at least two different widths to fit a slope",
                        smallest="1,2")
    return args


# %% [markdown]
# Run as a script or in the notebook, the file starts its run here: it parses the flags and
# starts the clock; each part below records its numbers, shows its figure and prints ours
# beside the paper's where it is explained, and the last cell writes
# `runs/results/03_bounds.json` (`--out .` refreshes the committed files). `--parts a,d` runs
# only the named parts, into files named after them, so a partial run never replaces the full
# result. Imported by a later file (`helpers.load_concept`), it runs nothing.

# %%
if __name__ == "__main__":
    args = config()
    run = plumbing.Run("03_bounds", args, PARTS)


# %% [markdown]
# ## a. The upper bound, built by hand (Theorem 2(1), proof in A.2.1)
#
# A retrieval task that meets the theorem's assumptions: tokens $x(t) \in [0,1]^d$, scores
# $f_i(x) = \|x - c_i\|^2 / d \in [0, 1]$ (a unique minimiser $c_i$, positive-definite Hessian:
# Assumption 2), random position sets $S_i$ with $|S_i| = \lceil T/4 \rceil$, and $F_0 = $ sum.
#
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
#
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
CONSTRUCTION_D = 3    # part a's task: D retrieved values z_i, so h = D = 3 heads
CONSTRUCTION_DIM = 2  # its token dimension d: x(t) in [0, 1]^2
OUTSIDE_GATE = -2.0   # the position gate r_i(t) outside S_i (ours; the paper's -1 leaves a gap)
RATE_FROM_BETA = 10   # the rate in beta is fitted over beta >= 10 (the large-beta end)


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


def construction_bound(subset_size, seq_len, beta):
    """(|S_i| - 1)/(e beta) + T e^{-beta}: the retrieval error bound of the proof."""
    return (subset_size - 1) / (math.e * beta) + seq_len * math.exp(-beta)


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


# %%
if __name__ == "__main__" and "a" in args.parts:
    upper = run.record(run_upper_bound(args))
    run.figure(plot_upper_bound(upper, args), "03_construction")
    report_upper_bound(upper, args)

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
LOWER_BOUND_T = [16, 32, 64, 128, 256, 512, 1024, 4096]  # sequence lengths where k is tabulated
LOWER_BOUND_CASES = [(3, 4, 8), (1, 2, 2), (2, 4, 8), (3, 4, 2)]  # (s heads, D, head dim n)
COMPARED_CASE = (1, 2, 2)  # the (s, D, n) whose k the right panel sets beside gamma
BARRON_GAMMA = 2           # the upper bound's exponent gamma for a finite Barron norm
PAPER_LARGEST_T = 128      # the longest T of the paper's synthetic experiment (dotted line)


def lower_bound_exponent(seq_len, s, D, n):
    """k of Theorem 2(2)."""
    return (seq_len / 4 - s - D + 1) / ((n + 1) * s + 1) - 1


def first_nonvacuous_length(s, D, n):
    """Smallest T with k > 0, i.e. T > 4((n + 2)s + D)."""
    return 4 * ((n + 2) * s + D) + 1


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
# ## c. Fig. 1b: error against parameters, trained
#
# Sweep the width $N$ of both MLPs (the parameters the paper counts grow linearly in $N$) for a
# head count below $D$ and one at $D$. The paper: below $D$, $-\log \mathrm{NMSE}$ grows roughly
# linearly in $\log(\text{parameters})$ — a power law, shifted up at larger $T$; at $h = D$ the
# curve is flat or rises (mild overfitting). We fit the slope of $\log_{10}\mathrm{NMSE}$ against
# $\log_{10}(\text{parameters})$ per $(h, T)$.

# %%
def width_sweep(args):
    """Train every (h, T, N, seed) of part c with file 02's training and its RECIPE (head
    dimension, batch size, learning rate), the width N swept; returns the runs."""
    runs = [dict(model_file.RECIPE, width=N, T=T, h=h, seed=args.seed + s, D=args.D,
                 directions=args.directions, total_width=None, layers=1, steps=args.steps,
                 n_train=args.n_train, n_valid=args.n_valid, data_seed=args.seed,
                 device=args.device)
            for T in args.T for h in args.heads for N in args.widths for s in range(args.seeds)]
    return plumbing.run_sweep(runs, args.workers, model_file.train_one,
                             label=lambda r: f"T={r['T']:<4} h={r['h']} N={r['width']:<3} "
                                             f"seed={r['seed']}  valid NMSE {r['valid_nmse']:.2e}",
                             cost=lambda r: r["T"] * r["steps"])   # a run's time grows like T


def summarise_widths(results):
    """{h: {T: {"widths", "parameters", "min_nmse", "train_nmse", "slope"}}}: per N the min
    validation NMSE over seeds and the training NMSE of that same model (is it overfitting?)."""
    table = {}
    for h, T in sorted({(r["h"], r["T"]) for r in results}):
        widths = sorted({r["width"] for r in results if (r["h"], r["T"]) == (h, T)})
        parameters = [helpers.by_seed(results, "parameters", h=h, T=T, width=N)[0]["paper"]
                      for N in widths]                                     # the same every seed
        best = [min(zip(helpers.by_seed(results, "valid_nmse", h=h, T=T, width=N),
                        helpers.by_seed(results, "train_nmse", h=h, T=T, width=N)))
                for N in widths]                                           # (valid, train)
        errors = [valid for valid, _ in best]
        table.setdefault(str(h), {})[str(T)] = {
            "widths": widths, "parameters": parameters, "min_nmse": errors,
            "train_nmse": [train for _, train in best], "slope": fit_slope(parameters, errors)}
    return table


def run_widths(args):
    """Part c's numbers: the width sweep, summarised."""
    return {"widths": summarise_widths(width_sweep(args))}


def plot_widths(result, args):
    """Fig. 1b: min validation NMSE (solid) and that model's training NMSE (dashed) against the
    parameter count, one panel per h."""
    heads = list(result["widths"])
    figure, axes = plt.subplots(1, len(heads), figsize=(4.5 * len(heads), 3.6), squeeze=False)
    for axis, h in zip(axes[0], heads):
        for T, entry in result["widths"][h].items():
            line, = axis.loglog(entry["parameters"], entry["min_nmse"], "o-",
                                label=f"T = {T} (slope {entry['slope']:.2f})")
            axis.loglog(entry["parameters"], entry["train_nmse"], "x--", color=line.get_color(),
                        alpha=0.6, label=f"T = {T}, training NMSE (same model)")
        axis.set_title(f"h = {h}"), axis.set_xlabel("parameters (encoder + read-out)")
        axis.set_ylabel("min validation NMSE"), axis.legend(fontsize=7)
        helpers.label_log_axis(axis, entry["parameters"])
    figure.tight_layout()
    return figure


def report_widths(result, args):
    print("c. fitted slope of log NMSE against log parameters (Fig. 1b); per width N the min "
          "validation NMSE over seeds [that model's training NMSE]")
    for h, by_length in result["widths"].items():
        print(f"   h = {h}: " + ", ".join(f"T={T}: {entry['slope']:+.2f}"
                                        for T, entry in by_length.items()))
        for T, entry in by_length.items():
            print(f"      T={T}: " + "  ".join(
                f"N={N}: {valid:.2e} [{train:.2e}]" for N, valid, train in
                zip(entry["widths"], entry["min_nmse"], entry["train_nmse"])))


# %%
if __name__ == "__main__" and "c" in args.parts:
    widths = run.record(run_widths(args))
    run.figure(plot_widths(widths, args), "03_params_vs_nmse")
    report_widths(widths, args)

# %% [markdown]
# ## d. Corollary 1: the intrinsic dimension is unique
#
# If a target has two representations with $D_1 < D_2$, the upper bound with $D_1$ heads
# ($C/\varepsilon^\gamma$, $\gamma \le D_2$) would contradict the lower bound of the second
# representation with $s = D_1$ heads and $n = 2$, $k = (T/4 - D_1 - D_2 + 1)/(3D_1 + 1) - 1$,
# as soon as $k > \gamma$. The paper's sufficient condition is $D_1^2 + D_2^2 \le T/50$.

# %%
COROLLARY_PAIRS = [(1, 2), (2, 3), (3, 4), (4, 5)]  # (D1, D2): the two representations
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
# ## The run's file
#
# Every number above, with the flags that produced them and the run's wall time.

# %%
if __name__ == "__main__":
    run.finish()

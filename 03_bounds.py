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
       synthetic sizes (D = 4, n = 8, T <= 128); with s = 1 or 2 it is positive from T = 57, 97.
    c. Fig. 1b, trained: min validation NMSE against the parameter count (MLP width N swept), for
       h < D and h >= D, one line per T, with fitted log-log slopes.
    d. Corollary 1 as arithmetic: when D_1^2 + D_2^2 <= T/50 forces the intrinsic dimension to be
       unique.

Run it
    python 03_bounds.py            # default: 1 min 35 s on a 2-core CPU
    python 03_bounds.py --full     # wider N sweep, 5 T, 3 seeds (GPU not yet timed)
    python 03_bounds.py --quick    # seconds; what the tests use

Output
    results/03_bounds.json; figures/03_construction.png, 03_lower_bound.png, 03_params_vs_nmse.png
"""
import math
import sys
import time
from pathlib import Path

import matplotlib.pyplot as plt
import torch

sys.path.append(str(Path.cwd().parent))  # lets the notebook in notebooks/ find helpers.py
import helpers

task = helpers.load_concept("01_retrieval_task")
model_file = helpers.load_concept("02_multihead_model")

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
        gate = torch.full((seq_len,), -2.0)
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
# ## c. Fig. 1b: error against parameters, trained
#
# Sweep the width $N$ of both MLPs (the parameters the paper counts grow linearly in $N$) for a
# head count below $D$ and one at $D$. The paper: below $D$, $-\log \mathrm{NMSE}$ grows roughly
# linearly in $\log(\text{parameters})$ — a power law, shifted up at larger $T$; at $h = D$ the
# curve is flat or rises (mild overfitting). We fit the slope of $\log_{10}\mathrm{NMSE}$ against
# $\log_{10}(\text{parameters})$ per $(h, T)$.

# %%
def width_sweep(args):
    """Train every (h, T, N, seed) of part c with file 02's training; returns the runs."""
    runs = [dict(T=T, h=h, seed=args.seed + s, D=args.D, head_dim=8, width=N, total_width=None,
                 layers=1, steps=args.steps, batch_size=64, lr=1e-2, n_train=args.n_train,
                 n_valid=args.n_valid, data_seed=args.seed, device=args.device)
            for T in args.T for h in args.heads for N in args.widths for s in range(args.seeds)]
    return helpers.run_sweep(runs, args.workers, model_file.train_one, model_file.describe)


def fit_slope(x, y):
    """Least-squares slope of log10(y) against log10(x)."""
    log_x = torch.tensor(x, dtype=torch.float64).log10()
    log_y = torch.tensor(y, dtype=torch.float64).log10()
    centred = log_x - log_x.mean()
    return float((centred * (log_y - log_y.mean())).sum() / (centred ** 2).sum())


def summarise_widths(results):
    """{h: {T: {"parameters": [...], "min_nmse": [...], "slope": x}}}, min over seeds per N."""
    table = {}
    for (h, T) in sorted({(r["h"], r["T"]) for r in results}):
        widths = sorted({r["width"] for r in results if r["h"] == h and r["T"] == T})
        best = [min((r for r in results if (r["h"], r["T"], r["width"]) == (h, T, N)),
                    key=lambda r: r["valid_nmse"]) for N in widths]
        parameters = [r["parameters"]["paper"] for r in best]
        errors = [r["valid_nmse"] for r in best]
        table.setdefault(str(h), {})[str(T)] = {
            "widths": widths, "parameters": parameters, "min_nmse": errors,
            "slope": fit_slope(parameters, errors)}
    return table


# %% [markdown]
# ## d. Corollary 1: the intrinsic dimension is unique
#
# If a target has two representations with $D_1 < D_2$, the upper bound with $D_1$ heads
# ($C/\varepsilon^\gamma$, $\gamma \le D_2$) would contradict the lower bound of the second
# representation with $s = D_1$ heads and $n = 2$, $k = (T/4 - D_1 - D_2 + 1)/(3D_1 + 1) - 1$,
# as soon as $k > \gamma$. The paper's sufficient condition is $D_1^2 + D_2^2 \le T/50$.

# %%
def corollary_table(pairs):
    """For each (D1, D2): the T the paper's condition needs, and the T where k > gamma already.

    gamma <= max(D1, D2) (the worst case of Assumption 3), and k uses s = D1 heads with n = 2.
    """
    rows = []
    for D1, D2 in pairs:
        gamma = max(D1, D2)
        condition_T = 50 * (D1 ** 2 + D2 ** 2)                             # D1^2 + D2^2 <= T/50
        contradiction_T = 4 * ((gamma + 1) * (3 * D1 + 1) + D1 + D2 - 1)  # k > gamma beyond it
        rows.append({"D1": D1, "D2": D2, "gamma": gamma, "condition_T": condition_T,
                     "k_at_condition_T": lower_bound_exponent(condition_T, D1, D2, n=2),
                     "k_exceeds_gamma_beyond_T": contradiction_T})
    return rows


# %% [markdown]
# ## Running it

# %%
PRESETS = {
    "quick": dict(T=[8], construction_T=[8, 64], betas=[1, 10, 100], construction_samples=50,
                  heads=[1, 2], widths=[8, 32], seeds=1, steps=300, n_train=2000, n_valid=500),
    "default": dict(T=[8, 32], construction_T=[8, 16, 32, 64, 128, 256, 512, 1024],
                    betas=[1, 2, 5, 10, 20, 50, 100, 200, 500, 1000], construction_samples=500,
                    heads=[3, 4], widths=[8, 16, 32, 64], seeds=2, steps=3000, n_train=8000,
                    n_valid=2000),
    "full": dict(T=[8, 16, 32, 64, 128], construction_T=[8, 16, 32, 64, 128, 256, 512, 1024],
                 betas=[1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000],
                 construction_samples=2000, heads=[1, 2, 3, 4], widths=[8, 12, 16, 24, 32, 48,
                                                                        64],
                 seeds=3, steps=10000, n_train=8000, n_valid=2000),
}
LOWER_BOUND_CASES = [(3, 4, 8), (1, 2, 2), (2, 4, 8), (3, 4, 2)]  # (s, D, n)
COROLLARY_PAIRS = [(1, 2), (2, 3), (3, 4), (4, 5)]


def build_parser():
    """Every flag of this file, with its help (python 03_bounds.py --help)."""
    parser = helpers.make_parser(__doc__.split("\n")[0])
    parser.add_argument("--construction-T", type=helpers.int_list,
                        help="sequence lengths of the hand-built model (part a), e.g. 8,64,1024")
    parser.add_argument("--betas", type=helpers.float_list,
                        help="softmax scales beta of part a, e.g. 1,10,100")
    parser.add_argument("--construction-samples", type=helpers.positive_int,
                        help="random sequences per T in part a")
    parser.add_argument("--T", type=helpers.int_list, help="sequence lengths of part c")
    parser.add_argument("--heads", type=helpers.int_list, help="head counts of part c, e.g. 3,4")
    parser.add_argument("--widths", type=helpers.int_list,
                        help="MLP widths N swept in part c, e.g. 8,16,32,64")
    parser.add_argument("--D", type=helpers.positive_int, default=4,
                        help="intrinsic dimension, 1..4 (default: 4)")
    helpers.add_training_flags(parser)
    return parser


def config(argv=None):
    """Parse the flags, fill the unset ones from the chosen preset, and check before any
    work that the run they describe can finish with finite numbers (else one line, exit 2)."""
    parser = build_parser()
    args = helpers.config(parser, PRESETS, argv)
    if args.D > 4:
        helpers.refuse(parser, "--D", f"must be between 1 and d = 4, got {args.D}")
    if max(args.construction_T) > 4096:
        helpers.refuse(parser, "--construction-T", f"at most 4096, got "
                       f"{max(args.construction_T)}")
    if len(set(args.widths)) < 2:
        helpers.refuse(parser, "--widths", "give at least two different widths to fit a slope",
                       smallest="1,2")
    return args


def main(args):
    """Compute parts a–d and return every number (JSON-ready)."""
    helpers.seed_everything(args.seed)
    construction = construction_errors(args.construction_T, args.betas, D=3, dim=2,
                                       n=args.construction_samples, seed=args.seed)
    rate = {}  # slope over beta >= 10; errors that underflow to 0 (T <= 4: |S_i| = 1) left out
    for T in args.construction_T:
        points = [(row["beta"], row["max_error"]) for row in construction
                  if row["T"] == T and row["beta"] >= 10 and row["max_error"] > 0]
        if len({beta for beta, _ in points}) >= 2:
            rate[str(T)] = fit_slope(*zip(*points))
    seq_lens = [16, 32, 64, 128, 256, 512, 1024, 4096]
    lower = {f"s={s} D={D} n={n}": {
        "k": {str(T): lower_bound_exponent(T, s, D, n) for T in seq_lens},
        "first_nonvacuous_T": first_nonvacuous_length(s, D, n)}
        for s, D, n in LOWER_BOUND_CASES}
    widths = summarise_widths(width_sweep(args))
    corollary = corollary_table(COROLLARY_PAIRS)
    return {"construction": construction, "construction_rate": rate, "lower_bound": lower, "widths": widths,
            "corollary": corollary}


# %% [markdown]
# ## Figures and the printed summary

# %%
def plot_construction(result):
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


def plot_lower_bound(result):
    """k(T) for a few (s, D, n), with the vacuous region, and the exponents compared."""
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    for name, entry in result["lower_bound"].items():
        lengths = [int(T) for T in entry["k"]]
        left.semilogx(lengths, list(entry["k"].values()), "o-", label=name)
    left.set_yscale("symlog", linthresh=1)
    left.axhspan(-1.5, 0, color="red", alpha=0.1, label="k <= 0: vacuous")
    left.axvline(128, color="grey", ls=":", label="paper's largest T")
    left.set_xlabel("sequence length T"), left.set_ylabel("exponent k")
    left.set_title("Lower-bound exponent of Theorem 2(2)"), left.legend(fontsize=7)
    entry = result["lower_bound"]["s=1 D=2 n=2"]
    lengths = [int(T) for T in entry["k"]]
    right.semilogx(lengths, [max(k, 0) for k in entry["k"].values()], "o-",
                   label="h = 1 < D = 2: k (lower bound 1/eps^k)")
    right.semilogx(lengths, [2] * len(lengths), "s--", label="h = D: gamma = 2 (Barron)")
    right.set_xlabel("sequence length T"), right.set_ylabel("exponent of 1/eps")
    right.set_title("Parameter cost ~ (1/eps)^exponent (constants set to 1)")
    right.legend(fontsize=7)
    figure.tight_layout()
    return figure


def plot_params_vs_nmse(result):
    """Fig. 1b: min validation NMSE against the parameter count, one panel per h."""
    heads = list(result["widths"])
    figure, axes = plt.subplots(1, len(heads), figsize=(4.5 * len(heads), 3.6), squeeze=False)
    for axis, h in zip(axes[0], heads):
        for T, entry in result["widths"][h].items():
            axis.loglog(entry["parameters"], entry["min_nmse"], "o-",
                        label=f"T = {T} (slope {entry['slope']:.2f})")
        axis.set_title(f"h = {h}"), axis.set_xlabel("parameters (encoder + read-out)")
        axis.set_ylabel("min validation NMSE"), axis.legend(fontsize=7)
        helpers.label_log_axis(axis, entry["parameters"])
    figure.tight_layout()
    return figure


def report(result, args):
    """The printed summary of parts a–d."""
    print(f"device: {args.device}   preset: {args.preset}")
    rows = result["construction"]
    within = all(row["max_error"] <= row["bound"] for row in rows)
    print(f"a. hand-built h = D = 3 model, n = 2: every error within its bound: {within}")
    for seq_len in sorted({row["T"] for row in rows}):
        line = [row for row in rows if row["T"] == seq_len]
        print(f"   T = {seq_len:<5}" + "  ".join(
            f"beta={row['beta']:g}: {row['max_error']:.1e} (<= {row['bound']:.1e})"
            for row in line[:: max(1, len(line) // 4)]))
    print("   slope of log error against log beta (beta >= 10): " + ", ".join(
        f"T={T}: {slope:.2f}" for T, slope in result["construction_rate"].items()))
    print("b. lower-bound exponent k(T, s, D, n) (k <= 0: the bound says nothing)")
    for name, entry in result["lower_bound"].items():
        print(f"   {name:<14}" + "  ".join(f"T={T}: {k:.2f}" for T, k in entry["k"].items())
              + f"   k > 0 from T = {entry['first_nonvacuous_T']}")
    print("c. fitted slope of log NMSE against log parameters (Fig. 1b)")
    for h, by_length in result["widths"].items():
        print(f"   h = {h}: " + ", ".join(f"T={T}: {entry['slope']:+.2f}"
                                        for T, entry in by_length.items()))
    print("d. Corollary 1 (gamma = max(D1, D2)): the paper's condition D1^2 + D2^2 <= T/50, and "
          "where k > gamma already")
    for row in result["corollary"]:
        print(f"   D1={row['D1']} D2={row['D2']}: condition from T = {row['condition_T']} "
              f"(k there {row['k_at_condition_T']:.1f}); k > gamma for T > "
              f"{row['k_exceeds_gamma_beyond_T']}")


if __name__ == "__main__":
    args = config()
    started = time.perf_counter()
    result, _ = helpers.run_main(main, args)
    report(result, args)
    helpers.save_figure(plot_construction(result), "03_construction", args)
    helpers.save_figure(plot_lower_bound(result), "03_lower_bound", args)
    helpers.save_figure(plot_params_vs_nmse(result), "03_params_vs_nmse", args)
    path = helpers.save_results("03_bounds", result, args, time.perf_counter() - started)
    print(f"wrote {path} in {time.perf_counter() - started:.1f} s")

# %% [markdown]
# # 05 · Softmax saturation: more head dimension buys less, especially on long sequences
#
# Paper B (Yu, Jiang, Cheng, Yu, Li, Li, *Allocation of Parameters in Transformers*, arXiv
# 2510.03784), Section 5 (Theorem 5.1, Corollary 5.1) and Section 6. **The paper's body is not
# among our sources**: what we know of Theorem 5.1 comes from its abstract and public reviews
# ("bounded logits", "diminishing returns in head dimension, especially for long sequences").
# Everything below that goes beyond that is our reconstruction and is marked **[inferred]**.

# %%
"""05 · Softmax saturation: head dimension against sequence length (paper B, Section 5).

What it shows
    a. The bounded-logit lemma [inferred basis of Theorem 5.1]: logits with |s_i| <= B over L
       tokens give e^{-2B}/L <= p_i <= e^{2B}/L, so attention flattens towards uniform as L grows.
    b. The saturation experiment [our protocol]: a target y = sum_s softmax_s(rho(x_q, x_s)) f(x_s)
       whose query-key coupling rho has singular values sigma_k ~ k^-alpha; one attention head of
       dimension d = 1, 2, 4, ... is trained at L = 16, 64, 256. The error falls with d with
       diminishing returns; we measure whether the total gain E(1) - E(d_max) shrinks with L.
    c. The reviewers' caveat: the trained logits' spread against L, free against bounded (capped)
       logits.
    d. Low rank after training: SVD-truncate a trained head's W_Q^T W_K to rank r and measure the
       loss increase (the routine file 06 reuses).

Run it
    python 05_saturation.py            # default: 1 min 42 s on a 2-core CPU
    python 05_saturation.py --L 16,256 --head-dims 1,4,16
    python 05_saturation.py --full     # more steps and seeds (GPU not yet timed)
    python 05_saturation.py --quick    # seconds; what the tests use

Output
    results/05_saturation.json; figures/05_bounded_logits.png, 05_saturation.png,
    05_logit_spread.png, 05_truncation.png
"""
import math
import sys
import time
from pathlib import Path

import matplotlib.pyplot as plt
import torch
from torch import nn

sys.path.append(str(Path.cwd().parent))  # lets the notebook in notebooks/ find helpers.py
import helpers

model_file = helpers.load_concept("02_multihead_model")

# %% [markdown]
# ## a. The bounded-logit lemma
#
# If every logit satisfies $|s_i| \le B$, then for the softmax over $L$ tokens
#
# $$\frac{e^{-2B}}{L} \;\le\; p_i = \frac{e^{s_i}}{\sum_j e^{s_j}} \;\le\; \frac{e^{2B}}{L},$$
#
# because the numerator lies in $[e^{-B}, e^{B}]$ and the denominator in $[Le^{-B}, Le^{B}]$. So
# $L \max_i p_i \le e^{2B}$: no token can hold more than a bounded multiple of its uniform share,
# and the normalised entropy $H(p)/\log L \to 1$ as $L$ grows. An attention head with bounded
# logits can only *reweight* the uniform average, by a factor that does not grow with $L$.
# The extremes are reached by one logit at $+B$ and the rest at $-B$ (for the max), and one at
# $-B$ with the rest at $+B$ (for the min).

# %%
def lemma_extremes(B, seq_len, n_random, seed):
    """L max p, L min p and H(p)/log L: worst cases and over n_random uniform draws in [-B, B]."""
    generator = torch.Generator().manual_seed(seed)
    double = torch.float64
    random_logits = (2 * torch.rand(n_random, seq_len, generator=generator, dtype=double) - 1) * B
    worst_high = torch.full((1, seq_len), -B, dtype=double)
    worst_high[0, 0] = B                                                    # one at +B
    worst_low = torch.full((1, seq_len), B, dtype=double)
    worst_low[0, 0] = -B                                                    # one at -B
    p = torch.cat([random_logits, worst_high, worst_low]).softmax(dim=1)
    entropy = -(p * p.log()).sum(dim=1) / math.log(seq_len) if seq_len > 1 else torch.ones(1)
    return {"B": B, "L": seq_len, "L_max_p": float(seq_len * p.max()),
            "L_min_p": float(seq_len * p.min()), "upper": math.exp(2 * B),
            "lower": math.exp(-2 * B), "min_normalised_entropy": float(entropy.min()),
            "mean_normalised_entropy": float(entropy[:n_random].mean())}


# %% [markdown]
# ## b. A target with a known rank spectrum
#
# The form comes from the same group's earlier work (Jiang & Li 2024, [related]):
# $y = \sum_s \mathrm{softmax}_s\big(\rho(x_q, x_s)\big)\, f(x_s)$. We take tokens
# $x_s \sim \mathcal N(0, I_p/p)$, the query $x_q = x_L$ (the last token), a bilinear coupling
# $\rho(u, v) = u^\top M v$ with $M = U \mathrm{diag}(\sigma) V^\top$, random orthogonal $U, V$,
# $\sigma_k \propto k^{-\alpha}$ for $k \le r$ (rank $r$), scaled so that $\|M\|_F$ equals a
# chosen logit scale, and a linear value $f(x) = w^\top x$ **[inferred: our protocol]**.
#
# The model is one attention head of dimension $d$, exactly the class the target lives in:
# $\hat y = \sum_s \mathrm{softmax}_s\big((W_Q x_q)^\top W_K x_s\big)\, w_V^\top x_s$ with
# $W_Q, W_K \in \mathbb{R}^{d \times p}$. Its logits are a rank-$d$ bilinear form, so the best it
# can do is approximate $M$ by rank $d$ — the head dimension *is* the rank. With `cap` set, its
# logits are bounded: $s \mapsto B \tanh(s/B)$, which enforces the lemma's assumption.
#
# Why NMSE and MSE both: as $L$ grows the softmax average concentrates, so $\mathrm{Var}(y)$
# shrinks; a smaller raw MSE gain at large $L$ could be only that. NMSE divides the target's
# variance out.

# %%
def coupling(dim, rank, alpha, scale, seed):
    """M = U diag(sigma) V^T with sigma_k ~ k^-alpha (k <= rank), ||M||_F = scale; M and sigma."""
    generator = torch.Generator().manual_seed(seed)
    U, _ = torch.linalg.qr(torch.randn(dim, dim, generator=generator))
    V, _ = torch.linalg.qr(torch.randn(dim, dim, generator=generator))
    sigma = torch.zeros(dim)
    sigma[:rank] = torch.arange(1, rank + 1, dtype=torch.float) ** -alpha
    sigma *= scale / sigma.norm()                                           # ||M||_F = ||sigma||
    return U @ torch.diag(sigma) @ V.T, sigma


def bound_logits(logits, cap):
    """B tanh(s / B): logits squeezed into [-B, B] (unchanged when cap is None)."""
    return logits if cap is None else cap * torch.tanh(logits / cap)


def make_saturation_data(n, seq_len, dim, M, value, seed, cap=None):
    """x [n, L, p] ~ N(0, I), y [n] = sum_s softmax_s(rho(x_q, x_s)) w^T x_s with x_q = x_L and
    rho = x_q^T M x_s, bounded to [-B, B] when cap is set."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n, seq_len, dim, generator=generator)
    logits = bound_logits(torch.einsum("np,pq,nsq->ns", x[:, -1], M, x), cap)  # rho(x_q, x_s)
    return x, (logits.softmax(dim=1) * (x @ value)).sum(dim=1)              # [n, L, p], [n]


class SingleHead(nn.Module):
    """One attention head of dimension d read at the last token; optional logit cap B."""

    def __init__(self, dim, head_dim, cap=None):
        super().__init__()
        self.W_Q = nn.Parameter(torch.randn(head_dim, dim) / math.sqrt(dim))
        self.W_K = nn.Parameter(torch.randn(head_dim, dim) / math.sqrt(dim))
        self.w_V = nn.Parameter(torch.randn(dim) / math.sqrt(dim))
        self.cap = cap

    def logits(self, x):
        """(W_Q x_q)^T W_K x_s for every s: [n, L] (capped to [-B, B] when cap is set)."""
        scores = torch.einsum("dp,np,dq,nsq->ns", self.W_Q, x[:, -1], self.W_K, x)
        return bound_logits(scores, self.cap)

    def forward(self, x):
        return (self.logits(x).softmax(dim=1) * (x @ self.w_V)).sum(dim=1)


# %% [markdown]
# ## d. (used by b and c) Low rank after training
#
# The logits use $W_Q^\top W_K$ ($p \times p$, rank $\le d$). Truncating its SVD to rank $r$,
# $W_Q^\top W_K \approx U_r \Sigma_r V_r^\top$, gives a head of dimension $r$ with
# $W_Q' = \Sigma_r^{1/2} U_r^\top$ and $W_K' = \Sigma_r^{1/2} V_r^\top$; the logit scale is kept
# (no $1/\sqrt r$ re-scaling). Corollary 5.1, as the reviewers describe it, says such a low-rank
# version of a construction exists; file 06 applies this routine to every head of a deeper model.

# %%
def truncate_qk(W_Q, W_K, rank):
    """(W_Q', W_K') of head dimension `rank` with W_Q'^T W_K' = best rank-r approx. of W_Q^T W_K."""
    U, S, Vh = torch.linalg.svd(W_Q.T @ W_K)                                # [p, p] coupling
    root = S[:rank].sqrt()
    return root[:, None] * U[:, :rank].T, root[:, None] * Vh[:rank]         # [r, p], [r, p]


@torch.no_grad()
def truncation_curve(model, data, ranks):
    """Validation NMSE of the model with its QK coupling truncated to each rank."""
    curve = []
    for rank in ranks:
        truncated = SingleHead(model.W_Q.shape[1], rank, model.cap).to(model.w_V.device)
        W_Q, W_K = truncate_qk(model.W_Q, model.W_K, rank)
        truncated.W_Q.copy_(W_Q), truncated.W_K.copy_(W_K), truncated.w_V.copy_(model.w_V)
        curve.append({"rank": rank, "valid_nmse": helpers.evaluate_nmse(truncated, data)})
    return curve


# %% [markdown]
# ## Training the sweep

# %%
def train_head(run):
    """Train one (L, d, cap, seed) head; returns its errors, logit spread and truncation curve."""
    started = time.perf_counter()
    M, _ = coupling(run["dim"], run["rank"], run["alpha"], run["logit_scale"], run["data_seed"])
    value = torch.ones(run["dim"]) / math.sqrt(run["dim"])                  # f(x) = w^T x, |w| = 1
    x, y = make_saturation_data(run["n_train"] + run["n_valid"], run["L"], run["dim"], M,
                                value, run["data_seed"] + run["L"], run["cap"])
    variance = float(y[run["n_train"]:].var(unbiased=False))                # Var(y), valid split
    mean, std = y[:run["n_train"]].mean(), y[:run["n_train"]].std()
    y = (y - mean) / std                                                    # NMSE unchanged
    x, y = x.to(run["device"]), y.to(run["device"])
    train = (x[:run["n_train"]], y[:run["n_train"]])
    valid = (x[run["n_train"]:], y[run["n_train"]:])
    helpers.seed_everything(run["seed"])
    model = SingleHead(run["dim"], run["head_dim"], run["cap"]).to(run["device"])
    fit = helpers.train_regression(model, train, valid, steps=run["steps"],
                                   batch_size=run["batch_size"], lr=run["lr"], seed=run["seed"],
                                   name=f"L={run['L']} d={run['head_dim']} cap={run['cap']}")
    with torch.no_grad():
        logits = model.logits(valid[0][:500])
    return {**run, "valid_nmse": fit["valid_nmse"], "train_nmse": fit["train_nmse"],
            "valid_mse": fit["valid_nmse"] * variance, "target_variance": variance,
            "logit_std": float(logits.std(dim=1).mean()),
            "logit_max_abs": float(logits.abs().max()),
            "truncation": truncation_curve(model, valid, range(1, run["head_dim"] + 1)),
            "seconds": time.perf_counter() - started}


def summarise(results, head_dims, lengths, caps):
    """Per logit kind and L: min-over-seeds E(d) (NMSE and MSE), normalised curve, total gain."""
    table = {}
    for kind, cap in caps.items():
        for L in lengths:
            rows = {d: [r for r in results if (r["cap"], r["L"], r["head_dim"]) == (cap, L, d)]
                    for d in head_dims}
            nmse = [min(r["valid_nmse"] for r in rows[d]) for d in head_dims]
            mse = [min(r["valid_mse"] for r in rows[d]) for d in head_dims]
            gain = nmse[0] - nmse[-1]
            best = min(rows[head_dims[-1]], key=lambda r: r["valid_nmse"])
            table.setdefault(kind, {})[str(L)] = {
                "head_dims": head_dims, "nmse": nmse, "mse": mse,
                "nmse_per_seed": [[r["valid_nmse"] for r in rows[d]] for d in head_dims],
                "normalised": [(e - nmse[-1]) / gain if gain > 0 else 0.0 for e in nmse],
                "gain_nmse": gain, "gain_mse": mse[0] - mse[-1],
                "target_variance": best["target_variance"],
                "logit_std": best["logit_std"], "logit_max_abs": best["logit_max_abs"],
                "truncation": best["truncation"]}
    return table


# %% [markdown]
# ## Running it

# %%
PRESETS = {
    "quick": dict(L=[16, 64], head_dims=[1, 4], seeds=1, steps=300, n_train=2000, n_valid=500,
                  lemma_L=[4, 64, 1024]),
    "default": dict(L=[16, 64, 256], head_dims=[1, 2, 4, 8, 16], seeds=2, steps=3000,
                    n_train=4000, n_valid=1000, lemma_L=[2, 4, 16, 64, 256, 1024, 4096]),
    "full": dict(L=[16, 64, 256, 1024], head_dims=[1, 2, 4, 8, 16], seeds=3, steps=6000,
                 n_train=8000, n_valid=2000, lemma_L=[2, 4, 16, 64, 256, 1024, 4096, 16384]),
}


def build_parser():
    """Every flag of this file, with its help (python 05_saturation.py --help)."""
    parser = helpers.make_parser(__doc__.split("\n")[0])
    parser.add_argument("--L", type=helpers.int_list, help="sequence lengths, e.g. 16,64,256")
    parser.add_argument("--head-dims", type=helpers.int_list,
                        help="head dimensions d, increasing, each at most --dim, e.g. 1,2,4,8,16")
    parser.add_argument("--dim", type=helpers.positive_int, default=16,
                        help="token dimension p (default: 16)")
    parser.add_argument("--rank", type=helpers.positive_int, default=16,
                        help="rank of the target's coupling M, at most --dim (default: 16)")
    parser.add_argument("--alpha", type=helpers.positive_float, default=1.0,
                        help="spectrum decay: sigma_k ~ k^-alpha (default: 1)")
    parser.add_argument("--logit-scale", type=helpers.positive_float, default=2.0,
                        help="||M||_F = std of the target's logits (default: 2)")
    parser.add_argument("--cap", type=helpers.positive_float, default=2.0,
                        help="logit bound B of the bounded runs, target and model (default: 2)")
    parser.add_argument("--batch-size", type=helpers.positive_int, default=128,
                        help="mini-batch size (default: 128)")
    parser.add_argument("--lr", type=helpers.positive_float, default=1e-2,
                        help="peak learning rate (default: 1e-2)")
    parser.add_argument("--lemma-L", type=helpers.int_list,
                        help="sequence lengths of the lemma demo (part a)")
    helpers.add_training_flags(parser)
    return parser


def config(argv=None):
    """Parse the flags, fill the unset ones from the chosen preset, and check before any
    work that the run they describe can finish with finite numbers (else one line, exit 2)."""
    parser = build_parser()
    args = helpers.config(parser, PRESETS, argv)
    if args.dim < 2:
        helpers.refuse(parser, "--dim", "two head dimensions to compare need a token dimension "
                       "of at least 2", smallest=2)
    if args.rank > args.dim:
        helpers.refuse(parser, "--rank", f"at most --dim = {args.dim}, got {args.rank}",
                       smallest=f"--dim {args.rank}")
    if sorted(set(args.head_dims)) != args.head_dims or len(args.head_dims) < 2:
        helpers.refuse(parser, "--head-dims", "give at least two, increasing, e.g. 1,4,16",
                       smallest="1,2")
    if max(args.head_dims) > args.dim:
        helpers.refuse(parser, "--head-dims", f"each at most --dim = {args.dim}, got "
                       f"{max(args.head_dims)}", smallest=f"--dim {max(args.head_dims)}")
    if min(args.L) < 2 or min(args.lemma_L) < 2:
        flag = "--L" if min(args.L) < 2 else "--lemma-L"
        helpers.refuse(parser, flag, "a softmax over one token has nothing to choose (and the "
                       "logits' spread is undefined)", smallest=2)
    if max(args.L) > 4096 or max(args.lemma_L) > 65536:
        helpers.refuse(parser, "--L" if max(args.L) > 4096 else "--lemma-L",
                       "at most 4096 (--lemma-L: at most 65536)")
    return args


def main(args):
    """Compute parts a–d and return every number (JSON-ready)."""
    helpers.seed_everything(args.seed)
    lemma = [lemma_extremes(B, L, 200, args.seed) for B in (0.5, 1.0, 2.0) for L in args.lemma_L]
    _, sigma = coupling(args.dim, args.rank, args.alpha, args.logit_scale, args.seed)
    caps = {"free": None, "capped": args.cap}
    runs = [dict(L=L, T=L, head_dim=d, cap=cap, seed=args.seed + s, dim=args.dim,
                 rank=args.rank, alpha=args.alpha, logit_scale=args.logit_scale,
                 steps=args.steps, batch_size=args.batch_size, lr=args.lr,
                 n_train=args.n_train, n_valid=args.n_valid, data_seed=args.seed,
                 device=args.device)  # T: file 02's sweep runs the longest first
            for cap in caps.values() for L in args.L for d in args.head_dims
            for s in range(args.seeds)]
    results = model_file.run_sweep(
        runs, args.workers, train=train_head,
        label=lambda r: f"L={r['L']:<4} d={r['head_dim']:<2} cap={r['cap']} seed={r['seed']}  "
                        f"NMSE {r['valid_nmse']:.3f}")
    table = summarise(results, args.head_dims, args.L, caps)
    return {"lemma": lemma, "target_singular_values": sigma.tolist(), "saturation": table}


# %% [markdown]
# ## Figures and the printed summary

# %%
def plot_lemma(result):
    """L max p, L min p (worst cases, with the bounds) and normalised entropy against L."""
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 3.6))
    for B in sorted({row["B"] for row in result["lemma"]}):
        rows = [row for row in result["lemma"] if row["B"] == B]
        lengths = [row["L"] for row in rows]
        line, = left.loglog(lengths, [row["L_max_p"] for row in rows], "o-", label=f"B = {B:g}")
        left.loglog(lengths, [row["L_min_p"] for row in rows], "s-", color=line.get_color())
        left.loglog(lengths, [rows[0]["upper"]] * len(rows), ":", color=line.get_color())
        left.loglog(lengths, [rows[0]["lower"]] * len(rows), ":", color=line.get_color())
        right.semilogx(lengths, [row["mean_normalised_entropy"] for row in rows], "o-",
                       label=f"B = {B:g}, random logits")
    left.set_xlabel("sequence length L"), left.set_ylabel("L max p (o), L min p (s)")
    left.set_title(r"Worst cases stay within $e^{\pm 2B}$ (dotted)"), left.legend(fontsize=7)
    right.set_xlabel("sequence length L"), right.set_ylabel("H(p) / log L")
    right.set_title("Attention flattens as L grows"), right.legend(fontsize=7)
    figure.tight_layout()
    return figure


def plot_saturation(result, cap):
    """E(d) per L, raw NMSE and normalised, for free and bounded logits."""
    table = result["saturation"]
    figure, axes = plt.subplots(2, len(table), figsize=(5.5 * len(table), 7), squeeze=False)
    for column, (kind, by_length) in enumerate(table.items()):
        name = "free logits" if kind == "free" else f"logits capped at B = {cap:g}"
        for L, entry in by_length.items():
            axes[0, column].loglog(entry["head_dims"], entry["nmse"], "o-", label=f"L = {L}")
            axes[1, column].semilogx(entry["head_dims"], entry["normalised"], "o-",
                                     label=f"L = {L}")
        axes[0, column].set_title(name), axes[0, column].set_ylabel("validation NMSE")
        axes[1, column].set_ylabel("(E(d) - E(d_max)) / (E(1) - E(d_max))")
        for axis in axes[:, column]:
            helpers.label_log_axis(axis, entry["head_dims"])
            axis.set_xlabel("head dimension d"), axis.legend(fontsize=7)
    figure.tight_layout()
    return figure


def plot_logit_spread(result, cap):
    """The trained d_max model's logit std and max |logit| against L."""
    figure, axis = plt.subplots(figsize=(5.5, 3.6))
    for kind, by_length in result["saturation"].items():
        lengths = [int(L) for L in by_length]
        name = "free" if kind == "free" else f"capped, B = {cap:g}"
        line, = axis.semilogx(lengths, [e["logit_std"] for e in by_length.values()], "o-",
                              label=f"{name}: std over tokens")
        axis.semilogx(lengths, [e["logit_max_abs"] for e in by_length.values()], "s--",
                      color=line.get_color(), label=f"{name}: max |logit|")
    helpers.label_log_axis(axis, lengths)
    axis.set_xlabel("sequence length L"), axis.set_ylabel("trained logits")
    axis.set_title("Do trained logits stay bounded as L grows?"), axis.legend(fontsize=7)
    return figure


def plot_truncation(result):
    """Loss increase of the trained d_max head truncated to rank r, per L."""
    figure, axis = plt.subplots(figsize=(5.5, 3.6))
    for L, entry in result["saturation"]["free"].items():
        curve = entry["truncation"][:-1]                                    # r < d: an increase
        full = entry["truncation"][-1]["valid_nmse"]
        axis.semilogy([c["rank"] for c in curve], [c["valid_nmse"] - full for c in curve],
                      "o-", label=f"L = {L}")
    axis.set_xlabel("kept rank r"), axis.set_ylabel("NMSE(r) - NMSE(full)")
    axis.set_title("SVD truncation of a trained head (free logits)"), axis.legend(fontsize=7)
    return figure


def report(result, args):
    """The printed summary: lemma extremes, E(d) per L, the gains, the logit spreads."""
    print(f"device: {args.device}   preset: {args.preset}")
    ok = all(row["lower"] * (1 - 1e-9) <= row["L_min_p"] and row["L_max_p"] <= row["upper"]
             * (1 + 1e-9) for row in result["lemma"])
    print(f"a. e^-2B/L <= p_i <= e^2B/L held in every case: {ok}")
    for kind, by_length in result["saturation"].items():
        name = "free logits" if kind == "free" else f"logits capped at B = {args.cap:g}"
        print(f"b. {name}: min validation NMSE at d = {args.head_dims}")
        for L, entry in by_length.items():
            print(f"   L = {L:<5}" + "  ".join(f"{e:.3f}" for e in entry["nmse"])
                  + f"   gain E(1)-E(d_max): NMSE {entry['gain_nmse']:.3f}, "
                    f"MSE {entry['gain_mse']:.2e} (Var y {entry['target_variance']:.2e})"
                  + f"   logit std {entry['logit_std']:.2f}, max {entry['logit_max_abs']:.1f}")
        gains = [entry["gain_nmse"] for entry in by_length.values()]
        shrinks = all(later < earlier for earlier, later in zip(gains, gains[1:]))
        print(f"   the NMSE gain {'shrinks' if shrinks else 'does NOT shrink'} steadily with L: "
              + " -> ".join(f"{g:.3f}" for g in gains))


if __name__ == "__main__":
    args = config()
    started = time.perf_counter()
    result, _ = helpers.run_main(main, args)
    report(result, args)
    helpers.save_figure(plot_lemma(result), "05_bounded_logits", args)
    helpers.save_figure(plot_saturation(result, args.cap), "05_saturation", args)
    helpers.save_figure(plot_logit_spread(result, args.cap), "05_logit_spread", args)
    helpers.save_figure(plot_truncation(result), "05_truncation", args)
    path = helpers.save_results("05_saturation", result, args, time.perf_counter() - started)
    print(f"wrote {path} in {time.perf_counter() - started:.1f} s")

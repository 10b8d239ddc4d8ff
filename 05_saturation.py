# %% [markdown]
# # 05 · Softmax saturation: does head dimension buy less on long sequences?
#
# Paper B (*Allocation of Parameters in Transformers*, arXiv 2510.03784), Section 5 (Theorem 5.1):
# with bounded logits, a larger head dimension gives "diminishing returns ... especially for long
# sequences". **Its body is not among our sources**; what goes beyond its abstract and reviews is
# ours, marked **[inferred]**. Part a proves the bounded-logit lemma; part b trains one head on a
# target that stays as hard as $L$ grows, logits capped and free, beside a training-free oracle.
# `python 05_saturation.py` (1 min 44 s on 2 cores)

# %%
"""05 · Softmax saturation: head dimension against sequence length (paper B, Section 5)."""
import math
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import torch
from torch import nn

sys.path.append(str(Path.cwd().parent))  # lets the notebook in notebooks/ find helpers.py
import helpers
import plumbing
from plumbing import Setting, float_list, int_list, positive_float, positive_int

# %% [markdown]
# ## Settings
#
# Each row is a flag (`head_dims` is `--head-dims`) with its default, `--quick` (seconds, for the
# tests) and `--full` values (`...`: as the default); `--full` adds a second cap B = 3, whose
# $2e^{2B} = 807$ exceeds every L. A flag set by hand wins over its preset.

# %%
SETTINGS = {
    # name: Setting(default, --quick, --full, type, what it sets)
    "L": Setting([16, 32, 64, 128], [16, 32], [16, 32, 64, 128, 256], int_list,
                 "b: sequence lengths"),
    "head_dims": Setting([1, 4, 8], [1, 4], [1, 2, 4, 8, 16], int_list,
                         "b: head dimensions d, increasing, with --match-rank among them"),
    "caps": Setting([2.0], ..., [2.0, 3.0], float_list,
                    "b: logit bounds B of the capped heads, e.g. 2 or 2,3"),
    "match_rank": Setting(8, 4, 8, positive_int,
                          "b: key dimension r of the content match, below --dim"),
    "n_match": Setting(2, ..., ..., positive_int, "b: matches per sequence"),
    "sharpness": Setting(3.0, ..., ..., positive_float,
                         "b: the target's logit scale is sharpness * log L"),
    "dim": Setting(16, ..., ..., positive_int, "token dimension p"),
    "batch_size": Setting(128, ..., ..., positive_int, "sequences per training step"),
    "lr": Setting(1e-2, ..., ..., positive_float, "AdamW's peak learning rate"),
    "lemma_L": Setting([2, 4, 16, 64, 256, 1024, 4096], [4, 64, 1024],
                       [2, 4, 16, 64, 256, 1024, 4096, 16384], int_list,
                       "a: sequence lengths of the lemma demo"),
    "seeds": Setting(5, 2, 5, positive_int, "seeds per configuration, paired across d"),
    "steps": Setting(1500, 200, 2500, positive_int, "training steps per run"),
    "n_train": Setting(4000, 1000, 8000, positive_int, "training sequences per L"),
    "n_valid": Setting(1000, 300, 2000, positive_int,
                       "validation sequences per L (and the oracle's)"),
}
PARTS = {"a": (), "b": ()}  # the parts, each with the parts it needs
MAX_L = 4096         # the longest sequence a head is trained on (part b; the study 05a too)
MAX_LEMMA_L = 65536  # the longest of part a (no training)
LEMMA_BOUNDS = (0.5, 1.0, 2.0)  # the logit bounds B of the lemma demo
LEMMA_DRAWS = 200               # random logit vectors, uniform in [-B, B]^L, per (B, L)
ORACLE_SCALES = [2.0 ** k for k in range(-4, 4)]                            # 1/16 ... 8
ORACLE_SEED_OFFSET = 10_000  # the oracle's sequences: --seed + 10_000, apart from all training data
WEIGHT_DECAY = 0.0  # AdamW's weight decay when training: none, so only a cap limits the logits

# %% [markdown]
# ## a. The bounded-logit lemma
#
# **[inferred basis of Theorem 5.1]** If every logit satisfies $|s_i| \le B$, then for the
# softmax over $L$ tokens
#
# $$\frac{e^{-2B}}{L} \;\le\; p_i = \frac{e^{s_i}}{\sum_j e^{s_j}} \;\le\; \frac{e^{2B}}{L},$$
#
# because the numerator lies in $[e^{-B}, e^{B}]$ and the denominator in $[Le^{-B}, Le^{B}]$.
# Taking logs, $-\log p_i \ge \log L - 2B$ for every $i$, so the entropy obeys
#
# $$\frac{H(p)}{\log L} = \frac{-\sum_i p_i \log p_i}{\log L} \;\ge\; 1 - \frac{2B}{\log L},$$
#
# a bound that holds for *every* logit vector, not only on average. No token can hold more than
# $e^{2B}$ times its uniform share: $k$ relevant tokens receive at most
# $k e^{2B} / (k e^{2B} + L - k)$ of the attention, which falls towards 0 once $L$ is large
# compared with $k e^{2B}$. The extremes are reached by one logit at $+B$ and the rest at $-B$
# (for the max), and one at $-B$ with the rest at $+B$ (for the min).
#
# **Where the logits live.** Every file of this repository forms logits the same way
# (`helpers.attention_logits`): $s = \text{scale}\cdot(W_Q x_q)^\top (W_K x_s)$ with scale
# $1/\sqrt d$ here and in 06 (paper A's $\beta$ in 02), and "bounded" means $|s| \le B$ for
# these scaled logits, enforced as $B\tanh(s/B)$.

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
    p = torch.cat([random_logits, worst_high, worst_low]).softmax(dim=1)    # [n_random + 2, L]
    entropy = -(p * p.log()).sum(dim=1) / math.log(seq_len) if seq_len > 1 else torch.ones(1)
    return {"B": B, "L": seq_len, "L_max_p": float(seq_len * p.max()),
            "L_min_p": float(seq_len * p.min()), "upper": math.exp(2 * B),
            "lower": math.exp(-2 * B), "min_normalised_entropy": float(entropy.min()),
            "mean_normalised_entropy": float(entropy[:n_random].mean()),
            "entropy_bound": entropy_bound(B, seq_len)}


def entropy_bound(B, seq_len):
    """The deterministic floor of H(p)/log L for logits in [-B, B]: max(0, 1 - 2B/log L)."""
    return max(0.0, 1 - 2 * B / math.log(seq_len)) if seq_len > 1 else 1.0


# %%
def run_lemma(args):
    """Part a's numbers: {"lemma": one row per (B, L)}."""
    return {"lemma": [lemma_extremes(B, L, LEMMA_DRAWS, args.seed)
                      for B in LEMMA_BOUNDS for L in args.lemma_L]}


def plot_lemma(result, args):
    """L max p, L min p (worst cases, with the bounds) and normalised entropy against L."""
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 3.6))
    for B in sorted({row["B"] for row in result["lemma"]}):
        rows = [row for row in result["lemma"] if row["B"] == B]
        lengths = [row["L"] for row in rows]
        line, = left.loglog(lengths, [row["L_max_p"] for row in rows], "o-", label=f"B = {B:g}")
        for key, style in (("L_min_p", "s-"), ("upper", ":"), ("lower", ":")):
            left.loglog(lengths, [row[key] for row in rows], style, color=line.get_color())
        for key, style, label in (("mean_normalised_entropy", "o-", "random logits"),
                                  ("min_normalised_entropy", "s:", "worst case"),
                                  ("entropy_bound", "--", "bound 1 - 2B/log L")):
            right.semilogx(lengths, [row[key] for row in rows], style, color=line.get_color(),
                           label=f"B = {B:g}, {label}")
    left.set_xlabel("sequence length L"), left.set_ylabel("L max p (o), L min p (s)")
    left.set_title(r"Worst cases stay within $e^{\pm 2B}$ (dotted)"), left.legend(fontsize=7)
    right.set_xlabel("sequence length L"), right.set_ylabel("H(p) / log L")
    right.set_title("Attention flattens as L grows"), right.legend(fontsize=6)
    figure.tight_layout()
    return figure


def report_lemma(result, args):
    """Part a's line: did both bounds hold in every case?"""
    lemma_ok = all(row["lower"] * (1 - 1e-9) <= row["L_min_p"] and row["L_max_p"] <= row["upper"]
                   * (1 + 1e-9) and row["min_normalised_entropy"] >= row["entropy_bound"] - 1e-9
                   for row in result["lemma"])
    print(f"a. e^-2B/L <= p_i <= e^2B/L and H(p)/log L >= 1 - 2B/log L in every case: {lemma_ok}")


# %% [markdown]
# ## Running it
#
# Run as a script or in the notebook, the file starts its run here: it parses the flags, refuses
# sizes that cannot give finite numbers (one line naming the flag, exit code 2) and starts the
# clock; each part below records its numbers, shows its figure and prints ours beside the
# paper's where it is explained, and the last cell writes `runs/results/05_saturation.json`
# (`--out .` refreshes the committed files). `--parts a` runs only that part, into files named
# after it (`05_saturation_parts_a.json`). Imported by a later file (`helpers.load_concept`), it
# runs nothing. The studies 05a and 05b check their sizes with the same functions.

# %%
ONE_TOKEN = "a softmax over one token has nothing to choose (and the logits' spread is undefined)"
LONGEST = f"at most {MAX_L} (--lemma-L: at most {MAX_LEMMA_L})"


def config(argv=None):
    """Parse the flags (the table above), and check before any work that the run they describe
    can finish with finite numbers (else one line naming the flag, exit code 2)."""
    args = plumbing.config(SETTINGS, argv, __doc__.split("\n")[0], PARTS,
                           full="L up to 256, d up to 16, B = 2 and 3")
    refuse_first([(min(args.lemma_L) < 2, "--lemma-L", ONE_TOKEN, 2),
                  (max(args.lemma_L) > MAX_LEMMA_L, "--lemma-L", LONGEST, None)])
    return check_model_side(args)


def check_model_side(args):
    """Refuse part b's impossible sizes (the target's match, the head dimensions, L, seeds);
    returns args."""
    dim, r, n_match = args.dim, args.match_rank, args.n_match
    refuse_first([
        (dim < 2, "--dim", "a key and a value coordinate need a token dimension of at least 2", 2),
        (r >= dim, "--match-rank", f"below --dim = {dim} (the other coordinates carry the "
         f"value), got {r}", f"--dim {r + 1}"),
        *head_dims_checks("--head-dims", args.head_dims, dim),
        (r not in args.head_dims[1:], "--head-dims", f"the gain E(d_min) - E(r) needs r = "
         f"--match-rank = {r} among the head dimensions after the first",
         f"1,{r}" if r > 1 else "--match-rank 2"),
        (min(args.L) < n_match + 2, "--L", f"a sequence needs the query, {n_match} matches "
         f"(--n-match) and at least one other token", n_match + 2),
        (max(args.L) > MAX_L, "--L", LONGEST, None),
        *seeds_checks(args.seeds)])
    return args


def head_dims_checks(flag, dims, dim):
    """The checks of a list of trained head dimensions: at least two, increasing, each at most
    --dim; (refused when, flag, reason, smallest accepted value) each."""
    return [(sorted(set(dims)) != dims or len(dims) < 2, flag,
             "give at least two, increasing, e.g. 1,4", "1,2"),
            (max(dims) > dim, flag, f"each at most --dim = {dim}, got {max(dims)}",
             f"--dim {max(dims)}")]


def seeds_checks(seeds):
    """A gain's change is a paired interval over seeds: at least two."""
    return [(seeds < 2, "--seeds", "a confidence interval over seeds needs at least two", 2)]


def refuse_first(checks):
    """Refuse the first check that applies: (refused when, flag, reason, smallest accepted)."""
    plumbing.refuse_unaccepted([(flag, not refused, reason, smallest)
                                for refused, flag, reason, smallest in checks])


if __name__ == "__main__":
    args = config()
    run = plumbing.Run("05_saturation", args, PARTS)

# %%
if __name__ == "__main__" and "a" in args.parts:
    lemma = run.record(run_lemma(args))
    run.figure(plot_lemma(lemma, args), "05_bounded_logits")
    report_lemma(lemma, args)

# %% [markdown]
# **What we saw.** Both bounds held in every case (B = 0.5, 1, 2; L = 2 … 4096; the worst cases
# and 200 random draws each). The worst case approaches its bound as $L$ grows: with $B = 2$,
# $L \max p$ = 12.6 at $L = 16$ and 53.9 at $L = 4096$, against $e^{2B} = 54.6$; the normalised
# entropy of random logits rises from 0.84 to 0.94, above its floor $1 - 2B/\log L$ (0 and
# 0.52). The paper states no number here: the lemma is the standard fact its Theorem 5.1 is
# said to rest on ("bounded logits").

# %% [markdown]
# ## b. Saturation on a target that stays hard
#
# The claim is about the *model*: if its logits are bounded, its attention cannot concentrate
# on a few tokens of a long sequence, so a larger head dimension — which only sharpens *which*
# tokens score high — stops paying. An experiment can only test that if the target does not
# itself get easier as $L$ grows. This part builds one that does not (the study 05a shows on a
# second target how a shrinking gain can come from the target alone). The protocol is ours
# **[inferred]**: the paper's experiment (Section 6) is not in our sources.
#
# **The target family and the model.** Targets of one form, after the same group's earlier
# work (Jiang & Li 2024, [related]): the last token $x_q = x_L$ is the query and
#
# $$y = \sum_{s=1}^{L} \mathrm{softmax}_s\big(x_q^\top M x_s\big)\, w^\top x_s .$$
#
# The model is one attention head of dimension $d$, the class the target lives in:
# $\hat y = \sum_s \mathrm{softmax}_s\big(s_s\big)\, w_V^\top x_s$ with
# $s_s = (W_Q x_q)^\top W_K x_s / \sqrt d$, $W_Q, W_K \in \mathbb{R}^{d\times p}$, capped to
# $B\tanh(s_s/B)$ when `cap` is set. Its score is a rank-$d$ bilinear form, so the head dimension
# *is* the rank of the coupling it can represent.
#
# **A target that stays hard: retrieval by a rank-$r$ content match.** Each token is
# $x_s = [k_s \,|\, v_s]$: a key $k_s$ on the unit sphere of $\mathbb{R}^r$ and a
# value part $v_s \sim \mathcal N(0, I_{p-r})$. The query (last token) has a random key and no
# value ($v_L = 0$). In every sequence, `n_match` = 2 of the other tokens receive a copy of
# the query's key. The target attends with $M = \beta_L \begin{pmatrix} I_r & 0\\ 0 & 0
# \end{pmatrix}$, i.e. logits $\beta_L\, k_q^\top k_s$ (1 for a match, about
# $\pm 1/\sqrt r$ for the rest), with sharpness $\beta_L = 3 \log L$ so that the matches keep
# the same share of the attention at every $L$, and reads $w^\top x_s$ with
# $w = [0 \,|\, \mathbf 1/\sqrt{p-r}]$ [inferred: our protocol].
#
# Why this target can tell the options apart: $E[y \mid x_q] = 0$ (the values are independent
# of the query), so no part of $y$ is a function of the query alone, and an average over all
# tokens explains almost nothing; the head must *find* the matches. A head of dimension
# $d < r$ sees the match in only $d$ of the $r$ key directions, and more distractors come
# close in those directions as $L$ grows: its best error *rises* with $L$ (the oracle below
# shows it, and a test checks it). A free head of dimension $r$ represents the target exactly
# at every $L$. A capped one cannot concentrate on 2 of $L$ tokens once $L \gg 2e^{2B}$.

# %%
def target_weights(x, coupling, cap=None):
    """softmax_s(x_q^T M x_s) [n, L] for x [n, L, p], x_q = x_L; logits capped to [-B, B]
    when cap is set."""
    scores = torch.einsum("np,pq,nsq->ns", x[:, -1], coupling, x)           # x_q^T M x_s
    return helpers.attention_weights(scores, 1.0, cap)


def softmax_target(x, coupling, value, cap=None):
    """y [n] = sum_s softmax_s(x_q^T M x_s) w^T x_s (see target_weights)."""
    return (target_weights(x, coupling, cap) * (x @ value)).sum(dim=1)


def match_task(n, seq_len, dim, rank, n_match, sharpness, seed):
    """x [n, L, p], coupling M [p, p] and value w [p] of the part-b target."""
    generator = torch.Generator().manual_seed(seed)
    keys = torch.randn(n, seq_len, rank, generator=generator)
    keys = keys / keys.norm(dim=-1, keepdim=True)                           # on the unit sphere
    values = torch.randn(n, seq_len, dim - rank, generator=generator)
    values[:, -1] = 0                                                       # the query's value
    matched = torch.rand(n, seq_len - 1, generator=generator).argsort(dim=1)[:, :n_match]
    query_keys = keys[:, -1:].expand(-1, n_match, -1)                       # [n, k, r]
    keys.scatter_(1, matched[..., None].expand(-1, -1, rank), query_keys)   # plant the matches
    coupling = torch.zeros(dim, dim)
    coupling[:rank, :rank] = sharpness * math.log(seq_len) * torch.eye(rank)  # beta_L I_r
    value = torch.zeros(dim)
    value[rank:] = 1 / math.sqrt(dim - rank)                                # reads v_s only
    return torch.cat([keys, values], dim=-1), coupling, value


class SingleHead(nn.Module):
    """One attention head of dimension d read at the last token; optional logit cap B."""

    def __init__(self, dim, head_dim, cap=None):
        super().__init__()
        self.W_Q = nn.Parameter(torch.randn(head_dim, dim) / math.sqrt(dim))
        self.W_K = nn.Parameter(torch.randn(head_dim, dim) / math.sqrt(dim))
        self.w_V = nn.Parameter(torch.randn(dim) / math.sqrt(dim))
        self.cap = cap

    def logits(self, x):
        """s_s = (W_Q x_q)^T W_K x_s / sqrt(d) for every s, capped when cap is set: [n, L]."""
        scores = torch.einsum("dp,np,dq,nsq->ns", self.W_Q, x[:, -1], self.W_K, x)
        return helpers.attention_logits(scores, 1 / math.sqrt(self.W_Q.shape[0]), self.cap)

    def forward(self, x):
        return (self.logits(x).softmax(dim=1) * (x @ self.w_V)).sum(dim=1)  # y_hat [n]


# %% [markdown]
# Training one head: the one training loop of helpers (`helpers.fit`) on mean squared error,
# validated on held-out sequences.

# %%
def train_head(run, x, y):
    """Train one head on (x, y), the first n_train sequences (y standardised on them); the rest
    validate. Returns (model, validation data, {**run, "valid_nmse", "train_nmse"})."""
    train, valid = helpers.standardised_split(x, y, run["n_train"])
    train, valid = [tuple(t.to(run["device"]) for t in part) for part in (train, valid)]
    helpers.seed_everything(run["seed"])
    model = SingleHead(run["dim"], run["head_dim"], run["cap"]).to(run["device"])
    fit = helpers.train_regression(model, train, valid, steps=run["steps"],
                                   batch_size=run["batch_size"], lr=run["lr"],
                                   weight_decay=WEIGHT_DECAY, seed=run["seed"],
                                   name=f"{run['task']} L={run['L']} d={run['head_dim']} "
                                        f"cap={run['cap']}")
    return model, valid, {**run, "valid_nmse": fit["valid_nmse"], "train_nmse": fit["train_nmse"]}


def train_match_head(run):
    """One part-b run: its data, then a head trained on the uncapped target (train_head's
    model, validation data and numbers)."""
    x, M, value = match_task(run["n_train"] + run["n_valid"], run["L"], run["dim"],
                             run["match_rank"], run["n_match"], run["sharpness"], run["data_seed"])
    return train_head(run, x, softmax_target(x, M, value))


# %% [markdown]
# **The apparatus.** A **training-free oracle** says what rank $r$ can do at best without any
# optimisation: cut the target's own $M$ to rank $r$ by SVD, re-tune its overall scale over a
# grid (a rank-$r$ cut loses logit spread, which a larger scale may recover), apply the model's
# cap, and read out with the best single factor. At full rank and scale 1 it *is* the target,
# so its NMSE is 0. Every training run (task, L, d, cap, seed) seeds itself; a sweep trains
# them in parallel processes.
#
# **Reading the runs.** Per (L, d): every seed's validation NMSE, their minimum, mean and std.
# The **gain** is mean E(d_min) − mean E(r) (r = the target's rank). Its **change** from the
# shortest to the longest L is computed per seed (paired: one seed's runs share data and batch
# order), with a 95 % t-interval: below zero means the gain shrinks. The direct test of the
# model-side claim is the difference of the changes, capped minus free, per seed.

# %%
@torch.no_grad()
def oracle_nmse(x, y, coupling, value, rank, cap=None):
    """Best NMSE of the target's coupling cut to rank r (SVD), over ORACLE_SCALES and the best
    single read-out factor; no training."""
    U, S, Vh = torch.linalg.svd(coupling)
    cut = (U[:, :rank] * S[:rank]) @ Vh[:rank]                              # best rank-r approx.
    best = math.inf
    for scale in ORACLE_SCALES:
        prediction = softmax_target(x, scale * cut, value, cap)
        factor = (prediction @ y) / (prediction @ prediction).clamp_min(1e-30)
        best = min(best, helpers.nmse(factor * prediction, y))
    return best


def match_share(x, coupling, rank):
    """Mean share of the target's attention on the planted matches (the query itself aside)."""
    keys = x[..., :rank]
    is_match = (keys[:, :-1] - keys[:, -1:]).abs().amax(dim=-1) < 1e-6      # [n, L-1]
    return float((target_weights(x, coupling)[:, :-1] * is_match).sum(dim=1).mean())


def model_side_oracle(args):
    """Training-free oracle NMSE per kind, L and d on n_valid fresh sequences of the target,
    and the share of the target's attention that its matches receive."""
    oracle = {"free": {}, "capped": {f"{B:g}": {} for B in args.caps}, "target_match_share": {}}
    for L in args.L:
        x, M, value = match_task(args.n_valid, L, args.dim, args.match_rank, args.n_match,
                                 args.sharpness, args.seed + ORACLE_SEED_OFFSET)
        y = softmax_target(x, M, value)
        oracle["target_match_share"][str(L)] = match_share(x, M, args.match_rank)
        oracle["free"][str(L)] = {str(d): oracle_nmse(x, y, M, value, d) for d in args.head_dims}
        for B in args.caps:
            oracle["capped"][f"{B:g}"][str(L)] = {str(d): oracle_nmse(x, y, M, value, d, B)
                                                  for d in args.head_dims}
    return oracle


def sweep(args, train, runs):
    """train(run) for every run, with the settings every run shares (run_sweep: by L x steps)."""
    shared = dict(dim=args.dim, steps=args.steps, batch_size=args.batch_size, lr=args.lr,
                  n_train=args.n_train, n_valid=args.n_valid, device=args.device)
    label = lambda r: (f"{r['task']:<8} L={r['L']:<4} d={r['head_dim']:<2} cap={r['cap']} "
                       f"seed={r['seed']}  NMSE {r['valid_nmse']:.3f}")
    return plumbing.run_sweep([{**shared, **run} for run in runs], args.workers, train, label,
                             cost=lambda run: run["L"] * run["steps"])


def gain_change(results, cap, lengths, small, large):
    """Per seed: gain(L_max) - gain(L_min), gain = E(small) - E(large); a paired difference
    (helpers.paired_difference) whose verdict is "shrinks", "grows" or "no clear difference"."""
    def gains(L):
        return [a - b for a, b in zip(*(helpers.by_seed(results, "valid_nmse", cap=cap, L=L,
                                                        head_dim=d) for d in (small, large)))]
    per_seed = [late - early for early, late in zip(gains(lengths[0]), gains(lengths[-1]))]
    return helpers.paired_difference(per_seed, below="shrinks", above="grows")


def model_side_runs(args):
    """Part b's runs: every kind (free, then each cap B), L, d and seed; one seed's runs share
    their data and batch order, so they pair across d."""
    return [dict(task="match", L=L, head_dim=d, cap=cap, seed=args.seed + s,
                 data_seed=args.seed + s, match_rank=args.match_rank, n_match=args.n_match,
                 sharpness=args.sharpness)
            for cap in [None, *args.caps] for L in args.L for d in args.head_dims
            for s in range(args.seeds)]


def match_numbers(run):
    """run_sweep's unit of part b: one run's numbers (its trained head stays in its process)."""
    return train_match_head(run)[2]


def run_model_side(args):
    """Part b's numbers, {"model_side": ...}: every run trained, then summarised."""
    return summarise_model_side(sweep(args, match_numbers, model_side_runs(args)), args)


def summarise_model_side(results, args):
    """{"model_side": ...} of part b's trained runs: per kind (free, capped B) the errors,
    gains and gain changes, the capped-minus-free change, and the oracle."""
    small, rank = args.head_dims[0], args.match_rank

    def per_kind(measure):  # {"free": measure(None), "capped": {"2": measure(2.0), ...}}
        return {"free": measure(None), "capped": {f"{B:g}": measure(B) for B in args.caps}}

    def errors(cap):        # {L: {d: seed_stats of E(d)}}
        return {str(L): {str(d): helpers.seed_stats(helpers.by_seed(
            results, "valid_nmse", cap=cap, L=L, head_dim=d)) for d in args.head_dims}
            for L in args.L}

    table = per_kind(errors)
    changes = per_kind(lambda cap: gain_change(results, cap, args.L, small, rank))
    difference = [c - f for c, f in zip(changes["capped"][f"{args.caps[0]:g}"]["per_seed"],
                                        changes["free"]["per_seed"])]
    return {"model_side": {
        "capped": table["capped"], "free": table["free"],
        "gain": per_kind(lambda cap: {L: entry[str(small)]["mean"] - entry[str(rank)]["mean"]
                                      for L, entry in errors(cap).items()}),
        "gain_change": changes,
        "capped_minus_free_change": {"B": args.caps[0], **helpers.paired_difference(
            difference, below="capped below free", above="capped above free")},
        "oracle": model_side_oracle(args),
        "rank": rank, "smallest_head_dim": small}}


def by_kind(entry, free="free logits", capped="capped, B = {}"):
    """{"free logits": entry["free"], "capped, B = 2": entry["capped"]["2"], ...}"""
    return {free: entry["free"], **{capped.format(B): v for B, v in entry["capped"].items()}}


def plot_saturation(result, args):
    """Part b: mean E(d) (bars: std over seeds) and the oracle per kind, and the gain per L."""
    side = result["model_side"]
    kinds, oracles = by_kind(side), by_kind(side["oracle"])
    figure, axes = plt.subplots(1, len(kinds) + 1, figsize=(4.6 * (len(kinds) + 1), 3.8))
    for axis, (name, table) in zip(axes, kinds.items()):
        for L, entry in table.items():
            dims = [int(d) for d in entry]
            line = axis.errorbar(dims, [e["mean"] for e in entry.values()],
                                 yerr=[e["std"] for e in entry.values()], marker="o",
                                 capsize=2, label=f"L = {L}")[0]
            axis.plot(dims, list(oracles[name][L].values()), ":", color=line.get_color())
        axis.set_xscale("log"), helpers.label_log_axis(axis, dims)
        axis.set(ylim=(-0.05, 1.1), xlabel="head dimension d", title=f"{name} (dotted: oracle)",
                 ylabel="validation NMSE (mean over seeds)"), axis.legend(fontsize=7)
    for name, by_length in by_kind(side["gain"]).items():
        lengths = [int(L) for L in by_length]
        axes[-1].semilogx(lengths, list(by_length.values()), "o-", label=name)
    helpers.label_log_axis(axes[-1], lengths)
    axes[-1].set_xlabel("sequence length L")
    axes[-1].set_ylabel(f"gain E({side['smallest_head_dim']}) - E({side['rank']})")
    axes[-1].set_title("Does head dimension buy less as L grows?"), axes[-1].legend(fontsize=7)
    figure.tight_layout()
    return figure


def report_model_side(result, args):
    """Part b's lines: E(d) and oracle per kind and L, the gain changes and the verdict."""
    side = result["model_side"]
    small, rank = side["smallest_head_dim"], side["rank"]
    columns = [by_kind(entry, "free", "capped B={}")
               for entry in (side, side["oracle"], side["gain"], side["gain_change"])]
    print("b. model side (target stays hard; its matches get "
          + ", ".join(f"{v:.0%}" for v in side["oracle"]["target_match_share"].values())
          + f" of its attention at L = {args.L}): mean +- std validation NMSE over {args.seeds} "
            f"seeds at d = {args.head_dims}; [oracle]")
    for name in columns[0]:
        table, oracle, gain, change = (column[name] for column in columns)
        for L, entry in table.items():
            print(f"   {name:<12} L = {L:<4}" + "  ".join(
                f"{e['mean']:.3f}+-{e['std']:.3f} [{oracle[L][d]:.2f}]" for d, e in entry.items())
                + f"   gain E({small})-E({rank}) {gain[L]:.3f}")
        print("   " + helpers.describe_difference(
            f"{name}: gain change L={args.L[0]} -> {args.L[-1]} (95% t, paired seeds)", change))
    both = side["capped_minus_free_change"]
    appears = (side["gain_change"]["capped"][f"{args.caps[0]:g}"]["verdict"] == "shrinks"
               and side["gain_change"]["free"]["verdict"] != "shrinks" and both["ci95"][1] < 0)
    print("   " + helpers.describe_difference(f"capped (B={both['B']:g}) minus free change", both))
    print(f"   model-side saturation {'APPEARS' if appears else 'does NOT appear'} in this run: "
          + ("with capped logits the gain shrinks as L grows, with free logits it does not"
             if appears else "the capped gain does not shrink clearly while the free one holds"))


# %%
if __name__ == "__main__" and "b" in args.parts:
    model_side = run.record(run_model_side(args))
    run.figure(plot_saturation(model_side, args), "05_saturation")
    report_model_side(model_side, args)

# %% [markdown]
# **What we saw** (`results/05_saturation.json`: 5 seeds, 1,500 steps). With free logits the gain
# $E(1) - E(8)$ *grows* with $L$ (0.75 → 0.97 from $L$ = 16 to 128; paired change +0.22, 95 %
# interval [+0.19, +0.26]): rank 1 loses the matches among more distractors, rank 8 stays exact.
# With logits capped at $B = 2$ the same gain *shrinks* (0.41 → 0.09; change −0.32
# [−0.34, −0.31]) because the capped rank-8 head can no longer concentrate ($E(8)$ rises
# 0.35 → 0.88), as the lemma says. So saturation appears here exactly when the model's logits
# are bounded; the trained errors sit within 0.044 of the training-free oracle at every point.

# %% [markdown]
# ## Summary beside the paper
#
# Paper B's body is not among our sources, so it gives no number to put beside ours; each row
# names what it says. Ours: the committed default run (`results/05_saturation.json`: 5 seeds,
# 1,500 steps) and the reference run (`python 05_saturation.py --full`: L up to 256, d up to 16,
# a second cap B = 3, 2,500 steps, 5 paired seeds; 33 min 48 s; `results/05_saturation_full.json`).
#
# | claim | paper | ours | where we differ |
# |---|---|---|---|
# | bounded logits flatten attention: $e^{-2B}/L \le p_i \le e^{2B}/L$, $H(p)/\log L \ge 1 - 2B/\log L$ | "bounded logits" (Thm 5.1, as the reviews describe it) | holds in every case, B = 0.5, 1, 2, L up to 4096 | the lemma is our reading of its basis |
# | head dimension buys less on long sequences | "diminishing returns ... especially for long sequences" (abstract) | gain E(1) − E(8), L = 16 → 128: capped B = 2 0.41 → 0.09, change −0.32 [−0.34, −0.31]; free 0.75 → 0.97, +0.22 [+0.19, +0.26]; capped minus free −0.55 [−0.59, −0.50] | on this target, only when the logits are bounded |
# | the same at the reference scale (`--full`, L = 16 → 256) | — | free 0.76 → 0.98, **+0.226 [+0.202, +0.251]**; B = 2 0.41 → 0.06, **−0.350 [−0.375, −0.325]**; B = 3 0.56 → 0.14, **−0.414 [−0.434, −0.394]** | B = 3's gain shrinks entirely at L below its $2e^{2B} \approx 807$ |
#
# Head dimension buys less on long sequences **on this target only when the logits are
# bounded**: with B = 2 the rank-8 head cannot hold 2 of L tokens once L ≫ 2e^{2B} ≈ 110, while
# with free logits rank matters *more* at long L. The reference run gives the same verdicts;
# with B = 3 the gain shrinks (0.56 → 0.14), all of it at L below 2e^{2B} ≈ 807, so the lemma's
# threshold is not where saturation starts. The trained errors sit within 0.044 of the oracle
# everywhere.

# %% [markdown]
# ## Going further
#
# - [05a · The confound: a target that gets easier as L grows](05a_confound.ipynb),
#   `further/05a_confound.py`: the variance split, the oracle beside the trained heads, a
#   flat-spectrum control.
# - [05b · Low rank after training](05b_low_rank.ipynb), `further/05b_low_rank.py`: part b's
#   heads, their largest logits and their SVD truncation (Corollary 5.1).
# - [06d · Does head dimension buy less at longer contexts?](06d_head_dim_context.ipynb),
#   `further/06d_head_dim_context.py`: this part's question on trained character models, d
#   swept at three context lengths.

# %% [markdown]
# ## Commands and files
#
#     python 05_saturation.py            # default: 1 min 44 s on a 2-core CPU
#     python 05_saturation.py --L 16,128 --head-dims 1,8 --caps 2,3
#     python 05_saturation.py --full     # L up to 256, d up to 16, B = 2 and 3: 33 min 48 s
#     python 05_saturation.py --quick    # seconds; what the tests use
#
# The committed `--full` run (`results/05_saturation_full.json`) also ran the parts that are
# now the studies 05a and 05b; they draw it again with `--replay`.
#
# Output (under `runs/`, which git ignores; `--out .` refreshes the committed files):
# `results/05_saturation.json` with `"lemma"` (part a: one row per (B, L): `L_max_p`, `L_min_p`,
# their bounds, the normalised entropies and their floor) and `"model_side"` (part b: per kind,
# `"free"` and `"capped"` → B, per L and d every seed's NMSE with min, mean, std; `"gain"`,
# `"gain_change"`, `"capped_minus_free_change"`, `"oracle"`, `"rank"`, `"smallest_head_dim"`);
# `figures/05_bounded_logits.png`, `05_saturation.png`.

# %% [markdown]
# ## The run's file
#
# Every number above, with the flags that produced them and the run's wall time.

# %%
if __name__ == "__main__":
    run.finish()

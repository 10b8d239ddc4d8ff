# %% [markdown]
# # 05 · Softmax saturation: does head dimension buy less on long sequences?
#
# Paper B (Yu, Jiang, Cheng, Yu, Li, Li, *Allocation of Parameters in Transformers*, arXiv
# 2510.03784), Section 5 (Theorem 5.1, Corollary 5.1) and Section 6. **The paper's body is not
# among our sources**: what we know of Theorem 5.1 comes from its abstract and public reviews
# ("bounded logits", "diminishing returns in head dimension, especially for long sequences").
# Everything below that goes beyond that is our reconstruction and is marked **[inferred]**.
#
# The claim is about the *model*: if its logits are bounded, its attention cannot concentrate
# on a few tokens of a long sequence, so a larger head dimension — which only sharpens *which*
# tokens score high — stops paying. An experiment can only test that if the target does not
# itself get easier as $L$ grows. This file builds one that does not (part b), and shows on a
# second target how a shrinking gain can come from the target alone (part c).

# %%
"""05 · Softmax saturation: head dimension against sequence length (paper B, Section 5).

What it shows
    a. The bounded-logit lemma [inferred basis of Theorem 5.1]: logits with |s_i| <= B over L
       tokens give e^{-2B}/L <= p_i <= e^{2B}/L and H(p)/log L >= 1 - 2B/log L.
    b. Model-side saturation, the main experiment [our protocol]: a retrieval target that stays
       as hard as L grows (n_match tokens whose rank-r key matches the query's, found with a
       sharpness that grows like log L). One head of dimension d is trained at each L, with
       its logits capped (B tanh(s/B)) and free. Prediction: capped, the gain E(1) - E(r)
       shrinks with L; free, it does not. Paired seeds, 95% t-intervals, a training-free oracle.
    c. The confound, shown: a target y = sum_s softmax(x_q^T M x_s) w^T x_s with a decaying
       spectrum, whose own dependence on the query alone grows with L: the variance split, the
       training-free rank-r oracle beside the trained heads, a flat-spectrum control.
    d. The trained logits' spread, and SVD truncation of a trained head (file 06 reuses it).

Run it
    python 05_saturation.py            # default: about 2 min 30 s on a 2-core CPU
    python 05_saturation.py --L 16,128 --head-dims 1,8 --caps 2,3
    python 05_saturation.py --full     # L up to 256, d up to 16, B = 2 and 3 (GPU not timed)
    python 05_saturation.py --quick    # seconds; what the tests use

Output
    results/05_saturation.json; figures/05_bounded_logits.png, 05_saturation.png,
    05_confound.png, 05_logit_spread.png, 05_truncation.png
"""
import copy
import math
import sys
import time
from pathlib import Path

import matplotlib.pyplot as plt
import torch
from torch import nn

sys.path.append(str(Path.cwd().parent))  # lets the notebook in notebooks/ find helpers.py
import helpers

# %% [markdown]
# ## a. The bounded-logit lemma
#
# If every logit satisfies $|s_i| \le B$, then for the softmax over $L$ tokens
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
    p = torch.cat([random_logits, worst_high, worst_low]).softmax(dim=1)
    entropy = -(p * p.log()).sum(dim=1) / math.log(seq_len) if seq_len > 1 else torch.ones(1)
    return {"B": B, "L": seq_len, "L_max_p": float(seq_len * p.max()),
            "L_min_p": float(seq_len * p.min()), "upper": math.exp(2 * B),
            "lower": math.exp(-2 * B), "min_normalised_entropy": float(entropy.min()),
            "mean_normalised_entropy": float(entropy[:n_random].mean()),
            "entropy_bound": entropy_bound(B, seq_len)}


def entropy_bound(B, seq_len):
    """The deterministic floor of H(p)/log L for logits in [-B, B]: max(0, 1 - 2B/log L)."""
    return max(0.0, 1 - 2 * B / math.log(seq_len)) if seq_len > 1 else 1.0


# %% [markdown]
# ## The target family and the model
#
# Both experiments use targets of one form, after the same group's earlier work (Jiang & Li
# 2024, [related]): the last token $x_q = x_L$ is the query and
#
# $$y = \sum_{s=1}^{L} \mathrm{softmax}_s\big(x_q^\top M x_s\big)\, w^\top x_s .$$
#
# The model is one attention head of dimension $d$, the class the target lives in:
# $\hat y = \sum_s \mathrm{softmax}_s\big(s_s\big)\, w_V^\top x_s$ with
# $s_s = (W_Q x_q)^\top W_K x_s / \sqrt d$, $W_Q, W_K \in \mathbb{R}^{d\times p}$, capped to
# $B\tanh(s_s/B)$ when `cap` is set. Its score is a rank-$d$ bilinear form, so the head dimension
# *is* the rank of the coupling it can represent.
#
# A **training-free oracle** says what rank $r$ can do at best without any optimisation: cut
# the target's own $M$ to rank $r$ by SVD, re-tune its overall scale over a grid (a rank-$r$ cut
# loses logit spread, which a larger scale may recover), apply the model's cap, and read out with
# the best single factor. At full rank and scale 1 it *is* the target, so its NMSE is 0.

# %%
def target_weights(x, coupling, cap=None):
    """softmax_s(x_q^T M x_s) [n, L] for x [n, L, p], x_q = x_L; logits capped to [-B, B]
    when cap is set."""
    scores = torch.einsum("np,pq,nsq->ns", x[:, -1], coupling, x)           # x_q^T M x_s
    return helpers.attention_weights(scores, 1.0, cap)


def softmax_target(x, coupling, value, cap=None):
    """y [n] = sum_s softmax_s(x_q^T M x_s) w^T x_s (see target_weights)."""
    return (target_weights(x, coupling, cap) * (x @ value)).sum(dim=1)


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
        return (self.logits(x).softmax(dim=1) * (x @ self.w_V)).sum(dim=1)


ORACLE_SCALES = [2.0 ** k for k in range(-4, 4)]                            # 1/16 ... 8


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


# %% [markdown]
# ## b. A target that stays hard: retrieval by a rank-$r$ content match
#
# Each token is $x_s = [k_s \,|\, v_s]$: a key $k_s$ on the unit sphere of $\mathbb{R}^r$ and a
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


# %% [markdown]
# ## c. The confound: a target that concentrates on the query as $L$ grows
#
# The earlier version of this file used Gaussian tokens $x_s \sim \mathcal N(0, I_p)$, a
# coupling $M = U\mathrm{diag}(\sigma)V^\top$ with $\sigma_k \propto k^{-\alpha}$ ($\alpha = 1$,
# full rank $p = 16$, $\|M\|_F = 2$), $w = \mathbf 1/\sqrt p$, and logits capped at $B = 2$ in
# the target and the model. Its NMSE gain $E(1) - E(16)$ shrinks with $L$ — but for a reason
# that has nothing to do with the model: as $L$ grows the softmax average over many Gaussian
# tokens tends to a function of the query alone, $y \to x_q^\top M w$-like, which a rank-1 head
# represents. We show it three ways:
#
# * the **variance split** $\mathrm{Var}(y) = \mathrm{Var}(E[y \mid x_q]) +
#   E[\mathrm{Var}(y \mid x_q)]$, estimated by drawing many contexts for each fixed query
#   (population variances, so the two parts add up exactly; the first part is biased upwards
#   by (second part)/(contexts per query));
# * the **oracle** curve over ranks beside the trained heads;
# * a **flat-spectrum control** $\alpha = 0$ (all singular values equal), where "every added
#   dimension buys less" is not built into the target.

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


def spectrum_task(n, seq_len, dim, M, seed):
    """x [n, L, p] ~ N(0, I), the coupling M and the value w = 1/sqrt(p) of the part-c target."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(n, seq_len, dim, generator=generator), M, torch.ones(dim) / math.sqrt(dim)


@torch.no_grad()
def variance_split(n_queries, n_contexts, seq_len, M, cap, seed):
    """Var(y) = Var(E[y|x_q]) + E[Var(y|x_q)] for the part-c target: n_contexts fresh
    contexts for each of n_queries fixed queries."""
    dim = M.shape[0]
    x, _, value = spectrum_task(n_queries * n_contexts, seq_len, dim, M, seed)
    x = x.view(n_queries, n_contexts, seq_len, dim)
    x[:, :, -1] = x[:, :1, -1]                                              # one query per row
    y = softmax_target(x.flatten(0, 1), M, value, cap).view(n_queries, n_contexts)
    return {"query_part": float(y.mean(dim=1).var(unbiased=False)),
            "context_part": float(y.var(dim=1, unbiased=False).mean()),
            "total": float(y.var(unbiased=False))}


# %% [markdown]
# ## d. Low rank after training
#
# The logits use $W_Q^\top W_K$ ($p \times p$, rank $\le d$). Truncating its SVD to rank $r$,
# $W_Q^\top W_K \approx U_r \Sigma_r V_r^\top$, gives $W_Q' = \Sigma_r^{1/2} U_r^\top$ and
# $W_K' = \Sigma_r^{1/2} V_r^\top$, padded back to $d$ rows with zeros so that the $1/\sqrt d$
# scale (and so the logits) stay as they were. Corollary 5.1, as the reviewers describe it, says
# such a low-rank version of a construction exists; file 06 applies `truncate_qk` to every head
# of a deeper model.

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
        truncated = copy.deepcopy(model)
        W_Q, W_K = truncate_qk(model.W_Q, model.W_K, rank)
        truncated.W_Q.zero_(), truncated.W_K.zero_()
        truncated.W_Q[:rank].copy_(W_Q), truncated.W_K[:rank].copy_(W_K)
        curve.append({"rank": rank, "valid_nmse": helpers.evaluate_nmse(truncated, data)})
    return curve


# %% [markdown]
# ## Training one head
#
# Every run is one (task, L, d, cap, seed). Runs that share a seed share their data and batch
# order, so E(1) and E(r) of one seed are a *paired* comparison; the gain's change with $L$ is
# judged by a 95 % t-interval over seeds.

# %%
def task_data(run):
    """(x, y) of a run's task: n_train + n_valid sequences of length L."""
    n = run["n_train"] + run["n_valid"]
    if run["task"] == "match":
        x, M, value = match_task(n, run["L"], run["dim"], run["match_rank"], run["n_match"],
                                 run["sharpness"], run["data_seed"])
        return x, softmax_target(x, M, value)                               # an uncapped target
    M, _ = coupling(run["dim"], run["rank"], run["alpha"], run["logit_scale"], run["M_seed"])
    x, M, value = spectrum_task(n, run["L"], run["dim"], M, run["data_seed"])
    return x, softmax_target(x, M, value, run["cap"])                      # capped like the model


def train_head(run):
    """Train one head; returns its errors, logit spread and (if asked) truncation curve."""
    started = time.perf_counter()
    x, y = task_data(run)
    mean, std = y[:run["n_train"]].mean(), y[:run["n_train"]].std()
    y = (y - mean) / std                                                    # NMSE unchanged
    x, y = x.to(run["device"]), y.to(run["device"])
    train = (x[:run["n_train"]], y[:run["n_train"]])
    valid = (x[run["n_train"]:], y[run["n_train"]:])
    helpers.seed_everything(run["seed"])
    model = SingleHead(run["dim"], run["head_dim"], run["cap"]).to(run["device"])
    fit = helpers.train_regression(model, train, valid, steps=run["steps"],
                                   batch_size=run["batch_size"], lr=run["lr"], seed=run["seed"],
                                   name=f"{run['task']} L={run['L']} d={run['head_dim']} "
                                        f"cap={run['cap']}")
    with torch.no_grad():
        logits = model.logits(valid[0][:500])
    truncation = truncation_curve(model, valid, range(1, run["head_dim"])) \
        if run.get("truncate") else []                                     # ranks below d
    return {**run, "valid_nmse": fit["valid_nmse"], "train_nmse": fit["train_nmse"],
            "logit_std": float(logits.std(dim=1).mean()),
            "logit_max_abs": float(logits.abs().max()),
            "truncation": truncation, "seconds": time.perf_counter() - started}


# %% [markdown]
# ## Reading the runs
#
# Per (L, d): every seed's validation NMSE, their minimum, mean and std. The **gain** is
# mean E(d_min) − mean E(r) (r = the target's rank). Its **change** from the shortest to the
# longest L is computed per seed (paired), with a 95 % t-interval: below zero means the gain
# shrinks. The direct test of the model-side claim is the difference of the changes, capped
# minus free, per seed.

# %%
def errors_by_seed(results, task, cap, L, head_dim):
    """Validation NMSE per seed (in seed order) of one configuration."""
    return helpers.by_seed(results, "valid_nmse", task=task, cap=cap, L=L, head_dim=head_dim)


def gain_change(results, task, cap, lengths, small, large):
    """Per seed: gain(L_max) - gain(L_min), gain = E(small) - E(large); with its t-interval."""
    def gains(L):
        return [a - b for a, b in zip(errors_by_seed(results, task, cap, L, small),
                                      errors_by_seed(results, task, cap, L, large))]
    per_seed = [late - early for early, late in zip(gains(lengths[0]), gains(lengths[-1]))]
    mean, low, high = helpers.t_interval(per_seed)
    return {"per_seed": per_seed, "mean": mean, "low": low, "high": high,
            "verdict": "shrinks" if high < 0 else "grows" if low > 0 else "no clear change"}


def summarise_model_side(results, args, oracle):
    """The "model_side" object of the JSON (see the issue's format) plus its verdicts."""
    small, rank = args.head_dims[0], args.match_rank
    kinds = {"free": None, **{f"{B:g}": B for B in args.caps}}
    table, gain, changes, spread, truncation = {}, {}, {}, {}, {}
    for name, cap in kinds.items():
        table[name] = {str(L): {str(d): helpers.seed_stats(errors_by_seed(results, "match", cap,
                                                                         L, d))
                                for d in args.head_dims} for L in args.L}
        gain[name] = {L: entry[str(small)]["mean"] - entry[str(rank)]["mean"]
                      for L, entry in table[name].items()}
        changes[name] = gain_change(results, "match", cap, args.L, small, rank)
        spread[name] = {str(L): {key: helpers.by_seed(results, key, task="match", cap=cap, L=L,
                                                      head_dim=rank)
                                 for key in ("logit_std", "logit_max_abs")} for L in args.L}
    for L in args.L:
        free_heads = dict(task="match", cap=None, L=L, head_dim=args.head_dims[-1])
        curves = helpers.by_seed(results, "truncation", **free_heads)
        full = helpers.by_seed(results, "valid_nmse", **free_heads)
        truncation[str(L)] = {str(c["rank"]): [curve[c["rank"] - 1]["valid_nmse"] - nmse
                                               for curve, nmse in zip(curves, full)]
                              for c in curves[0]}
    difference = [c - f for c, f in zip(changes[f"{args.caps[0]:g}"]["per_seed"],
                                        changes["free"]["per_seed"])]
    mean, low, high = helpers.t_interval(difference)
    split = lambda d: {"free": d["free"], "capped": {k: v for k, v in d.items() if k != "free"}}
    return {"capped": split(table)["capped"], "free": table["free"],
            "gain": split(gain), "gain_change": split(changes),
            "capped_minus_free_change": {"B": args.caps[0], "per_seed": difference,
                                         "mean": mean, "low": low, "high": high},
            "oracle": oracle, "logit_spread": split(spread), "truncation_free": truncation,
            "rank": rank, "smallest_head_dim": small}


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
                                 args.sharpness, args.seed + 10_000)
        y = softmax_target(x, M, value)
        oracle["target_match_share"][str(L)] = match_share(x, M, args.match_rank)
        oracle["free"][str(L)] = {str(d): oracle_nmse(x, y, M, value, d) for d in args.head_dims}
        for B in args.caps:
            oracle["capped"][f"{B:g}"][str(L)] = {str(d): oracle_nmse(x, y, M, value, d, B)
                                                  for d in args.head_dims}
    return oracle


def confound(results, args):
    """The "confound" object: variance split, oracle curves (alpha, alpha free, alpha = 0) and
    the trained heads' NMSE on the part-c target."""
    M, _ = coupling(args.dim, args.rank, args.alpha, args.logit_scale, args.seed)
    flat, _ = coupling(args.dim, args.rank, 0.0, args.logit_scale, args.seed)
    ranks = sorted({*args.confound_head_dims, *(2 ** k for k in range(args.rank.bit_length())),
                    args.rank})                                             # 1, 2, 4, ..., rank
    out = {"variance_split": {}, "oracle": {}, "oracle_free": {}, "oracle_flat": {},
           "trained": {}, "gain_trained": {}, "gain_oracle": {}}
    for L in args.confound_L:
        out["variance_split"][str(L)] = variance_split(256, 32, L, M, args.cap, args.seed + 1)
        x, _, value = spectrum_task(args.n_valid, L, args.dim, M, args.seed + 10_000)
        for key, matrix, cap in (("oracle", M, args.cap), ("oracle_free", M, None),
                                 ("oracle_flat", flat, args.cap)):          # the same inputs
            y = softmax_target(x, matrix, value, cap)
            out[key][str(L)] = {str(r): oracle_nmse(x, y, matrix, value, r, cap) for r in ranks}
        trained = {str(d): errors_by_seed(results, "spectrum", args.cap, L, d)
                   for d in args.confound_head_dims}
        out["trained"][str(L)] = {d: helpers.seed_stats(v) for d, v in trained.items()}
        low, high = str(args.confound_head_dims[0]), str(args.confound_head_dims[-1])
        out["gain_trained"][str(L)] = (out["trained"][str(L)][low]["mean"]
                                       - out["trained"][str(L)][high]["mean"])
        out["gain_oracle"][str(L)] = out["oracle"][str(L)][low] - out["oracle"][str(L)][high]
    out["gain_change_trained"] = gain_change(results, "spectrum", args.cap, args.confound_L,
                                             args.confound_head_dims[0],
                                             args.confound_head_dims[-1])
    return out


# %% [markdown]
# ## Running it

# %%
PRESETS = {
    "quick": dict(L=[16, 32], head_dims=[1, 4], match_rank=4, caps=[2.0], seeds=2, steps=200,
                  n_train=1000, n_valid=300, confound_L=[16, 64], confound_head_dims=[1, 4],
                  lemma_L=[4, 64, 1024]),
    "default": dict(L=[16, 32, 64, 128], head_dims=[1, 4, 8], match_rank=8, caps=[2.0],
                    seeds=5, steps=1500, n_train=4000, n_valid=1000, confound_L=[16, 64, 256],
                    confound_head_dims=[1, 16], lemma_L=[2, 4, 16, 64, 256, 1024, 4096]),
    "full": dict(L=[16, 32, 64, 128, 256], head_dims=[1, 2, 4, 8, 16], match_rank=8,
                 caps=[2.0, 3.0], seeds=5, steps=6000, n_train=8000, n_valid=2000,
                 confound_L=[16, 64, 256, 1024], confound_head_dims=[1, 2, 4, 8, 16],
                 lemma_L=[2, 4, 16, 64, 256, 1024, 4096, 16384]),
}


def build_parser():
    """Every flag of this file, with its help (python 05_saturation.py --help)."""
    parser = helpers.make_parser(__doc__.split("\n")[0])
    parser.add_argument("--L", type=helpers.int_list,
                        help="part b: sequence lengths, e.g. 16,32,64,128")
    parser.add_argument("--head-dims", type=helpers.int_list,
                        help="part b: head dimensions d, increasing, including --match-rank")
    parser.add_argument("--caps", type=helpers.float_list,
                        help="part b: logit bounds B of the capped heads, e.g. 2 or 2,3")
    parser.add_argument("--match-rank", type=helpers.positive_int,
                        help="part b: key dimension r of the content match, below --dim")
    parser.add_argument("--n-match", type=helpers.positive_int, default=2,
                        help="part b: matching tokens per sequence (default: 2)")
    parser.add_argument("--sharpness", type=helpers.positive_float, default=3.0,
                        help="part b: the target's logit scale is sharpness * log L (default: 3)")
    parser.add_argument("--dim", type=helpers.positive_int, default=16,
                        help="token dimension p (default: 16)")
    parser.add_argument("--confound-L", type=helpers.int_list,
                        help="part c: sequence lengths, e.g. 16,64,256")
    parser.add_argument("--confound-head-dims", type=helpers.int_list,
                        help="part c: trained head dimensions, increasing, e.g. 1,16")
    parser.add_argument("--rank", type=helpers.positive_int, default=16,
                        help="part c: rank of the coupling M, at most --dim (default: 16)")
    parser.add_argument("--alpha", type=helpers.positive_float, default=1.0,
                        help="part c: spectrum decay sigma_k ~ k^-alpha (default: 1; the "
                             "flat control alpha = 0 is always computed)")
    parser.add_argument("--logit-scale", type=helpers.positive_float, default=2.0,
                        help="part c: ||M||_F (default: 2)")
    parser.add_argument("--cap", type=helpers.positive_float, default=2.0,
                        help="part c: logit bound B of target and model (default: 2)")
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
        helpers.refuse(parser, "--dim", "a key and a value coordinate need a token dimension "
                       "of at least 2", smallest=2)
    if args.match_rank >= args.dim:
        helpers.refuse(parser, "--match-rank", f"below --dim = {args.dim} (the other "
                       f"coordinates carry the value), got {args.match_rank}",
                       smallest=f"--dim {args.match_rank + 1}")
    if args.rank > args.dim:
        helpers.refuse(parser, "--rank", f"at most --dim = {args.dim}, got {args.rank}",
                       smallest=f"--dim {args.rank}")
    for flag, dims in (("--head-dims", args.head_dims),
                       ("--confound-head-dims", args.confound_head_dims)):
        if sorted(set(dims)) != dims or len(dims) < 2:
            helpers.refuse(parser, flag, "give at least two, increasing, e.g. 1,4", smallest="1,2")
        if max(dims) > args.dim:
            helpers.refuse(parser, flag, f"each at most --dim = {args.dim}, got {max(dims)}",
                           smallest=f"--dim {max(dims)}")
    if args.match_rank not in args.head_dims[1:]:
        helpers.refuse(parser, "--head-dims", f"the gain E(d_min) - E(r) needs r = --match-rank"
                       f" = {args.match_rank} among the head dimensions after the first",
                       smallest=f"1,{args.match_rank}" if args.match_rank > 1 else "--match-rank 2")
    if min(args.L) < args.n_match + 2:
        helpers.refuse(parser, "--L", f"a sequence needs the query, {args.n_match} matches "
                       f"(--n-match) and at least one other token", smallest=args.n_match + 2)
    if min(args.confound_L) < 2 or min(args.lemma_L) < 2:
        flag = "--confound-L" if min(args.confound_L) < 2 else "--lemma-L"
        helpers.refuse(parser, flag, "a softmax over one token has nothing to choose (and the "
                       "logits' spread is undefined)", smallest=2)
    if max(args.L + args.confound_L) > 4096 or max(args.lemma_L) > 65536:
        flag = "--lemma-L" if max(args.lemma_L) > 65536 else \
            "--L" if max(args.L) > 4096 else "--confound-L"
        helpers.refuse(parser, flag, "at most 4096 (--lemma-L: at most 65536)")
    if args.seeds < 2:
        helpers.refuse(parser, "--seeds", "a confidence interval over seeds needs at least two",
                       smallest=2)
    return args


def main(args):
    """Compute parts a–d and return every number (JSON-ready)."""
    helpers.seed_everything(args.seed)
    lemma = [lemma_extremes(B, L, 200, args.seed) for B in (0.5, 1.0, 2.0) for L in args.lemma_L]
    base = dict(dim=args.dim, steps=args.steps, batch_size=args.batch_size, lr=args.lr,
                n_train=args.n_train, n_valid=args.n_valid, device=args.device)
    # T: run_sweep starts the longest runs first; runs with the same seed share data and batches
    runs = [dict(base, task="match", L=L, T=L, head_dim=d, cap=cap, seed=args.seed + s,
                 data_seed=args.seed + s, match_rank=args.match_rank, n_match=args.n_match,
                 sharpness=args.sharpness, truncate=cap is None and d == args.head_dims[-1])
            for cap in [None, *args.caps] for L in args.L for d in args.head_dims
            for s in range(args.seeds)]
    runs += [dict(base, task="spectrum", L=L, T=L, head_dim=d, cap=args.cap,
                  seed=args.seed + s, data_seed=args.seed + s, M_seed=args.seed,
                  rank=args.rank, alpha=args.alpha, logit_scale=args.logit_scale)
             for L in args.confound_L for d in args.confound_head_dims
             for s in range(args.seeds)]
    results = helpers.run_sweep(
        runs, args.workers, train_head,
        lambda r: f"{r['task']:<8} L={r['L']:<4} d={r['head_dim']:<2} cap={r['cap']} "
                  f"seed={r['seed']}  NMSE {r['valid_nmse']:.3f}")
    return {"lemma": lemma,
            "model_side": summarise_model_side(results, args, model_side_oracle(args)),
            "confound": confound(results, args),
            "run_seconds": sum(r["seconds"] for r in results)}


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
                       color=line.get_color(), label=f"B = {B:g}, random logits")
        right.semilogx(lengths, [row["min_normalised_entropy"] for row in rows], "s:",
                       color=line.get_color(), label=f"B = {B:g}, worst case")
        right.semilogx(lengths, [row["entropy_bound"] for row in rows], "--",
                       color=line.get_color(), label=f"B = {B:g}, bound 1 - 2B/log L")
    left.set_xlabel("sequence length L"), left.set_ylabel("L max p (o), L min p (s)")
    left.set_title(r"Worst cases stay within $e^{\pm 2B}$ (dotted)"), left.legend(fontsize=7)
    right.set_xlabel("sequence length L"), right.set_ylabel("H(p) / log L")
    right.set_title("Attention flattens as L grows"), right.legend(fontsize=6)
    figure.tight_layout()
    return figure


def plot_saturation(result):
    """Part b: mean E(d) (bars: std over seeds) and the oracle per kind, and the gain per L."""
    side = result["model_side"]
    kinds = {"free logits": side["free"], **{f"capped, B = {B}": table
                                              for B, table in side["capped"].items()}}
    oracles = {"free logits": side["oracle"]["free"],
               **{f"capped, B = {B}": table for B, table in side["oracle"]["capped"].items()}}
    figure, axes = plt.subplots(1, len(kinds) + 1, figsize=(4.6 * (len(kinds) + 1), 3.8))
    for axis, (name, table) in zip(axes, kinds.items()):
        for L, entry in table.items():
            dims = [int(d) for d in entry]
            line = axis.errorbar(dims, [e["mean"] for e in entry.values()],
                                 yerr=[e["std"] for e in entry.values()], marker="o",
                                 capsize=2, label=f"L = {L}")[0]
            axis.plot(dims, list(oracles[name][L].values()), ":", color=line.get_color())
        axis.set_xscale("log"), helpers.label_log_axis(axis, dims)
        axis.set_ylim(-0.05, 1.1), axis.set_xlabel("head dimension d")
        axis.set_ylabel("validation NMSE (mean over seeds)")
        axis.set_title(f"{name} (dotted: oracle)"), axis.legend(fontsize=7)
    gains = {"free logits": side["gain"]["free"],
             **{f"capped, B = {B}": g for B, g in side["gain"]["capped"].items()}}
    for name, by_length in gains.items():
        lengths = [int(L) for L in by_length]
        axes[-1].semilogx(lengths, list(by_length.values()), "o-", label=name)
    helpers.label_log_axis(axes[-1], lengths)
    axes[-1].set_xlabel("sequence length L")
    axes[-1].set_ylabel(f"gain E({side['smallest_head_dim']}) - E({side['rank']})")
    axes[-1].set_title("Does head dimension buy less as L grows?"), axes[-1].legend(fontsize=7)
    figure.tight_layout()
    return figure


def plot_confound(result):
    """Part c: the variance split, oracle against trained, and the flat-spectrum control."""
    confound = result["confound"]
    lengths = list(confound["variance_split"])
    figure, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    query = [v["query_part"] / v["total"] for v in confound["variance_split"].values()]
    axes[0].bar(lengths, query, label="Var(E[y | x_q]): the query alone")
    axes[0].bar(lengths, [1 - q for q in query], bottom=query, label="E[Var(y | x_q)]: context")
    axes[0].set_xlabel("sequence length L"), axes[0].set_ylabel("share of Var(y)")
    axes[0].set_title("The target concentrates on the query"), axes[0].legend(fontsize=7)
    for axis, key, title in ((axes[1], "oracle", "decaying spectrum (alpha as set)"),
                             (axes[2], "oracle_flat", "flat spectrum (alpha = 0)")):
        for L in lengths:
            curve = confound[key][L]
            line, = axis.semilogx([int(r) for r in curve], list(curve.values()), ":",
                                  marker=".", label=f"L = {L}, oracle")
            if key == "oracle":
                trained = confound["trained"][L]
                axis.errorbar([int(d) for d in trained], [e["mean"] for e in trained.values()],
                              yerr=[e["std"] for e in trained.values()], fmt="o",
                              color=line.get_color(), capsize=2, label=f"L = {L}, trained")
        helpers.label_log_axis(axis, [int(r) for r in curve])
        axis.set_xlabel("rank r (oracle)" + (" / head dimension d (trained)"
                                             if key == "oracle" else ""))
        axis.set_ylabel("NMSE"), axis.set_title(title), axis.legend(fontsize=7)
    figure.tight_layout()
    return figure


def plot_logit_spread(result):
    """Part d: max |logit| of the trained d = r heads per L, each seed a dot, free and capped."""
    spread = result["model_side"]["logit_spread"]
    kinds = {"free": spread["free"], **{f"capped, B = {B}": s
                                         for B, s in spread["capped"].items()}}
    figure, axis = plt.subplots(figsize=(5.5, 3.6))
    for name, by_length in kinds.items():
        lengths = [int(L) for L in by_length]
        values = [entry["logit_max_abs"] for entry in by_length.values()]
        line, = axis.semilogx(lengths, [sum(v) / len(v) for v in values], "o-", label=name)
        for L, seeds in zip(lengths, values):
            axis.semilogx([L] * len(seeds), seeds, ".", color=line.get_color(), alpha=0.5)
    helpers.label_log_axis(axis, lengths)
    axis.set_xlabel("sequence length L"), axis.set_ylabel("max |logit| of the trained head")
    axis.set_title("Do trained logits stay bounded as L grows?"), axis.legend(fontsize=7)
    return figure


def plot_truncation(result):
    """Part d: NMSE increase of the free d_max head truncated to rank r (mean over seeds)."""
    figure, axis = plt.subplots(figsize=(5.5, 3.6))
    for L, by_rank in result["model_side"]["truncation_free"].items():
        ranks = [int(r) for r in by_rank]
        axis.plot(ranks, [sum(v) / len(v) for v in by_rank.values()], "o-", label=f"L = {L}")
    axis.set_xlabel("kept rank r"), axis.set_ylabel("NMSE(r) - NMSE(full), mean over seeds")
    axis.set_title("SVD truncation of trained free heads"), axis.legend(fontsize=7)
    return figure


def report(result, args):
    """The printed summary: the lemma, both experiments' gains per L, and the verdicts."""
    print(f"device: {args.device}   preset: {args.preset}")
    lemma_ok = all(row["lower"] * (1 - 1e-9) <= row["L_min_p"] and row["L_max_p"] <= row["upper"]
                   * (1 + 1e-9) and row["min_normalised_entropy"] >= row["entropy_bound"] - 1e-9
                   for row in result["lemma"])
    print(f"a. e^-2B/L <= p_i <= e^2B/L and H(p)/log L >= 1 - 2B/log L held in every case: "
          f"{lemma_ok}")
    side = result["model_side"]
    small, rank = side["smallest_head_dim"], side["rank"]
    kinds = {"free": (side["free"], side["oracle"]["free"], side["gain"]["free"],
                      side["gain_change"]["free"])}
    for B in side["capped"]:
        kinds[f"capped B={B}"] = (side["capped"][B], side["oracle"]["capped"][B],
                                  side["gain"]["capped"][B], side["gain_change"]["capped"][B])
    print("b. model side (target stays hard; its matches get "
          + ", ".join(f"{v:.0%}" for v in side["oracle"]["target_match_share"].values())
          + f" of its attention at L = {args.L}): mean +- std validation NMSE over {args.seeds} "
            f"seeds at d = {args.head_dims}; [oracle]")
    for name, (table, oracle, gain, change) in kinds.items():
        for L, entry in table.items():
            print(f"   {name:<12} L = {L:<4}" + "  ".join(
                f"{e['mean']:.3f}+-{e['std']:.3f} [{oracle[L][d]:.2f}]" for d, e in entry.items())
                + f"   gain E({small})-E({rank}) {gain[L]:.3f}")
        print(f"   {name}: gain change L={args.L[0]} -> {args.L[-1]}: {change['mean']:+.3f} "
              f"[{change['low']:+.3f}, {change['high']:+.3f}] (95% t, paired seeds): "
              f"{change['verdict']}")
    both = side["capped_minus_free_change"]
    appears = (side["gain_change"]["capped"][f"{args.caps[0]:g}"]["verdict"] == "shrinks"
               and side["gain_change"]["free"]["verdict"] != "shrinks" and both["high"] < 0)
    print(f"   capped (B={both['B']:g}) minus free change: {both['mean']:+.3f} "
          f"[{both['low']:+.3f}, {both['high']:+.3f}]")
    print(f"   model-side saturation {'APPEARS' if appears else 'does NOT appear'} in this run: "
          + ("with capped logits the gain shrinks as L grows, with free logits it does not"
             if appears else "the capped gain does not shrink clearly while the free one "
                             "holds"))
    confound = result["confound"]
    print(f"c. confound target (spectrum alpha = {args.alpha:g}, capped B = {args.cap:g}):")
    for L, split in confound["variance_split"].items():
        trained = confound["trained"][L]
        print(f"   L = {L:<5} Var(E[y|x_q]) / Var(y) = {split['query_part'] / split['total']:.2f}"
              f"   trained E(d) at d = {args.confound_head_dims}: "
              + " ".join(f"{e['mean']:.3f}" for e in trained.values())
              + f" (gain {confound['gain_trained'][L]:.3f}); oracle gain "
                f"{confound['gain_oracle'][L]:.3f}")
        print(f"             oracle by rank {list(confound['oracle'][L])}: alpha {args.alpha:g} "
              + " ".join(f"{v:.2f}" for v in confound["oracle"][L].values()) + " | alpha 0 "
              + " ".join(f"{v:.2f}" for v in confound["oracle_flat"][L].values()))
    change = confound["gain_change_trained"]
    print(f"   trained gain change: {change['mean']:+.3f} [{change['low']:+.3f}, "
          f"{change['high']:+.3f}]: {change['verdict']}; the query alone explains more of y "
          f"as L grows, so part of any shrinking gain here is the target getting easier")


if __name__ == "__main__":
    args = config()
    started = time.perf_counter()
    result, _ = helpers.run_main(main, args)
    report(result, args)
    helpers.save_figure(plot_lemma(result), "05_bounded_logits", args)
    helpers.save_figure(plot_saturation(result), "05_saturation", args)
    helpers.save_figure(plot_confound(result), "05_confound", args)
    helpers.save_figure(plot_logit_spread(result), "05_logit_spread", args)
    helpers.save_figure(plot_truncation(result), "05_truncation", args)
    path = helpers.save_results("05_saturation", result, args, time.perf_counter() - started)
    print(f"wrote {path} in {time.perf_counter() - started:.1f} s")

# %% [markdown]
# ## What the default run shows
#
# `python 05_saturation.py` (2 min 12 s on 2 CPU cores; 5 seeds, 1,500 steps; the numbers are
# the printed summary above, and README §05 keeps them beside the command):
#
# * **b, the model side.** With free logits the gain $E(1) - E(8)$ *grows* with $L$ (0.75 →
#   0.97 from $L$ = 16 to 128; paired change +0.22, 95 % interval [+0.19, +0.26]): rank 1
#   loses the matches among more distractors, rank 8 stays exact. With logits capped at
#   $B = 2$ the same gain *shrinks* (0.41 → 0.09; change −0.32 [−0.34, −0.31]) because the
#   capped rank-8 head can no longer concentrate ($E(8)$ rises 0.35 → 0.88), as the lemma says.
#   So saturation appears here exactly when the model's logits are bounded; the trained
#   errors sit within 0.04 of the training-free oracle at every point.
# * **c, the confound.** On the decaying-spectrum target the trained gain $E(1) - E(16)$
#   shrinks too (0.31 → 0.11 from $L$ = 16 to 256) — but the query alone explains 27 % → 86 %
#   of Var(y), so most of that is the target getting easier, not the model saturating: the
#   SVD-cut rank-1 oracle gets *worse* with $L$ (0.41 → 0.68) while the trained rank-1 head
#   gets better by learning the query-only part, which no rank-$r$ SVD cut keeps.

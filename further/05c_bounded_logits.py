# %% [markdown]
# # 05c · The bounded-logit lemma, measured (a study of 05)
#
# Lesson 05 states the lemma its saturation experiment rests on: if every logit satisfies
# $|s_i| \le B$, no softmax weight over $L$ tokens leaves $[e^{-2B}/L,\ e^{2B}/L]$, and the
# normalised entropy stays above $1 - 2B/\log L$. This study measures both sides on the worst
# cases and on random logits, from $L = 2$ to 4096, and draws how the worst case approaches its
# bound as $L$ grows. `python further/05c_bounded_logits.py` (under a second).

# %% tags=["apparatus"] jupyter={"source_hidden": true}
"""05c · The bounded-logit lemma of lesson 05, measured on worst cases and random logits."""
import math
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import torch

# the shared files from the repository root (the script's command) or from notebooks/ (its notebook)
sys.path[:0] = [str(Path.cwd()), str(Path.cwd().parent)]
import plumbing
from harness import Setting, float_list, int_list, positive_int

MAX_L = 1 << 20     # the longest sequence measured: draws x L doubles stay in memory


def config(argv=None):
    """Parse the flags of SETTINGS; a length or bound that cannot be measured ends the run."""
    return plumbing.config(SETTINGS, argv, __doc__.split("\n")[0], PARTS,
                           full="L up to 16,384", refusals=refusals)


def refusals(args):
    """[(flag, accepted, why not, smallest accepted)]: lengths in 2 .. MAX_L, bounds above 0."""
    return [("--L", min(args.L) >= 2, "a softmax over one token is 1 whatever B is", 2),
            ("--L", max(args.L) <= MAX_L, f"at most {MAX_L}", None),
            ("--bounds", min(args.bounds) > 0, "each bound B above 0", None)]


# %%
SETTINGS = {
    # name: Setting(default, --quick, --full, type, what it sets)
    "bounds": Setting([0.5, 1.0, 2.0], ..., ..., float_list, "logit bounds B"),
    "L": Setting([2, 4, 16, 64, 256, 1024, 4096], [2, 16, 256], [2, 4, 16, 64, 256, 1024, 4096,
                                                                   16384], int_list,
                 "sequence lengths L"),
    "draws": Setting(200, 50, ..., positive_int, "random logit vectors per (B, L), uniform in "
                     "[-B, B]^L"),
}
PARTS = {"lemma": ()}  # the study is one part
if __name__ == "__main__":
    args = config()
    run = plumbing.Run("05c_bounded_logits", args, PARTS)

# %% [markdown]
# ## The lemma and its proof
#
# **[inferred basis of paper B's Theorem 5.1]** For $|s_i| \le B$ the numerator of
# $p_i = e^{s_i} / \sum_j e^{s_j}$ lies in $[e^{-B}, e^{B}]$ and the denominator in
# $[Le^{-B}, Le^{B}]$, so
#
# $$\frac{e^{-2B}}{L} \;\le\; p_i \;\le\; \frac{e^{2B}}{L}.$$
#
# Taking logs, $-\log p_i \ge \log L - 2B$ for every $i$, so for every logit vector
#
# $$\frac{H(p)}{\log L} = \frac{-\sum_i p_i \log p_i}{\log L} \;\ge\; 1 - \frac{2B}{\log L}.$$
#
# The largest weight comes from one logit at $+B$ and the rest at $-B$, the smallest from one at
# $-B$ and the rest at $+B$. The code measures $L \max p$, $L \min p$ and $H(p)/\log L$ on those
# two worst cases and on `draws` random logit vectors.

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


# %% [markdown]
# Every $(B, L)$ of the settings; the printout says whether both bounds held in every case, and
# gives the worst case and the random logits' entropy at the shortest and longest $L$.

# %% tags=["apparatus"] jupyter={"source_hidden": true}
# This study's figures and printouts.
def plot_lemma(result):
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


def report_lemma(result, shown):
    """Did both bounds hold in every case? And, per B, L max p and the random logits' entropy
    at the two lengths `shown`, beside their bounds."""
    rows = result["lemma"]
    held = all(row["lower"] * (1 - 1e-9) <= row["L_min_p"]
               and row["L_max_p"] <= row["upper"] * (1 + 1e-9)
               and row["min_normalised_entropy"] >= row["entropy_bound"] - 1e-9 for row in rows)
    print(f"e^-2B/L <= p_i <= e^2B/L and H(p)/log L >= 1 - 2B/log L in all {len(rows)} "
          f"cases: {held}; from L = {shown[0]} to {shown[1]}:")
    for B in sorted({row["B"] for row in rows}):
        first, last = ([row for row in rows if row["B"] == B and row["L"] == L][0] for L in shown)
        print(f"   B = {B:g}: L max p {first['L_max_p']:.3g} -> {last['L_max_p']:.3g} (bound "
              f"e^2B = {first['upper']:.3g}); H(p)/log L of random logits "
              f"{first['mean_normalised_entropy']:.2f} -> {last['mean_normalised_entropy']:.2f} "
              f"(floor {first['entropy_bound']:.2f} -> {last['entropy_bound']:.2f})")


# %%
if __name__ == "__main__":
    lemma = run.record({"lemma": [lemma_extremes(B, L, args.draws, args.seed)
                                  for B in args.bounds for L in args.L]})
    run.figure(plot_lemma(lemma), "05c_bounded_logits")
    report_lemma(lemma, shown=(min(args.L), max(args.L)))
    run.finish()

# %% [markdown]
# **What we saw** (`results/05c_bounded_logits.json`). Both bounds held in every case. The worst
# case approaches its bound as $L$ grows: with $B = 2$, $L \max p$ = 1.96 at $L = 2$ and 53.9 at
# $L = 4096$, against $e^{2B} = 54.6$; the normalised entropy of random logits rises from 0.74
# to 0.94, above its floor $1 - 2B/\log L$ (0.00 and 0.52). At $B = 2$, two tokens can hold at
# most half of the attention once $L \ge 2 + 2e^{2B} \approx 111$: the threshold lesson 05 sets
# beside its trained heads. The paper states no number here.
#
# Back to [lesson 05](05_saturation.ipynb).

# %% [markdown]
# # Exercises · 05 Softmax saturation
#
# Beside `05_saturation.py` and paper B §5 (Theorem 5.1, as the reviews describe it).

# %%
import os
import sys
from pathlib import Path

here = Path(__file__).parent if "__file__" in globals() else Path.cwd()
clone = os.environ.get("HEADS_REPOSITORY")           # a clone's path, when the file is elsewhere
sys.path[:0] = [str(here)] + ([str(Path(clone).expanduser() / "exercises")] if clone else [])
try:
    import check  # noqa: E402
except ModuleNotFoundError as missing:               # one line, not a traceback
    if missing.name == "check":                      # a lone copy of this file
        sys.stderr.write("this exercise needs check.py beside it or in "
                         "$HEADS_REPOSITORY/exercises: put it back in its folder, or set "
                         "HEADS_REPOSITORY=/path/to/your/clone\n")
    else:                                            # torch, numpy, ...: not this Python's
        sys.stderr.write(f"{missing.name} is not installed in this Python ({sys.executable}): "
                         f"activate the course's environment, or pick its kernel in Jupyter\n")
    raise SystemExit(2)
import math  # noqa: E402

# %% [markdown]
# ## 5.1 The bounded-logit band · easy · 5 min
#
# If every logit satisfies $|s_i| \le B$, every softmax weight over $L$ tokens lies in a band.
# Derive it (bound the numerator $e^{s_i}$ and the denominator $\sum_j e^{s_j}$) and return
# `(lower, upper)`.
#
# Any band that holds every such weight and is at least as tight as the simple one passes.
#
# *Hint:* bound the numerator and the denominator separately, each by the largest and smallest
# value a logit can take.

# %%
def softmax_band(B, L):
    ### BEGIN SOLUTION
    return math.exp(-2 * B) / L, math.exp(2 * B) / L
    ### END SOLUTION


check.ex05_softmax_band(softmax_band)

# %% [markdown]
# ## 5.2 The entropy floor · medium · 10 min
#
# From 5.1, $-\log p_i \ge \log L - 2B$ for every $i$. Turn that into a lower bound on the
# normalised entropy $H(p)/\log L$ (never below 0; for $L = 1$ say 1).
#
# *Hint:* $H(p) = \sum_i p_i (-\log p_i)$ and $\sum_i p_i = 1$.

# %%
def entropy_floor(B, L):
    ### BEGIN SOLUTION
    return max(0.0, 1 - 2 * B / math.log(L)) if L > 1 else 1.0
    ### END SOLUTION


check.ex05_entropy_floor(entropy_floor)

# %% [markdown]
# ## 5.3 The confound: how much of y does the query alone explain? · medium · 10 min
#
# The study 05a (`further/05a_confound.py`, one step off file 05) shows a target that gets
# *easier* as $L$ grows, because the softmax average over many tokens tends to a function of
# the query alone. It measures this with the law of total variance: for `y` of shape `[Q, C]`
# (row $q$: one fixed query with $C$ fresh contexts),
# $\mathrm{Var}(y) = \mathrm{Var}(\mathbb E[y \mid q]) + \mathbb E[\mathrm{Var}(y \mid q)]$.
# Return `(query_part, context_part)`, each with the population variance (divide by the count).
# Then read `results/05a_confound.json` (the committed run the study replays) →
# `confound` → `variance_split`: what share does the query part take at L = 16 and at L = 256?
#
# *Hint:* a row's mean estimates $\mathbb E[y \mid q]$.

# %%
def variance_parts(y):
    ### BEGIN SOLUTION
    return float(y.mean(dim=1).var(unbiased=False)), float(y.var(dim=1, unbiased=False).mean())
    ### END SOLUTION


check.ex05_variance_split(variance_parts)

# %%
check.summary()

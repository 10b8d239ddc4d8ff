# %% [markdown]
# # Exercises · 03 What the heads cost: the upper and the lower bound
#
# Beside `03_bounds.py` and paper A, Theorem 2.

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
import torch  # noqa: E402 (3.3's weights are set under torch.no_grad())

# %% [markdown]
# ## 3.1 The lower-bound exponent · easy · 5 min
#
# Theorem 2(2): with $s < D$ heads, the parameter count must grow like $(1/\varepsilon)^{k}$ with
# $k = \frac{T/4 - s - D + 1}{(n + 1)s + 1} - 1$ ($n$ the head dimension). Write $k$.

# %%
def exponent_k(seq_len, s, D, n):
    ### BEGIN SOLUTION
    return (seq_len / 4 - s - D + 1) / ((n + 1) * s + 1) - 1
    ### END SOLUTION


check.ex03_exponent(exponent_k)

# %% [markdown]
# ## 3.2 When does the bound say anything? · medium · 10 min
#
# The bound is vacuous while $k \le 0$. Return the smallest whole $T$ with $k > 0$. For the
# paper's sizes ($s = 3$, $D = 4$, $n = 8$), is it below or above the T = 128 of its experiments?
#
# *Hint:* solve $k > 0$ for $T$ by hand, or loop over $T$ with your `exponent_k`.

# %%
def first_useful_T(s, D, n):
    ### BEGIN SOLUTION
    T = 1
    while exponent_k(T, s, D, n) <= 0:
        T += 1
    return T
    ### END SOLUTION


check.ex03_first_useful_T(first_useful_T)

# %% [markdown]
# ## 3.3 Set the weights of the hand-built h = D layer · hard · 15 min
#
# The proof of Theorem 2(1) builds one layer with $h = D$ heads of dimension 2 on tokens
# $\hat x(t) = (\Psi_1, r_1, \dots, \Psi_D, r_D)$ (width $2D$) and the CLS $c_0 = e_1$. Head $i$:
# $W_{Q,i} c_0 = (1, 0)$, a key $-\Psi_i + r_i$ in its first coordinate, and a value that copies
# $(\Psi_i, r_i)$; $W_O$ is the identity. Fill `layer.W_Q`, `W_K`, `W_V` (each `[D, 2, 2D]`) and
# `layer.W_O.weight` in place.
#
# *Hint:* start from zeros (`with torch.no_grad(): p.zero_()`), then set single entries.

# %%
def hand_built_weights(layer, D):
    ### BEGIN SOLUTION
    import torch
    with torch.no_grad():
        for p in (layer.W_Q, layer.W_K, layer.W_V):
            p.zero_()
        for i in range(D):
            layer.W_Q[i, 0, 0] = 1.0
            layer.W_K[i, 0, 2 * i] = -1.0
            layer.W_K[i, 0, 2 * i + 1] = 1.0
            layer.W_V[i, 0, 2 * i] = 1.0
            layer.W_V[i, 1, 2 * i + 1] = 1.0
        layer.W_O.weight.copy_(torch.eye(2 * D))
    ### END SOLUTION


check.ex03_hand_built_head(hand_built_weights)

# %%
check.summary()

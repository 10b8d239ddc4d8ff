# %% [markdown]
# # Exercises · 04 One head, a wide embedding, and the FFN does the rest
#
# Beside `04_single_head_memorization.py`, its study `further/04a_cost_accounting.py` and
# paper A, Theorem 2(3) and Lemmas 8–9.

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
import torch  # noqa: E402

# %% [markdown]
# ## 4.1 The memorising embedding · medium · 10 min
#
# Token $t$ becomes $e_t \otimes x(t)$: a vector of length $T d$ that is zero except for block
# $t$, which holds $x(t)$. For `x` of shape `[B, T, d]` return `[B, T, T*d]`.
#
# *Hint:* `torch.eye(T)` gives the $e_t$; broadcast and `reshape`.

# %%
def memorising_tokens(x):
    ### BEGIN SOLUTION
    batch, seq_len, dim = x.shape
    blocks = torch.eye(seq_len, dtype=x.dtype)
    return (blocks[None, :, :, None] * x[:, None, :, :]).reshape(batch, seq_len, seq_len * dim)
    ### END SOLUTION


check.ex04_memorising_tokens(memorising_tokens)

# %% [markdown]
# ## 4.2 Why one uniform head is enough · easy · 5 min
#
# With uniform attention the head outputs the *average* of the memorising tokens. Show that
# the whole sequence can be read back from it: given that average (`[B, T*d]`), $T$ and $d$,
# return `x` (`[B, T, d]`).
#
# *Hint:* each block appears in exactly one token.

# %%
def read_back(average, seq_len, dim):
    ### BEGIN SOLUTION
    return (average * seq_len).reshape(-1, seq_len, dim)
    ### END SOLUTION


check.ex04_read_back(read_back)

# %% [markdown]
# ## 4.3 What the FFN pays: Lemma 9's max network · medium · 10 min
#
# After memorising, the FFN must compute every $\max_t$ itself. Lemma 9 does it with a ReLU
# network on $T$ inputs in $[0, 1]$ and $n$ levels (`lemma9_network(T, n)` in study 04a,
# `further/04a_cost_accounting.py`; $n$ grows like $1/\varepsilon$). Build one, look at its
# weight matrices, and return how many weights (not biases) are nonzero, as a formula in $T$ and
# $n$. How does it grow with $T$ — and what does the $h = D$ route of file 03 pay instead?
#
# *Hint:* `[(p != 0).sum() for p in network.parameters()]` for a few small T and n, then find
# the pattern.

# %%
def lemma9_weights_used(seq_len, levels):
    ### BEGIN SOLUTION
    return 3 * seq_len * levels + 2 * levels
    ### END SOLUTION


check.ex04_lemma9_weights(lemma9_weights_used)

# %%
check.summary()

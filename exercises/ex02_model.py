# %% [markdown]
# # Exercises · 02 One attention layer, h heads, and the drop at h = D
#
# Beside `02_multihead_model.py` and paper A §3 (eq. 4–5) and §6 (Tables 2–4). Every cell runs
# in seconds; exercise 2.2 reads the committed results instead of training.

# %%
import math
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

# %% [markdown]
# ## 2.1 Count parameters as paper A does · medium · 10 min
#
# Paper A's parameter counts (Table 3) include the token encoder, the read-out FFN $\hat F$ and
# every stacked layer's FFN — but not the attention weights $W_Q, W_K, W_V, W_O$ nor the CLS
# vector. Given lesson 02's `MultiHeadModel` (attributes `encoder`, `readout`) or study 02d's
# two-layer `StackedModel` (also `ffns`, the FFNs between its layers), count the weights and
# biases the paper counts.
#
# *Hint:* `sum(p.numel() for p in module.parameters())`, for each part;
# `getattr(model, "ffns", [])` is empty for the one-layer model.

# %%
def paper_parameter_count(model):
    ### BEGIN SOLUTION
    parts = (model.encoder, model.readout, *getattr(model, "ffns", []))
    return sum(p.numel() for part in parts for p in part.parameters())
    ### END SOLUTION


check.ex02_parameter_count(paper_parameter_count)

# %% [markdown]
# ## 2.2 Where does the knee move for D = 3? · easy · 5 min
#
# With D = 4 the error drops most from h = 3 to h = 4. Predict the head count at which it drops
# most when the task retrieves D = 3 tokens, then let the check read
# `results/02d_variants_D3.json` (made by `python further/02d_variants.py --D 3`, 4,000 steps)
# and compare. Write your reason too, in a sentence: the check compares your number only beside
# it.
#
# *Hint:* what does each head do in the D = 4 model?

# %%
### BEGIN ANSWER predicted_knee
predicted_knee = 3
### END ANSWER
### BEGIN ANSWER because_2_2
because_2_2 = "each head retrieves one of the D tokens, so the error drops once h reaches D = 3"
### END ANSWER

check.ex02_knee_for_D3(predicted_knee, because_2_2)

# %% [markdown]
# **Reveal, on the instructor's cue** (at home: once your prediction and its reason are
# written): the committed answer, and whether your recorded prediction matches it.

# %%
check.reveal("2.2")

# %% [markdown]
# ## 2.3 One head per retrieved token? · easy · 5 min
#
# Study 02f records, for lesson 02's best h = 3 and h = 4 models, how much attention each head
# puts on the arg-max token of each direction $a_i$ (`results/02f_attention_maps.json` →
# `mechanism` → `attention_on_targets`, rows = heads, columns = $a_i$; also
# `figures/02f_attention.png`). Say a
# direction *has a head of its own* when some head attends to its token more than to any other
# direction's. Given such a matrix (a list of rows), return how many directions have one.
# Then look at the two committed maps: what does h = 3 lack?
#
# *Hint:* for each head (row), which column is largest?

# %%
def directions_covered(attention):
    ### BEGIN SOLUTION
    return len({max(range(len(row)), key=row.__getitem__) for row in attention})
    ### END SOLUTION


check.ex02_directions_covered(directions_covered)

# %% [markdown]
# ## 2.4 The reversal score · medium · 10 min
#
# Paper A (§6.2) asks whether more heads do *better* at larger $T$. For the errors
# $e_1, \dots, e_m$ of one $h$ at increasing $T$ its reversal score is
# $R = \sum_{i<j} \max(e_i - e_j, 0) \,/\, (\max_k e_k - \min_k e_k)$ (0 when all are equal):
# 0 when the error never falls as $T$ grows. Write it; the check runs it on the paper's own
# Tables 2 and 3.
#
# *Hint:* two nested loops over the pairs $i < j$.

# %%
def reversal_score(errors):
    ### BEGIN SOLUTION
    spread = max(errors) - min(errors)
    if spread == 0:
        return 0.0
    return sum(max(errors[i] - errors[j], 0.0) for i in range(len(errors))
               for j in range(i + 1, len(errors))) / spread
    ### END SOLUTION


check.ex02_reversal_score(reversal_score)

# %% [markdown]
# ## 2.5 Decades on a log axis · easy · 10 min
#
# Lesson 02's figure draws the error on a logarithmic axis against $h$: equal vertical steps are
# equal factors, and one decade is a factor of 10. For the errors $e_1, \dots, e_m$ of one $T$ at
# $h = 1 \dots m$ (a list), return $\log_{10}(e_{h-1} / e_h)$ for $h = 2 \dots m$: how many
# decades each added head buys (negative where the error rises). The check tries it on made-up
# errors, then prints yours for lesson 02's committed means at each $T$. Find the drop at
# $h = D = 4$ in the figure and in your list: how many decades is it, and how many do the heads
# below $D$ buy?
#
# *Hint:* `math.log10` of a ratio.

# %%
def decades_dropped(errors):
    ### BEGIN SOLUTION
    return [math.log10(before / after) for before, after in zip(errors, errors[1:])]
    ### END SOLUTION


check.ex02_decades(decades_dropped)

# %%
check.summary()

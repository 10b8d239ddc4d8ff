# %% [markdown]
# # Exercises · 06 Allocating heads and head dimensions across layers
#
# Beside `06_allocation.py`, study 06g and paper B §4 and §6. Exercise 6.2 reads the committed
# results.

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

# %% [markdown]
# ## 6.1 An allocation's attention parameters · easy · 5 min
#
# A layer with $H$ heads of dimension $d$ in a model of width $E$ has $W_Q, W_K, W_V$ of shape
# $[H, d, E]$ and $W_O$ of shape $[E, H d]$ (no biases). For `layers = [(H_1, d_1), ...]`
# return the total number of attention parameters.
#
# *Hint:* count the entries of each of the four matrices of one layer first.

# %%
def attention_parameters(layers, width):
    ### BEGIN SOLUTION
    return 4 * width * sum(heads * head_dim for heads, head_dim in layers)
    ### END SOLUTION


check.ex06_attention_parameters(attention_parameters)

# %% [markdown]
# ## 6.2 Which allocation wins where? · easy · 5 min
#
# Lesson 06 compares front-loaded and back-loaded two-layer models at equal budget on
# "match-aggregate" (the content match must happen in layer 1) and "prefix-match" (in layer 2).
# Before you look at RESULTS.md §06: which allocation should win each task? Return its name, and
# write your reason in a sentence: the check compares your choice only beside it.

# %%
def winner(task):
    ### BEGIN SOLUTION
    return {"match-aggregate": "front-loaded", "prefix-match": "back-loaded"}[task]
    ### END SOLUTION


# %%
### BEGIN ANSWER because_6_2
because_6_2 = "the rich head dimension belongs to the layer that does the content match"
### END ANSWER

check.ex06_winners(winner, because_6_2)

# %% [markdown]
# **Reveal, on the instructor's cue** (at home: once your prediction and its reason are
# written): the committed answer, and whether your recorded prediction matches it.

# %%
check.reveal("6.2")

# %% [markdown]
# ## 6.3 So is "front-load" a rule? · medium · 10 min · written
#
# Paper B recommends giving early layers more. In two or three sentences: what do the two tasks
# say about that advice, and what would you need to know about a task before allocating?

# %%
### BEGIN ANSWER answer_6_3
answer_6_3 = """Not in general: the rich head dimension must sit in the layer that does the
rank-p content match. Front-loading wins when that match happens in layer 1 (match-aggregate)
and loses when it can only happen in layer 2 (prefix-match). Before allocating one needs to know
where in the computation the high-rank retrieval happens."""
### END ANSWER

check.ex06_why(answer_6_3)

# %% [markdown]
# ## 6.4 How many heads at a fixed budget? · easy · 5 min
#
# Study 06g (a study of lesson 06) fixes the attention budget $H d = 32$ for a last token that
# carries $M = 4$ queries into 16 stored keys of dimension $p = 8$, and trains $H = 1, 4, 16$ heads
# of dimension $32 / H$. Predict the $H$ with the lowest error, then let the check read the
# committed trained models and the training-free oracle. Write your reason too, in a sentence.
#
# *Hint:* what goes wrong with too few heads, and what with too small a head dimension?

# %%
### BEGIN ANSWER predicted_best_heads
predicted_best_heads = 4
### END ANSWER
### BEGIN ANSWER because_6_4
because_6_4 = ("one head per query: fewer heads must mix queries, more heads leave each too "
               "small a dimension to match a key")
### END ANSWER

check.ex06_best_heads(predicted_best_heads, because_6_4)

# %% [markdown]
# **Reveal, on the instructor's cue** (at home: once your prediction and its reason are
# written): the committed answer, and whether your recorded prediction matches it.

# %%
check.reveal("6.4")

# %%
check.summary()

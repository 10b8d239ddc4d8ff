# %% [markdown]
# # Exercises · 07 The head count on real data
#
# Beside `07_real_data.py`, studies 07c and 07a, and paper A §6.2 (Tables 6, 8–9). The checks
# read the committed results (the `--full` reference run when it is committed, else study 07c's
# or 07a's default run); nothing trains.

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
# ## 7.1 More heads, or a wider model? · medium · 10 min
#
# The paper's protocol fixes the head dimension, so more heads also means a wider model. Study 07c
# adds a sweep at a fixed width, where every head count has the same parameters, and reports the
# paired gain in training accuracy from h = 1 to h = 8 with its 95 % interval
# (`results/07c_fixed_width_full.json`, its `--full` run, or where that is not committed its
# default run, `results/07c_fixed_width.json` → `train_gain_with_heads` → `fixed-width` → the
# longest T). Read it: does the interval exclude 0, so that this run shows a
# head-count effect beyond width? Answer True or False, and say in a sentence what in the
# interval tells you (the check compares your answer only beside it).
#
# *Hint:* a difference is clear only when its whole interval lies on one side of 0.

# %%
### BEGIN ANSWER fixed_width_gain_is_clear
fixed_width_gain_is_clear = True
### END ANSWER
### BEGIN ANSWER because_7_1
because_7_1 = "both ends of the fixed-width interval are above 0"
### END ANSWER

check.ex07_fixed_width(fixed_width_gain_is_clear, because_7_1)

# %% [markdown]
# **Reveal, on the instructor's cue** (at home: once your prediction and its reason are
# written): the committed answer, and whether your recorded prediction matches it.

# %%
check.reveal("7.1")

# %% [markdown]
# ## 7.2 How much of the rise is width? · medium · 5 min · written
#
# The same file also reports `gain_difference`: per seed, the gain of the paper's protocol
# minus the gain at a fixed width (the same seeds). In one or two sentences: what does this
# paired difference measure that the two separate intervals cannot?

# %%
### BEGIN ANSWER answer_7_2
answer_7_2 = """It measures directly how much of the paper-protocol gain from more heads comes
with the width that grows with h: the extra gain over the fixed-width sweep, per seed, with its
own interval. Two separate intervals that both include 0 say nothing about their difference."""
### END ANSWER

check.ex07_width_share(answer_7_2)

# %% [markdown]
# ## 7.3 How much of the rise is width, on text? · easy · 10 min
#
# The text study (`python further/07a_text_retrieval.py`) runs both sweeps on retrieval among hard
# negatives. Its JSON's `text` → `train_gain_with_heads` → sweep → T → `per_seed` holds, per
# seed, the gain in training accuracy from the fewest to the most heads (the same seeds in both
# sweeps). Write `width_share(text)`: for every T, the share of the paper-protocol gain that is
# gone at a fixed width, $\overline{a - b} / \bar a$ over seeds, with $a$ the fixed-head-dim
# gains and $b$ the fixed-width gains (leave out a T whose $\bar a$ is 0: no share there). The
# check tries it on made-up numbers, then shows your shares on the committed run.
#
# *Hint:* a share of 1 says all of the rise came with the width; 0, none of it.

# %%
def width_share(text):
    ### BEGIN SOLUTION
    gains = text["train_gain_with_heads"]
    shares = {}
    for T, protocol in gains["fixed-head-dim"].items():
        a, b = protocol["per_seed"], gains["fixed-width"][T]["per_seed"]
        if sum(a) != 0:
            shares[T] = sum(x - y for x, y in zip(a, b)) / sum(a)
    return shares
    ### END SOLUTION


check.ex07_text_width_share(width_share)

# %% [markdown]
# ## 7.4 What two seeds can say · medium · 10 min
#
# Each lesson's paired difference (`helpers.paired_difference`) is the mean $\bar x$ of $n$
# per-seed differences with the 95 % t-interval $\bar x \pm t_{0.975,\,n-1}\, s / \sqrt n$,
# $s$ the sample standard deviation (divided by $n - 1$). Write `interval_95(differences)`,
# returning `(low, high)` for $n \ge 2$; `scipy.stats.t.ppf(0.975, n - 1)` gives $t$ (12.71 for
# $n = 2$, 2.78 for $n = 5$). The check tries it on made-up differences, then applies yours to
# lesson 07's gain from $h = 1$ to 8 at $T = 64$: its default run's 2 seeds and the 5 of the
# `--full` run of its sweep (study 07c's). What can each conclude, and why is the 2-seed interval
# so wide?
#
# *Hint:* compare $t$ and $\sqrt n$ for $n = 2$ and for $n = 5$.

# %%
def interval_95(differences):
    ### BEGIN SOLUTION
    import scipy.stats
    n = len(differences)
    mean = sum(differences) / n
    std = math.sqrt(sum((x - mean) ** 2 for x in differences) / (n - 1))
    half = scipy.stats.t.ppf(0.975, n - 1) * std / math.sqrt(n)
    return mean - half, mean + half
    ### END SOLUTION


check.ex07_interval(interval_95)

# %%
check.summary()

# %% [markdown]
# # Exercises · 01 The generalized D-retrieval task
#
# Beside `01_retrieval_task.py` and paper A §4 (eq. 7–9). Each exercise ends with a check that
# prints one line: `[ok]`, `[not yet]` (with how yours differs), `[to do]` or `[error]`.
# Write your code where it says so; nothing here trains a model, every cell runs in seconds.

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
import torch  # noqa: E402

# %% [markdown]
# ## 1.1 NMSE · easy · 5 min
#
# Paper A reports the normalised mean squared error (paper B reports losses),
# $\mathrm{NMSE} = \frac{1}{n}\sum_k (\hat y_k - y_k)^2 \,/\, \mathrm{Var}(y)$, with the
# population variance (divide by $n$). Write it for two tensors of shape `[n]`.
#
# *Hint:* `torch.mean`, and `torch.var(..., unbiased=False)`.

# %%
def nmse(prediction, target):
    ### BEGIN SOLUTION
    return float(torch.mean((prediction - target) ** 2) / torch.var(target, unbiased=False))
    ### END SOLUTION


check.ex01_nmse(nmse)

# %% [markdown]
# ## 1.2 Why not raw MSE? · easy · 5 min · written
#
# `python 01_retrieval_task.py` prints Var(y) for T = 8 … 512. Why would a table of raw MSE
# against T mislead, and what does dividing by Var(y) fix? Two or three sentences.
#
# *Hint:* what happens to the maximum of more and more Gaussian samples?

# %%
### BEGIN ANSWER answer_1_2
answer_1_2 = """The target is a sum of maxima over T tokens, and the maximum of more Gaussian
samples is more concentrated: Var(y) falls from 3.70 at T = 8 to 1.31 at T = 512. A predictor
that outputs the mean therefore has a smaller raw MSE at large T without having learned
anything. NMSE divides by Var(y), so 1 always means 'no better than the mean' at every T."""
### END ANSWER

check.ex01_why_nmse(answer_1_2)

# %% [markdown]
# ## 1.3 The retrieval target of eq. 8 · medium · 10 min
#
# Paper A's synthetic instance: $y = \sum_{i=1}^{D} \max_{t} a_i^\top x(t)$ for inputs
# `x` of shape `[n, T, d]` and directions `a` of shape `[D, d]`. Return `y` of shape `[n]`.
#
# *Hint:* `x @ a.T` has shape `[n, T, D]`; take the max over the token axis.

# %%
def retrieval_target(x, directions):
    ### BEGIN SOLUTION
    return (x @ directions.T).max(dim=1).values.sum(dim=1)
    ### END SOLUTION


check.ex01_retrieval_target(retrieval_target)

# %% [markdown]
# ## 1.4 How sharp must the selector be? · medium · 10 min
#
# Theorem 1's density proof recovers each coordinate with a smooth selector whose sharpness is
# $q$. For our selector (study 01a, `further/01a_density.py`) the error is at most
# $\sup_{d \ge 0} d\,e^{-q d^2}$, where $d$ is the distance between two candidate values. Return
# the smallest $q$ for which this worst case is at most $\varepsilon$. (Study 01a prints the
# bound it gives beside the measured errors: compare.)
#
# *Hint:* where does $d\,e^{-q d^2}$ peak? Set its derivative to zero.

# %%
def smallest_q(epsilon):
    ### BEGIN SOLUTION
    return 1 / (2 * math.e * epsilon ** 2)
    ### END SOLUTION


check.ex01_smallest_q(smallest_q)

# %%
check.summary()

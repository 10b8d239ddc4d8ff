# %% [markdown]
# # Exercises · 02 One attention layer, h heads, and the drop at h = D
#
# Beside `02_multihead_model.py` and paper A §3 (eq. 4–5) and §6 (Tables 2–4). Every cell runs
# in seconds; exercise 2.2 reads the committed results instead of training.

# %%
import sys
from pathlib import Path

here = Path(__file__).parent if "__file__" in globals() else Path.cwd()
sys.path.insert(0, str(here))
import check  # noqa: E402

# %% [markdown]
# ## 2.1 Count parameters as paper A does · medium · 10 min
#
# Paper A's parameter counts (Table 3) include the token encoder, the read-out FFN $\hat F$ and
# every stacked layer's FFN — but not the attention weights $W_Q, W_K, W_V, W_O$ nor the CLS
# vector. Given a `MultiHeadModel` (attributes `encoder`, `readout`, `ffns`), count the weights
# and biases the paper counts.
#
# *Hint:* `sum(p.numel() for p in module.parameters())`, for each of the three parts.

# %%
def paper_parameter_count(model):
    ### BEGIN SOLUTION
    parts = (model.encoder, model.readout, model.ffns)
    return sum(p.numel() for part in parts for p in part.parameters())
    ### END SOLUTION


check.ex02_parameter_count(paper_parameter_count)

# %% [markdown]
# ## 2.2 Where does the knee move for D = 3? · easy · 5 min
#
# With D = 4 the error drops most from h = 3 to h = 4. Predict the head count at which it drops
# most when the task retrieves D = 3 tokens, then let the check read
# `results/02_multihead_model_D3.json` (made by `python 02_multihead_model.py --D 3`) and compare.
#
# *Hint:* one head per token to retrieve.

# %%
### BEGIN ANSWER predicted_knee
predicted_knee = 3
### END ANSWER

check.ex02_knee_for_D3(predicted_knee)

# %%
check.summary()

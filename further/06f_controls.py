# %% [markdown]
# # 06f · Two training-free controls for lesson 06: a hand-built oracle and a no-match baseline
#
# Lesson 06 and study 06g train models and compare their errors. Two things could make their
# curves look as they do without the heads doing what the texts say: under-training (06g's U
# would then be the optimiser's, not the budget's), and models that never find their match (the
# lesson's errors would then be what the values alone predict). This study computes, with no
# training, the best a hand-built assignment of $H$ heads reaches at each $H$ of 06g, and the
# best a model reaches on the lesson's tasks without a match, at the settings of their runs, and
# sets each beside that run's trained numbers. `python further/06f_controls.py` (0.49 s on 2 cores).

# %%
"""06f · Lesson 06's controls: a hand-built oracle at a fixed budget, and a no-match baseline."""
import math
import sys
from pathlib import Path

import torch

# the shared files from the repository root (the script's command) or from notebooks/ (its notebook)
sys.path[:0] = [str(Path.cwd()), str(Path.cwd().parent)]
import helpers
import harness
import plumbing
from harness import Setting

allocation = helpers.load_concept("06_allocation")  # its tasks
fixed_budget = helpers.load_concept("06g_fixed_budget")  # its multi-query recall

# %% [markdown]
# ## Settings
#
# Two rows: the runs whose settings the controls take and whose trained numbers they are set
# beside (the committed default runs, or runs of your own under `runs/`).

# %%
SETTINGS = {
    # name: Setting(default, --quick, --full, type, what it sets)
    "budget_run": Setting(Path("results/06g_fixed_budget.json"), ...,
                          Path("results/06g_fixed_budget_full.json"), Path,
                          "oracle: a results file of study 06g, or of lesson 06 with its "
                          "fixed_budget (a typed path is from the current folder)"),
    "lesson_run": Setting(Path("results/06_allocation.json"), ...,
                          Path("results/06_allocation_full.json"), Path,
                          "baseline: a results file of lesson 06"),
}
PARTS = {"oracle": (), "baseline": ()}  # a and b
SHARPNESS = [2.0, 4.0, 8.0, 16.0, 32.0, 64.0]  # a: the oracle's score scales, the best is kept
FRESH_SEED_OFFSET = 10_000  # the controls' sequences: the lesson run's seed + this, never trained on


def refusals(args):
    """[(flag, accepted, why not, smallest accepted)]: each run read must exist."""
    return [("--budget-run", "oracle" not in args.parts or args.budget_run.is_file(),
             f"no results file at {harness.shown_path(args.budget_run)}", None),
            ("--lesson-run", "baseline" not in args.parts or args.lesson_run.is_file(),
             f"no results file at {harness.shown_path(args.lesson_run)}", None)]


def config(argv=None):
    """Parse the flag; a missing results file is refused in one line naming it."""
    return plumbing.config(SETTINGS, argv, __doc__.split("\n")[0], PARTS,
                           full="the controls of lesson 06's --full run", refusals=refusals)


if __name__ == "__main__":
    args = config()
    run = plumbing.Run("06f_controls", args, PARTS)
    budget = plumbing.read_input(args.budget_run) if "oracle" in args.parts else None
    lesson = plumbing.read_input(args.lesson_run) if "baseline" in args.parts else None

# %% [markdown]
# ## a. The oracle: what $H$ heads can do at the budget, with nothing to train
#
# Study 06g's last token carries $M$ queries $q_1, \dots, q_M$, copies of stored keys, and the
# target sums one value per query. A hand-built assignment of $H$ heads:
#
# * for $H \le M$, head $i$ serves a group of $M/H$ queries and scores
#   $\sum_{m \in \text{group}_i} q_m^\top k_s$, so it returns an average of their values;
# * for $H > M$, $H/M$ heads serve each query, each with a slice of $d = Mp/H$ of the key's $p$
#   coordinates, so each sees the match in only $d$ directions.
#
# Each head's attention is the softmax of its scores times a sharpness (the best of `SHARPNESS`),
# and the answer the best linear read-out of all heads' outputs (least squares on the same
# sequences, so the oracle is slightly optimistic). If the trained U were only under-training,
# the oracle would show no U.

# %%
@torch.no_grad()
def recall_oracle(parts, y, n_heads):
    """NMSE of the hand-built H-head assignment (best sharpness, best linear read-out).
    parts: keys [n, L, p], values [n, L, 2], queries [n, M, p]; y [n]."""
    keys, values, queries = parts
    n_queries, dim = queries.shape[1:]
    head_dim = n_queries * dim // n_heads
    best = math.inf
    for sharpness in SHARPNESS:
        outputs = []
        for head in range(n_heads):
            if n_heads <= n_queries:                                        # several queries
                group = range(head * n_queries // n_heads, (head + 1) * n_queries // n_heads)
                scores = sum(torch.einsum("nsp,np->ns", keys, queries[:, m]) for m in group)
            else:                                                           # a slice of one
                m, part = divmod(head, n_heads // n_queries)                # query, slice
                cut = slice(part * head_dim, (part + 1) * head_dim)
                scores = torch.einsum("nsp,np->ns", keys[..., cut], queries[:, m, cut])
            weights = (sharpness * scores).softmax(dim=1)                   # [n, L]
            outputs.append(torch.einsum("ns,nsc->nc", weights, values))     # [n, 2]
        features = torch.cat([*outputs, torch.ones(len(y), 1)], dim=1)
        coefficients = torch.linalg.lstsq(features, y[:, None]).solution
        best = min(best, helpers.nmse(features @ coefficients[:, 0], y))
    return best


def oracle_beside(budget):
    """The run's fixed budget (study 06g's) with the oracle at its settings, on fresh
    sequences."""
    settings, fixed = budget["config"], dict(budget["fixed_budget"])
    _, y, parts = fixed_budget.recall_task(settings["n_valid"], settings["memory"],
                                         settings["key_dim"], settings["queries"],
                                         settings["seed"] + FRESH_SEED_OFFSET)
    fixed["oracle"] = {str(H): recall_oracle(parts, y, H) for H in fixed["H"]}
    fixed["best_H_oracle"] = int(min(fixed["oracle"], key=fixed["oracle"].get))
    return {"fixed_budget": fixed}


# %%
if __name__ == "__main__" and "oracle" in args.parts:
    fixed = run.record(oracle_beside(budget))
    run.figure(fixed_budget.plot_fixed_budget(fixed), "06f_oracle")
    fixed_budget.report_fixed_budget(fixed)

# %% [markdown]
# **What we saw** (the committed default run of study 06g: $M = 4$, budget 32, 2 seeds, 1,500
# steps). The oracle is lowest at $H = M$ too, where it is exact (0.000), and rises on both
# sides (0.787 at $H = 1$, 0.413 at $H = 16$): the U is the budget's, not the optimiser's. The
# trained models lie above the oracle at $H = M$ (0.049) and at $H = 1$ below it (0.732): a
# trained head is not limited to the oracle's sums of query scores.

# %% [markdown]
# ## b. The no-match baseline: what the values alone predict
#
# Both of the lesson's targets are sums of values, so a model that sees every value but never finds
# its match can still predict $\mathbb E[y \mid v] = \sum_t w_t v_t$, with weights set by the
# positions alone:
#
# * match-aggregate, $y \propto \sum_{t \ge 1} v_{\pi(t)}$ with $\pi(t)$ uniform on $0 \dots t-1$:
#   value $s$ is fetched $\sum_{t > s} 1/t$ times on average, so $w_s \propto \sum_{t > s} 1/t$;
# * prefix-match, $y = \sum_{t \le s} v_t / \sqrt{s + 1}$ with $s$ uniform on $0 \dots T-2$:
#   $w_t \propto \sum_{s \ge t} (s+1)^{-1/2}$.
#
# A trained allocation below this baseline has found matches; one at it has not.

# %%
def no_match_baseline(task, n, seq_len, dim, seed):
    """NMSE of E[y | values] = sum_t w_t v_t: every value known, no match found (see above)."""
    x, y = allocation.TASKS[task](n, seq_len, dim, seed)
    values = x[:, :, -1]                                                    # [n, T]
    if task == "match-aggregate":     # E[#pointers to s] = sum_{t>s} 1/t, scaled like y
        weights = torch.tensor([sum(1 / t for t in range(s + 1, seq_len))
                                for s in range(seq_len)]) / math.sqrt(seq_len - 1)
    else:                             # P(t <= s) / sqrt(s + 1), s uniform on 0 .. T-2
        weights = torch.tensor([sum((s + 1) ** -0.5 for s in range(t, seq_len - 1))
                                for t in range(seq_len)]) / (seq_len - 1)
    return helpers.nmse((values.double() * weights).sum(dim=1), y.double())


def baseline_beside(lesson):
    """The lesson run's allocations with each task's no-match baseline at its settings."""
    settings = lesson["config"]
    comparison = {task: {**entry, "no_match_baseline": no_match_baseline(
                      task, settings["n_valid"], settings["T"], settings["key_dim"],
                      settings["seed"] + FRESH_SEED_OFFSET)}
                  for task, entry in lesson["comparison"].items()}
    return {"comparison": comparison}


def with_baselines(figure, comparison):
    """Lesson 06's figure with each task's no-match baseline dashed on its panel."""
    for axis, entry in zip(figure.axes, comparison["comparison"].values()):
        axis.axhline(entry["no_match_baseline"], color="tab:red", ls="--",
                     label="no-match baseline")
        axis.legend(fontsize=7)
    return figure


# %%
if __name__ == "__main__" and "baseline" in args.parts:
    comparison = run.record(baseline_beside(lesson))
    run.figure(with_baselines(allocation.plot_allocations(comparison), comparison),
               "06f_baseline")
    allocation.report_allocations(comparison)
    print("no-match baseline: " + "  ".join(f"{task} {entry['no_match_baseline']:.3f}"
                                             for task, entry in comparison["comparison"].items()))
if __name__ == "__main__":
    run.finish()

# %% [markdown]
# **What we saw.** On each task the allocation whose rich layer does the match lies far below
# the baseline (front-loaded 0.066 against 0.289 on match-aggregate, back-loaded 0.075 against
# 0.312 on prefix-match), and the other is nearer to it (back-loaded 0.241, front-loaded 0.242):
# the models that can find the match do, and the others recover only part of it.
#
# Paper B states no number of either kind (its tasks are not in our sources).

# %% [markdown]
# ## Summary
#
# | control | what would count against lesson 06 (and 06g) | ours (the committed default runs) |
# |---|---|---|
# | the oracle at a fixed budget | no U: the trained U would be under-training | lowest at $H = M$ (0.000); 0.787 and 0.413 at the ends |
# | the no-match baseline | trained errors at the baseline: no match found | the right allocation far below it on each task (0.066, 0.075 against 0.289, 0.312); the wrong one nearer to it |

# %% [markdown]
# # 06g · Both sides of a fixed budget: heads against head dimension (a study of 06)
#
# Paper B (arXiv 2510.03784, §4) trades heads against head dimension at a fixed attention budget
# $H d$: too few heads and too small a head dimension both hurt [summary]. This study spends one
# budget on $H$ heads of dimension $d = \text{budget}/H$, with lesson 06's transformer and
# training, on a task whose two sides we can name. `python further/06g_fixed_budget.py`
# (15 s on 2 cores).

# %% tags=["apparatus"] jupyter={"source_hidden": true}
"""06g · Multi-query recall at a fixed attention budget: too few heads, too small a head dim."""
import math
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import torch

# the shared files from the repository root (the script's command) or from notebooks/ (its notebook)
sys.path[:0] = [str(Path.cwd()), str(Path.cwd().parent)]
import helpers
import harness
import plumbing
from harness import Setting, int_list, positive_int

allocation = helpers.load_concept("06_allocation")  # its transformer, keys and training


def config(argv=None):
    """Parse the flags of SETTINGS; budget_refusals ends a run that cannot finish."""
    return plumbing.config(SETTINGS, argv, __doc__.split("\n")[0], PARTS,
                           full="H up to 32, more seeds and steps",
                           refusals=budget_refusals)


def budget_refusals(args):
    """Study 06g's: a budget M p that splits three ways or more (p even, at least 4: H = 1, M, 2M
    and M p all fit), each H splitting it into whole heads with its queries."""
    budget = args.queries * args.key_dim
    fits = [h for h in range(1, budget + 1)
            if budget % h == 0 and (args.queries % h == 0 or h % args.queries == 0)]
    first_fits = ",".join(map(str, fits[:3]))
    return [("--key-dim", args.key_dim >= 4 and args.key_dim % 2 == 0, f"an even number of at "
             f"least 4, so that the budget splits three ways or more, got {args.key_dim}", 4),
            ("--fixed-heads", set(args.fixed_heads) <= set(fits), f"each H must divide "
             f"--queries * --key-dim = {budget} and divide --queries or be its multiple",
             first_fits),
            ("--fixed-heads", len(set(args.fixed_heads)) >= 3, "both sides need three H or "
             "more", first_fits),
            ("--memory", args.memory >= args.queries, "M queries need M stored keys",
             args.queries)]


# %%
SETTINGS = {
    # name: Setting(default, --quick, --full, type, what it sets)
    "fixed_heads": Setting([1, 4, 16], [1, 2, 8], [1, 2, 4, 8, 16, 32], int_list, "head counts H"),
    "queries": Setting(4, 2, 4, positive_int, "queries M of the last token"),
    "key_dim": Setting(8, 4, 8, positive_int, "key dimension p (the budget is M p)"),
    "memory": Setting(16, 8, 16, positive_int, "memory tokens L"),
    "fixed_seeds": Setting(2, 1, 3, positive_int, "seeds per H"),
    "fixed_steps": Setting(1500, 100, 3000, positive_int, "training steps per run"),
    "width": Setting(48, 16, 48, positive_int, "model width E"),
    "n_train": Setting(20000, 1000, 40000, positive_int, "training sequences"),
    "n_valid": Setting(2000, 300, 4000, positive_int, "validation sequences"),
}
PARTS = {"budget": ()}  # the study is one part
if __name__ == "__main__":
    args = config()
    run = plumbing.Run("06g_fixed_budget", args, PARTS)

# %% [markdown]
# ## Multi-query recall [inferred: our task]
#
# $L$ memory tokens carry a key $k_s$ on the unit sphere of $\mathbb R^p$ and a value
# $v_s \in \mathbb R^2$; a last token carries copies of $M$ stored keys
# $k_{s_1}, \dots, k_{s_M}$, each in its own slot. The target:
#
# $$y = \sum_{m=1}^{M} c_m^\top v_{s_m}, \qquad
#   c_m = (\cos \tfrac{m\pi}{M}, \sin \tfrac{m\pi}{M}).$$
#
# One block of $H$ heads of dimension $d = Mp/H$. With $d < p$ a head's score sees only $d$ of
# the key's $p$ directions (lesson 05); with $H < M$ one head serves several queries and returns an
# *average* of their values, which no read-out can split (lesson 02).

# %%
def recall_task(n, seq_len, dim, n_queries, seed):
    """x [n, L+1, (M+1)p + 2] (key | M query slots | value), y [n], and (keys, values,
    queries) for study 06f's oracle."""
    generator = torch.Generator().manual_seed(seed)
    keys = allocation.unit_keys(n, seq_len, dim, generator)
    values = torch.randn(n, seq_len, 2, generator=generator)
    picked = torch.rand(n, seq_len, generator=generator).argsort(dim=1)[:, :n_queries]
    queries = keys.gather(1, picked[..., None].expand(-1, -1, dim))         # [n, M, p]
    memory = torch.cat([keys, torch.zeros(n, seq_len, n_queries * dim), values], dim=-1)
    last = torch.cat([torch.zeros(n, 1, dim), queries.reshape(n, 1, n_queries * dim),
                      torch.zeros(n, 1, 2)], dim=-1)
    angles = torch.arange(1, n_queries + 1) * math.pi / n_queries
    read = torch.stack([angles.cos(), angles.sin()], dim=1)                 # c_m, [M, 2]
    answers = values.gather(1, picked[..., None].expand(-1, -1, 2))         # v_{s_m}, [n, M, 2]
    y = (answers * read).sum(dim=(1, 2))
    return torch.cat([memory, last], dim=1), y, (keys, values, queries)


def train_recall(run):
    """One model of `run` on multi-query recall, trained as lesson 06 trains (`train_on`)."""
    x, y, _ = recall_task(run["n_train"] + run["n_valid"], run["T"] - 1, run["dim"],
                          run["n_queries"], run["data_seed"])
    return allocation.train_on(run, x, y)


# %% [markdown]
# The runs: one block of $H$ heads of dimension $Mp/H$ for each $H$, `fixed_seeds` seeds each.

# %%
def fixed_budget_runs(args):
    """Every H of --fixed-heads with its seeds (plain dicts)."""
    budget = args.queries * args.key_dim                                    # M p = H d
    return [dict(task="recall", T=args.memory + 1, n_queries=args.queries, H=H, dim=args.key_dim,
                 layers=[(H, budget // H)], width=args.width, steps=args.fixed_steps,
                 n_train=args.n_train, n_valid=args.n_valid, device=args.device,
                 seed=args.seed + s, data_seed=args.seed + s, name=f"H={H} d={budget // H}")
            for H in args.fixed_heads for s in range(args.fixed_seeds)]


if __name__ == "__main__":
    recall_runs = plumbing.run_sweep(fixed_budget_runs(args), args.workers, train_recall,
                                     cost=allocation.sweep_cost, group=lambda run: run["name"])

# %% [markdown]
# **The result**: each $H$'s validation NMSE over its seeds (`helpers.seed_stats`), and the $H$
# at which each seed is lowest.

# %% tags=["apparatus"] jupyter={"source_hidden": true}
# This study's figure and printout (study 06f draws its oracle with them).
def plot_fixed_budget(result):
    """Study 06g: trained NMSE (mean, each seed a dot) against H, and study 06f's oracle where
    the numbers hold it."""
    fixed = result["fixed_budget"]
    heads = fixed["H"]
    figure, axis = plt.subplots(figsize=(5.8, 3.8))
    axis.semilogx(heads, [fixed["trained"][str(h)]["mean"] for h in heads], "o-",
                  label="trained (mean over seeds)")
    for h in heads:
        seeds = fixed["trained"][str(h)]["seeds"]
        axis.semilogx([h] * len(seeds), seeds, "k.", ms=4)
    if "oracle" in fixed:                                                   # study 06f's
        axis.semilogx(heads, [fixed["oracle"][str(h)] for h in heads], "s:", label="oracle")
    axis.axvline(fixed["M"], color="gray", lw=0.8, label=f"H = M = {fixed['M']}")
    harness.label_log_axis(axis, heads)
    axis.set_xlabel(f"heads H (head dim = {fixed['budget']} / H)")
    axis.set_ylabel("validation NMSE"), axis.legend(fontsize=7)
    axis.set_title("Multi-query recall at a fixed attention budget")
    return figure


def report_fixed_budget(result):
    """Study 06g: the mean NMSE per H [study 06f's oracle, where the numbers hold it], where each
    seed is lowest, and how far H = M lies below both ends."""
    fixed = result["fixed_budget"]
    trained, oracle = fixed["trained"], fixed.get("oracle")
    middle = trained[str(fixed["M"])]["mean"] if str(fixed["M"]) in trained else None
    ends = [trained[str(fixed["H"][0])]["mean"], trained[str(fixed["H"][-1])]["mean"]]
    print(f"validation NMSE at H d = {fixed['budget']}, mean of "
          f"{len(trained[str(fixed['H'][0])]['seeds'])} seed(s)" + (" [oracle]" if oracle else "")
          + ": " + "  ".join(f"H={h}: {trained[str(h)]['mean']:.3f}"
                             + (f" [{oracle[str(h)]:.3f}]" if oracle else "") for h in fixed["H"]))
    print(f"   lowest per seed at H = {fixed['best_H_per_seed']}"
          + (f", the oracle's at H = {fixed['best_H_oracle']}" if oracle else "")
          + f" (M = {fixed['M']})"
          + (f"; H = M is {ends[0] / middle:.0f}x and {ends[1] / middle:.0f}x below the ends"
             if middle else ""))


# %%
def lowest_per_seed(trained):
    """For each seed, the H whose validation NMSE is lowest (trained: {H: seed_stats})."""
    seeds = zip(*(entry["seeds"] for entry in trained.values()))
    return [int(min(zip(trained, errors), key=lambda pair: pair[1])[0]) for errors in seeds]


if __name__ == "__main__":
    trained = {str(H): helpers.seed_stats(helpers.by_seed(recall_runs, "valid_nmse", H=H))
               for H in args.fixed_heads}
    fixed = run.record({"fixed_budget": {
        "H": args.fixed_heads, "budget": args.queries * args.key_dim, "M": args.queries,
        "p": args.key_dim, "trained": trained, "best_H_per_seed": lowest_per_seed(trained)}})
    run.figure(plot_fixed_budget(fixed), "06g_fixed_budget")
    report_fixed_budget(fixed)
    run.finish()

# %% [markdown]
# **What we saw** (`results/06g_fixed_budget.json`: 2 seeds, 1,500 steps). Validation NMSE for
# H = 1, 4, 16: 0.732, **0.049**, 0.675. The lowest error is at H = M = 4 for both seeds, 15× and
# 14× below the ends; a hand-built oracle with nothing to train is lowest at H = M too (study
# 06f), so the U does not come from training alone. Paper B's best H [reviewers: 8, on its
# 4-gram task] is not like for like: ours is set by our M queries (study 06b runs paper B's
# task).
#
# Back to [lesson 06](06_allocation.ipynb).

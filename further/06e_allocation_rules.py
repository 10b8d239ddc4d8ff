# %% [markdown]
# # 06e · The allocation rules as a function, and what lesson 06's runs say about each (a study of 06)
#
# Paper B (arXiv 2510.03784, §6) gives a qualitative rule: early layers extract and need enough
# heads; later layers see a saturated softmax and can use smaller head dimensions. It gives no
# formula. This study writes one, `allocate(budget, n_layers, D)`, marks what supports each of its
# rules, and reads each rule against the numbers of lesson 06's run and study 06g's.
# `python further/06e_allocation_rules.py` (0.41 s on 2 cores: it trains nothing).

# %%
"""06e · allocate(budget, n_layers, D): paper B's allocation rule as a function, and its evidence."""
import sys
from pathlib import Path

# the shared files from the repository root (the script's command) or from notebooks/ (its notebook)
sys.path[:0] = [str(Path.cwd()), str(Path.cwd().parent)]
import matplotlib.pyplot as plt

import helpers
import plumbing
from harness import Setting

allocation = helpers.load_concept("06_allocation")  # its attention budget

# %% [markdown]
# ## Settings
#
# Two rows: the results files the rules are read against, lesson 06's allocations and study 06g's
# fixed budget (by default the committed ones; a run of your own writes one under `runs/`).

# %%
SETTINGS = {
    # name: Setting(default, --quick, --full, type, what it sets)
    "evidence": Setting(None, ..., ..., Path, "a results file of 06_allocation.py (default: the "
                        "committed results/06_allocation.json)"),
    "budget_evidence": Setting(None, ..., ..., Path, "a results file of 06g_fixed_budget.py "
                               "(default: the committed results/06g_fixed_budget.json)"),
}
COMMITTED_EVIDENCE = helpers.ROOT / "results" / "06_allocation.json"
COMMITTED_BUDGET = helpers.ROOT / "results" / "06g_fixed_budget.json"


def config(argv=None):
    """Parse the flag; a missing results file is refused in one line naming it."""
    return plumbing.config(SETTINGS, argv, __doc__.split("\n")[0], refusals=refusals)


def refusals(args):
    """[(flag, accepted, why not, the smallest value accepted)]."""
    path = args.evidence or COMMITTED_EVIDENCE
    budget = args.budget_evidence or COMMITTED_BUDGET
    return [("--evidence", path.is_file(), f"no results file at {path}", None),
            ("--budget-evidence", budget.is_file(), f"no results file at {budget}", None)]

# %% [markdown]
# ## The rules, and what supports each [inferred]
#
# 1. **The first layer gets exactly $D$ heads**, one per token it must extract. Supported by
#    lesson 02 (the minimum error falls 9–14× at $h = D$) and by study 06g (at a fixed budget the
#    lowest error at $H = M$).
# 2. **It gets half of the budget** (all of it in a one-layer model), in whole head dimensions:
#    $d_1 = \lfloor \tfrac{1}{D} \min(\tfrac{\text{budget}}{2}, \text{budget} - n + 1) \rfloor$
#    (at least 1), which leaves at least 1 for each of the $n - 1$ later layers. *Assumption*: no
#    run here chooses the fraction.
# 3. **The later layers share what is left**, layer by layer: each takes the integer part of an
#    equal share of what is still left (so the remainders go to the last layers), and spends it
#    on heads of dimension at most $\lfloor d_1 / 2 \rfloor$ — that dimension when the share
#    allows it, else one head of the whole share — with as many heads as fit. So
#    `allocate(20, 5, 1)` gives the first layer one head of dimension 10 and shares the other 10
#    as 2, 2, 3, 3: each share is below $d_1/2 = 5$, so each later layer is one head of its
#    share. Tested, for the thinner later layer, by 06's `front-reduced - front-loaded` (the same
#    early layer, a thinner late one). The sequence length is not an argument: no run here ties a
#    threshold on $T$ to the allocation (lesson 05 finds saturation only for bounded logits).
#
# The layers never exceed the budget (a property test); the smallest budget the rules can meet is
# $D + n - 1$.

# %%
def allocate(budget, n_layers, D):
    """[(heads, head_dim)] per layer following the rules above, never over `budget`."""
    for name, value in dict(budget=budget, n_layers=n_layers, D=D).items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"allocate: {name} must be a whole number >= 1, got {value!r}")
    minimum = D + n_layers - 1
    if budget < minimum:
        raise ValueError(f"allocate: budget {budget} is too small; the minimum for D = {D} and "
                         f"{n_layers} layers is {minimum} (D heads of dimension 1 in the first "
                         f"layer, one head of dimension 1 in each later one)")
    later = n_layers - 1
    first_share = budget if later == 0 else budget // 2                    # rule 2
    first_dim = max(1, min(first_share, budget - later) // D)               # leaves 1 per later
    layers = [(D, first_dim)]                                               # rule 1
    rest = budget - D * first_dim
    late_dim = max(1, first_dim // 2)                                       # rule 3
    for index in range(later):
        share = rest // (later - index)                                     # >= 1 by the check
        head_dim = min(late_dim, share)
        layers.append((share // head_dim, head_dim))
        rest -= layers[-1][0] * head_dim
    assert allocation.attention_budget(layers) <= budget
    return layers

# %% [markdown]
# ## What the runs say about each rule
#
# A row per rule and task, each with its verdict: study 06g's lowest $H$ (rule 1), or the verdict
# of a paired interval of the lesson, so that no row says more than its interval. 06a reads the same
# rules on text.

# %%
ALLOCATE_EXAMPLES = [(20, 5, 1), (48, 3, 4), (96, 4, 4), (256, 6, 8)]  # (budget, layers, D)
RULES = {"front-loaded - back-loaded": "the rich head dimension goes where the match is",
         "front-reduced - front-loaded": "later layers can be thinner (thinning alone)",
         "front-loaded - uniform": "front-loading beats uniform (our baseline; paper B has none)"}
FIXED_BUDGET_RULE = "the first layer gets D heads (at a fixed budget, the lowest error at H = M)"


def rule_rows(found):
    """[{"rule", "strength", "evidence"}] for each (where, paired differences) in `found` whose
    key names a rule of RULES; its strength is its interval's verdict (06a reads text with it)."""
    return [{"rule": RULES[key], "strength": pair["verdict"],
             "evidence": helpers.describe_difference(f"{where}: {key}", pair)}
            for where, pairs in found for key, pair in pairs.items() if key in RULES]


def fixed_budget_row(fixed):
    """Rule 1's row from study 06g: where the trained models are lowest, seed by seed."""
    lowest = set(fixed["best_H_per_seed"])
    strength = "lowest at H = M" if lowest == {fixed["M"]} else "not only at H = M"
    return {"rule": FIXED_BUDGET_RULE, "strength": strength,
            "evidence": f"06g: lowest trained NMSE per seed at H = {fixed['best_H_per_seed']}, "
                        f"M = {fixed['M']} ({strength})"}


def closing_table(result, budget):
    """[{"rule", "strength", "evidence"}]: what the runs say about the rules: study 06g's lowest
    H (`budget`'s, or the lesson run's own where it holds one), and the lesson's paired
    differences with their verdicts."""
    fixed = result.get("fixed_budget") or budget.get("fixed_budget")
    rows = [fixed_budget_row(fixed)] if fixed else []
    return rows + rule_rows([(task, entry["paired"])
                             for task, entry in result.get("comparison", {}).items()])


def plot_allocations(tables):
    """Each example's layers as bars of their attention budget (heads x head_dim), the heads
    written on each bar."""
    figure, axes = plt.subplots(1, len(tables), figsize=(3.2 * len(tables), 3), squeeze=False)
    for axis, (name, layers) in zip(axes[0], tables.items()):
        positions = range(1, len(layers) + 1)
        axis.bar(positions, [h * d for h, d in layers], color="lightsteelblue")
        for x, (h, d) in zip(positions, layers):
            axis.text(x, h * d, f"{h}×{d}", ha="center", va="bottom", fontsize=7)
        axis.set_title(name, fontsize=8), axis.set_xlabel("layer")
        axis.set_xticks(list(positions))
    axes[0][0].set_ylabel("heads × head dimension")
    figure.tight_layout()
    return figure


def report(result):
    print("allocate(budget, n_layers, D) -> [(heads, head_dim) per layer]:")
    for name, layers in result["allocate_tables"].items():
        print(f"   {name}: {[tuple(layer) for layer in layers]}")
    print("the rules' evidence in lesson 06's and study 06g's runs (95% t over paired seeds):")
    for row in result["rules"]:
        print(f"   - {row['rule']}: {row['evidence']}")

# %% [markdown]
# ## Running it
#
# It parses the flag, reads the lesson's results file, and writes
# `runs/results/06e_allocation_rules.json` (`--out .` refreshes the committed one).

# %%
if __name__ == "__main__":
    args = config()
    run = plumbing.Run("06e_allocation_rules", args)
    evidence = plumbing.replay(args.evidence or COMMITTED_EVIDENCE)
    budget = plumbing.replay(args.budget_evidence or COMMITTED_BUDGET)
    strategy = run.record({"allocate_tables": {f"budget={b} layers={n} D={D}": allocate(b, n, D)
                                               for b, n, D in ALLOCATE_EXAMPLES},
                           "rules": closing_table(evidence, budget)})
    run.figure(plot_allocations(strategy["allocate_tables"]), "06e_allocation_rules")
    report(strategy)
    run.finish()

# %% [markdown]
# **What we saw.** `allocate(20, 5, 1)` = [(1, 10), (1, 2), (1, 2), (1, 3), (1, 3)], `allocate(48,
# 3, 4)` = [(4, 6), (4, 3), (4, 3)], `allocate(96, 4, 4)` = [(4, 12), (2, 6), (3, 6), (3, 6)],
# `allocate(256, 6, 8)` = [(8, 16), (3, 8), (3, 8), (3, 8), (3, 8), (4, 8)]. Rule 1 has study 06g
# behind it (the lowest error at H = M for both seeds); rule 3 has no clear difference behind it on
# either task (thinning alone, front-reduced − front-loaded); and the rich layer wins where the
# match is, front-loaded on match-aggregate and back-loaded on prefix-match, so our rule puts the
# rich layer first only because the extraction happens there. Lesson 06 trains no uniform
# allocation on its tasks, so front-loading against uniform is read on text, in study 06a. Paper B
# gives no formula and no number of this kind in our sources.

"""Lesson 06's apparatus: its refusals, the sweep, the figures and the reports.

What is trained and what is computed from it stay in 06_allocation.py; nothing here imports the
lesson. Study 06a summarises and pairs its allocations with summary and paired, and draws its
text panel with draw_allocation_bars.
"""
import matplotlib.pyplot as plt

import helpers
import plumbing


# ----------------------------------------------------------------------------------------------
# The sweep: one process per core, one progress line per group of runs
# ----------------------------------------------------------------------------------------------
def sweep_cost(run):
    """The scheduling guess for one run (06's parts, 06a's and 06c's models): tokens x steps."""
    return run["T"] * run["steps"]


def sweep(runs, workers, train, group):
    """train(run) for every run (plumbing.run_sweep: on the CPU in `workers` processes of one
    thread each, the costliest first); one line, with its mean NMSE, as the last run of each
    group(run) finishes. Returns the results in the order of `runs`."""
    def mean_nmse(results):
        nmse = [r["valid_nmse"] for r in results]
        return f"{group(results[0])}: {len(nmse)} run(s), mean NMSE {sum(nmse) / len(nmse):.3f}"
    return plumbing.run_sweep(runs, workers, train, mean_nmse, sweep_cost, group=group)


# ----------------------------------------------------------------------------------------------
# The flags: runs that could not finish, refused before any work
# ----------------------------------------------------------------------------------------------
def refusals(args):
    """[(flag, accepted, why not, the smallest value accepted)]: runs that cannot finish."""
    return [key_dim_refusal(args),
            ("--T", args.T >= 3, "the tasks need three tokens or more", 3),
            ("--seeds", args.seeds >= 2, "paired differences need two seeds or more", 2)]


def budget_refusals(args):
    """Study 06g's: a budget M p that splits three ways or more (p even, at least 4), each H
    splitting it into whole heads with its queries."""
    budget = args.queries * args.key_dim
    fits = [h for h in range(1, budget + 1)
            if budget % h == 0 and (args.queries % h == 0 or h % args.queries == 0)]
    first_fits = ",".join(map(str, fits[:3]))
    return [key_dim_refusal(args),
            ("--fixed-heads", set(args.fixed_heads) <= set(fits), f"each H must divide "
             f"--queries * --key-dim = {budget} and divide --queries or be its multiple",
             first_fits),
            ("--fixed-heads", len(set(args.fixed_heads)) >= 3, "both sides need three H or "
             "more", first_fits),
            ("--memory", args.memory >= args.queries, "M queries need M stored keys",
             args.queries)]


def key_dim_refusal(args):
    """--key-dim p, the rich head dimension (06a's too): above the poor 2, and even, as 06a's
    uniform allocation uses (p + 2) / 2 (and study 06g's budget M p then splits three ways)."""
    return ("--key-dim", args.key_dim >= 4 and args.key_dim % 2 == 0,
            f"an even number of at least 4, got {args.key_dim}", 4)


# ----------------------------------------------------------------------------------------------
# Study 06g: both sides of a fixed budget
# ----------------------------------------------------------------------------------------------
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
    helpers.label_log_axis(axis, heads)
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


# ----------------------------------------------------------------------------------------------
# Lesson 06: allocations at equal budgets, paired by seed
# ----------------------------------------------------------------------------------------------
# The paired differences, where both allocations ran (uniform: study 06a's, and 06's --full run)
PAIRS = [("front-loaded", "back-loaded"), ("front-loaded", "uniform"), ("back-loaded", "uniform"),
         ("front-reduced", "uniform"), ("front-reduced", "front-loaded")]  # the last: thinning
QUOTED_PAIRS = ("front-loaded - back-loaded", "front-reduced - front-loaded")  # the report's


def paired(by_allocation, pairs=PAIRS):
    """{"a - b": helpers.paired_difference}: per-seed differences (a lower = a better)."""
    return {f"{first} - {second}": helpers.paired_difference(
                [a - b for a, b in zip(by_allocation[first], by_allocation[second])],
                below=f"{first} better", above=f"{second} better")
            for first, second in pairs if first in by_allocation and second in by_allocation}


def summary(layers, values):
    """One allocation's layers, attention budget and seeds/min/mean/std (JSON-ready)."""
    return {"layers": [list(layer) for layer in layers],
            "budget": sum(h * d for h, d in layers), **helpers.seed_stats(values)}


def plot_allocations(result):
    """Each allocation's mean (bars) and every seed (dots), one panel per task; dashed:
    study 06f's no-match baseline, where the numbers hold it."""
    return draw_allocation_bars([
        (task, entry["allocations"], "validation NMSE", entry.get("no_match_baseline"),
         "no-match baseline", True) for task, entry in result["comparison"].items()])


def draw_allocation_bars(panels):
    """One panel per (title, allocations, y label, a dashed line or None, its label, y from
    zero): each allocation's mean (a bar) and every seed (a dot); 06a draws its text panel with
    it."""
    figure, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 3.8), squeeze=False)
    for axis, (title, by_name, label, line, line_label, from_zero) in zip(axes[0], panels):
        names = list(by_name)
        axis.bar(names, [by_name[n]["mean"] for n in names], color="lightsteelblue")
        for i, name in enumerate(names):
            axis.plot([i] * len(by_name[name]["seeds"]), by_name[name]["seeds"], "k.", ms=4)
        values = [v for e in by_name.values() for v in e["seeds"]]
        if line is not None:                                                # a dashed line
            axis.axhline(line, color="tab:red", ls="--", label=line_label)
            values.append(line)
        if from_zero:
            axis.set_ylim(0, 1.2 * max(values))
        else:
            axis.set_ylim(0.9 * min(values), None)
        axis.set_title(title), axis.set_ylabel(label)
        if line is not None:
            axis.legend(fontsize=7)
        axis.tick_params(axis="x", labelsize=7)
    figure.tight_layout()
    return figure


def report_allocations(result):
    """Per task the allocations' means [study 06f's baseline, where the numbers hold
    it], and the two quoted differences."""
    for task, entry in result["comparison"].items():
        means = "  ".join(f"{name} {a['mean']:.3f}" for name, a in entry["allocations"].items())
        baseline = entry.get("no_match_baseline")                           # study 06f's
        print(f"{task}: {means}"
              + (f"  (no-match baseline {baseline:.3f})" if baseline is not None else ""))
        print("   " + "; ".join(helpers.describe_difference(key, entry["paired"][key])
                                for key in QUOTED_PAIRS if key in entry["paired"]))

# %% [markdown]
# # 02b · The directions study (a study of 02)
#
# Paper A (arXiv 2510.06662), Section 6.1 and Appendix B.1: the synthetic task's $a_i$ are
# "fixed", and nothing more is said. Which reading reproduces Tables 2 and 3? `python
# further/02b_directions_study.py` (40 min on 2 cores); its notebook replays the committed run.

# %%
"""02b · Which reading of paper A's "fixed a_i" reproduces its tables (a study of 02)."""
import math
import statistics
import sys
from pathlib import Path

import matplotlib.pyplot as plt

# the shared files from the repository root (the script's command) or from notebooks/ (its notebook)
sys.path[:0] = [str(Path.cwd()), str(Path.cwd().parent)]
import helpers
import plumbing
from engine import lesson02 as engine

task = helpers.load_concept("01_retrieval_task")
model = helpers.load_concept("02_multihead_model")

# %% [markdown]
# ## Settings
#
# The study trains file 02's model with file 02's settings (its table, the same flags and
# presets) but 4,000 `steps` by default (twice the lesson's), and one row of its own: `replay`,
# which draws a committed run's tables and figures again from its JSON instead of training
# (40 minutes). The committed notebook shows the committed run this way, and its first lines say
# which run it is.

# %%
SETTINGS = {
    **model.SETTINGS,
    "steps": model.SETTINGS["steps"]._replace(
        default=4000, help="steps that the study multiplies by 5"),
    "replay": plumbing.REPLAY,
}
PARTS = {"directions": ()}  # the study is one part

NOTEBOOK_ARGS = "--replay ../results/02b_directions_study.json"  # the notebook draws the committed run


def config(argv=None):
    """Parse the flags (02's table and `replay`), with 02's refusals; one line naming the flag
    and exit code 2 for a run that cannot finish. It trains every reading of the a_i, so it
    has no --directions."""
    return plumbing.config(SETTINGS, argv, __doc__.split("\n")[0], PARTS,
                           notebook_args=NOTEBOOK_ARGS, refusals=model.refusals)


# %%
if __name__ == "__main__":
    args = config()
    run = plumbing.Run("02b_directions_study", args, PARTS)

# %% [markdown]
# ## Three readings, the paper's cells, one distance
#
# Paper A says only that its $a_i$ are "fixed". Three readings are natural: the standard basis
# (`orthonormal`; any orthonormal choice gives the same distribution of $(X, y)$ up to a rotation,
# as $\mathcal N(0, I)$ is rotation invariant), unit vectors drawn once (`random`), and the same
# draws left unnormalised (`gaussian`, as `torch.randn` gives them: the same directions as `random`,
# with unequal lengths, so the two differ only by the weight of each max). A reproduction chooses,
# where the paper is silent, the reading that reproduces the paper's numbers, and says so. The study
# trains every reading on the cells the paper's tables pin down (`DIRECTION_CELLS`), at 5× `--steps`
# with at least three seeds, the data and batch order of a seed shared by the readings. For each
# cell it compares the statistic the paper prints (the digest's reading of its tables): our
# **mean** with Table 2's mean (width $n = 8$
# per head), and for $h = 4$ our **minimum** with Table 3's minimum (at $h = 4$ its fixed $E = 32$
# is our $n = 8$; its $h = 3$ model has $n = 11$, so it is left out). A reading's distance to the
# paper is the median over cells of $|\log_{10}(\text{ours} / \text{paper})|$: 0 is the paper
# exactly, 1 a factor of 10.
#
# What could count against a reading: a reading that only shifts every error by the same
# factor would look close on one row and far on another; the per-cell ratios are printed so a
# reader sees whether one row is bought with another.

# %%
DIRECTION_CELLS = {8: (1, 2, 3, 4), 32: (3, 4), 128: (3, 4)}  # T -> h: the compared cells
DIRECTION_STEP_FACTOR = 5   # the study trains 5x --steps (20,000 at the default 4,000)
DIRECTION_SEEDS = 3         # seeds per (reading, T, h) unless --seeds is given


def directions_study(args):
    """Train each reading of a_i on DIRECTION_CELLS (within --T and --heads); seeds, the ratios
    to Tables 2 and 3, and each reading's median |log10 ratio|."""
    seeds = args.seeds if "seeds" in args.changed else DIRECTION_SEEDS
    steps = args.steps * DIRECTION_STEP_FACTOR
    cells = [(T, h) for T in args.T for h in DIRECTION_CELLS.get(T, (args.D - 1, args.D))
             if h in args.heads]
    runs = [dict(engine.base_run(args, model.RECIPE), directions=kind, select="last",
                 steps=steps, T=T, h=h, seed=args.seed + s)
            for kind in task.DIRECTIONS for T, h in cells for s in range(seeds)]
    results = plumbing.run_sweep(runs, args.workers, model.train_one,
                                 lambda r: f"{r['directions']:<12} " + engine.run_label(r),
                                 model.sweep_cost)
    readings = {}
    for kind in task.DIRECTIONS:
        rows = []
        for T, h in cells:
            stats = helpers.seed_stats(helpers.by_seed(results, "valid_nmse", directions=kind,
                                                       T=T, h=h))
            ratios = {"mean / Table 2 mean": stats["mean"] / model.PAPER_TABLE_2[h][T]
                      if T in model.PAPER_TABLE_2.get(h, {}) else None,
                      "min / Table 3 min": stats["min"] / engine.PAPER_TABLE_3[h][T]
                      if h == 4 and T in engine.PAPER_TABLE_3[h] else None}
            rows.append({"T": T, "h": h, **stats,
                         "ratios": {k: v for k, v in ratios.items() if v is not None}})
        logs = [abs(math.log10(v)) for row in rows for v in row["ratios"].values()]
        readings[kind] = {"cells": rows, "median_abs_log10_ratio":
                          statistics.median(logs) if logs else None}
    scored = {k: v["median_abs_log10_ratio"] for k, v in readings.items()
              if v["median_abs_log10_ratio"] is not None}
    return {"steps": steps, "seeds": seeds, "readings": readings,
            "closest": min(scored, key=scored.get) if scored else None}


def plot_directions(result, args):
    """Each reading's ratio to the paper per cell (log scale; 1 = the paper's number)."""
    figure, axis = plt.subplots(figsize=(7.5, 3.6))
    labels = []
    for i, (kind, reading) in enumerate(result["readings"].items()):
        points = [(f"T={row['T']} h={row['h']}\n{name.split(' /')[0]}", value)
                  for row in reading["cells"] for name, value in row["ratios"].items()]
        labels = [label for label, _ in points]
        axis.semilogy([j + 0.15 * (i - 1) for j in range(len(points))],
                      [value for _, value in points], "o", label=kind)
    axis.axhline(1, color="gray", lw=0.8)
    axis.set_xticks(range(len(labels)), labels, fontsize=6)
    axis.set_ylabel("ours / paper (same statistic)"), axis.legend(fontsize=7)
    axis.set_title(f"Readings of the fixed a_i, {result['steps']} steps, {result['seeds']} seeds")
    figure.tight_layout()
    return figure


def report_directions(result, args):
    """Per reading and cell: min and mean, each ratio to the paper; the median |log10 ratio|."""
    print(f"directions study: {result['steps']} steps, {result['seeds']} seeds; ours / paper "
          f"(mean vs Table 2's mean; for h = 4 also min vs Table 3's min)")
    for kind, reading in result["readings"].items():
        distance = reading["median_abs_log10_ratio"]
        print(f"  {kind}: median |log10 ratio| = "
              + (f"{distance:.2f} (a factor of {10 ** distance:.1f})" if distance is not None
                 else "no cell of the paper's tables"))
        for row in reading["cells"]:
            ratios = ", ".join(f"{name} = {value:.2f}" for name, value in row["ratios"].items())
            print(f"    T={row['T']:<4} h={row['h']}  min {row['min']:.2e}  mean "
                  f"{row['mean']:.2e}  {ratios}")
    if result["closest"]:
        print(f"  closest to the paper: {result['closest']}")


# %%
if __name__ == "__main__" and "directions" in args.parts:
    if args.replay:
        study = plumbing.replay(args.replay)
    else:
        study = run.record(directions_study(args))
    run.figure(plot_directions(study, args), "02_directions")
    report_directions(study, args)

# %% [markdown]
# ## What the committed run shows
#
# `results/02b_directions_study.json` (40 min 25 s on 2 CPU cores): 20,000 steps, 3 seeds, 11
# cells of Tables 2 and 3. The median distance $|\log_{10}(\text{ours} / \text{paper})|$ was 0.74
# for the standard basis (a factor of 5.5), 0.64 for unit vectors drawn once (4.4) and **0.54 for
# the same draws unnormalised (3.4)**. The drawn readings bring $h = 3$ within 1.5–2.3× of Table
# 2's means (orthonormal: 5.5–9.3×) at a cost in the $h = 4$ minimum at $T = 8$ (12.8× Table 3's
# against 3.4×), and none reaches Table 3's $h = 4$ minima at $T \ge 32$ (32–74× above). Hence the
# unnormalised draws are the default of files 01–04 (`--directions orthonormal` and `random` keep
# the others).
#
# How far this goes: the reading was **chosen on the same cells it is scored on**, with three
# seeds and no interval, and its lead over `random` is small (0.11 decades). No held-out cell —
# Table 4's $D = 3$ or Table 5's two layers — has tested the choice; a reading that only shifted
# every error by one factor would be caught by the per-cell ratios above, not by a new cell.

# %% [markdown]
# ## Commands and files
#
# Paper A says only that its a_i are "fixed". The study trains file 02's model under three
# readings (the standard basis, unit vectors drawn once, the same draws unnormalised) on the
# cells Tables 2 and 3 pin down, at 5x the steps with 3 seeds, and scores each reading by its
# median |log10(ours / paper)| over the cells, each ours beside the paper's statistic of the same
# kind. The closest reading is the default of files 01-04.
#
#     python further/02b_directions_study.py         # 40 min on a 2-core CPU (wall_time_s)
#     python further/02b_directions_study.py --quick # seconds; what the tests use
#     python further/02b_directions_study.py --replay results/02b_directions_study.json  # the committed run
#
# Output (under runs/, which git ignores; `--out .` refreshes the committed files)
#     results/02b_directions_study.json: per reading its cells (min, mean, the ratios to the
#     paper), the median |log10 ratio|, the closest reading; figures/02_directions.png.

# %% [markdown]
# ## The run's file
#
# Every number above, with the flags that produced them and the run's wall time (a replay
# writes nothing: its numbers are the committed file's).

# %%
if __name__ == "__main__" and not args.replay:
    run.finish()

# %% [markdown]
# # 02c · How many seeds a minimum is taken over (a study of 02)
#
# Paper A (arXiv 2510.06662), Section 6 and Appendix B.1: its Tables 3–5 report, as the digest
# reads them (no ±, and the text's "minimal validation error achieved across seeds"), the minimum
# validation error over seeds, and do not say over how many. A minimum over fewer seeds is higher
# on average. How much of the gap between our minima and Table 3's could the seed count be?
# `python further/02c_seed_count.py` (22 min 10 s on 2 cores); its notebook replays the committed
# run.

# %%
"""02c · The seed count behind a minimum: the expected minimum over k of 8 seeds (a study of 02)."""
import math
import sys
from pathlib import Path

import matplotlib.pyplot as plt

# the shared files from the repository root (the script's command) or from notebooks/ (its notebook)
sys.path[:0] = [str(Path.cwd()), str(Path.cwd().parent)]
import helpers
import plumbing
from engine import lesson02 as engine
from harness import Setting, int_list, positive_int

model = helpers.load_concept("02_multihead_model")

# %% [markdown]
# ## Settings
#
# File 02's table (its D, learning rate and data sizes, the same flags), with four rows of this
# study's own: the lengths, head counts, seeds and steps, whose default is already the paper's
# step count (so `--full` is the default); and `replay`, which draws the committed run again from
# its JSON instead of training (35 minutes). The committed notebook shows the committed run
# this way, and its first lines say which run it is.

# %%
SETTINGS = {
    **model.SETTINGS,
    # name: Setting(default, --quick, --full, type, what it sets)
    "T": Setting([8, 32], [8], ..., int_list, "sequence lengths T"),
    "heads": Setting([3, 4, 5], [3, 4], ..., int_list, "head counts h (D - 1, D, D + 1)"),
    "seeds": Setting(8, 3, ..., positive_int, "seeds per (T, h): the n that k runs up to"),
    "steps": Setting(20000, 300, ..., positive_int, "training steps per run (the paper's "
                     "20,000 is Appendix B.1's)"),
    "replay": plumbing.REPLAY,
}
PARTS = {"seeds": ()}  # the study is one part

NOTEBOOK_ARGS = "--replay ../results/02c_seed_count.json"  # the notebook draws the committed run


def config(argv=None):
    """Parse the flags (02's table, these rows and `replay`), with 02's refusals; one line
    naming the flag and exit code 2 for a run that cannot finish."""
    return plumbing.config(SETTINGS, argv, __doc__.split("\n")[0], PARTS,
                           full="as the default: 20,000 steps already",
                           notebook_args=NOTEBOOK_ARGS, refusals=refusals)


def refusals(args):
    """Lesson 02's refusals, and a minimum over k of n seeds needs n >= 2."""
    return model.refusals(args) + [("--seeds", args.seeds >= 2,
                                    "a minimum over k of n seeds needs n >= 2", 2)]


# %%
if __name__ == "__main__":
    args = config()
    run = plumbing.Run("02c_seed_count", args, PARTS)

# %% [markdown]
# ## The expected minimum over k seeds
#
# Train $n$ seeds of one model and sort their validation errors, $x_{(1)} \le \dots \le x_{(n)}$.
# A minimum over $k$ seeds is the minimum of a random $k$-subset; $x_{(i)}$ is that minimum when
# the subset holds it and $k - 1$ of the $n - i$ larger values, so
#
# $$\mathbb E\big[\min_k\big] = \sum_{i=1}^{n} x_{(i)}\,
#   \frac{\binom{n-i}{k-1}}{\binom{n}{k}}$$
#
# (`expected_minimum`, tested against every subset). At $k = 1$ it is the mean over
# seeds, Table 2's statistic; at $k = n$ the lowest seed. Table 3's minima are over an unstated
# number of seeds, so each of them sits somewhere on this curve — or below its end, where no
# seed count up to $n$ reaches. The models are file 02's default ($n = 8$ per head, so $E = 8h$):
# Table 2's model at every $h$, and Table 3's ($E = 32$) at $h = 4$ only; Table 3's $h = 3$ and
# 5 models are wider or narrower ($n = 11$, $7$), and are drawn for orientation only.
#
# **What would count against "the seed count explains the gap"**: our lowest seed of 8 staying
# far above Table 3's minimum, and a curve already flat at $k = 3$ (the seeds file 02 `--full`
# has), so that more seeds would not close it.

# %%
def expected_minimum(values, k):
    """{"mean", "std", "lowest", "highest"} of the minimum over k seeds drawn without
    replacement from the n seeds `values`, over all C(n, k) subsets alike.

    Sorted ascending x_(1) <= ... <= x_(n), the i-th value is a subset's minimum when the subset
    holds it and k - 1 of the n - i larger ones: P(min = x_(i)) = C(n - i, k - 1) / C(n, k)."""
    ordered, n = sorted(float(v) for v in values), len(values)
    if not 1 <= k <= n:
        raise ValueError(f"expected_minimum: k must be between 1 and {n} seeds, got {k}")
    chance = [math.comb(n - i, k - 1) / math.comb(n, k) for i in range(1, n + 1)]  # sums to 1
    mean = sum(p * x for p, x in zip(chance, ordered))
    second_moment = sum(p * x * x for p, x in zip(chance, ordered))
    return {"mean": mean, "std": math.sqrt(max(0.0, second_moment - mean ** 2)),
            "lowest": ordered[0], "highest": ordered[n - k]}   # the k largest: its minimum


def seed_count_study(args):
    """Train every (T, h, seed); per (T, h) the seeds, the mean's 95 % t-interval and the
    expected minimum over k seeds for k = 1 ... n, beside the paper's numbers."""
    runs = [dict(engine.base_run(args, model.RECIPE), T=T, h=h, seed=args.seed + s)
            for T in args.T for h in args.heads for s in range(args.seeds)]
    results = plumbing.run_sweep(runs, args.workers, model.train_one, engine.run_label,
                                 model.sweep_cost)
    table = {}
    for T in args.T:
        table[str(T)] = {}
        for h in args.heads:
            seeds = helpers.by_seed(results, "valid_nmse", T=T, h=h)
            mean, low, high = helpers.t_interval(seeds)
            table[str(T)][str(h)] = {
                "seeds": seeds, "mean_ci95": [mean, low, high],
                "by_k": [{"k": k, **expected_minimum(seeds, k)}
                         for k in range(1, len(seeds) + 1)],
                "paper": {"table_2_mean": model.PAPER_TABLE_2.get(h, {}).get(T),
                          "table_3_min": engine.PAPER_TABLE_3.get(h, {}).get(T),
                          "table_3_same_model": h * model.HEAD_DIM == 32}}
    return {"seed_count": table, "seconds": sum(r["seconds"] for r in results)}


def gap_explained(entry, from_k=3):
    """How much of the gap from the expected minimum over `from_k` seeds down to Table 3's
    minimum the step from `from_k` to all n seeds closes: (factor closed, factor left, the
    closed share of the gap on a log scale)."""
    curve = {point["k"]: point["mean"] for point in entry["by_k"]}
    start, end, paper = curve[min(from_k, len(curve))], curve[len(curve)], \
        entry["paper"]["table_3_min"]
    if paper is None or start <= paper:
        return None
    closed, left = start / end, end / paper
    return {"from_k": min(from_k, len(curve)), "closed": closed, "left": left,
            "share": math.log(closed) / math.log(start / paper)}


# %% [markdown]
# The figure: one panel per $T$, the expected minimum against $k$ for each $h$, the band from the
# best to the worst $k$-subset, Table 2's mean at $k = 1$ (a triangle) and Table 3's minimum as a
# dotted line in the same colour.

# %%
def plot_seed_count(result, args):
    """The expected minimum over k seeds against k, one panel per T, one line per h."""
    table = result["seed_count"]
    figure, axes = plt.subplots(1, len(table), figsize=(5.2 * len(table), 4), squeeze=False)
    for axis, (T, by_h) in zip(axes[0], table.items()):
        for index, (h, entry) in enumerate(by_h.items()):
            colour = f"C{index}"
            ks = [point["k"] for point in entry["by_k"]]
            axis.semilogy(ks, [point["mean"] for point in entry["by_k"]], "o-", color=colour,
                          label=f"h = {h}: ours")
            axis.fill_between(ks, [point["lowest"] for point in entry["by_k"]],
                              [point["highest"] for point in entry["by_k"]], color=colour,
                              alpha=0.15)
            paper = entry["paper"]
            if paper["table_2_mean"]:
                axis.semilogy([1], [paper["table_2_mean"]], "v", color=colour, ms=8,
                              label=f"h = {h}: Table 2 mean")
            if paper["table_3_min"]:
                same = "" if paper["table_3_same_model"] else " (another E)"
                axis.axhline(paper["table_3_min"], color=colour, ls=":",
                             label=f"h = {h}: Table 3 min{same}")
        axis.set_xlabel("k, the seeds a minimum is taken over")
        axis.set_ylabel("expected min validation NMSE over k seeds")
        axis.set_title(f"T = {T}, {args.steps:,} steps, n = {args.seeds} seeds")
        axis.set_xticks(range(1, args.seeds + 1))
        axis.legend(fontsize=6, ncol=2)
    figure.tight_layout()
    return figure


def report_seed_count(result, args):
    """Per (T, h): the mean and its interval beside Table 2's mean, the expected minimum at
    k = 1, 3 and n beside Table 3's minimum, and the share of the gap that more seeds close."""
    for T, by_h in result["seed_count"].items():
        print(f"T = {T}: validation NMSE over {args.seeds} seeds [paper]")
        for h, entry in by_h.items():
            mean, low, high = entry["mean_ci95"]
            paper, curve = entry["paper"], {p["k"]: p for p in entry["by_k"]}
            table_2 = f" [Table 2 mean {paper['table_2_mean']:.1e}]" \
                if paper["table_2_mean"] else ""
            print(f"  h = {h}: mean {mean:.2e}, 95% t [{low:.2e}, {high:.2e}]{table_2}")
            line = "  ".join(f"k={k}: {curve[k]['mean']:.2e}" for k in sorted({1, 3, args.seeds})
                             if k in curve)
            table_3 = "" if paper["table_3_min"] is None else \
                f" [Table 3 min {paper['table_3_min']:.1e}" + \
                ("" if paper["table_3_same_model"] else ", another model") + "]"
            print(f"         expected minimum {line}{table_3}")
            gap = gap_explained(entry)
            if gap and paper["table_3_same_model"]:
                print(f"         from k = {gap['from_k']} to {args.seeds} seeds: "
                      f"{gap['closed']:.1f}x lower, {gap['left']:.1f}x still above Table 3 "
                      f"({100 * gap['share']:.0f} % of the gap on a log scale)")


# %%
if __name__ == "__main__" and "seeds" in args.parts:
    if args.replay:
        study = plumbing.replay(args.replay)
    else:
        study = run.record(seed_count_study(args))
    run.figure(plot_seed_count(study, args), "02c_seed_count")
    report_seed_count(study, args)

# %% [markdown]
# ## What the committed run shows
#
# `python further/02c_seed_count.py` (`results/02c_seed_count.json`, 22 min 10 s on 2 CPU cores;
# its seeds 0–2 train the runs of file 02 `--full` at T = 8 and 32, whose committed file, made on
# another torch build, differs from them seed by seed). Validation NMSE of the last model, 8 seeds:
#
# | T, h | mean [95 % t] | Table 2 mean | E[min], k = 1 → 3 → 8 | Table 3 min |
# |---|---|---|---|---|
# | 8, 3 | 1.54e-3 [1.31e-3, 1.76e-3] | 6.9e-4 | 1.54e-3 → 1.30e-3 → 9.5e-4 | 2.1e-4 (n = 11) |
# | 8, **4** | 2.13e-5 [1.21e-5, 3.06e-5] | 6.1e-5 | 2.13e-5 → 1.30e-5 → **4.92e-6** | **1.3e-6** |
# | 8, 5 | 1.88e-5 [8.2e-6, 2.93e-5] | 3.4e-5 | 1.88e-5 → 9.25e-6 → 4.3e-6 | 2.2e-6 (n = 7) |
# | 32, 3 | 1.92e-3 [1.65e-3, 2.18e-3] | 9.1e-4 | 1.92e-3 → 1.62e-3 → 1.42e-3 | 2.7e-4 (n = 11) |
# | 32, **4** | 2.87e-5 [2.18e-5, 3.55e-5] | 4.8e-5 | 2.87e-5 → 2.10e-5 → **1.64e-5** | **3.4e-7** |
# | 32, 5 | 2.46e-5 [1.59e-5, 3.33e-5] | 4.9e-6 | 2.46e-5 → 1.63e-5 → 1.37e-5 | 3.2e-7 (n = 7) |
#
# **At h = D = 4, where Table 3's model is ours, the seed count explains little of the gap at
# T = 32 and part of it at T = 8.** Going from 3 seeds (file 02 `--full`) to 8
# lowers the expected minimum 1.3× at T = 32, 6 % of the gap to Table 3 on a log scale, and Table
# 3's minimum lies 48× below the lowest of our 8 seeds. At T = 8 it lowers it 2.6×, 43 % of the
# gap, and Table 3's minimum lies 3.7× below our lowest seed; that seed (4.9e-6) is 3.4× below the
# next, and the run this file replaces (on torch 2.14.1+cu130) had no such seed. Sixteen seeds
# at T = 8, h = 4 (`results/02c_seed_count_T8_heads4_seeds16.json`, 14 min 3 s; its first 8
# seeds are these to the last digit) find no lower seed and three more within 2× of it: from
# k = 3 to 16 seeds the expected minimum falls 2.1×, 36 % of the gap, and Table 3's minimum
# stays 3.7× below our lowest. So at T = 8 the count explains part of the gap, and not through
# one seed alone. The spread differs: Table 2's std/mean at h = 4 is 2.5 (T = 8), 4.8 (T = 32) and 6.4 (T = 64), ours
# 0.52 and 0.28 (sample std over 8 seeds). Over n non-negative errors std/mean is at most √n
# with the sample std (divisor n − 1) and √(n − 1) with the population std, both reached when one
# error is non-zero and the rest zero; the paper does not say which std its ± is. Table 2's 2.5
# then needs at least 7 seeds (8 with the population std), its 4.8 at least 23 (24) and its 6.4
# at least 41 (42): either the paper ran more seeds than our 8, or its ± is not a spread over
# seeds. Our means at h = 4 are, by contrast, *below* Table 2's (whose 6.1e-5 and 4.8e-5 are
# above our intervals). The paper's own tables put its h = 4 minimum 46× (T = 8) and 141×
# (T = 32) below its mean; our minimum over 8 seeds sits 4.3× and 1.7× below ours. A minimum that
# far below the mean needs a much wider spread over seeds than ours, a different recipe, or many
# more seeds. Our runs cannot tell these apart. At h = 5 the T = 8 curve falls 4.4× from k = 1
# to 8.

# %% [markdown]
# ## Commands and files
#
# File 02's model at the paper's 20,000 steps, T = 8 and 32, h = 3, 4, 5, trained with 8 seeds.
# For k = 1 ... 8 the minimum over k seeds, averaged over every k-subset of the 8
# (expected_minimum), with its spread; Table 2's means and Table 3's minima beside the
# curve; and how much of the gap to Table 3 the seed count can explain.
#
#     python further/02c_seed_count.py               # 8 seeds x 6 models, 20,000 steps: 22 min 10 s
#     python further/02c_seed_count.py --T 8 --heads 4 --seeds 16   # 16 seeds at T = 8: 14 min 3 s
#     python further/02c_seed_count.py --quick       # seconds; what the tests use
#     python further/02c_seed_count.py --replay results/02c_seed_count.json   # the committed run, drawn
#
# Output (under runs/, which git ignores; `--out .` refreshes the committed files)
#     results/02c_seed_count.json: "seed_count" -> "<T>" -> "<h>" -> {"seeds", "mean_ci95",
#     "by_k": [{"k", "mean", "std", "lowest", "highest"}], "paper"}; figures/02c_seed_count.png.

# %% [markdown]
# ## The run's file
#
# Every number above, with the flags that produced them and the run's wall time (a replay
# writes nothing: its numbers are the committed file's).

# %%
if __name__ == "__main__" and not args.replay:
    run.finish()

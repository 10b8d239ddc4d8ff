# %% [markdown]
# # 02e · Train until the error stops falling (a study of 02)
#
# Paper A (arXiv 2510.06662), Tables 2–3 and Remark B.1.1: its text reports "the minimal
# validation error" (the digest reads Table 3 as such minima over seeds and Table 2 as means), from
# a training recipe it does not give. Lesson 02 trains for 2,000 steps, its `--full`
# for 20,000, and each run's learning rate decays to zero at its last step, so a curve flattens
# there whatever the model could still reach. This study trains $h = 3, 4, 5$ (below, at and above
# $D = 4$) to budgets ten and more times longer, each budget with its own schedule, and asks
# where the error stops falling and whether it reaches the paper's level. `python
# further/02e_training_budget.py`; its notebook replays the committed runs.

# %%
"""02e · The training budget: where paper A's errors stop falling (a study of 02)."""
import copy
import math
import sys
import time
from pathlib import Path

import matplotlib.pyplot as plt
import matplotlib.ticker
import torch

# the shared files from the repository root (the script's command) or from notebooks/ (its notebook)
sys.path[:0] = [str(Path.cwd()), str(Path.cwd().parent)]
import helpers
import plumbing
from engine import lesson02 as engine
from harness import Setting, float_list, int_list, positive_float, positive_int

model = helpers.load_concept("02_multihead_model")

# %% [markdown]
# ## Settings
#
# Lesson 02's model and data (Appendix B.1: $n = 8$, $N = 32$, 8,000 training and 2,000
# validation sequences, the same for every model at one $T$), with this study's rows: the
# recipes the search tries, the budgets, and the recipe of the budgets when the search does not
# run. `replay` draws committed runs again from their JSON instead of training.

# %%
SETTINGS = {
    **model.SETTINGS,
    # name: Setting(default, --quick, --full, type, what it sets)
    "T": Setting([8], [8], [8, 32, 128], int_list, "sequence lengths T"),
    "heads": Setting([3, 4, 5], [3, 4], ..., int_list,
                     "head counts trained at every budget (D - 1, D, D + 1)"),
    "heads_below": Setting([1, 2], [2], ..., int_list,
                           "head counts trained at the largest budget only (the factor per head)"),
    "budgets": Setting([6000, 20000, 60000, 200000], [100, 300], ..., int_list,
                       "training steps of each budget, each with its own warm-up and cosine"),
    "seeds": Setting(3, 2, 5, positive_int, "seeds per (T, h, budget), paired by data and "
                     "batch order"),
    # The committed search's pick (results/02e_training_budget_parts_search.json):
    "batch_size": Setting(256, 64, ..., positive_int,
                          "sequences per step of the budgets, when the search does not run"),
    "lr": Setting(3e-3, 1e-2, ..., positive_float,
                  "peak learning rate of the budgets, when the search does not run"),
    "search_batches": Setting([64, 256], [64], ..., int_list, "batch sizes the search tries"),
    "search_lrs": Setting([1e-3, 3e-3, 1e-2], [3e-3, 1e-2], ..., float_list,
                          "peak learning rates the search tries"),
    "search_steps": Setting(20000, 100, ..., positive_int, "steps of every search run"),
    "search_seeds": Setting(3, 2, ..., positive_int, "seeds of every search run"),
    "timing_steps": Setting(300, 20, ..., positive_int,
                            "steps of each timed training, stacked and one after another"),
    "replay": Setting(None, ..., ..., plumbing.path_list,
                      "draw these committed results files again instead of training"),
}
del SETTINGS["steps"]          # the budgets replace lesson 02's one step count
CURVE_POINTS = 40              # validation checkpoints along each run, evenly spaced
PARTS = {"search": (), "timing": (), "budget": ()}  # budget: the search's pick when both run

NOTEBOOK_ARGS = ("--replay ../results/02e_training_budget_parts_search.json,"
                 "../results/02e_training_budget_parts_budget.json,"
                 "../results/02e_training_budget_T32_heads_below2_budgets20000-50000_parts_budget"
                 ".json")  # the committed runs: the search, then T = 8 and T = 32


def refusals(args):
    """Lesson 02's refusals, and the seeds an interval needs."""
    return model.refusals(args) + [
        ("--seeds", args.seeds >= 2, "a paired interval needs at least 2 seeds", 2),
        ("--search-seeds", args.search_seeds >= 2, "a search needs at least 2 seeds", 2)]


def config(argv=None):
    """Parse the flags (02's table less `steps`, these rows); one line naming the flag and exit
    code 2 for a run that cannot finish."""
    return plumbing.config(SETTINGS, argv, __doc__.split("\n")[0], PARTS,
                           full="T 8, 32, 128 at every budget (for a GPU or many cores)",
                           notebook_args=NOTEBOOK_ARGS, refusals=refusals)


# %%
if __name__ == "__main__":
    args = config()
    run = plumbing.Run("02e_training_budget", args, PARTS)

# %% [markdown]
# ## The seeds of one model, trained as one
#
# Every run here is $T$, $h$, a budget and a recipe, trained for several seeds. The seeds share
# their data and differ in initialisation and batch order; seed $s$ draws the same batches at
# every $h$, so two head counts are paired by data and batch order. `train_ensemble`
# stacks the seeds' parameters and trains them as one model (`torch.func.vmap`): the loss is the
# sum of the seeds' losses and AdamW acts element by element, so each seed takes exactly the
# steps it would take alone (a test checks it against separate runs); on a CPU it is faster
# at short $T$ only (the timing part below measures it). Each run records its validation NMSE at `CURVE_POINTS` checkpoints,
# so it reports both readings of "the minimal validation error": the last model and the best
# checkpoint along training.

# %%
class Ensemble(torch.nn.Module):
    """S models of one architecture trained as one (torch.func): each parameter stacked on a
    new first axis [S, ...], the forward pass vmapped over it.

    Why it is the same as training them apart: the loss is the SUM of the members' losses, so
    each member's slice of a gradient is its own loss's gradient; AdamW and its weight decay
    act element by element, so each slice takes the step it would take alone. Only the order
    of floating-point sums differs. It pays where a step is mostly fixed cost per operation,
    which S members share: on a CPU for the smallest models only (02e measures it)."""

    def __init__(self, models):
        super().__init__()
        stacked, buffers = torch.func.stack_module_state(models)
        if buffers:
            raise ValueError("Ensemble: models with buffers are not supported")
        self.names = list(stacked)
        self.weights = torch.nn.ParameterList(
            [torch.nn.Parameter(stacked[name]) for name in self.names])     # each [S, ...]
        self.template = (copy.deepcopy(models[0]).to("meta"),)  # a tuple: not a submodule

    def forward(self, x):
        """x [S, B, ...] (a batch per member) -> [S, B, ...]."""
        def one(weights, x_member):
            parameters = dict(zip(self.names, weights))
            return torch.func.functional_call(self.template[0], parameters, (x_member,))
        return torch.func.vmap(one)(tuple(self.weights), x)

    def member(self, i):
        """The state dict of member i, for a model of the original class."""
        return {name: w[i].detach().clone() for name, w in zip(self.names, self.weights)}


def train_ensemble(models, seeds, train, valid, *, steps, batch_size, lr, weight_decay=0.0,
                   names=None, evaluate_every=0, keep_best=False):
    """train_regression for S models at once, model i with the batches of seeds[i], on the same
    data: one helpers.fit() of their Ensemble on the sum of their MSE losses. Each model ends
    with its trained weights (its best checkpoint's with keep_best). Returns one
    train_regression result per model, each with its "losses" [steps] as well."""
    names = names or [f"model {i}" for i in range(len(models))]
    helpers.check_finite_data(names[0], train, valid)
    x_train, y_train = train
    device = y_train.device
    batches = torch.stack([helpers.draw_batches(len(y_train), steps, batch_size, seed, device)
                           for seed in seeds], dim=1)                       # [steps, S, batch]
    ensemble = Ensemble(models).to(device)
    losses = torch.zeros(steps, len(models), device=device)               # each member's loss
    histories = [[] for _ in models]
    best = [None] * len(models)

    def mse_at(step):
        index = batches[step]                                               # [S, batch]
        members = torch.mean((ensemble(x_train[index]) - y_train[index]) ** 2, dim=1)  # [S]
        losses[step] = members.detach()
        return members.sum()

    def checkpoint(step):
        if evaluate_every and (step + 1) % evaluate_every == 0:
            for i, score in enumerate(evaluate_members(ensemble, valid)):
                histories[i].append({"step": step + 1, "valid_nmse": score})
                if keep_best and score <= min(h["valid_nmse"] for h in histories[i]):
                    best[i] = ensemble.member(i)

    helpers.fit(ensemble, mse_at, steps=steps, lr=lr, weight_decay=weight_decay,
        name=" / ".join(names), after_step=checkpoint)
    results = []
    last_valid = evaluate_members(ensemble, valid)
    for i, model in enumerate(models):
        selected = bool(keep_best and histories[i])                         # a best checkpoint
        model.load_state_dict(best[i] if selected else ensemble.member(i))
        results.append({"train_nmse": helpers.evaluate_nmse(model, train),
                        "valid_nmse": (helpers.evaluate_nmse(model, valid) if selected
                                       else last_valid[i]),
                        "last_valid_nmse": last_valid[i], "history": histories[i],
                        "selection": "best_checkpoint" if selected else "last",
                        "losses": losses[:, i]})
    return results


@torch.no_grad()
def evaluate_members(ensemble, data, batch_size=4096):
    """The NMSE of each member of an Ensemble on the same (x, y): a list of S floats."""
    x, y = data
    size = len(ensemble.weights[0])
    was_training = ensemble.training
    ensemble.eval()
    chunks = [x[i:i + batch_size] for i in range(0, len(y), batch_size)]
    prediction = torch.cat([ensemble(chunk.expand(size, *chunk.shape)) for chunk in chunks],
                           dim=1)                                           # [S, n]
    ensemble.train(was_training)
    return [helpers.nmse(p.cpu(), y.cpu()) for p in prediction]


def train_seeds(run):
    """Train the seeds of one (T, h, steps, batch, lr) as one ensemble: one row per seed with
    its last and best validation NMSE, its training NMSE and its curve."""
    started = time.perf_counter()
    device = torch.device(run["device"])
    train, valid, _ = model.make_data(run["T"], run["D"], run["n_train"], run["n_valid"],
                                      run["data_seed"], run["directions"])
    train = tuple(t.to(device) for t in train)
    valid = tuple(t.to(device) for t in valid)
    seeds = list(range(run["seed"], run["seed"] + run["seeds"]))
    models = [seeded_model(run, seed).to(device) for seed in seeds]
    fits = train_ensemble(
        models, seeds, train, valid, steps=run["steps"], batch_size=run["batch_size"],
        lr=run["lr"], evaluate_every=max(1, run["steps"] // CURVE_POINTS),
        names=[f"T={run['T']} h={run['h']} steps={run['steps']} seed={s}" for s in seeds])
    per_seed = []
    for seed, fit in zip(seeds, fits):
        curve = list(fit["history"])
        if not curve or curve[-1]["step"] != run["steps"]:      # the last model is a checkpoint
            curve.append({"step": run["steps"], "valid_nmse": fit["valid_nmse"]})
        best = min(curve, key=lambda point: point["valid_nmse"])
        per_seed.append({"seed": seed, "last": fit["valid_nmse"], "best": best["valid_nmse"],
                         "best_step": best["step"], "train": fit["train_nmse"],
                         "curve": curve})
    return {key: run[key] for key in ("part", "T", "h", "steps", "batch_size", "lr")} | {
        "per_seed": per_seed, "seconds": time.perf_counter() - started}


def seeded_model(run, seed):
    """Lesson 02's model of a run, initialised from `seed`."""
    helpers.seed_everything(seed)
    return model.build_model(run)


def train_all(args, part, grid):
    """Train every (T, h, steps, batch_size, lr) of grid, a list of dicts; the rows."""
    base = dict(model.RECIPE, D=args.D, directions=model.task.DEFAULT_DIRECTIONS,
                n_train=args.n_train, n_valid=args.n_valid, data_seed=args.seed,
                device=args.device, seed=args.seed, part=part)
    runs = [dict(base, **cell) for cell in grid]
    return plumbing.run_sweep(runs, args.workers, train_seeds, run_label, run_cost)


def run_cost(run):
    """run_sweep's scheduling guess: seconds grow like T * steps * batch * seeds."""
    return run["T"] * run["steps"] * run["batch_size"] * run["seeds"]


def mean_last(row):
    """The mean over seeds of a row's last validation NMSE."""
    return helpers.seed_stats([seed["last"] for seed in row["per_seed"]])["mean"]


def run_label(row):
    return (f"{row['part']:<6} T={row['T']:<4} h={row['h']} steps={row['steps']:<6} "
            f"batch={row['batch_size']:<4} lr={row['lr']:g}  mean last valid NMSE "
            f"{mean_last(row):.2e} ({row['seconds']:.0f} s)")


# %% [markdown]
# ## The recipe: a small search
#
# The paper gives no optimiser, batch size, learning rate or step count. We keep lesson 02's
# AdamW with warm-up and cosine, and try every batch size and peak learning rate of the search's
# rows at $T = 8$ (the first `--T`), $h = D - 1$ and $D$, for `search_steps` steps. The pick is
# the recipe with the lowest mean over both head counts of the mean log10 validation NMSE of the
# last model: it must serve the model below the knee as well as the one at it, so that a knee is
# not deepened by tuning only $h = D$.

# %%
def search(args):
    """Every search recipe at the first T and h = D - 1, D; the rows and the pick."""
    grid = [dict(T=args.T[0], h=h, steps=args.search_steps, batch_size=batch, lr=lr,
                 seeds=args.search_seeds)
            for batch in args.search_batches for lr in args.search_lrs
            for h in (args.D - 1, args.D) if h >= 1]
    rows = train_all(args, "search", grid)
    scores = {}
    for row in rows:
        mean_log = sum(math.log10(s["last"]) for s in row["per_seed"]) / len(row["per_seed"])
        scores.setdefault((row["batch_size"], row["lr"]), []).append(mean_log)
    recipes = [{"batch_size": batch, "lr": lr, "score": sum(logs) / len(logs)}
               for (batch, lr), logs in scores.items()]
    pick = min(recipes, key=lambda recipe: recipe["score"])
    return {"search": {"rows": rows, "recipes": recipes,
                       "pick": {"batch_size": pick["batch_size"], "lr": pick["lr"]}}}


# %% [markdown]
# ## The budgets
#
# Each budget is its own run from scratch, its warm-up and cosine ending at its last step (the
# course's one schedule, not a warm-up–stable–decay run branched at each budget). What we report
# at each budget, over seeds: the validation NMSE of the last model and of the best checkpoint,
# and the training NMSE of the last model (a training error far below the validation error is
# overfitting; both falling together is under-training). The error is **no longer shown to
# fall** from the first budget whose next budget does not lower the last model's log10 NMSE by
# a paired 95 % interval that excludes 0. With 3 seeds that test is weak: a small fall it
# misses still shows in the means and in the curves of the figure.

# %%
def budgets(args, recipe):
    """Every (T, h, budget) of the study with `recipe`, and h = heads_below at the largest
    budget; the rows."""
    largest = max(args.budgets)
    grid = [dict(T=T, h=h, steps=steps, seeds=args.seeds, **recipe)
            for T in args.T for h in args.heads for steps in args.budgets]
    grid += [dict(T=T, h=h, steps=largest, seeds=args.seeds, **recipe)
             for T in args.T for h in args.heads_below if h not in args.heads]
    return train_all(args, "budget", grid)


def log_change(before, after):
    """Paired change of log10 validation NMSE (last model) from one row to another, per seed."""
    return helpers.paired_difference(
        [math.log10(b["last"]) - math.log10(a["last"])
         for a, b in zip(before["per_seed"], after["per_seed"])],
        below="falls", above="rises")


def verdicts(rows, args):
    """Per (T, h): the statistics at each budget, the change to the next budget, and where the
    error stops falling; per T: the knee (h = D - 1 over h = D) and the factor per head below
    D at the largest budget, as paired log10 ratios."""
    found = {}
    for T in sorted({row["T"] for row in rows}):
        here = {(row["h"], row["steps"]): row for row in rows if row["T"] == T}
        per_h = {}
        for h in sorted({h for h, _ in here}):
            steps = sorted(s for hh, s in here if hh == h)
            entry = {"budgets": {}, "changes": {}, "stops_falling_at": None}
            for s in steps:
                seeds = here[(h, s)]["per_seed"]
                entry["budgets"][str(s)] = {
                    key: helpers.seed_stats([seed[key] for seed in seeds])
                    for key in ("last", "best", "train")}
            for before, after in zip(steps, steps[1:]):
                change = log_change(here[(h, before)], here[(h, after)])
                entry["changes"][f"{before}->{after}"] = change
                if entry["stops_falling_at"] is None and change["verdict"] != "falls":
                    entry["stops_falling_at"] = before
            per_h[str(h)] = entry
        largest = max(s for _, s in here)
        ratios = {}
        for h in sorted({h for h, s in here if s == largest}):
            if (h + 1, largest) in here:
                ratios[f"{h}/{h + 1}"] = log_change(here[(h + 1, largest)], here[(h, largest)])
        found[str(T)] = {"by_h": per_h, "largest_budget": largest, "ratios_at_largest": ratios}
    return found


# %% [markdown]
# ## Running it
#
# The search (when it runs) picks the recipe; the budgets train with it. The timing part trains
# the seeds of $h = D$ for a few hundred steps at each $T$, stacked and one after another,
# alternated in one process, so the speed-up quoted is measured on this machine.

# %%
def time_stacking(args, recipe, repeats=2):
    """Seconds per step of args.seeds models of h = D at each T: one after another
    (train_regression) and stacked (train_ensemble), alternated `repeats` times, the faster of
    each; their ratio. On one thread, as each worker of a sweep on the CPU trains."""
    timing, steps = {}, args.timing_steps
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    for T in args.T:
        train, valid, _ = model.make_data(T, args.D, args.n_train, args.n_valid, args.seed)
        run = dict(model.RECIPE, h=args.D)
        seeds = list(range(args.seeds))
        seconds = {"separate": [], "stacked": []}
        for _ in range(repeats):
            started = time.perf_counter()
            for seed in seeds:
                helpers.train_regression(seeded_model(run, seed), train, valid, steps=steps,
                                         batch_size=recipe["batch_size"], lr=recipe["lr"],
                                         seed=seed)
            seconds["separate"].append((time.perf_counter() - started) / steps)
            started = time.perf_counter()
            train_ensemble([seeded_model(run, seed) for seed in seeds], seeds, train,
                                   valid, steps=steps, batch_size=recipe["batch_size"],
                                   lr=recipe["lr"])
            seconds["stacked"].append((time.perf_counter() - started) / steps)
        entry = {key: min(values) for key, values in seconds.items()}
        entry["speed_up"] = entry["separate"] / entry["stacked"]
        timing[str(T)] = entry
        print(f"T = {T}: {args.seeds} seeds one after another {entry['separate'] * 1e3:.1f} ms "
              f"per step, stacked {entry['stacked'] * 1e3:.1f} ms: {entry['speed_up']:.2f}x",
              flush=True)
    torch.set_num_threads(threads)
    return timing


if __name__ == "__main__" and not args.replay:
    recipe = {"batch_size": args.batch_size, "lr": args.lr}
    if "search" in args.parts:
        found = run.record(search(args))
        recipe = found["search"]["pick"]
    if "timing" in args.parts:
        run.record({"stacking": time_stacking(args, recipe)})
    if "budget" in args.parts:
        run.record({"recipe": recipe})
        rows = budgets(args, recipe)
        run.record({"budget": {"rows": rows, "verdicts": verdicts(rows, args)}})

# %% [markdown]
# ## Beside the paper
#
# As the digest reads the paper's tables (its inference: Table 2 carries ± and its header says
# mean, Table 3 none), Table 2 prints the mean over seeds at $E = 8h$ (our model), Table 3 the
# minimum over seeds at a fixed $E = 32$, which is our model at $h = 4$ only. So: our mean beside
# Table 2's at every $h$, our minimum beside Table 3's at $h = 4$, and a drop between two $h$ as a
# ratio of means beside Table 2's ratio of means. The paired ratio (the geometric mean of the
# per-seed ratios, with its interval) is ours: no table of the paper gives it, so it stands
# beside none of its numbers.

# %%
def report(numbers):
    """The search, then per T: each h at each budget (last min / mean, best min, training
    mean), where it stops falling, the paper's numbers, and the ratios at the largest budget."""
    if "search" in numbers:
        print("search (T = %d, last model, mean log10 validation NMSE over h = D - 1 and D):"
              % numbers["search"]["rows"][0]["T"])
        for recipe in sorted(numbers["search"]["recipes"], key=lambda r: r["score"]):
            means = [f"h = {row['h']}: mean {mean_last(row):.2e}"
                     for row in numbers["search"]["rows"]
                     if (row["batch_size"], row["lr"]) == (recipe["batch_size"], recipe["lr"])]
            print(f"  batch {recipe['batch_size']:>4}, lr {recipe['lr']:<6g} "
                  f"{recipe['score']:+.2f}   ({', '.join(means)})")
        print(f"  pick: {numbers['search']['pick']}")
    for T, timing in numbers.get("stacking", {}).items():
        print(f"T = {T}: the seeds one after another {timing['separate'] * 1e3:.1f} ms per step, "
              f"stacked {timing['stacked'] * 1e3:.1f} ms: {timing['speed_up']:.2f}x")
    if "budget" not in numbers:
        return
    for T, found in numbers["budget"]["verdicts"].items():
        print(f"T = {T} (recipe {numbers['recipe']}):")
        for h, entry in found["by_h"].items():
            for steps, stats in entry["budgets"].items():
                print(f"  h = {h} {int(steps):>7} steps: valid last min {stats['last']['min']:.2e}"
                      f" mean {stats['last']['mean']:.2e}; best min {stats['best']['min']:.2e}"
                      f" mean {stats['best']['mean']:.2e}; train mean {stats['train']['mean']:.2e}")
            for name, change in entry["changes"].items():
                print("      " + helpers.describe_difference(f"log10 change {name}", change))
            where = entry["stops_falling_at"]
            if len(entry["budgets"]) > 1:                # one budget: no fall to compare
                print("      no further fall shown from: " + (
                    f"{where} steps" if where else "none: still falling at the largest budget"))
            print("      " + beside_the_paper(int(T), int(h), entry["budgets"][str(max(
                int(s) for s in entry["budgets"]))]))
        largest = str(found["largest_budget"])
        for name, ratio in found["ratios_at_largest"].items():
            low, high = ratio["ci95"]
            below, above = name.split("/")
            means = [found["by_h"][h]["budgets"][largest]["last"]["mean"] for h in (below, above)]
            table = model.PAPER_TABLE_2
            paper = table[int(below)][int(T)] / table[int(above)][int(T)] \
                if int(T) in table.get(int(below), {}) else None
            print(f"  at {largest} steps, h = {below} over h = {above}: ratio of means"
                  f" {means[0] / means[1]:.3g}x"
                  + (f" (Table 2's ratio of means {paper:.3g}x)" if paper else "")
                  + f"; paired by seed, ours {10 ** ratio['mean']:.3g}x [{10 ** low:.3g},"
                  f" {10 ** high:.3g}]")


def beside_the_paper(T, h, stats):
    """Our mean over Table 2's mean and, at h = 4, our minimum over Table 3's minimum (the
    same model there), at a row's largest budget."""
    words = []
    if T in model.PAPER_TABLE_2.get(h, {}):
        paper = model.PAPER_TABLE_2[h][T]
        words.append(f"mean / Table 2's mean {paper:.2e}: {stats['last']['mean'] / paper:.3g}x")
    if h == 4 and T in engine.PAPER_TABLE_3[4]:
        paper = engine.PAPER_TABLE_3[4][T]
        words.append(f"min / Table 3's min {paper:.2e}: {stats['last']['min'] / paper:.3g}x, "
                     f"best checkpoint's min {stats['best']['min'] / paper:.3g}x")
    return "; ".join(words) or "no table of the paper's for this model"


def merged(numbers, more):
    """The numbers of several runs of this study as one: the budgets' rows and verdicts of
    every T; the rest from the first file that has it."""
    together = dict(more) | dict(numbers)
    if "budget" in numbers and "budget" in more:
        together["budget"] = {
            "rows": numbers["budget"]["rows"] + more["budget"]["rows"],
            "verdicts": numbers["budget"]["verdicts"] | more["budget"]["verdicts"]}
    if "stacking" in numbers and "stacking" in more:
        together["stacking"] = more["stacking"] | numbers["stacking"]
    return together


def plot(numbers):
    """Top, one panel per T: NMSE against the budget, means over seeds: the last model's
    validation NMSE (solid), the best checkpoint's (dotted), the training NMSE (dashed), and at
    the right edge Table 2's mean (x) and, at h = 4, Table 3's minimum (+). Bottom: the
    validation NMSE along training at the largest budget (mean over seeds)."""
    found = numbers["budget"]["verdicts"]
    figure, axes = plt.subplots(2, len(found), figsize=(5.2 * len(found), 7.6), squeeze=False)
    for column, (T, by_T) in enumerate(found.items()):
        top, bottom = axes[0][column], axes[1][column]
        edge = by_T["largest_budget"] * 1.6
        for h, entry in by_T["by_h"].items():
            colour = f"C{int(h) - 1}"                     # one colour per h in every panel
            steps = [int(s) for s in entry["budgets"]]
            for key, style in (("last", "o-"), ("best", ":"), ("train", "--")):
                top.loglog(steps, [entry["budgets"][str(s)][key]["mean"] for s in steps], style,
                           color=colour, label=f"h = {h}" if key == "last" else None)
            if int(T) in model.PAPER_TABLE_2.get(int(h), {}):
                top.plot(edge, model.PAPER_TABLE_2[int(h)][int(T)], "x", color=colour)
            if h == "4":
                top.plot(edge, engine.PAPER_TABLE_3[4][int(T)], "+", color=colour, ms=10)
            curve = mean_curve(numbers["budget"]["rows"], int(T), int(h), by_T["largest_budget"])
            bottom.loglog(*zip(*curve), color=colour, label=f"h = {h}")
        top.set_title(f"T = {T}: solid valid (last), dotted best, dashed train", fontsize=9)
        budgets = sorted({int(step) for entry in by_T["by_h"].values()
                          for step in entry["budgets"]})
        top.set_xticks(budgets, [f"{step:,}" for step in budgets])   # the budgets themselves
        top.set_xlabel("training steps (each its own schedule)")
        bottom.set_title(f"T = {T}: validation NMSE along the {by_T['largest_budget']:,}-step run",
                         fontsize=9)
        bottom.set_xlabel("step")
        for axis in (top, bottom):
            axis.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())  # major labels only
    axes[0][0].set_ylabel("mean NMSE over seeds (x: Table 2 mean, +: Table 3 min)")
    axes[1][0].set_ylabel("mean validation NMSE over seeds")
    axes[1][0].legend(fontsize=7)                        # the first T has every h
    figure.tight_layout()
    return figure


def mean_curve(rows, T, h, steps):
    """[(step, mean validation NMSE over seeds)] along the run of (T, h, steps)."""
    row = next(r for r in rows if (r["T"], r["h"], r["steps"]) == (T, h, steps))
    curves = [seed["curve"] for seed in row["per_seed"]]
    return [(points[0]["step"], sum(p["valid_nmse"] for p in points) / len(points))
            for points in zip(*curves)]


# %%
if __name__ == "__main__":
    numbers = run.numbers
    if args.replay:
        numbers = {}
        for path in args.replay:                 # the search's file, then one per T
            numbers = merged(numbers, plumbing.replay(path))
    report(numbers)
    if "budget" in numbers:
        run.figure(plot(numbers), "02e_training_budget")

# %% [markdown]
# ## What the committed runs show
#
# **The search** (`results/02e_training_budget_parts_search.json`, 12 min 2 s on 2 cores; 3
# seeds, 20,000 steps, $T = 8$): batch 256 at a peak rate of 3e-3 has the lowest score, with the
# $h = 4$ mean at 8.0e-6 against 1.8e-5 for lesson 02's batch 64 at 1e-2, and the $h = 3$ mean
# unchanged (1.6e-3 in both).
#
# **The budgets at $T = 8$** (`results/02e_training_budget_parts_budget.json`, 81 min 51 s on 2
# cores; 3 seeds): the last model's validation NMSE, mean (minimum), and the training NMSE's
# mean:
#
# | h | 6,000 steps | 20,000 | 60,000 | 200,000 | paper: Table 2 mean | paper: Table 3 min |
# |---|---|---|---|---|---|---|
# | 1 | – | – | – | 7.1e-3 (6.8e-3); train 4.4e-3 | 7.0e-2 | – |
# | 2 | – | – | – | 2.2e-3 (2.1e-3); train 1.2e-3 | 7.3e-3 | – |
# | 3 | 2.1e-3 (2.0e-3); train 1.8e-3 | 1.6e-3 (1.4e-3); train 1.2e-3 | 1.0e-3 (5.5e-4); train 5.7e-4 | 9.6e-4 (5.6e-4); train 3.6e-4 | 6.9e-4 | – |
# | 4 | 1.1e-4 (9.0e-5); train 6.9e-5 | 8.0e-6 (7.2e-6); train 1.6e-6 | 3.8e-6 (2.0e-6); train 1.0e-7 | 5.5e-6 (1.1e-6); train 7.9e-9 | 6.1e-5 | 1.3e-6 |
# | 5 | 9.8e-5 (7.7e-5); train 6.6e-5 | 9.0e-6 (4.0e-6); train 1.6e-6 | 2.8e-6 (8.5e-7); train 6.3e-8 | 1.3e-6 (2.8e-8); train 6.0e-9 | 3.4e-5 | – |
#
# - **Where the error stops falling.** At $h = 4$ the error falls 13.7× [5.9, 32] from 6,000 to
#   20,000 steps and is not shown to fall further (2.4× [0.69, 8.3] to 60,000, 1.2× [0.02, 92]
#   to 200,000; factors of the mean over seeds of the log error, 95 % intervals over 3 paired
#   seeds). Meanwhile its training NMSE falls from 1.6e-6 to 7.9e-9. The seeds part ways:
#   from 20,000 to 200,000 steps two fall 6.4× and 7.9× and one rises to 1.4e-5 (its best
#   checkpoint came at step 45,000; the overfitting of Remark B.1.1 would look so), so three
#   seeds cannot say whether the model still learns the task there. At $h = 5$ the same, with a
#   larger spread;
#   at $h = 3$ no fall is shown after 6,000 steps (the means 2.1e-3 → 9.6e-4 keep drifting down
#   by 1.06× over the last 140,000 steps).
# - **Against the paper's levels, statistic for statistic.** At 200,000 steps our $h = 4$
#   minimum is 1.1e-6 against Table 3's 1.3e-6 (0.85×; the best checkpoint's 9.6e-7, 0.73×), and
#   our mean over the three seeds 5.5e-6 against Table 2's 6.1e-5 (0.09×; 86 % of it is the seed
#   that rose), the minimum being one of the two seeds that kept falling; where the stopping rule
#   stops (20,000 steps) the minimum is 7.2e-6, 5.4× Table 3's. Below it, our $h = 3$ mean is 1.39× Table 2's, our $h = 2$ and
#   $h = 1$ means 0.31× and 0.10× of it: our few-head models are *better* than the paper's.
# - **The knee and the steps below it** (at 200,000 steps). Ratios of means, beside Table 2's
#   ratios of means: $h = 3$ over $h = 4$ 175× (Table 2's: 11×), $h = 1$ over 2 3.2× and 2 over 3
#   2.3× (Table 2's: 9.6× and 10.5×); the ratio of minima at the knee 500× (Table 3's: 160×,
#   whose $h = 3$ model is wider than ours). One ratio each, no interval. Ours alone, paired by
#   seed (the per-seed ratios' geometric means, 95 % intervals): 342× [11, 10,600], 3.2× [2.9,
#   3.4], 2.5× [0.76, 8.0], so the fall from $h = 1$ to 2 is separated from no change and the one
#   from 2 to 3 is not. By the ratios of means each head below $D$ buys less than in Table 2, and
#   the knee is deeper than Table 2's: point estimates over 3 seeds, the knee's paired interval
#   wide.
#
# **The budgets at $T = 32$**
# (`results/02e_training_budget_T32_heads_below2_budgets20000-50000_parts_budget.json`, 37 min
# 55 s on 2 cores; 3 seeds; $h = 3, 4, 5$ at 20,000 and 50,000 steps, $h = 2$ at 50,000), as
# above:
#
# | h | 20,000 steps | 50,000 | paper: Table 2 mean | paper: Table 3 min |
# |---|---|---|---|---|
# | 2 | – | 3.5e-3 (3.4e-3); train 2.7e-3 | 9.4e-3 | – |
# | 3 | 2.1e-3 (1.8e-3); train 1.8e-3 | 1.4e-3 (1.3e-3); train 9.9e-4 | 9.1e-4 | – |
# | 4 | 1.5e-5 (1.3e-5); train 7.8e-6 | 3.6e-6 (2.2e-6); train 4.8e-7 | 4.8e-5 | 3.4e-7 |
# | 5 | 6.4e-6 (5.9e-6); train 5.3e-6 | 2.0e-6 (3.6e-7); train 2.1e-7 | 4.9e-6 | – |
#
# Unlike at $T = 8$, the $h = 4$ error is still falling at 50,000 steps: 4.7× [1.7, 13] from 20,000
# (factors of the mean log error over 3 paired seeds; $h = 3$ 1.5× [0.83, 2.8] and $h = 5$ 4.5×
# [0.27, 75], neither separated from no change). At 50,000 steps the $h = 4$ minimum is 6.4×
# Table 3's, its mean 0.076× Table 2's. At 50,000
# steps the means fall 374× from $h = 3$ to 4 (Table 2's: 18.9×, the same statistic) and the
# minima 574× (Table 3's: 803×, whose $h = 3$ model is wider than ours), one ratio each; paired by
# seed 430× [117, 1,580] (the geometric mean of per-seed ratios, a statistic the paper's tables do
# not give, so not set beside them). The ratio of means from $h = 2$ to 3 is 2.6× (Table 2's:
# 10.4×): a head below $D$ buys less than in Table 2; from $h = 4$ to 5 it is 1.8× (Table 2's:
# 9.78×). Paired by seed, ours: 2.58× [2.13, 3.11] and 2.24× [0.20, 25], the latter not
# separated from no change. Our $h = 2$ mean is 0.37× Table 2's, our
# $h = 3$ mean 1.5×: as at $T = 8$, a knee deeper than Table 2's means, with heads below $D$ that
# buy less, our few-head means lying below the paper's except at $h = 3$. $T = 64$ follows below.
#
# **Past 50,000 steps at $T = 32$**
# (`results/02e_training_budget_T32_heads4_heads_below3_budgets50000-100000_parts_budget.json`,
# 61 min on 2 cores shared with other work; 3 seeds; $h = 4$ at 50,000 and 100,000 steps, $h = 3$
# at 100,000), replayed below: the $h = 4$ error **is not shown to fall after 50,000 steps**. From
# 50,000 to 100,000 its mean log10 error changes by +0.22 [−0.09, +0.53], upward and not
# separated from no change, while its training error still falls 8×; the minimum at 100,000
# steps is 9.2× Table 3's. The $h = 3$ error is flat (1.02× the 50,000-step mean above). At
# 100,000 steps the means fall 211× from $h = 3$ to 4 (Table 2's: 18.9×) and the minima 444×
# (Table 3's: 803×), one ratio each; paired by seed, ours alone, 252× [43, 1,480]. So at $T = 32$, trained until its error
# is not shown to fall further, our knee is deeper than Table 2's means and shallower than Table
# 3's minima. Its
# $h = 4$ run at 50,000 steps repeats the one above on another CPU (AVX2, not AVX512): per seed
# −3.3 %, +20 % and +0.2 %.
#
# **The budgets at $T = 64$**
# (`results/02e_training_budget_T64_heads_below3_budgets20000-60000_parts_budget.json`, 77 min
# 51 s on 2 cores shared with other work; 3 seeds; $h = 3, 4, 5$ at 20,000 and 60,000 steps),
# replayed below after $T = 32$'s longer run:
#
# | h | 20,000 steps | 60,000 | paper: Table 2 mean | paper: Table 3 min |
# |---|---|---|---|---|
# | 3 | 2.2e-3 (1.9e-3); train 1.8e-3 | 1.5e-3 (1.5e-3); train 1.0e-3 | 1.3e-3 | – |
# | 4 | 1.3e-5 (7.6e-6); train 1.1e-5 | 1.0e-5 (1.1e-6); train 3.7e-7 | 8.8e-6 | 3.5e-7 |
# | 5 | 7.4e-6 (6.2e-6); train 7.2e-6 | 2.0e-6 (9.7e-7); train 3.0e-7 | 4.2e-6 | – |
#
# From 20,000 to 60,000 steps $h = 3$ falls 1.43× [1.11, 1.83] and $h = 5$ 4.6× [1.13, 18.9],
# while the $h = 4$ error is **not shown to fall** (2.7× [0.022, 321]), so the rule stops at 20,000
# steps, on a weak test: two seeds fall 6.5× and 10× (the lower to 1.1e-6, 3.1× Table 3's) and
# one rises from 7.6e-6 to 2.6e-5 with its training error at 5.0e-7, as at $T = 8$. At 20,000
# steps the $h = 4$ models fit training and held-out sequences alike; at 60,000 the held-out error
# is 12.5× the training one. Study 02g sets this budget beside the others.
#
# **$T = 128$** (`results/02e_training_budget_T128_heads4_heads_below4_budgets20000-60000_parts_budget.json`,
# $h = 4$ at 20,000 and 60,000 steps, 56 min 58 s; $h = 3$ at 20,000 in
# `results/02e_training_budget_T128_heads3_heads_below3_budgets20000_parts_budget.json`, 16 min
# 47 s; 3 seeds), replayed below: the $h = 4$ error is **not shown to fall** after 20,000 steps
# (log10 change +0.059 [−1.822, +1.939]; the seeds fall 1.4× and 3.8× and rise 7.8×) while every
# seed's training error falls to about 3e-7. $h = 5$ at 20,000 steps
# (`results/02e_training_budget_T128_heads5_heads_below5_budgets20000_parts_budget.json`) and
# the data control are read by study 02g.

# %%
LATER_RUNS = ["02e_training_budget_T32_heads4_heads_below3_budgets50000-100000_parts_budget",
              "02e_training_budget_T64_heads_below3_budgets20000-60000_parts_budget",
              "02e_training_budget_T128_heads4_heads_below4_budgets20000-60000_parts_budget"]
if __name__ == "__main__" and args.replay:       # the notebook: T = 32 past 50,000 steps, 64, 128
    for stem in LATER_RUNS:
        later = plumbing.replay(helpers.ROOT / "results" / f"{stem}.json")
        report(later)
        run.figure(plot(later), stem)

# %% [markdown]
# Stacking the 3 seeds and training them as one (`train_ensemble`), timed on an idle machine
# (`results/02e_training_budget_T8-32-128_parts_timing.json`), with batch 256 on one CPU thread,
# is 1.36×, 1.16× and 0.74× as fast as training them one after another at $T$ = 8, 32 and 128,
# where the same command's earlier run
# (at b762af7) gave 1.28×, 0.91× and 0.83×: both pay at $T = 8$ and lose at 128, and they
# disagree at 32, so on a CPU stacking pays for short sequences only.

# %% [markdown]
# ## Commands and files
#
#     python further/02e_training_budget.py --parts search              # the search (12 min 2 s)
#     python further/02e_training_budget.py --parts budget              # T = 8 (81 min 51 s)
#     python further/02e_training_budget.py --parts budget --T 32 --budgets 20000,50000 --heads-below 2
#                                                                       # T = 32 (37 min 55 s)
#     python further/02e_training_budget.py --parts budget --T 32 --heads 4 --heads-below 3 --budgets 50000,100000
#                                                                       # T = 32, longer (61 min)
#     python further/02e_training_budget.py --parts budget --T 64 --heads-below 3 --budgets 20000,60000
#                                                                       # T = 64 (77 min 51 s)
#     python further/02e_training_budget.py --parts budget --T 128 --heads 4 --heads-below 4 --budgets 20000,60000
#     python further/02e_training_budget.py --parts budget --T 128 --heads 3 --heads-below 3 --budgets 20000
#                                                                       # T = 128 (56 min 58 s, 16 min 47 s)
#     python further/02e_training_budget.py --parts timing --T 8,32,128  # stacked against separate
#     python further/02e_training_budget.py --full                      # all of it at T = 8, 32, 128, 5 seeds
#     python further/02e_training_budget.py --quick                     # seconds; what the tests use
#
# Output (under runs/, which git ignores; `--out .` refreshes the committed files):
# results/02e_training_budget<flags>.json, one row per (T, h, budget or search recipe) with each
# seed's last and best validation NMSE, its training NMSE and its curve, and the verdicts;
# figures/02e_training_budget<flags>.png.

# %% [markdown]
# ## The run's file
#
# Every number above, with the flags that produced them and the run's wall time (a replay
# writes nothing: its numbers are the committed files').

# %%
if __name__ == "__main__" and not args.replay:
    run.finish()

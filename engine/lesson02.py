"""What studies 02a-02f share beyond lesson 02: the lesson's training with validation
checkpoints, the sweep as the lesson runs it in view, its printout beside paper A's tables, and
the bookkeeping of study 02f's attention maps.

The lesson's model, training, tables, Fig. 1a and printout come from the lesson itself; the
measurement of where each head looks is study 02f's and comes in as an argument."""
import math
import time

import matplotlib.pyplot as plt
import torch

import helpers
import plumbing

lesson = helpers.load_concept("02_multihead_model")

EXAMPLES_SEED_OFFSET = 12345    # the few sequences drawn in the attention figure: seed + this
SPECIALISATION_SEED_OFFSET = 999  # the fresh sequences of the attention-on-targets matrix
SPECIALISATION_SEQUENCES = 500  # how many of them
ATTENTION_EXAMPLES = 2          # sequences drawn per model in the attention figure


# Paper A's Table 3, rows h, columns T (N = 32, D = 4): the MINIMUM validation NMSE over seeds (it
# carries no ±: the digest's inference) at a fixed E = n h = 32 (n = ceil(32 / h)); lesson 02's
# model matches it at h = 4 only.
PAPER_TABLE_3 = {
    1: {8: 1.75e-2, 16: 1.98e-2, 32: 2.06e-2, 64: 2.54e-2, 128: 3.03e-2},
    2: {8: 7.17e-3, 16: 7.39e-3, 32: 7.82e-3, 64: 8.57e-3, 128: 1.02e-2},
    3: {8: 2.11e-4, 16: 2.17e-4, 32: 2.73e-4, 64: 3.71e-4, 128: 4.77e-4},
    4: {8: 1.32e-6, 16: 5.59e-7, 32: 3.40e-7, 64: 3.46e-7, 128: 5.70e-7},
    5: {8: 2.19e-6, 16: 4.33e-7, 32: 3.22e-7, 64: 2.73e-7, 128: 2.66e-7},
}


def paper_table(args):
    """{statistic: the paper's table of lesson 02's model}: Table 2's means, Table 3's minima at
    h = 4 (its fixed E = 32 is our n h there only); none for another D."""
    if args.D != 4:
        return {}
    return {"mean": lesson.PAPER_TABLE_2, "min": {4: PAPER_TABLE_3[4]}}


# ----------------------------------------------------------------------------------------------
# The sweep
# ----------------------------------------------------------------------------------------------
def base_run(args, recipe):
    """The settings every run of this invocation shares (a plain dict, for the sweep's workers):
    the lesson's recipe with the flags' values, the task's default reading of the a_i."""
    task = helpers.load_concept("01_retrieval_task")
    return dict(recipe, D=args.D, lr=args.lr, batch_size=args.batch_size,
                directions=task.DEFAULT_DIRECTIONS,
                steps=args.steps, n_train=args.n_train, n_valid=args.n_valid,
                data_seed=args.seed, device=args.device)


# ----------------------------------------------------------------------------------------------
# The lesson's training, with validation checkpoints (the studies' option)
# ----------------------------------------------------------------------------------------------
class Checkpoints:
    """after_step for helpers.fit: the validation NMSE every `every` steps (0: never), as the
    history, and with keep_best the weights of the best checkpoint so far. It only reads: the
    run trains on the same batches with or without it."""

    def __init__(self, model, valid, every, keep_best=False):
        self.model, self.valid, self.every, self.keep_best = model, valid, every, keep_best
        self.history, self.best = [], None

    def __call__(self, step):
        if not self.every or (step + 1) % self.every:
            return
        score = helpers.evaluate_nmse(self.model, self.valid)
        self.history.append({"step": step + 1, "valid_nmse": score})
        if self.keep_best and score <= min(point["valid_nmse"] for point in self.history):
            self.best = {k: v.detach().clone() for k, v in self.model.state_dict().items()}


def train_with_checkpoints(model, train, valid, *, evaluate_every, keep_best=False, **options):
    """helpers.train_regression with a validation checkpoint every evaluate_every steps and, with
    keep_best, the best checkpoint's weights at the end. Adds to its NMSEs "last_valid_nmse"
    (the last step's), "history" and "selection" (best_checkpoint or last)."""
    checkpoints = Checkpoints(model, valid, evaluate_every, keep_best)
    fit = helpers.train_regression(model, train, valid, after_step=checkpoints, **options)
    last_valid_nmse = fit["valid_nmse"]
    if checkpoints.best is not None:
        model.load_state_dict(checkpoints.best)
        fit = {"train_nmse": helpers.evaluate_nmse(model, train),
               "valid_nmse": helpers.evaluate_nmse(model, valid)}
    return {**fit, "last_valid_nmse": last_valid_nmse, "history": checkpoints.history,
            "selection": "last" if checkpoints.best is None else "best_checkpoint"}


def train_one(run, build=None, keep_best=False):
    """Lesson 02's train_one (build: its build_model by default), through
    train_with_checkpoints at run["evaluate_every"] steps (0: none)."""
    started = time.perf_counter()
    train, valid, _ = lesson.make_data(run["T"], run["D"], run["n_train"], run["n_valid"],
                                       run["data_seed"], run["directions"])
    train, valid = [tuple(t.to(run["device"]) for t in part) for part in (train, valid)]
    helpers.seed_everything(run["seed"])
    model = (build or lesson.build_model)(run).to(run["device"])
    fit = train_with_checkpoints(model, train, valid, evaluate_every=run["evaluate_every"],
                                 keep_best=keep_best, steps=run["steps"],
                                 batch_size=run["batch_size"], lr=run["lr"], seed=run["seed"],
                                 name=f"T={run['T']} h={run['h']} seed={run['seed']}")
    return {**run, "valid_nmse": fit["valid_nmse"], "train_nmse": fit["train_nmse"],
            "last_valid_nmse": fit["last_valid_nmse"], "history": fit["history"],
            "parameters": lesson.parameter_counts(model),
            "seconds": time.perf_counter() - started,
            "state": {k: v.cpu() for k, v in model.state_dict().items()}}


def run_label(result):
    """The progress line of one finished run (studies 02a, 02b and 02c print one per run)."""
    return f"T={result['T']:<4} h={result['h']} seed={result['seed']}  " \
           f"valid NMSE {result['valid_nmse']:.2e}"


def sweep(args, train, base):
    """The studies' sweep: every (T, h, seed) of base (a run dict) trained, then summarised as
    lesson 02 does in view. The finished runs and the numbers of the sweep (JSON-ready)."""
    runs = [dict(base, T=T, h=h, seed=args.seed + s)
            for T in args.T for h in args.heads for s in range(args.seeds)]
    results = plumbing.run_sweep(runs, args.workers, train, cost=lesson.sweep_cost,
                                 group=lambda run: f"T = {run['T']}")
    table = summarise(results)
    return results, {
        "nmse": table, "selection": "best_checkpoint" if base.get("select") == "best" else "last",
        "knee": knee_of_sweep(table, args.heads, args.D, base.get("layers", 1)),
        **lesson.per_run_numbers(results)}


def summarise(results):
    """{T: {h: {"seeds", "min", "mean", "std"}}} of the validation NMSE (JSON-ready keys)."""
    return {str(T): {str(h): helpers.seed_stats(helpers.by_seed(results, "valid_nmse", T=T, h=h))
                     for h in sorted({r["h"] for r in results})}
            for T in sorted({r["T"] for r in results})}


def knee_of_sweep(table, heads, D, layers=1):
    """The knee h = ceil(D / L) (h = D with one layer) and, at each T, min NMSE(h - 1) /
    min NMSE(h) of a summarised sweep {T: {h: {...}}} (empty when h - 1 or h was not trained)."""
    knee = {"h": math.ceil(D / layers), "ratio": {}}
    if knee["h"] - 1 in heads and knee["h"] in heads:
        knee["ratio"] = {T: by_heads[str(knee["h"] - 1)]["min"] / by_heads[str(knee["h"])]["min"]
                         for T, by_heads in table.items()}
    return knee


# ----------------------------------------------------------------------------------------------
# Fig. 1a and the printout beside the paper
# ----------------------------------------------------------------------------------------------
def report_table(result, args):
    """Our min / mean validation NMSE at every (h, T)."""
    print(f"validation NMSE over {args.seeds} seed(s), min / mean, h = "
          + ", ".join(map(str, args.heads)) + ":")
    for T, by_heads in result["nmse"].items():
        print(f"   T = {T:<4}" + "  ".join(f"{e['min']:.1e} / {e['mean']:.1e}"
                                           for e in by_heads.values()))


def report_sweep(result, args, paper):
    """The studies' printout: report_table, then ours over the paper's number of the same
    statistic (paper: {statistic: {h: {T: value}}}, the tables of the same model), and the drop
    at the knee, ours beside the paper's wherever its table has both h - 1 and h."""
    report_table(result, args)
    nmse, lengths = result["nmse"], list(result["nmse"])
    for statistic, table in paper.items():
        rows = [f"h = {h}: " + " ".join(
                    lesson.times(nmse[T][str(h)][statistic] / table[h][int(T)]) for T in lengths)
                for h in args.heads if h in table and all(int(T) in table[h] for T in lengths)]
        if rows:
            print(f"our {statistic} / the paper's: " + "; ".join(rows))
    h = result["knee"]["h"]
    if not result["knee"]["ratio"]:
        return
    drops = []
    for statistic in ("min", "mean"):
        ours = " ".join(
            lesson.times(nmse[T][str(h - 1)][statistic] / nmse[T][str(h)][statistic])
            for T in lengths)
        table = paper.get(statistic, {})
        theirs = " ".join(lesson.times(table[h - 1][int(T)] / table[h][int(T)]) for T in lengths
                          if h - 1 in table and h in table and int(T) in table[h])
        drops.append(f"{statistic} {ours}" + (f" [paper: {theirs}]" if theirs else ""))
    print(f"drop from h = {h - 1} to {h} (T = {', '.join(lengths)}): " + "; ".join(drops))


# ----------------------------------------------------------------------------------------------
# Where each head looks
# ----------------------------------------------------------------------------------------------
def mechanism(results, args, build, specialisation):
    """02d's attention maps: the best h = D - 1 and h = D models at the middle T, as study 02f
    picks them in view, handed to attention_maps."""
    seq_len = sorted(args.T)[len(args.T) // 2]
    chosen = {}
    for h in (args.D - 1, args.D):
        candidates = [r for r in results if r["T"] == seq_len and r["h"] == h]
        if candidates:
            chosen[h] = min(candidates, key=lambda r: r["valid_nmse"])
    return attention_maps(chosen, args, build, specialisation, seq_len, results[0]["directions"])


@torch.no_grad()
def attention_maps(chosen, args, build, specialisation, seq_len, directions):
    """Where the heads of each chosen run ({h: a finished run of that h, at length seq_len})
    look, and how close the task's a_i (of that reading) are to each other.

    mechanism [h]: attention_on_targets [h][D] (specialisation(): each head's mean CLS attention
    on each a_i's arg-max token over fresh sequences) and examples (the attention of every head
    on a few sequences). a_i_overlap: the cosine of every pair of a_i and how often their
    arg-max tokens are the same token, over those fresh sequences."""
    task = helpers.load_concept("01_retrieval_task")
    found = {}
    for h, best in chosen.items():
        model = build(best)
        model.load_state_dict(best["state"])
        x, _, positions = task.sample_synthetic(ATTENTION_EXAMPLES, seq_len, args.D,
                                                seed=args.seed + EXAMPLES_SEED_OFFSET,
                                                directions=best["directions"])
        _, weights = model(x, return_attention=True)                        # [n, h, T]
        found[str(h)] = {
            "T": seq_len, "seed": best["seed"],
            "attention_on_targets": specialisation(
                model, seq_len, args.D, SPECIALISATION_SEQUENCES,
                args.seed + SPECIALISATION_SEED_OFFSET, best["directions"]).tolist(),
            "examples": {"attention": weights.tolist(), "positions": positions.tolist()}}
    a = task.task_directions(args.D, kind=directions)                       # a_i, [D, d]
    unit = a / a.norm(dim=1, keepdim=True)
    _, _, positions = task.sample_synthetic(SPECIALISATION_SEQUENCES, seq_len, args.D,
                                            seed=args.seed + SPECIALISATION_SEED_OFFSET,
                                            directions=directions)          # [n, D]
    same = (positions.unsqueeze(2) == positions.unsqueeze(1)).float().mean(0)  # [D, D]
    return {"mechanism": found, "a_i_overlap": {"T": seq_len, "cosine": (unit @ unit.T).tolist(),
                                                "same_token": same.tolist()}}


def plot_attention(found):
    """Each head's CLS attention on a few sequences (the argmax token of each a_i dotted), and
    the mean attention of each head on each a_i's token (right); found: mechanism()'s
    "mechanism"."""
    if not found:
        return None
    n_examples = len(next(iter(found.values()))["examples"]["positions"])
    figure, rows = plt.subplots(len(found), n_examples + 1, squeeze=False,
                                figsize=(5 * n_examples + 3, 2.9 * len(found)),
                                gridspec_kw={"width_ratios": [5] * n_examples + [2]})
    for row, (h, entry) in zip(rows, found.items()):
        for k, axis in enumerate(row[:-1]):
            for head, weights in enumerate(entry["examples"]["attention"][k]):
                axis.plot(weights, lw=1.5, color=f"C{head}", label=f"head {head + 1}")
            names = {}                                  # a_i sharing a token share one label
            for i, t in enumerate(entry["examples"]["positions"][k]):
                names.setdefault(t, []).append(f"a{i + 1}")
            for t, labels in names.items():
                axis.axvline(t, color="k", ls=":", lw=1)
                axis.text(t, 1.02, ",".join(labels), ha="center", fontsize=8,
                          transform=axis.get_xaxis_transform())
            axis.set_ylim(0, 1.05), axis.set_xlabel("position t")
        row[0].set_ylabel(f"h = {h}\nCLS attention")
        row[n_examples - 1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        matrix = entry["attention_on_targets"]                              # [h][D]
        n_heads, D = len(matrix), len(matrix[0])
        row[-1].imshow(matrix, vmin=0, vmax=1, cmap="Blues")
        for head, shares in enumerate(matrix):
            for i, share in enumerate(shares):
                row[-1].text(i, head, f"{share:.2f}", ha="center", va="center", fontsize=7)
        row[-1].set_xticks(range(D), [f"a{i + 1}" for i in range(D)])
        row[-1].set_yticks(range(n_heads), [f"head {j + 1}" for j in range(n_heads)])
        row[-1].set_title("mean attention on\neach a_i's token", fontsize=9)
    figure.suptitle("Where each head looks (dotted: the argmax token of each a_i)")
    figure.tight_layout()
    return figure


def report_attention(found):
    """One line per model: the largest mean attention any head puts on each a_i's token; then
    the pairs of a_i closest in direction, with how often they share their arg-max token."""
    for h, entry in found["mechanism"].items():
        best = [max(column) for column in zip(*entry["attention_on_targets"])]
        print(f"h = {h}, T = {entry['T']}: the most attentive head on each a_i's token: "
              + ", ".join(f"a{i + 1} {value:.2f}" for i, value in enumerate(best)))
    overlap = found["a_i_overlap"]
    D = len(overlap["cosine"])
    pairs = sorted(((i, j) for i in range(D) for j in range(i + 1, D)),
                   key=lambda pair: -overlap["cosine"][pair[0]][pair[1]])[:2]
    print("closest a_i: " + "; ".join(
        f"a{i + 1}, a{j + 1} at cosine {overlap['cosine'][i][j]:.2f}, the same arg-max token "
        f"in {overlap['same_token'][i][j]:.0%} of sequences" for i, j in pairs))

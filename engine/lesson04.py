"""Lesson 04's apparatus: part a's printout, the sweep that trains part b's runs, its figure and
printout, and the figures and printouts of study 04a (Lemma 9 and what each route costs).

The constructions, the models, their training, the runs and the statistics are the lesson's and
the study's; their functions and numbers come in as arguments, so this module never imports
either file."""
import collections
import contextlib
import io
import sys
import time

import matplotlib.pyplot as plt

import helpers
import plumbing



# ----------------------------------------------------------------------------------------------
# 04 a. The memorising head holds the sequence exactly
# ----------------------------------------------------------------------------------------------
def report_memorisation(result, dim):
    """How far T * (CLS output) is from the sequence, and the attention from uniform; the head
    dimension T d beside the theorem's n >= T d."""
    exactness = result["memorisation_exactness"]
    worst = max(v["max_error"] for v in exactness.values())
    spread = max(v["attention_spread"] for v in exactness.values())
    print(f"a. T * (CLS output) equals (x(1), ..., x(T)) to within {worst:.1e}, attention "
          f"spread {spread:.1e}, at T = " + ", ".join(exactness))
    widths = [int(T) * dim for T in exactness]
    print(f"   head dimension n: ours T d = {', '.join(map(str, widths))} (d = {dim}) "
          f"[Theorem 2(3): n >= T d]")


# ----------------------------------------------------------------------------------------------
# 04 b. The three routes, trained
# ----------------------------------------------------------------------------------------------
def train_routes(runs, args, train_route):
    """train_route(run) for every run, in `--workers` processes, printing one line per route when
    its last run ends (not one per run); the finished runs."""
    left = collections.Counter(run["route"] for run in runs)             # runs still to end
    shown, started = sys.stdout, time.perf_counter()

    def one_line_per_route(result):                      # run_sweep's label, as each run ends
        left[result["route"]] -= 1
        if not left[result["route"]]:
            print(f"trained {result['route']}: {len(args.T)} T x {args.seeds} seeds "
                  f"({time.perf_counter() - started:.1f} s)", file=shown, flush=True)
        return ""

    with contextlib.redirect_stdout(io.StringIO()):      # run_sweep's line per run
        return plumbing.run_sweep(runs, args.workers, train_route, label=one_line_per_route,
                                  cost=lambda r: r["T"] * r["steps"])  # time grows like T


def plot_routes(result):
    """Validation (solid) and training (dashed) NMSE of the three routes against T, and their
    trainable FFN parameters."""
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    for route, by_length in result["trained"].items():
        lengths = [int(T) for T in by_length]
        line, = left.loglog(lengths, [v["valid_nmse"] for v in by_length.values()], "o-",
                            label=f"{route} (validation)")
        left.loglog(lengths, [v["train_nmse"] for v in by_length.values()], "--",
                    color=line.get_color(), label=f"{route} (training)")
        right.loglog(lengths, [v["parameters"]["paper"] for v in by_length.values()], "o-",
                     label=route)
    for axis in (left, right):
        helpers.label_log_axis(axis, lengths)
    left.set_xlabel("sequence length T"), left.set_ylabel("NMSE"), left.legend(fontsize=7)
    left.set_title("Memorising generalises worse and fails at long T")
    right.set_xlabel("sequence length T"), right.set_ylabel("FFN parameters")
    right.set_title("Trainable FFN parameters"), right.legend(fontsize=7)
    figure.tight_layout()
    return figure


def report_routes(result, args, paper_table_3, head_dim):
    """Ours beside Table 3's minima for the same h = 4 model (n = 8, E = 32)."""
    trained = result["trained"]
    print("b. trained, min over seeds: validation NMSE [training NMSE] (FFN parameters)")
    for route, by_length in trained.items():
        print(f"   {route:<9}" + "  ".join(
            f"T={T}: {v['valid_nmse']:.1e} [{v['train_nmse']:.1e}] ({v['parameters']['paper']})"
            for T, v in by_length.items()))
    heads = trained["h = D"]
    table_3 = paper_table_3[4]                                          # the D = 4 task, h = 4
    shown = [T for T in heads if int(T) in table_3] if args.D == 4 and 4 * head_dim == 32 else []
    if shown:
        print("   h = D, min validation NMSE: ours [Table 3, the same model] " + "  ".join(
            f"T={T}: {heads[T]['valid_nmse']:.1e} [{table_3[int(T)]:.1e}]" for T in shown))


# ----------------------------------------------------------------------------------------------
# 04a. Lemma 9's max network, and what the two routes cost
# ----------------------------------------------------------------------------------------------
def plot_lemma9(result, seq_len):
    """Lemma 9's worst error against its bound 1/n."""
    figure, axis = plt.subplots(figsize=(5, 3.5))
    levels = [row["levels"] for row in result["lemma9"]]
    axis.loglog(levels, [row["max_error"] for row in result["lemma9"]], "o-", label="max error")
    axis.loglog(levels, [row["bound"] for row in result["lemma9"]], "k--", label="bound 1/n")
    axis.set_xlabel("levels n"), axis.set_ylabel("max |net(x) - max x|")
    axis.set_title(f"Lemma 9: max of {seq_len} numbers with ReLUs"), axis.legend()
    return figure


def report_lemma9(result, seq_len):
    print(f"Lemma 9 (T = {seq_len}): " + ", ".join(
        f"n={row['levels']}: {row['max_error']:.3f} (<= {row['bound']:.3f})"
        for row in result["lemma9"]))
    largest = max(row["levels"] for row in result["lemma9"])
    print(f"   its hidden widths at n = {largest}: ours T n = {seq_len * largest} and 2n = "
          f"{2 * largest} [Lemma 9: each at most 2 T ceil(1/eps) = {2 * seq_len * largest}]")


def plot_costs(result):
    """Weights of the no-training single-head model against T and eps, beside h = D."""
    rows = result["assembled"]
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    for epsilon in sorted({row["epsilon"] for row in rows}, reverse=True):
        mine = [row for row in rows if row["epsilon"] == epsilon]
        lengths = [row["T"] for row in mine]
        left.loglog(lengths, [row["ffn_weights_used"] for row in mine], "o-",
                    label=f"memorise, eps = {epsilon:g}")
    left.loglog(lengths, [mine[0]["h_equals_D_attention_parameters"]] * len(lengths), "k--",
                label="h = D: attention only, no FFN")
    helpers.label_log_axis(left, lengths)
    left.set_xlabel("sequence length T"), left.set_ylabel("weights used")
    left.set_title("Retrieval cost, exact f_i and F_0 in both"), left.legend(fontsize=7)
    largest = max(row["T"] for row in rows)
    mine = [row for row in rows if row["T"] == largest]
    epsilons = [row["epsilon"] for row in mine]
    right.loglog(epsilons, [row["ffn_weights_used"] for row in mine], "o-",
                 label=f"memorise: weights used (T = {largest})")
    right.loglog(epsilons, [row["h_equals_D_beta"] for row in mine], "s--",
                 label=f"h = D: softmax scale beta needed (T = {largest})")
    helpers.label_log_axis(right, epsilons)
    right.invert_xaxis(), right.set_xlabel("target error eps"), right.legend(fontsize=7)
    right.set_title("Both grow like 1/eps: weights for one, a scale for the other")
    figure.tight_layout()
    return figure


def report_costs(result, D):
    print(f"assembled single-head model, no training (D = {D}): worst |y_hat - y| <= eps: "
          f"{all(row['max_error'] <= row['epsilon'] for row in result['assembled'])}")
    for row in result["assembled"]:
        print(f"   T={row['T']:<4} eps={row['epsilon']:<5g} error {row['max_error']:.3f}  "
              f"width {row['embedding_width']:<4} FFN weights used {row['ffn_weights_used']:<7} "
              f"(dense {row['ffn_parameters_dense']:.1e})   h = D: "
              f"{row['h_equals_D_attention_parameters']} attention weights, "
              f"beta {row['h_equals_D_beta']:.0f}")


MAX_CONSTRUCTION_T = 512    # the memorising embedding is T d wide and its attention (T d)^2
MAX_T = 256                 # the longest sequence of part b


def refusals(args):
    """Runs that could not finish, refused before any work: (flag, accepted, why, smallest)."""
    return [("--D", args.D <= 4, f"must be between 1 and d = 4, got {args.D}", None),
            ("--construction-T", max(args.construction_T) <= MAX_CONSTRUCTION_T,
             f"at most {MAX_CONSTRUCTION_T} (the embedding is T*d wide and the attention "
             f"(T*d)^2), got {max(args.construction_T)}", None),
            ("--T", max(args.T) <= MAX_T, f"at most {MAX_T}, got {max(args.T)}", None)]

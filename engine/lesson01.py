"""Lesson 01's apparatus: the sampled examples, the figures and the printouts of its two parts.

The task itself (RetrievalTask, the synthetic instance, the toy task, Var(y) against T) is the
lesson's; its functions come in as arguments, so this module never imports the lesson."""
import matplotlib.pyplot as plt
import torch

import helpers

EXAMPLE_SEQUENCES = 3  # sequences of each task drawn for part a's figure and printout
EXAMPLE_T = 16         # their length T


# ----------------------------------------------------------------------------------------------
# a. Sampled sequences of the synthetic task and of the toy task
# ----------------------------------------------------------------------------------------------
def examples(args, sample_synthetic, sample_max_plus_min, task_directions):
    """Part a's numbers: a few sequences of the synthetic task and of the toy task, with the
    scores a_i.x(t) the figure draws."""
    x, y, positions = sample_synthetic(EXAMPLE_SEQUENCES, EXAMPLE_T, args.D, args.d, args.seed,
                                       args.directions)
    toy_x, toy_y, toy_positions = sample_max_plus_min(EXAMPLE_SEQUENCES, EXAMPLE_T, args.seed)
    scores = x @ task_directions(args.D, args.d, args.directions).T        # a_i.x(t), [n, T, D]
    return {"examples": {"x": x.tolist(), "scores": scores.tolist(), "y": y.tolist(),
                         "positions": positions.tolist()},
            "toy_examples": {"x": toy_x.tolist(), "y": toy_y.tolist(),
                             "positions": toy_positions.tolist()}}


def plot_examples(result, args):
    """The sampled sequences: a_i.x(t) for each i against t, the retrieved token starred."""
    scores = torch.tensor(result["examples"]["scores"])                   # a_i.x(t), [n, T, D]
    positions = result["examples"]["positions"]
    figure, axes = plt.subplots(1, len(scores), figsize=(13, 3.4), sharey=True)
    for k, axis in enumerate(axes):
        for i in range(args.D):
            line, = axis.plot(scores[k, :, i], marker=".", lw=1, label=f"$a_{i + 1}^T x(t)$")
            t = positions[k][i]
            axis.plot(t, scores[k, t, i], "*", ms=14, color=line.get_color(), mec="k")
        axis.set_title(f"sequence {k + 1}: y = {result['examples']['y'][k]:.2f}")
        axis.set_xlabel("position t")
    axes[0].legend(fontsize=8, loc="lower left")
    figure.suptitle("Synthetic D-retrieval: each * is a token the model must find", y=1.04)
    return figure


def report_examples(result, args, directions):
    """The first sequence of each task; the lengths of the a_i [D, d], and their two most
    similar pairs (the largest cosines)."""
    print(f"synthetic task: y = sum_(i<={args.D}) max_t a_i.x(t), x(t) ~ N(0, I_{args.d}), "
          f"a_i: {args.directions}")
    unit = directions / directions.norm(dim=1, keepdim=True)                # [D, d]
    pairs = sorted(((float(unit[i] @ unit[j]), i, j) for i in range(len(unit))
                    for j in range(i + 1, len(unit))), reverse=True)[:2]
    print(f"  lengths {', '.join(f'{value:.2f}' for value in directions.norm(dim=1).tolist())}"
          f"; largest cosines " + (", ".join(f"{cosine:.2f} (a_{i + 1}, a_{j + 1})"
                                             for cosine, i, j in pairs) or "none (D = 1)"))
    y, positions = result["examples"]["y"], result["examples"]["positions"]
    print(f"  example (T = {EXAMPLE_T}): y = {y[0]:.3f}, retrieved positions {positions[0]}")
    toy_y, toy_positions = result["toy_examples"]["y"], result["toy_examples"]["positions"]
    print(f"toy task max + min (T = {EXAMPLE_T}): y = {toy_y[0]:.3f}, argmax/argmin at "
          f"{toy_positions[0]}")


# ----------------------------------------------------------------------------------------------
# b. Var(y) against T
# ----------------------------------------------------------------------------------------------
def plot_statistics(result):
    """Histogram of y for each T, and Var(y) against T: why NMSE, not MSE."""
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 3.6))
    for seq_len, stats in result["target_stats"].items():
        left.stairs(stats["hist_density"], stats["hist_edges"], label=f"T = {seq_len}")
    left.set_xlabel("y"), left.set_ylabel("density"), left.legend(fontsize=8)
    left.set_title("y concentrates as T grows")
    lengths = [int(t) for t in result["target_stats"]]
    right.semilogx(lengths, [s["var"] for s in result["target_stats"].values()], "o-")
    helpers.label_log_axis(right, lengths)
    right.set_xlabel("sequence length T"), right.set_ylabel("Var(y)")
    right.set_title("MSE of the mean predictor = Var(y): NMSE divides it out")
    return figure


def report_statistics(result):
    print("Var(y) by T (why NMSE):  " + "  ".join(
        f"T={t}: {s['var']:.3f}" for t, s in result["target_stats"].items()))


def refusals(args):
    """Runs that could not finish, refused before any work: (flag, accepted, why, smallest)."""
    return [("--D", args.D <= args.d, f"the task's D directions a_i need D <= --d = {args.d}, "
             f"got {args.D}", f"--d {args.D}"),
            ("--n-samples", args.n_samples >= 2, "the variance of y needs at least two samples, "
             "got 1", 2)]

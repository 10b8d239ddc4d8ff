"""Lesson 03's apparatus: part a's figure and printout, part b's figure and printout.

The construction, its bound, the rate in beta and the table of the exponent k are the lesson's;
their numbers come in as arguments, so this module never imports the lesson."""
import matplotlib.pyplot as plt
import torch

PRINTED_BETAS = (10, 100, 1000)  # a: the columns of the printout (those among --betas)

COMPARED_CASE = (1, 2, 2)  # b: the (s, D, n) whose k the right panel sets beside gamma
BARRON_GAMMA = 2           # b: the upper bound's exponent gamma for a finite Barron norm
PAPER_LARGEST_T = 128      # b: the longest T of the paper's synthetic experiment (dotted line)


def sci(value):
    """A number as the pages write it: 2.8e-2, 9.4e+0 (Python writes 2.8e-02)."""
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa}e{int(exponent):+d}"


def plot_upper_bound(result):
    """Worst retrieval error against beta, one line per T, with the bound dashed."""
    figure, axis = plt.subplots(figsize=(6.5, 4.2))
    lengths = sorted({row["T"] for row in result["construction"]})
    colours = plt.cm.viridis(torch.linspace(0, 0.9, len(lengths)).tolist())
    for seq_len, colour in zip(lengths, colours):
        rows = [row for row in result["construction"] if row["T"] == seq_len]
        betas = [row["beta"] for row in rows]
        axis.loglog(betas, [row["max_error"] for row in rows], "o-", color=colour,
                    label=f"T = {seq_len}")
        axis.loglog(betas, [row["bound"] for row in rows], "--", color=colour, lw=0.8)
    axis.set_xlabel(r"softmax scale $\beta$"), axis.set_ylabel(r"max $|\tilde z_i - z_i|$")
    axis.set_title("Hand-built h = D model: error (solid) and bound (dashed)")
    axis.legend(fontsize=7, ncol=2)
    return figure


def report_upper_bound(result, rate_from_beta):
    """Whether every error is within its bound (the lesson's check); the shortest and longest T
    at PRINTED_BETAS; the rate in beta per T."""
    rows = result["construction"]
    lengths = sorted({row["T"] for row in rows})
    betas = sorted({row["beta"] for row in rows})
    shown = [beta for beta in betas if beta in PRINTED_BETAS] or betas
    print(f"a. worst error (bound) at T = {lengths[0]} ... {lengths[-1]}, beta = {betas[0]:g} ... "
          f"{betas[-1]:g}: every error within its bound: {result['within_bound']}")
    for seq_len in dict.fromkeys((lengths[0], lengths[-1])):
        print(f"   T = {seq_len:<5}" + "  ".join(
            f"beta={row['beta']:g}: {sci(row['max_error'])} ({sci(row['bound'])})"
            for row in rows if row["T"] == seq_len and row["beta"] in shown))
    print(f"   slope of log error against log beta (beta >= {rate_from_beta}): " + ", ".join(
        f"T={T}: {slope:.2f}" for T, slope in result["construction_rate"].items()))


# ----------------------------------------------------------------------------------------------
# b. The lower bound's exponent
# ----------------------------------------------------------------------------------------------
def case_name(s, D, n):
    """The JSON key of one (s, D, n) case: "s=3 D=4 n=8"."""
    return f"s={s} D={D} n={n}"


def plot_lower_bound(result):
    """k(T) for a few (s, D, n), with the vacuous region, and the exponents compared."""
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    for name, entry in result["lower_bound"].items():
        lengths = [int(T) for T in entry["k"]]
        left.semilogx(lengths, list(entry["k"].values()), "o-", label=name)
    left.set_yscale("symlog", linthresh=1)
    left.axhspan(-1.5, 0, color="red", alpha=0.1, label="k <= 0: vacuous")
    left.axvline(PAPER_LARGEST_T, color="grey", ls=":", label="paper's largest T")
    left.set_xlabel("sequence length T"), left.set_ylabel("exponent k")
    left.set_title("Lower-bound exponent of Theorem 2(2)"), left.legend(fontsize=7)
    s, D, _ = COMPARED_CASE
    entry = result["lower_bound"][case_name(*COMPARED_CASE)]
    lengths = [int(T) for T in entry["k"]]
    right.semilogx(lengths, [max(k, 0) for k in entry["k"].values()], "o-",
                   label=f"h = {s} < D = {D}: k (lower bound 1/eps^k)")
    right.semilogx(lengths, [BARRON_GAMMA] * len(lengths), "s--",
                   label=f"h = D: gamma = {BARRON_GAMMA} (Barron)")
    right.set_xlabel("sequence length T"), right.set_ylabel("exponent of 1/eps")
    right.set_title("Parameter cost ~ (1/eps)^exponent (constants set to 1)")
    right.legend(fontsize=7)
    figure.tight_layout()
    return figure


def report_lower_bound(result):
    print("b. lower-bound exponent k(T, s, D, n) (k <= 0: the bound says nothing)")
    for name, entry in result["lower_bound"].items():
        print(f"   {name:<14}" + "  ".join(f"T={T}: {k:.2f}" for T, k in entry["k"].items())
              + f"   k > 0 from T = {entry['first_nonvacuous_T']}")


MAX_CONSTRUCTION_T = 4096   # the longest sequence of the hand-built model


def refusals(args):
    """Runs that could not finish, refused before any work: (flag, accepted, why, smallest)."""
    longest = max(args.construction_T)
    return [("--construction-T", longest <= MAX_CONSTRUCTION_T,
             f"at most {MAX_CONSTRUCTION_T}, got {longest}", None)]

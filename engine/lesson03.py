"""Lesson 03's apparatus: part a's rate in beta, figure and printout, part b's table of the
exponent k, its figure and printout; `fit_slope` is also study 03a's.

The construction, its bound and the exponent k are the lesson's; its functions come in as
arguments, so this module never imports the lesson."""
import matplotlib.pyplot as plt
import torch

RATE_FROM_BETA = 10              # a: the rate in beta is fitted over beta >= 10 (the large end)
PRINTED_BETAS = (10, 100, 1000)  # a: the columns of the printout (those among --betas)

LOWER_BOUND_T = [16, 32, 64, 128, 256, 512, 1024, 4096]  # b: the lengths where k is tabulated
# b: (s heads, D, head dim n): the paper's D = 4, n = 8 with s = 3, 2, 1, and two small cases
LOWER_BOUND_CASES = [(3, 4, 8), (2, 4, 8), (1, 4, 8), (1, 2, 2), (3, 4, 2)]
COMPARED_CASE = (1, 2, 2)  # b: the (s, D, n) whose k the right panel sets beside gamma
BARRON_GAMMA = 2           # b: the upper bound's exponent gamma for a finite Barron norm
PAPER_LARGEST_T = 128      # b: the longest T of the paper's synthetic experiment (dotted line)


def sci(value):
    """A number as the pages write it: 2.8e-2, 9.4e+0 (Python writes 2.8e-02)."""
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa}e{int(exponent):+d}"


def fit_slope(x, y):
    """Least-squares slope of log10(y) against log10(x)."""
    log_x = torch.tensor(x, dtype=torch.float64).log10()
    log_y = torch.tensor(y, dtype=torch.float64).log10()
    centred = log_x - log_x.mean()
    return float((centred * (log_y - log_y.mean())).sum() / (centred ** 2).sum())


# ----------------------------------------------------------------------------------------------
# a. The hand-built layer against its bound
# ----------------------------------------------------------------------------------------------
def construction_rates(rows):
    """{T: slope of log error against log beta over beta >= RATE_FROM_BETA}; errors that
    underflow to 0 (T <= 4: |S_i| = 1) are left out, and so is a T left with under two betas."""
    rate = {}
    for seq_len in dict.fromkeys(row["T"] for row in rows):                # in the order of T
        points = [(row["beta"], row["max_error"]) for row in rows
                  if row["T"] == seq_len and row["beta"] >= RATE_FROM_BETA and row["max_error"] > 0]
        if len({beta for beta, _ in points}) >= 2:
            rate[str(seq_len)] = fit_slope(*zip(*points))
    return rate


def upper_bound(args, construction_errors):
    """Part a's numbers: the lesson's worst errors and bounds per (T, beta), and the rate per T."""
    rows = construction_errors(args.construction_T, args.betas, n=args.construction_samples,
                               seed=args.seed)
    return {"construction": rows, "construction_rate": construction_rates(rows)}


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


def report_upper_bound(result):
    """Whether every error is within its bound; the shortest and longest T at PRINTED_BETAS;
    the rate in beta per T."""
    rows = result["construction"]
    lengths = sorted({row["T"] for row in rows})
    betas = sorted({row["beta"] for row in rows})
    shown = [beta for beta in betas if beta in PRINTED_BETAS] or betas
    within = all(row["max_error"] <= row["bound"] for row in rows)
    print(f"a. worst error (bound) at T = {lengths[0]} ... {lengths[-1]}, beta = {betas[0]:g} ... "
          f"{betas[-1]:g}: every error within its bound: {within}")
    for seq_len in dict.fromkeys((lengths[0], lengths[-1])):
        print(f"   T = {seq_len:<5}" + "  ".join(
            f"beta={row['beta']:g}: {sci(row['max_error'])} ({sci(row['bound'])})"
            for row in rows if row["T"] == seq_len and row["beta"] in shown))
    print(f"   slope of log error against log beta (beta >= {RATE_FROM_BETA}): " + ", ".join(
        f"T={T}: {slope:.2f}" for T, slope in result["construction_rate"].items()))


# ----------------------------------------------------------------------------------------------
# b. The lower bound's exponent
# ----------------------------------------------------------------------------------------------
def case_name(s, D, n):
    """The JSON key of one (s, D, n) case: "s=3 D=4 n=8"."""
    return f"s={s} D={D} n={n}"


def lower_bound(lower_bound_exponent, first_nonvacuous_length):
    """Part b's numbers: the lesson's k at every LOWER_BOUND_T and its first T with k > 0, per
    case of LOWER_BOUND_CASES."""
    return {"lower_bound": {case_name(s, D, n): {
        "k": {str(T): lower_bound_exponent(T, s, D, n) for T in LOWER_BOUND_T},
        "first_nonvacuous_T": first_nonvacuous_length(s, D, n)}
        for s, D, n in LOWER_BOUND_CASES}}


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

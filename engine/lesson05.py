"""Lesson 05's apparatus: its refusals, its sweep, figure and printout; the lemma's figure and
printout (study 05c); and the figures and printouts of its studies 05a and 05b (which train
through the same sweep, and summarise with the lesson's functions).

The target, the head and its training are the lesson's, the lemma 05c's, the oracle and the
confound target 05a's; their functions come in as arguments, so this module imports none of them."""
import statistics

import matplotlib.pyplot as plt

import helpers
import plumbing


MAX_L = 4096        # the longest trained sequence


def refusals(args, dim, n_match):
    """[(flag, accepted, why not, smallest accepted)] of lesson 05's flags, for tokens of
    dimension dim with n_match matches; checked by plumbing.config."""
    r, dims = args.match_rank, args.head_dims
    return [
        ("--match-rank", r < dim, f"below the token dimension {dim}, got {r}", None),
        ("--head-dims", sorted(set(dims)) == dims and len(dims) >= 2,
         "give at least two, increasing, e.g. 1,4", "1,2"),
        ("--head-dims", max(dims) <= dim, f"each at most {dim}, got {max(dims)}", None),
        ("--head-dims", r in dims[1:], f"the gain E(d_min) - E(r) needs r = --match-rank = {r} "
         "after the first", f"1,{r}" if r > 1 else "--match-rank 2"),
        ("--L", min(args.L) >= n_match + 2, "the query, its matches and one more token",
         n_match + 2),
        ("--L", max(args.L) <= MAX_L, f"at most {MAX_L}", None),
        ("--seeds", args.seeds >= 2, "an interval over seeds needs two", 2)]


# ----------------------------------------------------------------------------------------------
# 05c · The bounded-logit lemma
# ----------------------------------------------------------------------------------------------
def plot_lemma(result):
    """L max p, L min p (worst cases, with the bounds) and normalised entropy against L."""
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 3.6))
    for B in sorted({row["B"] for row in result["lemma"]}):
        rows = [row for row in result["lemma"] if row["B"] == B]
        lengths = [row["L"] for row in rows]
        line, = left.loglog(lengths, [row["L_max_p"] for row in rows], "o-", label=f"B = {B:g}")
        for key, style in (("L_min_p", "s-"), ("upper", ":"), ("lower", ":")):
            left.loglog(lengths, [row[key] for row in rows], style, color=line.get_color())
        for key, style, label in (("mean_normalised_entropy", "o-", "random logits"),
                                  ("min_normalised_entropy", "s:", "worst case"),
                                  ("entropy_bound", "--", "bound 1 - 2B/log L")):
            right.semilogx(lengths, [row[key] for row in rows], style, color=line.get_color(),
                           label=f"B = {B:g}, {label}")
    left.set_xlabel("sequence length L"), left.set_ylabel("L max p (o), L min p (s)")
    left.set_title(r"Worst cases stay within $e^{\pm 2B}$ (dotted)"), left.legend(fontsize=7)
    right.set_xlabel("sequence length L"), right.set_ylabel("H(p) / log L")
    right.set_title("Attention flattens as L grows"), right.legend(fontsize=6)
    figure.tight_layout()
    return figure


def report_lemma(result, shown):
    """Did both bounds hold in every case? And, per B, L max p and the random logits' entropy
    at the two lengths `shown`, beside their bounds."""
    rows = result["lemma"]
    held = all(row["lower"] * (1 - 1e-9) <= row["L_min_p"]
               and row["L_max_p"] <= row["upper"] * (1 + 1e-9)
               and row["min_normalised_entropy"] >= row["entropy_bound"] - 1e-9 for row in rows)
    print(f"e^-2B/L <= p_i <= e^2B/L and H(p)/log L >= 1 - 2B/log L in all {len(rows)} "
          f"cases: {held}; from L = {shown[0]} to {shown[1]}:")
    for B in sorted({row["B"] for row in rows}):
        first, last = ([row for row in rows if row["B"] == B and row["L"] == L][0] for L in shown)
        print(f"   B = {B:g}: L max p {first['L_max_p']:.3g} -> {last['L_max_p']:.3g} (bound "
              f"e^2B = {first['upper']:.3g}); H(p)/log L of random logits "
              f"{first['mean_normalised_entropy']:.2f} -> {last['mean_normalised_entropy']:.2f} "
              f"(floor {first['entropy_bound']:.2f} -> {last['entropy_bound']:.2f})")


# ----------------------------------------------------------------------------------------------
# 05 · Saturation on a target that stays hard (and the studies that train the same heads)
# ----------------------------------------------------------------------------------------------
def kind_of(run):
    """A run's group in the sweep's printout: "free logits" or "capped, B = 2"."""
    return "free logits" if run["cap"] is None else f"capped, B = {run['cap']:g}"


def sweep(runs, workers, train, group):
    """train(run) for every run (plumbing.run_sweep: parallel CPU processes); one line per group
    of runs (the runs with the same group(run)), not one per run."""
    return plumbing.run_sweep(runs, workers, train,
                              lambda results: f"{group(results[0])}: {len(results)} runs trained",
                              cost=lambda run: run["L"] * run["steps"], group=group)


def error_tables(results, args):
    """What the figure and printout draw: per kind (free, each cap B) E(d) over seeds at every L
    ({L: {d: seed_stats}}), and the mean gain E(d_min) - E(r) per L."""
    small, rank = args.head_dims[0], args.match_rank

    def errors(cap):
        return {str(L): {str(d): helpers.seed_stats(helpers.by_seed(
            results, "valid_nmse", cap=cap, L=L, head_dim=d)) for d in args.head_dims}
            for L in args.L}

    def mean_gain(cap):
        return {L: entry[str(small)]["mean"] - entry[str(rank)]["mean"]
                for L, entry in errors(cap).items()}

    caps = {f"{B:g}": B for B in args.caps}
    return {"free": errors(None), "capped": {name: errors(B) for name, B in caps.items()},
            "gain": {"free": mean_gain(None),
                     "capped": {name: mean_gain(B) for name, B in caps.items()}},
            "rank": rank, "smallest_head_dim": small}


def by_kind(entry, free="free logits", capped="capped, B = {}"):
    """{"free logits": entry["free"], "capped, B = 2": entry["capped"]["2"], ...}"""
    return {free: entry["free"], **{capped.format(B): v for B, v in entry["capped"].items()}}


def plot_saturation(result):
    """Mean E(d) (bars: std over seeds) per kind, and the gain per L."""
    side = result["model_side"]
    kinds = by_kind(side)
    figure, axes = plt.subplots(1, len(kinds) + 1, figsize=(4.6 * (len(kinds) + 1), 3.8))
    for axis, (name, table) in zip(axes, kinds.items()):
        for L, entry in table.items():
            dims = [int(d) for d in entry]
            axis.errorbar(dims, [e["mean"] for e in entry.values()],
                          yerr=[e["std"] for e in entry.values()], marker="o", capsize=2,
                          label=f"L = {L}")
        axis.set_xscale("log"), helpers.label_log_axis(axis, dims)
        axis.set(ylim=(-0.05, 1.1), xlabel="head dimension d", title=name,
                 ylabel="validation NMSE (mean over seeds)"), axis.legend(fontsize=7)
    for name, by_length in by_kind(side["gain"]).items():
        lengths = [int(L) for L in by_length]
        axes[-1].semilogx(lengths, list(by_length.values()), "o-", label=name)
    helpers.label_log_axis(axes[-1], lengths)
    axes[-1].set_xlabel("sequence length L")
    axes[-1].set_ylabel(f"gain E({side['smallest_head_dim']}) - E({side['rank']})")
    axes[-1].set_title("Does head dimension buy less as L grows?"), axes[-1].legend(fontsize=7)
    figure.tight_layout()
    return figure


def report_model_side(result):
    """The lesson's lines: per kind E(d) and the gain at the shortest and longest L, the gain's
    change with its interval, the capped-minus-free change and the verdict."""
    side = result["model_side"]
    small, rank = side["smallest_head_dim"], side["rank"]
    lengths = list(side["free"])
    seeds = len(side["free"][lengths[0]][str(rank)]["seeds"])
    print(f"mean validation NMSE over {seeds} seeds at d = {', '.join(side['free'][lengths[0]])}"
          f", L = {lengths[0]} -> {lengths[-1]}; the gain E({small}) - E({rank}) and its change "
          f"(per seed, 95% t)")
    for name, table in by_kind(side).items():
        gain = by_kind(side["gain"])[name]
        errors = (" ".join(f"{e['mean']:.3f}" for e in table[L].values()) for L in
                  (lengths[0], lengths[-1]))
        print(f"   {name + ':':<14} E {' -> '.join(errors)}; gain {gain[lengths[0]]:.2f} -> "
              f"{gain[lengths[-1]]:.2f}; " + helpers.describe_difference(
                  "change", by_kind(side["gain_change"])[name]))
    both = side["capped_minus_free_change"]
    print("   " + helpers.describe_difference(f"capped (B = {both['B']:g}) minus free", both))


# ----------------------------------------------------------------------------------------------
# Study 05a: the oracle beside lesson 05's heads, and the confound target
# ----------------------------------------------------------------------------------------------
def report_oracle(result):
    """The matches' share of the target's attention, and per kind trained minus oracle."""
    side = result["model_side"]
    shares = side["oracle"]["target_match_share"]
    print(f"a. the target's matches get {', '.join(f'{v:.0%}' for v in shares.values())} of its "
          f"attention at L = {', '.join(shares)}; trained mean E(d) minus the oracle's:")
    for name, table in by_kind(side).items():
        oracle = by_kind(side["oracle"])[name]
        gaps = [(entry["mean"] - oracle[L][d], L, d) for L, row in table.items()
                for d, entry in row.items()]
        worst = max(gaps, key=lambda gap: abs(gap[0]))
        print(f"   {name + ':':<14} {min(gaps)[0]:+.3f} to {max(gaps)[0]:+.3f}, largest "
              f"|difference| {abs(worst[0]):.3f} at L = {worst[1]}, d = {worst[2]}")


def plot_confound(result):
    """The variance split, oracle against trained, and the flat-spectrum control."""
    confound = result["confound"]
    lengths = list(confound["variance_split"])
    figure, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    query = [v["query_part"] / v["total"] for v in confound["variance_split"].values()]
    axes[0].bar(lengths, query, label="Var(E[y | x_q]): the query alone")
    axes[0].bar(lengths, [1 - q for q in query], bottom=query, label="E[Var(y | x_q)]: context")
    axes[0].set_xlabel("sequence length L"), axes[0].set_ylabel("share of Var(y)")
    axes[0].set_title("The target concentrates on the query"), axes[0].legend(fontsize=7)
    for axis, key, title in ((axes[1], "oracle", "decaying spectrum (alpha as set)"),
                             (axes[2], "oracle_flat", "flat spectrum (alpha = 0)")):
        for L in lengths:
            curve = confound[key][L]
            line, = axis.semilogx([int(r) for r in curve], list(curve.values()), ":",
                                  marker=".", label=f"L = {L}, oracle")
            if key == "oracle":
                trained = confound["trained"][L]
                axis.errorbar([int(d) for d in trained], [e["mean"] for e in trained.values()],
                              yerr=[e["std"] for e in trained.values()], fmt="o",
                              color=line.get_color(), capsize=2, label=f"L = {L}, trained")
        helpers.label_log_axis(axis, [int(r) for r in curve])
        axis.set_xlabel("rank r (oracle)" + (" / head dimension d (trained)"
                                             if key == "oracle" else ""))
        axis.set_ylabel("NMSE"), axis.set_title(title), axis.legend(fontsize=7)
    figure.tight_layout()
    return figure


def report_confound(result, args):
    """Per L the variance split, the trained and oracle gains and the rank-1 oracles (the head
    dimensions are the run's own, read from its numbers, so a replay prints its own run's)."""
    confound = result["confound"]
    print(f"b. confound target (spectrum alpha = {args.alpha:g}, capped B = {args.cap:g}):")
    for L, split in confound["variance_split"].items():
        trained = confound["trained"][L]
        print(f"   L = {L:<5} Var(E[y|x_q]) / Var(y) = {split['query_part'] / split['total']:.2f}"
              f"; trained E(d) at d = {', '.join(trained)}: "
              + " ".join(f"{e['mean']:.3f}" for e in trained.values())
              + f" (gain {confound['gain_trained'][L]:.2f}); rank-1 oracle "
                f"{confound['oracle'][L]['1']:.2f}, flat {confound['oracle_flat'][L]['1']:.2f}")
    print("   " + helpers.describe_difference("trained gain change",
                                              confound["gain_change_trained"]))


# ----------------------------------------------------------------------------------------------
# Study 05b: the trained heads' logits and their SVD truncation
# ----------------------------------------------------------------------------------------------
def plot_logit_spread(result):
    """Max |logit| of the trained d = r heads per L, each seed a dot, free and capped."""
    figure, axis = plt.subplots(figsize=(5.5, 3.6))
    for name, by_length in by_kind(result["model_side"]["logit_spread"], "free").items():
        lengths = [int(L) for L in by_length]
        values = [entry["logit_max_abs"] for entry in by_length.values()]
        line, = axis.semilogx(lengths, [sum(v) / len(v) for v in values], "o-", label=name)
        for L, seeds in zip(lengths, values):
            axis.semilogx([L] * len(seeds), seeds, ".", color=line.get_color(), alpha=0.5)
    helpers.label_log_axis(axis, lengths)
    axis.set_xlabel("sequence length L"), axis.set_ylabel("max |logit| of the trained head")
    axis.set_title("Do trained logits stay bounded as L grows?"), axis.legend(fontsize=7)
    return figure


def plot_truncation(result):
    """NMSE increase of the free d_max head truncated to rank r (mean over seeds)."""
    figure, axis = plt.subplots(figsize=(5.5, 3.6))
    for L, by_rank in result["model_side"]["truncation_free"].items():
        ranks = [int(r) for r in by_rank]
        axis.plot(ranks, [sum(v) / len(v) for v in by_rank.values()], "o-", label=f"L = {L}")
    axis.set_xlabel("kept rank r"), axis.set_ylabel("NMSE(r) - NMSE(full), mean over seeds")
    axis.set_title("SVD truncation of trained free heads"), axis.legend(fontsize=7)
    return figure


def report_trained_heads(result):
    """Largest |logit| per kind against L; truncation costs per L (means). The lengths and the
    largest d are the run's own, read from its numbers, so a replay prints its own run's."""
    side = result["model_side"]
    mean = statistics.fmean                                 # over seeds
    lengths = [int(L) for L in side["logit_spread"]["free"]]
    largest_d = 1 + max(int(r) for by_rank in side["truncation_free"].values() for r in by_rank)
    kinds = by_kind(side["logit_spread"], "free", "capped B={}")
    print(f"largest |logit| of the trained d = {side['rank']} heads, L = {lengths}: " + "; ".join(
        f"{name} " + " -> ".join(f"{mean(e['logit_max_abs']):.2f}" for e in by_length.values())
        for name, by_length in kinds.items()))
    print(f"   free d = {largest_d} heads cut to rank r = 1, 2, ...: NMSE + " + "; ".join(
        f"L = {L}: " + ", ".join(f"{mean(v):.3f}" for v in by_rank.values())
        for L, by_rank in side["truncation_free"].items()))

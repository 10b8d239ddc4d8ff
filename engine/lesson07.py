"""What studies 07a, 07b and 07c share beyond lesson 07: a sweep that reads the shapes an earlier
sweep trained instead of training them again, the results file's keys of several sweeps, their
figures and printouts.

The lesson keeps its idea (the digits at a random place, the ViT, its training, the protocol's
sweep and the gains with h); study 07c the fixed width's shapes and the width's part of the
gains."""
import matplotlib.pyplot as plt

import helpers
import harness
import plumbing

lesson = helpers.load_concept("07_real_data")


# ----------------------------------------------------------------------------------------------
# Refusals shared by 07a, 07b and 07c
# ----------------------------------------------------------------------------------------------
MAX_PATCHES_PER_SIDE = 64  # frames of at most 64 x 64 patches (T = 4096)


def frame_refusals(sides, image_side, patch):
    """--sides: each frame holds the image in whole patches, and not too many (07b's images)."""
    bad = [side for side in sides if side < image_side or side % patch]
    return [("--sides", not bad, f"{bad}: each side must hold the {image_side}x{image_side} "
             f"image and be a multiple of the patch side {patch}",
             -(-image_side // patch) * patch),
            ("--sides", max(sides) // patch <= MAX_PATCHES_PER_SIDE,
             f"at most {MAX_PATCHES_PER_SIDE * patch} ({MAX_PATCHES_PER_SIDE ** 2} patches)", None)]


def sweep_refusals(args, fixed_width):
    """[(flag, accepted, why not, smallest)] of the two sweeps' rows: some head count divides
    --width when the fixed-width sweep runs; a paired difference needs two seeds."""
    return [("--width", not fixed_width or any(args.width % h == 0 for h in args.heads),
             f"no head count in --heads {args.heads} divides it; the fixed-width sweep would be "
             f"empty", max(args.heads)),
            ("--seeds", args.seeds >= 2, "paired differences need two seeds or more", 2)]


# ----------------------------------------------------------------------------------------------
# Training a sweep
# ----------------------------------------------------------------------------------------------
def per_seed(results, metrics, **match):
    """{metric: [the matching runs' values, in seed order]}, and their "parameters"."""
    return {**{metric: helpers.by_seed(results, metric, **match) for metric in metrics},
            "parameters": helpers.by_seed(results, "parameters", **match)[0]}


def train_shapes(args, sweep_name, wanted, train, data, shared):
    """Train wanted {(side, h): (width, head_dim)} for every seed: ({(side, h): per_seed of
    "train" and "valid"}, the seconds trained). shared: the patch side, the learning rate."""
    if not wanted:
        return {}, 0
    base = dict(layers=args.layers, steps=args.steps, batch_size=args.batch_size,
                device=args.device, data=data, **shared)
    runs = [dict(base, side=side, heads=h, width=width, head_dim=head_dim, seed=args.seed + s)
            for (side, h), (width, head_dim) in wanted.items() for s in range(args.seeds)]

    def shape(run):
        return f"{sweep_name} h={run['heads']} (E={run['width']}, d={run['head_dim']})"

    results = plumbing.run_sweep(
        runs, args.workers, train, lambda rs: shape(rs[0]),
        cost=lambda r: (r["side"] // r["patch"]) ** 2 * r["width"] * r["steps"],  # patches x E
        group=shape)
    return {(side, h): per_seed(results, ("train", "valid"), side=side, heads=h)
            for side, h in wanted}, sum(r["seconds"] for r in results)


def tabulate(rows, shapes):
    """rows {(T, h): {metric: [per seed], "parameters": n}} -> {T: {h: seed_stats per metric,
    parameters, width, head_dim}} for the shapes {h: (width, head_dim)}."""
    table = {}
    for T in dict.fromkeys(T for T, _ in rows):
        table[str(T)] = {str(h): {**{k: helpers.seed_stats(v) for k, v in rows[(T, h)].items()
                                     if k != "parameters"},
                                  "parameters": rows[(T, h)]["parameters"], "width": width,
                                  "head_dim": head_dim} for h, (width, head_dim) in shapes.items()}
    return table


def fixed_head_dim_shapes(args):
    """{h: (width, head_dim)}: lesson 07's protocol, d fixed, E = h d."""
    return {h: (h * args.head_dim, args.head_dim) for h in args.heads}


def trained_before(earlier, sides, patch, shapes):
    """{(side, h): per-seed row} of the shapes an earlier sweep (its JSON keys `earlier`)
    already trained with the same width and head dimension: read, not trained again."""
    known = {}
    for table in earlier.get("accuracy", {}).values():
        for side in sides:
            by_h = table.get(str((side // patch) ** 2), {})
            for h, (width, head_dim) in shapes.items():
                entry = by_h.get(str(h))
                if entry and (entry["width"], entry["head_dim"]) == (width, head_dim):
                    known[(side, h)] = {"parameters": entry["parameters"], **{
                        split: entry[split]["seeds"] for split in ("train", "valid")}}
    return known


def train_sweep(args, sweep_name, shapes, train, data, earlier=None, **shared):
    """Every (side, h) shape of a sweep for every seed: ({(T, h): {"train": [per seed], "valid":
    [...], "parameters": n}}, the seconds trained). shapes {h: (width, head_dim)}; train(run)
    trains one run; a shape an earlier sweep (its JSON keys `earlier`) trained with the same
    width and head dimension is read from it, not trained again, and the printout says so;
    shared: the keys every run shares besides the settings (the patch side, the learning
    rate)."""
    sides = list(dict.fromkeys(args.sides))                  # a side named twice runs once
    patch = shared["patch"]
    known = trained_before(earlier or {}, sides, patch, shapes)
    for h in sorted({h for _, h in known}):
        print(f"{sweep_name} h={h}: the shape E={shapes[h][0]}, d={shapes[h][1]} was trained "
              f"by the earlier sweep; its runs are read, not trained again")
    trained, seconds = train_shapes(args, sweep_name, {
        (side, h): shape for side in sides for h, shape in shapes.items()
        if (side, h) not in known}, train, data, shared)
    return {((side // patch) ** 2, h): known.get((side, h)) or trained[(side, h)]
            for side in sides for h in shapes}, seconds


def sweep_keys(args, sweep_name, shapes, rows, gains, data, seconds, patch, earlier=None):
    """One sweep's JSON keys, merged with those of the sweeps before it (`earlier`): "accuracy"
    -> sweep -> T -> h (tabulate), "train_gain_with_heads" -> sweep -> T (the lesson's gains),
    the data, the lengths and the seconds trained."""
    earlier = earlier or {}
    return {"data": data["name"], "image_side": data["train"][0].shape[-1],
            "T": [(side // patch) ** 2 for side in args.sides],
            "accuracy": {**earlier.get("accuracy", {}),
                         sweep_name: tabulate(rows, shapes)},
            "train_gain_with_heads": {**earlier.get("train_gain_with_heads", {}),
                                      sweep_name: gains},
            "run_seconds": earlier.get("run_seconds", 0) + seconds}


# ----------------------------------------------------------------------------------------------
# Figures
# ----------------------------------------------------------------------------------------------
def plot_sweeps(sweeps, trained_on, plus, dashed=None, beside=None):
    """sweeps {sweep: {T: {h: entry}}} -> a figure: accuracy against h, one line per T, a column
    per sweep, training (top) and held-out (bottom); dashed {split: {T: {label: value}}}
    draws references (chance, a baseline) in each T's colour; beside {label: {T: {h: entry}}}
    draws another sweep's means, dashed, in each T's colour."""
    figure, axes = plt.subplots(2, len(sweeps), figsize=(5.5 * len(sweeps), 7), squeeze=False)
    for column, (sweep_name, by_T) in enumerate(sweeps.items()):
        for row, split in enumerate(("train", "valid")):
            axis = axes[row, column]
            for T, by_h in by_T.items():
                heads = [int(h) for h in by_h]
                line, = axis.semilogx(heads, [e[split]["mean"] for e in by_h.values()], "o-",
                                      label=f"T = {T} + {plus}")
                for h, entry in zip(heads, by_h.values()):
                    axis.semilogx([h] * len(entry[split]["seeds"]), entry[split]["seeds"], ".",
                                  color=line.get_color(), alpha=0.5)
                for style, (label, value) in zip(("--", ":"), (dashed or {}).get(split, {})
                                                 .get(T, {}).items()):
                    axis.axhline(value, ls=style, lw=0.8, color=line.get_color(),
                                 label=f"{label}, T = {T}")
                for label, other in (beside or {}).items():
                    if T in other:
                        axis.semilogx([int(h) for h in other[T]],
                                      [e[split]["mean"] for e in other[T].values()], "x--",
                                      color=line.get_color(), alpha=0.6,
                                      label=f"{label}, T = {T}")
            harness.label_log_axis(axis, heads)
            axis.set_xlabel("heads h"), axis.legend(fontsize=6)
            axis.set_ylabel((trained_on if split == "train" else "held-out") + ": accuracy")
            axis.set_title(f"{sweep_name}: " + ("width grows with h"
                                                if sweep_name == "fixed-head-dim"
                                                else "same parameters for every h"))
    figure.tight_layout()
    return figure


def plot_fixed_width(result):
    """The fixed-width sweep's accuracy against h per T, the protocol's means dashed beside it
    (when that part ran)."""
    protocol = result["accuracy"].get("fixed-head-dim")
    return plot_sweeps({"fixed-width": result["accuracy"]["fixed-width"]},
                       "training images at new placements", "CLS",
                       beside={"width grows (fixed-head-dim)": protocol} if protocol else None)


# ----------------------------------------------------------------------------------------------
# Printouts
# ----------------------------------------------------------------------------------------------
def report(result, seeds, sweeps=None):
    """One line per T and sweep (all of `result`'s unless named): the mean training accuracy
    (images at new placements) for each h, the held-out mean beside it, the parameters, and
    the paired gain from the fewest to the most heads; after the fixed-width sweep, per T, the
    width's part of the gain (study 07c's widths_part)."""
    sweeps = sweeps or list(result["accuracy"])
    first = next(iter(result["accuracy"][sweeps[0]].values()))
    print(f"training accuracy | held-out, mean over {seeds} seeds ({result['data']}), "
          f"h = {', '.join(first)}:")
    for T in result["accuracy"][sweeps[0]]:
        for name in sweeps:
            by_h, gain = result["accuracy"][name][T], result["train_gain_with_heads"][name][T]
            print(f"   T = {T} + CLS, {shape_name(name, by_h)}: "
                  + " ".join(f"{e['train']['mean']:.3f}" for e in by_h.values()) + " | "
                  + " ".join(f"{e['valid']['mean']:.3f}" for e in by_h.values())
                  + f" [{parameter_range(by_h)} params]; "
                  + helpers.describe_difference(f"h={gain['to']} minus h={gain['from']}", gain))
        if "fixed-width" in sweeps and T in result.get("gain_difference", {}):
            report_gain_difference({T: result["gain_difference"][T]})


def shape_name(sweep_name, by_h):
    """How a sweep's shapes read: "d = 8, E = 8h" (head dimension fixed), "E = 32, d = 32/h"."""
    entry = next(iter(by_h.values()))
    if sweep_name == "fixed-head-dim":
        return f"d = {entry['head_dim']}, E = {entry['head_dim']}h"
    return f"E = {entry['width']}, d = {entry['width']}/h"


def parameter_range(by_h):
    """"27818" when every h has the same parameter count, else "2354 to 104778"."""
    counts = [entry["parameters"] for entry in by_h.values()]
    low, high = min(counts), max(counts)
    return f"{low}" if low == high else f"{low} to {high}"


def report_gain_difference(difference):
    """The width's part of the gain, per T (one line each)."""
    for T, entry in difference.items():
        print("   " + helpers.describe_difference(
            f"T = {T}: gain h={entry['from']} -> h={entry['to']} with the width growing minus "
            f"at a fixed width (paired seeds)", entry))


def report_sweep(result, sweep_name, seeds, plus="CLS", trained_on="images at new placements"):
    """07a's table of one sweep: accuracy per T and h, mean (min), MRR too when measured, and
    the paired gain from few to many heads. plus: the token besides the T it is read at."""
    print(f"{sweep_name} ({result['data']}): accuracy, mean (min) over {seeds} seeds - training "
          f"{trained_on} | held-out")
    for T, by_h in result["accuracy"][sweep_name].items():
        print(f"   T = {T:<4}+ {plus}  " + "  ".join(
            f"h={h}: {e['train']['mean']:.3f} ({e['train']['min']:.3f})"
            + (f" MRR {e['train_mrr']['mean']:.3f}" if "train_mrr" in e else "")
            + f" | {e['valid']['mean']:.3f}  [{e['parameters']} params]"
            for h, e in by_h.items()))
    for T, gain in result["train_gain_with_heads"][sweep_name].items():
        print("   " + helpers.describe_difference(
            f"T = {T}: training accuracy h={gain['to']} minus h={gain['from']} "
            f"(95% t, paired seeds)", gain))

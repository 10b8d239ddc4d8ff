# %% [markdown]
# # 07 · The head count on real data: digits at a random place, and text among hard negatives
#
# Paper A, Section 6.2: on real tasks more heads should find what matters in a longer sequence,
# by *training* accuracy. Its protocols fix the head dimension, so more heads means a wider
# model; we run them **and a fixed total width**, on data that need no download.

# %%
"""07 · The head count on real data (paper A, Section 6.2, Appendices B.2-B.3, Tables 6, 8-9).

What it shows
    Digits at a fresh random place in a larger frame, 2x2 patches (T = 16, 64 + a CLS), a small
    pre-LN ViT; parts fixed-head-dim (the paper's protocol) and fixed-width (equal parameters).
    --data cifar10 --data-dir DIR: CIFAR-10 (MD5-checked); --full holds the paper's grid. Paper
    A's text retrieval (Table 6) has a file of its own, 07a_text_retrieval.py.

Run it
    python 07_real_data.py             # default: digits, 4 min 56 s on a 2-core CPU
    python 07_real_data.py --full      # digits, 5 seeds, 1,500 steps: 34 min 29 s
    python 07_real_data.py --data cifar10 --data-dir ~/data --full   # the paper's grid (GPU)
    python 07_real_data.py --quick     # seconds; what the tests use

Output (under runs/, which git ignores; `--out .` refreshes the committed files): results/ and
    figures/ 07_real_data.json, 07_heads_on_images.png (_cifar10 for CIFAR-10)
"""
import functools
import hashlib
import math
import pickle
import sys
import tarfile
import time
import urllib.request
from pathlib import Path

import matplotlib.pyplot as plt
import torch
from torch import nn

sys.path.append(str(Path.cwd().parent))  # lets the notebook in notebooks/ find helpers.py
import helpers
import plumbing
from plumbing import Setting, int_list, positive_float, positive_int

allocation = helpers.load_concept("06_allocation")  # its pre-LN Block

# %% [markdown]
# ## Settings
#
# Every size of this file in one table: a row's default, `--quick` (seconds, for the tests)
# and `--full` (5 paired seeds, sized for 2 CPU cores) values side by side (`...`: as the
# default), its type and what it sets; each row is a flag (`head_dim` is `--head-dim`), and a
# flag set by hand wins over its preset. `--data cifar10` replaces the rows of the second table
# (the same shape: CIFAR-10's default, quick and full sizes; the full column is the paper's
# grid, for a GPU).

# %%
SETTINGS = {
    # name: Setting(default, --quick, --full, type, what it sets)
    "data": Setting("digits", ..., ..., ("digits", "cifar10"), "digits: scikit-learn's bundled "
                    "8x8 digits (no download); cifar10: the official archive in --data-dir"),
    "data_dir": Setting(None, ..., ..., Path, "folder holding cifar-10-python.tar.gz"),
    "sides": Setting([8, 16], [8, 12], ..., int_list,
                     "frame sides in pixels, multiples of --patch; T = (side / patch)^2 + CLS"),
    "heads": Setting([1, 2, 4, 8], [1, 2], ..., int_list, "head counts h of both sweeps"),
    "head_dim": Setting(8, 4, ..., positive_int,
                        "d of part fixed-head-dim (its width is h d)"),
    "width": Setting(32, 8, ..., positive_int, "E of part fixed-width (its d is E / h; head "
                     "counts that do not divide it are left out of that sweep)"),
    "layers": Setting(2, 1, ..., positive_int, "transformer blocks"),
    "patch": Setting(2, ..., ..., positive_int, "patch side P in pixels"),
    "batch_size": Setting(64, 32, ..., positive_int, "images per step"),
    "lr": Setting(3e-3, ..., ..., positive_float,
                  "AdamW's peak learning rate (warm-up, then cosine to zero)"),
    "seeds": Setting(2, ..., 5, positive_int, "seeds per configuration, paired across h"),
    "steps": Setting(600, 30, 1500, positive_int, "training steps per run"),
    "n_train": Setting(1500, 200, ..., positive_int, "training images"),
    "n_valid": Setting(297, 60, ..., positive_int,
                       "held-out images (1500 + 297: all 1,797 digits)"),
}
CIFAR10_SETTINGS = {  # under --data cifar10: the paper's grid with --full (Section 6.2, B.3)
    "sides": Setting([32, 64], [32, 40], [64, 96, 128, 192, 256], int_list,
                     "frame sides in pixels, multiples of --patch; T = (side / patch)^2 + CLS"),
    "heads": Setting([1, 2, 4, 8], [1, 2], [1, 2, 4, 8, 10, 11, 12, 13, 14, 16, 20, 24],
                     int_list, "head counts h of both sweeps"),
    "head_dim": Setting(16, 4, 16, positive_int, "d of part fixed-head-dim (its width is h d)"),
    "width": Setting(64, 8, 128, positive_int, "E of part fixed-width (its d is E / h)"),
    "layers": Setting(4, 1, 4, positive_int, "transformer blocks"),
    "patch": Setting(8, ..., ..., positive_int, "patch side P in pixels"),
    "batch_size": Setting(128, 32, 128, positive_int, "images per step"),
    "lr": Setting(1e-3, ..., ..., positive_float, "AdamW's peak learning rate"),
    "seeds": Setting(2, ..., 3, positive_int, "seeds per configuration, paired across h"),
    "steps": Setting(5000, 30, 20000, positive_int, "training steps per run"),
    "n_train": Setting(50000, 200, 50000, positive_int, "training images"),
    "n_valid": Setting(10000, 60, 10000, positive_int, "held-out images"),
}
PARTS = {"fixed-head-dim": (), "fixed-width": ()}  # the parts, each with the parts it needs
DIGITS_AVAILABLE = 1797   # images in scikit-learn's bundled digits: n_train + n_valid at most
IMAGE_SIDE = {"digits": 8, "cifar10": 32}   # s0, the side of one image in pixels
MAX_PATCHES_PER_SIDE = 64  # frames of at most 64 x 64 patches (T = 4096)


def config(argv=None):
    """Parse the flags (the tables above), and check before any work that the run they describe
    can finish (else one line naming the flag, exit code 2)."""
    args = plumbing.config(SETTINGS, argv, __doc__.split("\n")[0], PARTS,
                           full="5 seeds, 1,500 steps, sized for 2 CPU cores; with --data "
                                "cifar10 the paper's image grid, for a GPU",
                           variants={"data": {"cifar10": CIFAR10_SETTINGS}})
    size = IMAGE_SIDE[args.data]
    if args.data == "cifar10" and args.data_dir is None:
        plumbing.refuse("--data-dir", "--data cifar10 needs the folder that holds (or will "
                        "hold) cifar-10-python.tar.gz")
    if args.data == "digits" and args.n_train + args.n_valid > DIGITS_AVAILABLE:
        plumbing.refuse("--n-train", f"--n-train + --n-valid is at most the "
                        f"{DIGITS_AVAILABLE} digits, got {args.n_train} + {args.n_valid}")
    if args.patch > size:
        plumbing.refuse("--patch", f"at most the image side {size}")
    bad = [side for side in args.sides if side < size or side % args.patch]
    if bad:
        plumbing.refuse("--sides", f"{bad}: each side must hold the {size}x{size} image and be "
                        f"a multiple of --patch {args.patch}",
                        smallest=math.ceil(size / args.patch) * args.patch)
    if max(args.sides) // args.patch > MAX_PATCHES_PER_SIDE:
        plumbing.refuse("--sides", f"at most {MAX_PATCHES_PER_SIDE * args.patch} "
                        f"({MAX_PATCHES_PER_SIDE ** 2} patches)")
    return check_sweeps(args, fixed_width="fixed-width" in args.parts)


def check_sweeps(args, fixed_width):
    """The checks of the two sweeps' rows (07a trains the same sweeps): some head count must
    divide --width when the fixed-width sweep runs, and a paired difference needs two seeds."""
    if fixed_width and not any(args.width % h == 0 for h in args.heads):
        plumbing.refuse("--width", f"no head count in --heads {args.heads} divides it; the "
                        f"fixed-width sweep would be empty", smallest=max(args.heads))
    if args.seeds < 2:
        plumbing.refuse("--seeds", "paired differences need two seeds or more", 2)
    return args


# %% [markdown]
# Run as a script or in the notebook, the file starts its run here: it parses the flags and
# starts the clock; each part below records its numbers, shows its figure and prints ours
# beside the paper's where it is explained, and the last cell writes
# `runs/results/07_real_data.json` (`--out .` refreshes the committed files; CIFAR-10 runs are
# named `_cifar10`). Imported by a later file (`helpers.load_concept`), it runs nothing.

# %%
if __name__ == "__main__":
    args = config()
    run = plumbing.Run("07_real_data", args, PARTS,
                       variant="_cifar10" if args.data == "cifar10" else "", named=("data",))

# %% [markdown]
# ## The data: images at a random place in a larger frame
#
# An image (side $s_0$: 8 for digits, 32 for CIFAR-10) sits at a random offset in a side × side
# frame filled with its **border colour** (each frame pixel copies the nearest image pixel). The
# offset is drawn afresh each time an image is drawn (at a fixed placement every model simply
# memorises 1,500 images). $P \times P$ patches ($P = 2$ for digits, 8 for CIFAR-10, as in the
# paper) give $T = (\text{side}/P)^2$ patch tokens plus a CLS.

# %%
def place(images, side, offsets):
    """images [n, C, s0, s0], offsets [n, 2] -> frames [n, C, side, side] (border colour)."""
    size = images.shape[-1]
    grid = torch.arange(side, device=images.device)
    rows = (grid[None] - offsets[:, :1]).clamp(0, size - 1)                 # [n, side]
    cols = (grid[None] - offsets[:, 1:]).clamp(0, size - 1)                 # [n, side]
    index = torch.arange(len(images), device=images.device)[:, None, None, None]
    channel = torch.arange(images.shape[1], device=images.device)[None, :, None, None]
    return images[index, channel, rows[:, None, :, None], cols[:, None, None, :]]


def random_offsets(n, side, size, generator):
    """[n, 2] offsets, uniform over every place the image fits."""
    return torch.randint(side - size + 1, (n, 2), generator=generator)


def patches(frames, patch):
    """frames [n, C, side, side] -> [n, (side / P)^2, C P P] non-overlapping patches."""
    n, channels, side, _ = frames.shape
    cut = frames.unfold(2, patch, patch).unfold(3, patch, patch)            # [n, C, s/P, s/P, P, P]
    return cut.permute(0, 2, 3, 1, 4, 5).reshape(n, (side // patch) ** 2, channels * patch ** 2)


DIGITS_SPLIT_SEED = 0     # the one shuffle that splits them into training and held-out digits


def load_digits(n_train, n_valid):
    """scikit-learn's 1,797 real 8x8 digits in [0, 1]: ((images, labels) train, valid); a fixed
    split (DIGITS_SPLIT_SEED), the held-out digits last."""
    from sklearn.datasets import load_digits as bundled                    # ships with sklearn
    data = bundled()
    images = torch.tensor(data.images, dtype=torch.float32)[:, None] / 16  # [1797, 1, 8, 8]
    labels = torch.tensor(data.target)
    order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(DIGITS_SPLIT_SEED))
    train, valid = order[:n_train], order[len(order) - n_valid:]
    return (images[train], labels[train]), (images[valid], labels[valid])


# %% [markdown]
# ### CIFAR-10, for a GPU
#
# The official python archive (163 MB) in `--data-dir`, downloaded once when missing; its MD5
# must match the published one, or the run stops with one line. Pixels in [0, 1], normalised
# per channel with the training set's mean and std.

# %%
CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
CIFAR10_MD5 = "c58f30108f718f92721af3b95e74349a"
CIFAR10_FILE = "cifar-10-python.tar.gz"


class ArchiveError(ValueError):
    """The CIFAR-10 archive is missing and cannot be downloaded, or is corrupt (one line)."""


def cifar10_archive(data_dir, expected_md5=CIFAR10_MD5):
    """The archive's path, downloaded when missing; ArchiveError (a ValueError, one line) when it
    cannot be had or its MD5 is wrong."""
    path = Path(data_dir) / CIFAR10_FILE
    if not path.exists():
        try:
            Path(data_dir).mkdir(parents=True, exist_ok=True)
            urllib.request.urlretrieve(CIFAR10_URL, path)
        except OSError as error:
            path.unlink(missing_ok=True)
            raise ArchiveError(f"{path} is missing and could not be downloaded ({error}); "
                             f"download {CIFAR10_URL} into {data_dir}") from None
    digest = hashlib.md5(path.read_bytes()).hexdigest()          # 163 MB, read at once
    if digest != expected_md5:
        raise ArchiveError(f"{path} is corrupt (MD5 {digest}, expected {expected_md5}); "
                         f"delete it and download {CIFAR10_URL} again")
    return path


def load_cifar10(data_dir, n_train, n_valid, expected_md5=CIFAR10_MD5):
    """((images [n, 3, 32, 32], labels) train, valid) from the official python archive."""
    batches = {}
    with tarfile.open(cifar10_archive(data_dir, expected_md5)) as archive:
        for member in archive.getmembers():
            name = Path(member.name).name
            if name.startswith("data_batch_") or name == "test_batch":
                batches[name] = pickle.load(archive.extractfile(member), encoding="bytes")

    def stack(names):
        data = [batches[name] for name in sorted(names)]
        images = torch.cat([torch.tensor(b[b"data"]) for b in data]).float() / 255
        labels = torch.cat([torch.tensor(b[b"labels"]) for b in data])
        return images.view(-1, 3, 32, 32), labels

    train = stack([n for n in batches if n.startswith("data_batch_")])
    valid = stack(["test_batch"])
    mean = train[0].mean(dim=(0, 2, 3), keepdim=True)
    std = train[0].std(dim=(0, 2, 3), keepdim=True)

    def normalise(part, n):                 # the first n images, per channel as the training set
        images, labels = part
        return (images[:n] - mean) / std, labels[:n]

    return normalise(train, n_train), normalise(valid, n_valid)


@functools.lru_cache(maxsize=1)
def load_data(data, data_dir, n_train, n_valid):
    """The run's ((images, labels) train, valid), read once for both parts."""
    if data == "digits":
        return load_digits(n_train, n_valid)
    return load_cifar10(data_dir, n_train, n_valid)


# %%
if __name__ == "__main__" and args.data == "cifar10":  # the archive, before any training
    try:
        cifar10_archive(args.data_dir)
    except ArchiveError as error:
        plumbing.refuse("--data-dir", str(error))


# %% [markdown]
# ## The model: a small vision transformer
#
# Linear patch embedding, a learned CLS token and positions, file 06's pre-LN block
# (`allocation.Block`: $u \leftarrow u + \mathrm{MHA}(\mathrm{LN}(u))$, then $u \leftarrow u +
# \mathrm{MLP}(\mathrm{LN}(u))$, logits scaled by $1/\sqrt d$) with no mask, a classifier on CLS.

# %%
class VisionTransformer(nn.Module):
    """Patches [B, T, C P P] -> class logits [B, classes], read at the CLS token."""

    def __init__(self, patch_dim, n_patches, width, n_heads, head_dim, n_layers, n_classes=10):
        super().__init__()
        self.embed = nn.Linear(patch_dim, width)
        self.cls = nn.Parameter(torch.zeros(1, 1, width))
        self.position = nn.Parameter(torch.randn(n_patches + 1, width) * 0.02)
        self.blocks = nn.ModuleList(allocation.Block(width, n_heads, head_dim)
                                    for _ in range(n_layers))
        self.norm = nn.LayerNorm(width)
        self.out = nn.Linear(width, n_classes)

    def forward(self, x):
        u = torch.cat([self.cls.expand(len(x), -1, -1), self.embed(x)], dim=1) + self.position
        for block in self.blocks:
            u = block(u, None)                                              # no mask
        return self.out(self.norm(u[:, 0]))


# %% [markdown]
# ## Training with a fresh placement at every step
#
# `helpers.fit` (AdamW, warm-up and cosine, weight decay 0.05); each step draws training images
# (indices drawn once) at fresh offsets. Accuracy: every training and held-out image at a new
# placement (one evaluation seed per split, the same for every model). Runs of one seed share
# weights' seed, batches and placements across $h$: a paired comparison (95 % t-interval).

# %%
WEIGHT_DECAY = 0.05       # AdamW's, for every model of this file (ours; the paper gives none)
TRAIN_PLACEMENT_SEED = 1  # seeds the new placements at which training images are scored
VALID_PLACEMENT_SEED = 2  # seeds the placements at which held-out images are scored
EVALUATION_CHUNK = 512    # images per forward pass when scoring


@torch.no_grad()
def accuracy(model, data, run, seed):
    """Share of images classified correctly, each at a fresh placement (seeded)."""
    images, labels = data
    offsets = random_offsets(len(images), run["side"], images.shape[-1],
                             torch.Generator().manual_seed(seed))
    model.eval()
    correct = 0
    for start in range(0, len(images), EVALUATION_CHUNK):
        chunk = slice(start, start + EVALUATION_CHUNK)
        x = patches(place(images[chunk], run["side"], offsets[chunk]), run["patch"])
        correct += int((model(x.to(run["device"])).argmax(dim=1).cpu() == labels[chunk]).sum())
    model.train()
    return correct / len(images)


def train_vit(run):
    """Train one (side, h, width, seed) ViT; returns its accuracies and parameter count."""
    started, (train, valid) = time.perf_counter(), run["data"]
    (images, labels), device = train, run["device"]
    size, channels = images.shape[-1], images.shape[1]
    generator = torch.Generator().manual_seed(run["seed"])
    helpers.seed_everything(run["seed"])
    shape = [run[key] for key in ("width", "heads", "head_dim", "layers")]
    model = VisionTransformer(channels * run["patch"] ** 2, (run["side"] // run["patch"]) ** 2,
                              *shape).to(device)
    picks = torch.randint(len(labels), (run["steps"], run["batch_size"]), generator=generator)

    def loss_at(step):                      # the batch's images, each at a fresh placement
        offsets = random_offsets(run["batch_size"], run["side"], size, generator)
        x = patches(place(images[picks[step]], run["side"], offsets), run["patch"]).to(device)
        return nn.functional.cross_entropy(model(x), labels[picks[step]].to(device))

    helpers.fit(model, loss_at, steps=run["steps"], lr=run["lr"], weight_decay=WEIGHT_DECAY,
                name=f"side={run['side']} h={run['heads']} E={run['width']} seed={run['seed']}")
    return {**{k: v for k, v in run.items() if k != "data"},
            "train": accuracy(model, train, run, seed=TRAIN_PLACEMENT_SEED),
            "valid": accuracy(model, valid, run, seed=VALID_PLACEMENT_SEED),
            "parameters": helpers.count_parameters(model), "seconds": time.perf_counter() - started}


def train_shapes(args, wanted):
    """Train wanted {(side, h): (width, head_dim)} for every seed: {(side, h): {"train": [...],
    "valid": [...], "parameters": n}}, accuracies per seed, and the runs' seconds."""
    if not wanted:
        return {}, 0
    data = load_data(args.data, args.data_dir, args.n_train, args.n_valid)
    base = dict(layers=args.layers, patch=args.patch, steps=args.steps, lr=args.lr,
                batch_size=args.batch_size, device=args.device, data=data)
    runs = [dict(base, side=side, heads=h, width=width, head_dim=head_dim, seed=args.seed + s)
            for (side, h), (width, head_dim) in wanted.items() for s in range(args.seeds)]
    results = plumbing.run_sweep(
        runs, args.workers, train_vit,
        lambda r: f"side={r['side']:<3} h={r['heads']:<2} E={r['width']:<3} seed={r['seed']}  "
                  f"train acc {r['train']:.3f}  held-out {r['valid']:.3f}",
        cost=lambda r: (r["side"] // r["patch"]) ** 2 * r["width"] * r["steps"])  # patches x E
    return {(side, h): per_seed(results, ("train", "valid"), side=side, heads=h)
            for side, h in wanted}, sum(r["seconds"] for r in results)


def plot_sweeps(sweeps, trained_on, plus, dashed=None):
    """sweeps {sweep: {T: {h: entry}}} -> a figure: accuracy against h, one line per T, a column
    per sweep, training (top) and held-out (bottom); dashed {split: {T: {label: value}}}
    draws references (chance, a baseline) in each T's colour."""
    figure, axes = plt.subplots(2, len(sweeps), figsize=(5.5 * len(sweeps), 7), squeeze=False)
    for column, (sweep, by_T) in enumerate(sweeps.items()):
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
            helpers.label_log_axis(axis, heads)
            axis.set_xlabel("heads h"), axis.legend(fontsize=6)
            axis.set_ylabel((trained_on if split == "train" else "held-out") + ": accuracy")
            axis.set_title(f"{sweep}: " + ("width grows with h" if sweep == "fixed-head-dim"
                                           else "same parameters for every h"))
    figure.tight_layout()
    return figure


def per_seed(results, metrics, **match):
    """{metric: [the matching runs' values, in seed order]}, and their "parameters"."""
    return {**{metric: helpers.by_seed(results, metric, **match) for metric in metrics},
            "parameters": helpers.by_seed(results, "parameters", **match)[0]}


def tabulate(rows, shapes):
    """rows {(T, h): {metric: [per seed], "parameters": n}} for every T and h of `shapes`
    ({h: (width, head_dim)}) -> (table {T: {h: seed_stats per metric, parameters, width,
    head_dim}}, gains {T: the paired training-accuracy gain from the fewest to the most heads})."""
    table, gains, few, many = {}, {}, min(shapes), max(shapes)
    for T in dict.fromkeys(T for T, _ in rows):
        table[str(T)] = {str(h): {**{k: helpers.seed_stats(v) for k, v in rows[(T, h)].items()
                                     if k != "parameters"},
                                  "parameters": rows[(T, h)]["parameters"], "width": width,
                                  "head_dim": head_dim} for h, (width, head_dim) in shapes.items()}
        gains[str(T)] = {"from": few, "to": many, **helpers.paired_difference(
            [b - a for a, b in zip(rows[(T, few)]["train"], rows[(T, many)]["train"])],
            below=f"h={few} fits better", above=f"h={many} fits better")}
    return table, gains


def sweep_keys(args, earlier, sweep, shapes, known=None):
    """One sweep's JSON keys, merged with those of the parts that ran before (`earlier`):
    accuracy -> sweep -> T -> h, and the paired training-accuracy gain from the fewest to the
    most heads. known: {(side, h): per-seed row} already trained; the rest is trained here."""
    sides = list(dict.fromkeys(args.sides))                  # a side named twice runs once
    known = known or {}
    trained, seconds = train_shapes(args, {(side, h): shape for side in sides
                                           for h, shape in shapes.items()
                                           if (side, h) not in known})
    table, gains = tabulate({((side // args.patch) ** 2, h): known.get((side, h))
                             or trained[(side, h)] for side in sides for h in shapes}, shapes)
    return {"data": args.data, "image_side": IMAGE_SIDE[args.data],
            "T": [(side // args.patch) ** 2 for side in args.sides],
            "accuracy": {**earlier.get("accuracy", {}), sweep: table},
            "train_gain_with_heads": {**earlier.get("train_gain_with_heads", {}), sweep: gains},
            "run_seconds": earlier.get("run_seconds", 0) + seconds}


def report_sweep(result, sweep, seeds, plus="CLS", trained_on="images at new placements"):
    """One sweep's printed table: accuracy per T and h (MRR too when measured), and the paired
    gain from few to many heads. plus: the token besides the T it is read at."""
    print(f"{sweep} ({result['data']}): accuracy, mean (min) over {seeds} seeds — training "
          f"{trained_on} | held-out")
    for T, by_h in result["accuracy"][sweep].items():
        print(f"   T = {T:<4}+ {plus}  " + "  ".join(
            f"h={h}: {e['train']['mean']:.3f} ({e['train']['min']:.3f})"
            + (f" MRR {e['train_mrr']['mean']:.3f}" if "train_mrr" in e else "")
            + f" | {e['valid']['mean']:.3f}  [{e['parameters']} params]"
            for h, e in by_h.items()))
    for T, gain in result["train_gain_with_heads"][sweep].items():
        print("   " + helpers.describe_difference(
            f"T = {T}: training accuracy h={gain['to']} minus h={gain['from']} "
            f"(95% t, paired seeds)", gain))


# %% [markdown]
# ## Part fixed-head-dim: the paper's protocol
#
# $d$ fixed (the paper's 16; ours 8), width $E = h d$. The paper's claim: training accuracy rises
# with $h$, the more so the longer the sequence (a head can pick out the image's patches among
# the background). Against it: no rise at the larger frame, or as large a rise at side 8
# ($T = 16$, no background). Not for the head count: a rise the fixed-width part does not repeat.
# Ours, not the paper's: the digits, 2 × 2 patches, two layers, scoring at new placements.

# %%
def fixed_head_dim_shapes(args):
    """{h: (width, head_dim)}: d fixed, E = h d."""
    return {h: (h * args.head_dim, args.head_dim) for h in args.heads}


def run_fixed_head_dim(args):
    """Train the fixed-head-dimension sweep; its accuracy table and paired gains."""
    return sweep_keys(args, {}, "fixed-head-dim", fixed_head_dim_shapes(args))


# %%
if __name__ == "__main__" and "fixed-head-dim" in args.parts:
    fixed_head_dim = run.record(run_fixed_head_dim(args))
    run.figure(plot_sweeps(fixed_head_dim["accuracy"], "training images at new placements",
                           "CLS"), "07_heads_on_images")
    report_sweep(fixed_head_dim, "fixed-head-dim", args.seeds)


# %% [markdown]
# ## Part fixed-width: the control the paper lacks on images
#
# $E$ fixed, $d = E / h$ (head counts that divide $E$): every $h$ has the same parameters (tested),
# so a rise with $h$ is the head count, not width. Paper A removes the width confound on
# synthetic data (Table 3), not on images; this sweep is ours. Against the claim: flat accuracy
# in $h$; what could hide an effect [inferred]: narrow heads at large $h$ ($d = 4$ at $h = 8$;
# file 05) and few seeds. The shape $h = E/d$ of both sweeps is trained once; per seed, the first
# sweep's gain $h_{\max} - h_{\min}$ minus this one's (`gain_difference`, paired) is the width's.

# %%
def fixed_width_shapes(args):
    """{h: (width, head_dim)}: E fixed, d = E / h, for the head counts that divide E."""
    return {h: (args.width, args.width // h) for h in args.heads if args.width % h == 0}


def trained_by_fixed_head_dim(earlier, args, shapes):
    """{(side, h): per-seed row} of the shapes the fixed-head-dim part already
    trained (same width and head dimension), read from its numbers (`earlier`) when it ran."""
    table, known = earlier.get("accuracy", {}).get("fixed-head-dim", {}), {}
    for side in args.sides:
        by_h = table.get(str((side // args.patch) ** 2), {})
        for h, (width, head_dim) in shapes.items():
            entry = by_h.get(str(h))
            if entry and (entry["width"], entry["head_dim"]) == (width, head_dim):
                known[(side, h)] = {"parameters": entry["parameters"], **{
                    split: entry[split]["seeds"] for split in ("train", "valid")}}
    return known


def gain_difference(gains):
    """Per T: the fixed-head-dim gain minus the fixed-width gain, seed by seed (the same seeds,
    the same h_min and h_max in both sweeps): how much of the rise with h comes with the width."""
    if not {"fixed-head-dim", "fixed-width"} <= set(gains):
        return {}
    difference = {}
    for T, wide in gains["fixed-head-dim"].items():
        fixed = gains["fixed-width"].get(T)
        if fixed and (fixed["from"], fixed["to"]) == (wide["from"], wide["to"]):
            difference[T] = {"from": wide["from"], "to": wide["to"], **helpers.paired_difference(
                [a - b for a, b in zip(wide["per_seed"], fixed["per_seed"])],
                below="the rise is larger at a fixed width",
                above="the width brings part of the rise")}
    return difference


def run_fixed_width(args, earlier):
    """Train the fixed-width sweep (reusing the shapes part fixed-head-dim trained, found in
    `earlier`), and the paired difference of the two sweeps' gains when both ran."""
    shapes = fixed_width_shapes(args)
    keys = sweep_keys(args, earlier, "fixed-width", shapes,
                      known=trained_by_fixed_head_dim(earlier, args, shapes))
    return {**keys, "gain_difference": gain_difference(keys["train_gain_with_heads"])}


def report_fixed_width(result, args):
    report_sweep(result, "fixed-width", args.seeds)
    report_gain_difference(result["gain_difference"])


def report_gain_difference(difference):
    for T, entry in difference.items():
        print("   " + helpers.describe_difference(
            f"T = {T}: gain h={entry['from']} -> h={entry['to']} with the width growing minus "
            f"at a fixed width (paired seeds)", entry))


# %%
if __name__ == "__main__" and "fixed-width" in args.parts:
    fixed_width = run.record(run_fixed_width(args, run.numbers))
    run.figure(plot_sweeps(fixed_width["accuracy"], "training images at new placements", "CLS"),
               "07_heads_on_images")                    # both sweeps, when both ran
    report_fixed_width(fixed_width, args)

# %% [markdown]
# ## The run's file
#
# Every number above, with the flags that produced them and the run's wall time.

# %%
if __name__ == "__main__":
    run.finish()

# %% [markdown]
# # 07 · The head count on real images: digits at a random place in a larger frame
#
# Paper A (Yu, Bao, Jiang, Yu, Li, arXiv 2510.06662), Section 6.2 and Appendix B.3, Tables 8–9
# and Fig. 2c–d: a ViT on CIFAR-10 images enlarged by padding, each image placed at a random
# position in the larger frame, 8×8 patches and a CLS token. More heads let the model pick out
# the image's patches from a longer sequence; the paper reports *training* accuracy (what the
# model can express) rising with the head count and puts the transition near $h \approx 10$.
#
# Their head dimension is fixed (16), so more heads also means a wider model — the confound
# their Table 3 removes on synthetic data but not on images. We run both: the paper's protocol
# (fixed head dimension) and a **fixed total width**, where every head count has the same
# parameters. By default the images are the 1,797 real handwritten 8×8 digits that ship with
# scikit-learn (no download), at a scale a laptop runs in minutes; `--data cifar10` is the
# paper's data, for a GPU.

# %%
"""07 · The head count on real images (paper A, Section 6.2, Appendix B.3, Tables 8-9).

What it shows
    a. Real digits at a fresh random place in a side x side frame every time they are drawn,
       cut into 2x2 patches: side 8, 16 give T = 16, 64 patch tokens plus the CLS.
    b. A small pre-LN ViT (linear patch embedding, learned positions, CLS token, file 06's block,
       helpers.Block, without the causal mask).
    c. Two parts, one sweep each: fixed-head-dim (the paper's protocol, width grows with h)
       and fixed-width (the same parameter count for every h); accuracy on training digits at
       new placements and on held-out digits, per T, min and mean over seeds, and the paired
       gain from the fewest to the most heads. A shape in both sweeps is trained once.
    d. --data cifar10 --data-dir DIR: the official CIFAR-10 python archive (MD5-checked), padded
       with the border colour at a random position, 8x8 patches; --full holds the paper's grid.

Run it
    python 07_real_data.py             # default: digits, 4 min 26 s on a 2-core CPU
    python 07_real_data.py --full      # digits, 5 seeds, 1,500 steps: 34 min 29 s
    python 07_real_data.py --data cifar10 --data-dir ~/data --full   # the paper's grid (GPU)
    python 07_real_data.py --quick     # seconds; what the tests use
    python 07_real_data.py --parts fixed-width   # one part only (its own file names)

Output (under runs/, which git ignores; `--out .` refreshes the committed files)
    results/07_real_data.json (results/07_real_data_cifar10.json for CIFAR-10);
    figures/07_heads_on_images.png (figures/07_heads_on_images_cifar10.png)
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


# %% [markdown]
# ## The data: images at a random place in a larger frame
#
# Each image (side $s_0$: 8 for digits, 32 for CIFAR-10) is placed at a random offset
# $(a, b) \in \{0, \dots, \text{side} - s_0\}^2$ in a side × side frame, and the frame is filled
# with the image's **border colour** (each frame pixel copies the nearest image pixel — for
# digits that is the background, 0). A fresh offset is drawn every time an image is drawn: with
# a fixed placement 1,500 images are simply memorised by every model and training accuracy says
# nothing. The frame is cut into non-overlapping $P \times P$ patches ($P = 2$ for digits, 8 for
# CIFAR-10, as in the paper), so a model sees $T = (\text{side}/P)^2$ patch tokens plus a CLS.

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


DIGITS_AVAILABLE = 1797   # images in scikit-learn's bundled digits: n_train + n_valid at most
DIGITS_SPLIT_SEED = 0     # the one shuffle that splits them into training and held-out digits
IMAGE_SIDE = {"digits": 8, "cifar10": 32}   # s0, the side of one image in pixels


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
# The official python archive (`cifar-10-python.tar.gz`, 163 MB) in `--data-dir`. When it is
# missing we try to download it once; either way its MD5 must match the published one, or the
# run stops with one line saying what to do. Pixels are scaled to [0, 1] and normalised per
# channel with the training set's mean and std.

# %%
CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
CIFAR10_MD5 = "c58f30108f718f92721af3b95e74349a"
CIFAR10_FILE = "cifar-10-python.tar.gz"


class ArchiveError(ValueError):
    """The CIFAR-10 archive is missing and cannot be downloaded, or is corrupt (one line)."""


def md5(path):
    """MD5 hex digest of a file, read in 1 MB chunks."""
    digest = hashlib.md5()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


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
    digest = md5(path)
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
    normalise = lambda part, n: ((part[0][:n] - mean) / std, part[1][:n])  # noqa: E731
    return normalise(train, n_train), normalise(valid, n_valid)


@functools.lru_cache(maxsize=1)
def load_data(data, data_dir, n_train, n_valid):
    """The run's ((images, labels) train, valid), read once for both parts."""
    if data == "digits":
        return load_digits(n_train, n_valid)
    return load_cifar10(data_dir, n_train, n_valid)


# %% [markdown]
# ## The model: a small vision transformer
#
# Linear patch embedding, a learned CLS token, learned positions, then file 06's pre-LN block
# (`helpers.Block`: $u \leftarrow u + \mathrm{MHA}(\mathrm{LN}(u))$,
# $u \leftarrow u + \mathrm{MLP}(\mathrm{LN}(u))$, logits with the repository's $1/\sqrt d$
# convention) **without** the causal mask, and a linear classifier on the CLS token. $h$ heads
# of dimension $d$ in each layer.

# %%
class VisionTransformer(nn.Module):
    """Patches [B, T, C P P] -> class logits [B, classes], read at the CLS token."""

    def __init__(self, patch_dim, n_patches, width, n_heads, head_dim, n_layers, n_classes=10):
        super().__init__()
        self.embed = nn.Linear(patch_dim, width)
        self.cls = nn.Parameter(torch.zeros(1, 1, width))
        self.position = nn.Parameter(torch.randn(n_patches + 1, width) * 0.02)
        self.blocks = nn.ModuleList(helpers.Block(width, n_heads, head_dim)
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
# `helpers.fit` (AdamW with the warm-up/cosine schedule, weight decay 0.05); each step draws a
# batch of training images (indices drawn once, like `helpers.train_regression`) and fresh
# offsets. Accuracy is measured on every training image and every held-out image, each at a new
# random placement (one fixed evaluation seed per split, so every model sees the same
# placements).
#
# Runs of one seed share their weights' seed, their batches and their placements across $h$, so
# the difference between two head counts is a paired comparison (95 % t-interval over seeds).
# Both parts below train, tabulate and compare one sweep this way.

# %%
VIT_WEIGHT_DECAY = 0.05   # AdamW's weight decay for every ViT (ours; the paper gives none)
TRAIN_PLACEMENT_SEED = 1  # seeds the new placements at which training images are scored
VALID_PLACEMENT_SEED = 2  # seeds the placements at which held-out images are scored
EVALUATION_CHUNK = 512    # images per forward pass when scoring


@torch.no_grad()
def accuracy(model, data, run, seed):
    """Share of images classified correctly, each at a fresh placement (seeded)."""
    images, labels = data
    generator = torch.Generator().manual_seed(seed)
    offsets = random_offsets(len(images), run["side"], images.shape[-1], generator)
    model.eval()
    correct = 0
    for start in range(0, len(images), EVALUATION_CHUNK):
        chunk = slice(start, start + EVALUATION_CHUNK)
        frames = place(images[chunk], run["side"], offsets[chunk])
        x = patches(frames, run["patch"]).to(run["device"])
        correct += int((model(x).argmax(dim=1).cpu() == labels[chunk]).sum())
    model.train()
    return correct / len(images)


def train_vit(run):
    """Train one (side, h, width, seed) ViT; returns its accuracies and parameter count."""
    started = time.perf_counter()
    train, valid = run["data"]
    images, labels = train
    size, channels = images.shape[-1], images.shape[1]
    generator = torch.Generator().manual_seed(run["seed"])
    helpers.seed_everything(run["seed"])
    n_patches = (run["side"] // run["patch"]) ** 2
    model = VisionTransformer(channels * run["patch"] ** 2, n_patches, run["width"],
                              run["heads"], run["head_dim"], run["layers"]).to(run["device"])
    picks = torch.randint(len(labels), (run["steps"], run["batch_size"]), generator=generator)

    def loss_at(step):                      # the batch's images, each at a fresh placement
        offsets = random_offsets(run["batch_size"], run["side"], size, generator)
        frames = place(images[picks[step]], run["side"], offsets)
        x = patches(frames, run["patch"]).to(run["device"])
        return nn.functional.cross_entropy(model(x), labels[picks[step]].to(run["device"]))

    helpers.fit(model, loss_at, steps=run["steps"], lr=run["lr"], weight_decay=VIT_WEIGHT_DECAY,
                name=f"side={run['side']} h={run['heads']} E={run['width']} seed={run['seed']}")
    return {**{k: v for k, v in run.items() if k != "data"},
            "train_accuracy": accuracy(model, train, run, seed=TRAIN_PLACEMENT_SEED),
            "valid_accuracy": accuracy(model, valid, run, seed=VALID_PLACEMENT_SEED),
            "parameters": helpers.count_parameters(model),
            "seconds": time.perf_counter() - started}


def train_shapes(args, wanted):
    """Train wanted {(side, h): (width, head_dim)} for every seed: {(side, h): (training
    accuracies, held-out accuracies, parameters)}, accuracies per seed, and the runs' seconds."""
    if not wanted:
        return {}, 0
    data = load_data(args.data, args.data_dir, args.n_train, args.n_valid)
    base = dict(layers=args.layers, patch=args.patch, steps=args.steps, lr=args.lr,
                batch_size=args.batch_size, device=args.device, data=data)
    runs = [dict(base, side=side, heads=h, width=width, head_dim=head_dim, seed=args.seed + s)
            for (side, h), (width, head_dim) in wanted.items() for s in range(args.seeds)]
    results = helpers.run_sweep(
        runs, args.workers, train_vit,
        lambda r: f"side={r['side']:<3} h={r['heads']:<2} E={r['width']:<3} seed={r['seed']}  "
                  f"train acc {r['train_accuracy']:.3f}  held-out {r['valid_accuracy']:.3f}",
        cost=lambda r: (r["side"] // r["patch"]) ** 2 * r["width"] * r["steps"])  # patches x E
    trained = {}
    for side, h in wanted:
        train, valid, parameters = (helpers.by_seed(results, key, side=side, heads=h)
                                    for key in ("train_accuracy", "valid_accuracy", "parameters"))
        trained[(side, h)] = (train, valid, parameters[0])
    return trained, sum(r["seconds"] for r in results)


def sweep_keys(args, result, sweep, shapes, known=None):
    """One sweep's JSON keys, merged with those of the parts that ran before: accuracy ->
    sweep -> T -> h, and the paired training-accuracy gain from the fewest to the most heads.
    known: {(side, h): (train, valid, parameters)} already trained; the rest is trained here."""
    sides = list(dict.fromkeys(args.sides))                  # a side named twice runs once
    known = known or {}
    trained, seconds = train_shapes(args, {(side, h): shape for side in sides
                                           for h, shape in shapes.items()
                                           if (side, h) not in known})
    table, gains = {}, {}
    for side in sides:
        T = str((side // args.patch) ** 2)
        rows = {h: known.get((side, h)) or trained[(side, h)] for h in shapes}
        table[T] = {str(h): {"train": helpers.seed_stats(rows[h][0]),
                             "valid": helpers.seed_stats(rows[h][1]), "parameters": rows[h][2],
                             "width": width, "head_dim": head_dim}
                    for h, (width, head_dim) in shapes.items()}
        few, many = min(shapes), max(shapes)
        gains[T] = {"from": few, "to": many, **helpers.paired_difference(
            [b - a for a, b in zip(rows[few][0], rows[many][0])],
            below=f"h={few} fits better", above=f"h={many} fits better")}
    return {"data": args.data, "image_side": IMAGE_SIDE[args.data],
            "T": [(side // args.patch) ** 2 for side in args.sides],
            "accuracy": {**result.get("accuracy", {}), sweep: table},
            "train_gain_with_heads": {**result.get("train_gain_with_heads", {}), sweep: gains},
            "run_seconds": result.get("run_seconds", 0) + seconds}


def report_sweep(result, args, sweep):
    """One sweep's printed table: accuracy per T and h, and the paired gain from few to many."""
    print(f"{sweep} ({result['data']}): accuracy, mean (min) over {args.seeds} seeds — training "
          f"images at new placements | held-out")
    for T, by_h in result["accuracy"][sweep].items():
        print(f"   T = {T:<4}+ CLS  " + "  ".join(
            f"h={h}: {e['train']['mean']:.3f} ({e['train']['min']:.3f}) | "
            f"{e['valid']['mean']:.3f}  [{e['parameters']} params]" for h, e in by_h.items()))
    for T, gain in result["train_gain_with_heads"][sweep].items():
        print("   " + helpers.describe_difference(
            f"T = {T}: training accuracy h={gain['to']} minus h={gain['from']} "
            f"(95% t, paired seeds)", gain))


# %% [markdown]
# ## Part fixed-head-dim: the paper's protocol
#
# The head dimension $d$ is fixed (the paper's 16; ours 8 with the digits) and the width is
# $E = h d$, so the model grows with $h$. The paper's claim: training accuracy rises with $h$, and
# the more so the longer the sequence, because each head can attend to the image's patches
# among many background patches.
#
# What would speak against it: accuracy that does not rise with $h$ at the larger frame, or a rise
# as large at side 8 (no background to search, $T = 16$) as at side 16. What would not speak for
# the head count: a rise that the next part, at a fixed width, does not repeat — here more heads
# also bring more parameters. The protocol (random placement, border colour, patches, CLS token,
# training accuracy as the measure) is the paper's; the digits, the 2 × 2 patches, two layers,
# $d = 8$ and scoring the training images at new placements are ours. Its figure is drawn with
# the next part's: one figure, the two sweeps side by side.

# %%
def fixed_head_dim_shapes(args):
    """{h: (width, head_dim)}: d fixed, E = h d."""
    return {h: (h * args.head_dim, args.head_dim) for h in args.heads}


def run_fixed_head_dim(args, result):
    """Train the fixed-head-dimension sweep; its accuracy table and paired gains."""
    return sweep_keys(args, result, "fixed-head-dim", fixed_head_dim_shapes(args))


def report_fixed_head_dim(result, args):
    report_sweep(result, args, "fixed-head-dim")


# %% [markdown]
# ## Part fixed-width: the control the paper lacks on images
#
# The total width $E$ is fixed and $d = E / h$ (only the head counts that divide $E$), so every
# $h$ has the same parameter count (the tests check it) — a rise of accuracy with $h$ here is a
# head-count effect, not width. The paper removes the width confound on synthetic data (its
# Table 3) but not on images; this sweep is ours.
#
# What would speak against the claim: flat accuracy in $h$ at a fixed width, which would say the
# rise of the first part is width. What could hide a real effect [inferred]: at the largest $h$
# each head is narrow ($d = 4$ for $h = 8$ at $E = 32$), and what a narrow head cannot represent
# (file 05's head-dimension sweeps) could cost what more heads gain; and with few seeds a small
# rise stays inside its interval.
#
# The shape $h = E / d$ is in both sweeps (the same model, seed, batches and placements): when the
# first part ran, this part reads that shape's numbers from its result instead of training it
# again. "How much of the rise is width" is then a measured number: per seed, the gain
# $h_{\max} - h_{\min}$ of the first sweep minus that of this one, with its paired 95 % interval
# (`gain_difference`), not a reading of two separate intervals.

# %%
def fixed_width_shapes(args):
    """{h: (width, head_dim)}: E fixed, d = E / h, for the head counts that divide E."""
    return {h: (args.width, args.width // h) for h in args.heads if args.width % h == 0}


def trained_by_fixed_head_dim(result, args, shapes):
    """{(side, h): (train, valid, parameters)} of the shapes the fixed-head-dim part already
    trained (same width and head dimension), read from its result when it ran."""
    table, known = result.get("accuracy", {}).get("fixed-head-dim", {}), {}
    for side in args.sides:
        by_h = table.get(str((side // args.patch) ** 2), {})
        for h, (width, head_dim) in shapes.items():
            entry = by_h.get(str(h))
            if entry and (entry["width"], entry["head_dim"]) == (width, head_dim):
                known[(side, h)] = (entry["train"]["seeds"], entry["valid"]["seeds"],
                                    entry["parameters"])
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


def run_fixed_width(args, result):
    """Train the fixed-width sweep (reusing the shapes part fixed-head-dim trained), and the
    paired difference of the two sweeps' gains when both ran."""
    shapes = fixed_width_shapes(args)
    keys = sweep_keys(args, result, "fixed-width", shapes,
                      known=trained_by_fixed_head_dim(result, args, shapes))
    return {**keys, "gain_difference": gain_difference(keys["train_gain_with_heads"])}


def plot_heads_on_images(result, args):
    """Training and held-out accuracy against h, one line per T, for every sweep that ran."""
    sweeps = result["accuracy"]
    figure, axes = plt.subplots(2, len(sweeps), figsize=(5.5 * len(sweeps), 7), squeeze=False)
    for column, (sweep, by_T) in enumerate(sweeps.items()):
        for row, split in enumerate(("train", "valid")):
            axis = axes[row, column]
            for T, by_h in by_T.items():
                heads = [int(h) for h in by_h]
                line, = axis.semilogx(heads, [e[split]["mean"] for e in by_h.values()], "o-",
                                      label=f"T = {T} + CLS")
                for h, entry in zip(heads, by_h.values()):
                    axis.semilogx([h] * len(entry[split]["seeds"]), entry[split]["seeds"], ".",
                                  color=line.get_color(), alpha=0.5)
            helpers.label_log_axis(axis, heads)
            axis.set_xlabel("heads h"), axis.legend(fontsize=7)
            axis.set_ylabel(("training images at new placements" if split == "train"
                             else "held-out images") + ": accuracy")
            axis.set_title(f"{sweep}: " + ("width grows with h" if sweep == "fixed-head-dim"
                                           else "same parameters for every h"))
    figure.tight_layout()
    return figure


def report_fixed_width(result, args):
    report_sweep(result, args, "fixed-width")
    for T, entry in result["gain_difference"].items():
        print("   " + helpers.describe_difference(
            f"T = {T}: gain h={entry['from']} -> h={entry['to']} with the width growing minus "
            f"at a fixed width (paired seeds)", entry))


# %% [markdown]
# ## Running it
#
# `--quick` (seconds, what the tests use), the default (digits, minutes on a laptop) and `--full`
# (digits: 5 paired seeds and 1,500 steps, enough for the T = 64 models to learn, sized for 2 CPU
# cores) are the presets below; any flag overrides its preset value, and
# `--data cifar10 --data-dir DIR` switches to the paper's data with its own presets (a GPU).
# `--parts fixed-width` reruns one part only. Results go to `runs/` unless `--out` says otherwise;
# a non-default or partial run carries its flags in its file names, so it never lands on the
# default run's files.

# %%
DIGITS = dict(             # the default run on scikit-learn's digits
    sides=[8, 16],         # frame sides in pixels; T = (side / patch)^2 patch tokens + CLS
    heads=[1, 2, 4, 8],    # head counts h of both sweeps
    head_dim=8,            # d of part fixed-head-dim (its width is h d)
    width=32,              # E of part fixed-width (its d is E / h; h must divide E)
    layers=2,              # transformer blocks
    seeds=2,               # seeds per configuration, paired across h
    steps=600,             # training steps per run
    batch_size=64,         # images per step
    lr=3e-3,               # AdamW's peak learning rate (warm-up, then cosine to zero)
    n_train=1500,          # training images
    n_valid=297,           # held-out images (1500 + 297: all 1,797 digits)
    patch=2,               # patch side P in pixels
)
CIFAR10 = dict(DIGITS,     # the default run on CIFAR-10 (a GPU is needed)
               sides=[32, 64], head_dim=16, width=64, layers=4, steps=5000, batch_size=128,
               lr=1e-3, n_train=50000, n_valid=10000, patch=8)
QUICK = dict(sides=[8, 12], heads=[1, 2], head_dim=4, width=8, layers=1, steps=30,
             batch_size=32, n_train=200, n_valid=60)   # the changes of --quick: seconds
PRESETS = {
    "digits": {
        "quick": dict(DIGITS, **QUICK),
        "default": DIGITS,
        "full": dict(DIGITS, seeds=5, steps=1500),  # the reference: 5 paired seeds, T = 64 learns
    },
    "cifar10": {  # the paper's grid with --full (Section 6.2, Appendix B.3); a GPU is needed
        "quick": dict(CIFAR10, **dict(QUICK, sides=[32, 40])),
        "default": CIFAR10,
        "full": dict(CIFAR10, sides=[64, 96, 128, 192, 256],
                     heads=[1, 2, 4, 8, 10, 11, 12, 13, 14, 16, 20, 24], width=128, seeds=3,
                     steps=20000),                  # T = 65 ... 1025, the paper's head counts
    },
}
MAX_PATCHES_PER_SIDE = 64  # frames of at most 64 x 64 patches (T = 4096)


def build_parser():
    """Every flag of this file, with its help (python 07_real_data.py --help)."""
    parser = helpers.make_parser(__doc__.split("\n")[0], full=(
        "digits: 5 seeds and 1,500 steps, sized for 2 CPU cores; with --data cifar10 the "
        "paper's grid, for a GPU"))
    parser.add_argument("--data", choices=["digits", "cifar10"], default="digits",
                        help="digits: scikit-learn's bundled 8x8 digits (default, no download); "
                             "cifar10: the official archive in --data-dir")
    parser.add_argument("--data-dir", type=Path, help="folder holding cifar-10-python.tar.gz")
    parser.add_argument("--sides", type=helpers.int_list,
                        help="frame sides in pixels, multiples of --patch, e.g. 8,16")
    parser.add_argument("--heads", type=helpers.int_list, help="head counts h, e.g. 1,2,4,8")
    parser.add_argument("--head-dim", type=helpers.positive_int,
                        help="head dimension of the fixed-head-dimension sweep")
    parser.add_argument("--width", type=helpers.positive_int,
                        help="total width E of the fixed-width sweep (head counts that do not "
                             "divide it are left out of that sweep)")
    parser.add_argument("--layers", type=helpers.positive_int, help="transformer layers")
    parser.add_argument("--patch", type=helpers.positive_int, help="patch side P in pixels")
    parser.add_argument("--batch-size", type=helpers.positive_int, help="images per step")
    parser.add_argument("--lr", type=helpers.positive_float, help="peak learning rate")
    helpers.add_training_flags(parser)
    helpers.add_parts_flag(parser, PARTS)
    parser.set_defaults(n_train=None, n_valid=None)
    return parser


def config(argv=None):
    """Parse the flags, fill the unset ones from the chosen preset, and check before any
    work that the run they describe can finish (else one line, exit 2)."""
    parser = build_parser()
    known, _ = parser.parse_known_args(helpers.cli_argv() if argv is None else argv)
    args = helpers.config(parser, PRESETS[known.data], argv, parts=PARTS)
    size = IMAGE_SIDE[args.data]
    if args.data == "cifar10" and args.data_dir is None:
        helpers.refuse(parser, "--data-dir", "--data cifar10 needs the folder that holds (or "
                       f"will hold) {CIFAR10_FILE}")
    if args.data == "digits" and args.n_train + args.n_valid > DIGITS_AVAILABLE:
        helpers.refuse(parser, "--n-train", f"--n-train + --n-valid is at most the "
                       f"{DIGITS_AVAILABLE} digits, got {args.n_train} + {args.n_valid}")
    if args.patch > size:
        helpers.refuse(parser, "--patch", f"at most the image side {size}")
    bad = [side for side in args.sides if side < size or side % args.patch]
    if bad:
        helpers.refuse(parser, "--sides", f"{bad}: each side must hold the {size}x{size} image "
                       f"and be a multiple of --patch {args.patch}",
                       smallest=math.ceil(size / args.patch) * args.patch)
    if max(args.sides) // args.patch > MAX_PATCHES_PER_SIDE:
        helpers.refuse(parser, "--sides", f"at most {MAX_PATCHES_PER_SIDE * args.patch} "
                       f"({MAX_PATCHES_PER_SIDE ** 2} patches)")
    if "fixed-width" in args.parts and not fixed_width_shapes(args):
        helpers.refuse(parser, "--width", f"no head count in --heads {args.heads} divides it; "
                       f"the fixed-width sweep would be empty", smallest=max(args.heads))
    if args.seeds < 2:
        helpers.refuse(parser, "--seeds", "paired differences need at least two seeds",
                       smallest=2)
    return args


PARTS = {
    "fixed-head-dim": helpers.Part(run_fixed_head_dim, report_fixed_head_dim,
                                   {"07_heads_on_images": plot_heads_on_images}),
    "fixed-width": helpers.Part(run_fixed_width, report_fixed_width,
                                {"07_heads_on_images": plot_heads_on_images}),  # one figure
}


def main(args):
    """Run the parts args.parts names (default: both sweeps); every number, JSON-ready."""
    return helpers.run_parts(PARTS, args)


if __name__ == "__main__":
    args = config()
    try:
        helpers.run_script("07_real_data", main, PARTS, args, named=("data",),
                           suffix="_cifar10" if args.data == "cifar10" else "")
    except ArchiveError as error:  # a missing or corrupt CIFAR-10 archive: one line, exit 2
        print(f"07_real_data.py: error: argument --data-dir: {error}", file=sys.stderr)
        sys.exit(2)

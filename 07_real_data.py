# %% [markdown]
# # 07 · The head count on real data: digits at a random place, and text among hard negatives
#
# Paper A, Section 6.2: on real tasks more heads should find what matters in a longer sequence,
# by *training* accuracy. Its protocols fix the head dimension, so more heads means a wider
# model; we run them **and a fixed total width**, on data that need no download.

# %%
"""07 · The head count on real data (paper A, Section 6.2, Appendices B.2-B.3, Tables 6, 8-9).

What it shows
    a. Digits at a fresh random place in a larger frame, 2x2 patches (T = 16, 64 + a CLS), a small
       pre-LN ViT; parts fixed-head-dim (the paper's protocol) and fixed-width (equal parameters).
    b. Part text: standard-library names and their docstrings as frozen TF-IDF/SVD tokens, T - 1
       hard negatives each, a 2-layer encoder; both sweeps beside Table 6, chance, frozen cosine.
    c. --data cifar10 --data-dir DIR: CIFAR-10 (MD5-checked); --full holds the paper's grid.

Run it (images and text are separate defaults)
    python 07_real_data.py             # default: digits, 4 min 56 s on a 2-core CPU
    python 07_real_data.py --full      # digits, 5 seeds, 1,500 steps: 34 min 29 s
    python 07_real_data.py --parts text          # text, T = 8, 16, 32: 2 min 39 s
    python 07_real_data.py --parts text --full   # text, 5 seeds, T up to 64: 32 min 48 s
    python 07_real_data.py --data cifar10 --data-dir ~/data --full   # the paper's grid (GPU)
    python 07_real_data.py --quick     # seconds; what the tests use

Output (under runs/, which git ignores; `--out .` refreshes the committed files): results/ and
    figures/ 07_real_data.json, 07_heads_on_images.png (_cifar10 for CIFAR-10) and, for the text
    part, 07_real_data_parts_text.json, 07_text_retrieval_parts_text.png
"""
import functools
import hashlib
import importlib
import inspect
import json
import math
import pickle
import re
import subprocess
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
# Linear patch embedding, a learned CLS token and positions, file 06's pre-LN block
# (`helpers.Block`: $u \leftarrow u + \mathrm{MHA}(\mathrm{LN}(u))$, then $u \leftarrow u +
# \mathrm{MLP}(\mathrm{LN}(u))$, logits scaled by $1/\sqrt d$) with no mask, a classifier on CLS.

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
    results = helpers.run_sweep(
        runs, args.workers, train_vit,
        lambda r: f"side={r['side']:<3} h={r['heads']:<2} E={r['width']:<3} seed={r['seed']}  "
                  f"train acc {r['train']:.3f}  held-out {r['valid']:.3f}",
        cost=lambda r: (r["side"] // r["patch"]) ** 2 * r["width"] * r["steps"])  # patches x E
    return {(side, h): per_seed(results, ("train", "valid"), side=side, heads=h)
            for side, h in wanted}, sum(r["seconds"] for r in results)


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


def sweep_keys(args, result, sweep, shapes, known=None):
    """One sweep's JSON keys, merged with those of the parts that ran before: accuracy ->
    sweep -> T -> h, and the paired training-accuracy gain from the fewest to the most heads.
    known: {(side, h): per-seed row} already trained; the rest is trained here."""
    sides = list(dict.fromkeys(args.sides))                  # a side named twice runs once
    known = known or {}
    trained, seconds = train_shapes(args, {(side, h): shape for side in sides
                                           for h, shape in shapes.items()
                                           if (side, h) not in known})
    table, gains = tabulate({((side // args.patch) ** 2, h): known.get((side, h))
                             or trained[(side, h)] for side in sides for h in shapes}, shapes)
    return {"data": args.data, "image_side": IMAGE_SIDE[args.data],
            "T": [(side // args.patch) ** 2 for side in args.sides],
            "accuracy": {**result.get("accuracy", {}), sweep: table},
            "train_gain_with_heads": {**result.get("train_gain_with_heads", {}), sweep: gains},
            "run_seconds": result.get("run_seconds", 0) + seconds}


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


def run_fixed_head_dim(args, result):
    """Train the fixed-head-dimension sweep; its accuracy table and paired gains."""
    return sweep_keys(args, result, "fixed-head-dim", fixed_head_dim_shapes(args))


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


def trained_by_fixed_head_dim(result, args, shapes):
    """{(side, h): per-seed row} of the shapes the fixed-head-dim part already
    trained (same width and head dimension), read from its result when it ran."""
    table, known = result.get("accuracy", {}).get("fixed-head-dim", {}), {}
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


def run_fixed_width(args, result):
    """Train the fixed-width sweep (reusing the shapes part fixed-head-dim trained), and the
    paired difference of the two sweeps' gains when both ran."""
    shapes = fixed_width_shapes(args)
    keys = sweep_keys(args, result, "fixed-width", shapes,
                      known=trained_by_fixed_head_dim(result, args, shapes))
    return {**keys, "gain_difference": gain_difference(keys["train_gain_with_heads"])}


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


def report_fixed_width(result, args):
    report_sweep(result, "fixed-width", args.seeds)
    report_gain_difference(result["gain_difference"])


def report_gain_difference(difference):
    for T, entry in difference.items():
        print("   " + helpers.describe_difference(
            f"T = {T}: gain h={entry['from']} -> h={entry['to']} with the width growing minus "
            f"at a fixed width (paired seeds)", entry))


# %% [markdown]
# ## Part text: retrieval among hard negatives, from the standard library's docstrings
#
# Paper A's MS MARCO runs (Table 6): a query, its positive passage and $T - 1$ mined hard
# negatives; a 2-layer encoder ($d = 32$) on frozen BERT embeddings projected to $E = 32h$;
# training accuracy falls with $T$ for few heads ($h = 1$: 0.597 at $T = 8$, 0.154 at $T = 64$),
# not near $h \approx 12$. Ours [ours throughout]: a **query** is a public function or class of
# fixed standard-library modules, its module and name as words (`os.path.join` → "os path
# join"), its **passage** its docstring (the corpus follows the Python version, as 06's does);
# each text one frozen token (TF-IDF, truncated SVD to 64 dimensions, unit length); negatives
# the passages of highest TF-IDF cosine to the query. Held-out queries are new, their passages
# seen (as negatives). The model: [query, $p_1 \dots p_T$] plus a role embedding, no positions,
# two `helpers.Block`s, a score per passage, the cross-entropy over the $T$ scores; both sweeps,
# seeds paired across $h$ and $T$, beside chance $1/T$ and the frozen tokens' cosine. Against the
# paper: no paired drop with $T$ at small $h$, or as large a drop at the largest $h$.

# %%
STDLIB_MODULES = """abc argparse ast base64 bisect calendar cmd codecs collections configparser
contextlib copy csv dataclasses datetime decimal difflib email.message email.utils enum filecmp
fnmatch fractions ftplib functools getopt gettext glob gzip hashlib heapq hmac html html.parser
http.client http.cookies imaplib inspect io ipaddress itertools json logging mailbox math
mimetypes numbers operator optparse os os.path pathlib pickle pkgutil platform plistlib poplib
pprint queue quopri random re reprlib sched secrets selectors shelve shlex shutil smtplib socket
socketserver statistics string struct subprocess tarfile tempfile textwrap threading time timeit
tokenize trace traceback types urllib.parse urllib.request uuid warnings wave weakref
xml.dom.minidom xml.etree.ElementTree zipfile zlib""".split()  # the corpus's modules, fixed
MIN_DOCSTRING = 40       # characters: a shorter docstring is left out (too little to match)
TOKEN_DIM = 64           # dimension of the frozen tokens (TruncatedSVD of the TF-IDF vectors)
HELD_OUT_SHARE = 0.2     # of the queries, held out (a fixed split)
TEXT_SPLIT_SEED = 0      # the one shuffle that splits the queries
TEXT_SHUFFLE_SEED = 1    # the random orders: equal cosines, the positive's place in its list
TEXT_LAYERS = 2          # the paper's 2-layer encoder
TEXT_METRICS = ("train", "train_mrr", "valid", "valid_mrr")  # per run: top-1 accuracy and MRR
PAPER_TABLE_6 = {1: [0.597, 0.450, 0.303, 0.154], 2: [0.771, 0.647, 0.486, 0.286],  # paper A:
                 4: [0.956, 0.900, 0.793, 0.580], 8: [0.998, 0.995, 0.983, 0.932],  # MS MARCO,
                 12: [1.000, 0.999, 0.998, 0.991], 16: [1.000, 1.000, 0.999, 0.996]}  # T = 8 ... 64


def split_words(name):
    """'os.path.TextWrapper' -> 'os path text wrapper': dots, underscores and camelCase."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return " ".join(word.lower() for word in re.split(r"[._\s]+", spaced) if word)


def stdlib_pairs(modules=STDLIB_MODULES):
    """live_pairs(modules), read in a fresh interpreter: a library that replaced a member (pytest
    replaces threading.excepthook) would otherwise change the corpus."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import helpers; print(json.dumps("
            "helpers.load_concept('07_real_data').live_pairs(sys.argv[2:])))")
    done = subprocess.run([sys.executable, "-c", code, str(helpers.ROOT), *modules],
                          capture_output=True, text=True, check=True)
    return [tuple(pair) for pair in json.loads(done.stdout)]


def live_pairs(modules):
    """[(query, passage)]: each public function or class defined in the modules (by name), its
    own docstring the passage; one seen before or shorter than MIN_DOCSTRING is left out."""
    pairs, seen = [], set()
    for module_name in modules:
        module = importlib.import_module(module_name)
        for name in sorted(name for name in dir(module) if not name.startswith("_")):
            member = getattr(module, name)
            own = inspect.isbuiltin(member) or getattr(member, "__module__", None) == module_name
            doc = member.__doc__ if own and (inspect.isroutine(member) or inspect.isclass(
                member)) and isinstance(member.__doc__, str) else None   # its own, not a base's
            doc = doc and inspect.cleandoc(doc)
            if doc and len(doc) >= MIN_DOCSTRING and doc not in seen:
                seen.add(doc)
                pairs.append((split_words(f"{module_name}.{name}"), doc))
    return pairs


@functools.lru_cache(maxsize=1)
def text_corpus():
    """Built once: {"queries", "passages": frozen tokens [n, 64]; "order" [n, n - 1]: passages by
    TF-IDF cosine to each query (equal cosines in a seeded random order), its positive left
    out; "train", "valid": query indices; "characters"}. Query i's positive is passage i."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer
    queries, passages = zip(*stdlib_pairs())
    tfidf = TfidfVectorizer(sublinear_tf=True).fit(passages + queries)
    P, Q = tfidf.transform(passages), tfidf.transform(queries)              # unit rows
    svd = TruncatedSVD(TOKEN_DIM, random_state=0).fit(P)
    frozen = lambda x: nn.functional.normalize(torch.tensor(svd.transform(x)).float())  # noqa
    similarity = torch.tensor((Q @ P.T).toarray()).fill_diagonal_(-math.inf)  # [n, n]
    tied = torch.rand(similarity.shape, generator=torch.Generator().manual_seed(
        TEXT_SHUFFLE_SEED)).argsort(dim=1)        # a random order first: equal cosines in it
    order = tied.gather(1, similarity.gather(1, tied).argsort(dim=1, descending=True,
                                                              stable=True))[:, :-1]  # not i
    split = torch.randperm(len(queries), generator=torch.Generator().manual_seed(TEXT_SPLIT_SEED))
    held_out = int(HELD_OUT_SHARE * len(queries))
    return {"queries": frozen(Q), "passages": frozen(P), "order": order,
            "train": split[held_out:].sort().values, "valid": split[:held_out].sort().values,
            "characters": sum(map(len, passages))}


def candidates(corpus, T):
    """Each query's list, its positive and its T - 1 hardest negatives in a seeded shuffle
    -> (passage indices [n, T], the positive's place [n])."""
    n = len(corpus["queries"])
    lists = torch.cat([torch.arange(n)[:, None], corpus["order"][:, :T - 1]], dim=1)  # [n, T]
    shuffle = torch.rand(n, T, generator=torch.Generator().manual_seed(TEXT_SHUFFLE_SEED)) \
        .argsort(dim=1)                                                     # [n, T]
    return lists.gather(1, shuffle), (shuffle == 0).int().argmax(dim=1)


class Ranker(nn.Module):
    """Query [B, D] and passages [B, T, D] (frozen tokens) -> a score per passage [B, T]."""

    def __init__(self, token_dim, width, n_heads, head_dim, n_layers=TEXT_LAYERS):
        super().__init__()
        self.embed = nn.Linear(token_dim, width)
        self.role = nn.Parameter(torch.randn(2, width) * 0.02)  # query, passage; no positions
        self.blocks = nn.ModuleList(helpers.Block(width, n_heads, head_dim)
                                    for _ in range(n_layers))
        self.norm = nn.LayerNorm(width)
        self.score = nn.Linear(width, 1)

    def forward(self, query, passages):
        u = self.embed(torch.cat([query[:, None], passages], dim=1))      # [B, 1 + T, E]
        u = u + self.role[(torch.arange(u.shape[1], device=u.device) > 0).long()]
        for block in self.blocks:
            u = block(u, None)                                              # no mask
        return self.score(self.norm(u[:, 1:])).squeeze(-1)                 # [B, T]


def ranking(scores, positive):
    """scores [n, T], positive [n] -> (top-1 accuracy, MRR); rank 1 + the others >= it (ties)."""
    above = (scores >= scores.gather(1, positive[:, None])).sum(dim=1) - 1
    return float((above == 0).float().mean()), float((1 / (1 + above).float()).mean())


def ranking_loss(scores, positive):
    """scores [B, T], positive [B] -> the mean over lists of -log softmax(scores)[positive]."""
    return nn.functional.cross_entropy(scores, positive)


def frozen_cosine(corpus, T, split):
    """The top-1 accuracy of ranking by the frozen tokens' cosine, on a split's lists."""
    lists, positive = (part[corpus[split]] for part in candidates(corpus, T))
    scores = (corpus["queries"][corpus[split], None] * corpus["passages"][lists]).sum(-1)
    return ranking(scores, positive)[0]


def train_ranker(run):
    """Train one (T, h, width, seed) ranker; its training and held-out accuracy and MRR."""
    started, corpus, device = time.perf_counter(), text_corpus(), run["device"]
    (lists, positive), Q, P = candidates(corpus, run["T"]), corpus["queries"], corpus["passages"]
    helpers.seed_everything(run["seed"])
    model = Ranker(TOKEN_DIM, run["width"], run["heads"], run["head_dim"]).to(device)
    generator = torch.Generator().manual_seed(run["seed"])
    picks = corpus["train"][torch.randint(len(corpus["train"]), (run["steps"],
                                          run["batch_size"]), generator=generator)]
    score = lambda i: model(Q[i].to(device), P[lists[i]].to(device))  # noqa: E731
    helpers.fit(model, lambda step: ranking_loss(score(picks[step]), positive[picks[
        step]].to(device)), steps=run["steps"], lr=run["lr"],
        weight_decay=WEIGHT_DECAY, name=f"T={run['T']} h={run['heads']} E={run['width']} "
                                        f"seed={run['seed']}")
    with torch.no_grad():
        (train, train_mrr), (valid, valid_mrr) = (ranking(score(corpus[split]).cpu(), positive[
            corpus[split]]) for split in ("train", "valid"))
    return {**run, **dict(zip(TEXT_METRICS, (train, train_mrr, valid, valid_mrr))),
            "parameters": helpers.count_parameters(model), "seconds": time.perf_counter() - started}


def run_text(args, result):
    """Both sweeps (a shape in both trained once per T and seed): tables, gains, their paired
    difference, the drop from the shortest to the longest list per h, chance, frozen cosine."""
    corpus, lengths = text_corpus(), list(dict.fromkeys(args.text_T))  # before the fork
    sweeps = {"fixed-head-dim": fixed_head_dim_shapes(args),
              "fixed-width": fixed_width_shapes(args)}
    shapes = sorted({shape + (h,) for by_h in sweeps.values() for h, shape in by_h.items()})
    runs = [dict(T=T, heads=h, width=width, head_dim=head_dim, seed=args.seed + s,
                 steps=args.text_steps, batch_size=args.batch_size, lr=args.lr,
                 device=args.device) for T in lengths for width, head_dim, h in shapes
            for s in range(args.seeds)]
    results = helpers.run_sweep(runs, args.workers, train_ranker, lambda r: (
        f"text T={r['T']:<3} h={r['heads']:<2} E={r['width']:<3} seed={r['seed']}  train acc "
        f"{r['train']:.3f}  held-out {r['valid']:.3f}"), cost=lambda r: r["T"] * r["width"])
    short, long = min(lengths), max(lengths)
    text = {"data": "stdlib docstrings", "T": lengths, "queries": len(corpus["queries"]),
            "train_queries": len(corpus["train"]), "characters": corpus["characters"],
            "reference": {split: {str(T): {"chance": 1 / T, "frozen cosine": frozen_cosine(
                corpus, T, split)} for T in lengths} for split in ("train", "valid")},
            "accuracy": {}, "train_gain_with_heads": {}, "train_drop_with_T": {},
            "run_seconds": sum(r["seconds"] for r in results)}
    for sweep, by_h in sweeps.items():
        rows = {(T, h): per_seed(results, TEXT_METRICS, T=T, heads=h, width=E)
                for T in lengths for h, (E, _) in by_h.items()}
        text["accuracy"][sweep], text["train_gain_with_heads"][sweep] = tabulate(rows, by_h)
        text["train_drop_with_T"][sweep] = {} if short == long else {
            str(h): {"from": short, "to": long, **helpers.paired_difference(
                [a - b for a, b in zip(rows[(short, h)]["train"], rows[(long, h)]["train"])],
                below=f"T={long} fits better", above="falls with T")} for h in by_h}
    text["gain_difference"] = gain_difference(text["train_gain_with_heads"])
    return {"text": text}


def report_text(result, args):
    """Both sweeps' tables and drops with T, the gains' difference, the references, Table 6."""
    text = result["text"]
    print(f"text: {text['queries']} queries, {text['train_queries']} trained on, Python "
          f"{sys.version.split()[0]}'s standard library ({text['characters']:,} characters)")
    for sweep in text["accuracy"]:
        report_sweep(text, sweep, args.seeds, plus="query", trained_on="queries")
        for h, drop in text["train_drop_with_T"][sweep].items():
            print("   " + helpers.describe_difference(
                f"h = {h}: training accuracy at T = {drop['from']} minus T = {drop['to']}", drop))
    report_gain_difference(text["gain_difference"])
    for split, by_T in text["reference"].items():
        print(f"   {split}: " + "  ".join(f"T = {T}: chance {r['chance']:.3f}, frozen cosine "
                                          f"{r['frozen cosine']:.3f}" for T, r in by_T.items()))
    print("[paper: Table 6, MS MARCO training accuracy (mean), d = 32, E = 32h; T = 8, 16, 32, "
          "64]  " + "  ".join(f"h={h}: " + " ".join(f"{a:.3f}" for a in row)
                              for h, row in PAPER_TABLE_6.items()))


def plot_text(result, args):
    """Accuracy against h per T, both sweeps, chance and the frozen cosine dashed."""
    return plot_sweeps(result["text"]["accuracy"], "training queries", "query",
                       dashed=result["text"]["reference"])


# %% [markdown]
# ## Running it
#
# Presets `--quick` (the tests), the default (minutes on a laptop) and `--full` (5 paired seeds,
# for 2 CPU cores; `--data cifar10` has its own, for a GPU); a flag overrides its preset. The
# text part runs when named (`--parts text`, a default of its own); a non-default or partial
# run's file names carry its flags (under `runs/` unless `--out`).

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
    text_T=[8, 16, 32],    # part text: passages per query (1 positive, T - 1 hard negatives)
    text_steps=360,        # part text: training steps per run (3 minutes in all)
)
CIFAR10 = dict(DIGITS,     # the default run on CIFAR-10 (a GPU is needed)
               sides=[32, 64], head_dim=16, width=64, layers=4, steps=5000, batch_size=128,
               lr=1e-3, n_train=50000, n_valid=10000, patch=8)
QUICK = dict(sides=[8, 12], heads=[1, 2], head_dim=4, width=8, layers=1, steps=30, batch_size=32,
             n_train=200, n_valid=60, text_T=[4, 8], text_steps=30)  # --quick's changes: seconds
PRESETS = {
    "digits": {
        "quick": dict(DIGITS, **QUICK),
        "default": DIGITS,
        "full": dict(DIGITS, seeds=5, steps=1500,   # the reference: 5 paired seeds, T = 64 learns
                     text_T=[8, 16, 32, 64], text_steps=1000),   # text: 45 minutes at most
    },
    "cifar10": {  # the paper's grid with --full (Section 6.2, Appendix B.3); a GPU is needed
        "quick": dict(CIFAR10, **dict(QUICK, sides=[32, 40])),
        "default": CIFAR10,
        "full": dict(CIFAR10, sides=[64, 96, 128, 192, 256],
                     heads=[1, 2, 4, 8, 10, 11, 12, 13, 14, 16, 20, 24], width=128, seeds=3,
                     steps=20000, text_T=[8, 16, 32, 64]),  # T = 65 ... 1025, the paper's h
    },
}
MAX_PATCHES_PER_SIDE = 64  # frames of at most 64 x 64 patches (T = 4096)
MAX_TEXT_T = 256           # passages per query, well below the corpus's ~1,200


def build_parser():
    """Every flag of this file, with its help (python 07_real_data.py --help)."""
    parser = helpers.make_parser(__doc__.split("\n")[0], full=(
        "5 seeds, 1,500 steps (text: T up to 64, 1,000 steps), sized for 2 CPU cores; with "
        "--data cifar10 the paper's image grid, for a GPU"))
    add, integer, ints = parser.add_argument, helpers.positive_int, helpers.int_list
    add("--data", choices=["digits", "cifar10"], default="digits", help="digits: scikit-learn's "
        "bundled 8x8 digits (default, no download); cifar10: the official archive in --data-dir")
    add("--data-dir", type=Path, help="folder holding cifar-10-python.tar.gz")
    add("--sides", type=ints, help="frame sides in pixels, multiples of --patch, e.g. 8,16")
    add("--heads", type=ints, help="head counts h of both sweeps, e.g. 1,2,4,8")
    add("--head-dim", type=integer, help="head dimension of the fixed-head-dimension sweep")
    add("--width", type=integer, help="total width E of the fixed-width sweep (head counts that "
        "do not divide it are left out of that sweep)")
    add("--layers", type=integer, help="transformer layers of the image models")
    add("--patch", type=integer, help="patch side P in pixels")
    add("--batch-size", type=integer, help="images (queries) per step")
    add("--lr", type=helpers.positive_float, help="peak learning rate")
    add("--text-T", type=ints, help="part text: passages per query (the positive and T - 1 hard "
        "negatives), e.g. 8,16,32")
    add("--text-steps", type=integer, help="part text: training steps per run")
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
    if not 2 <= min(args.text_T) <= max(args.text_T) <= MAX_TEXT_T:
        helpers.refuse(parser, "--text-T", f"each from 2 (a choice) to {MAX_TEXT_T}", 2)
    if {"fixed-width", "text"} & set(args.parts) and not fixed_width_shapes(args):
        helpers.refuse(parser, "--width", f"no head count in --heads {args.heads} divides it; "
                       f"the fixed-width sweep would be empty", smallest=max(args.heads))
    if args.seeds < 2:
        helpers.refuse(parser, "--seeds", "paired differences need two seeds or more", 2)
    return args


IMAGES_FIGURE = {"07_heads_on_images": lambda result, args: plot_sweeps(  # both image parts'
    result["accuracy"], "training images at new placements", "CLS")}
PARTS = {
    "fixed-head-dim": helpers.Part(run_fixed_head_dim, lambda result, args: report_sweep(
        result, "fixed-head-dim", args.seeds), IMAGES_FIGURE),
    "fixed-width": helpers.Part(run_fixed_width, report_fixed_width, IMAGES_FIGURE),
    "text": helpers.Part(run_text, report_text, {"07_text_retrieval": plot_text},
                         by_default=False),   # a default of its own: --parts text
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

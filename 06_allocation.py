# %% [markdown]
# # 06 · Spending a fixed attention budget across heads, head dimensions and layers
#
# Paper B (arXiv 2510.03784), Section 4 (the heads-against-head-dimension trade-off of an
# extraction layer, Eq. 3), Section 6 (compression and allocation experiments) and its
# allocation strategy, built on file 02 (enough heads to extract) and file 05 (saturation, SVD
# truncation). **The paper's body is not among our sources**; the fit, the allocation rule and
# all tasks here are our reconstructions, marked **[inferred]**.

# %%
"""06 · Allocating attention heads and head dimensions across layers (paper B, Sections 4, 6).

What it shows
    a. One extraction layer at a fixed budget H*d: test error against the number of heads H on a
       task that needs M = 3 past tokens; a fit E = A H^-a + B d^-b and its optimum H*.
    b. A small multi-layer transformer (residuals, layer norm, heads and head dimension per
       layer): uniform, front-loaded and back-loaded allocations at equal attention budget, on a
       synthetic task (extract, then aggregate) and on character-level text (Python's own
       docstrings, gathered at run time, or any file given with --text).
    c. SVD-truncating one head at a time (file 05's routine): loss increase against rank, early
       layers against late layers.
    d. allocate(budget, n_layers, D, seq_len): the strategy as a function.
    e. A closing table of rules, each with its evidence and strength.

Run it
    python 06_allocation.py                   # default: 1 min 40 s on a 2-core CPU
    python 06_allocation.py --text my.txt     # your own text for part b
    python 06_allocation.py --full            # more steps and seeds (GPU not yet timed)
    python 06_allocation.py --quick           # seconds; what the tests use

Output
    results/06_allocation.json; figures/06_fixed_budget.png, 06_allocations.png,
    06_truncation_by_layer.png
"""
import importlib
import json
import math
import sys
import time
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import torch
from torch import nn

sys.path.append(str(Path.cwd().parent))  # lets the notebook in notebooks/ find helpers.py
import helpers

saturation = helpers.load_concept("05_saturation")

# %% [markdown]
# ## A transformer whose layers each choose their heads and head dimension
#
# A standard pre-layer-norm decoder block, $u \leftarrow u + \mathrm{MHA}_\ell(\mathrm{LN}(u))$,
# $u \leftarrow u + \mathrm{MLP}(\mathrm{LN}(u))$, where layer $\ell$ has $H_\ell$ heads of
# dimension $d_\ell$ (so $W_{Q}, W_K, W_V \in \mathbb{R}^{H_\ell \times d_\ell \times E}$,
# $W_O \in \mathbb{R}^{E \times H_\ell d_\ell}$) and causal attention with the usual
# $1/\sqrt{d_\ell}$ scale. Tokens enter through a linear map (or a character embedding) plus a
# learned position embedding. The **attention budget** of a layer is $H_\ell d_\ell$; its
# attention parameters are $4 E H_\ell d_\ell$.

# %%
class Block(nn.Module):
    """Pre-LN causal block with n_heads heads of dimension head_dim."""

    def __init__(self, width, n_heads, head_dim):
        super().__init__()
        scale = 1 / math.sqrt(width)
        self.n_heads, self.head_dim = n_heads, head_dim
        self.W_Q = nn.Parameter(torch.randn(n_heads, head_dim, width) * scale)  # [H, d, E]
        self.W_K = nn.Parameter(torch.randn(n_heads, head_dim, width) * scale)
        self.W_V = nn.Parameter(torch.randn(n_heads, head_dim, width) * scale)
        self.W_O = nn.Linear(n_heads * head_dim, width, bias=False)
        self.norm_attention, self.norm_mlp = nn.LayerNorm(width), nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                 nn.Linear(4 * width, width))

    def attention(self, u, future):
        """Causal multi-head attention: u [B, T, E], future [T, T] (True above the diagonal)
        -> [B, T, E]."""
        q = torch.einsum("bte,hde->bhtd", u, self.W_Q)                     # queries
        k = torch.einsum("bte,hde->bhtd", u, self.W_K)                     # keys
        v = torch.einsum("bte,hde->bhtd", u, self.W_V)                     # values
        weights = helpers.attention_weights(q @ k.transpose(-1, -2),         # [B, H, T, T]
                                            1 / math.sqrt(self.head_dim), mask=future)
        heads = weights @ v                                                # [B, H, T, d]
        return self.W_O(heads.transpose(1, 2).flatten(2))                 # concat, W_O

    def forward(self, u, future):
        u = u + self.attention(self.norm_attention(u), future)
        return u + self.mlp(self.norm_mlp(u))


class AllocatedTransformer(nn.Module):
    """Embedding + position embedding, one Block per (heads, head_dim) in `layers`, a head."""

    def __init__(self, layers, width, seq_len, token_dim=None, vocab=None, out_dim=1):
        super().__init__()
        self.embed = nn.Embedding(vocab, width) if vocab else nn.Linear(token_dim, width)
        self.position = nn.Parameter(torch.randn(seq_len, width) * 0.02)
        self.blocks = nn.ModuleList(Block(width, h, d) for h, d in layers)
        self.norm = nn.LayerNorm(width)
        self.out = nn.Linear(width, vocab or out_dim)
        self.language_model = vocab is not None
        future = torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1)    # the causal mask,
        self.register_buffer("future", future, persistent=False)            # made once

    def forward(self, x):
        """Regression: x [B, T, p] -> y [B] read at the last position.
        Language model: x [B, T] characters -> logits [B, T, vocab]."""
        seq_len = x.shape[1]
        u = self.embed(x) + self.position[:seq_len]
        for block in self.blocks:
            u = block(u, self.future[:seq_len, :seq_len])
        out = self.out(self.norm(u))
        return out if self.language_model else out[:, -1, 0]


def attention_budget(layers):
    """Sum over layers of heads * head_dim (the attention parameters are 4 E times this)."""
    return sum(h * d for h, d in layers)


# %% [markdown]
# ## d. The strategy as a function **[inferred]**
#
# Paper B's qualitative rule: early layers extract and need enough heads (file 02: at least $D$,
# the number of tokens to extract); later layers see saturated softmax (file 05), so they can use
# smaller head dimensions. The paper gives no formula and no early/late boundary; ours:
#
# 1. the first layer (the extraction layer) gets $H_1 = D$ heads and half the budget (all of it
#    in a one-layer model), $d_1 = \lfloor \text{budget}/(2D) \rfloor$;
# 2. every later layer gets an equal share of the rest, with head dimension
#    $d_\ell = \max(1, \lfloor d_1 / 2 \rfloor)$, halved once more when $T \ge 256$ (saturation
#    is strongest on long sequences), and as many heads as its share allows.
#
# A budget too small for $D$ heads of dimension 1 in the first layer plus one head per later
# layer is rejected.

# %%
def allocate(budget, n_layers, D, seq_len, width=None, verbose=False):
    """[(heads, head_dim)] per layer following the rules above; prints a table when verbose."""
    if n_layers < 1 or D < 1 or seq_len < 1:
        raise ValueError("n_layers, D and seq_len must be at least 1")
    if budget < D + (n_layers - 1):
        raise ValueError(f"budget {budget} is too small: the first layer needs D = {D} heads "
                         f"of dimension >= 1 and each of the {n_layers - 1} later layers one head")
    first_share = budget if n_layers == 1 else budget // 2
    first_dim = max(1, first_share // D)
    layers = [(D, first_dim)]
    if n_layers > 1:
        late_dim = max(1, first_dim // 2)
        if seq_len >= 256:
            late_dim = max(1, late_dim // 2)
        rest = budget - D * first_dim
        for layer in range(n_layers - 1):
            share = rest // (n_layers - 1 - layer)
            heads = max(1, share // late_dim)
            layers.append((heads, late_dim))
            rest -= heads * late_dim
    if verbose:
        print(f"allocate(budget={budget}, n_layers={n_layers}, D={D}, T={seq_len}):")
        print("  layer  heads  head_dim  heads*head_dim" + ("  attention params" if width
                                                              else ""))
        for index, (heads, head_dim) in enumerate(layers, 1):
            line = f"  {index:>5}  {heads:>5}  {head_dim:>8}  {heads * head_dim:>14}"
            print(line + (f"  {4 * width * heads * head_dim:>16}" if width else ""))
    return layers


# %% [markdown]
# ## a. One extraction layer at a fixed budget
#
# Tokens $x_t \sim \mathcal N(0, I_p)$ (white noise), and a target that needs $M = 3$ earlier
# tokens besides the last one: $y = F(x_T, x_{T-1}, x_{T-2}, x_{T-3})$ with $F$ a fixed random
# two-layer tanh network (a nonlinear "4-gram", after the reviewers' description of paper B's
# Figure 2). One block with $H$ heads of dimension $d = \text{budget}/H$. Too few heads and the
# three tokens collide in one head's average (file 02); too small a head dimension and each head
# carries too little of a token and forms its attention from a low-rank score (file 05).
#
# We fit $E(H) \approx A H^{-a} + B d^{-b}$ with $d = \text{budget}/H$ (least squares on
# $\log E$) and mark $H^* = (aA/(bB))^{1/(a+b)}\,\text{budget}^{b/(a+b)}$, the minimiser of the
# fitted curve, beside the measured best.

# %%
def teacher(inputs, hidden, seed):
    """A fixed random 2-layer tanh network R^inputs -> R, the target function F."""
    generator = torch.Generator().manual_seed(seed)
    first = torch.randn(inputs, hidden, generator=generator) / math.sqrt(inputs)
    second = torch.randn(hidden, generator=generator) / math.sqrt(hidden)
    return lambda z: torch.tanh(z @ first) @ second


def make_lag_data(n, seq_len, dim, lags, seed):
    """x [n, T, p] white noise, y [n] = F(x_T, x_{T-l} for l in lags), standardised."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n, seq_len, dim, generator=generator)
    picked = torch.cat([x[:, -1 - lag] for lag in [0, *lags]], dim=1)      # [n, (M+1) p]
    y = teacher(picked.shape[1], 32, seed + 1)(picked)
    return x, (y - y.mean()) / y.std()


def make_aggregate_data(n, seq_len, dim, seed):
    """Extract, then aggregate: y = mean_t g(x_t, x_{t-1}), g a fixed random tanh network."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n, seq_len, dim, generator=generator)
    pairs = torch.cat([x[:, 1:], x[:, :-1]], dim=2)                       # [n, T-1, 2p]
    y = teacher(2 * dim, 32, seed + 1)(pairs).mean(dim=1) * math.sqrt(seq_len)
    return x, (y - y.mean()) / y.std()


def train_config(run):
    """Train one regression run (part a or b); a plain dict in and out, for the process pool."""
    started = time.perf_counter()
    make = make_lag_data if run["task"] == "lags" else make_aggregate_data
    extra = {"lags": run["lags"]} if run["task"] == "lags" else {}
    x, y = make(run["n_train"] + run["n_valid"], run["T"], run["dim"], seed=run["data_seed"],
                **extra)
    x, y = x.to(run["device"]), y.to(run["device"])
    train = (x[:run["n_train"]], y[:run["n_train"]])
    valid = (x[run["n_train"]:], y[run["n_train"]:])
    helpers.seed_everything(run["seed"])
    model = AllocatedTransformer(run["layers"], run["width"], run["T"],
                                 token_dim=run["dim"]).to(run["device"])
    fit = helpers.train_regression(model, train, valid, steps=run["steps"], batch_size=64,
                                   lr=run["lr"], seed=run["seed"], name=run["name"])
    return {**run, "valid_nmse": fit["valid_nmse"], "train_nmse": fit["train_nmse"],
            "seconds": time.perf_counter() - started}


def fit_tradeoff(heads, errors, budget, steps=3000):
    """Fit E = A H^-a + B (budget/H)^-b to (heads, errors) by least squares on log E.

    Returns A, a, B, b and the optimum H* of the fitted curve.
    """
    H = torch.tensor(heads, dtype=torch.float64)
    target = torch.tensor(errors, dtype=torch.float64).log()
    d = budget / H
    best = None
    for a0 in (0.5, 1.0, 2.0):  # a few starts: the fit is not convex
        params = torch.tensor([math.log(max(errors)), a0, math.log(min(errors)), a0],
                              dtype=torch.float64, requires_grad=True)
        optimizer = torch.optim.Adam([params], lr=0.05)
        for _ in range(steps):
            log_A, a, log_B, b = params
            model = torch.logaddexp(log_A - a.abs() * H.log(), log_B - b.abs() * d.log())
            loss = ((model - target) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if best is None or loss.item() < best[0]:
            best = (loss.item(), params.detach().clone())
    log_A, a, log_B, b = best[1].tolist()
    A, a, B, b = math.exp(log_A), abs(a), math.exp(log_B), abs(b)
    # argmin of the fitted curve, in logs (no overflow), kept to the feasible 1 <= H <= budget
    if a > 0 and b > 0:
        log_optimum = (math.log(a / b) + log_A - log_B + b * math.log(budget)) / (a + b)
        optimum = min(max(math.exp(min(log_optimum, 700)), 1.0), float(budget))
    else:
        optimum = float(budget) if b == 0 else 1.0
    return {"A": A, "a": a, "B": B, "b": b, "H_star": optimum, "residual": best[0]}


# %% [markdown]
# ## b. Text that needs no download
#
# By default the corpus is the docstrings of a fixed list of Python standard-library modules,
# gathered at run time (about 0.7 MB); `--text FILE` uses any text file instead. Characters
# outside printable ASCII become `?`. Next-character prediction, cross-entropy in bits per
# character (bpc), on a 90/10 split.

# %%
STDLIB_MODULES = ["argparse", "bisect", "calendar", "collections", "contextlib", "csv",
                  "dataclasses", "datetime", "decimal", "difflib", "email.message", "enum",
                  "fractions", "functools", "heapq", "inspect", "ipaddress", "itertools", "json",
                  "logging", "pathlib", "pickle", "pprint", "random", "re", "shutil",
                  "statistics", "string", "subprocess", "tarfile", "textwrap", "threading",
                  "typing", "unittest", "urllib.parse", "zipfile"]


def stdlib_docstrings():
    """The docstrings of STDLIB_MODULES and their public members, joined (deterministic)."""
    parts = []
    with warnings.catch_warnings():  # some modules warn about their deprecated members
        warnings.simplefilter("ignore")
        for name in STDLIB_MODULES:
            module = importlib.import_module(name)
            parts.append(module.__doc__ or "")
            for attribute in sorted(dir(module)):
                member = getattr(module, attribute, None)
                doc = getattr(member, "__doc__", None)
                if not attribute.startswith("_") and isinstance(doc, str) and \
                        getattr(member, "__module__", None) == module.__name__:
                    parts.append(doc)
    return "\n\n".join(parts)


def encode_text(text):
    """Characters -> ids over printable ASCII (95 symbols, newline and '?' for the rest)."""
    alphabet = "\n" + "".join(chr(c) for c in range(32, 127))
    index = {c: i for i, c in enumerate(alphabet)}
    unknown = index["?"]
    return torch.tensor([index.get(c, unknown) for c in text], dtype=torch.long), alphabet


def train_language_model(run):
    """Train one character model; returns validation bits per character and the weights."""
    started = time.perf_counter()
    device = torch.device(run["device"])
    data = run["data"].to(device)
    split = int(0.9 * len(data))
    train, valid = data[:split], data[split:]
    generator = torch.Generator().manual_seed(run["seed"])
    all_starts = torch.randint(len(train) - run["T"] - 1, (run["steps"], 32),
                               generator=generator).to(device)  # drawn once, [steps, 32]
    helpers.seed_everything(run["seed"])
    model = AllocatedTransformer(run["layers"], run["width"], run["T"],
                                 vocab=run["vocab"]).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=run["lr"], weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: helpers.warmup_cosine(s, run["steps"]))
    losses = helpers.LossLog(run["steps"], device, run["name"], run["lr"])
    for step in range(run["steps"]):
        loss = language_model_loss(model, train, all_starts[step], run["T"])
        losses.record(step, loss)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        schedule.step()
    return {**run, "data": None, "valid_bpc": evaluate_bpc(model, valid, run["T"]),
            "state": {k: v.cpu() for k, v in model.state_dict().items()},
            "seconds": time.perf_counter() - started}


def language_model_loss(model, text, starts, seq_len):
    """Mean cross-entropy (nats) of next-character prediction on windows starting at `starts`."""
    offsets = starts[:, None].to(text.device) + torch.arange(seq_len + 1, device=text.device)
    windows = text[offsets]                                                   # [B, T + 1]
    logits = model(windows[:, :-1])                                           # [B, T, vocab]
    return nn.functional.cross_entropy(logits.flatten(0, 1), windows[:, 1:].flatten())


@torch.no_grad()
def evaluate_bpc(model, text, seq_len, n_windows=256):
    """Bits per character on n_windows evenly spaced windows of the held-out text."""
    model.eval()
    starts = torch.linspace(0, len(text) - seq_len - 2, n_windows).long()
    loss = language_model_loss(model, text, starts, seq_len)
    model.train()
    return float(loss / math.log(2))


# %% [markdown]
# ## c. Which layers tolerate a lower rank?
#
# Replace one head at a time by its rank-$r$ version — file 05's `truncate_qk` on that head's
# $W_Q^\top W_K$, padded back to $d$ rows with zeros, keeping the $1/\sqrt d$ scale — and record
# the increase in validation bpc. Paper B's hypothesis (not shown in its Corollary 5.1, say the
# reviewers): later layers tolerate smaller ranks.

# %%
@torch.no_grad()
def truncation_by_layer(run, ranks):
    """{layer: {rank: mean bpc increase over the layer's heads}} for a trained language model."""
    model = AllocatedTransformer(run["layers"], run["width"], run["T"], vocab=run["vocab"])
    model.load_state_dict(run["state"])
    valid = run["data_valid"]
    base = evaluate_bpc(model, valid, run["T"])
    table = {}
    for index, block in enumerate(model.blocks):
        for rank in [r for r in ranks if r < block.head_dim]:
            increases = []
            for head in range(block.n_heads):
                saved_q, saved_k = block.W_Q[head].clone(), block.W_K[head].clone()
                W_Q, W_K = saturation.truncate_qk(saved_q, saved_k, rank)      # [r, E] each
                block.W_Q[head].zero_()[:rank] = W_Q
                block.W_K[head].zero_()[:rank] = W_K
                increases.append(evaluate_bpc(model, valid, run["T"]) - base)
                block.W_Q[head].copy_(saved_q), block.W_K[head].copy_(saved_k)
            table.setdefault(str(index + 1), {})[str(rank)] = sum(increases) / len(increases)
    return {"base_bpc": base, "increase": table}


# %% [markdown]
# ## Running it

# %%
PRESETS = {
    "quick": dict(budget=16, fixed_heads=[1, 4, 16], ab_budget=24, layers_n=2, seeds=1,
                  steps=150, lm_steps=60, n_train=1000, n_valid=300, text_chars=60000),
    "default": dict(budget=32, fixed_heads=[1, 2, 4, 8, 16, 32], ab_budget=48, layers_n=3,
                    seeds=2, steps=800, lm_steps=1500, n_train=6000, n_valid=1000,
                    text_chars=400000),
    "full": dict(budget=64, fixed_heads=[1, 2, 4, 8, 16, 32, 64], ab_budget=96, layers_n=4,
                 seeds=3, steps=6000, lm_steps=3000, n_train=20000, n_valid=2000,
                 text_chars=2000000),
}


def build_parser():
    """Every flag of this file, with its help (python 06_allocation.py --help)."""
    parser = helpers.make_parser(__doc__.split("\n")[0])
    parser.add_argument("--budget", type=helpers.positive_int,
                        help="heads * head_dim of the extraction layer in part a")
    parser.add_argument("--fixed-heads", type=helpers.int_list,
                        help="head counts H of part a; each must divide --budget")
    parser.add_argument("--ab-budget", type=helpers.positive_int,
                        help="attention budget (sum of heads * head_dim) per model in part b")
    parser.add_argument("--layers-n", type=helpers.positive_int,
                        help="number of layers of the part b models (at least 2)")
    parser.add_argument("--D", type=helpers.positive_int, default=4,
                        help="tokens the first layer must extract, for allocate() (default: 4)")
    parser.add_argument("--T", type=helpers.positive_int, default=16,
                        help="sequence length of the synthetic tasks and text windows "
                             "(default: 16)")
    parser.add_argument("--width", type=helpers.positive_int, default=32,
                        help="model width E (default: 32)")
    parser.add_argument("--lm-steps", type=helpers.positive_int, help="steps per text run")
    parser.add_argument("--text", type=Path, help="a text file for part b (default: Python's "
                                                   "standard-library docstrings)")
    parser.add_argument("--text-chars", type=helpers.positive_int,
                        help="characters of text used at most")
    helpers.add_training_flags(parser)
    return parser


def config(argv=None):
    """Parse the flags, fill the unset ones from the chosen preset, and check before any
    work that the run they describe can finish with finite numbers (else one line, exit 2)."""
    parser = build_parser()
    args = helpers.config(parser, PRESETS, argv)
    if args.T < 4:
        helpers.refuse(parser, "--T", f"the task of part a reads the tokens 1, 2 and 3 places "
                       f"before the last, got T = {args.T}", smallest=4)
    divisors = [h for h in range(1, args.budget + 1) if args.budget % h == 0]
    if len(divisors) < 3:
        helpers.refuse(parser, "--budget", f"part a compares at least three head counts that "
                       f"divide it; {args.budget} has {len(divisors)}", smallest=4)
    suggestion = ",".join(map(str, divisors[:3]))
    bad = [h for h in args.fixed_heads if args.budget % h]
    if bad:
        helpers.refuse(parser, "--fixed-heads", f"{bad} do not divide --budget {args.budget}",
                       smallest=suggestion)
    if len(set(args.fixed_heads)) < 3:
        helpers.refuse(parser, "--fixed-heads", "give at least three different head counts to "
                       "fit E(H)", smallest=suggestion)
    if args.layers_n < 2:
        helpers.refuse(parser, "--layers-n", "at least 2 layers to compare allocations",
                       smallest=2)
    if args.ab_budget // args.layers_n // args.D < 2:  # the uniform allocation's head dimension
        helpers.refuse(parser, "--ab-budget", f"the uniform allocation of part b (D = {args.D} "
                       f"heads in each of {args.layers_n} layers) needs head dimension >= 2 for "
                       f"part c's rank-1 truncation, got {args.ab_budget}",
                       smallest=2 * args.D * args.layers_n)
    try:
        allocate(args.ab_budget, args.layers_n, args.D, args.T)
    except ValueError as error:
        helpers.refuse(parser, "--ab-budget", str(error))
    if args.text_chars < 20 * args.T:
        helpers.refuse(parser, "--text-chars", f"the 90/10 split needs at least 20 T characters "
                       f"for windows of T = {args.T} in both parts", smallest=20 * args.T)
    if args.text is not None and (not args.text.is_file() or
                                  len(args.text.read_text(errors="replace")) < 20 * args.T):
        helpers.refuse(parser, "--text", f"need a text file of at least {20 * args.T} "
                       f"characters, got {args.text}")
    return args


def allocations(args):
    """The three compared allocations at (nearly) equal budget: uniform, front, back."""
    front = allocate(args.ab_budget, args.layers_n, args.D, args.T)
    per_layer = args.ab_budget // args.layers_n
    uniform = [(args.D, max(1, per_layer // args.D))] * args.layers_n       # D heads everywhere
    return {"uniform": uniform, "front-loaded": front, "back-loaded": front[::-1]}


def main(args):
    """Compute parts a–e and return every number (JSON-ready)."""
    helpers.seed_everything(args.seed)
    base = dict(T=args.T, dim=8, width=args.width, lr=3e-3, steps=args.steps,
                n_train=args.n_train, n_valid=args.n_valid, data_seed=args.seed,
                device=args.device)
    runs = [dict(base, task="lags", lags=[1, 2, 3], layers=[(H, args.budget // H)],
                 seed=args.seed + s, name=f"a: H={H} d={args.budget // H}")
            for H in args.fixed_heads for s in range(args.seeds)]
    compared = allocations(args)
    runs += [dict(base, task="aggregate", layers=layers, seed=args.seed + s,
                  name=f"b: {name}", allocation=name)
             for name, layers in compared.items() for s in range(args.seeds)]
    results = helpers.run_sweep(
        runs, args.workers, train_config,
        lambda r: f"{r['name']:<22} seed={r['seed']}  NMSE {r['valid_nmse']:.3f}")

    fixed = {str(H): min(r["valid_nmse"] for r in results
                         if r["task"] == "lags" and r["layers"][0][0] == H)
             for H in args.fixed_heads}
    fit = fit_tradeoff(args.fixed_heads, list(fixed.values()), args.budget)
    synthetic = {name: [r["valid_nmse"] for r in results if r.get("allocation") == name]
                 for name in compared}

    text = args.text.read_text(errors="replace") if args.text else stdlib_docstrings()
    data, alphabet = encode_text(text[: args.text_chars])
    lm_runs = [dict(T=args.T, width=args.width, lr=3e-3, steps=args.lm_steps, layers=layers,
                    vocab=len(alphabet), data=data, seed=args.seed + s, device=args.device,
                    name=f"text: {name}", allocation=name)
               for name, layers in compared.items() for s in range(args.seeds)]
    lm_results = helpers.run_sweep(
        lm_runs, args.workers, train_language_model,
        lambda r: f"{r['name']:<22} seed={r['seed']}  bpc {r['valid_bpc']:.3f}")
    text_bpc = {name: [r["valid_bpc"] for r in lm_results if r["allocation"] == name]
                for name in compared}
    uniform_run = min((r for r in lm_results if r["allocation"] == "uniform"),
                      key=lambda r: r["valid_bpc"])
    uniform_run["data_valid"] = data[int(0.9 * len(data)):]
    truncation = truncation_by_layer(uniform_run, ranks=[1, 2, 4, 8])
    return {
        "fixed_budget": {"budget": args.budget, "min_nmse": fixed, "fit": fit,
                         "best_H": int(min(fixed, key=fixed.get))},
        "allocations": {name: {"layers": [list(layer) for layer in layers],
                               "budget": attention_budget(layers)}
                        for name, layers in compared.items()},
        "synthetic_nmse": synthetic, "text_bpc": text_bpc,
        "text": {"source": str(args.text) if args.text else "stdlib docstrings",
                 "characters": len(data)},
        "truncation": truncation,
        "allocate_tables": {f"budget={b} layers={n} D={D} T={T}": allocate(b, n, D, T)
                            for b, n, D, T in [(48, 3, 4, 32), (96, 4, 4, 64),
                                               (256, 6, 8, 512)]},
    }


# %% [markdown]
# ## e. What a practitioner can take away
#
# `closing_table` turns this run's numbers into the rules, each with the figure that supports it
# and how strongly — including where our results disagree with paper B.

# %%
def mean_and_spread(values):
    """Mean and population std of a list of seed results."""
    values = torch.tensor(values, dtype=torch.float64)
    return float(values.mean()), float(values.std(unbiased=False))


def verdict(better, worse, spread):
    """'supported' when `better` beats `worse` by more than the seed spread."""
    if better < worse - spread:
        return "supported"
    return "no clear difference (within the seed spread)" if better < worse + spread \
        else "not supported by this run"


def closing_table(result, earlier):
    """Rules, their evidence and strength, from this run and the JSON of files 02 and 05."""
    fixed = result["fixed_budget"]
    errors = {int(h): e for h, e in fixed["min_nmse"].items()}
    few = [e for h, e in errors.items() if h < 3]
    enough = [e for h, e in errors.items() if h >= 3]
    rows = []
    if earlier.get("02"):
        ratios = earlier["02"]["knee"]["ratio"].values()
        rows.append({"rule": "Give the extraction layer at least one head per token it must "
                             "extract (h >= D)",
                     "evidence": f"02: min NMSE falls {min(ratios):.0f}-{max(ratios):.0f}x "
                                 f"at h = D; 06a: H < 3 gives {min(few):.3f}-{max(few):.3f}, "
                                 f"H >= 3 gives {min(enough):.3f}-{max(enough):.3f} (M = 3 lags)",
                     "strength": "strong (02, several T and D); 06a agrees"
                     if max(enough) < min(few) else "strong in 02; 06a disagrees"})
    best = min(errors.values())
    few_heads_side = errors[min(errors)] > 1.5 * best                      # H = 1, d = budget
    small_dim_side = errors[max(errors)] > 1.5 * best                      # H = budget, d = 1
    rows.append({"rule": "At a fixed budget H*d the best H is interior: too few heads collide, "
                         "too small a head dimension lacks rank (paper B, Eq. 3)",
                 "evidence": "06a: NMSE " + ", ".join(f"H={h}: {e:.3f}" for h, e in
                                                       errors.items())
                             + f"; fitted H* = {fixed['fit']['H_star']:.1f}",
                 "strength": {(True, True): "supported",
                              (True, False): "half: too few heads hurt, small head dimensions "
                                             "did not",
                              (False, True): "half: small head dimensions hurt, few heads did "
                                             "not",
                              (False, False): "not supported by this run"}[
                     (few_heads_side, small_dim_side)]})
    synthetic = {k: mean_and_spread(v) for k, v in result["synthetic_nmse"].items()}
    text = {k: mean_and_spread(v) for k, v in result["text_bpc"].items()}
    verdicts = {name: verdict(table["front-loaded"][0], table["uniform"][0],
                              table["front-loaded"][1] + table["uniform"][1])
                for name, table in (("synthetic", synthetic), ("text", text))}
    rows.append({"rule": "Front-load: later layers can use smaller head dimensions",
                 "evidence": "06b: synthetic NMSE " + ", ".join(
                     f"{k} {m:.3f}+-{s:.3f}" for k, (m, s) in synthetic.items())
                     + "; text bpc " + ", ".join(f"{k} {m:.3f}+-{s:.3f}"
                                                 for k, (m, s) in text.items()),
                 "strength": "; ".join(f"{name}: {v}" for name, v in verdicts.items())})
    increase = result["truncation"]["increase"]
    first, last = list(increase)[0], list(increase)[-1]
    rows.append({"rule": "Late-layer heads tolerate a lower rank (SVD compression)",
                 "evidence": f"06c: rank-1 truncation of one head costs "
                             f"{increase[first]['1']:+.3f} bpc in layer {first}, "
                             f"{increase[last]['1']:+.3f} in layer {last}",
                 "strength": "supported" if increase[last]["1"] < increase[first]["1"]
                 else "not supported by this run: the late layers lose more"})
    if earlier.get("05", {}).get("model_side"):
        side = earlier["05"]["model_side"]
        B = next(iter(side["gain"]["capped"]))
        capped, free = side["gain"]["capped"][B], side["gain"]["free"]
        both, shrinks = side["capped_minus_free_change"], side["gain_change"]["capped"][B]
        rows.append({"rule": "Head dimension buys less on long sequences (saturation)",
                     "evidence": f"05b (a target that stays hard): gain E({side['smallest_head_dim']})"
                                 f" - E({side['rank']}) with logits capped at B = {B}: "
                                 + " -> ".join(f"{g:.2f}" for g in capped.values())
                                 + "; free logits: " + " -> ".join(f"{g:.2f}" for g in free.values())
                                 + f" as L grows; capped minus free change {both['mean']:+.2f} "
                                   f"[{both['low']:+.2f}, {both['high']:+.2f}] (95% t)",
                     "strength": "supported when logits are bounded (one synthetic target); "
                                 "free logits keep the gain"
                     if shrinks["verdict"] == "shrinks" and both["high"] < 0
                     else "not supported by this run"})
    return rows


# %% [markdown]
# ## Figures and the printed summary

# %%
def plot_fixed_budget(result):
    """Part a: min validation NMSE against H at fixed H*d, the fit and H*."""
    fixed = result["fixed_budget"]
    heads = [int(h) for h in fixed["min_nmse"]]
    figure, axis = plt.subplots(figsize=(5.5, 3.8))
    axis.loglog(heads, list(fixed["min_nmse"].values()), "o-", label="measured (min over seeds)")
    fit = fixed["fit"]
    grid = torch.logspace(0, math.log10(max(heads)), 100)
    curve = fit["A"] * grid ** -fit["a"] + fit["B"] * (fixed["budget"] / grid) ** -fit["b"]
    axis.loglog(grid, curve, "k--", label=f"fit A H^-{fit['a']:.2f} + B d^-{fit['b']:.2f}")
    axis.axvline(fit["H_star"], color="tab:red", ls=":", label=f"fitted H* = {fit['H_star']:.1f}")
    helpers.label_log_axis(axis, heads)
    axis.set_xlabel(f"heads H (head dim = {fixed['budget']} / H)"), axis.set_ylabel("NMSE")
    axis.set_title("One extraction layer at a fixed budget"), axis.legend(fontsize=7)
    return figure


def plot_allocations(result):
    """Part b: mean and std over seeds per allocation, synthetic and text."""
    figure, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for axis, key, label in [(axes[0], "synthetic_nmse", "validation NMSE (extract, then "
                                                         "aggregate)"),
                             (axes[1], "text_bpc", "validation bits per character")]:
        names = list(result[key])
        values = [torch.tensor(result[key][n]) for n in names]
        axis.bar(names, [float(v.mean()) for v in values],
                 yerr=[float(v.std(unbiased=False)) for v in values], capsize=4)
        for i, v in enumerate(values):
            axis.plot([i] * len(v), v.tolist(), "k.", ms=4)
        axis.set_ylabel(label)
        low = min(float(v.min()) for v in values)
        high = max(float(v.max()) for v in values)
        axis.set_ylim(low - 0.2 * (high - low + 1e-9), high + 0.2 * (high - low + 1e-9))
    figure.suptitle("Equal attention budget, different allocations: " + "; ".join(
        f"{n} {entry['layers']}" for n, entry in result["allocations"].items()), fontsize=8)
    figure.tight_layout()
    return figure


def plot_truncation_by_layer(result):
    """Part c: mean bpc increase when one head is truncated to rank r, per layer."""
    figure, axis = plt.subplots(figsize=(5.5, 3.6))
    for layer, by_rank in result["truncation"]["increase"].items():
        axis.plot([int(r) for r in by_rank], list(by_rank.values()), "o-", label=f"layer {layer}")
    axis.set_xlabel("kept rank r of one head's W_Q^T W_K"), axis.set_ylabel("bpc increase")
    axis.set_title("Truncating one head at a time (uniform model, text)")
    axis.legend(fontsize=7)
    return figure


def report(result, rows, args):
    """The printed comparison and the closing table."""
    print(f"device: {args.device}   preset: {args.preset}")
    fixed = result["fixed_budget"]
    print(f"a. fixed budget H*d = {fixed['budget']}: min NMSE " + ", ".join(
        f"H={h}: {e:.3f}" for h, e in fixed["min_nmse"].items())
        + f"; best H = {fixed['best_H']}, fitted H* = {fixed['fit']['H_star']:.1f}")
    print("b. allocations (heads, head_dim) per layer, equal budgets "
          + str({n: e["budget"] for n, e in result["allocations"].items()}))
    for name, entry in result["allocations"].items():
        synthetic = torch.tensor(result["synthetic_nmse"][name])
        text = torch.tensor(result["text_bpc"][name])
        print(f"   {name:<13} {str(entry['layers']):<28} synthetic NMSE "
              f"{float(synthetic.mean()):.3f} +- {float(synthetic.std(unbiased=False)):.3f}   "
              f"text bpc {float(text.mean()):.3f} +- {float(text.std(unbiased=False)):.3f}")
    print(f"   text: {result['text']['source']}, {result['text']['characters']} characters")
    print(f"c. truncation (base bpc {result['truncation']['base_bpc']:.3f}); mean increase per "
          "layer and kept rank:")
    for layer, by_rank in result["truncation"]["increase"].items():
        print(f"   layer {layer}: " + ", ".join(f"r={r}: {v:+.3f}" for r, v in by_rank.items()))
    print("d. allocate():")
    for key in result["allocate_tables"]:
        budget, layers, D, T = (int(part.split("=")[1]) for part in key.split())
        allocate(budget, layers, D, T, width=args.width, verbose=True)
    print("e. rules:")
    for row in rows:
        print(f"   - {row['rule']}\n     evidence: {row['evidence']}\n     strength: "
              f"{row['strength']}")


if __name__ == "__main__":
    args = config()
    started = time.perf_counter()
    result, _ = helpers.run_main(main, args)
    earlier = {stem[:2]: json.loads(path.read_text()) for stem in ("02_multihead_model",
                                                                   "05_saturation")
               if (path := Path(args.out) / "results" / f"{stem}.json").exists()}
    result["rules"] = closing_table(result, earlier)
    report(result, result["rules"], args)
    helpers.save_figure(plot_fixed_budget(result), "06_fixed_budget", args)
    helpers.save_figure(plot_allocations(result), "06_allocations", args)
    helpers.save_figure(plot_truncation_by_layer(result), "06_truncation_by_layer", args)
    path = helpers.save_results("06_allocation", result, args, time.perf_counter() - started)
    print(f"wrote {path} in {time.perf_counter() - started:.1f} s")

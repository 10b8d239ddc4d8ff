# %% [markdown]
# # 07a · The head count on text retrieval (a study of 07)
#
# Paper A (arXiv 2510.06662, §6.2, Table 6) finds on MS MARCO that training accuracy falls with the
# number of candidate passages T for few heads, and hardly from h ≈ 12 on. Does that hold on a
# corpus that needs no download, the standard library's own docstrings, with lesson 07's protocol
# and study 07c's fixed width? And does paper A's law Err(h, T) fit our errors as it fits Table 6?
# The encoder's blocks are lesson 06's (logits scaled by 1/√d, nothing capping them).
# `python further/07a_text_retrieval.py` (1 min 9 s on 2 cores)

# %%
"""07a · Text retrieval among hard negatives: the head count beside paper A's Table 6."""
import importlib
import inspect
import json
import math
import re
import sys
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import scipy.optimize
import torch
from torch import nn

# the shared files from the repository root (the script's command) or from notebooks/ (its notebook)
sys.path[:0] = [str(Path.cwd()), str(Path.cwd().parent)]
import helpers
import plumbing
from engine import lesson07 as engine                # lesson 07's sweeps' tables and figure
from harness import Setting, int_list, positive_float, positive_int

images = helpers.load_concept("07_real_data")       # its sweeps' shapes, settings, gains
fixed_width = helpers.load_concept("07c_fixed_width")  # the fixed-width sweep and its part
allocation = helpers.load_concept("06_allocation")  # its pre-LN Block

# %% [markdown]
# ## Settings
#
# The models' sizes are file 07's rows (the same two sweeps), its learning rate, and this file's
# own rows; each row's default, `--quick` and `--full` values side by side (`...`: as the
# default).

# %%
SETTINGS = {
    **{name: fixed_width.SETTINGS[name] for name in ("heads", "head_dim", "width", "batch_size",
                                                     "seeds")},
    "lr": Setting(images.LR, ..., ..., positive_float,
                  "AdamW's peak learning rate (warm-up, then cosine to zero)"),
    "text_T": Setting([8, 16, 32], [4, 8], [8, 16, 32, 64], int_list,
                      "passages per query (the positive and T - 1 hard negatives)"),
    "text_steps": Setting(360, 30, 1000, positive_int, "training steps per run"),
    "bootstrap": Setting(1000, 20, ..., positive_int,
                         "law: resamples of the seeds behind the fitted law's intervals"),
    "replay": Setting(None, ..., ..., Path, "law: fit the law to this committed results "
                      "file's text part instead of training (its tables and figure drawn "
                      "again)"),
}
PARTS = {"text": (), "law": ("text",)}  # the law is fitted to the text part's numbers
MAX_TEXT_T = 256  # passages per query, well below the corpus's ~1,200


def refusals(args):
    """What config() refuses before any work: lists of fewer than 2 or more than MAX_TEXT_T
    passages, a replay that would fit no law, and lesson 07's checks of the two sweeps."""
    return [("--text-T", 2 <= min(args.text_T) <= max(args.text_T) <= MAX_TEXT_T,
             f"each from 2 (a choice) to {MAX_TEXT_T}", 2),
            ("--replay", not args.replay or "law" in args.parts, "fits the law to a committed "
             "run; --parts text alone would write nothing new", None),
            *engine.sweep_refusals(args, fixed_width=True)]


def config(argv=None):
    """Parse the flags (the table above), and check before any work that the run they describe
    can finish (else one line naming the flag, exit code 2)."""
    return plumbing.config(SETTINGS, argv, __doc__.split("\n")[0], PARTS, refusals=refusals,
                           full="5 seeds, T up to 64, 1,000 steps: 33 minutes")


def law_source(args):
    """The file-name suffix of a fit to a committed run: _fit_to_full for --replay
    results/07a_text_retrieval_full.json; none for a run that trains its own models."""
    if not args.replay:
        return ""
    return "_fit_to_" + (Path(args.replay).stem.removeprefix("07a_text_retrieval").strip("_")
                         or "default")


# %%
if __name__ == "__main__":
    args = config()
    run = plumbing.Run("07a_text_retrieval", args, PARTS, law_source(args), ("replay",))

# %% [markdown]
# ## Retrieval among hard negatives, from the standard library's docstrings
#
# **The paper's experiment** [paper]. MS MARCO passage retrieval (Table 6): each query comes with
# its positive passage and $T - 1$ mined hard negatives; a 2-layer encoder with head dimension
# $d = 32$ reads frozen BERT embeddings projected to $E = 32h$ and scores every passage. Training
# accuracy falls with $T$ for few heads ($h = 1$: 0.597 at $T = 8$, 0.154 at $T = 64$) and hardly
# at all near $h \approx 12$.
#
# **Our corpus** [ours throughout]. A **query** is a public function or class of a fixed list of
# standard-library modules, written as its module and name in words (`os.path.join` → "os path
# join"); its **passage** is its own docstring. The corpus follows the Python version, as 06's
# does. Each text becomes one frozen token: TF-IDF, a truncated SVD to 64 dimensions, unit length.
# A query's negatives are the passages of highest TF-IDF cosine to it. Held-out queries are new;
# their passages were seen, as other queries' negatives.
#
# **Our model.** [query, $p_1 \dots p_T$] plus a role embedding (query or passage; no positions),
# two `Block`s (lesson 06's block), a score per passage, and the cross-entropy over the $T$
# scores. Both of file 07's sweeps (head dimension fixed; width fixed), seeds paired across $h$ and
# $T$, beside chance $1/T$ and the frozen tokens' own cosine.
#
# **What would count against the paper**: no paired drop with $T$ at small $h$, or as large a
# drop at the largest $h$; and, against the head count itself, a rise with $h$ that the
# fixed-width sweep does not repeat.

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
                 4: [0.956, 0.900, 0.793, 0.580], 6: [0.992, 0.977, 0.937, 0.814],  # MS MARCO,
                 8: [0.998, 0.995, 0.983, 0.932], 12: [1.000, 0.999, 0.998, 0.991],    # T = 8 ...
                 16: [1.000, 1.000, 0.999, 0.996]}                                     # ... 64
PAPER_T = [8, 16, 32, 64]  # the columns of Table 6


def split_words(name):
    """'os.path.TextWrapper' -> 'os path text wrapper': dots, underscores and camelCase."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return " ".join(word.lower() for word in re.split(r"[._\s]+", spaced) if word)


def stdlib_pairs(modules=STDLIB_MODULES):
    """live_pairs(modules), read in a fresh interpreter: a library that replaced a member (pytest
    replaces threading.excepthook) would otherwise change the corpus."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import helpers; print(json.dumps("
            "helpers.load_concept('07a_text_retrieval').live_pairs(sys.argv[2:])))")
    printed = plumbing.fresh_interpreter(code, str(helpers.ROOT), *modules)
    return [tuple(pair) for pair in json.loads(printed)]


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


CORPUS = {}   # text_corpus()'s one build; a sweep's workers receive it with train_ranker


def text_corpus():
    """Built once: {"queries", "passages": frozen tokens [n, 64]; "order" [n, n - 1]: passages by
    TF-IDF cosine to each query (equal cosines in a seeded random order), its positive left
    out; "train", "valid": query indices; "characters"}. Query i's positive is passage i."""
    if not CORPUS:
        CORPUS.update(build_text_corpus())
    return CORPUS


def build_text_corpus():
    """text_corpus()'s content, built from the standard library's docstrings."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer
    queries, passages = zip(*stdlib_pairs())
    tfidf = TfidfVectorizer(sublinear_tf=True).fit(passages + queries)
    P, Q = tfidf.transform(passages), tfidf.transform(queries)              # unit rows
    svd = TruncatedSVD(TOKEN_DIM, random_state=0).fit(P)

    def frozen(vectors):                    # TF-IDF rows -> unit-length 64-d frozen tokens
        return nn.functional.normalize(torch.tensor(svd.transform(vectors)).float())

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
        self.blocks = nn.ModuleList(allocation.Block(width, n_heads, head_dim)
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

    def score(queries):                     # the model's scores of these queries' lists
        return model(Q[queries].to(device), P[lists[queries]].to(device))  # [B, T]

    def loss_at(step):
        return ranking_loss(score(picks[step]), positive[picks[step]].to(device))

    helpers.fit(model, loss_at, steps=run["steps"], lr=run["lr"],
                weight_decay=images.WEIGHT_DECAY,
                name=f"T={run['T']} h={run['heads']} E={run['width']} seed={run['seed']}")
    with torch.no_grad():
        (train, train_mrr), (valid, valid_mrr) = (ranking(score(corpus[split]).cpu(), positive[
            corpus[split]]) for split in ("train", "valid"))
    return {**run, **dict(zip(TEXT_METRICS, (train, train_mrr, valid, valid_mrr))),
            "parameters": helpers.count_parameters(model), "seconds": time.perf_counter() - started}


def run_text(args):
    """Both sweeps (a shape in both trained once per T and seed): tables, gains, their paired
    difference, the drop from the shortest to the longest list per h, chance, frozen cosine."""
    corpus, lengths = text_corpus(), list(dict.fromkeys(args.text_T))  # built here, sent to the workers
    sweeps = {"fixed-head-dim": engine.fixed_head_dim_shapes(args),
              "fixed-width": fixed_width.fixed_width_shapes(args)}
    shapes = sorted({shape + (h,) for by_h in sweeps.values() for h, shape in by_h.items()})
    runs = [dict(T=T, heads=h, width=width, head_dim=head_dim, seed=args.seed + s,
                 steps=args.text_steps, batch_size=args.batch_size, lr=args.lr,
                 device=args.device) for T in lengths for width, head_dim, h in shapes
            for s in range(args.seeds)]
    results = plumbing.run_sweep(runs, args.workers, train_ranker,
                                 group=lambda r: f"text T={r['T']}",
                                 cost=lambda r: r["T"] * r["width"])
    short, long = min(lengths), max(lengths)
    text = {"data": "stdlib docstrings", "T": lengths, "queries": len(corpus["queries"]),
            "train_queries": len(corpus["train"]), "characters": corpus["characters"],
            "reference": {split: {str(T): {"chance": 1 / T, "frozen cosine": frozen_cosine(
                corpus, T, split)} for T in lengths} for split in ("train", "valid")},
            "accuracy": {}, "train_gain_with_heads": {}, "train_drop_with_T": {},
            "run_seconds": sum(r["seconds"] for r in results)}
    for sweep, by_h in sweeps.items():
        rows = {(T, h): engine.per_seed(results, TEXT_METRICS, T=T, heads=h, width=E)
                for T in lengths for h, (E, _) in by_h.items()}
        text["accuracy"][sweep] = engine.tabulate(rows, by_h)
        text["train_gain_with_heads"][sweep] = images.gains_with_heads(rows, min(by_h), max(by_h))
        text["train_drop_with_T"][sweep] = {} if short == long else {
            str(h): {"from": short, "to": long, **helpers.paired_difference(
                [a - b for a, b in zip(rows[(short, h)]["train"], rows[(long, h)]["train"])],
                below=f"T={long} fits better", above="falls with T")} for h in by_h}
    text["gain_difference"] = fixed_width.widths_part(text["train_gain_with_heads"])
    text["valid_gain_with_heads"] = held_out_gains(text["accuracy"])
    return {"text": text}


def held_out_gains(accuracy):
    """Per sweep and T, held-out accuracy at the most heads minus at the fewest, seed by seed
    (paired), with its interval: accuracy[sweep][T][h]["valid"]["seeds"]."""
    gains = {}
    for sweep, by_T in accuracy.items():
        gains[sweep] = {}
        for T, by_h in by_T.items():
            few, many = min(by_h, key=int), max(by_h, key=int)
            gains[sweep][T] = {"from": int(few), "to": int(many), **helpers.paired_difference(
                [b - a for a, b in zip(by_h[few]["valid"]["seeds"], by_h[many]["valid"]["seeds"])],
                below=f"h={few} better", above=f"h={many} better")}
    return gains


def report_text(result, args):
    """Both sweeps' tables and drops with T, the gains' difference, the references, Table 6."""
    text = result["text"]
    print(f"text: {text['queries']} queries, {text['train_queries']} trained on, Python "
          f"{sys.version.split()[0]}'s standard library ({text['characters']:,} characters)")
    for sweep in text["accuracy"]:
        engine.report_sweep(text, sweep, args.seeds, plus="query", trained_on="queries")
        for h, drop in text["train_drop_with_T"][sweep].items():
            print("   " + helpers.describe_difference(
                f"h = {h}: training accuracy at T = {drop['from']} minus T = {drop['to']}", drop))
    engine.report_gain_difference(text["gain_difference"])
    for split, by_T in text["reference"].items():
        print(f"   {split}: " + "  ".join(f"T = {T}: chance {r['chance']:.3f}, frozen cosine "
                                          f"{r['frozen cosine']:.3f}" for T, r in by_T.items()))
    print("[paper: Table 6, MS MARCO training accuracy (mean), d = 32, E = 32h; T = 8, 16, 32, "
          "64]  " + "  ".join(f"h={h}: " + " ".join(f"{a:.3f}" for a in row)
                              for h, row in PAPER_TABLE_6.items()))


def plot_text(result, args):
    """Accuracy against h per T, both sweeps, chance and the frozen cosine dashed."""
    return engine.plot_sweeps(result["text"]["accuracy"], "training queries", "query",
                              dashed=result["text"]["reference"])


# %%
if __name__ == "__main__" and "text" in args.parts:
    if args.replay:
        text = plumbing.replay(args.replay)
    else:
        text = run.record(run_text(args))
    if not args.replay:                      # a replay's figure is the committed one
        run.figure(plot_text(text, args), "07a_text_retrieval")
    report_text(text, args)


# %% [markdown]
# Held-out accuracy at the most heads minus at the fewest, per sweep and $T$, seed by seed with its
# interval (`held_out_gains`): a new run stores it, and a replay computes it for the committed run
# it reads.

# %%
def report_held_out(gains):
    """One line per sweep and T: held_out_gains' paired difference and its interval."""
    for sweep, by_T in gains.items():
        for T, gain in by_T.items():
            print("   " + helpers.describe_difference(
                f"{sweep}, T = {T}: held-out accuracy, h = {gain['to']} minus h = {gain['from']}",
                gain))


if __name__ == "__main__" and "text" in args.parts:
    if "valid_gain_with_heads" not in text["text"]:
        text["text"]["valid_gain_with_heads"] = run.record({"valid_gain_with_heads": held_out_gains(
            text["text"]["accuracy"])})["valid_gain_with_heads"]
    report_held_out(text["text"]["valid_gain_with_heads"])


# %% [markdown]
# ## The law paper A fits to Table 6
#
# Paper A fits its training error, $\mathrm{Err}(h, T) = 1 - $ training accuracy, by
#
# $$\log \mathrm{Err}(h, T) \approx \log c + \beta \log T + \alpha\, \frac{h}{T^{\delta}}$$
#
# "in log scale under MAE", leaving out h = 1, 12, 14 and 16 as outliers, and finds
# **δ = 0.25, α = −1.40** [paper]. The last term is the heads' part: below the intrinsic
# dimension, −log Err grows like $h / T^\delta$, which the paper reads as the order of its
# Theorem 2(2) at a fixed parameter count.
#
# **How we fit** [ours: the paper gives no procedure beyond "log scale, MAE"]. For a fixed δ the
# law is linear in $(\log c, \beta, \alpha)$, and the least-absolute-deviations fit of a linear
# model is a linear programme (`scipy.optimize.linprog`); δ is then chosen on a grid and refined
# (`scipy.optimize.minimize_scalar`). The same fit is made three times:
#
# 1. on **the paper's own Table 6** (its means; h = 2, 4, 6, 8, the rows it kept): a check of the
#    method — it should come close to δ = 0.25 and α = −1.40;
# 2. on **our fixed-head-dim sweep** (the paper's protocol), every h;
# 3. on the same **without h = 1**, as the paper left its h = 1 out.
#
# Our error is one minus the mean training accuracy over seeds. The intervals are the 2.5 and
# 97.5 % points of the fit over `bootstrap` resamples of the seeds (one draw of seed indices for
# every cell, as the seeds are paired across h and T): they measure how the fit moves with the
# seeds, not how well the law fits, so the MAE and the residuals are read beside them. A point
# with an error of 0 has no logarithm, and is left out (the paper's h = 12 and 16 rows round to
# 1.000).
#
# **What would count against the law on our data**: residuals with a pattern (a row of h it
# cannot follow), or an α of the other sign (more heads, more error).

# %%
PAPER_LAW = {"alpha": -1.40, "delta": 0.25}   # paper A's fit of Table 6
PAPER_KEPT = (2, 4, 6, 8)                     # Table 6's rows it kept (h = 1, 12, 14, 16 out)
DELTA_GRID = [step / 10 for step in range(-10, 21)]  # the first look for delta: -1, ..., 2
MIN_POINTS = 5                                # a 4-parameter law needs at least 5 points
LAW_SWEEP = "fixed-head-dim"                  # the paper's protocol: d fixed, E = d h


def l1_fit(features, target):
    """(theta, mean |features @ theta - target|) minimising the sum of absolute residuals: the
    linear programme min sum(u) subject to -u <= features @ theta - target <= u."""
    n, p = features.shape
    cost = np.r_[np.zeros(p), np.ones(n)]                                  # sum of u
    bounds_matrix = np.block([[features, -np.eye(n)], [-features, -np.eye(n)]])
    solution = scipy.optimize.linprog(cost, A_ub=bounds_matrix, b_ub=np.r_[target, -target],
                                      bounds=[(None, None)] * p + [(0, None)] * n,
                                      method="highs")
    return solution.x[:p], solution.fun / n


def law_terms(h, T, delta):
    """[n, 3]: the law's terms for each point: 1 (for log c), log T (beta), h / T^delta (alpha)."""
    return np.stack([np.ones_like(h), np.log(T), h / T ** delta], axis=1)


def fit_law(h, T, error):
    """The law fitted to points (h, T, Err) on a log scale under MAE:
    {"c", "beta", "alpha", "delta", "mae_log"}."""
    h, T = np.asarray(h, dtype=float), np.asarray(T, dtype=float)
    log_error = np.log(np.asarray(error, dtype=float))

    def mae(delta):                   # the best MAE of log Err at this delta
        return l1_fit(law_terms(h, T, delta), log_error)[1]

    start = min(DELTA_GRID, key=mae)
    step = DELTA_GRID[1] - DELTA_GRID[0]
    refined = scipy.optimize.minimize_scalar(mae, bounds=(start - step, start + step),
                                             method="bounded", options={"xatol": 1e-4})
    delta = float(refined.x) if refined.fun <= mae(start) else start
    (log_c, beta, alpha), error = l1_fit(law_terms(h, T, delta), log_error)
    return {"c": math.exp(log_c), "beta": float(beta), "alpha": float(alpha), "delta": delta,
            "mae_log": float(error)}


def fit_at_delta(h, T, error, delta):
    """The law's other three terms fitted under MAE with delta held at a given value (the
    paper's 0.25): {"c", "beta", "alpha", "delta", "mae_log"}."""
    h, T = np.asarray(h, dtype=float), np.asarray(T, dtype=float)
    (log_c, beta, alpha), error = l1_fit(law_terms(h, T, delta), np.log(np.asarray(error)))
    return {"c": math.exp(log_c), "beta": float(beta), "alpha": float(alpha), "delta": delta,
            "mae_log": float(error)}


def law_at(law, h, T):
    """The fitted Err(h, T) = c T^beta exp(alpha h / T^delta)."""
    return law["c"] * T ** law["beta"] * math.exp(law["alpha"] * h / T ** law["delta"])


def law_points(table, heads):
    """[(h, T, Err per seed)] of a sweep's table {T: {h: entry}}, for the h in `heads`."""
    return [(int(h), int(T), [1 - a for a in entry["train"]["seeds"]])
            for T, by_h in table.items() for h, entry in by_h.items() if int(h) in heads]


def resample_seeds(n_seeds, resamples, seed):
    """[resamples, n_seeds] seed indices drawn with replacement: one draw per resample for
    every cell, as the seeds are paired across h and T."""
    return np.random.default_rng(seed).integers(n_seeds, size=(resamples, n_seeds))


def fit_with_interval(points, resamples, seed):
    """The law fitted to the seed means of `points`, each point's residual, and the 95 %
    percentile intervals of alpha and delta over resamples of the seed indices."""
    def mean_errors(indices):
        return [sum(errors[i] for i in indices) / len(indices) for _, _, errors in points]

    def fit(errors):                  # points with an error of 0 have no logarithm: left out
        kept = [(h, T, e) for (h, T, _), e in zip(points, errors) if e > 0]
        return fit_law(*zip(*kept)) if len(kept) >= MIN_POINTS else None

    if len(points) < MIN_POINTS:
        return None
    n_seeds = len(points[0][2])
    errors = mean_errors(range(n_seeds))
    law = fit(errors)
    if law is None:
        return None
    kept = [(h, T, e) for (h, T, _), e in zip(points, errors) if e > 0]
    law["at_paper_delta"] = fit_at_delta(*zip(*kept), PAPER_LAW["delta"])
    draws = resample_seeds(n_seeds, resamples, seed)
    distinct = {tuple(sorted(indices)) for indices in draws.tolist()}  # 5 seeds: 126 at most
    fitted = {indices: fit(mean_errors(indices)) for indices in distinct}
    fits = [fitted[tuple(sorted(indices))] for indices in draws.tolist()]
    fits = [f for f in fits if f]
    interval = {name: [float(np.percentile([f[name] for f in fits], q)) for q in (2.5, 97.5)]
                for name in ("alpha", "delta")}
    residuals = [{"h": h, "T": T, "error": e, "fitted": law_at(law, h, T),
                  "ratio": e / law_at(law, h, T)} for (h, T, _), e in zip(points, errors) if e > 0]
    return {**law, "ci95": interval, "resamples": len(fits), "points": len(residuals),
            "residuals": residuals}


def run_law(result, args):
    """The law on the paper's Table 6 (the rows it kept), and on our protocol sweep with every h
    and without h = 1, with bootstrap intervals over our seeds."""
    paper_points = [(h, T, 1 - accuracy) for h in PAPER_KEPT
                    for T, accuracy in zip(PAPER_T, PAPER_TABLE_6[h])]
    paper_fit = fit_law(*zip(*paper_points))
    paper_fit["at_paper_delta"] = fit_at_delta(*zip(*paper_points), PAPER_LAW["delta"])
    paper_fit["residuals"] = [{"h": h, "T": T, "error": e, "fitted": law_at(paper_fit, h, T),
                               "ratio": e / law_at(paper_fit, h, T)} for h, T, e in paper_points]
    table = result["text"]["accuracy"][LAW_SWEEP]
    heads = sorted({int(h) for by_h in table.values() for h in by_h})
    ours = {}
    for name, kept in (("every h", heads), ("without h = 1", [h for h in heads if h != 1])):
        fitted = fit_with_interval(law_points(table, kept), args.bootstrap, args.seed)
        if fitted:
            ours[name] = fitted
    return {"law": {"paper": PAPER_LAW, "paper_table_6_refit": paper_fit, "ours": ours,
                    "sweep": LAW_SWEEP}}


def plot_law(result, args):
    """Err against T (log-log), one colour per h: points measured, lines the fitted law; the
    paper's Table 6 (left) and our sweep (right, the fit on every h)."""
    law = result["law"]
    panels = [("paper A, Table 6 (rows kept)", law["paper_table_6_refit"])]
    if "every h" in law["ours"]:
        panels.append(("ours, head dim fixed, every h", law["ours"]["every h"]))
    figure, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 3.9), squeeze=False)
    for axis, (title, fitted) in zip(axes[0], panels):
        heads = sorted({point["h"] for point in fitted["residuals"]})
        for index, h in enumerate(heads):
            mine = [p for p in fitted["residuals"] if p["h"] == h]
            lengths = [p["T"] for p in mine]
            axis.loglog(lengths, [p["error"] for p in mine], "o", color=f"C{index}",
                        label=f"h = {h}")
            smooth = np.geomspace(min(lengths), max(lengths), 50)
            axis.loglog(smooth, [law_at(fitted, h, T) for T in smooth], "-", color=f"C{index}")
        axis.set_title(f"{title}\nalpha = {fitted['alpha']:.2f}, delta = {fitted['delta']:.2f}",
                       fontsize=9)
        axis.set_xlabel("T"), axis.set_ylabel("Err = 1 - training accuracy")
        axis.legend(fontsize=7)
    figure.tight_layout()
    return figure


def report_law(result, args):
    """Each fit's alpha and delta (with its interval) beside the paper's, and the points the law
    misses by the most."""
    law = result["law"]
    print(f"law: log Err = log c + beta log T + alpha h / T^delta, fitted under MAE "
          f"[paper: alpha = {PAPER_LAW['alpha']}, delta = {PAPER_LAW['delta']}]")
    refit = law["paper_table_6_refit"]
    print(f"   the paper's Table 6, h = {', '.join(map(str, PAPER_KEPT))}: alpha "
          f"{refit['alpha']:.2f}, delta {refit['delta']:.3f}, beta {refit['beta']:.2f}, MAE of "
          f"log Err {refit['mae_log']:.3f}; at delta = {PAPER_LAW['delta']}: alpha "
          f"{refit['at_paper_delta']['alpha']:.2f}, MAE {refit['at_paper_delta']['mae_log']:.3f}")
    if not law["ours"]:
        print(f"   ours: fewer than {MIN_POINTS} points with an error above 0; no fit")
    for name, fitted in law["ours"].items():
        (a_low, a_high), (d_low, d_high) = fitted["ci95"]["alpha"], fitted["ci95"]["delta"]
        print(f"   ours, {name} ({fitted['points']} points, {fitted['resamples']} resamples): "
              f"alpha {fitted['alpha']:.2f} [{a_low:.2f}, {a_high:.2f}], delta "
              f"{fitted['delta']:.3f} [{d_low:.3f}, {d_high:.3f}], beta {fitted['beta']:.2f}, "
              f"MAE of log Err {fitted['mae_log']:.3f}; at delta = {PAPER_LAW['delta']}: "
              f"alpha {fitted['at_paper_delta']['alpha']:.2f}, MAE "
              f"{fitted['at_paper_delta']['mae_log']:.3f}")
        worst = sorted(fitted["residuals"], key=lambda p: -abs(math.log(p["ratio"])))[:3]
        print("      missed most: " + ", ".join(
            f"h={p['h']} T={p['T']}: measured {p['error']:.3f}, law {p['fitted']:.3f}"
            for p in worst))


# %%
if __name__ == "__main__" and "law" in args.parts:
    law = run.record(run_law(text, args))
    run.figure(plot_law(law, args), "07a_law")
    report_law(law, args)


# %% [markdown]
# ## Commands and files
#
#     python further/07a_text_retrieval.py          # T = 8, 16, 32, 2 seeds: 1 min 9 s
#     python further/07a_text_retrieval.py --full   # 5 seeds, T up to 64, 1,000 steps: 57 min
#     python further/07a_text_retrieval.py --quick  # seconds; what the tests use
#     python further/07a_text_retrieval.py --replay results/07a_text_retrieval_full.json  # 20 s
#
# The last fits the law to the committed `--full` run (its tables and figure drawn again).
# Output (under `runs/`, which git ignores; `--out .` refreshes the committed files):
# `results/07a_text_retrieval.json` ("text": both sweeps' tables, gains, their difference, the
# drop with T, the references; "law": the fits, their intervals and residuals),
# `figures/07a_text_retrieval.png`, `07a_law.png` (with `--replay`:
# `results/07a_text_retrieval_fit_to_full.json` and `figures/07a_law_fit_to_full.png`, the law
# alone).

# %% [markdown]
# ## What the committed runs show
#
# The corpus (Python 3.11.7): 1,181 public functions and classes of 96 modules whose own
# docstring has at least 40 characters, repeated docstrings dropped (346,456 characters); 945
# queries train, 236 are held out. The reference run,
# `python further/07a_text_retrieval.py --full` (5 paired seeds, 1,000 steps, T up to 64; 57 min
# 11 s with other work on its 2 cores; `results/07a_text_retrieval_full.json`), training top-1
# accuracy, mean over seeds:
#
# | sweep | h | T = 8 | T = 16 | T = 32 | T = 64 | T = 8 − T = 64 (95 % t) |
# |---|---|---|---|---|---|---|
# | head dim 8, width 8h (the paper's protocol) | 1 | 0.592 | 0.477 | 0.373 | 0.204 | **+0.388 [+0.347, +0.428]** |
# | | 2 | 0.880 | 0.814 | 0.759 | 0.564 | **+0.316 [+0.273, +0.359]** |
# | | 4 | 0.951 | 0.941 | 0.931 | 0.918 | +0.034 [−0.002, +0.069] |
# | | 8 | 0.961 | 0.960 | 0.964 | 0.980 | −0.019 [−0.025, −0.012] |
# | width 32 (equal parameters) | 1 | 0.928 | 0.903 | 0.872 | 0.771 | +0.156 [+0.119, +0.194] |
# | | 8 | 0.952 | 0.948 | 0.946 | 0.928 | +0.024 [+0.005, +0.043] |
# | h = 8 − h = 1 at width 32 | | +0.024 [+0.019, +0.030] | +0.044 [+0.033, +0.056] | +0.074 [+0.057, +0.092] | **+0.157 [+0.122, +0.192]** | |
# | the width's part (`gain_difference`) | | +0.345 [+0.311, +0.378] | +0.438 [+0.413, +0.463] | +0.517 [+0.470, +0.565] | +0.619 [+0.583, +0.655] | |
#
# Paper A's Table 6, for its shape only (MS MARCO, d = 32, 28,000 training queries, frozen BERT
# embeddings: another task, head dimension and size, so no number of ours reproduces one of its),
# training accuracy, mean: h = 1 0.597, 0.450, 0.303, 0.154; h = 2 0.771, 0.647, 0.486, 0.286;
# h = 4 0.956, 0.900, 0.793, 0.580; h = 8 0.998, 0.995, 0.983, 0.932 for T = 8, 16, 32, 64.
#
# **The paper's signature, in shape.** With the head dimension fixed, accuracy falls with T for
# h = 1 and 2 (the paired drops exclude 0); from h = 4 on it shows no clear fall (h = 4: +0.034
# [−0.002, +0.069]; h = 8 rises a little). Our transition is at h = 4, the paper's near
# h ≈ 12, on a much smaller task.
#
# **Most of the rise is width.** At equal parameters h = 8 still beats h = 1 at every T, by +0.024
# to +0.157, and the width adds +0.345 to +0.619 (80–93 % of the protocol's mean gain, a ratio of
# means). The part that is left is larger at larger T in its means; that growth is not tested by
# a paired interval. At equal parameters h = 1 falls with T (+0.156) and h = 8 falls too, by
# less (+0.024 [+0.005, +0.043]). Training accuracy at a fixed step count measures expressivity
# and ease of optimisation together.
#
# **Held-out accuracy** (new queries; their passages are seen as negatives) falls with T for every
# h, from 0.33–0.38 at T = 8 to 0.06–0.10 at T = 64, where it is below the frozen tokens' own
# cosine (0.13; chance 1/64). From h = 1 to 8, paired over the 5 seeds (the replay's
# `valid_gain_with_heads`): with the protocol's growing width it rises a little at T = 16, 32 and
# 64 (+0.031 [+0.011, +0.051] at T = 64; at T = 8 +0.036 [−0.002, +0.073], not separated); at a
# fixed width it falls at T = 32 (−0.034 [−0.063, −0.005]) and is not separated at T = 8, 16 and
# 64 (−0.027 [−0.056, +0.001] at T = 64): at a fixed width the effect of more heads shows on
# training accuracy only. The paper, too, calls validation very hard with its mined negatives
# (Appendix B.2).
#
# **The default run** (2 seeds, 360 steps, T ≤ 32; the cell above) shows the same rise with h
# (h = 8 − h = 1 at T = 32: +0.68 [+0.62, +0.74] in the protocol, +0.24 [+0.06, +0.42] at width
# 32); its drops with T are mixed (h = 1 no clear drop, h = 2 and 4 fall, h = 8 not), and are
# read from `--full`.
#
# **Paper A's law**, fitted to the reference run by `python further/07a_text_retrieval.py
# --replay results/07a_text_retrieval_full.json` (20 s; `results/07a_text_retrieval_fit_to_full.json`):
#
# | fitted to | points | δ [95 % bootstrap] | α [95 % bootstrap] | MAE of log Err |
# |---|---|---|---|---|
# | Table 6, h = 2, 4, 6, 8 (the paper's: δ = 0.25, α = −1.40) | 16 | 0.31 | −1.58 (−1.41 at δ = 0.25) | 0.121 (0.123 at δ = 0.25) |
# | ours, head dim 8, every h | 16 | −0.47 [−0.53, −0.42] | −0.07 [−0.09, −0.06] | 0.32 |
# | ours, without h = 1 | 12 | −0.48 [−0.56, −0.43] | −0.06 [−0.08, −0.05] | 0.22 |
#
# On the paper's table our procedure comes close to the paper's fit, not onto it: δ = 0.31
# against 0.25, α = −1.58 against −1.40, and its MAE is almost flat in δ (0.1212 at δ = 0.31,
# 0.1227 at 0.25, where α = −1.41). So the procedure does not make a δ of the other sign; that
# difference is in the data. On ours the law misses h = 1 at short T (measured 2.8× and 2.0× the
# law at T = 8 and 16) and h = 4 at every T (0.47–0.64× the law). Our error falls 2.5–5.3× from
# h = 2 to 4, but only 1.2–4.1× from h = 4 to 8: a bend towards a floor of a few per cent that one
# exponential in h cannot follow. The interval of δ is a percentile bootstrap over 5 seeds: a
# rough, likely narrow measure of the seed noise alone, not of this misfit (MAE 0.32). The direct
# statistic, without the law (from the mean training accuracies of the protocol sweep in
# `results/07a_text_retrieval_full.json` and from Table 6), like for like: our
# Err(h = 2)/Err(h = 8) is 3.1, 4.6, 6.7 and 21 at T = 8, 16, 32, 64, against Table 6's ≈ 115,
# 71, 30 and 10.5 (its T = 8 value rests on Err(h = 8) = 0.002 read off a rounded 0.998, so
# about 92–153 within that rounding); our Err(h = 1)/Err(h = 8) is 10, 13, 18 and 39, Table 6's
# 202, 110, 41 and 12.4 (at T = 8 about 161–269). Here the heads' benefit grows with T, in the
# paper it shrinks, which is what δ < 0 against δ > 0 says. With the paper's δ held at 0.25 the
# fit is worse (MAE 0.52). The default run (2 seeds, T ≤ 32, the cell above) has too few seeds
# for an interval worth reading (3 distinct resamples).

# %%
if __name__ == "__main__":
    run.finish()

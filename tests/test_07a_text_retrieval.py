"""07a_text_retrieval.py: the corpus, the lists of hard negatives, the ranker, the quick run."""
import hashlib
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import helpers
from conftest import assert_rejected

ROOT = Path(__file__).resolve().parent.parent
text_file = helpers.load_concept("07a_text_retrieval")


def test_split_words_splits_dots_underscores_and_camel_case():
    assert text_file.split_words("os.path.join") == "os path join"
    assert text_file.split_words("textwrap.TextWrapper") == "textwrap text wrapper"
    assert text_file.split_words("html.parser.HTMLParser_x") == "html parser htmlparser x"


def test_text_lists_hold_the_positive_once_among_distinct_hardest_negatives():
    corpus = text_file.text_corpus()
    n = len(corpus["queries"])
    assert n > 1000 and corpus["order"].shape == (n, n - 1)
    assert not (corpus["order"] == torch.arange(n)[:, None]).any()    # never its own negative
    for T in (2, 8, 64):
        lists, positive = text_file.candidates(corpus, T)
        assert lists.shape == (n, T)
        assert (lists[torch.arange(n), positive] == torch.arange(n)).all()   # the positive is in
        assert (lists.sort(dim=1).values.diff(dim=1) > 0).all()     # T distinct passages, all
        assert torch.equal(lists.sort(dim=1).values, torch.cat(     # the T - 1 hardest, shuffled
            [torch.arange(n)[:, None], corpus["order"][:, :T - 1]], dim=1).sort(dim=1).values)
        assert positive.unique().numel() == T                       # the positive's place varies


def test_the_negatives_are_ranked_by_tfidf_cosine_by_a_slow_loop():
    """An independent TF-IDF: passage order[i, k] is never less similar than order[i, k + 1]."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    queries, passages = zip(*text_file.stdlib_pairs())
    tfidf = TfidfVectorizer(sublinear_tf=True).fit(passages + queries)
    order = text_file.text_corpus()["order"]
    for i in (0, 300, 900):
        cosine = (tfidf.transform([queries[i]]) @ tfidf.transform(passages).T).toarray()[0]
        ranked = [cosine[j] for j in order[i].tolist()]
        assert all(a >= b - 1e-12 for a, b in zip(ranked, ranked[1:]))
        assert ranked[0] == pytest.approx(max(c for j, c in enumerate(cosine) if j != i))


SPLIT_DIGEST = ("import hashlib, helpers; "
                "c = helpers.load_concept('07a_text_retrieval').text_corpus(); "
                "print(hashlib.md5(str((c['train'].tolist(), c['order'][:, :63].tolist()))"
                ".encode()).hexdigest())")


def test_the_text_split_and_negatives_are_the_same_in_a_fresh_process():
    first = text_file.text_corpus()
    both = torch.cat([first["train"], first["valid"]]).sort().values
    assert torch.equal(both, torch.arange(len(first["queries"])))          # disjoint, complete
    assert len(first["valid"]) == int(text_file.HELD_OUT_SHARE * len(first["queries"]))
    here = hashlib.md5(str((first["train"].tolist(), first["order"][:, :63].tolist()))
                       .encode()).hexdigest()
    fresh = subprocess.run([sys.executable, "-c", SPLIT_DIGEST], cwd=ROOT, capture_output=True,
                           text=True, timeout=120, encoding="utf-8")
    assert fresh.stdout.strip() == here, fresh.stderr


def test_ranker_scores_permute_with_the_passages():
    torch.manual_seed(0)
    model = text_file.Ranker(text_file.TOKEN_DIM, width=16, n_heads=2, head_dim=8).eval()
    query, passages = torch.randn(3, text_file.TOKEN_DIM), torch.randn(3, 7, text_file.TOKEN_DIM)
    shuffle = torch.randperm(7)
    with torch.no_grad():
        scores, shuffled = model(query, passages), model(query, passages[:, shuffle])
    assert scores.shape == (3, 7)
    assert torch.allclose(shuffled, scores[:, shuffle], atol=1e-6)


def test_the_loss_and_the_ranks_on_a_hand_made_batch():
    scores = torch.tensor([[2.0, 0.0, -1.0], [0.5, 0.5, 3.0], [1.0, 4.0, 2.0]])
    positive = torch.tensor([0, 1, 2])
    by_hand = [-(row[p] - math.log(sum(math.exp(s) for s in row)))
               for row, p in zip(scores.tolist(), positive.tolist())]
    assert float(text_file.ranking_loss(scores, positive)) == pytest.approx(sum(by_hand) / 3)
    accuracy, mrr = text_file.ranking(scores, positive)  # ranks 1; 3 (a tie counts against); 2
    assert accuracy == pytest.approx(1 / 3) and mrr == pytest.approx((1 + 1 / 3 + 1 / 2) / 3)
    flat = text_file.ranking(torch.zeros(4, 5), torch.zeros(4, dtype=torch.long))   # all tied: last
    assert flat == (0.0, pytest.approx(0.2))


def test_text_part_quick_both_sweeps_gains_drops_and_references(quick_args, monkeypatch):
    trained, train = [], text_file.train_ranker
    monkeypatch.setattr(text_file, "train_ranker", lambda run: trained.append(run) or train(run))
    args = quick_args(text_file, "--workers", "1")
    text = text_file.run_text(args)["text"]
    shapes = {(r["width"], r["head_dim"], r["heads"]) for r in trained}
    assert len(trained) == len(args.text_T) * len(shapes) * args.seeds == 12   # shared: once
    accuracy = text["accuracy"]
    for T in map(str, args.text_T):
        assert text["reference"]["train"][T]["chance"] == pytest.approx(1 / int(T))
        assert len({entry["parameters"] for entry in accuracy["fixed-width"][T].values()}) == 1
        seeds = {sweep: {h: e["train"]["seeds"] for h, e in accuracy[sweep][T].items()}
                 for sweep in accuracy}
        gains = {sweep: [b - a for a, b in zip(seeds[sweep]["1"], seeds[sweep]["2"])]
                 for sweep in accuracy}
        for sweep in accuracy:
            assert text["train_gain_with_heads"][sweep][T]["per_seed"] == pytest.approx(
                gains[sweep])
        assert text["gain_difference"][T]["per_seed"] == pytest.approx(
            [a - b for a, b in zip(gains["fixed-head-dim"], gains["fixed-width"])])
        assert accuracy["fixed-head-dim"][T]["2"] == accuracy["fixed-width"][T]["2"]  # one run
    short, long = (str(T) for T in args.text_T)
    for sweep, by_h in text["train_drop_with_T"].items():
        for h, drop in by_h.items():
            assert drop["per_seed"] == pytest.approx([a - b for a, b in zip(
                accuracy[sweep][short][h]["train"]["seeds"],
                accuracy[sweep][long][h]["train"]["seeds"])])
    figure = text_file.plot_text({"text": text}, args)
    dashed = [line for axis in figure.axes for line in axis.get_lines()
              if line.get_linestyle() in ("--", ":")]
    assert len(dashed) == 2 * 2 * 2 * len(args.text_T)     # 2 sweeps x 2 splits x 2 references


@pytest.mark.parametrize("flags, flag_name", [
    (["--text-T", "1"], "--text-T"), (["--text-T", "300"], "--text-T"),
    (["--width", "3", "--heads", "2,4"], "--width"), (["--seeds", "1"], "--seeds"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("07a_text_retrieval", flags, flag_name)


def test_l1_fit_matches_a_slow_search_and_ignores_an_outlier():
    """The linear programme's fit against a brute-force grid over the line's two terms; one
    wild point does not move a least-absolute-deviations line through the others."""
    import numpy as np
    x = np.arange(7.0)
    y = 1.0 + 0.5 * x
    y[3] += 40.0                                           # the outlier
    theta, mae = text_file.l1_fit(np.stack([np.ones(7), x], axis=1), y)
    assert theta == pytest.approx([1.0, 0.5], abs=1e-6)
    grid = [(a / 20, b / 40) for a in range(0, 41) for b in range(0, 41)]
    slow = min(sum(abs(a + b * xi - yi) for xi, yi in zip(x, y)) / 7 for a, b in grid)
    assert mae == pytest.approx(slow, abs=1e-9)


@pytest.mark.parametrize("alpha, delta", [(-1.40, 0.25), (-0.5, 0.6), (-2.0, 0.0)])
def test_the_fitted_law_recovers_known_alpha_and_delta(alpha, delta):
    """Errors drawn from c T^beta exp(alpha h / T^delta) on Table 6's grid, with a small
    multiplicative noise, give back alpha and delta."""
    generator = torch.Generator().manual_seed(0)
    law = {"c": 0.3, "beta": 0.4, "alpha": alpha, "delta": delta}
    points = [(h, T, text_file.law_at(law, h, T) * math.exp(0.01 * float(torch.randn(
        1, generator=generator)))) for h in (1, 2, 4, 6, 8) for T in (8, 16, 32, 64)]
    fitted = text_file.fit_law(*zip(*points))
    assert fitted["alpha"] == pytest.approx(alpha, abs=0.05)
    assert fitted["delta"] == pytest.approx(delta, abs=0.03)
    assert fitted["mae_log"] < 0.02


def test_the_law_on_the_paper_table():
    """Refitted to Table 6's kept rows the law lands near the paper's delta = 0.25 and alpha =
    -1.40; with no points of ours there is no fit."""
    law = text_file.run_law({"text": {"accuracy": {text_file.LAW_SWEEP: {}}}},
                            type("Args", (), {"bootstrap": 10, "seed": 0})())["law"]
    refit = law["paper_table_6_refit"]
    assert abs(refit["delta"] - 0.25) < 0.1 and abs(refit["alpha"] + 1.40) < 0.3
    assert refit["at_paper_delta"]["alpha"] == pytest.approx(-1.40, abs=0.1)
    assert law["ours"] == {}                                # no points: no fit


def test_the_bootstrap_over_seeds_covers_the_truth_and_varies():
    """Errors c T^beta exp(alpha h / T^delta) times a noise drawn afresh for every cell and seed:
    the resampled fits differ (an interval of width > 0), each 95 % interval holds the true
    alpha and delta, and a cell with error 0 is left out."""
    truth = {"c": 0.3, "beta": 0.2, "alpha": -0.8, "delta": 0.3}
    generator = torch.Generator().manual_seed(0)
    table = {str(T): {str(h): {"train": {"seeds": [
        1 - text_file.law_at(truth, h, T) * math.exp(0.1 * float(noise))
        for noise in torch.randn(5, generator=generator)]}}                # per cell and seed
        for h in (1, 2, 4, 8)} for T in (8, 16, 32, 64)}
    table["64"]["8"]["train"]["seeds"] = [1.0] * 5          # error 0: no logarithm
    fitted = text_file.fit_with_interval(text_file.law_points(table, (1, 2, 4, 8)), 30, 0)
    assert fitted["points"] == 15
    for name in ("alpha", "delta"):
        low, high = fitted["ci95"][name]
        assert high - low > 1e-3, (name, low, high)          # the resamples differ
        assert low <= truth[name] <= high, (name, low, high, truth[name])


def test_a_replay_takes_every_part():
    assert_rejected("07a_text_retrieval", ["--replay", "results/07a_text_retrieval_full.json",
                                           "--parts", "text"], "--replay")


def test_held_out_gains_pair_each_seed_of_the_fewest_and_the_most_heads():
    def entry(seeds):
        return {"valid": {"seeds": seeds}}
    accuracy = {"fixed-width": {"16": {"1": entry([0.30, 0.40, 0.35]), "2": entry([0.0, 0.0, 0.0]),
                                       "8": entry([0.28, 0.37, 0.31])}}}
    gain = text_file.held_out_gains(accuracy)["fixed-width"]["16"]
    assert (gain["from"], gain["to"]) == (1, 8)
    assert gain["per_seed"] == pytest.approx([-0.02, -0.03, -0.04])
    assert gain["verdict"] == "h=1 better" and gain["ci95"][1] < 0

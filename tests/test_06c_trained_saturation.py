"""further/06c_trained_saturation.py: entropy and top margin, the model's own attention, the
quick run."""
import json
import math

import pytest
import torch

import conftest
import helpers
from conftest import ROOT, RUN_KEYS, assert_rejected, run_quick

study = helpers.load_concept("06c_trained_saturation")


@pytest.fixture(scope="module")
def quick_result(tmp_path_factory):
    """The study's --quick run, once for this file (its notebook replays a committed run)."""
    return run_quick("06c_trained_saturation", tmp_path_factory.mktemp("06c"))


def test_normalised_entropy_and_top_margin():
    uniform = torch.full((3, 16), 1 / 16)
    assert study.normalised_entropy(uniform) == pytest.approx(torch.ones(3))
    one_hot = torch.zeros(2, 64)
    one_hot[:, 5] = 1.0
    assert study.normalised_entropy(one_hot) == pytest.approx(torch.zeros(2), abs=1e-6)
    p = torch.tensor([0.5, 0.25, 0.25])
    slow = -sum(v * math.log(v) for v in p.tolist()) / math.log(3)
    assert float(study.normalised_entropy(p)) == pytest.approx(slow)
    assert float(study.top_margin(torch.tensor([1.0, 2.0, 6.0]))) == pytest.approx(3.0)
    assert study.context_lengths(128) == [16, 32, 64, 128]
    assert study.context_lengths(100) == [16, 32, 64, 100]


def test_effective_keys_and_the_fisher_interval():
    """exp H from H / log L: L keys for uniform attention, 1 for one key, k for k equal keys;
    Fisher's z interval with Spearman's standard error against its formula, holding r, and None
    where it is undefined."""
    half = torch.zeros(64)
    half[:8] = 1 / 8                                                       # 8 equal keys
    entropy = [1.0, 0.0, float(study.normalised_entropy(half))]
    assert study.effective_keys([16, 32, 64], entropy) == pytest.approx([16, 1, 8])
    low, high = study.fisher_interval(0.16, 12)
    margin = 1.96 * math.sqrt(1.06 / 9)                                    # n - 3 = 9
    assert (low, high) == pytest.approx((math.tanh(math.atanh(0.16) - margin),
                                         math.tanh(math.atanh(0.16) + margin)))
    assert low < 0 < 0.16 < high
    assert study.fisher_interval(0.5, 3) is None and study.fisher_interval(1.0, 12) is None


def test_the_attention_profile_reads_the_model_own_attention(monkeypatch):
    """The entropies and margins against the weights and logits the model itself computes
    in its forward pass (captured from helpers.attention_weights), row L - 1 over keys 0 .. L - 1."""
    torch.manual_seed(0)
    model = study.text_study.CharacterModel([(2, 4), (3, 2)], width=8, seq_len=20, vocab=12)
    text = torch.randint(12, (400,))
    profile = study.attention_profile(model, text, [4, 20])
    captured, real = [], helpers.attention_weights

    def capture(scores, scale, cap=None, mask=None):
        captured.append((scale * scores, real(scores, scale, cap, mask)))
        return captured[-1][1]

    monkeypatch.setattr(helpers, "attention_weights", capture)
    starts = torch.linspace(0, len(text) - 21, study.SATURATION_WINDOWS).long()
    with torch.no_grad():
        model(text[starts[:, None] + torch.arange(20)])
    for layer, (logits, weights) in enumerate(captured):
        for at, L in enumerate([4, 20]):
            row = weights[:, :, L - 1, :L]                                 # [W, H, L], sums to 1
            assert torch.allclose(row.sum(-1), torch.ones_like(row.sum(-1)))
            entropy = -(row * row.log()).sum(-1) / math.log(L)
            margin = logits[:, :, L - 1, :L].max(-1).values - logits[:, :, L - 1, :L].mean(-1)
            for head in range(row.shape[1]):
                found = profile[str(layer + 1)]
                assert found["entropy"][head][at] == pytest.approx(float(entropy[:, head].mean()),
                                                                   rel=1e-5)
                assert found["margin"][head][at] == pytest.approx(float(margin[:, head].mean()),
                                                                  rel=1e-5)


def test_main_quick(quick_result):
    """Entropies between one key (0) and uniform (1); the tie spans every head of 06a's part c
    uniform models."""
    args = study.config(["--quick"])
    result = quick_result
    assert set(result) - RUN_KEYS == {"saturation"}
    for name, entry in result["saturation"].items():
        if name != "tie_to_rank":
            assert entry["L"][-1] in (args.text_T, args.deep_T)
            assert all(0 <= value <= 1 + 1e-6 for kind in ("trained", "untrained")
                       for layer in entry[kind].values() for value in layer["entropy"])
    tie = result["saturation"]["tie_to_rank"]
    assert len(tie["entropy_per_head"]) == len(tie["rank_1_cost_per_head"]) == \
        args.text_seeds * 2 * 2                                            # 2 layers x 2 heads
    assert tie["spearman"] is None or -1 <= tie["spearman"] <= 1
    for name, entry in result["saturation"].items():          # a run stores what a replay of
        if name != "tie_to_rank":                               # an older file recomputes
            assert set(entry["effective_keys_longest_minus_shortest"]) == set(entry["trained"])
            assert set(entry["margin_growth"]) == set(entry["trained"])
            assert entry["largest_margin"]["margin"] == max(
                max(layer["margin"]) for layer in entry["trained"].values())
    shallow = result["saturation"]["2 layers (part c)"]       # the rebuilt change is a run's own
    rebuilt = study.keys_change_from_tie(shallow, tie)
    for layer, stored in shallow["effective_keys_longest_minus_shortest"].items():
        assert rebuilt[layer]["per_seed"] == pytest.approx(stored["per_seed"], rel=1e-6, abs=1e-9)
        assert rebuilt[layer]["verdict"] == stored["verdict"]


@pytest.mark.parametrize("flags, flag_name", [
    (["--deep-seeds", "1"], "--deep-seeds"), (["--deep-T", "30000"], "--text-chars"),
    (["--deep-T", "1"], "--deep-T"), (["--text-T", "1"], "--text-T"),
    (["--text-seeds", "1"], "--text-seeds"), (["--parts", "c"], "--parts"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("06c_trained_saturation", flags, flag_name)


def test_a_replay_writes_what_it_recomputes_beside_the_committed_run(tmp_path):
    """`--replay` of the committed run computes the effective keys and the Spearman interval
    again, writes them to a file of their own, and leaves the file byte for byte; what it
    computes is what the run stored."""
    committed = ROOT / "results" / "06c_trained_saturation.json"
    before = committed.read_bytes()
    conftest.run_in_process("06c_trained_saturation", "--replay", str(committed),
                            "--out", str(tmp_path))
    assert committed.read_bytes() == before
    written = sorted(path.name for path in (tmp_path / "results").glob("*.json"))
    assert written == ["06c_trained_saturation_analysis_of_06c_trained_saturation.json"]
    analysis = json.loads((tmp_path / "results" / written[0]).read_text(encoding="utf-8"))
    entry = json.loads(before)["saturation"]["2 layers (part c)"]
    keys = analysis["effective_keys"]["2 layers (part c)"]["1"]["trained"]
    by_hand = [math.exp(h * math.log(L)) for h, L in zip(entry["trained"]["1"]["entropy"],
                                                           entry["L"])]
    assert keys == pytest.approx(by_hand, rel=1e-12)
    low, high = analysis["spearman_ci95"]
    assert low < json.loads(before)["saturation"]["tie_to_rank"]["spearman"] < high
    assert set(analysis) - conftest.RUN_KEYS == {
        "effective_keys", "effective_keys_longest_minus_shortest", "margin_growth",
        "largest_margin", "spearman_ci95"}
    stored = json.loads(before)["saturation"]
    assert analysis["spearman_ci95"] == pytest.approx(stored["tie_to_rank"]["spearman_ci95"])
    for name in ("2 layers (part c)", "4 layers"):
        for layer, growth in stored[name]["margin_growth"].items():
            assert analysis["margin_growth"][name][layer] == pytest.approx(growth)
        assert analysis["largest_margin"][name] == pytest.approx(stored[name]["largest_margin"])


def test_a_replay_rebuilds_the_seed_paired_change_of_the_effective_keys(tmp_path):
    """A file that keeps each seed's change of H/log L and, in the tie, each head's H/log L at
    the longest L (seed by seed, layer by layer, 2 heads) gives each seed's exp H at both ends,
    and helpers.paired_difference of their change: rebuilt so for an older file that lacks it,
    it is the change the committed run stored. The rebuilt means are the file's own means over
    seeds. A replay keeps a change the file stored, for the 4-layer models too."""
    committed = ROOT / "results" / "06c_trained_saturation.json"
    conftest.run_in_process("06c_trained_saturation", "--replay", str(committed),
                            "--out", str(tmp_path))
    analysis = json.loads((tmp_path / "results" /
                           "06c_trained_saturation_analysis_of_06c_trained_saturation.json")
                          .read_text(encoding="utf-8"))
    saturation = json.loads(committed.read_text(encoding="utf-8"))["saturation"]
    entry, per_head = saturation["2 layers (part c)"], saturation["tie_to_rank"]["entropy_per_head"]
    changes = analysis["effective_keys_longest_minus_shortest"]
    for name in ("2 layers (part c)", "4 layers"):
        assert changes[name] == saturation[name]["effective_keys_longest_minus_shortest"]
    rebuilt = study.keys_change_from_tie(entry, saturation["tie_to_rank"])
    for index, layer in enumerate(("1", "2")):
        longest = [(per_head[4 * seed + 2 * index] + per_head[4 * seed + 2 * index + 1]) / 2
                   for seed in range(3)]
        shortest = [high - change for high, change in
                    zip(longest, entry["entropy_longest_minus_shortest"][layer]["per_seed"])]
        assert sum(longest) / 3 == pytest.approx(entry["trained"][layer]["entropy"][-1])
        assert sum(shortest) / 3 == pytest.approx(entry["trained"][layer]["entropy"][0])
        by_hand = helpers.paired_difference([64 ** high - 16 ** low
                                             for high, low in zip(longest, shortest)])
        assert rebuilt[layer]["per_seed"] == pytest.approx(by_hand["per_seed"], rel=1e-9)
        assert rebuilt[layer]["ci95"] == pytest.approx(by_hand["ci95"], rel=1e-9)
        stored = entry["effective_keys_longest_minus_shortest"][layer]   # what the run kept
        assert rebuilt[layer]["ci95"] == pytest.approx(stored["ci95"])
    largest = analysis["largest_margin"]["4 layers"]
    assert (largest["layer"], largest["L"]) == ("2", 128)
    assert largest["smallest_cap"] == pytest.approx(largest["margin"] / 2)
    margin = saturation["4 layers"]["trained"]["2"]["margin"]
    assert analysis["margin_growth"]["4 layers"]["2"]["trained"] == pytest.approx(
        margin[-1] / margin[0])

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


@pytest.mark.parametrize("flags, flag_name", [
    (["--deep-seeds", "1"], "--deep-seeds"), (["--deep-T", "30000"], "--text-chars"),
    (["--deep-T", "1"], "--deep-T"), (["--text-T", "1"], "--text-T"),
    (["--text-seeds", "1"], "--text-seeds"), (["--parts", "c"], "--parts"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("06c_trained_saturation", flags, flag_name)


def test_a_replay_writes_what_it_recomputes_beside_the_committed_run(tmp_path):
    """`--replay` of the committed run writes the effective keys and the Spearman interval,
    which that file lacks, to a file of their own, and leaves the file byte for byte."""
    committed = ROOT / "results" / "06a_06b_06c_replayed.json"
    before = committed.read_bytes()
    conftest.run_in_process("06c_trained_saturation", "--replay", str(committed),
                            "--out", str(tmp_path))
    assert committed.read_bytes() == before
    written = sorted(path.name for path in (tmp_path / "results").glob("*.json"))
    assert written == ["06c_trained_saturation_analysis_of_06a_06b_06c_replayed.json"]
    analysis = json.loads((tmp_path / "results" / written[0]).read_text())
    entry = json.loads(before)["saturation"]["2 layers (part c)"]
    keys = analysis["effective_keys"]["2 layers (part c)"]["1"]["trained"]
    by_hand = [math.exp(h * math.log(L)) for h, L in zip(entry["trained"]["1"]["entropy"],
                                                           entry["L"])]
    assert keys == pytest.approx(by_hand, rel=1e-12)
    low, high = analysis["spearman_ci95"]
    assert low < json.loads(before)["saturation"]["tie_to_rank"]["spearman"] < high

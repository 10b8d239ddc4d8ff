"""further/06d_head_dim_context.py: the relative-bias attention against a loop, the scores, the
guard, gains and interaction against slow loops over seeds, the quick run, bad input."""
import math

import pytest
import scipy.stats
import torch

import helpers
from conftest import RUN_KEYS, assert_rejected, run_quick

study = helpers.load_concept("06d_head_dim_context")


@pytest.fixture(scope="module")
def quick_result(tmp_path_factory):
    """The study's --quick run, once for this file (its notebook replays a committed run)."""
    return run_quick("06d_head_dim_context", tmp_path_factory.mktemp("06d"))


def slow_attention(block, u):
    """The block's attention by loops: head h, query t, keys s <= t, logit
    q_t . k_s / sqrt(d) + b_h(t - s); softmax; the weighted values; concatenated; W_O."""
    batch, seq_len, _ = u.shape
    value_dim = block.W_V.shape[1]
    out = torch.zeros(batch, seq_len, block.n_heads * value_dim)
    for b in range(batch):
        for h in range(block.n_heads):
            for t in range(seq_len):
                q = block.W_Q[h] @ u[b, t]
                logits = torch.stack([
                    q @ (block.W_K[h] @ u[b, s]) / math.sqrt(block.head_dim)
                    + block.offset_bias[h, t - s] for s in range(t + 1)])
                weights = logits.softmax(dim=0)
                value = sum(weights[s] * (block.W_V[h] @ u[b, s]) for s in range(t + 1))
                out[b, t, h * value_dim:(h + 1) * value_dim] = value
    return block.W_O(out)


@pytest.mark.parametrize("value_dim", [None, 5])
def test_relative_attention_against_a_loop(value_dim):
    """A standard head (values of dimension d) and one whose values have their own dimension."""
    torch.manual_seed(0)
    block = study.RelativeBlock(width=6, n_heads=2, head_dim=3, seq_len=7, value_dim=value_dim)
    with torch.no_grad():
        block.offset_bias.normal_()                       # a bias that matters
    u = torch.randn(2, 7, 6)
    mask = study.allocation.causal_mask(7)
    with torch.no_grad():
        assert torch.allclose(block.attention(u, mask), slow_attention(block, u), atol=1e-5)
        shorter = u[:, :5]                                 # a window shorter than the model's
        assert torch.allclose(block.attention(shorter, mask[:5, :5]),
                              slow_attention(block, shorter), atol=1e-5)


def test_the_model_is_causal():
    """A changed character changes no earlier prediction, and a later one; a shorter window
    gives the same predictions as the start of a longer one."""
    torch.manual_seed(1)
    model = study.ContextModel(2, 2, 4, width=8, seq_len=12, vocab=10).eval()
    x = torch.randint(10, (1, 12))
    changed = x.clone()
    changed[0, 8] = (x[0, 8] + 1) % 10
    with torch.no_grad():
        assert torch.allclose(model(x)[0, :8], model(changed)[0, :8], atol=1e-6)
        assert not torch.allclose(model(x)[0, 8:], model(changed)[0, 8:])
        assert torch.allclose(model(x[:, :6])[0], model(x)[0, :6], atol=1e-6)


def test_every_held_out_character_is_scored_once():
    """position_bits against scoring each window alone; the two scores against their means."""
    torch.manual_seed(2)
    model = study.ContextModel(1, 2, 2, width=8, seq_len=8, vocab=10)
    text = torch.randint(10, (8 * 150 + 5,))                 # 150 windows and a short tail
    bits = study.position_bits(model, text, 8)
    assert bits.shape == (150, 8)
    with torch.no_grad():
        for w in (0, 77, 149):
            window = text[8 * w: 8 * w + 9]
            nats = torch.nn.functional.cross_entropy(model(window[None, :-1])[0], window[1:],
                                                     reduction="none")
            assert torch.allclose(bits[w], nats / math.log(2), atol=1e-5)
    scores = study.scores(bits)
    assert scores["whole"] == pytest.approx(float(bits.mean()), rel=1e-6)
    assert scores["last_quarter"] == pytest.approx(float(bits[:, 6:].mean()), rel=1e-6)


def test_the_same_targets_and_the_effective_keys_against_loops():
    """same_target_bits: each target read at the end of its own window of L; effective_keys:
    L keys for a model whose scores and biases are 0 (uniform attention), 1 for a bias that
    puts every weight on the query itself."""
    torch.manual_seed(4)
    model = study.ContextModel(2, 2, 2, width=8, seq_len=6, vocab=10)
    text = torch.randint(10, (200,))
    targets = range(16, 200, study.COMMON_STRIDE)
    with torch.no_grad():
        slow = [float(torch.nn.functional.cross_entropy(model(text[i - 6:i][None])[0, -1:],
                                                        text[i:i + 1])) / math.log(2)
                for i in targets]
    assert study.same_target_bits(model, text, 6, 16) == pytest.approx(sum(slow) / len(slow),
                                                                       rel=1e-5)
    with torch.no_grad():
        for block in model.blocks:
            block.W_Q.zero_()
    assert study.effective_keys(model, text, 6) == pytest.approx([6.0, 6.0], rel=1e-5)
    with torch.no_grad():
        for block in model.blocks:
            block.offset_bias[:, 0] = 100.0                     # offset 0: the query itself
    assert study.effective_keys(model, text, 6) == pytest.approx([1.0, 1.0], abs=1e-4)
    assert all(block.weights is None for block in model.blocks)  # nothing kept afterwards


def synthetic_bpc(per_seed):
    """{score: {L: {d: [seeds]}}} from per_seed(L, d, seed, score) -> bpc."""
    return {score: {str(L): {str(d): [per_seed(L, d, s, score) for s in range(5)]
                             for d in (2, 4, 8)} for L in (8, 32, 128)}
            for score in study.SCORES}


def slow_interval(values):
    """Mean and 95 % t-interval by scipy, over a list of per-seed values."""
    n = len(values)
    mean = sum(values) / n
    sem = scipy.stats.sem(values)
    half = scipy.stats.t.ppf(0.975, n - 1) * sem
    return mean, mean - half, mean + half


def test_the_interaction_against_a_loop_over_seeds():
    """Random per-seed bpc: every gain and interaction interval against loops and scipy."""
    generator = torch.Generator().manual_seed(3)
    noise = torch.rand(3, 3, 5, len(study.SCORES), generator=generator).tolist()  # [L, d, s, score]
    lengths, dims = (8, 32, 128), (2, 4, 8)
    bpc = synthetic_bpc(lambda L, d, s, score: 2.0 - 0.05 * math.log2(d) + noise[
        lengths.index(L)][dims.index(d)][s][study.SCORES.index(score)])
    found = study.head_dim_statistics(bpc, list(lengths), list(dims))
    last = bpc["last_quarter"]
    for short, long in [(8, 32), (32, 128), (8, 128)]:
        for small, large in [(2, 4), (4, 8), (2, 8)]:
            per_seed = []
            for s in range(5):
                gain_short = last[str(short)][str(small)][s] - last[str(short)][str(large)][s]
                gain_long = last[str(long)][str(small)][s] - last[str(long)][str(large)][s]
                per_seed.append(gain_long - gain_short)
            mean, low, high = slow_interval(per_seed)
            entry = found["interaction"][f"{short}->{long}"][f"{small}->{large}"]
            assert entry["mean"] == pytest.approx(mean)
            assert entry["ci95"] == pytest.approx([low, high])
            assert entry["verdict"] == ("shrinks" if high < 0 else "grows" if low > 0
                                        else "no clear difference")
    whole = bpc["whole"]
    per_seed = [(whole["128"]["2"][s] - whole["128"]["8"][s])
                - (whole["8"]["2"][s] - whole["8"]["8"][s]) for s in range(5)]
    assert found["interaction_by_score"]["whole"]["8->128"]["ci95"] == pytest.approx(
        list(slow_interval(per_seed)[1:]))
    for L in lengths:
        per_seed = [last[str(L)]["2"][s] - last[str(L)]["8"][s] for s in range(5)]
        assert found["gain"][str(L)]["2->8"]["ci95"] == pytest.approx(list(slow_interval(
            per_seed)[1:]))
        first = [last[str(L)]["2"][s] - last[str(L)]["4"][s] for s in range(5)]
        second = [last[str(L)]["4"][s] - last[str(L)]["8"][s] for s in range(5)]
        mean, low, high = slow_interval([b - a for a, b in zip(first, second)])
        assert found["diminishing"][str(L)]["mean"] == pytest.approx(mean)
        assert found["diminishing"][str(L)]["ci95"] == pytest.approx([low, high])


def test_the_guard_silences_lengths_not_in_use():
    """Longer contexts worse at the largest d: no pair speaks, whatever the interaction says;
    longer contexts better and a gain that shrinks: the answer says so."""
    def shrinking(L, d, s, score, longer_better):
        level = 2.0 + (-0.1 if longer_better else 0.1) * math.log2(L) + 0.001 * s * s
        return level - (0.4 / math.log2(L)) * math.log2(d)             # the gain shrinks with L

    for longer_better in (False, True):
        bpc = synthetic_bpc(lambda L, d, s, score: shrinking(L, d, s, score, longer_better))
        found = study.head_dim_statistics(bpc, [8, 32, 128], [2, 4, 8])
        assert all(entry["used"] is longer_better for entry in found["context_use"].values())
        assert all(entry["2->8"]["verdict"] == "shrinks"
                   for entry in found["interaction"].values())
        lines = study.answer(found, [2, 4, 8])
        assert len(lines) == 3
        if longer_better:
            assert all("shrinks" in line and "no conclusion" not in line for line in lines)
        else:
            assert all("no conclusion" in line and "shrinks" not in line for line in lines)


def test_main_quick(quick_result, capsys):
    """The JSON holds every seed's bpc per score, L and d, the guard, gains and interactions;
    bits per character between 0 and log2(97)."""
    args = study.config(["--quick"])
    entry = quick_result["head_dim_context"]
    assert set(quick_result) - RUN_KEYS == {"head_dim_context"}
    for score in study.SCORES:
        for L in args.lengths:
            for d in args.head_dims:
                values = entry["bpc"][score][str(L)][str(d)]
                assert len(values) == args.seeds
                assert all(0 < v < math.log2(97) + 0.5 for v in values)
    assert set(entry["context_use"]) == {"8->16", "16->32", "8->32"}
    assert set(entry["interaction"]["8->32"]) == {"2->4", "speaks"}
    assert set(entry["interaction_by_score"]) == {"whole", "same_targets"}
    keys = entry["effective_keys"][str(args.lengths[-1])][str(args.head_dims[0])]
    assert len(keys) == args.seeds and all(len(layers) == args.layers for layers in keys)
    assert all(1 - 1e-6 <= k <= args.lengths[-1] + 1e-6 for layers in keys for k in layers)
    assert all(len(pair["per_seed"]) == args.seeds for pairs in entry["gain"].values()
               for pair in pairs.values())


@pytest.mark.parametrize("flags, flag_name", [
    (["--head-dims", "4,2"], "--head-dims"), (["--head-dims", "4"], "--head-dims"),
    (["--lengths", "16"], "--lengths"), (["--lengths", "16,18"], "--lengths"),
    (["--lengths", "32,16"], "--lengths"), (["--seeds", "1"], "--seeds"),
    (["--lengths", "16,30000"], "--text-chars"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("06d_head_dim_context", flags, flag_name)


@pytest.mark.parametrize("name", ["06d_head_dim_context", "06d_head_dim_context_full",
                                  "06d_head_dim_context_head_dims2-16_value_dim16_full"])
def test_the_committed_statistics_follow_from_their_bpc(name):
    """Every guard, gain and interaction a committed run stores is what head_dim_statistics makes
    of its stored per-seed bpc (a replay recomputes them the same way)."""
    import json
    path = helpers.ROOT / "results" / f"{name}.json"
    entry = json.loads(path.read_text(encoding="utf-8"))["head_dim_context"]
    fresh = study.head_dim_statistics(entry["bpc"], entry["lengths"], entry["head_dims"])
    for key, value in fresh.items():
        assert json.loads(json.dumps(value)) == entry[key], key


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    """The committed --full run and its control copied to a folder of their own, the run replayed
    from there with --out elsewhere: (the copy, its bytes before, the out folder)."""
    import shutil
    from conftest import run_in_process
    folder = tmp_path_factory.mktemp("committed")
    for name in ("06d_head_dim_context_full.json", study.VALUES_FIXED_RUN):
        shutil.copy(helpers.ROOT / "results" / name, folder / name)
    copy, out = folder / "06d_head_dim_context_full.json", tmp_path_factory.mktemp("out")
    before = copy.read_bytes()
    run_in_process("06d_head_dim_context", "--replay", str(copy), "--out", str(out),
                   "--device", "cpu")
    return copy, before, out


def test_a_replay_writes_its_analysis_and_leaves_the_replayed_file_unchanged(replayed):
    """results/06d_head_dim_context_analysis_of_06d_head_dim_context_full.json, and no other
    JSON; the replayed file byte for byte as before; its normalised entropy and values' share
    against the stored per-seed numbers."""
    import json
    copy, before, out = replayed
    assert copy.read_bytes() == before
    assert before == (helpers.ROOT / "results" / copy.name).read_bytes()
    written = sorted(path.name for path in (out / "results").iterdir())
    assert written == ["06d_head_dim_context_analysis_of_06d_head_dim_context_full.json"]
    analysis = json.loads((out / "results" / written[0]).read_text(encoding="utf-8"))
    assert set(analysis) - RUN_KEYS == {"guards", "normalised_entropy", "values_share"}
    entry = json.loads(before)["head_dim_context"]
    keys = entry["effective_keys"]
    per_seed = [math.log(long[1]) / math.log(256) - math.log(short[1]) / math.log(16)
                for short, long in zip(keys["16"]["16"], keys["256"]["16"])]
    change = analysis["normalised_entropy"]["16"]["2"]["change"]["16->256"]
    assert change["per_seed"] == pytest.approx(per_seed)
    assert change["ci95"] == pytest.approx(list(slow_interval(per_seed)[1:]))
    control_path = copy.parent / study.VALUES_FIXED_RUN
    control = json.loads(control_path.read_text(encoding="utf-8"))["head_dim_context"]
    last, fixed = entry["bpc"]["last_quarter"]["64"], control["bpc"]["last_quarter"]["64"]
    part = [(a - b) - (c - e) for a, b, c, e in zip(last["2"], last["16"], fixed["2"], fixed["16"])]
    share = analysis["values_share"]["last_quarter"]["64"]
    assert share["values_part"]["ci95"] == pytest.approx(list(slow_interval(part)[1:]))
    gain = sum(a - b for a, b in zip(last["2"], last["16"])) / len(part)
    assert share["values_fraction"]["mean"] == pytest.approx(sum(part) / len(part) / gain)


def test_the_guards_of_the_committed_run_16_to_256_spoke_under_two_scores_only(replayed):
    """Under the first guard (last quarter and whole window) 16 -> 256 spoke, with its whole-window
    interaction separated; under the current one (the same targets too) it does not; 16 -> 64
    speaks under both, 64 -> 256 under neither."""
    import json
    _, _, out = replayed
    guards = json.loads((out / "results" / "06d_head_dim_context_analysis_of_06d_head_dim_context"
                                           "_full.json").read_text(encoding="utf-8"))["guards"]
    assert guards["16->256"]["two_scores"] == {"scores": ["last_quarter", "whole"], "speaks": True}
    assert guards["16->256"]["three_scores"]["speaks"] is False
    assert guards["16->256"]["interaction"]["whole"]["verdict"] == "grows"
    assert guards["16->256"]["interaction"]["last_quarter"]["verdict"] == "no clear difference"
    assert [guards[pair][name]["speaks"] for pair in ("16->64", "64->256")
            for name in ("two_scores", "three_scores")] == [True, True, False, False]

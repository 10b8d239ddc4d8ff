"""further/06a_text_allocation.py: the corpus, the control's verdict and its rule, the quick run."""
import json
from pathlib import Path

import pytest
import torch

import helpers
import plumbing
from conftest import RUN_KEYS, assert_rejected, run_quick

ROOT = Path(__file__).resolve().parent.parent
study = helpers.load_concept("06a_text_allocation")


@pytest.fixture(scope="module")
def quick_result(tmp_path_factory):
    """The study's --quick run, once for this file (its notebook replays a committed run)."""
    return run_quick("06a_text_allocation", tmp_path_factory.mktemp("06a"))


def test_model_is_causal():
    torch.manual_seed(0)
    model = study.CharacterModel([(2, 4), (3, 2)], width=8, seq_len=6, vocab=10)
    x = torch.randint(10, (1, 6))
    changed = x.clone()
    changed[0, 4] = (x[0, 4] + 1) % 10
    with torch.no_grad():
        torch.testing.assert_close(model(x)[0, :4], model(changed)[0, :4])


@pytest.mark.parametrize("seq_len, n_layers, context", [(6, 1, None), (6, 2, 3), (7, 1, 3),
                                                         (8, 2, 5), (5, 3, 4)])
def test_context_mask_against_a_loop(seq_len, n_layers, context):
    """Position t may look at s in one layer iff s <= t and, with a context, t - s < w."""
    mask = study.context_mask(seq_len, n_layers, context)
    w = seq_len if context is None else (context - 1) // n_layers + 1
    for t in range(seq_len):
        for s in range(seq_len):
            assert bool(mask[t, s]) == (not (s <= t and t - s < w))


def test_context_limit_is_not_a_whole_number_of_hops():
    with pytest.raises(ValueError, match="context of 4"):
        study.context_mask(6, 2, 4)


@pytest.mark.parametrize("context", [None, 3])
def test_limited_model_sees_exactly_the_last_characters(context):
    """Perturb each input character: the output at t changes iff s is among the last `context`
    characters up to t (all of 0 .. t without a limit): the receptive field of the stack."""
    torch.manual_seed(0)
    seq_len = 8
    model = study.CharacterModel([(2, 5), (2, 5)], width=8, seq_len=seq_len, vocab=10,
                                 context=context)
    x = torch.randint(10, (1, seq_len))
    with torch.no_grad():
        base = model(x)[0]
        for s in range(seq_len):
            changed = x.clone()
            changed[0, s] = (x[0, s] + 1) % 10
            moved = (model(changed)[0] - base).abs().amax(dim=-1) > 1e-6     # [T]
            for t in range(seq_len):
                seen = s <= t and (context is None or t - s < context)
                assert bool(moved[t]) == seen, (s, t)


def test_text_encoding_and_the_reference_corpus():
    text = study.python_reference()
    assert len(text) > 100_000 and text == study.python_reference()  # deterministic
    ids, alphabet = study.encode_text("ab\né")
    assert [alphabet[i] for i in ids.tolist()] == ["a", "b", "\n", "?"]


def made_up_text(control_per_seed):
    """A part a result with known numbers: three allocations and the control, 3 seeds."""
    seeds = {"uniform": [2.2, 2.3, 2.1], "front-loaded": [2.0, 2.2, 2.1],
             "back-loaded": [2.4, 2.3, 2.5]}
    allocations = {name: {"layers": [[2, 5], [2, 5]], "budget": 20, **helpers.seed_stats(v)}
                   for name, v in seeds.items()}
    limited = [u - d for u, d in zip(seeds["uniform"], control_per_seed)]
    paired = {key: helpers.paired_difference([0.1, -0.1, 0.05]) for key in
              ("front-loaded - back-loaded", "front-loaded - uniform", "back-loaded - uniform")}
    stale = helpers.paired_difference(control_per_seed, below="uniform better",
                                      above=f"{study.LIMITED} better")   # an older label
    paired[study.CONTROL_KEY] = stale
    return {"source": "made up", "characters": 1000, "corpus_characters": 1000, "T": 8,
            "allocations": allocations, "paired": paired,
            "context_limited": {"characters": study.CONTEXT_LIMIT, "layers": [[2, 5], [2, 5]],
                                "budget": 20, **helpers.seed_stats(limited)}}


@pytest.mark.parametrize("per_seed, expected", [
    ([0.15, 0.16, 0.14], "the control better"),         # the interval above 0
    ([-0.10, -0.09, -0.11], "the full models better"),   # below 0
    ([-0.10, 0.12, 0.02], "no clear difference"),        # across 0
])
def test_the_printed_label_and_the_rule_row_come_from_one_verdict(per_seed, expected, capsys):
    """The issue's contradiction (the control printed better, the same result listed under "the
    text models use more than 3 characters") cannot recur: the printed comparison and the rule's
    row both carry helpers.paired_difference's verdict of uniform - limited, named by its
    interval, whatever label a committed file stored."""
    text = made_up_text(per_seed)
    low, high = helpers.t_interval(per_seed)[1:]
    assert (expected == "the control better") == (low > 0)
    assert (expected == "the full models better") == (high < 0)
    study.report_text({"text": text})
    printed = capsys.readouterr().out
    comparison = [line.strip() for line in printed.splitlines()
                  if line.strip().startswith(study.CONTROL_KEY)]
    assert len(comparison) == 1 and comparison[0].endswith(f"({expected})")
    rows = [row for row in study.text_rules(text) if row["rule"] == study.CONTEXT_RULE]
    assert len(rows) == 1
    row = rows[0]
    assert row["strength"] == expected == study.context_comparison(per_seed)["verdict"]
    assert row["answer"] == {"the full models better": "yes", "the control better": "no",
                             "no clear difference": "not shown"}[expected]
    assert f"- {study.CONTEXT_RULE}? {row['answer']}: {row['evidence']}" in printed
    assert row["evidence"].endswith(f"({expected})")
    assert "better)" not in printed.replace("(the control better)", "").replace(
        "(the full models better)", "")                    # no stored label survives


def test_the_committed_runs_get_their_labels_from_their_intervals():
    """The committed default run: the control better; the --full run: the full models better
    (the numbers the study's markdown quotes)."""
    for name, expected, mean in (("06a_text_allocation", "the control better", 0.154),
                                 ("06a_text_allocation_full", "the full models better", -0.095)):
        text = json.loads((ROOT / "results" / f"{name}.json").read_text(encoding="utf-8"))["text"]
        pair = study.text_paired(text)[study.CONTROL_KEY]
        assert pair["verdict"] == expected and pair["mean"] == pytest.approx(mean, abs=5e-4)
        assert study.text_rules(text)[-1]["strength"] == expected


def test_main_quick(quick_result):
    args = study.config(["--quick"])
    result = quick_result
    assert set(result) - RUN_KEYS == {"text", "rank_by_layer", "rank_1_last_minus_first_layer"}
    assert set(result["text"]["allocations"]) == {"uniform", "front-loaded", "back-loaded"}
    assert all(b < 7 for a in result["text"]["allocations"].values() for b in a["seeds"])
    limited = result["text"]["context_limited"]
    assert limited["characters"] == study.CONTEXT_LIMIT and len(limited["seeds"]) == 2
    control = result["text"]["paired"][study.CONTROL_KEY]
    assert control == study.context_comparison(control["per_seed"])   # labelled by its interval
    # d: the per-seed layer comparison agrees with the pooled per-head costs it summarises
    by_layer, layers = result["rank_by_layer"], result["rank_1_last_minus_first_layer"]
    assert len(layers["per_seed"]) == args.text_seeds
    pooled = by_layer[max(by_layer)]["1"]["mean"] - by_layer["1"]["1"]["mean"]
    assert layers["mean"] == pytest.approx(pooled)   # equal heads per model: mean of means


def test_part_b_brings_a_along(quick_args):
    args = quick_args(study, "--parts", "b")
    assert args.parts == ["a", "b"]
    assert plumbing.output_suffix(args, study.PARTS) == "_quick"            # every part
    assert plumbing.output_suffix(quick_args(study, "--parts", "a"), study.PARTS) == \
        "_quick_parts_a"


@pytest.mark.parametrize("flags, flag_name", [
    (["--text-seeds", "1"], "--text-seeds"), (["--key-dim", "5"], "--key-dim"),
    (["--text", "/no/such/file"], "--text"),
    (["--text", __file__, "--text-T", "100000"], "--text"),
    (["--text-chars", "100", "--text-T", "64"], "--text-chars"),
    (["--parts", "a,x"], "--parts"), (["--parts", "c"], "--parts"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("06a_text_allocation", flags, flag_name)

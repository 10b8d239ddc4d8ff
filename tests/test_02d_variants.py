"""further/02d_variants.py: the stacked model by hand, a fixed width, the variants' file names
and paper tables, the reversal score by hand and on the paper's tables, its run over the
committed runs, and the command named for each of them."""
import json
import shlex
from pathlib import Path

import pytest
import torch

import conftest
import helpers
import harness
import plumbing
from conftest import assert_rejected
from engine import lesson02 as engine

model_file = helpers.load_concept("02_multihead_model")
study = helpers.load_concept("02d_variants")
RESULTS = Path(__file__).resolve().parent.parent / "results"


def test_shapes_and_attention_of_every_layer_sum_to_one():
    model = study.StackedModel(n_heads=3, head_dim=8, width=32, n_layers=2)
    y, attention = model(torch.randn(5, 11, 4), return_attention=True)
    assert y.shape == (5,) and len(attention) == 2
    for weights in attention:
        assert weights.shape == (5, 3, 11)
        torch.testing.assert_close(weights.sum(-1), torch.ones(5, 3))
        assert (weights >= 0).all()


def test_total_width_sets_head_dim():
    run = dict(h=3, head_dim=8, width=32, total_width=32, layers=1, block="standard")
    model = study.build_variant(run)
    assert model.head_dim == 11  # ceil(32 / 3), as in paper Table 3 (E = 33)
    assert model(torch.randn(2, 16, 4)).shape == (2,)
    assert study.build_variant(dict(run, layers=2)).head_dim == 11


def test_standard_two_layer_block_with_zero_weights_is_the_readout_of_the_cls():
    torch.manual_seed(0)
    model = study.StackedModel(n_heads=2, head_dim=16, width=32, n_layers=2)
    with torch.no_grad():
        for layer in model.layers:
            for weight in (layer.W_Q, layer.W_K, layer.W_V, layer.W_O.weight):
                weight.zero_()
        for ffn in model.ffns:
            for parameter in ffn.parameters():
                parameter.zero_()
        x = torch.randn(6, 9, 4)
        expected = model.readout(model.cls).expand(6)                      # F_hat(c_0)
        torch.testing.assert_close(model(x), expected)


def test_standard_block_equals_attention_then_ffn_by_hand():
    torch.manual_seed(1)
    model = study.StackedModel(n_heads=2, head_dim=4, width=16, n_layers=2)
    x = torch.randn(3, 5, 4)
    with torch.no_grad():
        tokens = model.encoder(x)
        cls = model.cls.expand(3, 1, -1)
        streams = torch.cat([tokens, cls], dim=1)
        update, _ = model.layers[0](streams, tokens)
        streams = streams + update
        streams = streams + model.ffns[0](streams)
        final, _ = model.layers[1](streams[:, -1:], streams[:, :-1])
        expected = model.readout((streams[:, -1:] + final).squeeze(1)).squeeze(-1)
        torch.testing.assert_close(model(x), expected)
    attention_only = study.StackedModel(n_heads=2, head_dim=4, width=16, n_layers=2,
                                        block="attention-only")
    assert len(attention_only.ffns) == 0 and attention_only(x).shape == (3,)


def test_one_stacked_layer_is_the_lessons_model():
    """With L = 1 the stacked model draws the lesson's weights in the same order and computes
    eq. 4; the lesson's parameter count counts every FFN with the encoder."""
    x = torch.randn(4, 7, 4)
    torch.manual_seed(3)
    lesson = model_file.MultiHeadModel(n_heads=2, head_dim=4, width=16)
    torch.manual_seed(3)
    stacked = study.StackedModel(n_heads=2, head_dim=4, width=16, n_layers=1)
    with torch.no_grad():
        torch.testing.assert_close(lesson(x), stacked(x))
    two = study.StackedModel(n_heads=2, head_dim=4, width=16, n_layers=2)
    ffn = helpers.count_parameters(two.ffns)
    assert model_file.parameter_counts(two)["paper"] == \
        model_file.parameter_counts(lesson)["paper"] + ffn


def test_the_drop_is_printed_beside_table_3(capsys):
    args = study.config(["--quick", "--total-width", "32", "--heads", "3,4"])  # Table 3
    nmse = {"8": {"3": {"min": 2e-3, "mean": 3e-3}, "4": {"min": 1e-4, "mean": 2e-4}}}
    result = {"nmse": nmse, "knee": engine.knee_of_sweep(nmse, [3, 4], D=4)}
    engine.report_sweep(result, args, study.paper_table(args))
    theirs = engine.PAPER_TABLE_3[3][8] / engine.PAPER_TABLE_3[4][8]
    assert f"min 20x [paper: {theirs:.0f}x]; mean 15x" in capsys.readouterr().out


def test_paper_tables_are_matched_to_their_configuration():
    args = study.config(["--quick", "--total-width", "32", "--D", "3"])
    assert study.paper_table(args) == {"min": study.PAPER_TABLE_4}
    args = study.config(["--quick", "--total-width", "32"])
    assert study.paper_table(args) == {"min": engine.PAPER_TABLE_3}
    args = study.config(["--quick", "--layers", "2", "--total-width", "32"])
    assert study.paper_table(args) == {"min": study.PAPER_TABLE_5}
    args = study.config(["--quick", "--layers", "2", "--total-width", "32",
                         "--block", "attention-only"])
    assert study.paper_table(args) == {}
    assert study.paper_table(study.config([])) == engine.paper_table(model_file.config([]))


def test_every_variant_gets_its_own_file_name(tmp_path):
    def name(*flags):
        args = study.config(["--out", str(tmp_path), *flags])
        return study.variant(args) + plumbing.output_suffix(args, study.PARTS,
                                                            study.VARIANT_FLAGS)
    assert name() == ""
    assert name("--D", "3", "--total-width", "32") == "_D3_E32"
    assert name("--layers", "2", "--total-width", "32", "--T", "8,32") == "_E32_L2_T8-32"
    assert name("--select", "best") == "_best" and name("--steps", "100") == "_steps100"
    assert name("--directions", "random") == "_random_directions"


@pytest.mark.parametrize("flags, flag_name", [
    (["--directions", "diagonal"], "--directions"), (["--layers", "0"], "--layers"),
    (["--block", "none"], "--block"), (["--D", "5"], "--D"), (["--total-width", "0"],
                                                              "--total-width"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("02d_variants", flags, flag_name)


def test_reversal_score_by_hand():
    assert study.reversal_score([1.0, 2.0, 3.0]) == 0.0       # error grows with T
    assert study.reversal_score([3.0, 1.0, 2.0]) == pytest.approx((2 + 1) / 2)
    assert study.reversal_score([1.0, 1.0]) == 0.0


def test_reversal_of_the_papers_table_2_means():
    scores = [study.reversal_score([row[T] for T in sorted(row)])
              for row in model_file.PAPER_TABLE_2.values()]
    assert [round(score, 2) for score in scores] == [0.0, 0.0, 0.06, 5.33, 4.46]
    from_minima = [study.reversal_score([row[T] for T in sorted(row)])
                   for row in engine.PAPER_TABLE_3.values()]
    assert from_minima[:3] == [0.0, 0.0, 0.0] and from_minima[3] > 0  # first at h = D = 4


def test_reversal_scores_from_min_and_mean_of_a_table():
    table = {"8": {"1": {"min": 1.0, "mean": 3.0}}, "32": {"1": {"min": 2.0, "mean": 1.0}}}
    scores = study.reversal_scores(table, [1], [8, 32])
    assert scores == {"from_min": {"1": 0.0}, "from_mean": {"1": 1.0}}


def test_the_largest_drop_is_located_not_assumed(monkeypatch):
    """The largest fall between adjacent h, found per T and statistic, even away from h = D,
    and across a gap in the heads trained (1, 2, 4)."""
    table = {"8": {"1": {"min": 8.0, "mean": 8.0}, "2": {"min": 4.0, "mean": 1.0},
                   "4": {"min": 0.1, "mean": 0.5}}}
    monkeypatch.setattr(study, "read_run", lambda stem: ({"nmse": table}, None))
    assert study.largest_drops(["x"]) == {"x": {"8": {"min": 4, "mean": 2}}}


def test_the_texts_claim_the_largest_drop_of_the_minimum_is_at_the_knee_of_every_run():
    import math
    for stem, by_T in study.largest_drops(study.COMMITTED).items():
        _, flags = study.read_run(stem)
        knee = math.ceil(flags.D / getattr(flags, "layers", 1))
        assert all(at["min"] == knee for at in by_T.values()), stem


def test_the_grid_is_its_two_runs_read_as_one():
    """GRID_RUN holds every T of GRID's two files, each T's numbers as its file has them."""
    numbers, flags = study.read_run(study.GRID_RUN)
    assert flags.T == [8, 16, 32, 64, 128] and flags.lr == 0.003 and flags.batch_size == 256
    for suffix in study.GRID:
        part, part_flags = study.read_run("02_multihead_model" + suffix)
        for T in map(str, part_flags.T):
            assert numbers["nmse"][T] == part["nmse"][T]
            assert numbers["knee"]["ratio"][T] == part["knee"]["ratio"][T]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """One --quick run of the study (it reads the committed runs): (its folder, its JSON)."""
    out = tmp_path_factory.mktemp("02d_variants")
    return out, conftest.run_quick("02d_variants", out)


def test_main_quick(quick):
    out, result = quick
    assert set(result["reversal"]) == set(study.COMMITTED)
    for name, scores in result["reversal"].items():
        if name == study.GRID_RUN:                       # two files read as one: no such key
            continue
        committed = json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))
        if "reversal" in committed:        # the key the older runs carried: the same meaning
            for source, by_h in committed["reversal"].items():
                assert scores[source] == pytest.approx(by_h), (name, source)
    assert [round(result["paper_reversal"]["Table 2 (mean)"][str(h)], 2)
            for h in range(1, 6)] == [0.0, 0.0, 0.06, 5.33, 4.46]
    drawn = {path.name for path in (out / "figures").glob("*.png")}
    assert drawn == {f"02d_variants{suffix}_quick.png" for suffix in study.VARIANTS} | {
        "02_nmse_vs_heads_full_quick.png", "02_reversal_score_full_quick.png"}


def test_a_variant_trains_with_its_flags(tmp_path):
    """Given a variant's flag, the study trains it (here one tiny two-layer run)."""
    result = conftest.run_quick("02d_variants", tmp_path, "--layers", "2", "--heads", "1",
                                "--steps", "20", "--workers", "1")
    assert result["script"] == "further/02d_variants.py"             # the file that ran
    assert set(result["nmse"]["8"]) == {"1"} and result["mechanism"] == {}
    assert result["parameters"]["1"]["paper"] > result["parameters"]["1"]["total"] / 2


SETTINGS_OF_A_RUN = ("T", "heads", "D", "head_dim", "width", "total_width", "layers",
                     "batch_size", "lr", "block", "directions", "select", "seeds", "steps",
                     "n_train", "n_valid", "seed")


@pytest.mark.parametrize("stem, flags", [
    *((f"02d_variants{suffix}", flags) for suffix, flags in study.VARIANTS.items()),
    *((f"02_multihead_model{suffix}", flags) for suffix, flags in
      {**study.GRID, "_steps4000": study.DEFAULTS["_steps4000"]}.items())])
def test_each_named_command_reproduces_its_committed_run(stem, flags, tmp_path):
    """The study (a variant) or lesson 02 (the grid, 4,000 steps) with the flags named trains
    with every setting of the committed file, and names its file as the committed one. The
    lesson's default run is the lesson's own to check."""
    script = study if stem.startswith("02d") else model_file
    args = script.config([*shlex.split(flags), "--out", str(tmp_path)])
    committed = json.loads((RESULTS / f"{stem}.json").read_text(encoding="utf-8"))["config"]
    ran = {**model_file.RECIPE, "directions": model_file.task.DEFAULT_DIRECTIONS,
           "total_width": None, "layers": 1, "block": "standard", "select": "last", **vars(args)}
    for name in SETTINGS_OF_A_RUN:
        if name in committed:              # a run of today's code records no fixed size
            assert ran[name] == committed[name], (stem, name)
    named = (study.variant(args) + plumbing.output_suffix(args, study.PARTS, study.VARIANT_FLAGS)
             if script is study else harness.output_suffix(args))
    assert script.__name__ + named == stem


def test_the_commands_table_names_each_run_with_its_flags():
    text = helpers.script_path("02d_variants").read_text(encoding="utf-8")
    for suffix, flags in study.VARIANTS.items():
        assert f"| `02d_variants{suffix}.json` | `{flags}` |" in text, suffix
    for suffix, flags in {**study.GRID, "_steps4000": study.DEFAULTS["_steps4000"]}.items():
        assert f"| `02_multihead_model{suffix}.json` | `{flags}` |" in text, suffix

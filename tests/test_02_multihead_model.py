"""02_multihead_model.py (and its side studies 02a-02c): eq. 4 against a slow loop, parameter
counts, training, the script."""
import functools
import math

import pytest
import torch

import helpers
import harness
import plumbing
from conftest import assert_rejected, run_script
from engine import lesson02 as engine

model_file = helpers.load_concept("02_multihead_model")
directions = helpers.load_concept("02b_directions_study")


def slow_eq4(model, x):
    """Eq. 4 with loops over the batch, the heads and the tokens (one layer, no options)."""
    layer = model.attention
    outputs = []
    for sequence in x:
        tokens = [model.encoder(token) for token in sequence]              # x_hat(t), each [E]
        heads = []
        for i in range(model.n_heads):
            query = layer.W_Q[i] @ model.cls                                # W_Q,i c_0, [n]
            scores = [model.beta * (query @ (layer.W_K[i] @ token)) for token in tokens]
            total = sum(math.exp(float(s)) for s in scores)
            head = sum(math.exp(float(s)) / total * (layer.W_V[i] @ token)
                       for s, token in zip(scores, tokens))                 # [n]
            heads.append(head)
        concat = torch.cat(heads)                                           # [n h]
        outputs.append(model.readout(model.cls + layer.W_O.weight @ concat))
    return torch.cat(outputs)


@pytest.mark.parametrize("n_heads, head_dim, beta", [(1, 8, 1.0), (3, 4, 1.0), (4, 8, 2.5)])
def test_model_equals_a_slow_loop_of_eq_4(n_heads, head_dim, beta):
    torch.manual_seed(0)
    model = model_file.MultiHeadModel(n_heads=n_heads, head_dim=head_dim, width=16, beta=beta)
    x = torch.randn(3, 7, 4)
    with torch.no_grad():
        torch.testing.assert_close(model(x), slow_eq4(model, x), rtol=1e-4, atol=1e-5)


def test_shapes_and_attention_sums_to_one():
    model = model_file.MultiHeadModel(n_heads=3, head_dim=8, width=32)
    y, weights = model(torch.randn(5, 11, 4), return_attention=True)
    assert y.shape == (5,) and weights.shape == (5, 3, 11)
    torch.testing.assert_close(weights.sum(-1), torch.ones(5, 3))
    assert (weights >= 0).all()


def test_parameter_counts_equal_a_hand_count():
    d, h, n, N = 4, 3, 8, 32
    E = n * h
    model = model_file.MultiHeadModel(token_dim=d, n_heads=h, head_dim=n, width=N)
    encoder = d * N + N + N * E + E
    readout = E * N + N + N * 1 + 1
    attention = 3 * h * n * E + E * E
    assert model_file.parameter_counts(model) == {
        "paper": encoder + readout, "total": encoder + readout + attention + E}


REPRODUCED_STEPS = 50   # enough for the runs to part if anything were unseeded


@functools.lru_cache(maxsize=None)   # the tests below share their 400-step runs
def quick_run(h, D=2, seed=0, steps=400):
    return model_file.train_one(dict(model_file.RECIPE, T=8, h=h, seed=seed, D=D,
                                     directions="gaussian", total_width=None, layers=1,
                                     steps=steps, n_train=2000, n_valid=500, data_seed=0,
                                     device="cpu"))


def test_training_lowers_nmse_and_is_reproducible():
    assert quick_run(h=2)["valid_nmse"] < 0.1  # an untrained model's NMSE is about 1 or more
    short = [quick_run.__wrapped__(h=2, steps=REPRODUCED_STEPS)["valid_nmse"] for _ in range(2)]
    assert short[0] == short[1]                 # two fresh runs of one seed: the same numbers


def test_h_equal_D_is_not_worse_than_h_below_D():
    assert quick_run(h=2, D=2)["valid_nmse"] < quick_run(h=1, D=2)["valid_nmse"]


def test_main_quick(quick_args):
    args = quick_args(model_file, "--D", "2", "--heads", "1,2", "--workers", "2")
    trained, result = engine.sweep(args, model_file.train_one,
                                   engine.base_run(args, model_file.RECIPE))
    assert harness.first_non_finite(result) is None                # every number is finite
    assert set(result["nmse"]["8"]) == {"1", "2"}
    assert result["knee"]["h"] == 2 and result["knee"]["ratio"]["8"] > 1


def test_the_knee_and_its_drop_by_hand():
    table = {"8": {"2": {"min": 1e-2}, "3": {"min": 4e-3}, "4": {"min": 1e-4}}}
    assert engine.knee_of_sweep(table, [2, 3, 4], D=4) == {"h": 4, "ratio": {"8": 40.0}}
    assert engine.knee_of_sweep(table, [2, 3, 4], D=4, layers=2) == {
        "h": 2, "ratio": {}}                                         # h = 1 was not trained
    assert engine.knee_of_sweep(table, [3, 4], D=3) == {"h": 3, "ratio": {}}


def test_the_drop_is_printed_beside_the_papers_of_the_same_statistic(capsys):
    args = model_file.config(["--quick", "--heads", "3,4"])
    nmse = {"8": {"3": {"min": 2e-3, "mean": 3e-3}, "4": {"min": 1e-4, "mean": 2e-4}}}
    result = {"nmse": nmse, "knee": engine.knee_of_sweep(nmse, [3, 4], D=4)}
    engine.report_sweep(result, args, engine.paper_table(args))
    printed = capsys.readouterr().out
    theirs = model_file.PAPER_TABLE_2[3][8] / model_file.PAPER_TABLE_2[4][8]  # Table 2: means
    assert f"min 20x; mean 15x [paper: {theirs:.0f}x]" in printed
    ratio = 1e-4 / engine.PAPER_TABLE_3[4][8]                  # Table 3's min, h = 4 only
    assert f"our min / the paper's: h = 4: {ratio:.0f}x" in printed
    assert f"our mean / the paper's: h = 3: {3e-3 / model_file.PAPER_TABLE_2[3][8]:.1f}x" in printed


def test_the_lessons_drop_at_the_knee_and_its_printout():
    """The lesson's statistic: NMSE(h = D - 1) / NMSE(h = D) per T, of the min or the mean, as
    the printout writes a ratio."""
    nmse = {"8": {"3": {"min": 2e-3, "mean": 3e-3}, "4": {"min": 1e-4, "mean": 2e-4}},
            "32": {"3": {"min": 1e-2, "mean": 1e-2}, "4": {"min": 1e-2, "mean": 5e-3}}}
    assert model_file.drop_at_the_knee(nmse, 4, "min") == pytest.approx({"8": 20, "32": 1})
    assert model_file.drop_at_the_knee(nmse, 4, "mean") == pytest.approx({"8": 15, "32": 2})
    assert model_file.times(15.04) == "15x" and model_file.times(2.04) == "2x"


@pytest.mark.parametrize("flags, flag_name", [
    (["--T", "0"], "--T"), (["--D", "5"], "--D"), (["--heads", "2,0"], "--heads"),
    (["--lr", "nan"], "--lr"), (["--device", "no-such-device"], "--device"),
    (["--T", "8,2048"], "--T"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("02_multihead_model", flags, flag_name)


def test_non_finite_loss_stops_the_script_with_one_line(tmp_path):
    done = run_script("02_multihead_model", "--quick", "--lr", "1e30", "--heads", "1",
                      "--workers", "1", "--device", "cpu", "--out", str(tmp_path))
    assert done.returncode == 1
    assert done.stderr.startswith("stopped: T=8 h=1 seed=0: loss became")
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "results").exists()  # nothing half-written


def test_paper_tables_are_matched_to_their_model():
    """Table 2's means at every h (the same model, n = 8); Table 3's minima only at h = 4,
    where its fixed E = 32 is our n h; none for another D."""
    default = engine.paper_table(model_file.config([]))
    assert default == {"mean": model_file.PAPER_TABLE_2, "min": {4: engine.PAPER_TABLE_3[4]}}
    assert 4 * model_file.HEAD_DIM == 32
    assert engine.paper_table(model_file.config(["--D", "3"])) == {}


def test_summarise_uses_the_sample_std_like_every_file():
    runs = [dict(T=8, h=1, seed=s, valid_nmse=v) for s, v in enumerate([1.0, 2.0, 4.0])]
    entry = engine.summarise(runs)["8"]["1"]
    assert entry == helpers.seed_stats([1.0, 2.0, 4.0])
    assert entry["std"] == pytest.approx(math.sqrt((16 / 9 + 1 / 9 + 25 / 9) / 2))  # n - 1


def test_every_run_of_a_changed_flag_gets_its_own_file_name(tmp_path):
    def name(*flags):
        args = model_file.config(["--out", str(tmp_path), *flags])
        return harness.output_suffix(args)
    assert name() == ""
    assert name("--D", "3") == "_D3" and name("--D", "3", "--steps", "4000") == "_D3_steps4000"
    assert name("--steps", "100") == "_steps100" and name("--lr", "3e-3") == "_lr0.003"
    assert name("--steps", "4000") == "_steps4000"        # results/02_multihead_model_steps4000
    assert name("--full") == "_full" and name("--quick", "--heads", "1") == "_heads1_quick"


def test_directions_study_ratios_and_verdict_on_made_up_runs(quick_args, monkeypatch):
    """No training: run_sweep returns made-up NMSEs, so the ratios to Tables 2 and 3, the
    median |log10 ratio| and the closest reading can be checked by hand."""
    factor = {"orthonormal": 10.0, "random": 3.0, "gaussian": 0.5}    # ours / paper, by design

    def made_up(runs, workers, train, label, cost):
        return [dict(run, valid_nmse=factor[run["directions"]] * model_file.PAPER_TABLE_2[
            run["h"]][run["T"]] * (1 + 0.1 * (run["seed"] - 1))) for run in runs]
    monkeypatch.setattr(plumbing, "run_sweep", made_up)
    args = quick_args(directions, "--seeds", "3")
    result = directions.directions_study(args)
    assert result["steps"] == args.steps * directions.DIRECTION_STEP_FACTOR
    for kind, reading in result["readings"].items():
        rows = {(row["T"], row["h"]): row for row in reading["cells"]}
        assert set(rows) == {(8, 1), (8, 2), (8, 3), (8, 4)}          # --quick: T = 8 only
        for (T, h), row in rows.items():
            assert row["ratios"]["mean / Table 2 mean"] == pytest.approx(factor[kind])
            if h == 4:                                                  # Table 3 at h = 4 only
                expected = factor[kind] * 0.9 * model_file.PAPER_TABLE_2[4][8] / \
                    engine.PAPER_TABLE_3[4][8]
                assert row["ratios"]["min / Table 3 min"] == pytest.approx(expected)
            else:
                assert "min / Table 3 min" not in row["ratios"]
    assert result["readings"]["gaussian"]["median_abs_log10_ratio"] == pytest.approx(
        abs(math.log10(0.5)))
    assert result["closest"] == "gaussian"


def test_directions_study_refuses_flags_it_would_ignore():
    assert_rejected("02b_directions_study", ["--directions", "random"], "--directions")


def test_a_default_lives_in_one_place(tmp_path, monkeypatch):
    """A setting's row is its flag's help, the run's value and the recipe files 03 and 04 read:
    change the row, and all of them follow."""
    monkeypatch.delenv("QUICK", raising=False)
    row = model_file.SETTINGS["lr"]
    assert model_file.RECIPE["lr"] == row.default
    monkeypatch.setitem(model_file.SETTINGS, "lr", row._replace(default=3e-3))
    parser = harness.build_parser(model_file.SETTINGS)
    assert "(default: 0.003)" in next(a.help for a in parser._actions if a.dest == "lr")
    args = model_file.config(["--out", str(tmp_path)])
    assert args.lr == 3e-3 and "lr" not in args.changed               # the default, not a flag
    assert engine.base_run(args, model_file.RECIPE)["lr"] == 3e-3



def test_the_lesson_prints_its_drops_beside_table_2s_means(notebook_run):
    """The quick run (T = 8, h = 1 ... 4, one seed) prints its drop once, with its T and as one
    seed's, and below it Table 2's mean drop at the same T."""
    result = notebook_run("02_multihead_model")
    printed = "".join("".join(o.get("text", "")) for o in notebook_run.outputs["02_multihead_model"])
    ratio = result["nmse"]["8"]["3"]["mean"] / result["nmse"]["8"]["4"]["mean"]
    assert result["drops"]["mean"]["8"] == ratio                          # the printed statistic
    assert f"drop from h = 3 to 4 at T = 8, one seed: {model_file.times(ratio)}\n" in printed
    assert "over seeds" not in printed and "min over" not in printed
    theirs = model_file.PAPER_TABLE_2[3][8] / model_file.PAPER_TABLE_2[4][8]
    assert f"[paper, Table 2's means: {model_file.times(theirs)}]" in printed


def test_best_checkpoint_reads_the_validation_set_only_to_select():
    def run(keep_best):
        helpers.seed_everything(0)
        x = torch.randn(256, 3)
        y = x @ torch.tensor([1.0, -2.0, 0.5]) + torch.sin(3 * x[:, 0])
        model = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.ReLU(),
                                    torch.nn.Linear(16, 1), torch.nn.Flatten(0))
        fit = engine.train_with_checkpoints(model, (x[:200], y[:200]), (x[200:], y[200:]),
                                            steps=300, batch_size=16, lr=3e-2,
                                            evaluate_every=20, keep_best=keep_best)
        return fit
    last, best = run(False), run(True)
    assert last["history"] == best["history"]                 # the same training either way
    assert last["last_valid_nmse"] == best["last_valid_nmse"] == last["valid_nmse"]
    assert best["valid_nmse"] == pytest.approx(min(h["valid_nmse"] for h in best["history"]))
    assert (last["selection"], best["selection"]) == ("last", "best_checkpoint")

"""helpers.py: flags, presets, device, NMSE, training and atomic writing."""
import argparse
import json
import math
import sys
import time

import pytest
import torch

import helpers


def make_parser():
    parser = helpers.make_parser("test")
    parser.add_argument("--T", type=helpers.int_list)
    parser.add_argument("--steps", type=helpers.positive_int)
    return parser


PRESETS = {"quick": {"T": [8], "steps": 1}, "default": {"T": [8, 32], "steps": 10},
           "full": {"T": [8, 32, 128], "steps": 100}}


def test_presets_fill_only_unset_flags(monkeypatch):
    monkeypatch.delenv("QUICK", raising=False)
    assert helpers.config(make_parser(), PRESETS, []).T == [8, 32]
    assert helpers.config(make_parser(), PRESETS, ["--full"]).steps == 100
    args = helpers.config(make_parser(), PRESETS, ["--quick", "--T", "4,5"])
    assert (args.T, args.steps, args.preset) == ([4, 5], 1, "quick")
    monkeypatch.setenv("QUICK", "1")
    assert helpers.config(make_parser(), PRESETS, []).preset == "quick"


@pytest.mark.parametrize("flags, flag_name", [
    (["--T", "0"], "--T"), (["--T", "8,x"], "--T"), (["--steps", "-3"], "--steps"),
    (["--device", "tpu"], "--device"), (["--quick", "--full"], "--full"),
])
def test_bad_flags_exit_2_with_one_line(flags, flag_name, capsys):
    with pytest.raises(SystemExit) as stop:
        helpers.config(make_parser(), PRESETS, flags)
    assert stop.value.code == 2
    message = capsys.readouterr().err
    assert message.count("\n") == 1 and flag_name in message


def test_cuda_without_cuda_is_a_clear_error():
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ValueError, match="no CUDA"):
        helpers.pick_device("cuda")
    assert helpers.pick_device("auto").type == "cpu"


def test_nmse_against_its_definition():
    target = torch.tensor([1.0, 2.0, 4.0, 7.0])
    prediction = torch.tensor([1.5, 2.0, 3.0, 7.5])
    mean = sum(target.tolist()) / 4
    variance = sum((t - mean) ** 2 for t in target.tolist()) / 4
    mse = sum((p - t) ** 2 for p, t in zip(prediction.tolist(), target.tolist())) / 4
    assert helpers.nmse(prediction, target) == pytest.approx(mse / variance)
    assert helpers.nmse(torch.full((4,), mean), target) == pytest.approx(1.0)


def test_count_parameters_by_hand():
    model = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.ReLU(), torch.nn.Linear(5, 1))
    assert helpers.count_parameters(model) == (3 * 5 + 5) + (5 * 1 + 1)


def test_training_lowers_nmse_and_is_reproducible():
    def run():
        helpers.seed_everything(0)
        x = torch.randn(512, 3)
        y = x @ torch.tensor([1.0, -2.0, 0.5]) + torch.sin(x[:, 0])
        model = torch.nn.Sequential(torch.nn.Linear(3, 32), torch.nn.ReLU(),
                                    torch.nn.Linear(32, 1), torch.nn.Flatten(0))
        before = helpers.evaluate_nmse(model, (x[400:], y[400:]))
        result = helpers.train_regression(model, (x[:400], y[:400]), (x[400:], y[400:]),
                                          steps=300, batch_size=64, lr=1e-2)
        return before, result["valid_nmse"]
    before, after = run()
    assert after < 0.2 * before
    assert run()[1] == after


def test_non_finite_loss_stops_training_with_the_run_name():
    model = torch.nn.Sequential(torch.nn.Linear(1, 1), torch.nn.Flatten(0))
    x, y = torch.ones(8, 1), torch.full((8,), math.nan)
    with pytest.raises(helpers.NonFiniteLoss, match="h=3 T=8"):
        helpers.train_regression(model, (x, y), (x, y), steps=5, batch_size=4, lr=1e-3,
                                 name="h=3 T=8")


def test_save_results_is_atomic_and_complete(tmp_path):
    args = helpers.config(make_parser(), PRESETS, ["--quick", "--out", str(tmp_path)])
    path = helpers.save_results("00_test", {"answer": 42}, args, wall_time_s=1.234)
    payload = json.loads(path.read_text())
    assert payload["answer"] == 42 and payload["wall_time_s"] == 1.23
    assert payload["config"]["T"] == [8] and payload["device"] and payload["torch_version"]
    assert [p.name for p in path.parent.iterdir()] == ["00_test.json"]  # no temporary left


def test_load_concept_imports_a_numbered_file():
    module = helpers.load_concept("01_retrieval_task")
    assert module is helpers.load_concept("01_retrieval_task")
    assert hasattr(module, "main")


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_save_results_refuses_non_finite_numbers_naming_the_key(tmp_path, bad):
    args = helpers.config(make_parser(), PRESETS, ["--quick", "--out", str(tmp_path)])
    numbers = {"nmse": {"8": {"1": {"seeds": [0.1, bad]}}}}
    with pytest.raises(ValueError, match=r"\['nmse'\]\['8'\]\['1'\]\['seeds'\]\[1\]"):
        helpers.save_results("00_test", numbers, args, wall_time_s=1.0)
    assert not list((tmp_path / "results").glob("*.json"))


def test_run_main_stops_on_a_non_finite_result_with_one_line():
    with pytest.raises(SystemExit) as stop:
        helpers.run_main(lambda args: {"gain": [1.0, math.nan]}, None)
    assert stop.value.code.startswith("stopped: the result result['gain'][1] is nan")
    assert "\n" not in stop.value.code
    assert helpers.run_main(lambda args: {"gain": [1.0, 2]}, None)[0] == {"gain": [1.0, 2]}


def test_non_finite_data_and_divergence_get_different_messages():
    model = torch.nn.Sequential(torch.nn.Linear(1, 1), torch.nn.Flatten(0))
    x = torch.ones(8, 1)
    with pytest.raises(helpers.NonFiniteLoss, match="training data hold NaN") as stop:
        helpers.train_regression(model, (x, torch.full((8,), math.nan)), (x, torch.ones(8)),
                                 steps=5, batch_size=4, lr=1e-3, name="run")
    assert "--lr" not in str(stop.value)  # the data, not the learning rate, is at fault
    with pytest.raises(helpers.NonFiniteLoss, match=r"run: loss became \w+ at step \d+ .*--lr"):
        helpers.train_regression(model, (x, torch.ones(8)), (x, torch.ones(8)), steps=50,
                                 batch_size=4, lr=1e30, name="run")


@pytest.mark.parametrize("text", ["", ",", "8,", "8,,16", " , 8"])
def test_lists_with_empty_items_are_refused(text):
    with pytest.raises(argparse.ArgumentTypeError, match="without empty items"):
        helpers.int_list(text)
    with pytest.raises(argparse.ArgumentTypeError, match="without empty items"):
        helpers.float_list(text)


def test_seed_range_and_sizes_of_one_sample(tmp_path, capsys):
    assert helpers.seed_int("0") == 0 and helpers.seed_int(str(2**32 - 1)) == 2**32 - 1
    for text in ("-1", str(2**32), "1.5"):
        with pytest.raises(argparse.ArgumentTypeError):
            helpers.seed_int(text)
    parser = helpers.make_parser("test")
    helpers.add_training_flags(parser)
    with pytest.raises(SystemExit) as stop:
        helpers.config(parser, PRESETS, ["--n-valid", "1", "--out", str(tmp_path)])
    assert stop.value.code == 2
    assert capsys.readouterr().err.count("smallest accepted: 2 ") == 1


def test_out_that_is_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "a-file").write_text("")
    for out in (tmp_path / "a-file", tmp_path / "a-file" / "below"):
        with pytest.raises(SystemExit):
            helpers.config(make_parser(), PRESETS, ["--out", str(out)])
        assert "--out" in capsys.readouterr().err


def test_batches_drawn_at_once_equal_one_draw_per_step():
    seen = []

    class Recorder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.zeros(1))

        def forward(self, x):
            seen.append(x[:, 0].long().clone())
            return x[:, 0] * self.weight

    x = torch.arange(50, dtype=torch.float32).unsqueeze(1)                 # x[i] = i
    helpers.train_regression(Recorder(), (x, x[:, 0]), (x, x[:, 0]), steps=7, batch_size=5,
                             lr=1e-3, seed=3)
    generator = torch.Generator().manual_seed(3)
    per_step = [torch.randint(50, (5,), generator=generator) for _ in range(7)]
    assert all(torch.equal(a, b) for a, b in zip(seen[:7], per_step))


@pytest.mark.parametrize("bad_step", [0, 37, 99, 100, 249])
def test_loss_log_names_the_first_non_finite_step(bad_step):
    log = helpers.LossLog(250, "cpu", "run", 1e-2)
    with pytest.raises(helpers.NonFiniteLoss, match=f"loss became nan at step {bad_step} "):
        for step in range(250):
            log.record(step, torch.tensor(math.nan if step >= bad_step else 1.0))
    log = helpers.LossLog(250, "cpu", "run", 1e-2)
    for step in range(250):
        log.record(step, torch.tensor(1.0))                                   # no false alarm


def test_best_checkpoint_reads_the_validation_set_only_to_select():
    def run(keep_best):
        helpers.seed_everything(0)
        x = torch.randn(256, 3)
        y = x @ torch.tensor([1.0, -2.0, 0.5]) + torch.sin(3 * x[:, 0])
        model = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.ReLU(),
                                    torch.nn.Linear(16, 1), torch.nn.Flatten(0))
        fit = helpers.train_regression(model, (x[:200], y[:200]), (x[200:], y[200:]), steps=300,
                                       batch_size=16, lr=3e-2, evaluate_every=20,
                                       keep_best=keep_best)
        return fit
    last, best = run(False), run(True)
    assert last["history"] == best["history"]                 # the same training either way
    assert last["last_valid_nmse"] == best["last_valid_nmse"] == last["valid_nmse"]
    assert best["valid_nmse"] == pytest.approx(min(h["valid_nmse"] for h in best["history"]))
    assert (last["selection"], best["selection"]) == ("last", "best_checkpoint")


def test_cli_argv_ignores_a_kernel_s_arguments_but_not_an_imported_ipykernel(monkeypatch):
    import ipykernel  # noqa: F401 — imported by a test process, which is still not a kernel
    monkeypatch.setattr(sys, "argv", ["/x/01_retrieval_task.py", "--quick"])
    assert helpers.cli_argv() == ["--quick"]
    monkeypatch.setattr(sys, "argv", ["/venv/lib/ipykernel_launcher.py", "-f", "k.json"])
    assert helpers.cli_argv() == []


def test_seed_stats_by_hand():
    entry = helpers.seed_stats([1.0, 2.0, 4.0])
    assert entry["seeds"] == [1.0, 2.0, 4.0] and entry["min"] == 1.0
    assert entry["mean"] == pytest.approx(7 / 3)
    assert entry["std"] == pytest.approx(math.sqrt(((1 - 7 / 3) ** 2 + (2 - 7 / 3) ** 2
                                                    + (4 - 7 / 3) ** 2) / 2))
    assert helpers.seed_stats([0.5])["std"] == 0.0


def wait_and_echo(run):
    """A stand-in for training: sleeps run["wait"] seconds, returns the run."""
    time.sleep(run["wait"])
    return dict(run)


@pytest.mark.parametrize("workers", [1, 2])
def test_run_sweep_returns_results_in_the_order_of_its_runs(workers, capsys):
    """The runs start costliest first and finish in any order; the results come back in the
    order they were given (so per-seed lists in the JSON do not depend on scheduling)."""
    waits = [0.0, 0.3, 0.0, 0.2, 0.1]
    runs = [dict(T=1, steps=i, wait=wait, device="cpu", index=i) for i, wait in enumerate(waits)]
    results = helpers.run_sweep(runs, workers, wait_and_echo, lambda r: str(r["index"]))
    assert [r["index"] for r in results] == list(range(len(runs)))
    printed = [line.split()[1] for line in capsys.readouterr().out.splitlines()]
    assert sorted(printed) == [str(i) for i in range(len(runs))]      # one line per run

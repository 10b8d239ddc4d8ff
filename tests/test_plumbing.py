"""harness.py's run machinery (the settings table, presets, refusals, parts, file names, the
run's files, the sweeps) and plumbing.py's replays and input hashes."""
import argparse
import functools
import json
import math
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import conftest
import helpers
import harness
import plumbing
from harness import Setting

SETTINGS = {"T": Setting([8, 32], [8], [8, 32, 128], harness.int_list, "lengths"),
            "steps": Setting(10, 1, 100, harness.positive_int, "steps"),
            "lr": Setting(1e-2, ..., ..., harness.positive_float, "rate")}
PARTS = {"a": (), "b": ("a",), "c": ()}


def config(*flags, **keywords):
    return plumbing.config(SETTINGS, list(flags), "test", PARTS, **keywords)


def test_presets_fill_only_unset_flags(monkeypatch):
    monkeypatch.delenv("QUICK", raising=False)
    assert config().T == [8, 32] and config("--full").steps == 100
    args = config("--quick", "--T", "4,5")
    assert (args.T, args.steps, args.lr, args.preset) == ([4, 5], 1, 1e-2, "quick")
    monkeypatch.setenv("QUICK", "1")
    assert config().preset == "quick"


def test_a_row_is_its_flag_and_its_help_names_each_preset():
    parser = harness.build_parser(SETTINGS, "test", PARTS)
    helps = {action.dest: action.help for action in parser._actions}
    assert helps["T"] == "lengths (default: 8,32; --quick: 8; --full: 8,32,128)"
    assert helps["lr"] == "rate (default: 0.01)"                       # the same in every preset


@pytest.mark.parametrize("flags, flag_name", [
    (["--T", "0"], "--T"), (["--T", "8,x"], "--T"), (["--steps", "-3"], "--steps"),
    (["--device", "tpu"], "--device"), (["--quick", "--full"], "--full"),
    (["--parts", "x"], "--parts"), (["--parts", "a,,b"], "--parts"), (["--parts", ""], "--parts"),
])
def test_bad_flags_exit_2_with_one_line(flags, flag_name, capsys):
    with pytest.raises(SystemExit) as stop:
        config(*flags)
    assert stop.value.code == 2
    message = capsys.readouterr().err
    assert message.count("\n") == 1 and flag_name in message


def test_cuda_without_cuda_is_a_clear_error():
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ValueError, match="no CUDA"):
        harness.pick_device("cuda")
    assert harness.pick_device("auto") == "cpu"


@pytest.mark.parametrize("text", ["", ",", "8,", "8,,16", " , 8"])
def test_lists_with_empty_items_are_refused(text):
    with pytest.raises(argparse.ArgumentTypeError, match="without empty items"):
        harness.int_list(text)
    with pytest.raises(argparse.ArgumentTypeError, match="without empty items"):
        harness.float_list(text)


def test_seed_range_and_sizes_of_one_sample(tmp_path, capsys):
    assert harness.seed_int("0") == 0 and harness.seed_int(str(2**32 - 1)) == 2**32 - 1
    for text in ("-1", str(2**32), "1.5"):
        with pytest.raises(argparse.ArgumentTypeError):
            harness.seed_int(text)
    settings = {**SETTINGS, "n_valid": Setting(10, ..., ..., harness.positive_int, "n")}
    with pytest.raises(SystemExit) as stop:
        harness.config(settings, ["--n-valid", "1", "--out", str(tmp_path)])
    assert stop.value.code == 2
    assert capsys.readouterr().err.count("smallest accepted: 2 ") == 1


def test_out_that_is_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    for out in (tmp_path / "a-file", tmp_path / "a-file" / "below"):
        with pytest.raises(SystemExit):
            config("--out", str(out))
        assert "--out" in capsys.readouterr().err


def test_parts_run_only_what_they_name_with_what_they_need():
    assert config().parts == ["a", "b", "c"]
    assert config("--parts", "c,a").parts == ["a", "c"]                 # the file's order
    assert config("--parts", "b").parts == ["a", "b"]                   # b needs a


def test_file_names_say_what_differs_from_the_default_run(monkeypatch):
    monkeypatch.delenv("QUICK", raising=False)

    def suffix(*flags, named=()):
        return plumbing.output_suffix(config(*flags), PARTS, named)
    assert suffix() == ""
    assert suffix("--device", "cpu") == "" and suffix("--workers", "1") == ""  # where, not what
    assert suffix("--steps", "10") == ""                                # the preset's value
    assert suffix("--steps", "100", "--T", "8,64") == "_T8-64_steps100"  # the table's order
    assert suffix("--lr", "3e-3", "--seed", "2") == "_seed2_lr0.003"
    assert suffix("--steps", "100", named=("steps",)) == ""
    assert suffix("--full") == "_full" and suffix("--quick") == "_quick"
    assert suffix("--parts", "c") == "_parts_c" and suffix("--parts", "b") == "_parts_a_b"


def test_save_results_is_atomic_and_complete(tmp_path):
    args = config("--quick", "--out", str(tmp_path))
    path = harness.save_results("00_test", {"answer": 42}, args, wall_time_s=1.234)
    payload = json.loads(path.read_text(encoding="utf-8"))
    assert payload["answer"] == 42 and payload["wall_time_s"] == 1.23
    assert payload["config"]["T"] == [8] and payload["device"] and payload["torch_version"]
    assert [p.name for p in path.parent.iterdir()] == ["00_test.json"]  # no temporary left


def test_provenance_names_the_commit_and_a_dirty_tree(tmp_path):
    """Clean: its commit, not dirty; a tracked file changed: dirty; a new untracked file or a
    changed committed result (a run's own outputs) does not make it dirty; outside git: None.
    The machine always."""
    root, commit = conftest.git_tree(tmp_path)
    (root / "results").mkdir()
    (root / "results" / "old.json").write_text("{}", encoding="utf-8")
    subprocess.run(["git", "add", "results"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m",
                    "r"], cwd=root, check=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                            text=True, encoding="utf-8").stdout.strip()
    harness.provenance.cache_clear()
    clean = harness.provenance(root)
    assert clean["commit"] == commit and clean["dirty"] is False
    (root / "results.json").write_text("{}", encoding="utf-8")
    (root / "results" / "old.json").write_text('{"rerun": 1}', encoding="utf-8")
    harness.provenance.cache_clear()
    assert harness.provenance(root)["dirty"] is False
    (root / "a.py").write_text("x = 2\n", encoding="utf-8")
    harness.provenance.cache_clear()
    assert harness.provenance(root)["dirty"] is True
    outside = tmp_path / "not_git"
    outside.mkdir()
    harness.provenance.cache_clear()
    alone = harness.provenance(outside)
    assert alone["commit"] is None and alone["dirty"] is None
    assert alone["machine"]["cpu"] and alone["machine"]["cores"] >= 1
    assert alone["machine"]["cpu_capability"]              # AVX2, AVX512, ...: torch's kernels
    harness.provenance.cache_clear()


def test_every_run_records_its_provenance(tmp_path, monkeypatch):
    monkeypatch.setattr(plumbing, "REPLAYED", {})        # a run that replays nothing
    args = config("--quick", "--out", str(tmp_path))
    written = harness.save_results("00_test", {}, args, 1.0)
    payload = json.loads(written.read_text(encoding="utf-8"))
    record = payload["provenance"]
    assert {key: record[key] for key in harness.provenance()} == harness.provenance()
    assert len(record["commit"]) == 40                              # this checkout's commit
    assert record["versions"]["torch"] == torch.__version__ and "python" in record["versions"]


def test_a_run_records_its_command_its_start_and_every_library_it_imported(tmp_path,
                                                                           monkeypatch):
    """The command as typed (the script from the repository's root, then its flags), the UTC
    time it started, and the version of each library imported by then, by its pip name."""
    monkeypatch.setattr(plumbing, "REPLAYED", {})
    args = harness.config({}, ["--out", str(tmp_path), "--device", "cpu", "--seed", "3"])
    run = plumbing.Run("06_allocation", args)
    import sklearn
    record = json.loads(run.finish().read_text(encoding="utf-8"))["provenance"]
    assert record["command"] == (f"python 06_allocation.py --out {shlex.quote(str(tmp_path))} "
                                 f"--device cpu --seed 3")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", record["started"])
    assert record["versions"]["scikit-learn"] == sklearn.__version__
    assert "argv" not in json.loads(run.finish().read_text(encoding="utf-8"))["config"]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_save_results_refuses_non_finite_numbers_naming_the_key(tmp_path, bad):
    args = config("--quick", "--out", str(tmp_path))
    numbers = {"nmse": {"8": {"1": {"seeds": [0.1, bad]}}}}
    with pytest.raises(ValueError, match=r"\['nmse'\]\['8'\]\['1'\]\['seeds'\]\[1\]"):
        harness.save_results("00_test", numbers, args, wall_time_s=1.0)
    assert not list((tmp_path / "results").glob("*.json"))


def test_a_run_stops_on_a_non_finite_result_with_one_line(tmp_path):
    run = plumbing.Run("00_test", config("--quick", "--out", str(tmp_path)))
    with pytest.raises(SystemExit) as stop:
        run.record({"gain": [1.0, math.nan]})
    assert stop.value.code.startswith("stopped: the result result['gain'][1] is nan")
    assert "\n" not in stop.value.code
    assert run.record({"gain": [1.0, 2]}) == {"gain": [1.0, 2]}
    written = json.loads(run.finish().read_text(encoding="utf-8"))
    assert written["gain"] == [1.0, 2] and written["script"] == "00_test.py"


def test_replay_reads_the_numbers_of_a_committed_run(tmp_path, capsys):
    run = plumbing.Run("00_test", config("--out", str(tmp_path)))
    run.record({"rows": [1, 2]})
    path = run.finish()
    assert plumbing.replay(path) == {"rows": [1, 2]}
    assert "replaying" in capsys.readouterr().out


def test_a_replay_s_analysis_is_a_file_of_its_own(tmp_path):
    """A new analysis of a committed run is written beside it, never over it."""
    first = plumbing.Run("00_test", config("--full", "--out", str(tmp_path)))
    first.record({"rows": [1, 2]})
    committed = first.finish()
    before = committed.read_bytes()
    args = config("--full", "--out", str(tmp_path))
    args.replay = committed
    again = plumbing.Run("00_test", args)
    again.record({"sum": sum(plumbing.replay(committed)["rows"])})
    written = again.finish_analysis()
    assert written.name == "00_test_analysis_of_00_test_full.json"
    assert json.loads(written.read_text(encoding="utf-8"))["sum"] == 3
    assert committed.read_bytes() == before


def test_a_replay_records_each_file_it_read_and_whether_it_is_the_committed_one(tmp_path,
                                                                              monkeypatch):
    """A run that replays committed results names each file it read with its sha256 and whether
    it is as committed; an edited copy is not, and then the run is dirty (the code's check alone
    leaves results/ out)."""
    import hashlib
    committed = conftest.ROOT / "results" / "03b_uniqueness.json"
    edited = tmp_path / "03b_uniqueness.json"
    edited.write_text(committed.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    for source, shown, as_committed in ((committed, "results/03b_uniqueness.json", True),
                                        (edited, str(edited), False)):
        monkeypatch.setattr(plumbing, "REPLAYED", {})
        run = plumbing.Run("00_test", config("--out", str(tmp_path / "out")))
        run.record({"rows": len(plumbing.replay(source)["corollary"])})
        record = json.loads(run.finish().read_text(encoding="utf-8"))["provenance"]
        assert record["inputs"] == {shown: {
            "sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
            "as_committed": as_committed}}
        if not as_committed:
            assert record["dirty"] is True


def test_paths_are_recorded_from_the_repository_s_root_whatever_the_folder_a_run_starts_in(
        tmp_path, monkeypatch):
    """A path in the settings table is read from the repository's root, a typed one from the
    folder the command runs in; the results file records both from the root, with the file the
    run read among its inputs (a notebook runs in notebooks/)."""
    settings = {"lesson_run": Setting(Path("results/06_allocation.json"), ..., ..., Path, "")}
    monkeypatch.chdir(conftest.ROOT / "notebooks")
    for flags in ([], ["--lesson-run", "../results/06_allocation.json"]):
        args = harness.config(settings, [*flags, "--out", str(tmp_path)], "test")
        assert args.lesson_run == conftest.ROOT / "results" / "06_allocation.json"
        assert args.changed == []                       # the same file, typed or not
        run = plumbing.Run("00_test", args)
        run.record({"seeds": plumbing.read_input(args.lesson_run)["config"]["seeds"]})
        written = json.loads(run.finish().read_text(encoding="utf-8"))
        assert written["config"]["lesson_run"] == "results/06_allocation.json"
        assert list(written["provenance"]["inputs"]) == ["results/06_allocation.json"]


def test_cli_argv_ignores_a_kernel_s_arguments_but_not_an_imported_ipykernel(monkeypatch):
    import ipykernel  # noqa: F401 — imported by a test process, which is still not a kernel
    monkeypatch.setattr(sys, "argv", ["/x/01_retrieval_task.py", "--quick"])
    assert harness.cli_argv() == ["--quick"]
    monkeypatch.setattr(sys, "argv", ["/venv/lib/ipykernel_launcher.py", "-f", "k.json"])
    monkeypatch.delenv("ARGS", raising=False)
    assert harness.cli_argv() == []
    monkeypatch.setenv("ARGS", "--replay 'a b.json'")                 # a notebook's flags
    assert harness.cli_argv() == ["--replay", "a b.json"]


def wait_and_echo(run):
    """A stand-in for training: sleeps run["wait"] seconds, returns the run."""
    time.sleep(run["wait"])
    return dict(run)


@pytest.mark.parametrize("workers", [1, 2])
def test_run_sweep_returns_results_in_the_order_of_its_runs(workers, capsys):
    """The runs start costliest first and finish in any order; the results come back in the
    order they were given (so per-seed lists in the JSON do not depend on scheduling)."""
    waits = [0.0, 0.3, 0.0, 0.2, 0.1]
    runs = [dict(wait=wait, device="cpu", index=i) for i, wait in enumerate(waits)]
    results = plumbing.run_sweep(runs, workers, wait_and_echo, lambda r: str(r["index"]),
                                 cost=lambda r: r["wait"])
    assert [r["index"] for r in results] == list(range(len(runs)))
    printed = [line.split()[1] for line in capsys.readouterr().out.splitlines()
               if line.startswith("[")]                  # after the line naming the path
    assert sorted(printed) == [str(i) for i in range(len(runs))]      # one line per run


@pytest.mark.parametrize("workers", [1, 2])
def test_run_sweep_with_groups_prints_one_line_per_group_when_its_last_run_ends(workers, capsys):
    """With group, one line per group, label(the group's results, in the runs' order), printed
    once all of them are in; the results still come back in the order of the runs."""
    waits = [0.2, 0.0, 0.1, 0.0, 0.3]
    runs = [dict(wait=wait, device="cpu", index=i, kind="ab"[i % 2]) for i, wait in enumerate(waits)]
    results = plumbing.run_sweep(
        runs, workers, wait_and_echo,
        lambda group: f"{group[0]['kind']}: " + ",".join(str(r["index"]) for r in group),
        cost=lambda r: r["wait"], group=lambda r: r["kind"])
    assert [r["index"] for r in results] == list(range(len(runs)))
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[")]
    assert len(lines) == 2
    shown = sorted(line.split("] ")[1].split("  (")[0] for line in lines)
    assert shown == ["a: 0,2,4", "b: 1,3"]
    assert lines[-1].startswith("[2/2]")


@pytest.mark.parametrize("workers", [1, 2])
def test_a_lesson_s_sweep_prints_one_line_saying_where(workers, capsys):
    """harness.run_sweep: no line before, one when its last run ends, with the count and where
    the runs trained; plumbing's with group alone adds a line per group with its count."""
    runs = [dict(wait=0.0, device="cpu", index=i, kind="ab"[i % 2]) for i in range(4)]
    harness.run_sweep(runs, workers, wait_and_echo)
    lines = capsys.readouterr().out.splitlines()
    where = "in 2 worker processes (joblib)" if workers == 2 else "one after another in this"
    assert len(lines) == 1
    assert lines[0].startswith("4 runs trained ") and where in lines[0]
    plumbing.run_sweep(runs, workers, wait_and_echo, group=lambda run: run["kind"])
    lines = capsys.readouterr().out.splitlines()
    assert sorted(line.split("] ")[1].split("  (")[0] for line in lines[:-1]) == \
        ["a: 2 runs trained", "b: 2 runs trained"]
    assert lines[-1].startswith("4 runs trained ")


def test_printed_paths_hold_no_machine_prefix():
    assert harness.shown_path(helpers.ROOT / "runs" / "results" / "x.json") == \
        "runs/results/x.json"


def test_provenance_is_read_when_a_run_starts(tmp_path):
    """A run records the commit and dirty state of the code it started with: an edit or a commit
    made while it trains does not change what its JSON will say."""
    harness.provenance.cache_clear()
    args = harness.config({}, ["--out", str(tmp_path), "--device", "cpu"])
    plumbing.Run("x", args)
    at_start = len(harness.provenance.cache)
    harness.provenance.cache_clear()
    assert at_start == 1


def a_notebook_function(code):
    """A function defined as a notebook's cell defines it: in __main__, with no file to import
    it from (cloudpickle sends it to the workers by value)."""
    namespace = {"__name__": "__main__"}
    exec(code, namespace)
    return namespace["train"]


def test_a_notebook_s_function_trains_in_worker_processes_on_one_thread_each():
    """What used to fall back to one process where spawn starts them (Windows, macOS): a
    function defined in a notebook goes to joblib's worker processes, each run on one torch
    thread; with one worker it trains here, on one thread; this process's thread count is
    left as it was."""
    train = a_notebook_function("import os, torch\n"
                                "def train(run):\n"
                                "    return {'pid': os.getpid(), 'threads': torch.get_num_threads()}")
    threads = torch.get_num_threads()
    torch.set_num_threads(2)   # the suite runs on one thread (conftest): two, so that one shows
    try:
        runs = [dict(device="cpu", index=i) for i in range(4)]
        results = harness.run_sweep(runs, 2, train, cost=lambda r: 1)
        assert {r["threads"] for r in results} == {1}
        assert os.getpid() not in {r["pid"] for r in results}
        here = harness.run_sweep(runs, 1, train, cost=lambda r: 1)
        assert {r["pid"] for r in here} == {os.getpid()} and {r["threads"] for r in here} == {1}
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)


def fail_at_two(run):
    """A stand-in for training that raises on the run with index 2."""
    if run["index"] == 2:
        raise ValueError("no data for this run")
    return dict(run)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_run_that_raises_ends_the_sweep_naming_the_run(workers):
    runs = [dict(device="cpu", index=i) for i in range(4)]
    with pytest.raises(harness.SweepFailed, match="the run index=2 raised ValueError: no data"):
        harness.run_sweep(runs, workers, fail_at_two, cost=lambda r: 1)


def stops_in_one_line(runs, train):
    """What run_sweep says when its sweep stops (SweepFailed on 2 workers), checked to be one
    line said within a minute."""
    started = time.perf_counter()
    with pytest.raises(harness.SweepFailed) as failed:
        harness.run_sweep(runs, 2, train, cost=lambda r: 1)
    assert time.perf_counter() - started < 60
    said = str(failed.value)
    assert "\n" not in said, said
    return said


def test_a_worker_that_dies_ends_the_sweep_in_one_line_naming_a_run_left_unfinished():
    train = a_notebook_function("import os\n"
                                "def train(run):\n"
                                "    os._exit(3)")
    runs = [dict(device="cpu", index=i) for i in range(3)]
    assert "3 runs unfinished, among them index=" in stops_in_one_line(runs, train)


def test_a_diverging_loss_in_a_worker_keeps_its_own_message():
    train = a_notebook_function("import helpers\n"
                                "def train(run):\n"
                                "    raise helpers.NonFiniteLoss('T=8 h=2: the loss is nan')")
    runs = [dict(device="cpu", index=0), dict(device="cpu", index=1)]
    with pytest.raises(helpers.NonFiniteLoss, match="T=8 h=2: the loss is nan"):
        harness.run_sweep(runs, 2, train, cost=lambda r: 1)


def test_the_results_file_says_where_its_sweeps_ran(tmp_path, monkeypatch):
    monkeypatch.setattr(plumbing, "REPLAYED", {})
    args = harness.config({}, ["--out", str(tmp_path), "--device", "cpu"])
    run = plumbing.Run("00_test", args)
    harness.run_sweep([dict(device="cpu", index=0, wait=0)], 1, wait_and_echo, cost=len)
    record = json.loads(run.finish().read_text(encoding="utf-8"))["provenance"]
    assert record["sweeps"] == ["this process, one thread"]


def test_a_progress_bar_only_where_it_can_redraw(monkeypatch):
    """Captured output (the tests, a file) gets the lines alone; TQDM_DISABLE=1 keeps the bar
    out of a notebook executed to be committed."""
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    assert not harness.live_output()                    # pytest captures stderr
    monkeypatch.setattr(harness, "in_notebook", lambda: True)
    assert harness.live_output()
    monkeypatch.setenv("TQDM_DISABLE", "1")
    assert not harness.live_output()


def test_a_fresh_interpreter_sees_no_import_of_this_process_and_runs_once(monkeypatch):
    """pytest is imported here, not there; a second call with the same code and arguments
    returns the first call's output without starting another interpreter."""
    code = "import sys; print('pytest' in sys.modules, sys.argv[1:])"
    plumbing.fresh_interpreter.cache_clear()
    assert plumbing.fresh_interpreter(code, "a", "b") == "False ['a', 'b']\n"
    monkeypatch.setattr(plumbing.subprocess, "run", None)         # would raise if called
    assert plumbing.fresh_interpreter(code, "a", "b") == "False ['a', 'b']\n"


def test_a_numbered_file_that_no_worker_can_import_goes_to_the_workers_by_value(tmp_path):
    """A file loaded as helpers.load_concept loads one (by its path, under a name `import`
    refuses, from a folder not on sys.path, as further/ is for a test or a notebook) still
    trains in joblib's workers: its functions travel by value."""
    import importlib.util
    (tmp_path / "09z_probe.py").write_text("def train(run):\n    return {'twice': 2 * run['index']}\n",
                                           encoding="utf-8")
    spec = importlib.util.spec_from_file_location("09z_probe", tmp_path / "09z_probe.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["09z_probe"] = module
    try:
        spec.loader.exec_module(module)
        runs = [dict(device="cpu", index=index) for index in range(3)]
        results = harness.run_sweep(runs, 2, module.train, cost=lambda r: 1)
    finally:
        del sys.modules["09z_probe"]
    assert [r["twice"] for r in results] == [0, 2, 4]


def test_cached_computes_once_per_arguments():
    calls = []

    @harness.cached
    def square(x):
        calls.append(x)
        return x * x

    assert [square(3), square(3), square(4)] == [9, 9, 16] and calls == [3, 4]
    square.cache_clear()
    assert square(3) == 9 and calls == [3, 4, 3]

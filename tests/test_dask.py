"""Sweeps on a Dask cluster (`--scheduler ADDRESS`, or $DASK_SCHEDULER in a notebook), started as
a researcher starts one: `dask scheduler` and `dask worker`, Dask's own commands, as processes of
their own, in a folder outside the checkout and without it on their path. A lesson's and a
study's quick sweep give there the numbers they give in joblib's worker processes, and the
results file names the machine of each run; a worker killed mid-run leaves its run to another;
every worker gone, or the scheduler gone, ends the sweep in one line within its bound; a bad
address, or a GPU asked of a cluster, is refused in one line; the README's Slurm example renders
the job script it says (dask-jobqueue writes it without Slurm).

requirements-cluster.txt installs Dask and dask-jobqueue; CI installs them too."""
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

import cluster as dask_path
import conftest
import helpers
import harness
from test_plumbing import stops_in_one_line
from test_simulated_os import numbers_of

distributed = pytest.importorskip("distributed")
psutil = pytest.importorskip("psutil")        # Dask's own requirement

STARTS_WITHIN_S = 60      # a scheduler or worker process that has not started by then fails


class Cluster:
    """A scheduler and its workers, each a `python -m dask ...` process (the `dask` command) in
    `folder`, with the repository on no path of theirs."""

    def __init__(self, folder):
        self.folder, self.workers = folder, []
        address_file = folder / "scheduler.json"
        self.scheduler = self.start("scheduler", "--host", "127.0.0.1", "--port", "0",
                                    "--no-dashboard", "--scheduler-file", str(address_file))
        self.address = json.loads(waited_for(address_file).read_text(encoding="utf-8"))["address"]

    def start(self, *command):
        environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
        log = open(self.folder / f"{command[0]}.log", "a", encoding="utf-8")
        with log:
            return subprocess.Popen([sys.executable, "-m", "dask", *command], cwd=self.folder,
                                    env=environment, stdout=log, stderr=subprocess.STDOUT)

    def add_workers(self, count=1):
        """More workers of one thread, each a process of its own, started together; returns
        when the scheduler counts them."""
        expected = len(self.running_workers()) + count
        self.workers += [self.start("worker", self.address, "--nthreads", "1", "--nworkers", "1",
                                    "--no-dashboard") for _ in range(count)]
        client = distributed.Client(self.address, timeout="20s", set_as_default=False)
        with client:
            client.wait_for_workers(expected, timeout=STARTS_WITHIN_S)

    def running_workers(self):
        return [worker for worker in self.workers if worker.poll() is None]

    def close(self):
        for process in [*self.workers, self.scheduler]:
            kill(process)


def kill(process):
    """Kill a process and what it started (a worker's nanny starts the worker)."""
    with contextlib.suppress(psutil.NoSuchProcess):
        for child in psutil.Process(process.pid).children(recursive=True):
            with contextlib.suppress(psutil.NoSuchProcess):
                child.kill()
    process.kill()
    process.wait(timeout=STARTS_WITHIN_S)


def waited_for(path):
    deadline = time.monotonic() + STARTS_WITHIN_S
    while not path.exists() or not path.read_text(encoding="utf-8").strip():
        assert time.monotonic() < deadline, f"{path.name} was not written"
        time.sleep(0.1)
    return path


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A scheduler and two workers of one thread each, on 127.0.0.1, started from a folder
    outside the checkout. Afterwards this process's client is let go and every process killed,
    so that the next tests' sweeps train here."""
    cluster = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        cluster.add_workers(2)
        yield cluster
    finally:
        let_go()
        cluster.close()


def let_go():
    """Close this process's client, if any, so that the next sweeps train here."""
    client, dask_path.CLIENT["client"] = dask_path.CLIENT["client"], None
    if client is not None:
        with contextlib.suppress(Exception):
            client.close(timeout=10)


@pytest.fixture
def connected(cluster):
    """This process connected to the cluster, and let go afterwards."""
    yield dask_path.connect(cluster.address)
    let_go()


def on_the_cluster_and_here(name, tmp_path, cluster, *flags):
    """A file's quick run in joblib's 2 worker processes and on the cluster."""
    here = conftest.run_quick(name, tmp_path / "loky", *flags, "--workers", "2")
    try:
        there = conftest.run_quick(name, tmp_path / "dask", *flags, "--scheduler",
                                   cluster.address)
    finally:
        let_go()
    return here, there


def test_a_lesson_s_quick_sweep_gives_on_the_cluster_the_numbers_it_gives_here(cluster,
                                                                                 tmp_path):
    """Lesson 02's quick sweep, cut to two runs: every number the same, and the results file
    says where the sweep ran and which machine trained each run."""
    here, there = on_the_cluster_and_here("02_multihead_model", tmp_path, cluster,
                                          "--heads", "3,4", "--steps", "100")
    assert here["provenance"]["sweeps"] == ["2 joblib worker processes"]
    assert there["provenance"]["sweeps"] == [f"the Dask cluster at {cluster.address}, "
                                             f"2 workers"]
    assert there["config"]["scheduler"] == cluster.address
    del there["config"]["scheduler"], here["config"]["scheduler"]
    assert numbers_of(here) == numbers_of(there)
    assert numbers_of(here)["nmse"]   # the runs' numbers are among those compared
    machines = there["provenance"]["cluster"]
    assert machines["mixed_cpu_kinds"] is False
    assert sum(len(machine["runs"]) for machine in machines["machines"]) == 2   # h = 3 and 4
    this = dask_path.this_machine()
    assert {machine["host"] for machine in machines["machines"]} == {this["host"]}
    assert {machine["cpu_capability"] for machine in machines["machines"]} == \
        {this["cpu_capability"]}
    assert "cluster" not in here["provenance"]


def test_a_study_s_quick_sweep_gives_on_the_cluster_the_numbers_it_gives_here(cluster,
                                                                               tmp_path):
    """Study 02c sends lesson 02, engine/lesson02.py and plumbing.py to the workers too, and its
    train function is lesson 02's (not the script's own, which Dask would pickle by value
    whatever the course did)."""
    here, there = on_the_cluster_and_here("02c_seed_count", tmp_path, cluster)
    del there["config"]["scheduler"], here["config"]["scheduler"]
    assert numbers_of(here) == numbers_of(there)


def slow(run):
    """A stand-in for a run that trains for run["wait"] seconds."""
    time.sleep(run["wait"])
    return dict(run)


def test_a_worker_killed_mid_run_leaves_its_run_to_another(cluster, connected):
    """Dask runs the killed worker's run again on the one left: every run comes back."""
    runs = [dict(wait=1, device="cpu", index=index) for index in range(4)]
    threading.Timer(0.5, kill, [cluster.running_workers()[0]]).start()
    assert harness.run_sweep(runs, 2, slow) == runs


def diverges(run):
    raise helpers.NonFiniteLoss(f"index={run['index']}: the loss is nan")


def test_a_diverging_loss_on_the_cluster_keeps_its_own_message(connected):
    """The run's helpers travel by value, and its error comes back as the class it was raised as."""
    with pytest.raises(helpers.NonFiniteLoss, match="index=0: the loss is nan"):
        harness.run_sweep([dict(device="cpu", index=0)], 2, diverges)


def test_every_worker_gone_ends_the_sweep_within_its_bound(cluster, connected, monkeypatch):
    """With no worker left for NO_WORKERS_S the sweep ends in one line; a sweep that finds none
    waits FIRST_WORKER_S for one, then ends the same way."""
    monkeypatch.setattr(dask_path, "NO_WORKERS_S", 2)
    monkeypatch.setattr(dask_path, "FIRST_WORKER_S", 1)
    runs = [dict(wait=3, device="cpu", index=index) for index in range(4)]
    for worker in cluster.running_workers():
        threading.Timer(0.5, kill, [worker]).start()
    started = time.perf_counter()
    said = stops_in_one_line(runs, slow)
    assert "every worker of the cluster" in said and "gone for 2 s" in said
    assert "4 runs unfinished, among them" in said
    assert time.perf_counter() - started < 2 + 10        # the bound, and the time to notice
    said = stops_in_one_line(runs, slow)
    assert "no worker joined the cluster" in said and "within 1 s, with 4 runs unfinished" in said


def test_the_scheduler_gone_ends_the_sweep_in_one_line(cluster):
    """Runs the module's last: it kills the scheduler half a second into a sweep."""
    cluster.add_workers()
    dask_path.connect(cluster.address)              # let go with the cluster, in its fixture
    runs = [dict(wait=2, device="cpu", index=index) for index in range(3)]
    threading.Timer(0.5, kill, [cluster.scheduler]).start()
    said = stops_in_one_line(runs, slow)
    assert f"the scheduler at {cluster.address} went away" in said
    assert "runs unfinished, among them" in said


def refused(address, capsys):
    """What connect(address) says on its way out, after checking it is one line and exit 2."""
    with pytest.raises(SystemExit) as stop:
        dask_path.connect(address, seconds=1)
    said = capsys.readouterr().err
    assert stop.value.code == 2 and said.count("\n") == 1 and "--scheduler" in said
    return said


def test_an_address_without_host_and_port_is_refused_before_dask_starts_a_thread(capsys):
    """Dask's event-loop thread may start too late on a busy machine; a malformed address
    is refused before it is started."""
    def loops():
        return [thread for thread in threading.enumerate() if thread.name == "IO loop"]

    before = loops()
    for address in ("", "no-such-value", "tcp://host-without-port"):
        assert "expected an address such as tcp://host:8786" in refused(address, capsys)
    assert loops() == before


def test_an_address_where_nothing_answers_is_refused_at_once(capsys):
    started = time.perf_counter()
    said = refused("tcp://127.0.0.1:9", capsys)   # the discard port: nothing listens
    assert "nothing answered at tcp://127.0.0.1:9" in said
    assert time.perf_counter() - started < 5


def test_an_address_where_something_else_answers_is_refused_in_one_line(capsys):
    """A server that is not a Dask scheduler: it answers every connection with web text."""
    server = socket.create_server(("127.0.0.1", 0))

    def answer():
        with contextlib.suppress(OSError):
            while True:
                connection, _ = server.accept()
                connection.sendall(b"HTTP/1.0 200 OK\r\n\r\nnot a scheduler" * 8)
                connection.close()

    threading.Thread(target=answer, daemon=True).start()
    try:
        address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
        assert f"no Dask scheduler answered at {address}" in refused(address, capsys)
    finally:
        server.close()


def test_the_flag_and_the_environment_variable_connect(monkeypatch, tmp_path):
    """--scheduler connects before any work; $DASK_SCHEDULER is its default (a notebook's)."""
    asked = []
    monkeypatch.setattr(dask_path, "connect", asked.append)
    harness.config({}, ["--out", str(tmp_path), "--scheduler", "tcp://10.0.0.1:8786"])
    monkeypatch.setenv("DASK_SCHEDULER", "tcp://10.0.0.2:8786")
    harness.config({}, ["--out", str(tmp_path)])
    assert asked == ["tcp://10.0.0.1:8786", "tcp://10.0.0.2:8786"]


def test_a_gpu_asked_of_a_cluster_is_refused_and_auto_means_its_cpus(monkeypatch, tmp_path,
                                                                       capsys):
    """A cluster's runs train on its workers' CPUs: --device cuda with --scheduler is refused
    in one line (here as a GPU machine would see it), and --device auto trains on the CPUs."""
    asked = []
    monkeypatch.setattr(dask_path, "connect", asked.append)
    monkeypatch.setattr(harness, "pick_device", lambda name: "cuda" if name == "auto" else name)
    flags = ["--out", str(tmp_path), "--scheduler", "tcp://10.0.0.1:8786"]
    assert harness.config({}, flags).device == "cpu"
    with pytest.raises(SystemExit) as stop:
        harness.config({}, [*flags, "--device", "cuda"])
    said = capsys.readouterr().err
    assert stop.value.code == 2 and said.count("\n") == 1
    assert "--scheduler" in said and "workers' CPUs" in said
    assert asked == ["tcp://10.0.0.1:8786"]


def test_a_lesson_copied_out_without_cluster_py_refuses_the_flag_in_one_line(monkeypatch,
                                                                             tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "cluster", None)       # import cluster now fails
    with pytest.raises(SystemExit) as stop:
        harness.config({}, ["--out", str(tmp_path), "--scheduler", "tcp://10.0.0.1:8786"])
    said = capsys.readouterr().err
    assert stop.value.code == 2 and said.count("\n") == 1 and "cluster.py" in said


def test_workers_of_more_than_one_thread_are_refused_in_one_line(monkeypatch, capsys):
    """Two runs in threads of one process would share torch's thread setting: refused."""
    class Client:
        scheduler = type("Scheduler", (), {"address": "tcp://10.0.0.1:8786"})()

        def nthreads(self):
            return {"tcp://10.0.0.2:1": 1, "tcp://10.0.0.3:1": 4}

    monkeypatch.setitem(dask_path.CLIENT, "client", Client())
    with pytest.raises(SystemExit) as stop:
        harness.sweep_engine("cpu", 2)
    said = capsys.readouterr().err
    assert stop.value.code == 2 and said.count("\n") == 1 and "--nthreads 1" in said


def test_machines_say_which_machine_trained_each_run_and_whether_cpu_kinds_mixed():
    intel = {"host": "a", "cpu": "Intel Xeon", "cpu_capability": "AVX512", "torch": "2.13.0"}
    amd = {"host": "b", "cpu": "AMD EPYC", "cpu_capability": "AVX2", "torch": "2.13.0"}
    found = dask_path.machines([("h=3", intel), ("h=4", amd), ("h=5", intel)])
    assert found["mixed_cpu_kinds"] is True
    assert [(m["host"], m["runs"]) for m in found["machines"]] == [("a", ["h=3", "h=5"]),
                                                                   ("b", ["h=4"])]
    assert dask_path.machines([("h=3", intel), ("h=4", dict(intel, host="c"))])[
        "mixed_cpu_kinds"] is False


def test_an_empty_sweep_trains_nothing():
    assert harness.run_sweep([], 2, slow, cost=len) == []


def test_the_slurm_example_renders_single_thread_workers_and_its_timeout(monkeypatch):
    """RESULTS.md's SLURMCluster block, run without its `scale` (no Slurm here): the job script
    starts 16 workers of one thread and needs no folder of the checkout; the scheduler it starts
    fails its tasks after 10 minutes without workers."""
    pytest.importorskip("dask_jobqueue")
    import dask
    text = (conftest.ROOT / "RESULTS.md").read_text(encoding="utf-8")
    section = text[text.index("## Running beyond one machine"):]
    block = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert "cluster.scale(jobs=4)" in block
    kept = "\n".join(line for line in block.splitlines() if ".scale(" not in line)
    found = {}
    with dask.config.set({}):                    # the block's setting ends with this test
        exec(kept, found)                        # noqa: S102 - the documented example itself
        cluster = found["cluster"]
        try:
            worker = cluster.job_script().strip().splitlines()[-1]
            assert "--nthreads 1" in worker and "--nworkers 16" in worker
            assert "cd " not in cluster.job_script() and "PYTHONPATH" not in cluster.job_script()
            assert str(conftest.ROOT) not in worker.replace(sys.executable, "")
            assert cluster.scheduler.no_workers_timeout == 600
            assert found["cluster"].scheduler_address.startswith("tcp://")
        finally:
            cluster.close()

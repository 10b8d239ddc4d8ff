"""Sweeps on a Dask cluster (`--scheduler ADDRESS`, or $DASK_SCHEDULER in a notebook): a
lesson's quick sweep gives there the numbers it gives in joblib's worker processes; a bad
address is refused in one line, and a cluster that goes away mid-sweep ends it in one line.

A distributed.LocalCluster of 2 worker processes on the loopback address stands in for a
cluster of machines (requirements-cluster.txt installs Dask; CI installs it too)."""
import contextlib
import socket
import sys
import threading
import time

import pytest

import cluster as dask_path
import conftest
import helpers
from test_plumbing import stops_in_one_line
from test_simulated_os import numbers_of

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes of one thread each, on 127.0.0.1. Afterwards this process's client
    is let go whatever happened, so that the next tests' sweeps train here (a cluster the last
    test closed may fail to close again: that is not this module's verdict)."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None)
    try:
        yield cluster
    finally:
        client, dask_path.CLIENT["client"] = dask_path.CLIENT["client"], None
        for closing in ([client.close] if client else []) + [cluster.close]:
            with contextlib.suppress(Exception):
                closing()


def test_a_lesson_s_quick_sweep_gives_on_a_cluster_the_numbers_it_gives_here(cluster, tmp_path):
    """Lesson 02's quick sweep, cut to two runs, in joblib's 2 worker processes, then on the
    cluster: every number the same, and the results file says where each ran."""
    few = ("--heads", "3,4", "--steps", "100")
    here = conftest.run_quick("02_multihead_model", tmp_path / "loky", *few, "--workers", "2")
    there = conftest.run_quick("02_multihead_model", tmp_path / "dask", *few,
                               "--scheduler", cluster.scheduler_address)
    assert here["provenance"]["sweeps"] == ["2 joblib worker processes"]
    assert there["provenance"]["sweeps"] == [f"the Dask cluster at {cluster.scheduler_address}, "
                                             f"2 workers"]
    assert there["config"]["scheduler"] == cluster.scheduler_address
    del there["config"]["scheduler"], here["config"]["scheduler"]
    assert numbers_of(here) == numbers_of(there)
    assert numbers_of(here)["nmse"]   # the runs' numbers are among those compared
    dask_path.CLIENT["client"] = None          # the next runs of this process train here


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
    helpers.config({}, ["--out", str(tmp_path), "--scheduler", "tcp://10.0.0.1:8786"])
    monkeypatch.setenv("DASK_SCHEDULER", "tcp://10.0.0.2:8786")
    helpers.config({}, ["--out", str(tmp_path)])
    assert asked == ["tcp://10.0.0.1:8786", "tcp://10.0.0.2:8786"]


def test_a_lesson_copied_out_without_cluster_py_refuses_the_flag_in_one_line(monkeypatch,
                                                                             tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "cluster", None)       # import cluster now fails
    with pytest.raises(SystemExit) as stop:
        helpers.config({}, ["--out", str(tmp_path), "--scheduler", "tcp://10.0.0.1:8786"])
    said = capsys.readouterr().err
    assert stop.value.code == 2 and said.count("\n") == 1 and "cluster.py" in said


def slow(run):
    """A stand-in for a run that trains for run["wait"] seconds."""
    time.sleep(run["wait"])
    return dict(run)


def test_a_cluster_that_goes_away_mid_sweep_ends_it_in_one_line(cluster):
    """Runs the module's last: it closes the cluster half a second into a sweep of 2-second
    runs."""
    dask_path.connect(cluster.scheduler_address)
    runs = [dict(wait=2, device="cpu", index=index) for index in range(6)]
    threading.Timer(0.5, cluster.close).start()
    assert "runs unfinished, among them" in stops_in_one_line(runs, slow)


def test_workers_of_more_than_one_thread_are_refused_in_one_line(monkeypatch, capsys):
    """Two runs in threads of one process would share torch's thread setting: refused."""
    class Client:
        scheduler = type("Scheduler", (), {"address": "tcp://10.0.0.1:8786"})()

        def nthreads(self):
            return {"tcp://10.0.0.2:1": 1, "tcp://10.0.0.3:1": 4}

    monkeypatch.setitem(dask_path.CLIENT, "client", Client())
    with pytest.raises(SystemExit) as stop:
        helpers.sweep_engine("cpu", 2)
    said = capsys.readouterr().err
    assert stop.value.code == 2 and said.count("\n") == 1 and "--nthreads 1" in said


def test_an_empty_sweep_trains_nothing():
    assert helpers.run_sweep([], 2, slow, cost=len) == []

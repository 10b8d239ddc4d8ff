"""Sweeps on a Dask cluster: the optional path beyond one machine (pip install -r
requirements-cluster.txt). A lesson or study run with `--scheduler tcp://host:8786` (or
$DASK_SCHEDULER) connects here before any work, and harness.run_sweep then sends each run to
the cluster's workers instead of joblib's processes. Nothing else in the course needs Dask.

    connect         the client of --scheduler, refused in one line when nothing answers
    engine          where the runs train, in words; workers of more than one thread refused
    on_the_cluster  (index, result) of each run as it finishes on the cluster; every wait bounded
    machines        which machine trained each run, for the results file's provenance

The course's own modules (helpers, harness, plumbing, engine's, the numbered files) travel with
each run by value, so the scheduler and its workers need the course's requirements, not its
checkout. A run that reads a file of the repository (a committed results file, a text) reads it
at the path it has on the machine that sent it.
"""

import socket
import sys
import time
from concurrent.futures import CancelledError
from pathlib import Path

import torch
from torch.backends import cpu as torch_cpu

import helpers
import harness

CLIENT = {"client": None}   # the Dask client of --scheduler, else None
FIRST_WORKER_S = 600        # a sweep waits this long for a first worker (a batch job may queue),
NO_WORKERS_S = 600          # then ends when every worker has been gone this long,
NO_SCHEDULER_S = 60         # or when its scheduler has been out of reach this long.
POLL_S = 0.05               # how often a sweep looks for finished runs
HEALTH_S = 1.0              # how often it asks the scheduler how many workers remain


def connect(address, seconds=10):
    """The Dask client of the scheduler at address, kept for every sweep; --scheduler is
    refused in one line when Dask is missing, the address names no host and port, or nothing
    answers within `seconds`. A plain socket knocks first, so that a bad address is refused at
    once, before Dask starts its event-loop thread (which a busy machine may start too late)."""
    try:
        from distributed import Client
        from distributed.comm.addressing import get_address_host_port
    except ImportError:
        harness.refuse("--scheduler",
                       "Dask is not installed: pip install -r requirements-cluster.txt")
    try:
        host, port = get_address_host_port(address)
    except ValueError:
        harness.refuse("--scheduler", f"expected an address such as tcp://host:8786, "
                                      f"got {address!r}")
    try:
        socket.create_connection((host, port), timeout=seconds).close()
    except OSError as error:
        harness.refuse("--scheduler", f"nothing answered at {address} within {seconds} s "
                                      f"({type(error).__name__})")
    try:
        CLIENT["client"] = Client(address, timeout=f"{seconds}s", set_as_default=False)
    except Exception as error:  # noqa: BLE001 - what answered is not a Dask scheduler
        harness.refuse("--scheduler", f"no Dask scheduler answered at {address} within "
                                      f"{seconds} s ({type(error).__name__})")
    return CLIENT["client"]


def engine():
    """(where, in a few words for the provenance; how the runs train there, in words). Each
    run sets torch's thread count for itself, so a worker of two threads is refused: its runs
    would share it."""
    client = CLIENT["client"]
    address, threads = client.scheduler.address, client.nthreads()   # {worker: threads}
    if any(count != 1 for count in threads.values()):
        harness.refuse("--scheduler", f"the workers at {address} run "
                                      f"{sorted(set(threads.values()))} threads each; start them "
                                      f"with --nthreads 1, so that each run trains alone on its "
                                      f"thread")
    return (f"the Dask cluster at {address}, {len(threads)} workers",
            f"on the Dask cluster at {address} ({len(threads)} workers), one thread each")


def on_the_cluster(train, queue):
    """(index, result) of the queue's runs as they finish on the cluster, submitted costliest
    first. Every wait is bounded: FIRST_WORKER_S for a first worker, then NO_WORKERS_S with no
    worker left or NO_SCHEDULER_S without the scheduler; each ends the sweep with one line
    (harness.SweepFailed) saying what went away and how many runs are unfinished."""
    from distributed import as_completed
    client = CLIENT["client"]
    address = client.scheduler.address
    try:
        client.wait_for_workers(1, timeout=FIRST_WORKER_S)
    except TimeoutError:
        raise harness.SweepFailed(f"no worker joined the cluster at {address} within "
                                  f"{FIRST_WORKER_S} s, with {len(queue)} runs unfinished") from None
    import cloudpickle
    send_the_course_by_value()
    with client.as_current():
        futures = {client.submit(cloudpickle.loads,
                                 cloudpickle.dumps(Call(trained_on_a_worker, train, item)),
                                 pure=False, priority=-position): item
                   for position, item in enumerate(queue)}
        finished = as_completed(futures)
        watch = Watch(client, address)
        while not finished.is_empty():
            batch = finished.next_batch(block=False)
            for future in batch:
                try:
                    index, result, machine = future.result()
                except CancelledError:
                    watch.stop(f"the scheduler at {address} went away", futures)
                harness.TRAINED_ON.append((harness.run_name(futures[future][1]), machine))
                del futures[future]
                yield index, result
            if not batch:
                watch.check(futures)
                time.sleep(POLL_S)


class Watch:
    """What a sweep on the cluster waits for, and how long it has waited for it."""

    def __init__(self, client, address):
        self.client, self.address = client, address
        self.gone_since = {}          # what went away -> when it was first seen gone
        self.last_asked = 0.0

    def check(self, unfinished):
        """End the sweep once the scheduler or every worker has been gone too long."""
        now = time.monotonic()
        if now - self.last_asked < HEALTH_S:
            return
        self.last_asked = now
        if self.client.status != "running":
            gone, bound = f"the scheduler at {self.address}", NO_SCHEDULER_S
        elif not self.client.scheduler_info()["workers"]:
            gone, bound = f"every worker of the cluster at {self.address}", NO_WORKERS_S
        else:
            self.gone_since.clear()
            return
        if now - self.gone_since.setdefault(gone, now) >= bound:
            self.stop(f"{gone} has been gone for {bound} s", unfinished)

    def stop(self, what, unfinished):
        """End the sweep in one line: what happened, and how many runs are unfinished."""
        waiting = [run for _, run in unfinished.values()]
        raise harness.SweepFailed(f"{what}: the sweep stops with {len(waiting)} runs unfinished, "
                                  f"among them {harness.run_name(waiting[0])}")


class Call:
    """function(*args), made where it is unpickled: pickle rebuilds an object by calling what its
    __reduce__ names, so cloudpickle.loads(cloudpickle.dumps(Call(f, x))) returns f(x). A run
    goes to the cluster as such bytes, the task being cloudpickle.loads: Dask pickles a task by
    module names first, which a scheduler or worker without the course's checkout cannot
    import, and would not see that the course's modules are to travel by value."""

    def __init__(self, function, *args):
        self.function, self.args = function, args

    def __reduce__(self):
        return self.function, self.args


def trained_on_a_worker(train, item):
    """harness.trained on a worker, and the machine it trained on."""
    index, result = harness.trained(train, item)
    return index, result, this_machine()


def this_machine():
    """The host, processor, vector extension and torch build of this process's machine."""
    return {"host": socket.gethostname(), "cpu": harness.cpu_model(),
            "cpu_capability": torch_cpu.get_cpu_capability(), "torch": torch.__version__}


def send_the_course_by_value():
    """Every module of the course this process imported travels with each run by value
    (cloudpickle), so that nothing on the cluster needs the checkout."""
    import cloudpickle
    root = helpers.ROOT.resolve()
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and "site-packages" not in path and Path(path).resolve().is_relative_to(root):
            cloudpickle.register_pickle_by_value(module)


def machines(trained_on):
    """The provenance of a results file's runs on a cluster, from [(run, machine)]: each
    machine with the runs it trained, and whether the runs trained on more than one kind of CPU
    (a processor or vector extension of its own gives numbers of its own)."""
    by_machine = {}
    for run, machine in trained_on:
        key = tuple(sorted(machine.items()))
        by_machine.setdefault(key, {**machine, "runs": []})["runs"].append(run)
    kinds = {(machine["cpu"], machine["cpu_capability"]) for _, machine in trained_on}
    return {"machines": list(by_machine.values()), "mixed_cpu_kinds": len(kinds) > 1}

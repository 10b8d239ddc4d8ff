"""Sweeps on a Dask cluster: the optional path beyond one machine (pip install -r
requirements-cluster.txt). A lesson or study run with `--scheduler tcp://host:8786` (or
$DASK_SCHEDULER) connects here before any work, and helpers.run_sweep then sends each run to
the cluster's workers instead of joblib's processes. Nothing else in the course needs Dask.

    connect         the client of --scheduler, refused in one line when nothing answers
    engine          where the runs train, in words; workers of more than one thread refused
    on_the_cluster  (index, result) of each run as it finishes on the cluster
"""

import socket

import helpers

CLIENT = {"client": None}   # the Dask client of --scheduler, else None


def connect(address, seconds=10):
    """The Dask client of the scheduler at address, kept for every sweep; --scheduler is
    refused in one line when Dask is missing, the address names no host and port, or nothing
    answers within `seconds`. A plain socket knocks first, so that a bad address is refused at
    once, before Dask starts its event-loop thread (which a busy machine may start too late)."""
    try:
        from distributed import Client
        from distributed.comm.addressing import get_address_host_port
    except ImportError:
        helpers.refuse("--scheduler",
                       "Dask is not installed: pip install -r requirements-cluster.txt")
    try:
        host, port = get_address_host_port(address)
    except ValueError:
        helpers.refuse("--scheduler", f"expected an address such as tcp://host:8786, "
                                      f"got {address!r}")
    try:
        socket.create_connection((host, port), timeout=seconds).close()
    except OSError as error:
        helpers.refuse("--scheduler", f"nothing answered at {address} within {seconds} s "
                                      f"({type(error).__name__})")
    try:
        CLIENT["client"] = Client(address, timeout=f"{seconds}s", set_as_default=False)
    except Exception as error:  # noqa: BLE001 - what answered is not a Dask scheduler
        helpers.refuse("--scheduler", f"no Dask scheduler answered at {address} within "
                                      f"{seconds} s ({type(error).__name__})")
    return CLIENT["client"]


def engine():
    """(where, in a few words for the provenance; how the runs train there, in words). Each
    run sets torch's thread count for itself, so a worker of two threads is refused: its runs
    would share it."""
    client = CLIENT["client"]
    address, threads = client.scheduler.address, client.nthreads()   # {worker: threads}
    if any(count != 1 for count in threads.values()):
        helpers.refuse("--scheduler", f"the workers at {address} run "
                                      f"{sorted(set(threads.values()))} threads each; start them "
                                      f"with --nthreads 1, so that each run trains alone on its "
                                      f"thread")
    return (f"the Dask cluster at {address}, {len(threads)} workers",
            f"on the Dask cluster at {address} ({len(threads)} workers), one thread each")


def on_the_cluster(train, queue, wait_s=600):
    """(index, result) of the queue's runs as they finish on the cluster, submitted costliest
    first; waits up to wait_s for a first worker (a batch job may be queued)."""
    from distributed import as_completed
    client = CLIENT["client"]
    client.wait_for_workers(1, timeout=wait_s)
    with client.as_current():
        futures = [client.submit(helpers.trained, train, item, pure=False, priority=-position)
                   for position, item in enumerate(queue)]
        for future in as_completed(futures):
            yield future.result()

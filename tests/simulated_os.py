"""Start processes as Windows or macOS does, on Linux: what the course's sweeps and the
exercise kit depend on, and nothing else of those systems (paths, encodings and the file
system are Linux's).

    python tests/simulated_os.py windows 02_multihead_model.py --quick    # a script
    simulated_os.simulate("macos")                                       # a notebook's first cell

macOS: spawn is the default start method (fork is unsafe beside threads there). Windows: spawn
is the only one; os.fork does not exist, and asking for fork raises what Windows raises.
"""
import multiprocessing
import multiprocessing.context
import os
import runpy
import sys
from pathlib import Path

SYSTEMS = ("windows", "macos")


def simulate(system):
    """Make this process start new processes as `system` would (see the module's docstring)."""
    if system not in SYSTEMS:
        raise ValueError(f"system must be one of {SYSTEMS}, not {system!r}")
    multiprocessing.set_start_method("spawn", force=True)
    if system == "windows":
        for name in ("fork", "forkpty"):
            if hasattr(os, name):
                delattr(os, name)
        for method in ("fork", "forkserver"):
            multiprocessing.context._concrete_contexts.pop(method, None)


def run_script(system, path, *flags):
    """`python PATH FLAGS` as on `system`: the script's folder first on sys.path, run as
    __main__ (so spawned workers import it as Python does for a script)."""
    simulate(system)
    path = Path(path).resolve()
    sys.argv = [str(path), *flags]
    sys.path.insert(0, str(path.parent))
    runpy.run_path(str(path), run_name="__main__")


if __name__ == "__main__":
    run_script(*sys.argv[1:])

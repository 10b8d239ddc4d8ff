"""Self-checks for the exercises: one function per exercise, one printed line each, never raises.

Each check compares a student's function (or answer) with the repository's own functions, exact
identities, slow obvious loops or committed results — no expected value is typed in by hand —
and prints one line:

    [ok]         1.1 NMSE
    [not yet]    1.1 NMSE: too high, by 10–100 % (random target of scale 1)
    [to do]      1.1 NMSE: not attempted yet
    [error]      1.1 NMSE: ZeroDivisionError: division by zero

A student's code gets TIME_LIMIT seconds per check, in a process of its own that is killed at
the limit: a forked child where fork is Python's start method (Linux), else a worker process
that joblib's loky starts once and reuses (Windows has no fork; macOS has it, but forking a
process with threads is unsafe there). No `except` in it can hold the check, and sys.exit(),
exit() or os._exit() in it is one error line. Ctrl-C while a check waits ends that process too.
Code that cannot be sent to another process (it holds an open file or a lock) runs in a thread
instead, which the check stops at the limit unless the code catches even that.
An error names the input it was called on and the student's line. The answer itself is never
printed, nor its distance (a wrong number says which way, and by a band of relative size).
A prediction (2.2, 6.2, 6.4, 7.1) is "[recorded]" with its reason, right or wrong alike, so
that trying choices tells nothing; `check.reveal()`, once the class has seen the figure, prints
the committed answers and judges every recorded prediction ("[ok]" or "[missed]"), and
`check.reveal("2.2")` one. `summary()` counts the latest result of each exercise, so running a
cell again replaces its line. Written answers are not checked: no word
list can tell a right sentence from a wrong one, so any answer is "[answered]", for discussion
in class; the reference answer is in the teacher's version of the file.
"""
import ast
import collections
import concurrent.futures
import contextlib
import copy
import importlib
import inspect
import io
import json
import linecache
import math
import multiprocessing
import numbers
import os
import random
import re
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
import types
import warnings
from pathlib import Path

ENVIRONMENT = "HEADS_REPOSITORY"   # the clone's path, for a handout kept outside a clone
TIME_LIMIT = 15                    # seconds a check gives the student's code
START_LIMIT = 120                  # seconds a new worker process may take to start and
                                   # import torch, before a check's own time begins
WORKER_IDLE = 600                  # seconds the worker waits for the next check, then ends
MADE_FROM = None                   # (commit, its time) of a handout's source (make_handout.py)


class CannotCheck(Exception):
    """The checks cannot start (no clone, or a clone older than the handout): one line in a
    notebook, as in a script."""

    def _render_traceback_(self):                       # IPython shows this instead of a trace
        return [str(self)]


def stop(message):
    """End the import of check.py with one line: exit code 2 in a script; in a notebook the line
    alone (a SystemExit would add IPython's own warning)."""
    if Path(sys.argv[0]).stem == "ipykernel_launcher":            # inside a Jupyter kernel
        raise CannotCheck(f"check.py: {message}")
    sys.stderr.write(f"check.py: {message}\n")
    raise SystemExit(2)


def find_repository(start):
    """The clone the checks read: $HEADS_REPOSITORY if set, else the nearest folder at or above
    `start` that holds helpers.py and results/. Outside a clone: one line, exit 2."""
    chosen = os.environ.get(ENVIRONMENT)
    for folder in [Path(chosen).expanduser()] if chosen else [start, *start.parents]:
        if (folder / "helpers.py").is_file() and (folder / "results").is_dir():
            return folder.resolve()
    where = (f"{ENVIRONMENT}={chosen} is not" if chosen
             else f"neither {start} nor any folder above it is")
    stop(f"{where} a clone of the repository (helpers.py and results/); put the handout inside "
         f"your clone, or set {ENVIRONMENT}=/path/to/your/clone")


def check_clone_version(repository, made_from=MADE_FROM):
    """A handout made from a commit (made_from: its hash and its commit time) that the clone
    neither holds nor is newer than stops with one line saying to update the clone. A clone
    that holds the commit passes, and so does one whose HEAD is at least as new but lacks it
    (a shallow clone, `git clone --depth 1`); without git there is nothing to compare."""
    if not made_from or not (repository / ".git").exists():
        return
    commit, made_at = made_from
    try:
        head, head_time = subprocess.run(
            ["git", "log", "-1", "--format=%H %ct", "HEAD"], cwd=repository,
            capture_output=True, text=True, timeout=20, encoding="utf-8").stdout.split()
        holds = subprocess.run(["git", "merge-base", "--is-ancestor", commit, "HEAD"],
                               cwd=repository, capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError, ValueError):
        return                                                  # no git here: nothing to compare
    if holds or int(head_time) >= made_at:
        return
    stop(f"this handout was made from commit {commit[:7]}, newer than your clone (at "
         f"{head[:7]}): update the clone (git pull in {repository}), or ask for a handout "
         f"made from a commit your clone has")


REPOSITORY = find_repository(Path(__file__).resolve().parent)
check_clone_version(REPOSITORY)
sys.path.insert(0, str(REPOSITORY))
import helpers  # noqa: E402

RESULTS = {}   # exercise number -> status of its latest check
PREDICTIONS = {}   # prediction exercise number -> the choice recorded for it, judged at its reveal
REVEALED = set()   # the prediction exercises whose committed answer reveal() has printed


class NotYet(Exception):
    """A wrong answer: the message says how it differs, never what the answer is."""


class StudentError(Exception):
    """The student's code raised an error on an input the message names."""


class Status(str):
    """A check's status ("ok", "not yet", ...), returned for scripts and tests; a notebook cell
    that ends with a check shows only the check's line, not an Out[...] beside it."""

    def _ipython_display_(self):
        pass


def _outcome(test, student):
    """(status, line) of one check run here: every way a student's code can end, each as one
    line (sys.exit() and a leftover `raise NotImplementedError` included)."""
    try:
        return tuple(test() or ("ok", ""))
    except NotImplementedError as error:
        return _stub(error, student)
    except NotYet as wrong:
        return "not yet", str(wrong)
    except StudentError as error:
        return "error", str(error)
    except SystemExit:
        return "error", ("your code called sys.exit(), exit() or os._exit(), which would end the "
                         "whole file: let the function return instead")
    except Exception as error:  # noqa: BLE001 — a check must never crash the student's file
        return "error", f"{type(error).__name__}: {error}{_where(error, student)}"


def _fork_is_safe():
    """True on Linux, where Python's start method is fork (forkserver from Python 3.14, which
    leaves a plain fork as safe as before for this kit's one short-lived child): macOS has fork,
    but makes spawn its default because a forked process with threads (a kernel's, torch's) can
    hang there, and Windows has none."""
    method = multiprocessing.get_start_method(allow_none=True)
    method = method or multiprocessing.get_all_start_methods()[0]
    return hasattr(os, "fork") and method in ("fork", "forkserver")


def _forked(job, limit):
    """job() in a child process that is killed after `limit` seconds, whatever the student's code
    catches: (its value, what it printed), or None past the limit. Where _fork_is_safe()."""
    sys.stdout.flush(), sys.stderr.flush()
    read, write = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)      # fork in a threaded kernel
        pid = os.fork()
    if pid == 0:                                                 # the child: never returns
        os.close(read)
        signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's: it ends the child
        if "torch" in sys.modules:   # OpenMP's worker threads do not survive a fork: a parallel
            sys.modules["torch"].set_num_threads(1)      # op would wait for them forever
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
                value = job()
        except BaseException as error:  # noqa: BLE001 — anything left is the check's error
            value = ("error", f"{type(error).__name__}: {error}")
        with os.fdopen(write, "w") as pipe:
            pipe.write(json.dumps([list(value), printed.getvalue()]))
        os._exit(0)
    os.close(write)
    try:
        chunks = _collect(read, time.monotonic() + limit)
    except BaseException:                         # Ctrl-C while waiting: the child goes too
        _end(pid)
        raise
    if chunks is None:                            # past the limit
        _end(pid)
        return None
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    if not chunks:                                # the child ended before it could answer
        why = (f"was killed (signal {-code}: out of memory?)" if code < 0
               else f"ended with exit code {code} (os._exit?)")
        return ("error", f"the process running your code {why}"), ""
    value, printed = json.loads(b"".join(chunks))
    return tuple(value), printed


def _collect(read, deadline):
    """What the child writes to the pipe until it closes it, or None at the deadline."""
    chunks = []
    with os.fdopen(read, "rb") as pipe:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([pipe], [], [], left)[0]:
                return None
            chunk = os.read(pipe.fileno(), 1 << 16)
            if not chunk:
                return chunks
            chunks.append(chunk)


def _end(pid):
    """Kill the child and collect it, so that no process is left running."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _refuse_exit(code=0):
    """os._exit while a check runs in a thread: it would end the whole file with no word, so it
    raises SystemExit, which the check reports as one line."""
    raise SystemExit(code)


class _TimeLimit(BaseException):
    """Raised inside a check's thread at the time limit (not an Exception, so `except Exception`
    in the student's code lets it through)."""


def _stop(worker, tries=20):
    """Raise _TimeLimit in the worker thread until it ends (CPython delivers it between two
    bytecodes; a loop that catches everything, or a long call in C, can outlast the tries).
    True when the thread has ended."""
    import ctypes
    for _ in range(tries):
        if not worker.is_alive():
            break
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(worker.ident),
                                                   ctypes.py_object(_TimeLimit))
        worker.join(0.05)
    return not worker.is_alive()


def _sources(student):
    """{file name: linecache entry} of the student's code when linecache holds it (a notebook's
    cells): the worker shows the student's line from it, as this process would."""
    name = getattr(getattr(student, "__code__", None), "co_filename", None)
    return {name: linecache.cache[name]} if name in linecache.cache else {}


def _ready(paths, sources):
    """The worker's first step for each check, outside its time: the clone on sys.path, the
    course's imports (torch among them) done, the student's sources known. Its process id."""
    for path in paths:
        if path not in sys.path:
            sys.path.append(path)
    linecache.cache.update(sources)
    importlib.import_module("helpers")           # and torch with it, before the check's time
    return os.getpid()


def _pickled(job):
    """cloudpickle's bytes of job, each code object keeping its file name (cloudpickle 3.1
    writes "<dynamic-code>" instead), so that in the worker an error still shows the student's
    line and a leftover stub is still found in the student's file."""
    import cloudpickle
    if __name__ in sys.modules:                   # this file's functions go by value: the worker
        cloudpickle.register_pickle_by_value(sys.modules[__name__])   # need not import it
    reduce_code = cloudpickle.Pickler.dispatch_table.get(types.CodeType)
    if reduce_code is None:                              # a cloudpickle that keeps them itself
        return cloudpickle.dumps(job)

    def code_with_its_file(code):
        constructor, fields = reduce_code(code)
        return constructor, tuple(code.co_filename if field == "<dynamic-code>" else field
                                  for field in fields)

    class Pickler(cloudpickle.Pickler):
        dispatch_table = collections.ChainMap({types.CodeType: code_with_its_file},
                                              cloudpickle.Pickler.dispatch_table)

    written = io.BytesIO()
    Pickler(written).dump(job)
    return written.getvalue()


def _in_the_worker(payload):
    """In the worker: the job sent as cloudpickle's bytes, run with what it prints captured."""
    import cloudpickle
    job = cloudpickle.loads(payload)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        value = job()
    return list(value), printed.getvalue()


WORKER = {"executor": None}   # the checks' own loky executor: joblib's sweeps keep theirs


def _worker_pid(sources=None):
    """The worker process (joblib's loky), started by the first check and reused until one is
    killed, with _ready done: (its executor, its pid)."""
    from joblib.externals.loky import ProcessPoolExecutor
    if WORKER["executor"] is None:
        WORKER["executor"] = ProcessPoolExecutor(max_workers=1, timeout=WORKER_IDLE)
    executor = WORKER["executor"]
    paths = [str(REPOSITORY), str(REPOSITORY / "further")]   # numbered files import from there
    return executor, executor.submit(_ready, paths, sources or {}).result(timeout=START_LIMIT)


def _kill_worker():
    """End the worker process whatever it runs; the next check starts another."""
    executor, WORKER["executor"] = WORKER["executor"], None
    if executor is not None:
        executor.shutdown(wait=True, kill_workers=True)


def _in_worker(job, limit, sources):
    """job() in a worker process that is killed after `limit` seconds, whatever the student's
    code catches: (its value, what it printed), or None past the limit. Where fork is not safe;
    a job that cannot be pickled (it holds a lock, an open file) runs in a thread (_threaded)."""
    from joblib.externals.loky.process_executor import BrokenProcessPool
    try:
        payload = _pickled(job)
    except Exception:  # noqa: BLE001 — whatever cannot be pickled runs here, in a thread
        return _threaded(job, limit)
    try:
        executor, _ = _worker_pid(sources)
    except Exception as error:  # noqa: BLE001 — a check must never crash the student's file
        _kill_worker()
        return ("error", f"no worker process could start to run your code within "
                         f"{START_LIMIT} s ({type(error).__name__}: {error})"), ""
    future = executor.submit(_in_the_worker, payload)
    try:
        value, printed = future.result(timeout=limit)
    except concurrent.futures.TimeoutError:
        _kill_worker()
        return None
    except BrokenProcessPool:
        _kill_worker()
        return ("error", "the process running your code ended before it answered "
                         "(os._exit() in your code? out of memory?)"), ""
    except Exception:  # noqa: BLE001 — the worker could not load the job: it runs here instead
        return _threaded(job, limit)
    except BaseException:                          # Ctrl-C while waiting: the worker goes too
        _kill_worker()
        raise
    return tuple(value), printed


RUNNING_ON = "running on"   # _threaded's answer when the student's code outlasted _stop


def _threaded(job, limit):
    """job() in a thread, for a job that cannot go to the worker process (_in_worker): (its
    value, ""); past the limit None once the thread is stopped (_stop), else RUNNING_ON."""
    done = []

    def work():
        with contextlib.suppress(_TimeLimit):
            done.append(job())

    worker = threading.Thread(target=work, daemon=True)
    real_exit, os._exit = os._exit, _refuse_exit
    try:
        worker.start()
        worker.join(limit)
        stopped = bool(done) or _stop(worker)
    finally:
        os._exit = real_exit
    if done:
        return done[0], ""
    return None if stopped else RUNNING_ON


# What a console without these characters shows instead (a Windows code page such as cp932 has
# no en dash): a check must never fail on its own line.
PLAIN = str.maketrans({"\u2013": "-", "\u2014": "-", "\u2212": "-", "\u00d7": "x", "\u2265": ">=",
                       "\u2264": "<=", "\u2248": "~", "\u2192": "->", "\u2026": "...",
                       "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00b7": "."})


def _say(text, end="\n"):
    """print(text), flushed; characters the console's encoding lacks are written plainly
    (PLAIN), and any left over as "?"."""
    encoding = getattr(sys.stdout, "encoding", None) or "ascii"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        text = text.translate(PLAIN).encode(encoding, errors="replace").decode(encoding)
    print(text, end=end, flush=True)


def _run(number, title, test, student=None):
    """Run one check under the time limit; print and record one line; never raise."""
    job = lambda: _outcome(test, student)                        # noqa: E731
    if _fork_is_safe():
        finished = _forked(job, TIME_LIMIT)
    else:
        finished = _in_worker(job, TIME_LIMIT, _sources(student))
    if finished is None or finished is RUNNING_ON:
        status, line = "not yet", (f"stopped after {TIME_LIMIT} s, the check's time limit: does "
                                   f"your code finish?")
        if finished is RUNNING_ON:
            line += (" (it may still be running: restart the kernel, or stop the script, if the "
                     "machine slows down)")
    else:
        (status, line, *recorded), printed = finished
        _say(printed, end="")
        if recorded:                    # a prediction's choice, kept for its reveal
            PREDICTIONS[number] = recorded[0]
    if status != "recorded":
        PREDICTIONS.pop(number, None)   # the latest check is the one that counts
    RESULTS[number] = status
    _say(f"[{status}]".ljust(13) + f"{number} {title}" + (f": {line}" if line else ""))
    return Status(status)


def _student_frame(error, student):
    """The deepest frame of the traceback inside the student's file, or None."""
    home = getattr(getattr(student, "__code__", None), "co_filename", None)
    found, trace = None, error.__traceback__
    while trace:
        if home and trace.tb_frame.f_code.co_filename == home:
            found = trace
        trace = trace.tb_next
    return found


def _where(error, student):
    """", line N: <the student's line>" where the error passed through the student's code."""
    frame = _student_frame(error, student)
    if frame is None:
        return ""
    code = linecache.getline(frame.tb_frame.f_code.co_filename, frame.tb_lineno).strip()
    return f"; your line {frame.tb_lineno}: {code}" if code else f"; your line {frame.tb_lineno}"


def _stub(error, student):
    """The "to do" line of a NotImplementedError: the exercise itself, another exercise's
    function it uses, or code of the student's that runs into a `raise NotImplementedError` left
    in place; a NotImplementedError from a library is the student's error."""
    frame = error.__traceback__
    while frame.tb_next:
        frame = frame.tb_next
    code = frame.tb_frame.f_code
    home = getattr(getattr(student, "__code__", None), "co_filename", None)
    if home is not None and code.co_filename not in (home, __file__):
        return "error", f"NotImplementedError: {error}{_where(error, student)}"
    if student is not None and callable(student) and code.co_name not in (student.__name__,
                                                                             "_written"):
        return "to do", f"it uses {code.co_name}(), which is not written yet: do that exercise first"
    if student is not None and callable(student) and _runs_into_the_stub(student):
        return "to do", (f"your code reaches the `raise NotImplementedError` left on line "
                         f"{frame.tb_lineno}: delete that line when your code is done")
    return "to do", "not attempted yet"


def _runs_into_the_stub(student):
    """True when the student's function holds more than the handout's stub (a docstring and the
    `raise NotImplementedError` line)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(student)))
    except (OSError, TypeError, SyntaxError):
        return False
    body = tree.body[0].body if tree.body and hasattr(tree.body[0], "body") else []
    body = [node for node in body if not (isinstance(node, ast.Expr)
                                          and isinstance(getattr(node, "value", None), ast.Constant))]
    return len(body) > 1


def _call(student, what, *args):
    """student(*args); an error in the student's code becomes StudentError naming the input and
    the student's line; returning None is answered with a question."""
    try:
        value = student(*args)
    except (NotImplementedError, NotYet):
        raise
    except Exception as error:  # noqa: BLE001 — reported as the student's, with its input
        raise StudentError(f"{type(error).__name__}: {error} (on {what})"
                           f"{_where(error, student)}") from None
    if value is None:
        raise NotYet(f"returned None (on {what}): did you forget `return`?")
    return value


def _number(value, what):
    """A plain number from the student's value (a 0-d tensor or array too), else NotYet."""
    if value is None:
        raise NotYet(f"returned None ({what}): did you forget `return`?")
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:   # a 0-d tensor or array
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise NotYet(f"returned {type(value).__name__} ({what}); return a number")
    return float(value)


def _pair(value, what):
    """Two plain numbers from the student's value (a tuple or list of two), else NotYet."""
    try:
        first, second = value
    except (TypeError, ValueError):
        raise NotYet(f"returned {type(value).__name__} ({what}); return two numbers, "
                     f"e.g. (a, b)") from None
    return _number(first, what), _number(second, what)


def _numbers(values, count, what):
    """`count` numbers from a list, a tuple, an array, a tensor or a generator, else NotYet."""
    if values is None:
        raise NotYet(f"returned None ({what}): did you forget `return`?")
    try:
        values = list(values)
    except TypeError:
        values = None
    if values is None or isinstance(values, str) or len(values) != count:
        raise NotYet(f"return {count} numbers, one per added head ({what})")
    return [_number(value, what) for value in values]


def _close(expected, got, what, tolerance=1e-6):
    """NotYet unless the student's number is within tolerance (relative) of the reference."""
    expected, got = float(expected), _number(got, what)
    if math.isclose(expected, got, rel_tol=tolerance, abs_tol=tolerance):
        return
    if not math.isfinite(got):
        raise NotYet(f"returned {got} ({what}); the answer is a finite number")
    direction = "too high" if got > expected else "too low"
    if expected.is_integer():                    # a count: its distance would be the answer
        raise NotYet(f"{direction} ({what})")
    raise NotYet(f"{direction}, {_how_far(expected, got)} ({what})")


def _how_far(expected, got):
    """How far a wrong number is, in bands wide enough that the student's value and the band
    do not give the reference away (a distance would: got ± distance is the answer)."""
    relative = abs(got - expected) / max(abs(expected), 1e-12)
    if relative <= 0.01:
        return "by less than 1 %: a rounding, or a small term?"
    if relative <= 0.1:
        return "by 1–10 %"
    if relative <= 1:
        return "by 10–100 %"
    return "by more than the reference's own size"


def _same(expected, got, what, tolerance=1e-6):
    """NotYet unless the student's tensor has the reference's shape and values."""
    import torch
    if got is None:
        raise NotYet(f"returned None ({what}): did you forget `return`?")
    try:
        got = torch.as_tensor(got, dtype=expected.dtype)
    except (TypeError, ValueError, RuntimeError):
        raise NotYet(f"returned {type(got).__name__} ({what}); return a tensor of shape "
                     f"{tuple(expected.shape)}") from None
    if got.shape != expected.shape:
        raise NotYet(f"shape {tuple(got.shape)}, the reference has {tuple(expected.shape)} "
                     f"({what})")
    gap = float((got - expected).abs().max())
    if not gap <= tolerance:
        raise NotYet(f"differs from the reference by up to {gap:.3g} ({what})")


def _prediction(answer, kind):
    """The student's prediction as an int or a bool ("3", 3, 3.0; True, "yes"), else NotYet."""
    if answer is None or isinstance(answer, str) and not answer.strip():
        raise NotImplementedError
    text = str(answer).strip().lower()
    if kind is bool:
        if text in ("true", "yes", "1"):
            return True
        if text in ("false", "no", "0"):
            return False
        raise NotYet(f"answer True or False, got {answer!r}")
    try:
        number = float(text)
    except ValueError:
        raise NotYet(f"answer with a whole number, got {answer!r}") from None
    if number != int(number):
        raise NotYet(f"answer with a whole number, got {answer!r}")
    return int(number)


# What a prediction's reason must name, without which it is not a reason for that prediction:
# (a pattern, the words the "not yet" line uses). Never the answer itself.
REASON_MUST_NAME = {
    "2.2": (r"head|token|retriev|direction|\bD\b", "what each head does"),
    "6.2": (r"layer|first|second|last|early|late", "the layer that does the match"),
    "6.4": (r"quer|dimension|rank|budget", "the queries or the head dimension a budget leaves"),
    "7.1": (r"interval|\bci\b|zero|\b0\b|\bends?\b", "the interval against 0"),
}


def _reason(because, number):
    """A prediction needs its reason, a sentence that names what the prediction rests on."""
    if because is None or not str(because).strip():
        raise NotYet(f"write your reason too, in a sentence: the check keeps your choice only "
                     f"beside it (exercise {number}'s `because`)")
    pattern, what = REASON_MUST_NAME[number]
    if not re.search(pattern, str(because), re.IGNORECASE):
        raise NotYet(f"your reason does not say {what}: write why, in those terms")


def _predicted(number, choice, because, revealed):
    """A prediction of the right form, beside its reason: before its reveal it is recorded and
    judged neither right nor wrong, so that trying choices tells nothing; after the reveal it is
    judged at once."""
    _reason(because, number)
    if not revealed:
        return "recorded", (f"{_shown_choice(choice)}, with your reason; check.reveal() judges "
                            f"it once the class has seen the figure"), choice
    if not JUDGES[number](choice):
        raise NotYet(f"the committed results say otherwise ({REVEAL[number]()})")
    return "ok", ""


def _shown_choice(choice):
    """A recorded choice in words: "you chose 3", "you chose front-loaded on ..."."""
    if isinstance(choice, dict):
        return "you chose " + "; ".join(f"{name} on {task}" for task, name in choice.items())
    return f"you chose {choice}"


def _written(answer, about):
    """A written answer: "to do" while empty, else "answered" — not checked (no word list tells
    a right sentence from a wrong one); `about` says what to compare in class."""
    if answer is None or not str(answer).strip():
        raise NotImplementedError
    return "answered", (f"not checked: compare what you say about {about} with the reference "
                        f"answer in the teacher's version")


def _visible(function):
    """{name: value} a student's function can see: its module's globals and its closure."""
    names = dict(getattr(function, "__globals__", {}))
    cells = getattr(function, "__closure__", None) or ()
    names.update(zip(function.__code__.co_freevars, (cell.cell_contents for cell in cells)))
    return names


def _concept(name):
    """A lesson or study of the clone, imported quietly; a clone without it is older than the
    exercises: StudentError saying to update it."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):                     # quiet imports
            return helpers.load_concept(name)
    except FileNotFoundError:
        raise StudentError(f"your clone has no {name}.py, which this check reads: it is older "
                           f"than the exercises; update it (git pull)") from None


def _committed(stem):
    """A committed results file of the clone; a clone without it is older than the exercises."""
    path = REPOSITORY / "results" / f"{stem}.json"
    if not path.exists():
        raise StudentError(f"your clone has no results/{stem}.json, which this check reads: it "
                           f"is older than the exercises; update it (git pull)")
    return json.loads(path.read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------------------------
# 01 · the retrieval task
# ---------------------------------------------------------------------------------------------
def ex01_nmse(student):
    def test():
        import torch
        generator = torch.Generator().manual_seed(1)
        for scale in (10.0, 1.0, 0.01):                      # not 1 first: Var(y) = 1 hides
            target = (torch.randn(500, generator=generator) + 3) * scale   # mean 3: E[y^2] != Var
            prediction = target + torch.randn(500, generator=generator) * scale / 3
            what = f"a made-up random target of scale {scale:g}"
            _close(helpers.nmse(prediction, target),
                   _call(student, what, prediction, target), what, 1e-4)
    return _run("1.1", "NMSE", test, student)


def ex01_why_nmse(answer):
    return _run("1.2", "why raw MSE misleads across T (written)", lambda: _written(
        answer, "how the spread of y changes with T"))


def ex01_retrieval_target(student):
    def test():
        task = _concept("01_retrieval_task")
        for D, T, kind in ((4, 8, "gaussian"), (2, 32, "random"), (1, 5, "gaussian")):
            x = task.sample_inputs(50, T, 4, seed=T)
            expected, _, _ = task.synthetic_task(D, T, 4, kind)(x)
            what = f"D={D}, T={T}, {kind} directions"
            got = _call(student, what, x, task.task_directions(D, 4, kind))
            scale = max(1.0, float(expected.abs().max()))     # float32 rounding of sums of maxima
            _same(expected, got, what, 1e-5 * scale)
    return _run("1.3", "the retrieval target of eq. 8", test, student)


def ex01_smallest_q(student):
    def test():
        def worst(q):   # sup over d >= 0 of d exp(-q d^2), on a fine grid around its peak
            return max(d * math.exp(-q * d * d)
                       for d in (k * 5 / (20000 * math.sqrt(q)) for k in range(20001)))

        for epsilon in (0.1, 0.01, 1e-3):
            q = _number(_call(student, f"epsilon={epsilon:g}", epsilon), f"epsilon={epsilon:g}")
            if not math.isfinite(q):
                raise NotYet(f"returned {q} (epsilon={epsilon:g}); the answer is a finite number")
            if not q > 0:
                raise NotYet(f"q must be positive (epsilon={epsilon:g})")
            if not worst(q) <= epsilon * (1 + 1e-3):
                raise NotYet(f"at your q the worst error is above epsilon={epsilon:g}")
            if not worst(0.999 * q) > epsilon:
                raise NotYet(f"a smaller q also reaches epsilon={epsilon:g}")
    return _run("1.4", "the sharpness q our selector needs", test, student)


# ---------------------------------------------------------------------------------------------
# 02 · the model and the drop at h = D
# ---------------------------------------------------------------------------------------------
def ex02_parameter_count(student):
    def test():
        model_file = _concept("02_multihead_model")
        variants = _concept("02d_variants")                 # the stacked model has FFNs too
        for h, width, layers in ((1, 4, 1), (4, 4, 1), (3, 6, 2)):
            model = model_file.MultiHeadModel(n_heads=h, head_dim=2, width=width) \
                if layers == 1 else variants.StackedModel(n_heads=h, head_dim=2, width=width,
                                                          n_layers=layers)
            what = f"a model with h={h}, N={width}, layers={layers}"
            _close(model_file.parameter_counts(model)["paper"], _call(student, what, model), what)
    return _run("2.1", "parameters counted as paper A counts them", test, student)


def _knees_for_D3():
    table = _committed("02d_variants_D3")["nmse"]
    knees = set()
    for by_heads in table.values():
        minima = {int(h): entry["min"] for h, entry in by_heads.items()}
        heads = sorted(minima)
        knees.add(max(heads[1:], key=lambda h: minima[h - 1] / minima[h]))
    return knees


def ex02_knee_for_D3(predicted, because=None):
    revealed = "2.2" in REVEALED

    def test():
        return _predicted("2.2", _prediction(predicted, int), because, revealed)
    return _run("2.2", "where the knee moves for D = 3", test)


# The a_i that some head of study 02f's committed maps puts most of its weight on, per h (the
# tests recount them from the committed file).
COMMITTED_MAPS_COVER = {"3": 3, "4": 4}


def ex02_directions_covered(student):
    def test():
        mechanism = _committed("02f_attention_maps")["mechanism"]
        for h, expected in COMMITTED_MAPS_COVER.items():
            attention = mechanism[h]["attention_on_targets"]               # [h][D]
            what = f"the committed h = {h} map"
            _close(expected, _call(student, what, attention), what)
        made_up = [  # (map [heads][a_i], a_i that are some head's arg-max)
            ([[0.9, 0.1, 0.0], [0.8, 0.0, 0.2], [0.0, 0.6, 0.4]], 2),
            ([[0.9, 0.8], [0.1, 0.2]], 2),   # the arg-max over heads instead would give 1
            ([[0.4, 0.1], [0.1, 0.4]], 2)]   # "more than 0.5 on it" would give 0
        for attention, expected in made_up:
            what = f"the made-up map {attention}"
            _close(expected, _call(student, what, attention), what)
    return _run("2.3", "how many a_i have a head of their own", test, student)


def ex02_reversal_score(student):
    def test():
        model_file = _concept("02_multihead_model")
        study = _concept("02d_variants")                   # the study that computes R(h)
        rows = [row for table in (model_file.PAPER_TABLE_2, study.engine.PAPER_TABLE_3)
                for row in table.values()]
        cases = [[row[T] for T in sorted(row)] for row in rows] + [[1.0, 1.0], [3.0, 1.0, 2.0]]
        for errors in cases:
            _close(study.reversal_score(errors), _call(student, f"errors {errors}", errors),
                   f"errors {errors}")
    return _run("2.4", "the reversal score R(h)", test, student)


# Made-up errors at h = 1, 2, ... and the decades each added head buys (exact).
DECADE_CASES = (([1e-1, 1e-2, 1e-2, 1e-5, 1e-5], [1.0, 0.0, 3.0, 0.0]),
                ([2.0, 0.2, 0.4], [1.0, -0.3010299956639812]),
                ([5e-3, 5e-4, 5e-5], [1.0, 1.0]))


def ex02_decades(student):
    def test():
        for errors, expected in DECADE_CASES:
            what = f"made-up errors {errors}"
            got = _numbers(_call(student, what, list(errors)), len(expected), what)
            for h, (want, value) in enumerate(zip(expected, got), start=2):
                _close(want, value, f"h = {h - 1} to {h}, {what}")
        means = {T: [entry["mean"] for entry in by_h.values()]
                 for T, by_h in _committed("02_multihead_model")["nmse"].items()}
        shown = "; ".join(f"T = {T}: " + " ".join(
            f"{_number(value, f'T = {T}'):.2f}" for value in _call(student, f"T = {T}", errors))
            for T, errors in means.items())
        return "ok", f"on lesson 02's committed means, h = 1 to 2, 2 to 3, ...: {shown}"
    return _run("2.5", "decades on a log axis", test, student)


# ---------------------------------------------------------------------------------------------
# 03 · the bounds
# ---------------------------------------------------------------------------------------------
def ex03_exponent(student):
    def test():
        bounds = _concept("03_bounds")
        for T in (8, 10, 64, 130, 1023):                    # not only multiples of 4
            for s, D, n in ((3, 4, 8), (1, 2, 2)):
                what = f"T={T}, s={s}, D={D}, n={n}"
                _close(bounds.lower_bound_exponent(T, s, D, n),
                       _call(student, what, T, s, D, n), what)
    return _run("3.1", "the lower-bound exponent k", test, student)


def ex03_first_useful_T(student):
    def test():
        bounds = _concept("03_bounds")
        code = student.__code__
        uses = "exponent_k" in code.co_names + code.co_freevars              # does it call 3.1?
        mine = _visible(student).get("exponent_k") if uses else None
        cases = ((3, 4, 8), (1, 2, 2), (2, 4, 8), (1, 3, 1))            # s < D: Theorem 2(2)
        reference = bounds.lower_bound_exponent
        if callable(mine) and any(not math.isclose(_number(mine(T, s, D, n), "3.1"),
                                                   reference(T, s, D, n), abs_tol=1e-9)
                                  for s, D, n in cases for T in (10, 130)):
            raise NotYet("your exponent_k (3.1) is not right yet, and this answer uses it: "
                         "fix 3.1 first")               # else a loop over T may never end
        for s, D, n in cases:
            expected = bounds.first_nonvacuous_length(s, D, n)
            if reference(expected, s, D, n) <= 0:                            # the definition
                raise RuntimeError("first_nonvacuous_length disagrees with k > 0")
            what = f"s={s}, D={D}, n={n}"
            _close(expected, _call(student, what, s, D, n), what)
    return _run("3.2", "where the lower bound stops being vacuous", test, student)


def ex03_hand_built_head(student):
    def test():
        import torch
        bounds = _concept("03_bounds")
        model_file = _concept("02_multihead_model")
        for D in (1, 3):
            reference, cls = bounds.construction_layer(D)
            layer = model_file.AttentionLayer(2 * D, n_heads=D, head_dim=2)
            try:
                returned = student(layer, D)                 # it sets the layer's weights ...
            except (NotImplementedError, NotYet):
                raise
            except Exception as error:  # noqa: BLE001 — the student's, with its input
                raise StudentError(f"{type(error).__name__}: {error} (on a layer with D={D})"
                                   f"{_where(error, student)}") from None
            if isinstance(returned, torch.nn.Module):       # ... or returns a layer of its own
                layer = returned
            tokens = torch.randn(4, 7, 2 * D, generator=torch.Generator().manual_seed(D))
            with torch.no_grad():
                expected, _ = reference(cls.expand(4, 1, -1), tokens, 5.0)
                got, _ = layer(cls.expand(4, 1, -1), tokens, 5.0)
            _same(expected, got, f"the layer's output, D={D}")
    return _run("3.3", "the weights of the hand-built h = D layer", test, student)


# ---------------------------------------------------------------------------------------------
# 04 · one head memorises
# ---------------------------------------------------------------------------------------------
def ex04_memorising_tokens(student):
    def test():
        import torch
        memory = _concept("04_single_head_memorization")
        x = torch.randn(3, 5, 2, generator=torch.Generator().manual_seed(0))
        what = "a made-up random [3, 5, 2] batch"
        _same(memory.memorising_embedding(x), _call(student, what, x), what)
    return _run("4.1", "the memorising embedding e_t (x) x(t)", test, student)


def ex04_read_back(student):
    def test():
        import torch
        memory = _concept("04_single_head_memorization")
        x = torch.randn(3, 6, 2, generator=torch.Generator().manual_seed(1))
        average = memory.memorising_embedding(x).mean(dim=1)                # uniform attention
        what = "reading back a made-up random [3, 6, 2] batch"
        _same(x, _call(student, what, average, 6, 2), what)
    return _run("4.2", "reading the sequence back from the uniform average", test, student)


def ex04_lemma9_weights(student):
    def test():
        study = _concept("04a_cost_accounting")
        for T, levels in ((4, 3), (16, 5), (64, 10)):
            network = study.lemma9_network(T, levels)
            used = sum(int((p != 0).sum()) for p in network.parameters() if p.dim() == 2)
            what = f"T={T}, n={levels} levels (counted in the network)"
            _close(used, _call(student, what, T, levels), what)
    return _run("4.3", "the weights Lemma 9's max network uses", test, student)


# ---------------------------------------------------------------------------------------------
# 05 · saturation
# ---------------------------------------------------------------------------------------------
def ex05_softmax_band(student):
    def test():
        lemma = _concept("05c_bounded_logits")
        for B in (0.5, 2.0):
            for L in (4, 1000):
                row = lemma.lemma_extremes(B, L, 200, seed=0)      # worst cases and draws
                low, high = _pair(_call(student, f"B={B}, L={L}", B, L), f"B={B}, L={L}")
                if not (low * L <= row["L_min_p"] * (1 + 1e-9) and
                        high * L >= row["L_max_p"] * (1 - 1e-9)):
                    raise NotYet(f"a softmax weight with |logits| <= B lies outside your band "
                                 f"(B={B}, L={L})")
                if not (low * L >= row["lower"] * (1 - 1e-9) and
                        high * L <= row["upper"] * (1 + 1e-9)):
                    raise NotYet(f"your band is looser than the one the numerator and "
                                 f"denominator bounds give (B={B}, L={L})")
    return _run("5.1", "the bounded-logit band of a softmax weight", test, student)


def _least_entropy(B, L):
    """The least H(p)/log L over logits in [-B, B]: k of them at B and the rest at -B, the
    best k (a floor above the lemma's is true, but not the lemma's)."""
    if L == 1:
        return 1.0
    def ratio(k):
        high, low = math.exp(B), math.exp(-B)
        total = k * high + (L - k) * low
        return -(k * high / total * math.log(high / total)
                 + (L - k) * low / total * math.log(low / total)) / math.log(L)
    return min(ratio(k) for k in range(1, L + 1))


def ex05_entropy_floor(student):
    def test():
        lemma = _concept("05c_bounded_logits")
        cases = [(B, L, f"B={B}, L={L}") for B in (0.5, 1.0, 3.0) for L in (1, 2, 16, 4096)]
        values = [_number(_call(student, what, B, L), what) for B, L, what in cases]
        floors = [lemma.entropy_bound(B, L) for B, L, _ in cases]
        holds = all(floor <= value <= _least_entropy(B, L) + 1e-9
                    for (B, L, _), floor, value in zip(cases, floors, values))
        if holds and any(value > floor + 1e-6 for floor, value in zip(floors, values)):
            raise NotYet("a true floor at every B and L tried, tighter than the lemma's: the "
                         "exercise asks for the floor the lemma's bounds on each p_i give")
        for (_, _, what), floor, value in zip(cases, floors, values):
            _close(floor, value, what)
    return _run("5.2", "the entropy floor H(p)/log L", test, student)


# Small tables y [queries, contexts] whose two parts are known exactly: (y, Var(E[y|q]),
# E[Var(y|q)], what it is).
VARIANCE_SPLITS = (
    ([[-3, -1, 1], [-1, 1, 3]], 1, 8 / 3, "y = query (-1, 1) + context (-2, 0, 2)"),
    ([[-1, -1, -1], [1, 1, 1]], 1, 0, "y depends on the query only"),
    ([[-2, 0, 2], [-2, 0, 2]], 0, 8 / 3, "y depends on the context only"),
    ([[0, 0, 3], [1, 1, 1]], 0, 1, "equal row means, unequal spreads"),
    ([[0, 4], [2, 2], [1, 7]], 8 / 9, 13 / 3, "three queries, both parts"),
)


def ex05_variance_split(student):
    def test():
        import torch
        for rows, query_expected, context_expected, what in VARIANCE_SPLITS:
            y = torch.tensor(rows, dtype=torch.float64)
            query_part, context_part = _pair(_call(student, what, y.clone()), what)
            _close(query_expected, query_part, f"query part: {what}", 1e-9)
            _close(context_expected, context_part, f"context part: {what}", 1e-9)
    return _run("5.3", "the variance split Var(E[y|q]) + E[Var(y|q)]", test, student)


# ---------------------------------------------------------------------------------------------
# 06 · allocation
# ---------------------------------------------------------------------------------------------
def ex06_attention_parameters(student):
    def test():
        allocation = _concept("06_allocation")
        for layers, width in (([(4, 8)], 32), ([(2, 8), (2, 2)], 48), ([(1, 3), (5, 1)], 8)):
            model = allocation.AllocatedTransformer(layers, width, 8, token_dim=3)
            counted = sum(p.numel() for block in model.blocks
                          for p in (block.W_Q, block.W_K, block.W_V, block.W_O.weight))
            what = f"layers {layers}, width {width}"
            _close(counted, _call(student, what, layers, width), what)
    return _run("6.1", "an allocation's attention parameters", test, student)


def _winners():
    comparison = _committed("06_allocation")["comparison"]
    return {task: min((name for name in entry["allocations"] if name != "front-reduced"),
                      key=lambda name: entry["allocations"][name]["mean"])
            for task, entry in comparison.items()}


def ex06_winners(student, because=None):
    revealed = "6.2" in REVEALED

    def test():
        names = ("front-loaded", "back-loaded")
        chosen = {task: _call(student, repr(task), task) for task in _winners()}
        for task, got in chosen.items():
            if not isinstance(got, str):
                raise NotYet(f"returned {type(got).__name__} for {task!r}; return a name")
            if got not in names:
                raise NotYet(f"{got!r} is not one of {', '.join(names)} (for {task!r})")
        return _predicted("6.2", chosen, because, revealed)
    return _run("6.2", "which allocation wins on which task (committed results)", test, student)


def ex06_why(answer):
    return _run("6.3", "why the winner flips (written)", lambda: _written(
        answer, "which layer does the match"))


def _best_heads():
    """The lowest H of every committed trained seed (study 06g) and of study 06f's oracle; they
    must agree for 6.4 to have one answer."""
    fixed = _committed("06g_fixed_budget")["fixed_budget"]
    best = {*fixed["best_H_per_seed"], _committed("06f_controls")["fixed_budget"]["best_H_oracle"]}
    if len(best) != 1:
        raise RuntimeError(f"the committed results disagree on the best H: {sorted(best)}")
    return best


def ex06_best_heads(predicted, because=None):
    revealed = "6.4" in REVEALED

    def test():
        return _predicted("6.4", _prediction(predicted, int), because, revealed)
    return _run("6.4", "the best head count at a fixed budget", test)


# ---------------------------------------------------------------------------------------------
# 07 · real data
# ---------------------------------------------------------------------------------------------
def _seven():
    """The committed run that holds both of lesson 07's sweeps at the largest scale: study 07c's
    --full run, else its default run."""
    if (REPOSITORY / "results" / "07c_fixed_width_full.json").exists():
        return _committed("07c_fixed_width_full")
    return _committed("07c_fixed_width")


def _fixed_width_excludes_zero():
    gain = _seven()["train_gain_with_heads"]["fixed-width"]
    low, high = gain[max(gain, key=int)]["ci95"]
    return low > 0 or high < 0


def ex07_fixed_width(predicted, because=None):
    revealed = "7.1" in REVEALED

    def test():
        return _predicted("7.1", _prediction(predicted, bool), because, revealed)
    return _run("7.1", "at a fixed width, is the gain from more heads clear?", test)


def ex07_width_share(answer):
    return _run("7.2", "what the paired difference of the two gains adds (written)", lambda:
                _written(answer, "the width"))


def _text():
    """07a's committed text run (--full when committed, else the default run), or None."""
    for stem in ("07a_text_retrieval_full", "07a_text_retrieval"):
        if (REPOSITORY / "results" / f"{stem}.json").exists():
            return _committed(stem)["text"]
    return None


# The width's share of each made-up text part's gain, per T, for the seeds the check draws
# them with (the tests recompute them from the exercise's reference answer).
MADE_UP_SHARES = {1: {"8": 0.654837862811, "16": 0.802658667837},
                  2: {"8": 0.755914475729, "16": 0.614920020232},
                  3: {"8": 0.616151771811, "16": 0.637559211694}}


def _made_up_gains(seed):
    """A text part's gains drawn at random, with every key a committed run's gains have
    (per_seed, mean, ci95, verdict, from, to): unequal per-seed gains, 3-5 seeds, 2-3 T."""
    draw = random.Random(seed)
    n, lengths = draw.randint(3, 5), [str(T) for T in (8, 16, 32)[:draw.randint(2, 3)]]
    wide = {T: [draw.uniform(0.05, 0.5) for _ in range(n)] for T in lengths}
    fixed = {T: [a * draw.uniform(-0.2, 0.9) for a in wide[T]] for T in lengths}

    def gain(per_seed):
        return {"from": 1, "to": 8, **helpers.paired_difference(per_seed)}
    return {"train_gain_with_heads": {
        "fixed-head-dim": {T: gain(wide[T]) for T in lengths},
        "fixed-width": {T: gain(fixed[T]) for T in lengths}},
        "gain_difference": {T: gain([a - b for a, b in zip(wide[T], fixed[T])])
                            for T in lengths}}


def _shares(student, text, what):
    """The student's {T (as text): share} for one text part."""
    shares = _call(student, what, copy.deepcopy(text))
    if not isinstance(shares, dict):
        raise NotYet(f"return a dict with one share per T ({what})")
    return {str(T): share for T, share in shares.items()}


def ex07_text_width_share(student):
    def test():
        for seed, expected_shares in MADE_UP_SHARES.items():
            what = f"made-up gains {seed}, drawn at random by the check"
            shares = _shares(student, _made_up_gains(seed), what)
            for T, expected in expected_shares.items():
                if T not in shares:
                    raise NotYet(f"no share for T = {T} ({what})")
                _close(expected, shares[T], f"T = {T}, {what}")
        text = _text()
        if text is not None:
            shares = _shares(student, text, "the committed text run")
            return "ok", "on the committed run " + ", ".join(
                f"T = {T}: {_number(share, f'T = {T}'):.2f}" for T, share in shares.items())
    return _run("7.3", "the share of the text gain that is width", test, student)


# Made-up paired differences and their 95 % t-intervals (scipy's t quantiles; the tests
# recompute them).
INTERVAL_CASES = (([0.1, 0.3], (-1.0706204736174694, 1.4706204736174693)),
                  ([0.2, 0.25, 0.3, 0.22, 0.28], (0.19880488183879144, 0.3011951181612086)),
                  ([-1.0, 1.0, 3.0], (-3.9682754235006605, 5.9682754235006605)))


def _gains_at_64(numbers):
    """Lesson 07's per-seed training gains from the fewest to the most heads at T = 64 in a
    results file's numbers (None where it has no T = 64)."""
    gains = numbers["train_gain_with_heads"]["fixed-head-dim"]
    return gains.get("64", {}).get("per_seed")


def ex07_interval(student):
    def test():
        for differences, (low, high) in INTERVAL_CASES:
            what = f"made-up differences {differences}"
            got_low, got_high = _pair(_call(student, what, list(differences)), what)
            _close(low, got_low, f"the low end, {what}")
            _close(high, got_high, f"the high end, {what}")
        shown = []
        for numbers, runs in ((_committed("07_real_data"), "the default run"),
                              (_seven(), "--full")):
            seeds = _gains_at_64(numbers)
            if seeds:
                got_low, got_high = _pair(_call(student, runs, list(seeds)), runs)
                shown.append(f"{runs}, {len(seeds)} seeds: [{got_low:+.3f}, {got_high:+.3f}]")
        return "ok", "lesson 07's gain at T = 64: " + "; ".join(shown)
    return _run("7.4", "what two seeds can say", test, student)


# ---------------------------------------------------------------------------------------------
# Answers on request, and the summary
# ---------------------------------------------------------------------------------------------
REVEAL = {
    "2.2": lambda: "the committed D = 3 minima drop most at h = "
                   + " and ".join(map(str, sorted(_knees_for_D3()))),
    "6.2": lambda: "lowest mean validation NMSE: " + "; ".join(
        f"{task}: {name}" for task, name in _winners().items()),
    "6.4": lambda: "lowest at H = " + " and ".join(map(str, sorted(_best_heads())))
                   + " (the trained models, every seed, and the oracle)",
    "7.1": lambda: ("the fixed-width interval at the longest T "
                    + ("excludes" if _fixed_width_excludes_zero() else "includes") + " 0"),
}


# Whether a recorded prediction matches the committed results.
JUDGES = {
    "2.2": lambda choice: {choice} == _knees_for_D3(),
    "6.2": lambda choice: choice == _winners(),
    "6.4": lambda choice: {choice} == _best_heads(),
    "7.1": lambda choice: choice == _fixed_width_excludes_zero(),
}


def reveal(number=None):
    """Print the committed answer of a prediction exercise (number: "2.2" or 2.2), or of every
    one (no number: the instructor's cue), and judge the prediction recorded for it."""
    if number is None:
        for each in REVEAL:
            reveal(each)
        return
    number = f"{number:g}" if isinstance(number, (int, float)) else str(number).strip()
    if number not in REVEAL:
        _say(f"[reveal]     {number}: only {', '.join(REVEAL)} have an answer to reveal; the "
             f"others' references are in the repository's exercises/ folder")
        return
    try:
        answer = REVEAL[number]()
        right = JUDGES[number](PREDICTIONS[number]) if number in PREDICTIONS else None
    except (StudentError, RuntimeError) as error:
        RESULTS[number] = "error"
        _say("[error]".ljust(13) + f"{number}: {error}")
        return
    REVEALED.add(number)
    _say(f"[reveal]     {number}: {answer}")
    if right is not None:
        RESULTS[number] = "ok" if right else "missed"
        verdict = "matches" if right else "does not match: which part of your reason failed?"
        _say(f"[{RESULTS[number]}]".ljust(13)
             + f"{number} your prediction ({_shown_choice(PREDICTIONS.pop(number))}) {verdict}")


def summary():
    """Print how many exercises are ok, answered, recorded, missed, not yet, to do and in error
    (latest check)."""
    counts = {status: sum(1 for s in RESULTS.values() if s == status)
              for status in ("ok", "answered", "recorded", "missed", "not yet", "to do", "error")}
    _say("summary: " + ", ".join(f"{n} {status}" for status, n in counts.items()))
    return Counts(counts)


class Counts(dict):
    """summary()'s counts, returned for scripts and tests; a notebook shows only the printed line."""

    def _ipython_display_(self):
        pass

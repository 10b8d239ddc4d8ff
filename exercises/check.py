"""Self-checks for the exercises: one function per exercise, one printed line each, never raises.

Each check compares a student's function (or answer) with the repository's own functions,
proven bounds or committed results — no expected value is copied here by hand — and prints

    [ok]         1.1 NMSE
    [not yet]    1.1 NMSE: expected 0.25, got 0.5 (on ...)
    [to do]      1.1 NMSE: not attempted yet
    [error]      1.1 NMSE: ZeroDivisionError: division by zero

`summary()` prints the count of each. Written answers are not graded: a non-empty one is
"[answered]"; compare it with the reference in the teacher's version of the file.
"""
import contextlib
import io
import json
import math
import os
import sys
from pathlib import Path

ENVIRONMENT = "HEADS_REPOSITORY"   # the clone's path, for a handout kept outside a clone


def find_repository(start):
    """The clone the checks read: $HEADS_REPOSITORY if set, else the nearest folder at or above
    `start` that holds helpers.py and results/. Outside a clone: one line, exit 2."""
    chosen = os.environ.get(ENVIRONMENT)
    for folder in [Path(chosen).expanduser()] if chosen else [start, *start.parents]:
        if (folder / "helpers.py").is_file() and (folder / "results").is_dir():
            return folder.resolve()
    where = f"{ENVIRONMENT}={chosen}" if chosen else f"{start} or any folder above it"
    sys.stderr.write(f"check.py: {where} is not a clone of the repository (no helpers.py and "
                     f"results/); put the handout inside your clone, or set "
                     f"{ENVIRONMENT}=/path/to/your/clone\n")
    raise SystemExit(2)


REPOSITORY = find_repository(Path(__file__).resolve().parent)
sys.path.insert(0, str(REPOSITORY))
import helpers  # noqa: E402

RESULTS = []


class NotYet(Exception):
    """A wrong answer: the message says what was expected and what came back."""


def _run(number, title, test):
    """Run one check; print and record one line; never raise."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):                     # quiet imports
            outcome = test()
        status, line = outcome or ("ok", "")
    except NotImplementedError:
        status, line = "to do", "not attempted yet"
    except NotYet as wrong:
        status, line = "not yet", str(wrong)
    except Exception as error:  # noqa: BLE001 — a check must never crash the student's file
        status, line = "error", f"{type(error).__name__}: {error}"
    RESULTS.append((number, status))
    print(f"[{status}]".ljust(13) + f"{number} {title}" + (f": {line}" if line else ""),
          flush=True)
    return status


def _close(expected, got, what, tolerance=1e-6):
    """Raise NotYet unless got is within tolerance (relative) of expected."""
    expected, got = float(expected), float(got)
    if not math.isclose(expected, got, rel_tol=tolerance, abs_tol=tolerance):
        raise NotYet(f"expected {expected:.6g}, got {got:.6g} ({what})")


def _written(answer):
    """A written answer: "to do" while empty, "answered" once there is text."""
    if answer is None or not str(answer).strip():
        raise NotImplementedError
    return "answered", "compare with the reference answer in the teacher's version"


def _concept(name):
    with contextlib.redirect_stdout(io.StringIO()):
        return helpers.load_concept(name)


def _committed(stem):
    return json.loads((REPOSITORY / "results" / f"{stem}.json").read_text())


# ---------------------------------------------------------------------------------------------
# 01 · the retrieval task
# ---------------------------------------------------------------------------------------------
def ex01_nmse(student):
    def test():
        import torch
        generator = torch.Generator().manual_seed(1)
        for scale in (1.0, 10.0, 0.01):
            target = torch.randn(500, generator=generator) * scale
            prediction = target + torch.randn(500, generator=generator) * scale / 3
            _close(helpers.nmse(prediction, target), student(prediction, target),
                   f"random target of scale {scale:g}", 1e-4)
    return _run("1.1", "NMSE", test)


def ex01_why_nmse(answer):
    return _run("1.2", "why raw MSE misleads across T (written)", lambda: _written(answer))


def ex01_retrieval_target(student):
    def test():
        import torch
        task = _concept("01_retrieval_task")
        for D, T in ((4, 8), (2, 32), (1, 5)):
            x = task.sample_inputs(50, T, 4, seed=T)
            directions = task.task_directions(D, 4)
            expected, _, _ = task.synthetic_task(D, T, 4)(x)
            got = torch.as_tensor(student(x, directions), dtype=expected.dtype)
            if got.shape != expected.shape:
                raise NotYet(f"expected shape {tuple(expected.shape)}, got {tuple(got.shape)}")
            scale = max(1.0, float(expected.abs().max()))     # float32 rounding of sums of maxima
            _close(0.0, float((got - expected).abs().max()), f"largest difference, D={D}, T={T}",
                   tolerance=1e-5 * scale)
    return _run("1.3", "the retrieval target of eq. 8", test)


# ---------------------------------------------------------------------------------------------
# 02 · the model and the drop at h = D
# ---------------------------------------------------------------------------------------------
def ex02_parameter_count(student):
    def test():
        model_file = _concept("02_multihead_model")
        for h, width, layers in ((1, 4, 1), (4, 4, 1), (3, 6, 2)):
            model = model_file.MultiHeadModel(n_heads=h, head_dim=2, width=width,
                                              n_layers=layers)
            _close(model_file.parameter_counts(model)["paper"], student(model),
                   f"h={h}, N={width}, layers={layers}")
    return _run("2.1", "parameters counted as paper A counts them", test)


def ex02_knee_for_D3(predicted):
    def test():
        if predicted is None:
            raise NotImplementedError
        table = _committed("02_multihead_model_D3")["nmse"]
        knees = set()
        for by_heads in table.values():
            minima = {int(h): entry["min"] for h, entry in by_heads.items()}
            heads = sorted(minima)
            knees.add(max(heads[1:], key=lambda h: minima[h - 1] / minima[h]))
        if knees != {predicted}:
            raise NotYet(f"the committed D = 3 results drop most at h = {sorted(knees)}, you "
                         f"predicted {predicted}")
    return _run("2.2", "where the knee moves for D = 3", test)


# ---------------------------------------------------------------------------------------------
# 03 · the bounds
# ---------------------------------------------------------------------------------------------
def ex03_exponent(student):
    def test():
        bounds = _concept("03_bounds")
        for T in (8, 64, 128, 1024):
            for s, D, n in ((3, 4, 8), (1, 2, 2)):
                _close(bounds.lower_bound_exponent(T, s, D, n), student(T, s, D, n),
                       f"T={T}, s={s}, D={D}, n={n}")
    return _run("3.1", "the lower-bound exponent k", test)


def ex03_first_useful_T(student):
    def test():
        bounds = _concept("03_bounds")
        for s, D, n in ((3, 4, 8), (1, 2, 2), (2, 4, 8)):
            expected = bounds.first_nonvacuous_length(s, D, n)
            if bounds.lower_bound_exponent(expected, s, D, n) <= 0:          # the definition
                raise RuntimeError("first_nonvacuous_length disagrees with k > 0")
            _close(expected, student(s, D, n), f"s={s}, D={D}, n={n}")
    return _run("3.2", "where the lower bound stops being vacuous", test)


def ex03_hand_built_head(student):
    def test():
        import torch
        bounds = _concept("03_bounds")
        model_file = _concept("02_multihead_model")
        for D in (1, 3):
            reference, cls = bounds.construction_layer(D)
            layer = model_file.AttentionLayer(2 * D, n_heads=D, head_dim=2)
            student(layer, D)
            tokens = torch.randn(4, 7, 2 * D, generator=torch.Generator().manual_seed(D))
            with torch.no_grad():
                expected, _ = reference(cls.expand(4, 1, -1), tokens, 5.0)
                got, _ = layer(cls.expand(4, 1, -1), tokens, 5.0)
            _close(0.0, float((got - expected).abs().max()), f"largest output difference, D={D}")
    return _run("3.3", "the weights of the hand-built h = D layer", test)


# ---------------------------------------------------------------------------------------------
# 04 · one head memorises
# ---------------------------------------------------------------------------------------------
def ex04_memorising_tokens(student):
    def test():
        import torch
        memory = _concept("04_single_head_memorization")
        x = torch.randn(3, 5, 2, generator=torch.Generator().manual_seed(0))
        expected = memory.memorising_embedding(x)
        got = torch.as_tensor(student(x))
        if got.shape != expected.shape:
            raise NotYet(f"expected shape {tuple(expected.shape)}, got {tuple(got.shape)}")
        _close(0.0, float((got - expected).abs().max()), "largest difference")
    return _run("4.1", "the memorising embedding e_t (x) x(t)", test)


def ex04_read_back(student):
    def test():
        import torch
        memory = _concept("04_single_head_memorization")
        x = torch.randn(3, 6, 2, generator=torch.Generator().manual_seed(1))
        average = memory.memorising_embedding(x).mean(dim=1)                # uniform attention
        got = torch.as_tensor(student(average, 6, 2))
        if got.shape != x.shape:
            raise NotYet(f"expected shape {tuple(x.shape)}, got {tuple(got.shape)}")
        _close(0.0, float((got - x).abs().max()), "largest difference from the sequence")
    return _run("4.2", "reading the sequence back from the uniform average", test)


# ---------------------------------------------------------------------------------------------
# 05 · saturation
# ---------------------------------------------------------------------------------------------
def ex05_softmax_band(student):
    def test():
        saturation = _concept("05_saturation")
        for B in (0.5, 2.0):
            for L in (4, 1000):
                row = saturation.lemma_extremes(B, L, 10, seed=0)
                low, high = student(B, L)
                _close(row["lower"] / L, low, f"lower end, B={B}, L={L}")
                _close(row["upper"] / L, high, f"upper end, B={B}, L={L}")
                if not low * L <= row["L_min_p"] * (1 + 1e-9):
                    raise NotYet("your lower end is above a softmax weight we found")
    return _run("5.1", "the bounded-logit band of a softmax weight", test)


def ex05_entropy_floor(student):
    def test():
        saturation = _concept("05_saturation")
        for B in (0.5, 1.0, 3.0):
            for L in (2, 16, 4096):
                _close(saturation.entropy_bound(B, L), student(B, L), f"B={B}, L={L}")
    return _run("5.2", "the entropy floor H(p)/log L", test)


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
            _close(counted, student(layers, width), f"layers {layers}, width {width}")
    return _run("6.1", "an allocation's attention parameters", test)


def ex06_winners(student):
    def test():
        comparison = _committed("06_allocation")["comparison"]
        for task, entry in comparison.items():
            means = {name: a["mean"] for name, a in entry["allocations"].items()
                     if name != "front-reduced"}
            expected = min(means, key=means.get)
            got = student(task)
            if got != expected:
                raise NotYet(f"on {task} the committed results favour {expected!r}, you said "
                             f"{got!r}")
    return _run("6.2", "which allocation wins on which task (committed results)", test)


def ex06_why(answer):
    return _run("6.3", "why the winner flips (written)", lambda: _written(answer))


def summary():
    """Print how many checks are ok, answered, not yet, to do and in error."""
    counts = {status: sum(1 for _, s in RESULTS if s == status)
              for status in ("ok", "answered", "not yet", "to do", "error")}
    print("summary: " + ", ".join(f"{n} {status}" for status, n in counts.items()))
    return counts

"""The notebooks are generated from the scripts (no drift), carry each figure where its part is,
hold no machine's path, and execute under QUICK=1; importing a file trains nothing.

They run on the device a user would get: auto (CUDA when present), or $DEVICE when set, e.g.
DEVICE=cpu python -m pytest tests/test_notebooks.py on a GPU machine."""
import re
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

import conftest
import helpers

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = conftest.SCRIPTS                               # the lessons and the studies
# A machine's path: the repository's own location, or a home, temporary or system folder.
MACHINE_PATH = re.compile(re.escape(str(ROOT)) + r"|(?<![\w.])/(home|root|tmp|Users|work|usr|"
                          r"opt|var|private)/")


def cells(notebook):
    return [(cell.cell_type, cell.source.strip()) for cell in notebook.cells]


def committed(script):
    return nbformat.read(ROOT / "notebooks" / f"{script.stem}.ipynb", as_version=4)


def output_text(output):
    """Everything an output shows as text (streams, results, errors)."""
    text = output.get("text", "")
    data = output.get("data", {})
    return "".join(text) + "".join(data.get("text/plain", "")) + "".join(
        output.get("traceback", []))


def figure_calls(source):
    """How many run.figure(...) calls a cell makes when it runs: those outside the functions it
    defines (a definition draws nothing until it is called)."""
    import ast
    tree = ast.parse(source)
    inside = {id(node) for function in ast.walk(tree)
              if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
              for node in ast.walk(function)}
    return sum(1 for node in ast.walk(tree)
               if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and node.func.attr == "figure" and getattr(node.func.value, "id", None) == "run"
               and id(node) not in inside)


def test_figure_calls_are_counted_outside_definitions_only():
    assert figure_calls("run.figure(a, 'x')\nrun.figure(b, 'y')") == 2
    assert figure_calls("def show(a):\n    run.figure(a, 'x')\n") == 0
    assert figure_calls("if ok:\n    run.figure(plot(a), 'x')\n") == 1


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_committed_notebook_matches_its_script(script):
    assert (ROOT / "notebooks" / f"{script.stem}.ipynb").exists(), \
        f"run: jupytext --to notebooks//ipynb {script.name}"
    assert cells(committed(script)) == cells(jupytext.read(script)), (
        f"notebooks/{script.stem}.ipynb differs from {script.name}; regenerate it (README)")


@pytest.mark.parametrize("script", conftest.LESSONS, ids=lambda path: path.stem)
def test_a_lessons_first_screen_is_its_idea_and_its_settings(script):
    """The title and one paragraph; the imports and the parse's machinery, folded; then the
    settings rows with the one call that parses them. Every apparatus cell is folded."""
    notebook = jupytext.read(script)
    first, apparatus, settings = notebook.cells[:3]
    assert first.cell_type == "markdown" and first.source.startswith("# 0")
    assert first.source.count("\n\n") == 1, "the title, then one paragraph"
    assert apparatus.cell_type == "code" and "import" in apparatus.source
    assert "def config(" in apparatus.source and "def config(" not in settings.source
    assert "SETTINGS = {" in settings.source and "args = config()" in settings.source
    assert "def refusals" not in settings.source
    for cell in notebook.cells:
        folded = cell.metadata.get("jupyter", {}).get("source_hidden", False)
        assert folded == ("apparatus" in cell.metadata.get("tags", [])), cell.source[:60]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_each_figure_is_shown_in_the_cell_of_its_part(script):
    """Every code cell that draws a figure (run.figure) shows it there, as an image; the text
    cells before it explain it. The committed notebooks ran at the default preset, no error."""
    notebook = committed(script)
    drawing = [cell for cell in notebook.cells
               if cell.cell_type == "code" and figure_calls(cell.source)]
    assert drawing, f"{script.name} draws no figure"
    for cell in drawing:
        images = sum("image/png" in output.get("data", {}) for output in cell.outputs)
        assert images >= figure_calls(cell.source), (script.name, cell.source[:80])
    outputs = [output for cell in notebook.cells for output in cell.get("outputs", [])]
    assert not [output for output in outputs if output.output_type == "error"]
    first = next(output_text(o) for o in outputs if output_text(o))
    assert "preset: default" in first                                  # the default preset ran


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_no_output_holds_a_machine_s_path(script):
    for cell in committed(script).cells:
        for output in cell.get("outputs", []):
            found = MACHINE_PATH.search(output_text(output))
            assert not found, (script.name, output_text(output)[:200])


def test_the_path_pattern_finds_what_it_should():
    assert MACHINE_PATH.search(f"wrote {ROOT}/runs/results/x.json")
    assert MACHINE_PATH.search("wrote /tmp/x/results/x.json")
    assert not MACHINE_PATH.search("wrote runs/results/x.json; 1/sqrt(d) and a/b/c")


IMPORT_TIMES = """
import sys, time
sys.path.insert(0, sys.argv[1])
import matplotlib.pyplot, torch, helpers, harness, plumbing
def trains(*args, **kwargs):
    raise AssertionError("importing a file trained a model")
helpers.fit = harness.run_sweep = trains
for stem in sys.argv[2:]:
    for loaded in [name for name in sys.modules if name[:2].isdigit()]:
        del sys.modules[loaded]                # each file afresh, with the files it loads
    started = time.perf_counter()
    module = helpers.load_concept(stem)
    print(stem, time.perf_counter() - started, hasattr(module, "run"), hasattr(module, "args"))
"""


def test_importing_a_file_trains_nothing_and_takes_under_a_second():
    """load_concept runs the definitions only: no run, no parsed flags, no training (fit and
    run_sweep would raise), in under a second once torch and matplotlib are imported."""
    done = subprocess.run([sys.executable, "-c", IMPORT_TIMES, str(ROOT),
                           *(script.stem for script in SCRIPTS)],
                          capture_output=True, text=True, timeout=120, encoding="utf-8")
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    assert [row[0] for row in rows] == [script.stem for script in SCRIPTS]
    for stem, seconds, has_run, has_args in rows:
        assert (has_run, has_args) == ("False", "False"), stem
        assert float(seconds) < 1.0, f"{stem}: {float(seconds):.2f} s"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_notebook_executes_in_quick_mode(script, notebook_run):
    """Executed with nbclient under QUICK=1 (once: the file's test_main_quick reads the same
    run's JSON); it must reach the end, write its quick results, and show no error. A side
    study's notebook replays its committed run, as the committed notebook does."""
    result, outputs = notebook_run(script.stem), notebook_run.outputs[script.stem]
    assert not [output for output in outputs if output.output_type == "error"]
    module = helpers.load_concept(script.stem)
    if getattr(module, "NOTEBOOK_ARGS", ""):
        assert "replaying results/" in "".join(output_text(o) for o in outputs)
    else:
        assert result["config"]["preset"] == "quick"
        assert result["script"] == script.relative_to(ROOT).as_posix()   # the file that ran


def test_each_lesson_notebook_ends_with_a_link_to_the_next():
    """The path as a reader walks it: the last cell of lesson N's notebook links lesson N + 1's
    notebook, and the last lesson's links the report."""
    for lesson, following in zip(conftest.LESSONS, [*conftest.LESSONS[1:], None]):
        last = committed(lesson).cells[-1]
        assert last.cell_type == "markdown", lesson.name
        target = f"({following.stem}.ipynb)" if following else "(../RESULTS.md)"
        assert target in last.source, (lesson.name, last.source)

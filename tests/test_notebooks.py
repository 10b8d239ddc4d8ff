"""The notebooks are generated from the scripts (no drift) and execute under QUICK=1.

They run on the device a user would get: auto (CUDA when present), or $DEVICE when set, e.g.
DEVICE=cpu python -m pytest tests/test_notebooks.py on a GPU machine."""
from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(ROOT.glob("0[1-7]_*.py"))


def cells(notebook):
    return [(cell.cell_type, cell.source.strip()) for cell in notebook.cells]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_committed_notebook_matches_its_script(script):
    committed = ROOT / "notebooks" / f"{script.stem}.ipynb"
    assert committed.exists(), f"run: jupytext --to notebooks//ipynb {script.name}"
    assert cells(nbformat.read(committed, as_version=4)) == cells(jupytext.read(script)), (
        f"{committed.name} differs from {script.name}; regenerate it (see README, Notebooks)")


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_notebook_executes_in_quick_mode(script, notebook_run):
    """Executed with nbclient under QUICK=1 (once: the file's test_main_quick reads the same
    run's JSON); it must reach the end and write its quick results."""
    result = notebook_run(script.stem)
    assert result["config"]["preset"] == "quick" and result["wall_time_s"] > 0

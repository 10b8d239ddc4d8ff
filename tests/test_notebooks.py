"""The notebooks are generated from the scripts (no drift) and execute under QUICK=1.

They run on the device a user would get: auto (CUDA when present), or $DEVICE when set, e.g.
DEVICE=cpu python -m pytest tests/test_notebooks.py on a GPU machine."""
from pathlib import Path

import jupytext
import nbformat
import pytest
from nbclient import NotebookClient

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
def test_notebook_executes_in_quick_mode(script, tmp_path, monkeypatch):
    monkeypatch.setenv("QUICK", "1")
    monkeypatch.setenv("OUT", str(tmp_path))
    monkeypatch.setenv("MPLBACKEND", "agg")
    notebook = nbformat.read(ROOT / "notebooks" / f"{script.stem}.ipynb", as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    assert list((tmp_path / "results").glob(f"{script.stem}_quick.json"))

"""On a machine with a GPU: every numbered script's quick preset runs with --device cuda.

Skipped where torch sees no CUDA device (as on the project's CI). 01 trains nothing and always
runs on the CPU, so its JSON says "cpu"; every other script's JSON must say "cuda".
"""
import json
from pathlib import Path

import pytest
import torch

import conftest
from conftest import run_script

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = [path.stem for path in conftest.SCRIPTS]  # the lessons and the studies
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")


@pytest.mark.parametrize("script", SCRIPTS)
def test_quick_preset_runs_on_cuda(script, tmp_path):
    done = run_script(script, "--quick", "--device", "cuda", "--out", str(tmp_path), timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    written = list((tmp_path / "results").glob("*.json"))
    assert written
    for path in written:
        payload = json.loads(path.read_text(encoding="utf-8"))
        assert payload["device"] == ("cpu" if script.startswith("01") else "cuda")

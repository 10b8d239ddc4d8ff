"""Shared test fixtures: the repository root on sys.path, and a quick-preset config helper."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import helpers  # noqa: E402


@pytest.fixture
def quick_args(tmp_path):
    """quick_args(module, *flags): the module's --quick config, writing under a temporary --out."""
    def make(module, *flags):
        return module.config(["--quick", "--out", str(tmp_path), "--device", "cpu", *flags])
    return make


def run_script(name, *flags, timeout=120):
    """Run a numbered script as a user would; returns the CompletedProcess."""
    import subprocess
    return subprocess.run([sys.executable, str(ROOT / f"{name}.py"), *flags], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def assert_rejected(name, flags, flag_name):
    """A bad flag value ends with exit code 2 and one line naming the flag, no traceback."""
    done = run_script(name, *flags)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and flag_name in done.stderr
    assert "Traceback" not in done.stderr

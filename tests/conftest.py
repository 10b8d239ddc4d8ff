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
    """A bad flag value ends with exit code 2 and one line naming the flag, before any work.

    The checks all live in the script's config(), so calling it is what the command line does
    (tests/test_flag_contract.py runs one real command line to prove it)."""
    import contextlib
    import io
    stderr = io.StringIO()
    with pytest.raises(SystemExit) as stop, contextlib.redirect_stderr(stderr):
        helpers.load_concept(name).config([*flags, "--out", str(ROOT / "no-run")])
    assert stop.value.code == 2
    assert stderr.getvalue().count("\n") == 1 and flag_name in stderr.getvalue()

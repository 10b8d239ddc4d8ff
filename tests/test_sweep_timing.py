"""tests/sweep_timing.py, the measurement of the sweep engines, refuses what it cannot run in
one line before any work (its run takes 13 minutes: RESULTS.md, results/sweep_timing.json)."""
import contextlib
import io

import pytest

import sweep_timing


@pytest.mark.parametrize("flags, named", [([], "--before"),
                                          (["--before", "no-such-folder"], "--before"),
                                          (["--before", ".", "--presets", "full"], "--presets")])
def test_a_missing_checkout_or_an_unknown_preset_is_refused_in_one_line(flags, named, tmp_path):
    stderr = io.StringIO()
    with pytest.raises(SystemExit) as stop, contextlib.redirect_stderr(stderr):
        sweep_timing.check_before(sweep_timing.config([*flags, "--out", str(tmp_path)]))
    assert stop.value.code == 2
    assert stderr.getvalue().count("\n") == 1 and named in stderr.getvalue()


def test_the_presets_and_the_before_checkout_are_accepted(tmp_path):
    args = sweep_timing.config(["--before", ".", "--presets", "quick", "--out", str(tmp_path)])
    sweep_timing.check_before(args)
    assert args.presets == ["quick"] and (args.before / "02_multihead_model.py").is_file()

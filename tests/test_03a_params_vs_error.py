"""further/03a_params_vs_error.py: the width sweep, its summary, the quick run, the replayed
committed run, the script's refusals."""
import pytest

import helpers
import plumbing
from conftest import ROOT, RUN_KEYS, assert_rejected, run_quick

study = helpers.load_concept("03a_params_vs_error")


@pytest.fixture(scope="module")
def quick_result(tmp_path_factory):
    """The study's --quick run (it trains), once for this module: its notebook replays instead."""
    return run_quick("03a_params_vs_error", tmp_path_factory.mktemp("03a_quick"))


def test_main_quick(quick_result):
    assert set(quick_result) - RUN_KEYS == {"widths"}
    assert quick_result["script"] == "further/03a_params_vs_error.py"
    for by_length in quick_result["widths"].values():
        for entry in by_length.values():
            assert entry["widths"] == [8, 32] and len(entry["min_nmse"]) == 2
            assert entry["parameters"][0] < entry["parameters"][1]   # N grows the paper's count


def test_slope_is_negative_below_D_on_a_small_sweep(quick_args):
    args = quick_args(study, "--D", "2", "--heads", "1", "--widths", "4,32", "--steps", "600",
                      "--workers", "2")
    widths = study.summarise_widths(study.width_sweep(args))
    assert widths["1"]["8"]["slope"] < 0


def test_widths_keep_the_training_error_of_the_best_validation_seed():
    runs = [dict(h=4, T=8, width=N, seed=s, valid_nmse=v, train_nmse=t, parameters={"paper": P})
            for N, P, rows in [(8, 100, [(0, 0.3, 0.2), (1, 0.1, 0.5)]),
                               (16, 200, [(0, 0.05, 0.01), (1, 0.07, 0.001)])]
            for s, v, t in rows]
    entry = study.summarise_widths(runs)["4"]["8"]
    assert entry["min_nmse"] == [0.1, 0.05] and entry["train_nmse"] == [0.5, 0.01]


def test_the_committed_run_replays_with_the_numbers_the_text_quotes(capsys):
    """The notebook draws results/03a_params_vs_error.json; its slopes and ranges are
    the ones the study's markdown quotes, the paper's range beside ours."""
    numbers = plumbing.replay(ROOT / "results" / "03a_params_vs_error.json")
    slopes = {h: {T: round(entry["slope"], 2) for T, entry in by_length.items()}
              for h, by_length in numbers["widths"].items()}
    assert slopes == {"3": {"8": -0.54, "32": -0.53}, "4": {"8": -0.19, "32": 0.11}}
    study.report_paper(numbers, None)
    printed = capsys.readouterr().out
    assert "h = 3: 2.3e-03 to 1.3e-02  [1.6e-04 to 4.0e-04]" in printed
    assert "h = 4: 1.6e-04 to 4.4e-04  [1.6e-07 to 1.0e-06]" in printed


@pytest.mark.parametrize("flags, flag_name", [
    (["--widths", "8"], "--widths"), (["--D", "5"], "--D"),
    (["--device", "no-such-device"], "--device"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("03a_params_vs_error", flags, flag_name)

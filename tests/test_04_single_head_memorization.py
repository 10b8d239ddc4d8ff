"""04_single_head_memorization.py: exact memorisation, the memorising model's parameter count,
the quick run, the script's refusals and parts."""

import pytest
import torch

import helpers
from conftest import RUN_KEYS, assert_rejected, run_quick

memo = helpers.load_concept("04_single_head_memorization")


@pytest.mark.parametrize("seq_len, dim", [(1, 4), (5, 2), (16, 4), (40, 1)])
def test_memorised_output_is_exactly_the_sequence_over_T(seq_len, dim):
    x = torch.randn(7, seq_len, dim)
    memory, weights = memo.memorise(x)
    torch.testing.assert_close(weights, torch.full_like(weights, 1 / seq_len))  # uniform
    for k in range(7):  # block t of the CLS output is x(t) / T
        for t in range(seq_len):
            torch.testing.assert_close(memory[k, t * dim:(t + 1) * dim], x[k, t] / seq_len)


def test_memorising_model_parameter_formula():
    """Only the read-out trains: a T d -> width layer, depth - 1 width -> width layers, and the
    width -> 1 output, each with its biases."""
    for seq_len, width, depth in [(4, 64, 3), (16, 32, 2)]:
        model = memo.MemorisingModel(seq_len, dim=4, width=width, depth=depth)
        size = seq_len * 4
        formula = (size * width + width) + (depth - 1) * (width * width + width) + (width + 1)
        assert helpers.count_parameters(model) == formula


def test_the_memorising_read_out_is_the_one_the_text_describes():
    """Three hidden ReLU layers of width 64, trained at a peak learning rate of 3e-3."""
    model = memo.MemorisingModel(8)
    hidden = [layer.out_features for layer in model.readout if isinstance(layer, torch.nn.Linear)]
    assert hidden == [64, 64, 64, 1] and memo.MEMORISE_LR == 3e-3


def test_main_quick(notebook_run):
    result = notebook_run("04_single_head_memorization")   # the --quick run, as its notebook
    assert set(result) - RUN_KEYS == {"memorisation_exactness", "trained"}
    assert all(v["max_error"] == 0 and v["attention_spread"] == 0
               for v in result["memorisation_exactness"].values())
    assert set(result["trained"]) == {"memorise", "1 head", "h = D"}
    assert result["trained"]["h = D"]["8"]["valid_nmse"] < result["trained"]["1 head"]["8"][
        "valid_nmse"]


@pytest.mark.parametrize("flags, flag_name", [
    (["--T", "0"], "--T"), (["--T", "512"], "--T"), (["--D", "5"], "--D"),
    (["--construction-T", "4096"], "--construction-T"), (["--device", "no-such-device"],
                                                          "--device"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("04_single_head_memorization", flags, flag_name)


def test_a_lesson_has_no_parts_to_choose():
    """--parts is a study's flag (plumbing.config); a lesson runs whole."""
    assert_rejected("04_single_head_memorization", ["--parts", "a"], "--parts")


def test_the_table_3_row_it_prints_is_the_studies_table_3():
    from engine import lesson02
    assert memo.PAPER_TABLE_3_H4 == lesson02.PAPER_TABLE_3[4]

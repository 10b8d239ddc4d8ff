"""04_single_head_memorization.py: exact memorisation, Lemma 9, parameter counts, the script."""

import pytest
import torch

import helpers
import plumbing
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


@pytest.mark.parametrize("seq_len, levels", [(1, 3), (7, 10), (64, 25)])
def test_lemma9_error_stays_within_one_over_n(seq_len, levels):
    net = memo.lemma9_network(seq_len, levels)
    x = torch.rand(2000, seq_len)
    x[:10] = torch.rand(10, 1)       # ties: all entries equal
    x[10:20] = 1.0                   # the top of the range
    x[20:30] = torch.arange(levels).float()[torch.randint(levels, (10, seq_len))] / levels
    error = (net(x).squeeze(-1) - x.max(dim=1).values).abs().max()
    assert float(error) <= 1 / levels + 1e-6


def test_lemma9_widths_and_parameter_formulas_match_the_network():
    for seq_len, levels in [(3, 2), (10, 7), (32, 50)]:
        net = memo.lemma9_network(seq_len, levels)
        assert net[0].out_features <= 2 * seq_len * levels  # the lemma's width bound
        assert net[2].out_features <= 2 * seq_len * levels
        dense = sum(p.numel() for p in net.parameters())
        assert plumbing.lemma9_parameters(seq_len, levels) == dense   # the memory guard's count
        weights = sum(int((layer.weight != 0).sum()) for layer in (net[0], net[2], net[4]))
        assert memo.lemma9_nonzero_weights(seq_len, levels) == weights


def test_memorising_model_parameter_formula():
    for seq_len, width, depth in [(4, 64, 3), (16, 32, 2)]:
        model = memo.MemorisingModel(seq_len, dim=4, width=width, depth=depth)
        assert helpers.count_parameters(model) == memo.memorising_parameters(
            seq_len, 4, width, depth)  # only the read-out trains


@pytest.mark.parametrize("seq_len, epsilon", [(8, 0.3), (24, 0.1), (64, 0.05)])
def test_assembled_model_is_within_epsilon_without_training(seq_len, epsilon):
    (row,) = memo.assembled_errors([seq_len], [epsilon], D=3, dim=2, n=200, seed=seq_len)
    assert row["max_error"] <= epsilon


def test_beta_needed_meets_the_bound():
    bounds = helpers.load_concept("03_bounds")
    beta = memo.beta_needed(16, 64, 0.01)
    assert bounds.construction_bound(16, 64, beta) <= 0.01
    assert bounds.construction_bound(16, 64, 0.99 * beta) > 0.01


def test_main_quick(notebook_run):
    result = notebook_run("04_single_head_memorization")   # the --quick run, as its notebook
    assert set(result["trained"]) == {"memorise", "1 head", "h = D"}
    assert result["trained"]["h = D"]["8"]["valid_nmse"] < result["trained"]["1 head"]["8"][
        "valid_nmse"]


@pytest.mark.parametrize("flags, flag_name", [
    (["--epsilons", "1.5"], "--epsilons"), (["--T", "0"], "--T"),
    (["--construction-T", "4096"], "--construction-T"), (["--device", "no-such-device"],
                                                          "--device"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("04_single_head_memorization", flags, flag_name)


@pytest.mark.parametrize("seq_lens, epsilons", [([8], [0.5]), ([8, 32], [0.2, 0.05]),
                                                ([16, 64], [0.1, 0.02])])
def test_size_estimate_matches_the_networks_built(seq_lens, epsilons, monkeypatch):
    built = []
    original = memo.lemma9_network

    def recording(seq_len, levels):
        network = original(seq_len, levels)
        built.append(sum(p.numel() for p in network.parameters()))
        return network
    monkeypatch.setattr(memo, "lemma9_network", recording)
    memo.assembled_errors(seq_lens, epsilons, D=3, dim=2, n=5, seed=0)
    estimate = plumbing.largest_lemma9(seq_lens, epsilons, D=3)
    assert abs(estimate - max(built)) <= 0.1 * max(built)


@pytest.mark.parametrize("seq_lens", [[8], [8, 32], [512]])
def test_smallest_epsilon_is_the_limit(seq_lens):
    D = memo.ASSEMBLED_D
    epsilon = float(f"{plumbing.smallest_lemma9_epsilon(seq_lens, D):.2g}")  # as refused
    assert plumbing.largest_lemma9(seq_lens, [epsilon], D) <= plumbing.LEMMA9_LIMIT
    assert plumbing.largest_lemma9(seq_lens, [epsilon / 2], D) > plumbing.LEMMA9_LIMIT


def test_parts_runs_only_what_it_names(tmp_path):
    result = run_quick("04_single_head_memorization", tmp_path, "--parts", "a")
    assert set(result) - RUN_KEYS == {"memorisation_exactness"}


def test_an_unknown_part_is_refused_with_one_line():
    assert_rejected("04_single_head_memorization", ["--parts", "d"], "--parts")

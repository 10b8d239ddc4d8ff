"""further/04a_cost_accounting.py: Lemma 9's max network within 1/n, its widths and weight
counts, the assembled model within eps, the softmax scale beta, the memory guard's estimate and
limit, the quick run and the study's refusals."""

import pytest
import torch

import helpers
from conftest import RUN_KEYS, assert_rejected

study = helpers.load_concept("04a_cost_accounting")


@pytest.mark.parametrize("seq_len, levels", [(1, 3), (7, 10), (64, 25)])
def test_lemma9_error_stays_within_one_over_n(seq_len, levels):
    net = study.lemma9_network(seq_len, levels)
    x = torch.rand(2000, seq_len)
    x[:10] = torch.rand(10, 1)       # ties: all entries equal
    x[10:20] = 1.0                   # the top of the range
    x[20:30] = torch.arange(levels).float()[torch.randint(levels, (10, seq_len))] / levels
    error = (net(x).squeeze(-1) - x.max(dim=1).values).abs().max()
    assert float(error) <= 1 / levels + 1e-6


def test_lemma9_widths_and_parameter_formulas_match_the_network():
    for seq_len, levels in [(3, 2), (10, 7), (32, 50)]:
        net = study.lemma9_network(seq_len, levels)
        assert net[0].out_features <= 2 * seq_len * levels  # the lemma's width bound
        assert net[2].out_features <= 2 * seq_len * levels
        dense = sum(p.numel() for p in net.parameters())
        assert study.lemma9_parameters(seq_len, levels) == dense   # the memory guard's count
        weights = sum(int((layer.weight != 0).sum()) for layer in (net[0], net[2], net[4]))
        assert study.lemma9_nonzero_weights(seq_len, levels) == weights


@pytest.mark.parametrize("seq_len, epsilon", [(8, 0.3), (24, 0.1), (64, 0.05)])
def test_assembled_model_is_within_epsilon_without_training(seq_len, epsilon):
    (row,) = study.assembled_errors([seq_len], [epsilon], D=3, dim=2, n=200, seed=seq_len)
    assert row["max_error"] <= epsilon


def test_beta_needed_meets_the_bound():
    bounds = helpers.load_concept("03_bounds")
    beta = study.beta_needed(16, 64, 0.01)
    assert bounds.construction_bound(16, 64, beta) <= 0.01
    assert bounds.construction_bound(16, 64, 0.99 * beta) > 0.01


@pytest.mark.parametrize("seq_lens, epsilons", [([8], [0.5]), ([8, 32], [0.2, 0.05]),
                                                ([16, 64], [0.1, 0.02])])
def test_size_estimate_matches_the_networks_built(seq_lens, epsilons, monkeypatch):
    built = []
    original = study.lemma9_network

    def recording(seq_len, levels):
        network = original(seq_len, levels)
        built.append(sum(p.numel() for p in network.parameters()))
        return network
    monkeypatch.setattr(study, "lemma9_network", recording)
    study.assembled_errors(seq_lens, epsilons, D=3, dim=2, n=5, seed=0)
    estimate = study.largest_lemma9(seq_lens, epsilons, D=3)
    assert abs(estimate - max(built)) <= 0.1 * max(built)


@pytest.mark.parametrize("seq_lens", [[8], [8, 32], [512]])
def test_smallest_epsilon_is_the_limit(seq_lens):
    D = study.ASSEMBLED_D
    epsilon = float(f"{study.smallest_lemma9_epsilon(seq_lens, D):.2g}")  # as refused
    assert study.largest_lemma9(seq_lens, [epsilon], D) <= study.LEMMA9_LIMIT
    assert study.largest_lemma9(seq_lens, [epsilon / 2], D) > study.LEMMA9_LIMIT


def test_main_quick(notebook_run):
    result = notebook_run("04a_cost_accounting")   # the --quick run, as its notebook
    assert set(result) - RUN_KEYS == {"lemma9", "assembled"}
    assert all(row["max_error"] <= row["bound"] for row in result["lemma9"])
    args = study.config(["--quick"])
    assert [(row["T"], row["epsilon"]) for row in result["assembled"]] == [
        (T, epsilon) for T in args.construction_T for epsilon in args.epsilons]
    for row in result["assembled"]:
        assert row["max_error"] <= row["epsilon"]
        assert row["ffn_weights_used"] < row["ffn_parameters_dense"]
        assert row["h_equals_D_attention_parameters"] == 144        # 4 (2D)^2 at D = 3, n = 2


@pytest.mark.parametrize("flags, flag_name", [
    (["--epsilons", "1.5"], "--epsilons"), (["--epsilons", "0.0001"], "--epsilons"),
    (["--construction-T", "4096"], "--construction-T"), (["--device", "no-such-device"],
                                                          "--device"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("04a_cost_accounting", flags, flag_name)


def test_the_memory_guard_names_the_smallest_epsilon_that_fits(capsys):
    with pytest.raises(SystemExit) as stop:
        study.config(["--epsilons", "0.0001", "--construction-T", "128"])
    assert stop.value.code == 2
    smallest = f"{study.smallest_lemma9_epsilon([128], study.ASSEMBLED_D):.2g}"
    assert f"smallest accepted: {smallest}" in capsys.readouterr().err

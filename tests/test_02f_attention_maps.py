"""further/02f_attention_maps.py: each head's attention on each a_i's token against a loop, the
maps of a quick sweep, the JSON it writes and its refusals."""
import pytest
import torch

import helpers
import harness
import plumbing
from conftest import RUN_KEYS, assert_rejected
from engine import lesson02 as engine

model_file = helpers.load_concept("02_multihead_model")
maps = helpers.load_concept("02f_attention_maps")


def test_head_specialisation_equals_a_loop_over_sequences():
    torch.manual_seed(2)
    model = model_file.MultiHeadModel(n_heads=3, head_dim=4, width=16)
    matrix = maps.head_specialisation(model, 9, 4, 5, seed=7)            # [h, D]
    x, _, positions = model_file.task.sample_synthetic(5, 9, 4, seed=7)
    with torch.no_grad():
        _, weights = model(x, return_attention=True)                    # [n, h, T]
    for head in range(3):
        for i in range(4):
            by_hand = sum(weights[k, head, positions[k, i]] for k in range(5)) / 5
            assert matrix[head, i].item() == pytest.approx(by_hand.item(), rel=1e-6)


def test_best_run_is_the_lowest_error_among_the_matching_runs():
    runs = [dict(T=8, h=2, valid_nmse=0.3), dict(T=8, h=2, valid_nmse=0.1),
            dict(T=32, h=2, valid_nmse=0.01), dict(T=8, h=3, valid_nmse=0.05)]
    assert maps.best_run(runs, T=8, h=2) is runs[1]


def test_the_maps_of_a_quick_sweep(quick_args):
    args = quick_args(maps, "--D", "2", "--heads", "1,2", "--workers", "2")
    trained = harness.run_sweep(model_file.sweep_runs(args), args.workers, model_file.train_one,
                                cost=model_file.sweep_cost)
    chosen = {h: maps.best_run(trained, T=8, h=h) for h in args.heads}
    found = engine.attention_maps(chosen, args, model_file.build_model, maps.head_specialisation,
                                  8, model_file.task.DEFAULT_DIRECTIONS)
    assert set(found["mechanism"]) == {"1", "2"} and harness.first_non_finite(found) is None
    for h, entry in found["mechanism"].items():
        assert len(entry["attention_on_targets"]) == int(h)           # one row per head
        assert all(len(row) == 2 for row in entry["attention_on_targets"])  # one column per a_i
    overlap = found["a_i_overlap"]                                    # the a_i's own geometry
    cosine = torch.tensor(overlap["cosine"])
    torch.testing.assert_close(cosine.diagonal(), torch.ones(2))
    torch.testing.assert_close(cosine, cosine.T)
    _, _, positions = model_file.task.sample_synthetic(                # the same fresh sequences
        engine.SPECIALISATION_SEQUENCES, 8, 2, seed=args.seed + engine.SPECIALISATION_SEED_OFFSET)
    shared = sum(int(p[0] == p[1]) for p in positions) / len(positions)
    assert overlap["same_token"][0][1] == pytest.approx(shared) and overlap["same_token"][0][0] == 1


def test_main_quick_writes_one_map_per_head_count(notebook_run):
    result = notebook_run("02f_attention_maps")   # the --quick run, as its notebook executes it
    assert set(result) - RUN_KEYS == {"mechanism", "a_i_overlap"}
    assert set(result["mechanism"]) == {"3", "4"}
    for h, entry in result["mechanism"].items():
        assert len(entry["attention_on_targets"]) == int(h)           # one row per head


@pytest.mark.parametrize("flags, flag_name", [
    (["--T", "8,32"], "--T"), (["--D", "5"], "--D"), (["--heads", "2,0"], "--heads"),
    (["--T", "2048"], "--T"),
])
def test_bad_input_exits_2_with_one_line(flags, flag_name):
    assert_rejected("02f_attention_maps", flags, flag_name)

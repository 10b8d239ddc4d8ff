"""helpers.py: NMSE, the attention scale, the statistics and the training loop."""
import math

import pytest
import torch

import helpers
import harness


def test_nmse_against_its_definition():
    target = torch.tensor([1.0, 2.0, 4.0, 7.0])
    prediction = torch.tensor([1.5, 2.0, 3.0, 7.5])
    mean = sum(target.tolist()) / 4
    variance = sum((t - mean) ** 2 for t in target.tolist()) / 4
    mse = sum((p - t) ** 2 for p, t in zip(prediction.tolist(), target.tolist())) / 4
    assert helpers.nmse(prediction, target) == pytest.approx(mse / variance)
    assert helpers.nmse(torch.full((4,), mean), target) == pytest.approx(1.0)


def test_count_parameters_by_hand():
    model = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.ReLU(), torch.nn.Linear(5, 1))
    assert helpers.count_parameters(model) == (3 * 5 + 5) + (5 * 1 + 1)


def test_training_lowers_nmse_and_is_reproducible():
    def run():
        helpers.seed_everything(0)
        x = torch.randn(512, 3)
        y = x @ torch.tensor([1.0, -2.0, 0.5]) + torch.sin(x[:, 0])
        model = torch.nn.Sequential(torch.nn.Linear(3, 32), torch.nn.ReLU(),
                                    torch.nn.Linear(32, 1), torch.nn.Flatten(0))
        before = helpers.evaluate_nmse(model, (x[400:], y[400:]))
        result = helpers.train_regression(model, (x[:400], y[:400]), (x[400:], y[400:]),
                                          steps=300, batch_size=64, lr=1e-2)
        return before, result["valid_nmse"]
    before, after = run()
    assert after < 0.2 * before
    assert run()[1] == after


def test_non_finite_loss_stops_training_with_the_run_name():
    model = torch.nn.Sequential(torch.nn.Linear(1, 1), torch.nn.Flatten(0))
    x, y = torch.ones(8, 1), torch.full((8,), math.nan)
    with pytest.raises(helpers.NonFiniteLoss, match="h=3 T=8"):
        helpers.train_regression(model, (x, y), (x, y), steps=5, batch_size=4, lr=1e-3,
                                 name="h=3 T=8")


def test_load_concept_imports_a_numbered_file():
    module = helpers.load_concept("01_retrieval_task")
    assert module is helpers.load_concept("01_retrieval_task")
    assert hasattr(module, "sample_synthetic") and not hasattr(module, "run")  # trains nothing


def test_non_finite_data_and_divergence_get_different_messages():
    model = torch.nn.Sequential(torch.nn.Linear(1, 1), torch.nn.Flatten(0))
    x = torch.ones(8, 1)
    with pytest.raises(helpers.NonFiniteLoss, match="training data hold NaN") as stop:
        helpers.train_regression(model, (x, torch.full((8,), math.nan)), (x, torch.ones(8)),
                                 steps=5, batch_size=4, lr=1e-3, name="run")
    assert "learning rate" not in str(stop.value)  # the data, not the learning rate, is at fault
    with pytest.raises(helpers.NonFiniteLoss,
                       match=r"run: loss became \w+ at step \d+ .*smaller learning rate"):
        helpers.train_regression(model, (x, torch.ones(8)), (x, torch.ones(8)), steps=50,
                                 batch_size=4, lr=1e30, name="run")


def test_batches_drawn_at_once_equal_one_draw_per_step():
    seen = []

    class Recorder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.zeros(1))

        def forward(self, x):
            seen.append(x[:, 0].long().clone())
            return x[:, 0] * self.weight

    x = torch.arange(50, dtype=torch.float32).unsqueeze(1)                 # x[i] = i
    helpers.train_regression(Recorder(), (x, x[:, 0]), (x, x[:, 0]), steps=7, batch_size=5,
                             lr=1e-3, seed=3)
    generator = torch.Generator().manual_seed(3)
    per_step = [torch.randint(50, (5,), generator=generator) for _ in range(7)]
    assert all(torch.equal(a, b) for a, b in zip(seen[:7], per_step))


@pytest.mark.parametrize("bad_step", [0, 37, 99, 100, 249])
def test_the_loop_names_the_first_non_finite_step(bad_step):
    """fit() checks the losses once per CHECK_EVERY steps, yet names the first bad one."""
    model = torch.nn.Linear(1, 1)

    def loss_at(step):
        return model.weight.sum() * 0 + (math.nan if step >= bad_step else 1.0)

    with pytest.raises(helpers.NonFiniteLoss, match=f"loss became nan at step {bad_step} "):
        helpers.fit(model, loss_at, steps=250, lr=1e-2, name="run")
    helpers.fit(torch.nn.Linear(1, 1), lambda step: torch.tensor(1.0, requires_grad=True),
                steps=250, lr=1e-2)                                          # no false alarm


def test_seed_stats_by_hand():
    entry = helpers.seed_stats([1.0, 2.0, 4.0])
    assert entry["seeds"] == [1.0, 2.0, 4.0] and entry["min"] == 1.0
    assert entry["mean"] == pytest.approx(7 / 3)
    assert entry["std"] == pytest.approx(math.sqrt(((1 - 7 / 3) ** 2 + (2 - 7 / 3) ** 2
                                                    + (4 - 7 / 3) ** 2) / 2))
    assert helpers.seed_stats([0.5])["std"] == 0.0


def old_loop(model, loss_at, steps, lr, weight_decay):
    """A training loop written out in full: AdamW, the schedule, one step per batch."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: helpers.warmup_cosine(s, steps))
    losses = []
    for step in range(steps):
        loss = loss_at(step)
        losses.append(float(loss.detach()))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        schedule.step()
    return losses


@pytest.mark.parametrize("weight_decay", [0.0, 0.01, 0.05])
def test_the_shared_loop_gives_the_losses_of_the_old_loops(weight_decay):
    def setup():
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.GELU(), torch.nn.Linear(8, 1))
        x, y = torch.randn(40, 3), torch.randn(40, 1)
        batches = torch.randint(40, (25, 8), generator=torch.Generator().manual_seed(1))
        return model, lambda step: torch.mean((model(x[batches[step]]) - y[batches[step]]) ** 2)
    model, loss_at = setup()
    old = old_loop(model, loss_at, 25, 3e-2, weight_decay)
    model, loss_at = setup()
    new = helpers.fit(model, loss_at, steps=25, lr=3e-2, weight_decay=weight_decay)
    assert new.tolist() == pytest.approx(old, rel=0, abs=0)           # bit for bit
    assert sum(old[-5:]) < sum(old[:5])                                # it trains


def test_fit_calls_after_step_once_per_step():
    model = torch.nn.Linear(1, 1)
    seen = []
    helpers.fit(model, lambda step: model(torch.ones(1)).sum() ** 2, steps=7, lr=1e-3,
                after_step=seen.append)
    assert seen == list(range(7))


@pytest.mark.parametrize("df, table", [(1, 12.706), (2, 4.303), (4, 2.776), (9, 2.262),
                                       (30, 2.042)])
def test_t_quantile_against_the_t_table(df, table):
    assert helpers.t_quantile(df) == pytest.approx(table, abs=5e-4)


def test_paired_difference_by_hand():
    per_seed = [0.1, -0.3, 0.2, 0.0, -0.5]
    mean = sum(per_seed) / 5
    std = math.sqrt(sum((v - mean) ** 2 for v in per_seed) / 4)          # n - 1
    half = 2.776 * std / math.sqrt(5)                                   # t_{0.975, 4}
    entry = helpers.paired_difference(per_seed, below="a better", above="b better")
    assert set(entry) == {"per_seed", "mean", "ci95", "verdict"}
    assert entry["mean"] == pytest.approx(mean)
    assert entry["ci95"] == pytest.approx([mean - half, mean + half], abs=1e-3)
    assert entry["verdict"] == "no clear difference"
    assert helpers.paired_difference([-1.0, -1.1, -0.9], "a better", "b better")["verdict"] \
        == "a better"
    assert helpers.paired_difference([1.0, 1.1, 0.9], "a better", "b better")["verdict"] \
        == "b better"
    with pytest.raises(ValueError):
        helpers.paired_difference([1.0])


def test_standardised_split_uses_the_training_part_only():
    x = torch.arange(10.0)[:, None]
    y = torch.tensor([1.0, 2.0, 3.0, 4.0, 100.0, 200.0, 300.0, 400.0, 500.0, 600.0])
    (x_train, y_train), (x_valid, y_valid) = helpers.standardised_split(x, y, 4)
    assert x_train.shape == (4, 1) and x_valid.shape == (6, 1)
    assert float(y_train.mean()) == pytest.approx(0.0, abs=1e-6)
    assert float(y_train.std()) == pytest.approx(1.0)                   # n - 1, on train only
    assert float(y_valid[0]) == pytest.approx((100 - 2.5) / float(torch.tensor([1.0, 2, 3, 4])
                                                                  .std()))


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_expected_minimum_against_every_subset(n):
    seed_count = helpers.load_concept("02c_seed_count")           # study 02c's statistic
    """The closed form against the minimum of each of the C(n, k) subsets, ties included."""
    import itertools
    import statistics
    values = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0][:n]
    for k in range(1, n + 1):
        minima = [min(subset) for subset in itertools.combinations(values, k)]
        found = seed_count.expected_minimum(values, k)
        assert found["mean"] == pytest.approx(statistics.fmean(minima))
        assert found["std"] == pytest.approx(statistics.pstdev(minima), abs=1e-12)
        assert (found["lowest"], found["highest"]) == (min(minima), max(minima))
    assert seed_count.expected_minimum(values, 1)["mean"] == pytest.approx(statistics.fmean(values))
    assert seed_count.expected_minimum(values, n)["mean"] == min(values)
    with pytest.raises(ValueError, match="k must be between 1"):
        seed_count.expected_minimum(values, n + 1)


def test_train_seeded_is_the_seeded_build_and_train_regression_it_stands_for():
    """One lesson run by train_seeded equals the steps it replaces written out: the seed, then
    the model, then train_regression with the run's seed for its batches."""
    x = torch.randn(300, 3, generator=torch.Generator().manual_seed(1))
    y = x @ torch.tensor([1.0, -2.0, 0.5])
    train, valid = helpers.standardised_split(x, y, 200)
    run = {"seed": 7, "device": "cpu", "width": 16}

    def build(run):
        return torch.nn.Sequential(torch.nn.Linear(3, run["width"]), torch.nn.ReLU(),
                                   torch.nn.Linear(run["width"], 1), torch.nn.Flatten(0))
    options = dict(steps=50, batch_size=32, lr=1e-2)
    model, scored_on, fit = helpers.train_seeded(run, lambda: build(run), train, valid,
                                                 **options)
    helpers.seed_everything(run["seed"])
    by_hand = build(run)
    expected = helpers.train_regression(by_hand, train, valid, seed=run["seed"], **options)
    assert (fit["valid_nmse"], fit["train_nmse"]) == (expected["valid_nmse"],
                                                      expected["train_nmse"])
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), by_hand.parameters()))
    assert torch.equal(scored_on[1], valid[1])
    other_seed = helpers.train_seeded({**run, "seed": 8}, lambda: build(run), train, valid,
                                      **options)[2]
    assert other_seed["valid_nmse"] != fit["valid_nmse"]


def test_plot_lines_draws_each_statistic_and_a_dot_per_seed():
    """A line per label at the chosen statistic, the seeds as dots of its colour, plain
    numbers as they are; a log x axis ticked at the xs."""
    import matplotlib
    matplotlib.use("agg")
    import matplotlib.pyplot as plt
    figure, axis = plt.subplots()
    stats = {"8": helpers.seed_stats([1.0, 3.0]), "32": helpers.seed_stats([2.0, 6.0])}
    drawn = harness.plot_lines(axis, {"a": stats, "b": {8: 0.5, 32: 0.25}}, "min",
                               xscale="log", xlabel="T")
    assert list(drawn) == ["a", "b"]
    assert list(drawn["a"].get_ydata()) == [1.0, 2.0]                   # the minima
    assert list(drawn["b"].get_xdata()) == [8.0, 32.0]
    assert list(drawn["b"].get_ydata()) == [0.5, 0.25]
    dots = [line for line in axis.get_lines() if line.get_marker() == "."]
    assert sorted(y for line in dots for y in line.get_ydata()) == [1.0, 2.0, 3.0, 6.0]
    assert all(line.get_color() == drawn["a"].get_color() for line in dots)
    assert list(axis.get_xticks()) == [8.0, 32.0]
    assert axis.get_xlabel() == "T" and axis.get_legend() is not None
    figure, axis = plt.subplots()
    harness.plot_lines(axis, {"a": stats}, seeds=False)
    assert len(axis.get_lines()) == 1 and list(axis.get_lines()[0].get_ydata()) == [2.0, 4.0]
    plt.close("all")

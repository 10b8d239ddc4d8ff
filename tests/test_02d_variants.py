"""further/02d_variants.py: the reversal score by hand and on the paper's tables, its run over
lesson 02's committed runs, and the command named for each of them."""
import json
import shlex
from pathlib import Path

import pytest

import conftest
import helpers
import plumbing

model_file = helpers.load_concept("02_multihead_model")
study = helpers.load_concept("02d_variants")
RESULTS = Path(__file__).resolve().parent.parent / "results"


def test_reversal_score_by_hand():
    assert study.reversal_score([1.0, 2.0, 3.0]) == 0.0       # error grows with T
    assert study.reversal_score([3.0, 1.0, 2.0]) == pytest.approx((2 + 1) / 2)
    assert study.reversal_score([1.0, 1.0]) == 0.0


def test_reversal_of_the_papers_table_2_means():
    scores = [study.reversal_score([row[T] for T in sorted(row)])
              for row in model_file.PAPER_TABLE_2.values()]
    assert [round(score, 2) for score in scores] == [0.0, 0.0, 0.06, 5.33, 4.46]
    from_minima = [study.reversal_score([row[T] for T in sorted(row)])
                   for row in model_file.PAPER_TABLE_3.values()]
    assert from_minima[:3] == [0.0, 0.0, 0.0] and from_minima[3] > 0  # first at h = D = 4


def test_reversal_scores_from_min_and_mean_of_a_table():
    table = {"8": {"1": {"min": 1.0, "mean": 3.0}}, "32": {"1": {"min": 2.0, "mean": 1.0}}}
    scores = study.reversal_scores(table, [1], [8, 32])
    assert scores == {"from_min": {"1": 0.0}, "from_mean": {"1": 1.0}}


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """One --quick run of the study (it reads the committed runs): (its folder, its JSON)."""
    out = tmp_path_factory.mktemp("02d_variants")
    return out, conftest.run_quick("02d_variants", out)


def test_main_quick(quick):
    out, result = quick
    runs = {**study.DEFAULTS, **study.VARIANTS, **study.GRID}
    assert set(result["reversal"]) == {f"02_multihead_model{suffix}" for suffix in runs}
    for name, scores in result["reversal"].items():
        committed = json.loads((RESULTS / f"{name}.json").read_text())
        if "reversal" in committed:        # the key the lesson's runs carried: the same meaning
            for source, by_h in committed["reversal"].items():
                assert scores[source] == pytest.approx(by_h), (name, source)
    assert [round(result["paper_reversal"]["Table 2 (mean)"][str(h)], 2)
            for h in range(1, 6)] == [0.0, 0.0, 0.06, 5.33, 4.46]
    drawn = {path.name for path in (out / "figures").glob("*.png")}  # the names of the lesson
    assert drawn == {f"02_nmse_vs_heads{suffix}_quick.png" for suffix in {**study.VARIANTS,
                                                                         **study.GRID}} | {
        "02_reversal_score_full_quick.png"}


SETTINGS_OF_A_RUN = ("T", "heads", "D", "head_dim", "width", "total_width", "layers",
                     "batch_size", "lr", "block", "directions", "select", "seeds", "steps",
                     "n_train", "n_valid", "seed")


@pytest.mark.parametrize("suffix, flags", [*study.VARIANTS.items(), *study.GRID.items(),
                                           ("_steps4000", study.DEFAULTS["_steps4000"])])
def test_each_named_command_reproduces_its_committed_run(suffix, flags, tmp_path):
    """Lesson 02 with the flags the study names trains with every setting of the committed
    file, and names its file as the committed one, or as that name followed by _steps4000 (the
    committed variants carry no step count in their names). The lesson's default run is
    the lesson's own to check."""
    args = model_file.config([*shlex.split(flags), "--out", str(tmp_path)])
    committed = json.loads((RESULTS / f"02_multihead_model{suffix}.json").read_text())["config"]
    for name in SETTINGS_OF_A_RUN:
        assert getattr(args, name) == committed[name], (suffix, name)
    named = model_file.variant(args) + plumbing.output_suffix(args, model_file.PARTS,
                                                              model_file.VARIANT_FLAGS)
    assert named in (suffix, suffix + "_steps4000")


def test_the_commands_table_names_each_run_with_its_flags():
    text = helpers.script_path("02d_variants").read_text()
    for suffix, flags in {**study.VARIANTS, **study.GRID,
                          "_steps4000": study.DEFAULTS["_steps4000"]}.items():
        assert f"| `02_multihead_model{suffix}.json` | `{flags}` |" in text, suffix

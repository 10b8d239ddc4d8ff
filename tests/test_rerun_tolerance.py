"""tests/rerun_tolerance.py: numbers sorted into kinds, changes measured, flipped verdicts found."""
import json
import shutil

import conftest
import rerun_tolerance as tolerance

COMMITTED = {"nmse": {"8": {"3": {"seeds": [0.2, 0.4], "min": 0.2, "mean": 0.3, "std": 0.1}}},
             "gain": {"mean": 0.05, "ci95": [0.01, 0.09], "per_seed": [0.04, 0.06]},
             "bound": 7.0, "wall_time_s": 10.0, "run_seconds": 2.0}


def test_each_number_is_sorted_into_its_kind():
    numbers = tolerance.leaves(COMMITTED)
    kinds = {path: tolerance.kind(path, numbers) for path in numbers}
    assert kinds[("nmse", "8", "3", "seeds", 1)] == "one seed"
    assert kinds[("nmse", "8", "3", "min")] == "min over seeds"
    assert kinds[("nmse", "8", "3", "mean")] == "mean over seeds"
    assert kinds[("nmse", "8", "3", "std")] == "std over seeds"
    assert kinds[("gain", "ci95", 0)] == "interval end"
    assert kinds[("bound",)] == "other"
    assert tolerance.paired_means(numbers) == {("gain", "mean"): 0.04}


def test_changes_are_relative_and_a_flipped_verdict_is_found():
    rerun = json.loads(json.dumps(COMMITTED))
    rerun["nmse"]["8"]["3"]["min"] = 0.3                       # +50 %
    rerun["gain"].update(mean=0.03, ci95=[-0.01, 0.07])        # moved half its half-width
    rerun["wall_time_s"] = 99.0                                # a run's own record: not compared
    rerun["run_seconds"] = 3.0                                 # nor any time it keeps
    changes, flipped = tolerance.compare(COMMITTED, rerun)
    assert abs(tolerance.summary(changes["min over seeds"])["largest"] - 0.5) < 1e-9
    assert abs(tolerance.summary(changes["paired difference (mean)"])["largest"] - 0.5) < 1e-9
    assert tolerance.summary(changes["other"]) == {"numbers": 1, "moved": 0, "median": 0.0,
                                                    "largest": 0.0, "moved_from_zero": 0}
    assert flipped == [{"key": "gain", "committed": [0.01, 0.09], "rerun": [-0.01, 0.07]}]


def test_main_sets_a_re_run_beside_the_committed_file(tmp_path):
    """Re-runs that are copies of the committed files (nothing run) move nothing."""
    folder = tmp_path / "rerun" / "results"
    folder.mkdir(parents=True)
    for stem in tolerance.LESSONS:
        shutil.copy(conftest.ROOT / "results" / f"{stem}.json", folder)
    remade = conftest.ROOT / "results" / "03b_uniqueness.json"
    written = tolerance.main(["--rerun", str(tmp_path / "rerun"), "--against", "HEAD",
                              "--remade", str(remade), "--out", str(tmp_path / "out")])
    numbers = json.loads(written.read_text(encoding="utf-8"))
    assert set(numbers["files"]) == {f"{stem}.json" for stem in tolerance.LESSONS} | {
        remade.name}
    for kinds in numbers["by_kind"].values():
        assert all(found["moved"] == 0 for found in kinds.values())
    assert numbers["script"] == "tests/rerun_tolerance.py"
    assert written.name == "rerun_tolerance.json"

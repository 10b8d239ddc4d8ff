"""How far a re-run moves each kind of number: the seven lesson defaults run again, and committed
files re-made, each set beside the version committed at an earlier commit.

    python tests/rerun_tolerance.py             # runs the seven defaults into runs/rerun/ (about
                                                # 6 minutes on 2 cores), writes
                                                # runs/results/rerun_tolerance.json
    python tests/rerun_tolerance.py --out .     # the same, into results/ (to commit)

A lesson default whose re-run is already in --rerun is not run again. Every results file re-made
since --against (or those --remade names) is set beside its version there too: a file re-made on
another torch build or code, its provenance and the old file's say which.

Every number of both files is matched by its key and sorted into a kind by where it sits: one
seed's value, a minimum over seeds, a mean over seeds, a standard deviation over seeds, a
paired difference's mean (moved by how much of its interval's half-width), an interval's end,
or other (a bound, a count, a construction, the data, one model's attention map); times are
left out. For each kind: how many numbers, how many moved at all, and the median and largest
relative change |new - old| / |old| (a difference's mean: |new - old| / the committed
half-width); and every interval whose verdict (excludes 0 or not) flipped.
"""
import hashlib
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import harness
import plumbing  # noqa: E402
from harness import Setting  # noqa: E402

LESSONS = ["01_retrieval_task", "02_multihead_model", "03_bounds",
           "04_single_head_memorization", "05_saturation", "06_allocation", "07_real_data"]
NOT_NUMBERS = ("script", "config", "device", "torch_version", "python_version", "wall_time_s",
               "provenance")   # what a run records about itself, with every "...seconds" key
KINDS = ["one seed", "min over seeds", "mean over seeds", "std over seeds",
         "paired difference (mean)", "interval end", "other"]
RUN_LIMIT_S = 900   # one lesson default: the slowest takes under 2 minutes on 2 cores

SETTINGS = {
    # name: Setting(default, --quick, --full, type, what it sets)
    "rerun": Setting(Path("runs/rerun"), ..., ..., Path,
                     "the --out of the lesson defaults' re-runs (run here when missing)"),
    "against": Setting("9789acd", ..., ..., str,
                       "the commit whose results files the re-runs are set beside"),
    "remade": Setting(None, ..., ..., plumbing.path_list,
                      "results files re-made since --against, each set beside its old version "
                      "(default: every one whose numbers changed since then, timings aside)"),
}


def leaves(value, path=()):
    """Every number in nested dicts and lists: {(key, key, index, ...): number}."""
    if isinstance(value, dict):
        return {found: number for key, item in value.items()
                for found, number in leaves(item, (*path, key)).items()}
    if isinstance(value, list):
        return {found: number for index, item in enumerate(value)
                for found, number in leaves(item, (*path, index)).items()}
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {path: float(value)}
    return {}


def kind(path, numbers):
    """The kind of the number at a key path among a file's numbers (see the module's text)."""
    names = [str(key) for key in path if isinstance(key, str)]
    last, siblings = names[-1], path[:-1]
    if last.startswith("ci"):
        return "interval end"
    if any(name in ("seeds", "per_seed") or "seed=" in name for name in names):
        return "one seed"
    if last in ("min", "min_nmse"):                           # 03a keeps its minima as min_nmse
        return "min over seeds"
    over_seeds = (*siblings, "seeds", 0) in numbers or (*siblings, "seeds", 0, last) in numbers
    if last == "std" and over_seeds:
        return "std over seeds"
    if last in ("mean", "valid_nmse", "train_nmse") and over_seeds:
        return "mean over seeds"   # 04 keeps its means as valid_nmse beside its seeds
    return "other"


def paired_means(numbers):
    """{path of a paired difference's mean: the half-width of its committed interval}."""
    widths = {}
    for path in numbers:
        if path[-1] == "mean":
            low, high = numbers.get((*path[:-1], "ci95", 0)), numbers.get((*path[:-1], "ci95", 1))
            if low is not None and high is not None:
                widths[path] = (high - low) / 2
    return widths


def measured(numbers):
    """A file's numbers less what a run records about itself (its config, its times)."""
    return {path: value for path, value in leaves(
        {key: item for key, item in numbers.items() if key not in NOT_NUMBERS}).items()
        if not any("seconds" in str(key) for key in path)}


def compare(old, new):
    """The changes between two results files' numbers, by kind, and the verdicts that flipped."""
    before, after = measured(old), measured(new)
    widths = paired_means(before)
    changes = {name: [] for name in KINDS}
    for path in before.keys() & after.keys():
        sort = "paired difference (mean)" if path in widths else kind(path, before)
        scale = widths[path] if path in widths else abs(before[path])
        moved = abs(after[path] - before[path])
        changes[sort].append(0.0 if moved == 0 else moved / scale if scale else float("inf"))
    flipped = []
    for path in widths:
        interval = path[:-1]
        ends = [(numbers.get((*interval, "ci95", 0)), numbers.get((*interval, "ci95", 1)))
                for numbers in (before, after)]
        if None in ends[0] + ends[1]:
            continue
        excludes = [low > 0 or high < 0 for low, high in ends]
        if excludes[0] != excludes[1]:
            flipped.append({"key": ".".join(map(str, interval)),
                            "committed": list(ends[0]), "rerun": list(ends[1])})
    return {name: values for name, values in changes.items() if values}, flipped


def summary(values):
    """How many numbers, how many moved, the median and largest relative change."""
    finite = [value for value in values if value != float("inf")]
    return {"numbers": len(values), "moved": sum(value > 0 for value in values),
            "median": statistics.median(finite) if finite else 0.0,
            "largest": max(finite) if finite else 0.0,
            "moved_from_zero": len(values) - len(finite)}


def committed_version(name, commit):
    """The bytes of results/<name> as it was at a commit."""
    shown = harness.git(ROOT, "show", f"{commit}:results/{name}")
    if shown is None:
        harness.refuse("--against", f"results/{name} is not in commit {commit}")
    return shown.encode("utf-8")


def environment(numbers):
    """Where a results file was made: commit, torch build, CPU, wall time."""
    record = numbers.get("provenance") or {}
    return {"commit": (record.get("commit") or "")[:7] or None,
            "torch": numbers.get("torch_version"),
            "cpu": (record.get("machine") or {}).get("cpu"),
            "wall_time_s": numbers.get("wall_time_s")}


def remade_since(commit):
    """The results files that changed since a commit and were there at it: the lesson defaults,
    speed measurements (`_timing`) and this comparison aside."""
    changed = (harness.git(ROOT, "diff", "--name-only", commit, "--", "results") or "").split()
    return [ROOT / name for name in changed
            if Path(name).stem not in (*LESSONS, "rerun_tolerance") and "timing" not in name
            and (ROOT / name).is_file()
            and harness.git(ROOT, "cat-file", "-e", f"{commit}:{name}") is not None]


def rerun(stem, folder):
    """Run a lesson's default into folder unless its results are there; returns its path."""
    path = folder / "results" / f"{stem}.json"
    if not path.is_file():
        print(f"running {stem}.py --out {harness.shown_path(folder)}", flush=True)
        subprocess.run([sys.executable, str(ROOT / f"{stem}.py"), "--out", str(folder)],
                       cwd=ROOT, check=True, timeout=RUN_LIMIT_S)
    return path


def pair(name, old_bytes, new_bytes, pooled, group):
    """One file's comparison: where each side was made (and the sha256 of what was read), the
    changes by kind, the flipped verdicts; its changes are added to pooled["<group>, <same torch
    build or another>, <whether the committed file records its provenance>"]."""
    old, new = json.loads(old_bytes), json.loads(new_bytes)
    changes, flipped = compare(old, new)
    same = environment(old)["torch"] == environment(new)["torch"]
    made = "with its provenance" if "provenance" in old else "before provenance was recorded"
    pool = pooled.setdefault(f"{group}, {'same' if same else 'another'} torch build, {made}", {})
    summaries = {sort: summary(values) for sort, values in changes.items()}
    for sort, values in changes.items():
        pool.setdefault(sort, []).extend(values)
        shown(name, sort, summaries[sort])
    return {"committed": {**environment(old), "sha256": hashlib.sha256(old_bytes).hexdigest()},
            "rerun": {**environment(new), "sha256": hashlib.sha256(new_bytes).hexdigest()},
            "same_torch": same, "changes": summaries, "flipped": flipped}


def shown(name, sort, found):
    print(f"{name:94s} {sort:26s} {found['moved']:4d} of {found['numbers']:4d} moved, "
          f"median {found['median']:.2g}, largest {found['largest']:.2g}", flush=True)


def main(argv=None):
    args = harness.config(SETTINGS, argv, __doc__.split("\n")[0])
    run = plumbing.Run("rerun_tolerance", args, named=("rerun", "against", "remade"),
                       script=Path(__file__))
    files, pooled = {}, {}
    for stem in LESSONS:
        path = rerun(stem, args.rerun)
        files[path.name] = pair(path.name, committed_version(path.name, args.against),
                                path.read_bytes(), pooled, "lesson defaults run again")
    for path in args.remade or remade_since(args.against):
        files[path.name] = pair(path.name, committed_version(path.name, args.against),
                                path.read_bytes(), pooled, "files re-made")
    by_kind = {group: {sort: summary(values) for sort, values in kinds.items()}
               for group, kinds in pooled.items()}
    for group, kinds in by_kind.items():
        for sort, found in kinds.items():
            shown(group, sort, found)
    run.record({"against": args.against, "by_kind": by_kind, "files": files})
    return run.finish()


if __name__ == "__main__":
    main()

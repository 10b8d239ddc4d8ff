"""Every flag of every numbered script at its edges: one line and exit 2, or finite results.

The contract that bad input gets a clear answer, tried as a user would type it.
Flags are discovered from each script's settings table and their edge values chosen from the
flag's type, so a flag added to any script is covered without editing this file.

* Values no flag may accept (0, -1, nan, inf, 1e-9 for a whole number, an empty or malformed
  list, ...) must end in exactly one line on stderr naming the flag, exit code 2, no traceback.
  The checks run before any work, so parsing alone (config()) tests them.
* The smallest valid value (1 for a size, 1e-9 for a number > 0) is either accepted, or
  refused the same way with a message that names the smallest accepted value; that value is
  then tried, and must be accepted in the end.
* Full quick runs (in this process, as `python 0X_....py --quick ...` would run; 1-3 s each),
  which must exit 0 and write strict, finite JSON: per script, every size flag at its smallest
  accepted value and every number flag at 1e-9, or at the smallest value its refusal names, all
  at once (a resource limit such as 04a's construction size must be affordable at its
  boundary); and the combinations that once broke a run (KNOWN_COMBINATIONS) when they are
  accepted, with every flag whose name ends in "steps" set to 1, so each run takes seconds.

What the scripts' config() refuses before any work, as `prog: error: argument --FLAG: reason[;
smallest accepted: V] (see --help)` and exit 2:
* every number's type: sizes are whole numbers >= 1, rates and scales finite and > 0, seeds
  0 ... 2**32 - 1, lists without empty items (`8,,32`);
* sizes that leave a statistic undefined: --n-train, --n-valid >= 2; 01 --n-samples >= 2; 05a
  --confound-L >= 2, 05 --L >= 4 (the query, its 2 matches and another token); --seeds >= 2 where an interval is
  reported; 06a (06c) --text-chars >= 20 T (and a --text file that long); 07 --text-T from 2
  to 256;
* constructions that would not fit the machine: 04a refuses Lemma 9 networks over 5e7
  parameters, naming the smallest epsilon that fits;
* combinations that leave an experiment empty: --D <= d (01-04); two different 03 --widths; 05
  (05a) --rank, --head-dims, --confound-head-dims <= 16 (the token dimension), --match-rank < 16
  and among the --head-dims after the first; 06 --key-dim above the poor head dimension 2 (06a, 06c,
  06g: even and >= 4); 06g at least three --fixed-heads that fit --queries * --key-dim, --memory
  >= --queries; 06 --T >= 3;
* an --out that cannot be written, and --device cuda without a GPU.
During a run, non-finite data, a diverging loss or a NaN among the results end with one line
(`stopped: ...`) and exit 1 before anything is written; results are strict JSON.
"""
import contextlib
import io
import json
import re
import runpy
import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest

import conftest
import helpers
import harness
import plumbing

matplotlib.use("agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = [path.stem for path in conftest.SCRIPTS]  # the lessons and the studies

# Values a flag of this type must refuse, and the smallest value it must take.
REFUSED = {
    harness.positive_int: ["0", "-1", "1.5", "x", "", "nan", "inf", "1e-9"],
    harness.int_list: ["0", "1,0", "", ",", "8,", "8,,16", "8,x", "nan", "1e-9"],
    harness.positive_float: ["0", "-1", "x", "", "nan", "inf", "-inf"],
    harness.float_list: ["0", "1,0", "", ",", "1,", "1,,2", "1,x", "nan", "1,inf"],
    harness.seed_int: ["-1", "x", "1.5", "nan", str(2**32)],
    plumbing.path_list: ["", ",", "a.json,", "a.json,,b.json"],
    None: ["", "no-such-value"],                                   # plain strings (--device)
}
SMALLEST = {harness.positive_int: "1", harness.int_list: "1", harness.positive_float: "1e-9",
            harness.float_list: "1e-9", harness.seed_int: "0"}
SIZE_TYPES = (harness.positive_int, harness.int_list)

KNOWN_COMBINATIONS = {  # valid flags that broke a run together (06, 04, 03, 05), or could
    "02d_variants": [["--total-width", "1", "--heads", "1,2"],
                     ["--layers", "3", "--heads", "1", "--block", "attention-only"],
                     ["--select", "best", "--heads", "2"]],
    "02a_recipe_study": [["--heads", "1"]],
    "03a_params_vs_error": [["--widths", "8,8"], ["--heads", "1", "--D", "1"]],
    "04a_cost_accounting": [["--epsilons", "1e-9"], ["--construction-T", "64",
                                                     "--epsilons", "0.001"]],
    "05_saturation": [["--L", "1"], ["--match-rank", "1", "--head-dims", "1,2"],
                      ["--match-rank", "15", "--head-dims", "1,15,16"]],
    "05a_confound": [["--rank", "1", "--confound-head-dims", "1"],
                     ["--confound-head-dims", "1,2", "--confound-L", "2"]],
    "05b_low_rank": [["--match-rank", "1", "--head-dims", "1,2"]],
    "06_allocation": [["--T", "1"]],
    "06g_fixed_budget": [["--fixed-heads", "1", "--queries", "1"],
                         ["--queries", "3", "--key-dim", "4", "--memory", "3"],
                         ["--key-dim", "4", "--fixed-heads", "1,2,8", "--queries", "2"]],
    "06a_text_allocation": [["--text-chars", "1"]],
    "06c_trained_saturation": [["--text-chars", "1"]],
    "07c_fixed_width": [["--parts", "fixed-width", "--width", "4", "--heads", "1,2,8"]],
    "07a_text_retrieval": [["--heads", "1", "--text-T", "2"],
                           ["--text-T", "8", "--batch-size", "1"]],
}
SMALLEST_ACCEPTED = re.compile(r"argument (--[\w-]+)\S*: .*; smallest accepted: "
                               r"(--[\w-]+ )?(\S+?)(?: \(see --help\))?$")


def flags_of(script):
    """[(flag, type)] of every option that takes a value, read from the script's parser."""
    module = helpers.load_concept(script)
    parser = harness.build_parser(module.SETTINGS)
    flags = [(action.option_strings[-1], action.type) for action in parser._actions
             if action.option_strings and action.nargs != 0 and action.dest != "help"]
    return flags + ([("--parts", None)] if hasattr(module, "PARTS") else [])  # a study's


def run(script, argv, out):
    """Run the script's command line in this process: (exit code, stdout, stderr).

    The exit code follows Python's rules for SystemExit; any other exception becomes
    "traceback" (the contract's failure)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    saved = sys.argv
    sys.argv = [str(helpers.script_path(script)), "--out", str(out), "--device", "cpu", *argv]
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            runpy.run_path(str(helpers.script_path(script)), run_name="__main__")
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
        if isinstance(stop.code, str):
            stderr.write(stop.code + "\n")
    except Exception as error:  # noqa: BLE001 - a traceback is what this test looks for
        code, stderr = "traceback", io.StringIO(f"{type(error).__name__}: {error}\n")
    finally:
        sys.argv = saved
        plt.close("all")
    return code, stdout.getvalue(), stderr.getvalue()


def parse_only(script, argv, out):
    """Only the script's config(): (exit code, stderr); 0 when the flags are accepted."""
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            helpers.load_concept(script).config(["--out", str(out), "--device", "cpu", *argv])
        return 0, ""
    except SystemExit as stop:
        return stop.code, stderr.getvalue()


def assert_one_line(code, stderr, argv):
    assert code == 2, f"{argv}: exit {code}, expected 2; stderr: {stderr}"
    assert stderr.count("\n") == 1 and stderr.endswith("\n"), f"{argv}: {stderr!r}"
    assert "Traceback" not in stderr


def assert_finite_run(script, argv, out):
    """A run that is accepted ends with exit 0 and strict, finite JSON."""
    code, _, stderr = run(script, argv, out)
    if "--out" in argv:  # the flag under test: argparse keeps the last value
        out = Path(argv[len(argv) - argv[::-1].index("--out")])
    assert code == 0, f"{script} {' '.join(argv)}: exit {code}; {stderr}"
    written = list((out / "results").glob("*.json"))
    assert written, f"{script} {' '.join(argv)} wrote no results"
    for path in written:
        json.loads(path.read_text(encoding="utf-8"), parse_constant=lambda name: pytest.fail(
            f"{script} {' '.join(argv)}: {name} in {path.name}"))


def follow_refusals(script, argv, out):
    """Parse argv; while it is refused, check the one-line answer and try the smallest accepted
    value it names. Returns (the accepted argv, refused at least once), or (None, True) when a
    refusal names no smallest value."""
    refused = False
    for _ in range(16):
        code, stderr = parse_only(script, argv, out)
        if code == 0:
            return argv, refused
        assert_one_line(code, stderr, argv)
        found = SMALLEST_ACCEPTED.search(stderr.strip())
        if not found:
            return None, True
        refused = True
        flag, other, value = found.groups()
        argv = [*argv, (other or flag).strip(), value]    # argparse keeps the last value
    pytest.fail(f"{script}: no accepted value reached from {argv}")


def steps_at_one(script, flag=None):
    """Every *steps flag of the script (but `flag`) at 1, so that a full run takes seconds."""
    return [item for other, _ in flags_of(script) if other.endswith("steps") and other != flag
            for item in (other, "1")]


CASES = [(script, flag, kind) for script in SCRIPTS for flag, kind in flags_of(script)]


@pytest.mark.parametrize("script, flag, kind", CASES,
                         ids=[f"{script[:2]}{flag}" for script, flag, _ in CASES])
def test_every_flag_at_its_edges(script, flag, kind, tmp_path):
    assert kind in REFUSED or kind is Path, f"{script} {flag}: add edge values for {kind}"
    for value in REFUSED.get(kind, []):
        argv = ["--quick", flag, value]
        code, stderr = parse_only(script, argv, tmp_path)
        if kind is None and code == 0:  # a free-text flag may accept a value: then it must run
            continue
        assert_one_line(code, stderr, argv)
        assert flag in stderr, f"{argv}: the message does not name {flag}: {stderr}"
    if kind is Path:
        folder, empty = tmp_path / "a-folder", tmp_path / "empty.txt"
        folder.mkdir(), empty.write_text("", encoding="utf-8")
        edges = [str(folder), str(empty), str(tmp_path / "missing" / "x.txt")]
    else:
        edges = [SMALLEST[kind]] if kind in SMALLEST else []
    for value in edges:
        accepted, _ = follow_refusals(script, ["--quick", flag, value], tmp_path)
        assert accepted or kind not in SMALLEST, f"{script} {flag} {value}: refused for good"


NUMBER_TYPES = (harness.positive_float, harness.float_list)


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_size_and_number_at_its_smallest_at_once(script, tmp_path):
    """Every size at 1 and every rate and scale at 1e-9 (or the smallest value its refusal
    names) in one run: it must finish with finite numbers. One run per script keeps the suite
    fast; test_every_flag_at_its_edges has checked each flag's refusal on its own."""
    argv = ["--quick"] + [item for flag, kind in flags_of(script)
                          if kind in SIZE_TYPES or kind in NUMBER_TYPES
                          for item in (flag, SMALLEST[kind])]
    accepted, _ = follow_refusals(script, argv, tmp_path)
    assert accepted, f"{script}: {argv} refused with no smallest accepted value"
    assert_finite_run(script, accepted, tmp_path)


@pytest.mark.parametrize("script, argv", [(script, argv) for script, combos in
                                          KNOWN_COMBINATIONS.items() for argv in combos])
def test_known_combinations(script, argv, tmp_path):
    argv = ["--quick", *steps_at_one(script), *argv]
    code, stderr = parse_only(script, argv, tmp_path)
    if code:
        assert_one_line(code, stderr, argv)
    else:
        assert_finite_run(script, argv, tmp_path)


def test_the_full_presets_pass_every_check():
    """--full is parsed, not run: each script's reference run is accepted."""
    for script in SCRIPTS:
        assert parse_only(script, ["--full"], ROOT) == (0, ""), script


def test_presets_cannot_be_combined():
    for script in SCRIPTS:
        code, stderr = parse_only(script, ["--quick", "--full"], ROOT)
        assert_one_line(code, stderr, "--quick --full")


def test_a_refusal_from_the_real_command_line(tmp_path):
    """One real command line, to prove the in-process calls above behave like it."""
    done = subprocess.run([sys.executable, str(ROOT / "02_multihead_model.py"), "--quick",
                           "--n-valid", "1", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=120, encoding="utf-8")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "--n-valid" in done.stderr and "smallest accepted: 2" in done.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_default_run_writes_where_git_does_not_look(script):
    """Every script writes under runs/ unless --out says otherwise, and git ignores runs/, so a
    student's run never changes the committed results or dirties the tree."""
    module = helpers.load_concept(script)
    parser = harness.build_parser(module.SETTINGS)
    assert parser.get_default("out") in (harness.RUNS, Path(__import__("os").environ.get(
        "OUT", harness.RUNS)))
    ignored = subprocess.run(["git", "check-ignore", "-q", str(harness.RUNS / "results" / "x")],
                             cwd=ROOT)
    assert ignored.returncode == 0, "runs/ must be in .gitignore"


def test_a_quick_run_with_the_default_output_leaves_git_status_clean():
    before = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True,
                            text=True, encoding="utf-8").stdout
    written = harness.RUNS / "results" / "03_bounds_betas1-10_quick.json"  # a run of its own
    written.unlink(missing_ok=True)                                         # file name
    done = subprocess.run([sys.executable, str(ROOT / "03_bounds.py"), "--quick", "--betas", "1,10"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, encoding="utf-8")
    assert done.returncode == 0, done.stderr
    assert written.exists()
    after = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True,
                           text=True, encoding="utf-8").stdout
    assert after == before

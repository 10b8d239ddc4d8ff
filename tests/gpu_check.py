"""The CUDA path, checked in one command on a machine with a GPU (about 10 minutes):

    python tests/gpu_check.py              # writes runs/results/gpu_check.json and .md
    python tests/gpu_check.py --out .      # writes results/gpu_check.json (to commit) and .md

1. every lesson's and study's --quick on CUDA (what the tests run on the CPU);
2. lesson 02's default on CUDA, its knee beside the committed CPU run's (results/02_...json);
3. a timed slice of 02's --full (one seed, the longest T, h = 3 and 4) and, from it, what the
   whole --full grid would take on this GPU.

Each run is a subprocess with a time limit; a failure is a line of the report, not a stop. The
report says what ran, how long it took, and where CUDA and the CPU disagree. --device cpu
runs the same on the CPU (what the test suite does, with --only, to check this file).

Agreement, our rule: at each T, lesson 02's drop from h = 3 to 4 (the ratio of the minima over
seeds, its `knee`) here and in the committed CPU run are both above 1 and within a factor of
AGREEMENT of each other. A GPU sums in another order than a CPU, and training amplifies the last
digits (RESULTS.md: a re-run on another CPU moved one seed's error by a few percent and a
2-seed minimum by up to 2 %); a factor of 2 leaves room for that and still catches a drop that
vanished or reversed. The exit code is 0 only when every run ended well and the drops agree.
"""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import harness
import torch  # noqa: E402
from conftest import SCRIPTS  # noqa: E402  every lesson and study, in the order of the path

QUICK_LIMIT_S = 120     # seconds for one file's --quick; the slowest takes under 30 on 2 CPU cores
DEFAULT_LIMIT_S = 300   # lesson 02's default: 1 min 18 s on 2 CPU cores
SLICE = ["--full", "--T", "128", "--heads", "3,4", "--seeds", "1"]   # 2 of --full's 75 runs
FULL_RUNS = 5 * 5 * 3   # --full: T = 8 ... 128 (5) x h = 1 ... 5 (5) x 3 seeds
AGREEMENT = 2.0         # the factor within which the drops here and on the CPU agree (above)


def drops_agree(here, cpu):
    """{T: True when both drops are above 1 and within a factor of AGREEMENT}, for each T of
    the committed CPU run."""
    return {T: T in here and here[T] > 1 and cpu[T] > 1
            and max(here[T], cpu[T]) / min(here[T], cpu[T]) <= AGREEMENT for T in cpu}


def run(path, flags, out, device, limit):
    """`python PATH FLAGS --device DEVICE --out OUT` in a subprocess: its outcome, one dict."""
    command = [sys.executable, str(path), *flags, "--device", device, "--out", str(out)]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                              encoding="utf-8", timeout=limit)
        code, said = done.returncode, (done.stdout + done.stderr).strip().splitlines()
    except subprocess.TimeoutExpired:
        code, said = None, [f"stopped at the {limit} s limit"]
    return {"file": path.relative_to(ROOT).as_posix(), "flags": " ".join(flags),
            "ok": code == 0, "exit_code": code, "seconds": round(time.perf_counter() - started, 1),
            "last_line": said[-1] if said else ""}


def check(args):
    """The three parts above; returns the report's numbers."""
    scratch = harness.RUNS / "gpu_check"            # the runs' own files: git ignores runs/
    chosen = [path for path in SCRIPTS if not args.only or path.stem in args.only]
    quick = [run(path, ["--quick"], scratch / "quick", args.device, QUICK_LIMIT_S)
             for path in chosen]
    for outcome in quick:
        print(f"{'ok  ' if outcome['ok'] else 'FAIL'} {outcome['file']} --quick "
              f"({outcome['seconds']} s)  {outcome['last_line'][:80]}", flush=True)
    numbers = {"device": args.device, "quick": quick}
    if args.only:
        return numbers
    lesson = ROOT / "02_multihead_model.py"
    default = run(lesson, [], scratch / "default", args.device, DEFAULT_LIMIT_S)
    written = scratch / "default" / "results" / "02_multihead_model.json"
    committed = json.loads((ROOT / "results" / "02_multihead_model.json").read_text(
        encoding="utf-8"))
    numbers["default"] = {**default, "committed_cpu_seconds": committed["wall_time_s"]}
    if written.exists():
        numbers["default"]["knee"] = json.loads(written.read_text(encoding="utf-8"))["knee"]
        numbers["default"]["committed_cpu_knee"] = committed["knee"]
        numbers["default"]["agrees"] = drops_agree(numbers["default"]["knee"]["ratio"],
                                                   committed["knee"]["ratio"])
    part = run(lesson, SLICE, scratch / "slice", args.device, DEFAULT_LIMIT_S)
    numbers["full_slice"] = {**part, "runs": 2,
                             "full_grid_estimate_s": round(part["seconds"] / 2 * FULL_RUNS)}
    print(f"02 default: {default['seconds']} s (the committed CPU run: "
          f"{committed['wall_time_s']} s); a slice of --full: {part['seconds']} s for 2 runs of "
          f"the longest T, so about {numbers['full_slice']['full_grid_estimate_s'] / 60:.0f} "
          f"min for its {FULL_RUNS} (an upper bound: shorter T train faster)", flush=True)
    return numbers


def report(numbers):
    """The report as markdown: one row per run."""
    rows = [f"| {q['file']} | --quick | {'ok' if q['ok'] else 'FAILED'} | {q['seconds']} s | "
            f"{q['last_line'][:70]} |" for q in numbers["quick"]]
    for key in ("default", "full_slice"):
        if key in numbers:
            entry = numbers[key]
            rows.append(f"| {entry['file']} | {entry['flags'] or '(default)'} | "
                        f"{'ok' if entry['ok'] else 'FAILED'} | {entry['seconds']} s | "
                        f"{entry['last_line'][:70]} |")
    lines = [f"# The CUDA check ({numbers['device']})", "",
             "| file | flags | outcome | time | last line |", "|---|---|---|---|---|", *rows, ""]
    default = numbers.get("default", {})
    if "knee" in default:              # the drop from h = 3 to 4, minimum over seeds, per T
        here, cpu = default["knee"]["ratio"], default["committed_cpu_knee"]["ratio"]
        agrees = default["agrees"]
        lines.append("02's drop from h = 3 to 4 (the ratio of the minima over seeds), here / the "
                     "committed CPU run: " + "; ".join(
                         f"T = {T}: {here.get(T, float('nan')):.1f}x / {cpu[T]:.1f}x "
                         f"({'agree' if agrees[T] else 'DISAGREE'})" for T in cpu)
                     + f" (agreement: both above 1, within a factor of {AGREEMENT:g})")
    if "full_slice" in numbers:
        lines.append(f"--full on this device: about "
                     f"{numbers['full_slice']['full_grid_estimate_s'] / 60:.0f} min for its "
                     f"{FULL_RUNS} runs, from 2 of its longest (an upper bound)")
    return "\n".join(lines + [""])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                        help="where the runs train (default: cuda)")
    parser.add_argument("--out", type=Path, default=harness.RUNS,
                        help="folder that receives results/gpu_check.json (default: runs/)")
    parser.add_argument("--only", type=lambda text: text.split(","),
                        help="only these files' --quick, comma-separated stems (a dry run)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.only or []) - {path.stem for path in SCRIPTS})
    if unknown:
        parser.exit(2, f"gpu_check.py: --only: no lesson or study named {unknown[0]!r} "
                       f"(the stems of 0*.py and further/0*.py, e.g. 02_multihead_model)\n")
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.exit(2, "gpu_check.py: --device cuda: this machine has no CUDA device "
                       "(torch.cuda.is_available() is False)\n")
    started = time.perf_counter()
    numbers = check(args)
    path = harness.save_results("gpu_check", numbers, args, time.perf_counter() - started,
                                 script="tests/gpu_check.py")
    markdown = path.with_suffix(".md")
    markdown.write_text(report(numbers), encoding="utf-8")
    print(f"wrote {harness.shown_path(path)} and {harness.shown_path(markdown)}")
    return 0 if passed(numbers) else 1


def passed(numbers):
    """Every run ended well (the quick runs, 02's default and the slice of --full, those that
    ran) and, where 02's default ran, its drops agree with the committed CPU run's."""
    runs = [*numbers["quick"], *(numbers[key] for key in ("default", "full_slice")
                                 if key in numbers)]
    agreement = numbers.get("default", {}).get("agrees", {})
    return all(run["ok"] for run in runs) and all(agreement.values()) and (
        "default" not in numbers or bool(agreement))


if __name__ == "__main__":
    sys.exit(main())

"""What only the going-further studies share: a lesson needs none of it (harness.py has the
command line, the run's files and the sweeps).

    REPLAY, replay, read_input   draw a committed run again from its JSON instead of training;
                                 every results file a run reads is kept with its sha256
    config, Run                  harness' config and Run, with a study's parts (--parts b runs
                                 part b and the parts it needs, into a file named _parts_b),
                                 the inputs in the provenance, and a replay's analysis written
                                 as a file of its own (finish_analysis)
    run_sweep                    harness.run_sweep with a line per run or per group of runs
    refuse_unaccepted            the first of a study's checks that fails, refused in one line
    path_list                    a flag's list of files
    fresh_interpreter            what a new Python process prints (07a's corpus of docstrings)
"""

import collections
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import helpers
import harness
from harness import Setting

# A side study's row: draw a committed run again from its JSON instead of training.
REPLAY = Setting(None, ..., ..., Path, "draw this committed results file again instead of "
                 "training")
REPLAYED = {}   # the results files read_input() read for this run: path -> sha256 of its bytes


def path_list(text):
    """A comma-separated list of file paths, e.g. "results/a.json,results/b.json"."""
    return [Path(part) for part in harness._items(text)]


def refuse_unaccepted(checks):
    """Refuse the first of checks [(flag, accepted, why not, the smallest value accepted or
    None)] that is not accepted (harness.refuse); returns nothing when all are."""
    for flag, accepted, why, smallest in checks:
        if not accepted:
            harness.refuse(flag, why, smallest=smallest)


def config(settings, argv=None, description="", parts=None, full="the paper's scale",
           refusals=None, notebook_args=""):
    """harness.config with --parts when the study has parts ({part: the parts it needs}):
    args.parts becomes the parts to run, in the study's order, before its refusals are read."""
    parser = harness.build_parser(settings, description, full)
    if parts is not None:
        parser.add_argument("--parts", help=f"only these parts, comma-separated, each with the "
                                            f"parts it needs: {','.join(parts)} (default: all)")
    argv = harness.cli_argv(notebook_args) if argv is None else argv
    args = harness.config(settings, argv, parser=parser)
    if parts is not None:
        args.parts = chosen_parts(parts, args.parts)
    if refusals is not None:
        refuse_unaccepted(refusals(args))
    return args


def chosen_parts(parts, text):
    """The parts --parts names with the parts they need, in the file's order (None: all)."""
    if text is None:
        return list(parts)
    asked = [name.strip() for name in text.split(",")]
    unknown = [name for name in asked if name not in parts]
    if unknown:
        harness.refuse("--parts", f"unknown part {unknown[0]!r}; this file's parts are "
                       f"{', '.join(parts)}")
    for name in list(asked):
        asked += parts[name]
    return [name for name in parts if name in asked]


def output_suffix(args, parts=None, named=()):
    """harness.output_suffix, then "_parts_b" when --parts left some of the study's parts out."""
    asked = getattr(args, "parts", None)
    chosen = asked and parts is not None and list(asked) != list(parts)
    return harness.output_suffix(args, named) + ("_parts_" + "_".join(asked) if chosen else "")


class Run(harness.Run):
    """A study's run: harness.Run, named after its parts too, whose provenance also names every
    results file the run read (read_input, replay) with its sha256 and whether it is the
    committed file."""

    def __init__(self, stem, args, parts=None, variant="", named=(), script=None):
        super().__init__(stem, args, script)
        self.suffix = variant + output_suffix(args, parts, named)
        REPLAYED.clear()  # the results files this run reads, from here on

    def provenance_record(self):
        return with_replayed_inputs(super().provenance_record())

    def finish_analysis(self):
        """Write what a replay recomputed from a committed run (`--replay FILE`) as a file of its
        own, results/<stem>_analysis_of_<FILE's stem>.json, so the committed run stays as its
        run wrote it."""
        return self.write(analysis_name(self.stem, self.args.replay))


def run_sweep(runs, workers, train, label=None, cost=None, group=None):
    """harness.run_sweep, with a line per run, label(result), as each ends; or with group(run)
    a line per group, label(its results), when its last run ends (a result carries its run's
    keys, so group reads either); with group alone, the group and its count."""
    if label is None:
        def label(results):
            return f"{group(results[0])}: {len(results)} runs trained"
    members = collections.defaultdict(list)          # group -> the indices of its runs
    for index, run in enumerate(runs):
        members[group(run) if group else index].append(index)
    reported = []

    def report(index, results):
        name = group(results[index]) if group else index
        if not all(member in results for member in members[name]):
            return None
        reported.append(name)
        count = f"[{len(reported)}/{len(members)}] " if len(members) > 1 else ""
        shown = [results[member] for member in members[name]] if group else results[index]
        return count + label(shown)

    return harness.run_sweep(runs, workers, train, cost, report)


def analysis_name(stem, replayed):
    """The results file of a new analysis of a committed run: 06b_ngram + 06b_ngram_full.json
    -> 06b_ngram_analysis_of_06b_ngram_full."""
    return f"{stem}_analysis_of_{Path(replayed).stem}"


def replay(path):
    """The numbers of a committed results file, to draw its tables and figures again without
    training; prints which run wrote them (its command's flags and its wall time). The file's
    sha256 is kept for the provenance of what this process writes (with_replayed_inputs)."""
    if not Path(path).is_file():
        harness.refuse("--replay", f"no results file at {path}")
    written = read_input(path)
    flags = " ".join(f"--{key}" for key in written["config"].get("changed", []))
    print(f"replaying {harness.shown_path(path)}: written by {written['script']} "
          f"({written['config']['preset']} preset{', changed: ' + flags if flags else ''}) "
          f"in {written['wall_time_s']:.0f} s on {written['device']}")
    return {key: value for key, value in written.items() if key not in
            ("script", "config", "device", "torch_version", "python_version", "wall_time_s",
             "provenance")}


def read_input(path):
    """The content of a results file this run reads (a replay, a lesson run a control stands
    beside), kept with its sha256 for the provenance of what this process writes."""
    content = Path(path).read_bytes()
    REPLAYED[harness.shown_path(path)] = hashlib.sha256(content).hexdigest()
    return json.loads(content.decode("utf-8"))


def replay_suffix(args):
    """The files' suffix of a replay: "_full" when the replayed file is a --full run, so its
    figures keep the committed names (05_confound_full.png); none otherwise."""
    return "_full" if args.replay and Path(args.replay).stem.endswith("_full") else ""


def with_replayed_inputs(record, root=None):
    """A provenance record plus, for a run that replayed committed files, each one's sha256 and
    whether it is the committed file (tracked, and unchanged since HEAD); dirty then also
    covers what the run read (the code's check leaves results/ out)."""
    if not REPLAYED:
        return record
    root = Path(root or helpers.ROOT)
    inputs = {path: {"sha256": digest,
                     "as_committed": harness.git(root, "ls-files", "--error-unmatch", path)
                     is not None
                     and harness.git(root, "diff", "--quiet", "HEAD", "--", path) is not None}
              for path, digest in REPLAYED.items()}
    dirty = record["dirty"]
    if dirty is not None:
        dirty = dirty or not all(entry["as_committed"] for entry in inputs.values())
    return {**record, "dirty": dirty, "inputs": inputs}


@harness.cached
def fresh_interpreter(code, *args):
    """What `python -c CODE ARGS` prints, run in a new interpreter once per process: what it
    reads does not depend on what this process imported or replaced before (pytest, a notebook's
    earlier cells)."""
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          check=True, encoding="utf-8")
    return done.stdout

"""RESULTS.md as a researcher reads it: every committed results file has a row in its table of
runs, and the row says what the JSON says (wall time, torch build, seeds, and the commit of a
run that recorded its provenance); every number a paragraph quotes beside a JSON is in that
JSON; the summary of claims comes first, each claim with a verdict and a link to its section."""
import hashlib
import json
import re
import statistics
import sys
from pathlib import Path

import pytest

import conftest
import test_quoted_numbers as quoting
import test_readme as readme

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "web"))
import build  # noqa: E402  (web/build.py: the ids GitHub and the site give headings)

REPORT = ROOT / "RESULTS.md"
RESULTS = sorted((ROOT / "results").glob("*.json"))
VERDICTS = ("reproduced", "partly", "not reproduced", "not shown", "consistent",
            "not testable here", "not run here")


def table_after(heading):
    """The rows of the first markdown table under `heading`, as lists of cell strings."""
    text = REPORT.read_text(encoding="utf-8")
    start = text.index(heading)
    rows = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("## "):
            break
        if line.startswith("|") and not re.fullmatch(r"[\s|:-]+", line):
            cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))   # "\|" is a pipe in a cell
            rows.append([cell.strip() for cell in cells])
    return rows[1:]                                                  # without the header


def runs_table():
    """{file name: its row} of the table of runs."""
    rows = table_after("## Runs: commands, commits, machines and times")
    return {re.fullmatch(r"`([^`]+)`", row[0]).group(1): row for row in rows}


def seeds_of(path):
    """The seeds a row quotes: the file's own count where it keeps one, else its config's
    (`seeds` first, then each `NAME_seeds` as "NAME n"); an analysis quotes its replayed run's."""
    written = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(written["config"].get("replay"), str):   # an analysis: its replayed run's seeds
        return seeds_of(ROOT / written["config"]["replay"])
    if "_analysis_of_" in path.stem:
        path = path.parent / (path.stem.split("_analysis_of_")[1] + ".json")
        written = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(written.get("seeds"), int):
        return str(written["seeds"])
    config = written["config"]
    counts = ([str(config["seeds"])] if "seeds" in config else []) + [
        f"{key.removesuffix('_seeds')} {value}" for key, value in config.items()
        if key.endswith("_seeds")]
    return ", ".join(counts) or "–"


def test_every_results_file_has_one_row_that_says_what_its_json_says():
    rows = runs_table()
    assert sorted(rows) == [path.name for path in RESULTS]
    for path in RESULTS:
        written = json.loads(path.read_text(encoding="utf-8"))
        name, command, kind, commit, torch, machine, seeds, time, record, note = rows[path.name]
        quoted = readme.seconds(re.fullmatch(readme.DURATION, time).groups())
        measured = written["wall_time_s"]
        assert abs(quoted - measured) <= max(0.05 * measured, 0.05), (path.name, time)
        assert torch == written["torch_version"], path.name
        assert seeds == seeds_of(path), path.name
        assert command.startswith("`python ") or command == "none", path.name
        if "provenance" in written:
            provenance = written["provenance"]
            assert commit.startswith(provenance["commit"][:7]), path.name
            assert ("dirty" in commit) == bool(provenance["dirty"]), path.name
            assert provenance["machine"]["cpu"] in machine, path.name
        else:
            assert re.fullmatch(r"[0-9a-f]{7}", commit), (path.name, commit)


def test_the_total_is_the_sum_of_the_rows():
    total = sum(json.loads(path.read_text(encoding="utf-8"))["wall_time_s"] for path in RESULTS)
    said = re.search(r"together (\d+(?:\.\d+)?) hours", REPORT.read_text(encoding="utf-8"))
    assert said and abs(float(said.group(1)) - total / 3600) < 0.05


def test_the_summary_comes_first_with_a_verdict_and_a_section_for_each_claim():
    text = REPORT.read_text(encoding="utf-8")
    assert text.index("## Summary") < text.index("## 01 ")
    ids = {build.heading_id(line.lstrip("#").strip()) for line in text.splitlines()
           if line.startswith("#")}
    rows = table_after("## Summary")
    assert len(rows) >= 15
    for number, claim, paper, ours, verdict, section in rows:
        assert re.fullmatch(r"[AB]\d+", number) and claim and ours
        assert verdict.startswith(VERDICTS), (number, verdict)
        anchors = re.findall(r"\]\(#([^)]+)\)", section)
        assert anchors and all(anchor in ids for anchor in anchors), (number, section)


def test_the_summary_quotes_only_numbers_its_sections_quote():
    """Each number of the summary's "ours" column is in the report's sections (where each is
    checked against its JSON below), written the same way."""
    text = REPORT.read_text(encoding="utf-8")
    body = text[text.index("## 01 "):text.index("## Runs")]
    for row in table_after("## Summary"):
        for interval in re.findall(r"[+−-]?\d+\.\d+ \[[^\]]+\]", row[3]):
            assert interval in body.replace("\n", " "), (row[0], interval)   # whole, as written
        for number in quoting.quoted_numbers(row[3]):
            assert re.search(rf"(?<![\d.]){re.escape(number.lstrip('-'))}(?![\d])", body), (
                row[0], number)


def test_every_link_to_a_section_of_the_report_finds_it():
    text = REPORT.read_text(encoding="utf-8")
    ids = {build.heading_id(line.lstrip("#").strip()) for line in text.splitlines()
           if line.startswith("#")}
    for anchor in re.findall(r"\]\(#([^)]+)\)", text):
        assert anchor in ids, anchor


# ----------------------------------------------------------------------------------------------
# Every number beside a JSON is that JSON's
# ----------------------------------------------------------------------------------------------
CITED = re.compile(r"results/([\w.-]+?\.json)")


def paragraphs():
    """(text, [cited JSON names]) of each paragraph or table row of the report's sections that
    names a results file, the summary and the table of runs aside (their rows are checked
    above and name several files)."""
    text = REPORT.read_text(encoding="utf-8")
    body = text[text.index("## 01 "):text.index("## What a practitioner can take away")]
    found = []
    for block in re.split(r"\n\s*\n", body):
        names = CITED.findall(block)
        if names and not block.lstrip().startswith("|"):
            found.append((block, names))
    return found


def statistics_of_lists(value):
    """The mean, and the sample std over the mean, of each list of per-seed numbers in a JSON
    value: what the report quotes where the file keeps the seeds."""
    if isinstance(value, dict):
        for item in value.values():
            yield from statistics_of_lists(item)
    elif isinstance(value, list) and value:
        if all(isinstance(item, (int, float)) and not isinstance(item, bool) for item in value):
            if len(value) <= quoting.LONGEST_QUOTED_LIST:
                mean = sum(value) / len(value)
                yield mean
                if len(value) > 1 and mean:
                    yield statistics.stdev(value) / mean
        else:
            for item in value:
                yield from statistics_of_lists(item)


def numbers_of(names):
    stored = []
    for name in names:
        path = ROOT / "results" / name
        assert path.exists(), name
        written = json.loads(path.read_text(encoding="utf-8"))
        stored.extend(quoting.stored_numbers(written))
        stored.extend(statistics_of_lists(written))
    return stored


def printed_by(names):
    """What the committed notebooks of the cited files' scripts print (a lesson's or study's
    printout of the same run)."""
    shown = []
    for name in names:
        stem = name.removesuffix(".json")
        for script in conftest.SCRIPTS:
            notebook = ROOT / "notebooks" / f"{script.stem}.ipynb"
            if stem.startswith(script.stem) and notebook.exists():
                import nbformat
                shown.append(quoting.printed_text(nbformat.read(notebook, as_version=4)))
    return "\n".join(shown)


# Numbers the report computes from stored ones and says so by their unit: ratios (13×), shares
# (71 %) and wall times (1.3 s, which the table of runs checks); and versions (Python 3.11).
DERIVED = re.compile(r"(?<![\w.])[−-]?\d+\.\d+(?=(?:–[\d.]+)?(?:×| ?%| s\b| min\b))"
                     r"|(?<=Python )\d+\.\d+")
# The paper's numbers: those in a clause that opens by naming their source ("Table 2's 2.5, 4.8
# and 6.4", "the paper's 0.25", "Table 6: 0.998"), up to its end (";" or "(").
PAPERS = re.compile(r"(?:Table \d+'s|Table \d+:|the paper's|paper [AB]'s)[^;()]*")


def ours_only(block):
    """The paragraph less its derived numbers and the paper's (see DERIVED and PAPERS)."""
    return DERIVED.sub("", PAPERS.sub("", block))


@pytest.mark.parametrize("index", range(len(paragraphs())))
def test_each_number_beside_a_json_is_that_json_s(index):
    """A decimal number of a paragraph that cites results files is stored in one of them at the
    precision written, or printed by their notebook, or marked as the paper's."""
    block, names = paragraphs()[index]
    missing = quoting.untraced(ours_only(block), printed_by(names), numbers_of(names))
    assert not missing, (f"RESULTS.md quotes {missing} beside {names}, which hold no such "
                         f"number: {block[:160]!r}")


KINDS = ("default", "full", "variant", "old default", "analysis",      # as the table's
         "comparison")                                                    # text says


class Named(Exception):
    """Raised where a script makes its Run: the results file its command would write."""


def written_names(command, folder, monkeypatch):
    """The names (without .json) a row's command can write: its script runs as `python` would
    run it, with its flags parsed, until it makes its Run; a replay's analysis may instead be
    written as <stem>_analysis_of_<replayed>."""
    import runpy
    import shlex
    import harness
    import plumbing
    words = shlex.split(command)
    assert words[0] == "python" and (ROOT / words[1]).is_file(), command

    def study(run, stem, args, parts=None, variant="", named=(), script=None):
        raise Named(stem, stem + variant + plumbing.output_suffix(args, parts, named), args)

    def lesson(run, stem, args, variant="", named=(), script=None):
        raise Named(stem, stem + variant + harness.output_suffix(args, named), args)

    monkeypatch.setattr(plumbing.Run, "__init__", study)
    monkeypatch.setattr(harness.Run, "__init__", lesson)
    monkeypatch.setattr(sys, "argv", [words[1], *words[2:], "--out", str(folder)])
    with pytest.raises(Named) as made:         # a flag the script lacks exits 2 instead
        runpy.run_path(str(ROOT / words[1]), run_name="__main__")
    stem, name, args = made.value.args
    replayed = getattr(args, "replay", None)
    return {name} | ({plumbing.analysis_name(stem, replayed)} if replayed else set())


def test_every_command_of_the_table_of_runs_writes_the_file_of_its_row(tmp_path, monkeypatch):
    """Each row's command, run with today's code (up to the point where it names its results
    file), writes the file its row names; its kind is one the table's text defines. A file
    today's code cannot make says `none` and why in its record."""
    monkeypatch.chdir(ROOT)                     # the table's commands run from the root
    for name, row in runs_table().items():
        assert row[2] in KINDS, (name, row[2])
        if row[1] == "none":
            assert row[8].startswith("not re-made: "), (name, row[8])
            continue
        assert Path(name).stem in written_names(row[1].strip("`"), tmp_path, monkeypatch), \
            (name, row[1])


def recorded_paths(written):
    """The paths a results file's config records (a replayed file, a lesson run read)."""
    values = [item for value in written["config"].values()
              for item in (value if isinstance(value, list) else [value])]
    return [value for value in values
            if isinstance(value, str) and value.endswith((".json", ".txt"))]


def test_a_file_re_made_records_what_ran_and_the_others_say_why_not():
    """A results file with the record complete names a script that exists, paths that exist
    and its provenance, whose inputs are the files committed today; any other says in its row
    why it was not re-made, and a run short enough to re-make (at most 15 minutes on 2 cores)
    must give another reason than its time."""
    rows = runs_table()
    for path in RESULTS:
        written = json.loads(path.read_text(encoding="utf-8"))
        record = rows[path.name][8]
        inputs = written.get("provenance", {}).get("inputs", {})
        complete = ("provenance" in written and (ROOT / written["script"]).is_file()
                    and all((ROOT / shown).is_file() for shown in recorded_paths(written))
                    and all((ROOT / read).is_file() and hashlib.sha256(
                        (ROOT / read).read_bytes()).hexdigest() == entry["sha256"]
                            for read, entry in inputs.items()))
        if complete:
            assert record == "complete", (path.name, record)
            continue
        assert record.startswith("not re-made: "), (path.name, record)
        if re.match(r"not re-made: its run takes", record):
            assert written["wall_time_s"] > 15 * 60, (path.name, record)


def test_the_constraints_pin_every_requirement_at_the_committed_runs_versions():
    """constraints.txt pins each requirement (and the site's), and the versions it pins are the
    ones every results file with a provenance record names."""
    def names(path):
        found = set()
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.split("#")[0].strip()
            if line and not line.startswith("-r"):
                found.add(re.split(r"[<>=!~\[ ]", line)[0].lower().replace("_", "-"))
        return found
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.lower().replace("_", "-")] = version
    assert names(ROOT / "requirements.txt") | names(ROOT / "requirements-cluster.txt") | \
        names(ROOT / "web" / "requirements.txt") <= set(pins)
    for path in RESULTS:
        versions = json.loads(path.read_text(encoding="utf-8")).get("provenance", {}).get(
            "versions", {})
        for name in ("torch", "numpy", "scipy"):
            if name in versions:
                assert versions[name].split("+")[0] == pins[name], (path.name, name)


def test_every_committed_figure_is_named_where_a_reader_finds_it():
    """Each figures/*.png is linked or named in a text or drawn by a file of the repository."""
    texts = "".join(path.read_text(encoding="utf-8") for pattern in ("*.md", "*.py",
                                                                     "further/*.py", "engine/*.py")
                    for path in ROOT.glob(pattern))
    unnamed = [path.name for path in sorted((ROOT / "figures").glob("*.png"))
               if path.stem not in texts]
    assert not unnamed, unnamed

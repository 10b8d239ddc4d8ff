"""The README and TEACHING.md against the repository: every link resolves, and every default
run's time they quote (and each script's docstring) is its committed JSON's wall_time_s."""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(ROOT.glob("0[1-7]_*.py"))
PAGES = [ROOT / "README.md", ROOT / "TEACHING.md"]
DURATION = r"(?:(\d+) min(?: (\d+) s)?|(\d+(?:\.\d+)?) s)\b"   # "6 min 6 s", "36 min", "3.5 s"
TOLERANCE = 0.10   # a quoted time may differ from wall_time_s by at most 10 %


def seconds(match):
    """Seconds of a DURATION match (its three groups)."""
    minutes, rest, plain = match
    return float(plain) if plain else 60 * int(minutes) + int(rest or 0)


def wall_time(script):
    return json.loads((ROOT / "results" / f"{script.stem}.json").read_text())["wall_time_s"]


def quoted_default_times(script):
    """[(where, seconds)]: each place that quotes the default run's time of `script`."""
    name = re.escape(script.name)
    readme = (ROOT / "README.md").read_text()
    row = re.search(rf"^\| \[{name}\]\({name}\) \|(.*)$", readme, re.M)
    assert row, f"README's files table has no row for {script.name}"
    cells = row.group(1).split(" | ")
    found = [("README table", seconds(re.fullmatch(DURATION, cells[3].strip()).groups()))]
    for page in PAGES:   # `python 0N_....py` (6 min 6 s): the bare default command
        for match in re.finditer(rf"`python {name}` \({DURATION}", page.read_text()):
            found.append((page.name, seconds(match.groups())))
    docstring = re.search(rf"^    python {name} +#[^\n]*?{DURATION}", script.read_text(), re.M)
    assert docstring, f"{script.name}'s docstring quotes no time for its default run"
    found.append((f"{script.name} docstring", seconds(docstring.groups())))
    return found


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_quoted_times_are_the_json_wall_time(script):
    measured = wall_time(script)
    for where, quoted in quoted_default_times(script):
        assert abs(quoted - measured) <= TOLERANCE * measured, (
            f"{where} says {quoted:.0f} s for {script.name}; results/{script.stem}.json says "
            f"{measured:.0f} s")


def test_the_quoting_finds_every_place():
    """The parser sees the table, the section's command and the docstring (not vacuous)."""
    places = {where for where, _ in quoted_default_times(ROOT / "02_multihead_model.py")}
    assert {"README table", "README.md", "TEACHING.md", "02_multihead_model.py docstring"} <= places


SIDE_STUDIES = [ROOT / f"{stem}.py" for stem in ("02a_recipe_study", "02b_directions_study",
                                                "02c_seed_count", "07a_text_retrieval")]


@pytest.mark.parametrize("script", SIDE_STUDIES, ids=lambda path: path.stem)
def test_side_studies_quote_their_json_wall_time(script):
    """A side study's docstring, and each `python 0Na_....py` (time) in the pages, quote its
    committed JSON's wall_time_s."""
    name, measured = re.escape(script.name), wall_time(script)
    found = [match.groups() for page in PAGES
             for match in re.finditer(rf"`python {name}` \({DURATION}", page.read_text())]
    docstring = re.search(rf"^    python {name} +#[^\n]*?{DURATION}", script.read_text(), re.M)
    assert docstring, f"{script.name}'s docstring quotes no time for its default run"
    for quoted in [seconds(groups) for groups in found] + [seconds(docstring.groups())]:
        assert abs(quoted - measured) <= TOLERANCE * measured, (script.name, quoted, measured)


@pytest.mark.parametrize("page", PAGES, ids=lambda path: path.name)
def test_links_resolve(page):
    """Every relative link and image of the page names a file or folder of the repository."""
    targets = re.findall(r"\]\(([^)\s]+)\)", page.read_text())
    local = [t.split("#")[0] for t in targets if not re.match(r"[a-z]+:", t) and t[0] != "#"]
    assert local, "no links found: the pattern is wrong"
    missing = [t for t in local if not (page.parent / t).exists()]
    assert not missing, f"{page.name} links to missing files: {missing}"


def timetable():
    """TEACHING.md's class table: [(start, end, launched script or None, teach + exercise min)]."""
    rows = []
    for line in (ROOT / "TEACHING.md").read_text().splitlines():
        found = re.match(r"\| (\d+)–(\d+) \|[^|]+\|([^|]*)\|([^|]*)\|([^|]*)\|", line)
        if found:
            start, end, launch, teach, students = found.groups()
            script = re.search(r"`python (0\d_\w+\.py)`", launch)
            minutes = sum(int(m) for m in re.findall(r"\((\d+)\)", teach + students))
            rows.append((int(start), int(end), script and script.group(1), minutes))
    return rows


def test_the_timetable_adds_up():
    """Blocks tile 0-90 minutes; in each, teaching + exercises fit; a launched run ends before
    the next launch (one at a time) and before its own block (two blocks later) begins."""
    rows = timetable()
    assert rows[0][0] == 0 and rows[-1][1] == 90
    assert all(a[1] == b[0] for a, b in zip(rows, rows[1:])), "blocks must be contiguous"
    for start, end, _, minutes in rows:
        assert minutes <= end - start, f"block {start}-{end}: {minutes} min of work"
    launches = [(start, script) for start, _, script, _ in rows if script]
    for (start, script), (following, _) in zip(launches, launches[1:] + [(90, None)]):
        done = start + wall_time(ROOT / script) / 60
        assert done <= following, f"{script} launched at {start} still runs at {following}"
    assert len(launches) >= 5


def test_every_committed_result_was_written_by_the_current_training_loop():
    """Each results/*.json records in its config the settings that differ from its preset
    ("changed"), written since the one training loop (helpers.fit) and the whole-run wall_time_s
    came in together; a file without it is older than both and must be re-run, not cited."""
    stale = [path.name for path in sorted((ROOT / "results").glob("*.json"))
             if "changed" not in json.loads(path.read_text())["config"]]
    assert not stale, f"re-run these with the current code: {stale}"


def test_every_results_file_the_pages_name_exists():
    named = {name for page in PAGES + SCRIPTS + SIDE_STUDIES
             for name in re.findall(r"(?<!runs/)results/([\w.-]+\.json)", page.read_text())}
    assert named, "the pattern found no results file"
    missing = sorted(name for name in named if not (ROOT / "results" / name).exists())
    assert not missing, missing


def test_the_front_page_stays_within_450_lines():
    """Details live in each file's notebook; the README keeps a line and a link."""
    assert len((ROOT / "README.md").read_text().splitlines()) <= 450


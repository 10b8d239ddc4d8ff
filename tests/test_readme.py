"""The front page, the results report and the class plan against the repository: every link
resolves, every default run's time they quote is its committed JSON's wall_time_s, the numbers
the front page quotes are their JSON's, and every committed result stays one link away."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import conftest

ROOT = Path(__file__).resolve().parent.parent
LESSONS = conftest.LESSONS
FURTHER = conftest.FURTHER
PAGES = [ROOT / "README.md", ROOT / "RESULTS.md", ROOT / "TEACHING.md"]
DURATION = r"(?:(\d+) min(?: (\d+) s)?|(\d+(?:\.\d+)?) s)\b"   # "6 min 6 s", "36 min", "3.5 s"
TOLERANCE = 0.10   # a quoted time may differ from wall_time_s by at most 10 %
LESSON_BUDGET_S = 180        # each lesson's default run: at most 3 minutes on 2 cores
PATH_BUDGET_S = 15 * 60      # the seven lessons together


def seconds(match):
    """Seconds of a DURATION match (its three groups)."""
    minutes, rest, plain = match
    return float(plain) if plain else 60 * int(minutes) + int(rest or 0)


def committed(stem):
    return json.loads((ROOT / "results" / f"{stem}.json").read_text(encoding="utf-8"))


def wall_time(script):
    return committed(script.stem)["wall_time_s"]


def command(script):
    """How the pages write the default command: `python 01_x.py`, `python further/02a_x.py`."""
    return script.relative_to(ROOT).as_posix()


def quoted_default_times(script):
    """[(where, seconds)]: each place that quotes the default run's time of `script`: the pages'
    `python NAME.py` (TIME, the README's path table (lessons), the file's own first paragraph
    and its commands block (`#     python NAME.py   # ...: TIME`)."""
    name = re.escape(command(script))
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in re.finditer(rf"`python {name}` \({DURATION}", text):
            found.append((page.name, seconds(match.groups())))
    if script in LESSONS:
        row = re.search(rf"^\| \[[^]]+\]\(notebooks/{script.stem}\.ipynb\) \(\[script\]\({name}\)\) "
                        rf"\|.*\| ([^|]+) \|$", (ROOT / "README.md").read_text(encoding="utf-8"), re.M)
        assert row, f"README's path table has no row for {script.name}"
        found.append(("README table", seconds(re.fullmatch(DURATION, row.group(1)).groups())))
    text = script.read_text(encoding="utf-8")
    block = re.search(rf"^#\s+python {name} +#[^\n]*?{DURATION}", text, re.M)
    if block:                                  # a commands block, where a file has one
        found.append((f"{script.name} commands", seconds(block.groups())))
    return found


@pytest.mark.parametrize("script", LESSONS, ids=lambda path: path.stem)
def test_quoted_times_are_the_json_wall_time(script):
    measured = wall_time(script)
    for where, quoted in quoted_default_times(script):
        assert abs(quoted - measured) <= TOLERANCE * measured, (
            f"{where} says {quoted:.0f} s for {script.name}; results/{script.stem}.json says "
            f"{measured:.0f} s")


def test_the_quoting_finds_every_place():
    """The parser sees the table, the pages' command and the file's own (not vacuous)."""
    places = {where for where, _ in quoted_default_times(ROOT / "02_multihead_model.py")}
    assert {"README table", "RESULTS.md"} <= places


def test_each_lesson_default_fits_its_budget():
    """The committed default runs (not this machine): each lesson within 3 minutes on 2 cores,
    the seven within 15."""
    times = {script.stem: wall_time(script) for script in LESSONS}
    assert len(times) == 7
    assert all(seconds <= LESSON_BUDGET_S for seconds in times.values()), times
    assert sum(times.values()) <= PATH_BUDGET_S, times


def test_the_first_screen_holds_the_idea():
    """A lesson's first cell is its title and one paragraph with its command; the first code
    cell is a one-line docstring and the imports; the settings rows follow (test_notebooks
    checks the rest of the first screen)."""
    import jupytext
    for script in LESSONS:
        cells = jupytext.read(script).cells
        title = cells[0].source.split("\n\n")
        assert cells[0].cell_type == "markdown" and title[0].startswith("# 0"), script.name
        assert len(title) == 2 and f"`python {script.name}`" in title[1], script.name
        docstring = re.match(r'"""[^\n]*"""\n', cells[1].source)
        assert docstring, f"{script.name}: the first code cell opens with a one-line docstring"
        assert "SETTINGS = {" in cells[2].source, script.name


STUDY_COMMANDS = [script for script in FURTHER if (ROOT / "results" / f"{script.stem}.json").exists()]


@pytest.mark.parametrize("script", STUDY_COMMANDS, ids=lambda path: path.stem)
def test_studies_quote_their_json_wall_time(script):
    """A study with a committed default run: each `python further/NAME.py` (time) in the pages,
    and its own commands block, quote its JSON's wall_time_s."""
    measured = wall_time(script)
    for where, quoted in quoted_default_times(script):
        assert abs(quoted - measured) <= TOLERANCE * measured, (script.name, where, quoted)


@pytest.mark.parametrize("page", PAGES, ids=lambda path: path.name)
def test_links_resolve(page):
    """Every relative link and image of the page names a file or folder of the repository."""
    targets = re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8"))
    local = [t.split("#")[0] for t in targets if not re.match(r"[a-z]+:", t) and t[0] != "#"]
    assert local, "no links found: the pattern is wrong"
    missing = [t for t in local if not (page.parent / t).exists()]
    assert not missing, f"{page.name} links to missing files: {missing}"


def test_no_placeholder_is_left():
    """A number still to be filled in after a run (⟨TBD⟩) never lands."""
    for path in PAGES + LESSONS + FURTHER:
        assert "⟨TBD⟩" not in path.read_text(encoding="utf-8"), path.name


def test_every_committed_result_is_one_link_away():
    """Every committed results file is named in RESULTS.md or in a going-further study (which
    replays or quotes it), and every figure the front page used to show stays linked."""
    cited = ((ROOT / "RESULTS.md").read_text(encoding="utf-8")
             + "".join(p.read_text(encoding="utf-8") for p in FURTHER))
    unnamed = [path.name for path in sorted((ROOT / "results").glob("*.json"))
               if path.name not in cited]
    assert not unnamed, unnamed
    for figure in FIGURES_ONCE_ON_THE_FRONT_PAGE:
        assert f"figures/{figure}" in cited, figure


# The figures the README showed before it became a front page (they moved to RESULTS.md).
FIGURES_ONCE_ON_THE_FRONT_PAGE = """01_sequences 02f_attention 02_nmse_vs_heads 02_nmse_vs_heads_full
    02c_seed_count 03_construction 03_lower_bound 03_params_vs_nmse 04_parameter_counts
    04_trained_routes 05c_bounded_logits 05_confound 05_saturation 06_allocations 06g_fixed_budget
    06b_ngram_full 06_rank_by_layer 06_saturation 07c_fixed_width 07a_law_fit_to_full
    07a_text_retrieval_full""".split()
FIGURES_ONCE_ON_THE_FRONT_PAGE = [f"{name}.png" for name in FIGURES_ONCE_ON_THE_FRONT_PAGE]


def timetable():
    """TEACHING.md's class table: [(start, end, launched script or None, teach + exercise min)]."""
    rows = []
    for line in (ROOT / "TEACHING.md").read_text(encoding="utf-8").splitlines():
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
             if "changed" not in json.loads(path.read_text(encoding="utf-8"))["config"]]
    assert not stale, f"re-run these with the current code: {stale}"


def test_every_results_file_the_pages_name_exists():
    named = {name for page in PAGES + LESSONS + FURTHER
             for name in re.findall(r"(?<!runs/)results/([\w.-]+\.json)",
                                    page.read_text(encoding="utf-8"))}
    assert named, "the pattern found no results file"
    missing = sorted(name for name in named if not (ROOT / "results" / name).exists())
    assert not missing, missing


def test_the_front_page_is_a_front_page():
    """Start here, the path, going further, and links: the details live in RESULTS.md."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 130
    for heading in ("## Start here", "## The path", "## Going further"):
        assert heading in readme
    assert "notebooks/01_retrieval_task.ipynb" in readme
    for script in LESSONS + FURTHER:
        assert f"]({command(script)})" in readme, f"the front page does not link {script.name}"


def path_row(stem):
    """The README path table's row of a lesson, as one string."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = re.search(rf"^\| \[[^]]+\]\(notebooks/{stem}\.ipynb\) \(\[script\]\({stem}\.py\)\) \|.*$",
                    readme, re.M)
    assert row, stem
    return row.group(0)


def interval(entry, digits=2):
    """A paired difference as the pages write it: +0.22 [+0.19, +0.26]."""
    low, high = entry["ci95"]
    return f"{entry['mean']:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]".replace("-", "−")


def sci(value):
    """A number as the pages write it: 8.1e-3 (Python writes 8.1e-03)."""
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def test_the_path_table_quotes_its_json():
    """Each number of the front page's path table is its lesson's committed JSON, as written."""
    stats = committed("01_retrieval_task")["target_stats"]
    assert f"{stats['8']['var']:.2f} (T = 8)" in path_row("01_retrieval_task")
    assert f"{stats['512']['var']:.2f} (T = 512)" in path_row("01_retrieval_task")
    nmse = committed("02_multihead_model")["nmse"]
    for statistic, quoted in (("mean", "2.8–13×"), ("min", "8.9–14×")):
        drops = [nmse[T]["3"][statistic] / nmse[T]["4"][statistic] for T in nmse]
        assert f"{min(drops):.2g}–{max(drops):.2g}×" == quoted, (statistic, drops)
        assert quoted in path_row("02_multihead_model")
    trained = committed("04_single_head_memorization")["trained"]
    memorise = trained["memorise"]["4"]["valid_nmse"]
    one_head = trained["1 head"]["4"]["valid_nmse"]
    assert f"{sci(memorise)} against {sci(one_head)}" in path_row("04_single_head_memorization")
    change = committed("05_saturation")["model_side"]["gain_change"]
    row = path_row("05_saturation")
    assert interval(change["capped"]["2"]) in row and interval(change["free"]) in row
    row = path_row("06_allocation")
    edges = [abs(entry["paired"]["front-loaded - back-loaded"]["mean"])
             for entry in committed("06_allocation")["comparison"].values()]
    assert f"by {min(edges):.3f} and {max(edges):.3f} NMSE" in row
    row = path_row("07_real_data")
    protocol = committed("07_real_data")["train_gain_with_heads"]["fixed-head-dim"]["64"]
    full = committed("07c_fixed_width_full")["train_gain_with_heads"]
    for entry in (protocol, full["fixed-head-dim"]["64"]):
        assert interval(entry) in row


def test_the_path_table_does_not_answer_the_class_s_questions():
    """6.2 (which allocation wins where), 6.4 (the best head count at a fixed budget) and 7.1
    (is the fixed-width gain clear) are asked in class before their figures: the front page
    names none of their answers."""
    rows = path_row("06_allocation") + path_row("07_real_data")
    fixed = committed("07c_fixed_width_full")["train_gain_with_heads"]["fixed-width"]["64"]
    for answer in ("front-loaded", "back-loaded", "front −", "H = M", "H = 4", interval(fixed)):
        assert answer not in rows, answer


def exercise_minutes():
    """{number: minutes} from the exercises' own headings ("## 2.3 Title · easy · 5 min")."""
    found = {}
    for path in sorted((ROOT / "exercises").glob("ex0*.py")):
        text = path.read_text(encoding="utf-8")
        for number, minutes in re.findall(r"^# ## (\d\.\d) .*· (\d+) min", text, re.M):
            found[number] = int(minutes)
    return found


def named_exercises(text):
    """Exercise numbers a text names, ranges such as 1.2–1.4 expanded."""
    named = set()
    for first, last in re.findall(r"\b(\d\.\d)(?:–(\d\.\d))?\b", text):
        lesson, start = first.split(".")
        end = last.split(".")[1] if last else start
        named |= {f"{lesson}.{k}" for k in range(int(start), int(end) + 1)}
    return named


def test_the_class_covers_every_lesson_and_every_exercise_has_a_place():
    """Each lesson 01-07 has a block; each exercise is done in class or set as homework; those
    the plan cuts for time are in the homework; the homework's stated minutes are the labels'."""
    text = (ROOT / "TEACHING.md").read_text(encoding="utf-8")
    blocks = [line.split("|")[2] for line in text.splitlines() if re.match(r"\| \d+–\d+ \|", line)]
    for lesson in range(1, 8):
        assert any(block.strip().startswith(f"0{lesson} ·") for block in blocks), lesson
    in_class = set()
    for line in text.splitlines():
        if re.match(r"\| \d+–\d+ \|", line):
            in_class |= named_exercises(line.split("|")[5])
    homework = text[text.index("## Homework"):text.index("**Optional")]
    cut = text[text.index("**If time runs short**"):text.index("**Slow laptops**")]
    minutes = exercise_minutes()
    assert len(minutes) >= 20
    set_as_homework = named_exercises(homework) & set(minutes)
    assert set(minutes) <= in_class | set_as_homework, set(minutes) - in_class - set_as_homework
    assert named_exercises(cut) & set(minutes) <= set_as_homework
    not_in_class = sorted(set(minutes) - in_class)
    stated = re.search(r"The exercises not done in class, (\d+) minutes", homework)
    assert int(stated.group(1)) == sum(minutes[n] for n in not_in_class)


def test_start_here_sets_up_a_fresh_laptop_in_two_commands_on_each_system():
    """A virtual environment (PEP 668 refuses a system Python's pip), the CPU build of torch
    before the requirements (which would pull the CUDA build), the requirements, the first
    lesson, then the tests: in that order, in the bash block and in the PowerShell one."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme[readme.index("## Start here"):readme.index("## The path")]
    blocks = re.findall(r"```(bash|powershell)\n(.*?)```", start, re.S)
    assert [kind for kind, _ in blocks] == ["bash", "powershell"]
    for kind, block in blocks:
        commands = [line for line in block.splitlines() if not line.startswith("#")]
        setup = " ".join(commands[:-1])
        steps = ["-m venv .venv", "activate" if kind == "bash" else "Activate.ps1",
                 "pip install torch --index-url https://download.pytorch.org/whl/cpu",
                 "pip install -r requirements.txt", "python 01_retrieval_task.py"]
        places = [setup.find(step) for step in steps]
        assert -1 not in places and places == sorted(places), (kind, steps, places)
        assert commands[-1].split("#")[0].strip() == "python -m pytest -q", kind


def test_the_class_s_set_up_types_the_readme_s_commands():
    """TEACHING's student set-up makes the environment as the README does on each system
    (python3 where stock macOS and Ubuntu have no `python`, py on Windows) and installs the same
    torch build and requirements."""
    def commands(page, start, end):
        text = (ROOT / page).read_text(encoding="utf-8")
        text = text[text.index(start):text.index(end)]
        blocks = dict((kind, block) for kind, block in
                      re.findall(r"```(bash|powershell)\n(.*?)```", text, re.S))
        return {kind: [part.strip() for line in block.replace("\\\n", " ").splitlines()
                       if not line.startswith("#")
                       for part in re.split(r"&&|;", line.split("  #")[0]) if part.strip()]
                for kind, block in blocks.items()}

    readme = commands("README.md", "## Start here", "## The path")
    teaching = commands("TEACHING.md", "## Before class", "**Where it was run")
    for kind, maker in (("bash", "python3 -m venv .venv"), ("powershell", "py -m venv .venv")):
        assert maker in readme[kind] and maker in teaching[kind], kind
        for step in ("pip install torch --index-url https://download.pytorch.org/whl/cpu",
                     "pip install -r requirements.txt", "python 01_retrieval_task.py"):
            assert step in readme[kind] and step in teaching[kind], (kind, step)


def test_the_slow_machine_fallback_still_shows_each_lesson_s_point():
    """TEACHING's fallback projects the committed notebooks, not a --quick run; those notebooks
    print lesson 02's drop at h = D (about 10x in its default run) and lesson 06's winners, which
    differ between the two tasks, as the committed JSON has them."""
    text = (ROOT / "TEACHING.md").read_text(encoding="utf-8")
    fallback = text[text.index("**Slow laptops**"):text.index("## Homework")]
    assert "committed notebook" in fallback and "notebooks/02_multihead_model.ipynb" in fallback
    assert "launch with `--quick`" not in fallback
    printed = {stem: "".join("".join(output.get("text", "")) for cell in json.loads(
                   (ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
                   for output in cell.get("outputs", []))
               for stem in ("02_multihead_model", "06_allocation")}
    knee = json.loads((ROOT / "results" / "02_multihead_model.json").read_text(encoding="utf-8"))
    assert min(knee["knee"]["ratio"].values()) > 5 and "drop from h = 3 to 4" in printed[
        "02_multihead_model"]
    comparison = json.loads((ROOT / "results" / "06_allocation.json").read_text(
        encoding="utf-8"))["comparison"]
    winners = {task: min(("front-loaded", "back-loaded"),
                         key=lambda name: entry["allocations"][name]["mean"])
               for task, entry in comparison.items()}
    assert len(set(winners.values())) == 2, winners
    assert all(task in printed["06_allocation"] for task in winners)


def test_ci_runs_the_readme_s_start_here_as_a_student_types_it():
    """.ci/run reads its set-up and test commands from the README's bash block (the
    environment moved outside the checkout), so the block a student copies is the one CI runs."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    reader = re.search(r"read_block='(.*?)'\n", script, re.S).group(1)
    commands = [subprocess.run([sys.executable, "-c", reader, str(index)], cwd=ROOT, text=True,
                               capture_output=True, check=True, encoding="utf-8").stdout.strip()
                for index in (0, 1)]
    assert commands[0].startswith("python3 -m venv .venv && . .venv/bin/activate && pip install "
                                  "torch --index-url https://download.pytorch.org/whl/cpu")
    assert commands[0].endswith("pip install -r requirements.txt && python 01_retrieval_task.py")
    assert commands[1] == "python -m pytest -q"
    assert 'bash -c "${setup//.venv/$venv}"' in script and 'bash -c "$test_command"' in script

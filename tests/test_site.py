"""web/build.py: the site builds from the committed notebooks; every link and image resolves;
each page holds its notebook's figures and MathML, no raw TeX, no machine path, no traceback;
bad input stops the build in one line; a real browser (Debian's chromium) renders the pages."""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import conftest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "web"))
import build  # noqa: E402  (web/build.py)

NOTEBOOKS = [script.stem for script in conftest.SCRIPTS]
MACHINE_PATH = re.compile(re.escape(str(ROOT)) + r"|(?<![\w.])/(home|root|tmp|Users|work)/")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site") / "_site"
    assert build.build(ROOT, out) == len(NOTEBOOKS) + 3
    return out


def text_outside_code(page):
    """A page's text without its style, code, printed output and MathML."""
    return re.sub(r"<style>.*?</style>|<pre.*?</pre>|<code.*?</code>|<math.*?</math>", "", page,
                  flags=re.S)


def test_the_reference_solutions_are_not_published(site):
    """TEACHING.md links the exercises' folder; the site lists the kit without the exercise
    files (they hold the reference solutions) and says how to make the student copy."""
    assert not list(site.rglob("ex0*_*.py"))
    listing = (site / "files" / "exercises" / "index.html").read_text(encoding="utf-8")
    assert "check.py" in listing and "make_handout.py handout/" in listing


def test_every_link_and_image_resolves(site):
    for page in site.rglob("*.html"):
        for link in re.findall(r'(?:href|src)="([^"#]*)', page.read_text(encoding="utf-8")):
            if link and not re.match(r"[a-z]+:", link):
                assert (page.parent / link).exists(), (page.relative_to(site), link)


def test_every_link_to_a_section_finds_it(site):
    """A link "PAGE.html#x" or "#x" lands on an element with id="x" (headings carry GitHub's
    ids, so the same links work in the markdown on GitHub)."""
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        for link, anchor in re.findall(r'href="([^"#]*)#([^"]+)"', text):
            if re.match(r"[a-z]+:", link):
                continue
            target = page.parent / link if link else page
            assert f'id="{anchor}"' in target.read_text(encoding="utf-8"), (
                page.relative_to(site), link, anchor)


def test_headings_get_github_s_ids():
    assert build.heading_id("02 · One layer, h heads, and h = D") == "02--one-layer-h-heads-and-h--d"
    assert build.heading_id("<code>06d</code> · Does d buy less?") == "06d--does-d-buy-less"


@pytest.mark.parametrize("stem", NOTEBOOKS)
def test_a_page_holds_its_notebook_s_figures_and_math(site, stem):
    notebook = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
    figures = sum("image/png" in output.get("data", {}) for cell in notebook.cells
                  for output in cell.get("outputs", []))
    page = (site / f"{stem}.html").read_text(encoding="utf-8")
    assert page.count("<img ") == figures
    spans = sum(cell.source.count("$") for cell in notebook.cells if cell.cell_type == "markdown")
    assert (page.count("<math") > 0) == (spans > 0)
    left = text_outside_code(page)
    assert "$" not in left and not re.search(r"\\(frac|sum|mathrm|mathbb|le|top)\b", left), stem
    assert "Traceback" not in left and not MACHINE_PATH.search(page)


def test_lessons_lead_to_each_other_and_fold_their_apparatus(site):
    lessons = [script.stem for script in conftest.LESSONS]
    for before, after in zip(lessons, lessons[1:]):
        assert f'href="{after}.html"' in (site / f"{before}.html").read_text(encoding="utf-8")
        assert f'href="{before}.html"' in (site / f"{after}.html").read_text(encoding="utf-8")
    for stem in lessons:
        page = (site / f"{stem}.html").read_text(encoding="utf-8")
        assert 'href="index.html"' in page and "<details>" in page
    index = (site / "index.html").read_text(encoding="utf-8")
    assert all(f'href="{stem}.html"' in index for stem in NOTEBOOKS)   # every page from the front
    assert 'href="results.html"' in index and 'href="teaching.html"' in index


def test_nothing_is_loaded_from_the_network(site):
    for page in site.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"<(script|link)\b", text), page.name
        assert not re.search(r'src="https?:', text), page.name


def test_the_build_imports_no_torch():
    done = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'web'); "
                           "import build; print('torch' in sys.modules)"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, encoding="utf-8")
    assert done.stdout.strip() == "False", done.stderr


def small_course(tmp_path, readme):
    """A repository of one lesson, 01_tiny (its script and an executed notebook with math, a
    printout and a figure), and the three pages."""
    root = tmp_path / "repo"
    (root / "notebooks").mkdir(parents=True)
    (root / "further").mkdir()
    (root / "01_tiny.py").write_text("# %%\nprint(1)\n", encoding="utf-8")
    figure = (ROOT / "figures" / "01_sequences.png").read_bytes()
    import base64
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# 01 · Tiny\n\nThe error $\\varepsilon$ falls."),
        nbformat.v4.new_code_cell("print(1)", outputs=[
            nbformat.v4.new_output("stream", name="stdout", text="1\n"),
            nbformat.v4.new_output("display_data", data={
                "image/png": base64.b64encode(figure).decode()})])])
    nbformat.write(notebook, root / "notebooks" / "01_tiny.ipynb")
    (root / "README.md").write_text(readme, encoding="utf-8")
    for name in ("RESULTS.md", "TEACHING.md"):
        (root / name).write_text(f"# {name}\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("spoil, named", [
    ("link", "README.md"), ("outputs", "01_tiny.ipynb"), ("tex", "README.md")])
def test_bad_input_stops_the_build_in_one_line_and_keeps_the_old_site(tmp_path, capsys, spoil,
                                                                      named):
    root = small_course(tmp_path, {"link": "# Course\n\n[gone](nowhere.md)\n",
                                   "tex": "# Course\n\n$\\frac{1}{$\n"}.get(spoil, "# Course\n"))
    if spoil == "outputs":
        path = root / "notebooks" / "01_tiny.ipynb"
        notebook = json.loads(path.read_text(encoding="utf-8"))
        for cell in notebook["cells"]:
            cell["outputs"] = [] if cell["cell_type"] == "code" else cell.get("outputs")
            cell.pop("outputs") if cell["cell_type"] != "code" else None
        path.write_text(json.dumps(notebook), encoding="utf-8")
    out = tmp_path / "_site"
    out.mkdir()
    (out / "index.html").write_text("the old site", encoding="utf-8")
    with pytest.raises(SystemExit) as stop:
        build.main(["--root", str(root), "--out", str(out)])
    assert stop.value.code == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and named in said[0], said
    assert (out / "index.html").read_text(encoding="utf-8") == "the old site"
    assert not [path for path in tmp_path.iterdir() if path.name.startswith(".site-")]


def test_a_small_course_builds(tmp_path):
    root = small_course(tmp_path, "# Course\n\n[the lesson](notebooks/01_tiny.ipynb)\n")
    build.main(["--root", str(root), "--out", str(tmp_path / "_site")])
    site = tmp_path / "_site"
    assert 'href="01_tiny.html"' in (site / "index.html").read_text(encoding="utf-8")
    page = (site / "01_tiny.html").read_text(encoding="utf-8")
    assert "<math" in page and page.count("<img ") == 1 and "$" not in text_outside_code(page)


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium here (Debian: apt-get install chromium)")
@pytest.mark.parametrize("stem", ["index"] + [script.stem for script in conftest.LESSONS])
def test_a_real_browser_renders_the_math_and_the_figures(site, stem, tmp_path):
    page = (site / f"{stem}.html").as_uri()
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files"]
    dom = subprocess.run(flags + ["--dump-dom", page], capture_output=True, text=True,
                         timeout=60, encoding="utf-8").stdout
    source = (site / f"{stem}.html").read_text(encoding="utf-8")
    assert dom.count("<img") == source.count("<img ") and dom.count("<math") == source.count("<math")
    assert stem == "index" or ("<nav>" in dom and "<math" in dom)
    if stem not in ("index", "05_saturation"):   # a screenshot costs a second: two pages
        return
    shot = tmp_path / "shot.png"
    subprocess.run(flags + [f"--screenshot={shot}", "--window-size=900,1200", page],
                   capture_output=True, timeout=60)
    import matplotlib.image
    pixels = matplotlib.image.imread(shot)
    assert pixels.std() > 0.01                                          # not a blank page

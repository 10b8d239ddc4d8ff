"""Build the course as a static site: `python web/build.py` writes _site/ (open _site/index.html).

The pages come from the committed notebooks (notebooks/*.ipynb, as executed) and the three
markdown pages (README.md, RESULTS.md, TEACHING.md). Nothing is executed and torch is not
imported, so the site builds on a machine with neither. The equations become MathML at build
time and the code is highlighted here, so a page loads nothing from the network. A lesson's cells
tagged "apparatus" in its script (`# %% tags=["apparatus"]`) fold under a <details>.

A notebook without outputs or with an error, a link to a file that does not exist, or an
equation that does not convert stops the build with one line naming the file (exit code 2);
the site is written to a temporary folder and moved into place only when every page is done.
"""
import argparse
import base64
import functools
import html
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import latex2mathml.converter
import mistune
import nbformat
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

ROOT = Path(__file__).resolve().parent.parent
MARKDOWN_PAGES = {"README.md": "index.html", "RESULTS.md": "results.html",
                  "TEACHING.md": "teaching.html"}
FOLD_TAG = "apparatus"   # a script's cells with this tag fold under <details>
IMAGES = "images"        # the site's folder of the notebooks' figures
STYLE = """
body { max-width: 54rem; margin: 2rem auto; padding: 0 1rem; font: 16px/1.55 system-ui, sans-serif;
       color: #1d1d1f; }
nav { display: flex; gap: 1.5rem; margin: 1rem 0; padding: .5rem 0; border-bottom: 1px solid #ddd; }
pre { overflow-x: auto; padding: .6rem .8rem; background: #f6f8fa; border-radius: 4px;
      font-size: 13.5px; line-height: 1.4; }
pre.output { background: #fff; border-left: 3px solid #c8d0d8; }
img { max-width: 100%; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 14px; }
th, td { border: 1px solid #ccc; padding: .25rem .5rem; vertical-align: top; }
details > summary { cursor: pointer; color: #555; font-size: 14px; margin: .4rem 0; }
code { font-size: 90%; }
"""


class BuildError(Exception):
    """A reason the site cannot be built, naming the file."""


# ----------------------------------------------------------------------------------------------
# Which pages there are
# ----------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def course(root):
    """(lessons, studies): the notebooks of the path and of going further, as stems in order
    (read once per repository: every link asks)."""
    lessons = [path.stem for path in sorted(root.glob("0[1-7]_*.py"))]
    studies = [path.stem for path in sorted((root / "further").glob("0[1-7]*_*.py"))]
    return lessons, studies


def page_of(target, root):
    """The site page of a repository path (a notebook, its script or a markdown page), or None."""
    relative = target.relative_to(root).as_posix() if target.is_relative_to(root) else None
    if relative in MARKDOWN_PAGES:
        return MARKDOWN_PAGES[relative]
    lessons, studies = course(root)
    if target.suffix in (".ipynb", ".py") and target.stem in lessons + studies:
        return f"{target.stem}.html"
    return None


# ----------------------------------------------------------------------------------------------
# Markdown with its math as MathML
# ----------------------------------------------------------------------------------------------
CODE = re.compile(r"```.*?```|`[^`\n]+`", re.S)                  # left exactly as written
DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
INLINE_MATH = re.compile(r"(?<![\\$\w])\$(?=\S)([^$]+?)\$(?![\w$])")  # may wrap a line


def mathml(tex, display, where):
    """One TeX span as MathML; a span latex2mathml cannot read stops the build."""
    try:
        return latex2mathml.converter.convert(tex.strip(), display="block" if display else "inline")
    except Exception as error:                                  # its errors have no common base
        raise BuildError(f"{where}: the equation ${tex.strip()}$ does not convert ({error})")


def with_mathml(text, where):
    """The markdown text with every $...$ and $$...$$ outside code replaced by MathML."""
    pieces, last = [], 0
    for code in CODE.finditer(text):
        pieces.append(convert_math(text[last:code.start()], where))
        pieces.append(code.group(0))
        last = code.end()
    pieces.append(convert_math(text[last:], where))
    return "".join(pieces)


def convert_math(text, where):
    """$$...$$ as display MathML, then $...$ (within one paragraph) inline."""
    text = DISPLAY_MATH.sub(lambda m: mathml(m.group(1), True, where), text)
    return INLINE_MATH.sub(lambda m: m.group(0) if "\n\n" in m.group(1)
                           else mathml(m.group(1), False, where), text)


def heading_id(text):
    """The id GitHub gives a markdown heading, so that a page's "#..." links work on the site
    as on GitHub: the text without tags, lower case, only letters, digits, "-", "_" and spaces,
    each space a hyphen ("## 02 · One layer" -> "02--one-layer")."""
    words = html.unescape(re.sub(r"<[^>]+>", "", text)).strip().lower()
    return re.sub(r"[^\w\- ]", "", words).replace(" ", "-")


class Renderer(mistune.HTMLRenderer):
    def heading(self, text, level, **attrs):
        return f'<h{level} id="{heading_id(text)}">{text}</h{level}>\n'


MARKDOWN = mistune.create_markdown(renderer=Renderer(escape=False),
                                   plugins=["table", "strikethrough"])


def markdown_html(text, where):
    return MARKDOWN(with_mathml(text, where))


# ----------------------------------------------------------------------------------------------
# Links: rewritten to the site's pages, or to copies of the files they name
# ----------------------------------------------------------------------------------------------
LINK = re.compile(r'(href|src)="([^"#]*)(#[^"]*)?"')


def rewrite_links(page_html, source, root, site, copied):
    """Each relative href/src of a page made from `source`: to its page, or to a copy of the
    file under the site (a folder: a listing of its files). A missing target stops the build."""
    def rewrite(match):
        attribute, link, anchor = match.group(1), match.group(2), match.group(3) or ""
        if not link or re.match(r"[a-z]+:", link) or link.startswith(IMAGES + "/"):
            return match.group(0)                       # the web, or a figure the build wrote
        target = (source.parent / link).resolve()
        if not target.exists() or not target.is_relative_to(root):
            raise BuildError(f"{source.relative_to(root)}: the link {link} names no file of the "
                             f"repository")
        page = page_of(target, root)
        if page is None:
            page = copy_into_site(target, root, site, copied)
        return f'{attribute}="{page}{anchor}"'
    return LINK.sub(rewrite, page_html)


UNPUBLISHED = re.compile(r"exercises/ex\d\d_[^/]*\.py")   # the exercises with their reference
UNPUBLISHED_NOTE = ("The exercise files hold their reference solutions, so they stay in the "
                    "clone: <code>python exercises/make_handout.py handout/</code> writes the "
                    "student copy.")                       # solutions (TEACHING.md): the clone's


def copy_into_site(target, root, site, copied):
    """The site path of a copy of a repository file, or of a listing page for a folder. The
    reference solutions are never copied: a listing leaves them out and says where they are."""
    relative = target.relative_to(root).as_posix()
    if target.is_dir():
        listing = f"files/{relative}/index.html" if relative != "." else "files/index.html"
        if listing not in copied:
            copied.add(listing)
            files = [path for path in sorted(target.iterdir())
                     if path.is_file() and not path.name.startswith(".")]
            items = [path for path in files
                     if not UNPUBLISHED.fullmatch(path.relative_to(root).as_posix())]
            links = "".join(f'<li><a href="{html.escape(copy_into_site(path, root, site, copied))}"'
                            f'>{html.escape(path.name)}</a></li>' for path in items)
            note = f"<p>{UNPUBLISHED_NOTE}</p>" if len(items) < len(files) else ""
            depth = "../" * (listing.count("/"))
            body = f"<h1>{html.escape(relative)}/</h1><ul>{links}</ul>{note}"
            write(site / listing, page(relative, relink_up(body, depth)))
        return listing
    if UNPUBLISHED.fullmatch(relative):
        raise BuildError(f"the link to {relative} would publish its reference solutions")
    copy = f"files/{relative}" if target.suffix not in (".png", ".json") else relative
    if copy not in copied:
        copied.add(copy)
        (site / copy).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(target, site / copy)
    return copy


def relink_up(body, depth):
    """Links of a page written `depth` folders below the site's root."""
    return re.sub(r'href="(?![a-z]+:)', f'href="{depth}', body)


# ----------------------------------------------------------------------------------------------
# A notebook as a page
# ----------------------------------------------------------------------------------------------
LEXER, FORMATTER = PythonLexer(), HtmlFormatter()
PYGMENTS_STYLE = FORMATTER.get_style_defs(".highlight")


def code_html(source):
    return highlight(source, LEXER, FORMATTER)


def output_html(output, stem, where, images):
    """One cell output: printed text, or a figure written as images/<stem>-<n>.png."""
    if output.output_type == "error":
        raise BuildError(f"{where}: a cell ended in an error ({output.ename}); re-run it")
    if output.output_type == "stream":
        return f'<pre class="output">{html.escape(output.text)}</pre>'
    data = output.get("data", {})
    if "image/png" in data:
        name = f"{IMAGES}/{stem}-{len(images) + 1}.png"
        images.append((name, base64.b64decode(data["image/png"])))
        return f'<p><img src="{name}" alt="figure {len(images)} of {stem}"></p>'
    if "text/plain" in data:
        return f'<pre class="output">{html.escape(data["text/plain"])}</pre>'
    return ""


def notebook_body(path, root):
    """(title, body html, [(image name, png bytes)]) of a committed notebook."""
    where = path.relative_to(root).as_posix()
    notebook = nbformat.read(path, as_version=4)
    if not any(cell.get("outputs") for cell in notebook.cells):
        raise BuildError(f"{where}: the notebook has no outputs; execute it first (README)")
    parts, images, title = [], [], path.stem
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            if title == path.stem and cell.source.startswith("# "):
                title = cell.source.splitlines()[0][2:].strip()
            parts.append(markdown_html(cell.source, where))
            continue
        if cell.cell_type != "code":
            continue
        code = code_html(cell.source)
        if FOLD_TAG in cell.metadata.get("tags", []):
            first = html.escape(cell.source.strip().splitlines()[0][:70])
            code = f"<details><summary>code: <code>{first}</code> …</summary>{code}</details>"
        parts.append(code)
        parts.extend(output_html(output, path.stem, where, images) for output in cell.outputs)
    return title, "\n".join(parts), images


def navigation(stem, lessons, studies, titles):
    """Index, previous and next along the path (a lesson), or its lesson (a study)."""
    links = ['<a href="index.html">Course index</a>']
    if stem in lessons:
        at = lessons.index(stem)
        if at > 0:
            links.append(f'<a href="{lessons[at - 1]}.html">← {html.escape(titles[lessons[at - 1]])}</a>')
        if at + 1 < len(lessons):
            links.append(f'<a href="{lessons[at + 1]}.html">{html.escape(titles[lessons[at + 1]])} →</a>')
    else:
        lesson = next((name for name in lessons if name[:2] == stem[:2]), None)
        if lesson:
            links.append(f'<a href="{lesson}.html">↑ lesson {html.escape(titles[lesson])}</a>')
    return "<nav>" + "".join(links) + "</nav>"


# ----------------------------------------------------------------------------------------------
# Writing the site
# ----------------------------------------------------------------------------------------------
def page(title, body):
    """A whole HTML page: its style inline, nothing from the network."""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)}</title><style>{STYLE}{PYGMENTS_STYLE}</style></head>"
            f"<body>{body}</body></html>\n")


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def build(root, out):
    """Every page of the course into `out` (replaced only once all are written); the count."""
    root, out = Path(root).resolve(), Path(out).resolve()
    lessons, studies = course(root)
    out.parent.mkdir(parents=True, exist_ok=True)
    site = Path(tempfile.mkdtemp(prefix=".site-", dir=out.parent))
    try:
        copied, titles, bodies = set(), {}, {}
        for stem in lessons + studies:
            path = root / "notebooks" / f"{stem}.ipynb"
            if not path.exists():
                raise BuildError(f"notebooks/{stem}.ipynb: missing; make it from its script "
                                 f"(README)")
            titles[stem], bodies[stem], images = notebook_body(path, root)
            for name, data in images:
                (site / name).parent.mkdir(parents=True, exist_ok=True)
                (site / name).write_bytes(data)
        for stem in lessons + studies:
            source = root / "notebooks" / f"{stem}.ipynb"
            body = rewrite_links(bodies[stem], source, root, site, copied)
            write(site / f"{stem}.html",
                  page(titles[stem], navigation(stem, lessons, studies, titles) + body))
        for name, target in MARKDOWN_PAGES.items():
            source = root / name
            if not source.exists():
                raise BuildError(f"{name}: missing")
            body = rewrite_links(markdown_html(source.read_text(encoding="utf-8"), name),
                                 source, root, site, copied)
            nav = '<nav><a href="index.html">Course index</a></nav>' * (name != "README.md")
            title = source.read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()
            write(site / target, page(title, nav + body))
        count = len(lessons) + len(studies) + len(MARKDOWN_PAGES)
    except BaseException:
        shutil.rmtree(site, ignore_errors=True)
        raise
    if out.exists():
        shutil.rmtree(out)
    os.replace(site, out)
    return count


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_site",
                        help="the folder to write (default: _site/ in the repository)")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        count = build(args.root, args.out)
    except BuildError as error:
        print(f"build: {error}", file=sys.stderr)
        raise SystemExit(2)
    shown = os.path.relpath(args.out)                           # no machine path printed
    print(f"wrote {count} pages to {shown}/ in {time.perf_counter() - started:.1f} s "
          f"(open {shown}/index.html)")


if __name__ == "__main__":
    main()

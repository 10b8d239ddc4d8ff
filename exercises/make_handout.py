"""Write the student version of the exercises: python exercises/make_handout.py DIR

Each exercises/exNN_*.py is copied to DIR with every reference solution removed:

    ### BEGIN SOLUTION               ->   raise NotImplementedError("your code here")
    ...code...
    ### END SOLUTION

    ### BEGIN ANSWER answer_1_2      ->   answer_1_2 = None  # your answer here
    answer_1_2 = "..."
    ### END ANSWER

and written both as .py (percent format) and as a notebook without outputs (.ipynb), beside a
copy of check.py, which finds the repository from where the handout sits (any folder inside a
clone, e.g. handout/ at its root) or from $HEADS_REPOSITORY. Unbalanced, nested or mismatched
markers end the run with one line and exit code 2, and so does a folder holding files that
differ from a fresh handout (students' work), unless --force. The handout is never committed.
"""
import re
import subprocess
import sys
from pathlib import Path

import jupytext

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from harness import Parser  # noqa: E402 — argparse that answers bad input in one line, exit 2
KERNEL = {"name": "python3", "display_name": "Python 3", "language": "python"}
MARKER = re.compile(r"^(\s*)### (BEGIN|END) (SOLUTION|ANSWER)(?: (\w+))?\s*$")


class MarkerError(ValueError):
    """Unbalanced, nested or mismatched markers; the message names file and line."""


def strip(text, name="exercise"):
    """The student version of one exercise file's text."""
    out, open_block = [], None                        # open_block: (kind, indent, variable, line)
    for number, line in enumerate(text.splitlines(), 1):
        match = MARKER.match(line)
        if not match:
            if open_block is None:
                out.append(line)
            continue
        indent, edge, kind, variable = match.groups()
        if edge == "BEGIN":
            if open_block:
                raise MarkerError(f"{name}:{number}: BEGIN {kind} inside the {open_block[0]} "
                                  f"block opened on line {open_block[3]} (nested)")
            if kind == "ANSWER" and not variable:
                raise MarkerError(f"{name}:{number}: BEGIN ANSWER needs the answer's name")
            open_block = (kind, indent, variable, number)
            continue
        if not open_block:
            raise MarkerError(f"{name}:{number}: END {kind} without a BEGIN")
        if open_block[0] != kind:
            raise MarkerError(f"{name}:{number}: END {kind} closes the {open_block[0]} block "
                              f"opened on line {open_block[3]}")
        _, indent, variable, _ = open_block
        out.append(f'{indent}raise NotImplementedError("your code here")' if kind == "SOLUTION"
                   else f"{indent}{variable} = None  # your answer here")
        open_block = None
    if open_block:
        raise MarkerError(f"{name}:{open_block[3]}: BEGIN {open_block[0]} is never closed")
    return "\n".join(out) + "\n"


def handout_files():
    """{file name: its text} of a fresh handout: each exercise as .py and .ipynb, and check.py,
    which finds the repository from wherever the handout is put (or $HEADS_REPOSITORY)."""
    files = {}
    for source in sorted(HERE.glob("ex[0-9][0-9]_*.py")):
        student = strip(source.read_text(encoding="utf-8"), source.name)
        files[source.name] = student
        notebook = jupytext.reads(student, fmt="py:percent")
        notebook.metadata["kernelspec"] = KERNEL                          # opens in python3
        files[f"{source.stem}.ipynb"] = jupytext.writes(notebook, fmt="ipynb")
    files["check.py"] = stamped((HERE / "check.py").read_text(encoding="utf-8"))
    return files


def stamped(check_text):
    """check.py with the commit the handout is made from, so that a clone older than the
    handout is told to update (check.check_clone_version); unchanged outside git."""
    try:
        done = subprocess.run(["git", "log", "-1", "--format=%H %ct", "HEAD"], cwd=HERE,
                              capture_output=True, text=True, timeout=20, encoding="utf-8")
    except (OSError, subprocess.SubprocessError):
        return check_text
    if done.returncode != 0 or not done.stdout.strip():
        return check_text
    commit, time = done.stdout.split()
    line = "MADE_FROM = None "
    assert line in check_text, "check.py has no MADE_FROM line to stamp"
    return check_text.replace(line, f'MADE_FROM = ("{commit}", {time})', 1)


def cell_sources(text):
    return [cell["source"] for cell in jupytext.reads(text, fmt="ipynb").cells]


def edited(folder, files):
    """The files of `folder` that differ from a fresh handout's (a notebook by its cells'
    sources, so running it is not editing it): a student's work, or an older handout."""
    changed = []
    for name, text in files.items():
        if name == "check.py":                    # never a student's: always the fresh one
            continue
        path = Path(folder) / name
        if path.exists():
            same = (cell_sources(path.read_text(encoding="utf-8")) == cell_sources(text)
                    if name.endswith(".ipynb") else path.read_text(encoding="utf-8") == text)
            changed += [] if same else [name]
    return changed


def make_handout(folder, force=False):
    """Write a fresh handout into folder; the paths written. Files that differ from a fresh
    handout's are kept (FileExistsError naming them) unless force."""
    folder, files = Path(folder), handout_files()
    folder.mkdir(parents=True, exist_ok=True)
    changed = edited(folder, files)
    if changed and not force:
        raise FileExistsError(", ".join(changed))
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return [folder / name for name in files]


def main(argv=None):
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path, help="where the handout goes (created if needed)")
    parser.add_argument("--force", action="store_true",
                        help="overwrite files that differ from a fresh handout (students' work)")
    args = parser.parse_args(argv)
    if args.folder.exists() and not args.folder.is_dir():
        parser.error(f"argument folder: {args.folder} is a file, not a folder")
    if args.folder.resolve() == HERE:
        parser.error("argument folder: not the exercises folder itself (it would overwrite the "
                     "reference solutions)")
    try:
        written = make_handout(args.folder, force=args.force)
    except MarkerError as error:
        parser.error(f"markers: {error}")
    except FileExistsError as error:
        parser.error(f"argument folder: {args.folder} holds edited files ({error}); nothing was "
                     f"written: use another folder, or --force to overwrite them")
    print(f"wrote {len(written)} files to {args.folder}: run them in order, e.g. "
          f"python {args.folder / 'ex01_retrieval.py'}")


if __name__ == "__main__":
    sys.exit(main())

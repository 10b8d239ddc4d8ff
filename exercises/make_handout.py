"""Write the student version of the exercises: python exercises/make_handout.py DIR

Each exercises/exNN_*.py is copied to DIR with every reference solution removed:

    ### BEGIN SOLUTION               ->   raise NotImplementedError("your code here")
    ...code...
    ### END SOLUTION

    ### BEGIN ANSWER answer_1_2      ->   answer_1_2 = None  # your answer here, as a string
    answer_1_2 = "..."
    ### END ANSWER

and written both as .py (percent format) and as a notebook without outputs (.ipynb), beside a
copy of check.py that knows where this repository is. Unbalanced, nested or mismatched markers
end the run with one line and exit code 2. The handout is generated, never committed.
"""
import re
import sys
from pathlib import Path

import jupytext

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from helpers import Parser  # noqa: E402 — argparse that answers bad input in one line, exit 2
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
                   else f"{indent}{variable} = None  # your answer here, as a string")
        open_block = None
    if open_block:
        raise MarkerError(f"{name}:{open_block[3]}: BEGIN {open_block[0]} is never closed")
    return "\n".join(out) + "\n"


def make_handout(folder):
    """Write the stripped exercises (.py and .ipynb) and check.py into folder; their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for source in sorted(HERE.glob("ex[0-9][0-9]_*.py")):
        student = strip(source.read_text(), source.name)
        (folder / source.name).write_text(student)
        notebook = jupytext.reads(student, fmt="py:percent")
        jupytext.write(notebook, folder / f"{source.stem}.ipynb")
        written += [folder / source.name, folder / f"{source.stem}.ipynb"]
    check = (HERE / "check.py").read_text()
    pattern = re.compile(r"^REPOSITORY = .*$", re.MULTILINE)
    check = pattern.sub(f"REPOSITORY = Path({str(HERE.parent)!r})", check, count=1)
    (folder / "check.py").write_text(check)
    return written + [folder / "check.py"]


def main(argv=None):
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path, help="where the handout goes (created if needed)")
    args = parser.parse_args(argv)
    if args.folder.exists() and not args.folder.is_dir():
        parser.error(f"argument folder: {args.folder} is a file, not a folder")
    if args.folder.resolve() == HERE:
        parser.error("argument folder: not the exercises folder itself (it would overwrite the "
                     "reference solutions)")
    try:
        written = make_handout(args.folder)
    except MarkerError as error:
        parser.error(f"markers: {error}")
    print(f"wrote {len(written)} files to {args.folder}: run them in order, e.g. "
          f"python {args.folder / 'ex01_retrieval.py'}")


if __name__ == "__main__":
    sys.exit(main())

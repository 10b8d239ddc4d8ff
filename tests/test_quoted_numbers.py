"""Every decimal number a lesson's "What we saw" and its summary quote is its run's: it is
printed in the committed notebook (the default run's outputs) or stored at the precision quoted
in the lesson's committed JSON or in a results file the text names, or it is marked as the
paper's (inside "[paper: ...]", or in a summary-table column whose header begins with "paper")."""
import json
import math
import re
from pathlib import Path

import nbformat
import pytest

import conftest

ROOT = Path(__file__).resolve().parent.parent
LESSONS = conftest.LESSONS
# A decimal number as the texts write it: 0.81, −0.044, 1.6e-3, 2.8× (not 6.1 in "Section 6.1",
# not the 2.13 of a version 2.13.0, not a digit inside a name such as a1.5).
NUMBER = re.compile(r"(?<![\w.])[−-]?\d+\.\d+(?:e[−-]?\d+)?(?![\w.]*\d)")
# What precedes a number that names a place in the paper rather than a result.
REFERENCE = re.compile(r"(Section|§|Appendix|eq\.|Eq\.|Table|Fig\.|Figure|Lemma|Theorem|Corollary|"
                       r"Proposition|Definition|Remark|arXiv|Assumption)\s*\(?$")
# JSON lists longer than this are a run's raw record (histories, attention maps, samples), whose
# many values would match almost any number by chance; the quotable numbers are its summaries.
LONGEST_QUOTED_LIST = 12
RAW_KEYS = {"history", "examples", "state", "per_step", "attention"}


def quoting_cells(notebook):
    """The markdown cells that report results: "What we saw" and the summary beside the paper."""
    return [cell.source for cell in notebook.cells if cell.cell_type == "markdown"
            and ("**What we saw" in cell.source or "## Summary" in cell.source)]


def without_the_papers(text):
    """The text less "[paper: ...]" spans and the cells of table columns headed "paper..."."""
    text = re.sub(r"\[paper:[^\]]*\]", "", text)
    kept, paper_columns = [], set()
    for line in text.splitlines():
        if not line.startswith("|"):
            kept.append(line)
            paper_columns = set() if not line.strip() else paper_columns
            continue
        cells = line.strip().strip("|").split("|")
        if re.fullmatch(r"[\s|:-]+", line):                       # the header's rule
            continue
        if not paper_columns and any(cell.strip().lower().startswith("paper") for cell in cells):
            paper_columns = {i for i, cell in enumerate(cells)
                             if cell.strip().lower().startswith("paper")}
        kept.append("|".join(cell for i, cell in enumerate(cells) if i not in paper_columns))
    return "\n".join(kept)


def quoted_numbers(text):
    """The decimal numbers of a text that are results (not places in the paper), as written."""
    found = []
    for match in NUMBER.finditer(text):
        if REFERENCE.search(text[:match.start()][-20:]):
            continue
        found.append(match.group(0).replace("−", "-"))
    return found


def printed_text(notebook):
    shown = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            shown.append("".join(output.get("text", "")))
            shown.append("".join(output.get("data", {}).get("text/plain", "")))
    return "\n".join(shown).replace("−", "-")


def stored_numbers(value, key=""):
    """Every number of a JSON value but its raw records (long lists, RAW_KEYS)."""
    if key in RAW_KEYS:
        return
    if isinstance(value, dict):
        for name, item in value.items():
            yield from stored_numbers(item, name)
    elif isinstance(value, list):
        if len(value) <= LONGEST_QUOTED_LIST:
            for item in value:
                yield from stored_numbers(item)
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        yield float(value)


def written_as(value, quoted):
    """value written at the precision of quoted (its decimals, or its mantissa's), sign aside."""
    quoted = quoted.lstrip("-")
    if "e" in quoted:
        mantissa, exponent = quoted.split("e")
        digits = len(mantissa.split(".")[1])
        ours_mantissa, ours_exponent = f"{abs(value):.{digits}e}".split("e")
        return ours_mantissa == mantissa and int(ours_exponent) == int(exponent)
    return f"{abs(value):.{len(quoted.split('.')[1])}f}" == quoted


def untraced(quoting, printed, stored):
    """The numbers of the quoting text found neither printed nor stored."""
    missing = []
    for quoted in quoted_numbers(without_the_papers(quoting)):
        bare = quoted.lstrip("-")
        if re.search(rf"(?<![\d.]){re.escape(bare)}(?![\d])", printed):
            continue
        if any(written_as(value, quoted) for value in stored):
            continue
        missing.append(quoted)
    return missing


@pytest.mark.parametrize("script", LESSONS, ids=lambda path: path.stem)
def test_every_quoted_number_is_the_run_s_or_the_paper_s(script):
    notebook = nbformat.read(ROOT / "notebooks" / f"{script.stem}.ipynb", as_version=4)
    quoting = "\n\n".join(quoting_cells(notebook))
    assert quoting, f"{script.name} has no 'What we saw' or summary"
    named = {f"{script.stem}.json", *re.findall(r"results/([\w.-]+\.json)", quoting)}
    stored = [number for name in sorted(named) for number in stored_numbers(
        json.loads((ROOT / "results" / name).read_text(encoding="utf-8")))]
    missing = untraced(quoting, printed_text(notebook), stored)
    assert not missing, (f"{script.name} quotes numbers neither its printout nor "
                         f"results/{script.stem}.json holds (mark the paper's as [paper: ...]): "
                         f"{missing}")


def test_the_tracing_can_fail():
    """A number that is nowhere is caught; printed, stored, rounded and the paper's are not."""
    printed = "drop 13.2x at T = 8\nvar 3.701"
    stored = [0.8149, 1.63e-3, -0.0443]
    text = ("falls 13.2× (var 3.701), 0.81 of its attention, 1.6e-3, −0.044 [paper: 11.5×] and "
            "Section 6.1, but 0.47 and 2.5e-4 come from nowhere\n\n"
            "| claim | paper's number | ours |\n|---|---|---|\n| drop | 302.5× | 0.815 |")
    assert untraced(text, printed, stored) == ["0.47", "2.5e-4"]
    assert untraced("0.815 and 1.6e-3", printed, stored) == []
    assert untraced("| a | ours |\n|---|---|\n| x | 9.99 |", printed, stored) == ["9.99"]

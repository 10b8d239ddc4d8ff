"""Every text file the project reads or writes names its encoding.

Python's default text encoding is the system's: UTF-8 on Linux and macOS, often cp1252, GBK or
Shift-JIS on Windows, where a file with "×" or "−" in it then fails to read. So every call that
opens text (open, Path.open, read_text, write_text, a subprocess with text=True) must say
encoding=; this test reads every Python file of the repository and names each call that does not.
"""
import ast

import pytest

from conftest import ROOT

OPENERS = {"open", "read_text", "write_text", "NamedTemporaryFile", "TemporaryFile"}
SUBPROCESS = {"run", "check_output", "Popen"}
BINARY_OPENERS = {"os", "tarfile", "zipfile", "gzip", "Image"}   # their open() is not a text file
PYTHON_FILES = sorted(path for path in ROOT.rglob("*.py")
                      if not any(part.startswith(".") or part == "runs"
                                 for part in path.relative_to(ROOT).parts))


def call_name(call):
    """The called name: open, read_text, run, ... (None for a computed callee)."""
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def mode_of(call):
    """The mode argument of an open-like call, when it is written as a literal; else ""."""
    keywords = {keyword.arg: keyword.value for keyword in call.keywords}
    mode_first = (call_name(call) in ("NamedTemporaryFile", "TemporaryFile")
                  or isinstance(call.func, ast.Attribute) and call_name(call) == "open")
    positional = call.args[0:1] if mode_first else call.args[1:2]   # Path.open(m), open(f, m)
    for node in [keywords.get("mode"), *positional]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
    return ""


def opens_text_without_encoding(call):
    """True for a call that opens text in the system's default encoding."""
    keywords = {keyword.arg for keyword in call.keywords}
    if "encoding" in keywords:
        return False
    name = call_name(call)
    if name in SUBPROCESS:
        return bool({"text", "universal_newlines"} & keywords)
    if name not in OPENERS:
        return False
    owner = getattr(call.func, "value", None)                        # os in os.open(...)
    if getattr(owner, "id", None) in BINARY_OPENERS:
        return False
    if name in ("NamedTemporaryFile", "TemporaryFile"):   # binary unless a text mode is given
        return "b" not in mode_of(call) and mode_of(call) != ""
    return "b" not in mode_of(call)


def unnamed_encodings(path):
    """["file:line: call"] for each call in `path` that opens text without naming its encoding."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)[:80]}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and opens_text_without_encoding(node)]


def test_every_text_file_names_its_encoding():
    found = [line for path in PYTHON_FILES for line in unnamed_encodings(path)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("source, flagged", [
    ('open("a.txt")', True),
    ('open("a.txt", "w")', True),
    ('open("a.txt", "rb")', False),
    ('open("a.txt", encoding="utf-8")', False),
    ('Path("a").read_text()', True),
    ('Path("a").write_text("x", encoding="utf-8")', False),
    ('Path("a").open("w")', True),
    ('Path("a").open("wb")', False),
    ('subprocess.run(["git"], text=True)', True),
    ('subprocess.run(["git"], capture_output=True)', False),
    ('os.open("a", os.O_RDONLY)', False),
    ('tempfile.NamedTemporaryFile("w")', True),
    ('tempfile.NamedTemporaryFile()', False),
])
def test_the_check_tells_text_from_bytes(source, flagged):
    """The check itself: each way of opening text is caught, bytes and named encodings pass."""
    call = ast.parse(source).body[0].value
    assert opens_text_without_encoding(call) == flagged

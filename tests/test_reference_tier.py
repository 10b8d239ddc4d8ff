"""tests/reference_tier.py: each re-made reference run set beside the file it replaces, as the
committed results/reference_tier.json records it."""
import json

import pytest

import conftest
import harness
import reference_tier


def test_main_gives_the_committed_comparison(tmp_path):
    """Run again on the committed files, it finds the same changes, parts and sha256 as the
    committed record (a clone without the commit it reads is skipped)."""
    against = reference_tier.SETTINGS["against"].default
    if harness.git(conftest.ROOT, "cat-file", "-e", f"{against}^{{commit}}") is None:
        pytest.skip(f"this clone lacks commit {against}")
    written = reference_tier.main(["--out", str(tmp_path)])
    numbers = json.loads(written.read_text(encoding="utf-8"))
    committed = json.loads((conftest.ROOT / "results" / "reference_tier.json")
                           .read_text(encoding="utf-8"))
    assert numbers["files"] == committed["files"] and numbers["by_kind"] == committed["by_kind"]
    assert set(numbers["files"]) == set(reference_tier.REPLACED)
    assert written.name == "reference_tier.json"

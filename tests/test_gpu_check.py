"""tests/gpu_check.py, the one command a researcher runs on a GPU machine, checked on the CPU:
its quick part runs and writes its report, and without CUDA it refuses in one line."""
import json

import pytest
import torch

import gpu_check


def test_the_gpu_check_runs_its_quick_part_and_writes_its_report(tmp_path):
    assert gpu_check.main(["--device", "cpu", "--only", "01_retrieval_task",
                           "--out", str(tmp_path)]) == 0
    written = json.loads((tmp_path / "results" / "gpu_check.json").read_text(encoding="utf-8"))
    assert [q["file"] for q in written["quick"]] == ["01_retrieval_task.py"]
    assert written["quick"][0]["ok"] and "provenance" in written
    report = (tmp_path / "results" / "gpu_check.md").read_text(encoding="utf-8")
    assert "| 01_retrieval_task.py | --quick | ok |" in report


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_without_cuda_it_refuses_in_one_line(capsys):
    with pytest.raises(SystemExit) as stop:
        gpu_check.main([])
    assert stop.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_a_misspelled_name_is_refused_in_one_line(capsys):
    with pytest.raises(SystemExit) as stop:
        gpu_check.main(["--device", "cpu", "--only", "01_retreival_task"])
    said = capsys.readouterr().err
    assert stop.value.code == 2 and said.count("\n") == 1 and "01_retreival_task" in said


def test_the_drops_agree_by_the_stated_rule_and_the_exit_code_counts_every_run():
    cpu = {"8": 12.5, "32": 14.2, "128": 9.0}
    assert gpu_check.drops_agree({"8": 7.0, "32": 20.0, "128": 5.0}, cpu) == \
        {"8": True, "32": True, "128": True}
    assert gpu_check.drops_agree({"8": 6.0, "32": 0.9, "128": 9.0}, cpu) == \
        {"8": False, "32": False, "128": True}                  # > a factor 2; no drop at all
    quick = [{"ok": True}]
    default = {"ok": True, "agrees": {"8": True}}
    assert gpu_check.passed({"quick": quick, "default": default, "full_slice": {"ok": True}})
    assert not gpu_check.passed({"quick": quick, "default": {**default, "ok": False}})
    assert not gpu_check.passed({"quick": quick, "default": default, "full_slice": {"ok": False}})
    assert not gpu_check.passed({"quick": quick, "default": {"ok": True, "agrees": {"8": False}}})
    assert not gpu_check.passed({"quick": quick, "default": {"ok": True}})  # its JSON missing

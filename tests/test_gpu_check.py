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

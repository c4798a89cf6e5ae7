"""The training example examples/train_digits.py reaches 96% test accuracy within 30 epochs on
scikit-learn's digits, on cpu and sim:0 (it exits 1 otherwise)."""

import pathlib
import subprocess
import sys

import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "train_digits.py"


@pytest.mark.parametrize("device", ["cpu", "sim:0"])
def test_train_digits_reaches_its_accuracy(device):
    run = subprocess.run(
        [sys.executable, str(EXAMPLE), "--device", device, "--epochs", "30", "--no-progress"],
        capture_output=True, text=True, timeout=900,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "final test accuracy" in run.stdout
    lines = [l for l in run.stdout.splitlines() if l.startswith("epoch")]
    assert len(lines) == 30

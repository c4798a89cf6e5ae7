"""examples/train_digits.py --parallel data|tensor on global tensors over every rank (pytest runs
this folder under mpiexec -n 2 and -n 4, and as one process): 50 Adam steps whose losses equal
the one-process training's within 1e-4 relative in float32 and 1e-6 in float64 (the example exits
1 otherwise)."""

import importlib.util
import pathlib

import pytest

import oneflow_lite as ofl

EXAMPLE = pathlib.Path(__file__).resolve().parents[3] / "examples" / "train_digits.py"


def load_example():
    spec = importlib.util.spec_from_file_location("train_digits", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("parallel,dtype", [("data", "float32"), ("tensor", "float64"),
                                            ("data", "float64"), ("tensor", "float32")])
def test_parallel_training_gives_the_one_process_losses(parallel, dtype, capsys):
    ofl.init_distributed()
    rc = load_example().main(["--parallel", parallel, "--dtype", dtype, "--steps", "50"])
    assert rc == 0, capsys.readouterr().out
    if ofl.rank() == 0:
        assert "largest relative loss difference" in capsys.readouterr().out

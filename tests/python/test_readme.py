"""The README's Python quick start runs as written (in a scratch directory: it writes a trace)."""

import os
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_quick_start_runs(tmp_path, capsys):
    text = README.read_text()
    section = text[text.index("\n## Python\n"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        exec(compile(code, "README.md (Python quick start)", "exec"), {})
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    assert "tensor([[ 6.],\n        [12.]], device='sim:0')" in out
    assert (tmp_path / "trace.json").exists()

"""One training step of the MLP 64-128-10 (ReLU, cross-entropy, Adam) from Python, oneflow_lite
against PyTorch, each in its own interpreter (oneflow_lite's venv and one that imports torch).

    python tools/bench/train_step_python.py --ofl-python build-venv/bin/python \
        --torch-python /usr/bin/python3 [--batch 32] [--runs 5]

Each run is a fresh process of each framework, alternating, that builds the model with the same
layer sizes, takes 20 warm-up steps, then times `steps` steps with time.perf_counter around the
loop and one final sync (ofl.sync(); PyTorch's CPU ops are synchronous), on CPU, float32, with the
thread count each framework picks. Prints each run's microseconds per step, then the median and
worst of each and the ratio of the medians.
"""

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time
fw, batch, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if fw == "ofl":
    import oneflow_lite as lib
    sync = lib.sync
else:
    import torch as lib
    sync = lambda: None
nn, F = lib.nn, lib.nn.functional
lib.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
opt = lib.optim.Adam(model.parameters(), lr=1e-3)
x = lib.randn(batch, 64)
y = lib.randint(0, 10, (batch,))
def step():
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
for _ in range(20):
    step()
sync()
t0 = time.perf_counter()
for _ in range(steps):
    step()
sync()
print(json.dumps({"us_per_step": (time.perf_counter() - t0) / steps * 1e6}))
"""


def run(python, fw, batch, steps):
    out = subprocess.run([python, "-c", CHILD, fw, str(batch), str(steps)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["us_per_step"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ofl-python", required=True)
    ap.add_argument("--torch-python", required=True)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=0, help="0: 300 at batch <= 256, else 20")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    steps = a.steps or (300 if a.batch <= 256 else 20)
    times = {"ofl": [], "torch": []}
    for _ in range(a.runs):
        times["ofl"].append(run(a.ofl_python, "ofl", a.batch, steps))
        times["torch"].append(run(a.torch_python, "torch", a.batch, steps))
    for fw, ts in times.items():
        print(f"{fw:5s} batch {a.batch}: " + " ".join(f"{t:.1f}" for t in ts) +
              f" us/step; median {statistics.median(ts):.1f}, worst {max(ts):.1f}")
    ratio = statistics.median(times["torch"]) / statistics.median(times["ofl"])
    print(f"oneflow_lite is {ratio:.2f}x PyTorch's speed (median over median)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

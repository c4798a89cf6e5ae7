"""Trains an MLP 64-128-10 (ReLU, dropout 0.2) with Adam on scikit-learn's bundled 8x8 digits: a
fixed 80/20 split, features scaled to [0, 1], mini-batches of 64 shuffled with ofl.randperm after
ofl.manual_seed. Prints a progress bar per epoch (tqdm) and the loss and test accuracy per epoch;
exits 1 unless the final test accuracy reaches --min-accuracy (0.96).

    python examples/train_digits.py [--device sim:0] [--epochs 30]

With --parallel data|tensor, under mpiexec, it trains on global tensors over every rank instead
(data: the parameters broadcast and each batch split over the ranks; tensor: the first Linear
split on its outputs, the second on its inputs), without dropout, for --steps mini-batches,
beside the same training in one process, prints both losses every 10 steps, and exits 1 unless
every step's loss agrees within 1e-6 relative (float64, --dtype) or 1e-4 (float32):

    mpiexec -n 4 python examples/train_digits.py --parallel data --steps 50

Needs scikit-learn and tqdm (examples/requirements.txt; the test environment has both)."""

import argparse
import sys

import numpy as np
from sklearn.datasets import load_digits
from tqdm import tqdm

import oneflow_lite as ofl
from oneflow_lite import nn


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-accuracy", type=float, default=0.96)
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--parallel", choices=["data", "tensor"], default=None)
    parser.add_argument("--steps", type=int, default=50, help="mini-batches with --parallel")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    args = parser.parse_args(argv)
    if args.parallel is not None:
        return parallel_main(args)

    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(1234).permutation(len(x))  # the fixed 80/20 split
    cut = int(0.8 * len(x))
    train, test = order[:cut], order[cut:]
    device = args.device
    x_train, y_train = ofl.tensor(x[train], device=device), ofl.tensor(y[train], device=device)
    x_test, y_test = ofl.tensor(x[test], device=device), ofl.tensor(y[test], device=device)

    ofl.manual_seed(args.seed)
    model = nn.Sequential(
        nn.Linear(64, 128), nn.ReLU(), nn.Dropout(0.2), nn.Linear(128, 10)
    ).to(device)
    opt = ofl.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    n = len(train)
    accuracy = 0.0
    for epoch in range(1, args.epochs + 1):
        model.train()
        perm = ofl.randperm(n, device=device)
        total, batches = 0.0, range(0, n, args.batch_size)
        losses = []
        for start in tqdm(batches, desc=f"epoch {epoch:2d}", leave=False, disable=args.no_progress,
                          file=sys.stdout):
            idx = perm[start:start + args.batch_size]
            xb, yb = ofl.index_select(x_train, 0, idx), ofl.index_select(y_train, 0, idx)
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(loss)
        total = float(ofl.stack(losses).mean())
        model.eval()
        with ofl.no_grad():
            pred = model(x_test).argmax(1)
            accuracy = float((pred == y_test).sum()) / len(test)
        print(f"epoch {epoch:2d}  loss {total:.4f}  test accuracy {100 * accuracy:.2f}%", flush=True)
    print(f"final test accuracy {100 * accuracy:.2f}% on {device}")
    return 0 if accuracy >= args.min_accuracy else 1


def parallel_main(args):
    """--parallel: the same mini-batch training on global tensors and in one process."""
    ofl.init_distributed()
    rank, world = ofl.rank(), ofl.world_size()
    placement = ofl.placement("cpu", ranks=list(range(world)))
    dtype = ofl.float64 if args.dtype == "float64" else ofl.float32
    digits = load_digits()
    x = ofl.tensor(digits.data / 16.0).to(dtype)
    y = ofl.tensor(digits.target.astype(np.int64))

    def make():
        ofl.manual_seed(args.seed)
        return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)).to(dtype)

    def batches():
        ofl.manual_seed(args.seed + 1)
        perm = ofl.randperm(len(digits.data))
        for step in range(args.steps):
            start = (step * args.batch_size) % (len(digits.data) - args.batch_size)
            idx = perm[start:start + args.batch_size]
            yield ofl.index_select(x, 0, idx), ofl.index_select(y, 0, idx)

    def train(model, layout):
        opt = ofl.optim.Adam(model.parameters(), lr=args.lr)
        losses = []
        for xb, yb in batches():
            if layout is not None:  # every rank holds the same batch: broadcast, then lay out
                xb = xb.to_global(placement=placement, sbp=ofl.sbp.broadcast).to_global(
                    placement=placement, sbp=layout)
                yb = yb.to_global(placement=placement, sbp=ofl.sbp.broadcast).to_global(
                    placement=placement, sbp=layout)
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(float(loss.numpy()))
        return losses

    one = train(make(), None)
    model = make()
    if args.parallel == "data":
        model.to_global(placement, ofl.sbp.broadcast)
        layout = ofl.sbp.split(0)
    else:
        model.to_global(placement, lambda name, t: ofl.sbp.split(0) if name.startswith("0.")
                        else ofl.sbp.split(1) if name == "2.weight" else ofl.sbp.broadcast)
        layout = ofl.sbp.broadcast
    many = train(model, layout)
    worst = max(abs(a - b) / abs(a) for a, b in zip(one, many))
    limit = 1e-6 if dtype == ofl.float64 else 1e-4
    if rank == 0:
        for step in range(0, args.steps, 10):
            print(f"step {step:2d}  one process {one[step]:.8f}  {args.parallel} parallel on "
                  f"{world} ranks {many[step]:.8f}", flush=True)
        print(f"{args.parallel} parallel, {args.dtype}, {world} ranks: largest relative loss "
              f"difference {worst:.3g} (limit {limit:.0e})", flush=True)
    return 0 if worst <= limit and one[-1] < one[0] else 1


if __name__ == "__main__":
    sys.exit(main())

"""Trains an MLP 64-128-10 (ReLU, dropout 0.2) with Adam on scikit-learn's bundled 8x8 digits: a
fixed 80/20 split, features scaled to [0, 1], mini-batches of 64 shuffled with ofl.randperm after
ofl.manual_seed. Prints a progress bar per epoch (tqdm) and the loss and test accuracy per epoch;
exits 1 unless the final test accuracy reaches --min-accuracy (0.96).

    python examples/train_digits.py [--device sim:0] [--epochs 30]

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
    args = parser.parse_args(argv)

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


if __name__ == "__main__":
    sys.exit(main())

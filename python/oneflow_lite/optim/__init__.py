"""oneflow_lite.optim: SGD, Adam and AdamW with torch.optim's names, options and update formulas
(docs/nn_optim.md)."""

from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD

"""optim.Adam and optim.AdamW with torch.optim's updates: bias-corrected first and second moments,
eps added to the corrected root (sqrt(v) / sqrt(1 - beta2^t) + eps), Adam's weight decay added to
the gradient, AdamW's decoupled (p *= 1 - lr * weight_decay first); amsgrad keeps the running
maximum of v. A step updates a parameter group by one multi-tensor instruction per device and
dtype (_C._adam_step), and op by op where that kernel cannot take a parameter or foreach=False."""

import math

from .. import _C
from ..autograd import no_grad
from .optimizer import Optimizer


class Adam(Optimizer):
    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False):
        if lr < 0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if weight_decay < 0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, foreach=foreach,
                                      maximize=maximize))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with no_grad():
            for g in self.param_groups:
                self._step_group(g)
        return loss

    def _step_group(self, g):
        lr, (b1, b2), eps = g["lr"], g["betas"], g["eps"]
        wd, amsgrad, maximize = g["weight_decay"], g["amsgrad"], g["maximize"]
        params, grads, states = [], [], []
        for p in g["params"]:
            if p.grad is None:
                continue
            state = self._state_of(p)
            if not state:
                state["step"] = 0
                state["exp_avg"] = _C.zeros_like(p)
                state["exp_avg_sq"] = _C.zeros_like(p)
                if amsgrad:
                    state["max_exp_avg_sq"] = _C.zeros_like(p)
            state["step"] += 1
            params.append(p)
            grads.append(p.grad)
            states.append(state)
        if not params:
            return
        if g.get("foreach") is False:
            left = range(len(params))
        else:
            left = _C._adam_step(params, grads, [s["exp_avg"] for s in states],
                                 [s["exp_avg_sq"] for s in states],
                                 [s["max_exp_avg_sq"] for s in states] if amsgrad else [],
                                 [s["step"] for s in states], float(lr), float(b1), float(b2),
                                 float(eps), float(wd), bool(amsgrad), self._decoupled,
                                 bool(maximize))
        for i in left:
            p, state = params[i], states[i]
            grad = -grads[i] if maximize else grads[i]
            t = state["step"]
            if wd != 0:
                if self._decoupled:
                    p.mul_(1 - lr * wd)
                else:
                    grad = grad + p * wd
            m, v = state["exp_avg"], state["exp_avg_sq"]
            m.mul_(b1).add_(grad * (1 - b1))
            v.mul_(b2).add_(grad * grad * (1 - b2))
            bias1 = 1 - b1**t
            bias2_sqrt = math.sqrt(1 - b2**t)
            if amsgrad:
                vmax = state["max_exp_avg_sq"]
                vmax.copy_(_C.maximum(vmax, v))
                v = vmax
            denom = v.sqrt() / bias2_sqrt + eps
            p.sub_(m / denom * (lr / bias1))


class AdamW(Adam):
    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, foreach=None, maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize)

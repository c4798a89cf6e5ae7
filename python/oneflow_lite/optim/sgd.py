"""optim.SGD with torch.optim.SGD's update (momentum, dampening, nesterov, weight decay,
maximize), in place on each parameter under no-grad: one multi-tensor instruction per device and
dtype (_C._sgd_step), and op by op where that kernel cannot take a parameter or foreach=False."""

from .. import _C
from ..autograd import no_grad
from .optimizer import Optimizer


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, foreach=None, maximize=False):
        if lr < 0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      foreach=foreach, maximize=maximize))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with no_grad():
            for g in self.param_groups:
                self._step_group(g)
        return loss

    def _step_group(self, g):
        lr, momentum, dampening = g["lr"], g["momentum"], g["dampening"]
        wd, nesterov, maximize = g["weight_decay"], g["nesterov"], g["maximize"]
        params, grads, bufs, firsts = [], [], [], []
        for p in g["params"]:
            if p.grad is None:
                continue
            params.append(p)
            grads.append(p.grad)
            if momentum != 0:
                state = self._state_of(p)
                buf = state.get("momentum_buffer")
                firsts.append(buf is None)
                if buf is None:
                    buf = _C.empty_like(p)
                    state["momentum_buffer"] = buf
                bufs.append(buf)
        if not params:
            return
        if g.get("foreach") is False:
            left = range(len(params))
        else:
            left = _C._sgd_step(params, grads, bufs, firsts, float(lr), float(momentum),
                                float(dampening), float(wd), bool(nesterov), bool(maximize))
        for i in left:
            p = params[i]
            d = -grads[i] if maximize else grads[i]
            if wd != 0:
                d = d + p * wd
            if momentum != 0:
                state = self._state_of(p)
                if firsts[i]:
                    buf = d.clone()
                    state["momentum_buffer"] = buf
                else:
                    buf = bufs[i]
                    buf.mul_(momentum).add_(d * (1 - dampening))
                d = d + buf * momentum if nesterov else buf
            p.sub_(d * lr)

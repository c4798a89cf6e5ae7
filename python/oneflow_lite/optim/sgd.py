"""optim.SGD with torch.optim.SGD's update (momentum, dampening, nesterov, weight decay,
maximize), in place on each parameter under no-grad."""

from ..autograd import no_grad
from .optimizer import Optimizer


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False):
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
                                      maximize=maximize))

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with no_grad():
            for g in self.param_groups:
                lr, momentum, dampening = g["lr"], g["momentum"], g["dampening"]
                wd, nesterov, maximize = g["weight_decay"], g["nesterov"], g["maximize"]
                for p in g["params"]:
                    if p.grad is None:
                        continue
                    d = -p.grad if maximize else p.grad
                    if wd != 0:
                        d = d + p * wd
                    if momentum != 0:
                        state = self._state_of(p)
                        buf = state.get("momentum_buffer")
                        if buf is None:
                            buf = d.clone()
                            state["momentum_buffer"] = buf
                        else:
                            buf.mul_(momentum).add_(d * (1 - dampening))
                        d = d + buf * momentum if nesterov else buf
                    p.sub_(d * lr)
        return loss

"""oneflow_lite.autograd: grad() and the grad-mode switch."""

from . import _C

grad = _C.autograd.grad
is_grad_enabled = _C.is_grad_enabled


class no_grad:
    """Turns recording off inside ``with ofl.no_grad():`` (or a function it decorates), on the
    calling thread, as ``torch.no_grad``."""

    def __init__(self):
        self._scopes = []

    def __enter__(self):
        scope = _C._NoGradScope()
        scope.enter()
        self._scopes.append(scope)
        return self

    def __exit__(self, *exc):
        self._scopes.pop().exit()
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with no_grad():
                return fn(*args, **kwargs)

        return wrapper

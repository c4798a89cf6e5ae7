"""oneflow_lite.autograd: grad() and the grad-mode switches (no_grad, enable_grad,
set_grad_enabled, inference_mode), each a context manager and a decorator acting on the calling
thread, as PyTorch's."""

import functools

from . import _C

grad = _C.autograd.grad
is_grad_enabled = _C.is_grad_enabled


class _GradMode:
    """Grad mode `target` (True, False, or None: left as it is) inside ``with`` or each call of a
    function it decorates; the mode found is restored after. Nests; one object may be entered
    again while inside it."""

    def __init__(self, target):
        self._target = target
        self._saved = []

    def __enter__(self):
        self._saved.append(_C.is_grad_enabled())
        if self._target is not None:
            _C._set_grad_enabled(self._target)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._saved.pop())
        return False

    def __call__(self, fn):
        target = self._target
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with _GradMode(target):
                return fn(*args, **kwargs)

        return wrapper


def _bare_decorator(cls, fn):
    """`@cls` without parentheses: fn decorated by cls()."""
    return cls()(fn)


class _FixedMode(_GradMode):
    """A switch to the mode `_mode`, used as ``with cls():``, ``@cls()`` or bare ``@cls``."""

    _mode = False

    def __new__(cls, orig_func=None):
        if orig_func is not None:
            return _bare_decorator(cls, orig_func)
        return super().__new__(cls)

    def __init__(self, orig_func=None):
        super().__init__(self._mode)


class no_grad(_FixedMode):
    """Recording off inside ``with ofl.no_grad():`` or a function it decorates (``@ofl.no_grad()``
    or ``@ofl.no_grad``), as ``torch.no_grad``."""

    _mode = False


class enable_grad(_FixedMode):
    """Recording on, inside a no_grad block too, as ``torch.enable_grad``."""

    _mode = True


class set_grad_enabled(_GradMode):
    """``ofl.set_grad_enabled(False)`` sets the mode at once; used with ``with`` (or as a
    decorator) it holds inside only and the mode found is restored, as ``torch.set_grad_enabled``."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(
                f"set_grad_enabled(): argument 'mode' must be a bool, not {type(mode).__name__}"
            )
        super().__init__(mode)
        self._before = _C.is_grad_enabled()
        _C._set_grad_enabled(mode)

    def __enter__(self):
        self._saved.append(self._before)  # the mode before the call set it

    def __call__(self, fn):
        _C._set_grad_enabled(self._before)  # a decorator sets the mode around the calls only
        return super().__call__(fn)


class inference_mode(_GradMode):
    """``torch.inference_mode``: grad mode off for mode=True (no_grad), nothing for False;
    oneflow_lite has no separate inference tensors."""

    def __new__(cls, mode=True):
        if callable(mode):
            return _bare_decorator(cls, mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        if not isinstance(mode, bool):
            raise TypeError(
                f"inference_mode(): argument 'mode' must be a bool, not {type(mode).__name__}"
            )
        super().__init__(False if mode else None)

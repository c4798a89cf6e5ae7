"""nn.Parameter: a leaf tensor that a Module registers as one of its parameters (as
torch.nn.Parameter). Ops on a Parameter give plain tensors."""

from .. import _C


class Parameter(_C.Tensor):
    """Parameter(data=None, requires_grad=True): data's values as a new leaf (sharing data's
    storage, as torch's) that requires grad; an empty float32 tensor when data is None."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        if not isinstance(data, _C.Tensor):
            raise TypeError(
                f"Parameter(): argument 'data' must be a Tensor, not {type(data).__name__}"
            )
        p = _C._make_subclass(cls, data.detach())
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + _C.Tensor.__repr__(self)

    def __reduce__(self):
        t = _C.Tensor.__reduce__(self.detach())
        return (_rebuild_parameter, (t, self.requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        p = Parameter(self.detach().clone(), self.requires_grad)
        memo[id(self)] = p
        return p


def _rebuild_parameter(reduced, requires_grad):
    fn, args = reduced
    return Parameter(fn(*args), requires_grad)

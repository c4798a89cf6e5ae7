"""nn.Module: parameters, buffers and submodules registered by attribute assignment, in
PyTorch's order and with PyTorch's state-dict keys ("0.weight", "0.bias", "2.weight" in a
Sequential)."""

import collections
import itertools

import numpy as np

from .. import _C
from ..autograd import no_grad
from .parameter import Parameter

_IncompatibleKeys = collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class Module:
    """The base of every layer: subclasses set parameters and submodules as attributes in
    __init__ (after calling super().__init__()) and define forward; calling the module calls
    forward."""

    def __init__(self):
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", collections.OrderedDict())
        object.__setattr__(self, "_buffers", collections.OrderedDict())
        object.__setattr__(self, "_modules", collections.OrderedDict())

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # Registration -------------------------------------------------------------------------------

    def _check_ready(self):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign before Module.__init__() call")

    def register_parameter(self, name, param):
        self._check_ready()
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                "(nn.Parameter or None required)"
            )
        self._drop(name)
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        self._check_ready()
        if tensor is not None and not isinstance(tensor, _C.Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}'")
        self._drop(name)
        self._buffers[name] = tensor
        if not persistent:
            self.__dict__.setdefault("_non_persistent", set()).add(name)

    def add_module(self, name, module):
        self._check_ready()
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._drop(name)
        self._modules[name] = module

    register_module = add_module

    def _drop(self, name):
        for d in (self._parameters, self._buffers, self._modules):
            d.pop(name, None)
        self.__dict__.pop(name, None)

    def __setattr__(self, name, value):
        if isinstance(value, Parameter):
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            self.add_module(name, value)
        elif "_parameters" in self.__dict__ and name in self._parameters:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(nn.Parameter or None expected)"
                )
            self._parameters[name] = None
        elif "_modules" in self.__dict__ and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}'")
            self._modules[name] = None
        elif "_buffers" in self.__dict__ and name in self._buffers:
            if value is not None and not isinstance(value, _C.Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}'")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                return
        object.__delattr__(self, name)

    # Traversal ----------------------------------------------------------------------------------

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if remove_duplicate and id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, get, prefix, recurse):
        seen = set()
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mod_prefix, m in modules:
            for k, v in get(m):
                if v is None or id(v) in seen:
                    continue
                seen.add(id(v))
                yield mod_prefix + ("." if mod_prefix else "") + k, v

    def named_parameters(self, prefix="", recurse=True):
        """(name, parameter) pairs, each parameter once, in registration order depth first."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # Modes, gradients, devices and dtypes -------------------------------------------------------

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                with no_grad():
                    p.grad.zero_()

    def _apply(self, convert):
        """Replaces each parameter and buffer with convert(tensor) where that differs (a new
        Parameter keeping requires_grad; its gradient converted too)."""
        for m in self.modules():
            for name, p in list(m._parameters.items()):
                if p is None:
                    continue
                with no_grad():
                    data = convert(p)
                if data is p:
                    continue
                q = Parameter(data, p.requires_grad)
                if p.grad is not None:
                    with no_grad():
                        q.grad = convert(p.grad)
                m._parameters[name] = q
            for name, b in list(m._buffers.items()):
                if b is not None:
                    m._buffers[name] = convert(b)
        return self

    def to(self, *args, **kwargs):
        """to(device), to(dtype), to(device, dtype), with keywords too: float parameters and
        buffers take the dtype; all take the device. Returns self (its parameters are new
        Parameter objects where anything changed: make optimizers after moving a model)."""
        device = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        if kwargs:
            raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
        for a in args:
            if isinstance(a, _C.dtype):
                dtype = a
            elif isinstance(a, (str, _C.device)):
                device = a
            else:
                raise TypeError(f"to() takes a device, a dtype or both, not {type(a).__name__}")
        if dtype is not None and dtype not in (_C.float16, _C.bfloat16, _C.float32, _C.float64):
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired dtype={dtype}")

        def convert(t):
            out = t
            if dtype is not None and out.dtype in (_C.float16, _C.bfloat16, _C.float32, _C.float64):
                out = out.to(dtype)
            if device is not None:
                out = out.to(device)
            return out

        return self._apply(convert)

    def float(self):
        return self.to(_C.float32)

    def double(self):
        return self.to(_C.float64)

    def half(self):
        return self.to(_C.float16)

    def cpu(self):
        return self.to("cpu")

    def to_global(self, placement, sbp):
        """Every parameter and buffer made global over `placement` with `sbp`, or with what
        `sbp(name, tensor)` returns for each by its dotted name (tensor parallel: one weight split
        on its rows, the next on its columns). The values are the first rank of the placement's
        (broadcast from it, so ranks that initialised differently agree). Parameters stay
        Parameters (new objects: make optimizers after this). Every rank calls it alike."""
        pick = sbp if callable(sbp) else (lambda name, t: sbp)
        first = _C.placement(placement.type, ranks=[placement.ranks[0]])

        def convert(name, t):
            g = t if t.is_global else t.to_global(placement=first, sbp=_C.Sbp._broadcast())
            return g.to_global(placement=placement, sbp=pick(name, t))

        for prefix, m in self.named_modules():
            dotted = prefix + "." if prefix else ""
            for name, p in list(m._parameters.items()):
                if p is None:
                    continue
                with no_grad():
                    q = Parameter(convert(dotted + name, p), p.requires_grad)
                m._parameters[name] = q
            for name, b in list(m._buffers.items()):
                if b is not None:
                    with no_grad():
                        m._buffers[name] = convert(dotted + name, b)
        return self

    # State ---------------------------------------------------------------------------------------

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of every parameter and persistent buffer by its dotted name, detached
        (keep_vars=False) as torch's."""
        if destination is None:
            destination = collections.OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        skip = self.__dict__.get("_non_persistent", set())
        for name, b in self._buffers.items():
            if b is not None and name not in skip:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination, prefix + name + ".", keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict=True):
        """Copies each value (a tensor, a numpy array or nested lists) into the parameter or
        buffer of its name, in place (converted to its dtype and device). strict: every key must
        match. Returns (missing_keys, unexpected_keys)."""
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        if strict and (missing or unexpected):
            if unexpected:
                errors.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ".")
            if missing:
                errors.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ".")
        pairs = []
        for k, target in own.items():
            if k not in state_dict:
                continue
            value = state_dict[k]
            if not isinstance(value, _C.Tensor):
                value = _tensor_of(np.asarray(value))
            if tuple(value.shape) != tuple(target.shape):
                errors.append(
                    f"size mismatch for {k}: copying a param with shape {tuple(value.shape)} from "
                    f"checkpoint, the shape in current model is {tuple(target.shape)}."
                )
                continue
            pairs.append((target, value))
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors)
            )
        with no_grad():
            for target, value in pairs:
                target.copy_(value)
        return _IncompatibleKeys(missing, unexpected)

    # Printing ------------------------------------------------------------------------------------

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, m in self._modules.items():
            child = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {child}")
        main = type(self).__name__ + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                return main + lines[0] + ")"
            return main + "\n  " + "\n  ".join(lines) + "\n)"
        return main + ")"

    def __dir__(self):
        return sorted(
            set(itertools.chain(object.__dir__(self), self._parameters, self._buffers, self._modules))
        )


def _tensor_of(value):
    from .._creation import tensor

    return tensor(value)

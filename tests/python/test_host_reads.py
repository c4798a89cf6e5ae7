"""Reading values back to Python: item() and tolist() (made straight from the elements, no numpy
array in between) give what numpy's item() and tolist() give for every dtype, shape and view; and
a read of a tensor whose allocation failed raises that tensor's OutOfMemory, not MemoryError from a
host buffer allocated before its state was known."""

import numpy as np
import pytest

import oneflow_lite as ofl

from test_creation import NUMPY_DTYPES  # one table of the dtypes numpy and oneflow_lite share


def _values(np_dtype, shape, rng):
    """An array (0-dim included, never a numpy scalar) of values spanning the dtype."""
    if np_dtype is np.bool_:
        return np.asarray(rng.integers(0, 2, size=shape).astype(np.bool_))
    if np.issubdtype(np_dtype, np.integer):
        info = np.iinfo(np_dtype)
        return np.asarray(rng.integers(info.min, info.max, size=shape, dtype=np_dtype, endpoint=True))
    return np.asarray(rng.standard_normal(size=shape) * 1000).astype(np_dtype)


def _types(v):
    return [_types(i) for i in v] if isinstance(v, list) else type(v)


@pytest.mark.parametrize("np_dtype,dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("shape", [(), (1,), (5,), (2, 3), (2, 0, 3), (3, 40, 2), (1, 1, 1, 1)])
def test_tolist_and_item_match_numpy(device, rng, np_dtype, dtype, shape):
    a = _values(np_dtype, shape, rng)
    t = ofl.tensor(a, device=device)
    got = t.tolist()
    want = a.tolist()
    assert got == want
    assert _types(got) == _types(want)  # bool stays bool, ints are ints, floats are floats
    if a.size == 1:
        v = t.item()
        assert v == a.item() and type(v) is type(a.item())


def test_extreme_values_are_exact(device):
    for dtype, v in ((ofl.int64, -(2**63)), (ofl.int64, 2**63 - 1), (ofl.uint8, 255),
                     (ofl.int8, -128), (ofl.float64, 1e308), (ofl.float32, float("inf"))):
        t = ofl.tensor([v], dtype=dtype, device=device)
        assert t.item() == v and t.tolist() == [v]
    nan = ofl.tensor(float("nan"), device=device).item()
    assert nan != nan


def test_16_bit_floats_widen_exactly(device):
    t = ofl.tensor([1.0, -2.5, 3.140625, 65504.0], dtype=ofl.float16, device=device)
    assert t.tolist() == [1.0, -2.5, 3.140625, 65504.0]
    b = ofl.tensor([1.0, -2.5, 3.140625, 2.0**100], dtype=ofl.bfloat16, device=device)
    assert b.tolist() == [1.0, -2.5, 3.140625, 2.0**100]
    assert b[2].item() == 3.140625 and type(b[2].item()) is float


def test_views_and_computed_tensors(device):
    x = ofl.tensor(np.arange(12, dtype=np.float32).reshape(4, 1, 3), device=device)
    e = x.expand(4, 2, 3)  # a view with a stride-0 dim
    assert e.tolist() == np.broadcast_to(np.arange(12, dtype=np.float32).reshape(4, 1, 3),
                                         (4, 2, 3)).tolist()
    p = x.permute(2, 0, 1)  # not contiguous
    assert p.tolist() == np.arange(12, dtype=np.float32).reshape(4, 1, 3).transpose(2, 0, 1).tolist()
    s = (x + 1).sum()
    assert s.item() == float(np.arange(1, 13).sum()) and s.tolist() == s.item()
    assert x[3].tolist() == [[9.0, 10.0, 11.0]]
    # Conversions go through item().
    assert float(s) == 78.0 and int(s) == 78 and bool(s) is True


def test_item_of_more_than_one_element(device):
    t = ofl.zeros(3, device=device)
    with pytest.raises(ofl.InvalidArgument, match="item: a tensor with 3 elements cannot be "
                                                  "converted to a Python number"):
        t.item()
    with pytest.raises(ofl.InvalidArgument, match="with 0 elements"):
        ofl.zeros(0, device=device).item()
    assert ofl.ones(1, device=device).item() == 1.0  # still working


def test_reads_of_a_tensor_whose_allocation_failed_raise_its_out_of_memory(device, capfd):
    if device.startswith("cuda"):
        pytest.skip("the memory limit below is the cpu and sim pools'")
    ofl.sync()
    ofl.set_memory_limit(device, 64 << 20)
    try:
        # 2^38 floats (1 TiB): neither its device memory nor a host copy of it can be had.
        t = ofl.zeros(2**38, device=device)
        reads = {
            "numpy": lambda: t.numpy(),
            "tolist": lambda: t.tolist(),
            "repr": lambda: repr(t),
            "str": lambda: str(t),
            "item of a view": lambda: t[5].item(),
        }
        for name, read in reads.items():
            with pytest.raises(ofl.OutOfMemory, match="out of memory on " + device) as e:
                read()
            assert "bad_alloc" not in str(e.value), name
        ofl.sync()  # the error was reported by the reads: nothing is left for an unrelated sync
    finally:
        ofl.set_memory_limit(device, 0)
    assert ofl.ones(4, device=device).sum().item() == 4.0
    # The failed allocation is logged once where it happens; the reads that raise it log nothing.
    errors = [l for l in capfd.readouterr().err.splitlines() if "[ofl] [error]" in l]
    assert len(errors) <= 1 and all("out of memory on " + device in l for l in errors), errors

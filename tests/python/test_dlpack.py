"""DLPack both ways: from_dlpack shares the producer's memory (no copy, strides kept) and keeps the
producer alive until the tensor and its views are gone; __dlpack__ hands out memory whose writers
completed, kept alive by the capsule; devices without DLPack memory are refused with BufferError,
and from_dlpack says which reason kept it from an object's memory."""

import gc
import subprocess
import sys
import time
import weakref

import numpy as np
import pytest

import oneflow_lite as ofl

DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64]


def test_from_dlpack_shares_memory_both_ways():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = ofl.from_dlpack(a)
    assert t.shape == (3, 4) and t.dtype is ofl.float32 and t.device == "cpu"
    a[0, 0] = 100
    assert t[0, 0].item() == 100
    t.add_(1)
    ofl.sync()
    assert a[2, 3] == 12


def test_from_dlpack_keeps_strides():
    base = np.arange(60, dtype=np.int64).reshape(3, 4, 5)
    a = base[:, ::2, 1:4]
    t = ofl.from_dlpack(a)
    assert t.stride() == tuple(s // 8 for s in a.strides)
    np.testing.assert_array_equal(t.numpy(), a)
    b = np.broadcast_to(np.arange(3.0), (4, 3))  # stride 0 (read-only: numpy refuses it)
    with pytest.raises((TypeError, BufferError)):
        ofl.from_dlpack(b)


@pytest.mark.parametrize("np_dtype", DTYPES)
def test_every_dtype_round_trips(np_dtype):
    a = (np.arange(6) % 2 if np_dtype is np.bool_ else np.arange(6)).astype(np_dtype)
    t = ofl.from_dlpack(a)
    np.testing.assert_array_equal(t.numpy(), a)
    back = np.from_dlpack(t)
    np.testing.assert_array_equal(back, a)


def test_bfloat16_between_oneflow_lite_tensors():
    t = ofl.tensor([1.5, -2.0], dtype=ofl.bfloat16)
    u = ofl.from_dlpack(t)
    assert u.dtype is ofl.bfloat16 and u.tolist() == [1.5, -2.0]


def test_from_dlpack_keeps_the_producer_alive_and_lets_it_go():
    a = np.arange(1000, dtype=np.float64)
    ref = weakref.ref(a)
    t = ofl.from_dlpack(a)
    v = t[10:20]
    del a, t
    gc.collect()
    assert ref() is not None
    assert v.sum().item() == sum(range(10, 20))
    del v
    ofl.sync()
    for _ in range(100):  # the drop is queued to the interpreter
        gc.collect()
        if ref() is None:
            break
        time.sleep(0.01)
    assert ref() is None


def test_dlpack_export_shares_memory_and_waits_for_writers():
    t = ofl.ones(1 << 20, device="cpu")
    for _ in range(20):
        t.add_(1)
    a = np.from_dlpack(t)  # exported after the 20 adds completed
    assert a[0] == 21 and a[-1] == 21
    t[5:6].fill_(-1)  # numpy reads a legacy capsule as read-only: the writes come from ofl
    ofl.sync()
    assert a[5] == -1
    c = np.from_dlpack(ofl.ones(3) * 2)  # the capsule keeps the temporary's storage alive
    gc.collect()
    ofl.empty(3).fill_(7)
    np.testing.assert_array_equal(c, [2, 2, 2])


def test_dlpack_export_of_views():
    t = ofl.tensor(np.arange(24, dtype=np.int32).reshape(2, 3, 4))
    for v in (t.permute(2, 0, 1), t[1, :, 1:3], t.expand(2, 2, 3, 4), t[0, 0, 2]):
        np.testing.assert_array_equal(np.from_dlpack(v), v.numpy())


def test_dlpack_device_and_refusals():
    assert ofl.ones(2).__dlpack_device__() == (1, 0)
    s = ofl.ones(2, device="sim:0")
    with pytest.raises(BufferError, match="sim"):
        s.__dlpack_device__()
    with pytest.raises(BufferError, match="sim"):
        np.from_dlpack(s)
    with pytest.raises(BufferError, match="stream"):
        ofl.ones(2).__dlpack__(stream=1)
    with pytest.raises(TypeError, match="from_dlpack"):
        ofl.from_dlpack([1, 2])
    capsule = ofl.ones(2, device="sim:0").__dlpack__(dl_device=(1, 0))  # a cpu copy
    assert ofl.from_dlpack(capsule).tolist() == [1.0, 1.0]
    ofl.sync()
    assert ofl.ones(2).sum().item() == 2.0


def test_tensor_of_a_dlpack_object_copies():
    a = np.arange(4, dtype=np.float32)

    class Producer:
        def __dlpack__(self, stream=None, **kw):
            return a.__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    t = ofl.tensor(Producer(), device="sim:0")
    a[:] = 0
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert ofl.tensor(Producer()).tolist() == [0.0, 0.0, 0.0, 0.0]


def test_negative_strides_are_refused_naming_them():
    with pytest.raises(ofl.InvalidArgument, match="negative stride -1"):
        ofl.from_dlpack(np.arange(6.0)[::-1])
    assert ofl.ones(2).sum().item() == 2.0


def test_from_dlpack_says_why_an_object_gives_no_memory():
    class Refuses:
        def __dlpack__(self, stream=None):
            raise RuntimeError("the producer's own reason")

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(BufferError, match="refused to export its memory: RuntimeError: the producer's own reason"):
        ofl.from_dlpack(Refuses())
    with pytest.raises(BufferError, match="sim:0 memory has no DLPack device type; call .cpu"):
        ofl.from_dlpack(ofl.ones(2, device="sim:0"))
    with pytest.raises(BufferError, match="numpy.ndarray.*byte order"):
        ofl.from_dlpack(np.arange(3, dtype=">f4"))
    capsule = ofl.ones(2).__dlpack__()
    ofl.from_dlpack(capsule)
    with pytest.raises(ValueError, match="named 'used_dltensor'.*consumed already"):
        ofl.from_dlpack(capsule)
    with pytest.raises(TypeError, match="read-only bytes buffer"):
        ofl.from_dlpack(b"abcd")
    with pytest.raises(TypeError, match="must have __dlpack__, be a DLPack capsule or a writable buffer; got not int"):
        ofl.from_dlpack(3)
    assert ofl.ones(2).sum().item() == 2.0


def test_from_dlpack_of_a_tensor_alive_at_exit_leaks_nothing_nanobind_reports():
    code = """
import numpy as np
import oneflow_lite as ofl
a = ofl.ones(4)
b = ofl.from_dlpack(a)
c = ofl.from_dlpack(np.ones(3))
b.add_(1)
print(a.tolist())
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[2.0, 2.0, 2.0, 2.0]"
    assert "leaked" not in r.stderr, r.stderr

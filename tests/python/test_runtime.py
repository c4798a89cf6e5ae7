"""The runtime from Python: sync, memory stats and snapshots, limits, device counts, tracing."""

import json

import pytest

import oneflow_lite as ofl


def test_memory_stats_and_snapshot(device):
    ofl.sync()
    ofl.reset_peak_memory_stats(device)
    keep = ofl.empty(1 << 20, device=device)
    ofl.sync()
    s = ofl.memory_stats(device)
    assert s["allocated_bytes"] >= 4 << 20
    assert s["peak_allocated_bytes"] >= s["allocated_bytes"]
    assert set(s) >= {"reserved_bytes", "alloc_requests", "cache_hits", "cache_misses", "ooms"}
    snap = ofl.memory_snapshot(device)
    assert snap["allocated_bytes"] >= 4 << 20 and "segments" in snap
    del keep
    ofl.sync()
    ofl.empty_cache(device)


def test_memory_limit_gives_out_of_memory():
    ofl.sync()
    ofl.empty_cache("sim:0")
    ofl.set_memory_limit("sim:0", 1 << 20)
    try:
        with pytest.raises(ofl.OutOfMemory) as e:
            ofl.empty(1 << 22, device="sim:0")
            ofl.sync()
        assert isinstance(e.value, MemoryError)
    finally:
        ofl.set_memory_limit("sim:0", 0)
    assert ofl.ones(4, device="sim:0").sum().item() == 4.0  # still working


def test_device_count():
    assert ofl.device_count("cpu") >= 1
    assert ofl.device_count("sim") >= 1
    assert ofl.device_count("cuda") >= 0
    with pytest.raises(ofl.InvalidArgument, match="nope"):
        ofl.device_count("nope")


def test_tracing(tmp_path):
    path = tmp_path / "trace.json"
    with ofl.trace.tracing(path):
        assert ofl.trace.is_tracing()
        (ofl.ones(2, 3, device="sim:0").expand(2, 2, 3) + 1).sum().item()
    assert not ofl.trace.is_tracing()
    events = json.loads(path.read_text())
    names = json.dumps(events)
    assert "expand" in names or "add" in names
    ofl.trace.start()
    ofl.ones(2).sum().item()
    ofl.trace.stop(str(tmp_path / "t2.json"))
    assert (tmp_path / "t2.json").exists()


def test_numpy_reuses_the_memory_of_dead_large_arrays(device):
    # numpy() of a large tensor takes host memory the extension caches when the array dies, so a
    # read of that size again finds its pages mapped; a live array's memory is never handed out,
    # and empty_cache("cpu") frees the cache. The cache is not a device pool's memory.
    ofl.empty_cache("cpu")
    t = ofl.ones(1 << 20, device=device)  # 4 MiB
    a = t.numpy()
    p = a.ctypes.data
    assert ofl._C._host_buffer_cache_bytes() == 0
    del a
    assert ofl._C._host_buffer_cache_bytes() == 4 << 20
    b = t.numpy()
    assert b.ctypes.data == p and ofl._C._host_buffer_cache_bytes() == 0
    c = (t * 2).numpy()
    assert c.ctypes.data != p
    b[:] = 5
    d = t.numpy()
    assert (c == 2).all() and (d == 1).all()
    before = ofl.memory_stats("cpu")["allocated_bytes"]
    del b, c, d
    assert ofl._C._host_buffer_cache_bytes() == 12 << 20
    assert ofl.memory_stats("cpu")["allocated_bytes"] == before
    ofl.empty_cache("cpu")
    assert ofl._C._host_buffer_cache_bytes() == 0

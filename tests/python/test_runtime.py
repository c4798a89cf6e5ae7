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

"""History recording and memory snapshots: the pickle PyTorch's memory viewer reads."""

import pickle

import mempool_hal
import pytest
from conftest import MiB


@pytest.fixture
def history():
    mempool_hal.record_history(10_000)
    yield
    mempool_hal.record_history(0)


def load(path):
    with open(path, "rb") as f:
        return pickle.load(f)


def test_a_snapshot_holds_the_recorded_events_and_the_live_blocks(lib, history, tmp_path):
    freed = lib.mempool_alloc(4096, 0, None)
    live = lib.mempool_alloc(3 * MiB, 0, None)
    assert freed and live
    lib.mempool_free(freed, 4096, 0, None)
    path = tmp_path / "snapshot.pickle"
    mempool_hal.dump_snapshot(path)
    lib.mempool_free(live, 3 * MiB, 0, None)

    snap = load(path)
    assert set(snap) >= {"segments", "device_traces"}
    events = snap["device_traces"][0]
    for e in events:
        assert set(e) >= {"action", "addr", "size", "stream", "time_us", "frames"}
    # The block's life in order: handed out, freed by the program, free for reuse (no other
    # stream used it, so at once); segment events, where the library records them, around.
    block_events = {"alloc", "free_requested", "free_completed"}
    mine = [(e["action"], e["size"]) for e in events if e["addr"] == freed and e["action"] in block_events]
    assert mine == [("alloc", 4096), ("free_requested", 4096), ("free_completed", 4096)]
    assert {e["action"] for e in events} <= block_events | {"segment_alloc", "segment_free", "oom"}
    times = [e["time_us"] for e in events]
    assert times == sorted(times)
    assert ("alloc", 3 * MiB) in [(e["action"], e["size"]) for e in events if e["addr"] == live]
    # The allocation live at the dump is a segment; the freed one is not.
    addresses = {s["address"] for s in snap["segments"]}
    assert live in addresses and freed not in addresses
    assert all(s["device"] == 0 for s in snap["segments"] if s["address"] == live)


def test_recording_off_forgets_the_history(lib, tmp_path):
    mempool_hal.record_history(100)
    p = lib.mempool_alloc(4096, 0, None)
    lib.mempool_free(p, 4096, 0, None)
    mempool_hal.record_history(0)
    p = lib.mempool_alloc(4096, 0, None)
    lib.mempool_free(p, 4096, 0, None)
    path = tmp_path / "off.pickle"
    mempool_hal.dump_snapshot(str(path))
    assert all(not events for events in load(path)["device_traces"])


def test_an_unwritable_path_raises_with_the_reason(tmp_path):
    path = tmp_path / "no such folder" / "snapshot.pickle"
    with pytest.raises(mempool_hal.MempoolError) as e:
        mempool_hal.dump_snapshot(path)
    assert "mempool_dump_snapshot" in str(e.value)
    assert "no such folder" in str(e.value) or "No such file" in str(e.value)
    assert mempool_hal.last_error() == str(e.value)
    assert not path.exists()
    with pytest.raises(ValueError):
        mempool_hal.dump_snapshot("bad\0path")

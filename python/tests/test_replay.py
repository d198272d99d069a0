"""Trace replay: CSV text or a file, through the pool or the small-block layer."""

from pathlib import Path

import mempool_hal
import pytest

MiB = 1 << 20
TRACE = """Thread,Time,Action,Pointer,Size,Stream
1,0.000001000,allocate,0x1000,1048576,1
1,0.000002000,allocate,0x200000,3145728,1
1,0.000003000,free,0x1000,1048576,1
1,0.000004000,allocate,0x1000,1048576,1
1,0.000005000,free,0x1000,1048576,1
1,0.000006000,free,0x200000,3145728,1
1,0.000007000,sync_device,,,
"""


def test_a_replay_measures_the_peaks():
    r = mempool_hal.replay(TRACE, pool_size=1 << 30)
    # 1 MiB and 3 MiB live together: 4 MiB requested, 2 + 4 MiB at the 2 MiB granularity,
    # and the second 1 MiB reuses the first block.
    assert r["requested_high"] == 4 * MiB
    assert r["used_high"] == 6 * MiB
    assert r["reserved_high"] == 6 * MiB
    assert r["ratio"] == pytest.approx(1.0)
    assert r["reserved_over_requested"] == pytest.approx(1.5)
    assert r["ops"] == 7 and r["skipped_failures"] == 0
    # Everything stays cached (the threshold is the pool size) ...
    assert r["reserved_end"] == 6 * MiB
    # ... unless the threshold says otherwise.
    assert mempool_hal.replay(TRACE, pool_size=1 << 30, release_threshold=0)["reserved_end"] == 0


def test_a_trace_file_replays_as_its_text(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(TRACE)
    text = mempool_hal.replay(TRACE, pool_size=1 << 30)
    assert mempool_hal.replay(path, pool_size=1 << 30) == text
    assert mempool_hal.replay(str(path), pool_size=1 << 30) == text


def test_the_small_block_layer_packs_small_requests():
    rows = ["Thread,Time,Action,Pointer,Size,Stream"]
    rows += [f"1,0.{i:09d},allocate,{0x1000 * (i + 1):#x},4096,1" for i in range(64)]
    trace = "\n".join(rows) + "\n"
    alone = mempool_hal.replay(trace, pool_size=1 << 30)
    layered = mempool_hal.replay(trace, pool_size=1 << 30, small_blocks=1 * MiB)
    assert alone["requested_high"] == layered["requested_high"] == 64 * 4096
    # Each 4 KiB request takes a 2 MiB granule alone; the layer carves them from one block.
    assert alone["reserved_high"] == 64 * 2 * MiB
    assert layered["reserved_high"] < alone["reserved_high"] // 16


def test_the_bundled_training_trace():
    path = Path(__file__).resolve().parents[2] / "crates" / "mempool-trace" / "traces" / "training.csv"
    r = mempool_hal.replay(path)
    assert r["ops"] > 0
    assert r["reserved_high"] >= r["used_high"] >= r["requested_high"] > 0
    assert r["ratio"] == r["reserved_high"] / r["used_high"]
    # The figure docs/benchmarks.md gives for this trace (deferred, so the same every run): at most 1.05.
    assert r["ratio"] == pytest.approx(1.047, abs=5e-4)


def test_bad_traces_raise_with_the_line():
    with pytest.raises(mempool_hal.MempoolError, match="line 2"):
        mempool_hal.replay("Thread,Time,Action,Pointer,Size,Stream\n1,0.0,explode,0x1,1,1\n")
    with pytest.raises(mempool_hal.MempoolError, match="cannot read"):
        mempool_hal.replay("/no/such/trace.csv")
    with pytest.raises(mempool_hal.MempoolError):
        mempool_hal.replay(TRACE, pool_size=1 << 20)

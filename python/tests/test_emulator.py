"""The CPU emulator from Python: streams, pools, reuse, release, trim, and errors that
raise instead of crashing."""

import mempool_hal
import pytest
from conftest import MiB


@pytest.fixture
def emu():
    return mempool_hal.Emulator(devices=2, device_memory=1 << 30)


def test_the_platform_is_as_configured(emu):
    assert (emu.devices, emu.device_memory, emu.granularity) == (2, 1 << 30, 2 * MiB)
    assert emu.mem_info(1) == (1 << 30, 1 << 30)
    assert emu.create_stream(1).device == 1
    with pytest.raises(mempool_hal.MempoolError):
        emu.create_stream(2)
    with pytest.raises(mempool_hal.MempoolError):
        mempool_hal.Emulator(devices=0)
    with pytest.raises(mempool_hal.MempoolError):
        mempool_hal.Emulator(granularity=3000)


def test_same_stream_reuse_and_release_at_synchronization(emu):
    s = emu.create_stream()
    pool = emu.create_pool(256 * MiB)
    assert pool.size == 256 * MiB
    p = pool.malloc(3 * MiB, s)
    st = pool.stats()
    # Rounded to the 2 MiB granularity.
    assert (st["used_current"], st["reserved_current"]) == (4 * MiB, 4 * MiB)
    assert emu.mem_info() == ((1 << 30) - 4 * MiB, 1 << 30)
    pool.free(p, s)
    assert pool.stats()["used_current"] == 0
    # Freed on the same stream: the next allocation there reuses the block.
    q = pool.malloc(3 * MiB, s)
    assert q == p
    pool.free(q, s)
    emu.synchronize()
    # Release threshold 0: nothing stays cached after a synchronization.
    assert pool.stats() == {"reserved_current": 0, "reserved_high": 4 * MiB, "used_current": 0, "used_high": 4 * MiB}


def test_trim_to_releases_what_a_threshold_keeps(emu):
    s = emu.create_stream()
    pool = emu.create_pool(256 * MiB, release_threshold=256 * MiB)
    ptrs = [pool.malloc(8 * MiB, s) for _ in range(3)]
    for p in ptrs:
        pool.free(p, s)
    s.synchronize()
    assert pool.stats()["reserved_current"] == 24 * MiB
    pool.trim_to(8 * MiB)
    assert pool.stats()["reserved_current"] == 8 * MiB
    pool.trim_to(0)
    assert pool.stats()["reserved_current"] == 0


def test_bad_input_raises_and_changes_nothing(emu):
    s = emu.create_stream()
    pool = emu.create_pool(64 * MiB)
    p = pool.malloc(1 * MiB, s)
    with pytest.raises(mempool_hal.MempoolError):
        pool.malloc(0, s)
    with pytest.raises(mempool_hal.MempoolError):
        pool.malloc(128 * MiB, s)
    with pytest.raises(mempool_hal.MempoolError):
        pool.free(p + 4096, s)
    with pytest.raises(mempool_hal.MempoolError):
        pool.free(12345, s)
    with pytest.raises(OverflowError):
        pool.malloc(-1, s)
    with pytest.raises(TypeError):
        pool.malloc(1, "stream")
    # A stream of another platform is foreign here.
    other = mempool_hal.Emulator().create_stream()
    with pytest.raises(mempool_hal.MempoolError):
        pool.malloc(1 * MiB, other)
    with pytest.raises(mempool_hal.MempoolError):
        pool.trim_to(1 << 40)
    assert pool.stats()["used_current"] == 2 * MiB
    pool.free(p, s)
    with pytest.raises(mempool_hal.MempoolError):
        pool.free(p, s)


def test_the_checker_refuses_a_free_not_ordered_after_the_allocation():
    emu = mempool_hal.Emulator(threaded=False)
    a, b = emu.create_stream(), emu.create_stream()
    pool = emu.create_pool(64 * MiB)
    p = pool.malloc(1 * MiB, a)
    with pytest.raises(mempool_hal.MempoolError, match="(?i)order"):
        pool.free(p, b)
    pool.free(p, a)
    emu.synchronize()
    assert pool.stats()["used_current"] == 0

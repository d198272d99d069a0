"""NVIDIA's `cuda.core` (over `cuda-bindings`), unmodified, on the CPU `libcuda.so.1`.

The switch is `MEMPOOL_CUDA_SHIM_DIR`: a folder holding `libcuda.so` and `libcuda.so.1`
(the built `mempool-cuda-shim` library), which `cargo xtask python` sets up together with
the pinned `cuda-core`, `cuda-bindings` and `cuda-pathfinder` wheels. Without it the test
reports itself as not run. `cuda-bindings` opens the driver by name when it is first used,
so the work runs in a child Python process whose `LD_LIBRARY_PATH` names that folder, on
the `cuda` profile with the stream-order checker on."""

import os
import subprocess
import sys
import textwrap

import pytest

SHIM_DIR = os.environ.get("MEMPOOL_CUDA_SHIM_DIR")

pytestmark = pytest.mark.skipif(not SHIM_DIR, reason="not run: MEMPOOL_CUDA_SHIM_DIR is not set")

CHILD = textwrap.dedent(
    """
    import ctypes
    import numpy as np
    from cuda.bindings import driver
    from cuda.core import Buffer, Device, DeviceMemoryResource

    # The library cuda-bindings opened is the CPU one, not a driver of the machine.
    marker = ctypes.CDLL("libcuda.so.1").mempool_cuda_shim_version
    marker.restype = ctypes.c_char_p
    assert marker().startswith(b"mempool-emu-"), marker()

    dev = Device(0)
    dev.set_current()
    assert dev.name.startswith("mempool-emu CPU device 0"), dev.name
    assert tuple(dev.compute_capability) == (9, 0), dev.compute_capability
    assert len(dev.uuid) > 0
    props = dev.properties
    assert props.memory_pools_supported
    assert props.unified_addressing
    assert props.warp_size == 32
    err, version = driver.cuDriverGetVersion()
    assert err == driver.CUresult.CUDA_SUCCESS and version >= 13000, (err, version)

    s1 = dev.create_stream()
    s2 = dev.create_stream()
    mr = dev.memory_resource
    assert isinstance(mr, DeviceMemoryResource), type(mr)
    assert mr.is_device_accessible and not mr.is_host_accessible

    n = 1 << 20
    a = mr.allocate(n, stream=s1)
    b = mr.allocate(n, stream=s1)
    assert a.size == n and a.device_id == 0
    a.fill(7, stream=s1)
    b.copy_from(a, stream=s1)
    # Host memory as a Buffer: the copy into it is unified (cuMemcpyAsync).
    host = np.zeros(n, dtype=np.uint8)
    hbuf = Buffer.from_handle(host.ctypes.data, n)
    b.copy_to(hbuf, stream=s1)
    s1.sync()
    assert (host == 7).all(), host[:16]

    # A 4-byte pattern, and an upload from host memory.
    pattern = np.array([0x11223344], dtype=np.uint32)
    a.fill(pattern, stream=s1)
    a.copy_to(hbuf, stream=s1)
    s1.sync()
    assert (host.view(np.uint32) == 0x11223344).all()
    src = np.arange(n, dtype=np.uint8)
    b.copy_from(Buffer.from_handle(src.ctypes.data, n), stream=s1)
    b.copy_to(hbuf, stream=s1)
    s1.sync()
    assert (host == src).all()

    # Events order the streams: s2 uses b after s1's event.
    done = s1.record()
    s2.wait(done)
    c = mr.allocate(n, stream=s2)
    c.copy_from(b, stream=s2)
    c.copy_to(hbuf, stream=s2)
    s2.sync()
    assert (host == src).all()
    done.sync()
    assert done.is_done

    # Timing events.
    from cuda.core import EventOptions
    t0 = s1.record(options=EventOptions(timing_enabled=True))
    a.fill(1, stream=s1)
    t1 = s1.record(options=EventOptions(timing_enabled=True))
    t1.sync()
    assert (t1 - t0) >= 0.0

    # The pool's attributes.
    at = mr.attributes
    assert at.reuse_follow_event_dependencies
    assert at.reuse_allow_opportunistic
    assert at.reuse_allow_internal_dependencies
    assert at.used_mem_current >= 3 * n, at.used_mem_current
    assert at.reserved_mem_current >= at.used_mem_current
    for buf, st in ((a, s1), (b, s1), (c, s2)):
        buf.close(st)
    s1.sync()
    s2.sync()
    assert mr.attributes.used_mem_current == 0
    print("cuda.core: every path passed")
    """
)


def test_cuda_core_runs_on_the_cpu_library():
    env = dict(os.environ)
    for name in list(env):
        if name.startswith("MEMPOOL_EMU_"):
            del env[name]
    env.update(
        LD_LIBRARY_PATH=SHIM_DIR,
        MEMPOOL_EMU_PROFILE="cuda",
        MEMPOOL_EMU_CHECKER="on",
        MEMPOOL_EMU_DEVICE_MEMORY=str(4 << 30),
    )
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert out.returncode == 0 and "cuda.core: every path passed" in out.stdout, out.stdout + out.stderr

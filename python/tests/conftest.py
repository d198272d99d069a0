"""The library under test runs on the CPU emulator: its environment is set here, before
`mempool_hal` is imported (the library reads it once, at its first call)."""

import ctypes
import os

for name in list(os.environ):
    if name.startswith(("MEMPOOL_ALLOC_", "MEMPOOL_EMU_")):
        del os.environ[name]
os.environ["MEMPOOL_ALLOC_BACKEND"] = "emulator"
os.environ["MEMPOOL_EMU_DEVICES"] = "2"
os.environ["MEMPOOL_EMU_DEVICE_MEMORY"] = "1G"

import mempool_hal  # noqa: E402  (after the environment)
import pytest  # noqa: E402

MiB = 1 << 20


@pytest.fixture(scope="session")
def lib():
    """The extension module opened as a C library, as a framework opens it, with the
    signatures of `mempool_alloc.h`."""
    c = ctypes.CDLL(mempool_hal.library_path())
    c.mempool_alloc.restype = ctypes.c_void_p
    c.mempool_alloc.argtypes = [ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
    c.mempool_free.restype = None
    c.mempool_free.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
    c.mempool_last_error.restype = ctypes.c_char_p
    c.mempool_last_error.argtypes = []
    return c

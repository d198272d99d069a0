"""Stream-ordered device memory pools, from Python.

The extension module (``library_path()``) is the pluggable allocator library itself: it
exports the C functions of ``libmempool_alloc.so`` (``EXPORTS``), so a framework that loads
it calls the same code, with the same state, as this module does. Also the per-device
statistics, history recording and memory snapshots, and a CPU emulator (``Emulator``) and
trace replay (``replay``) for tests without a device.
"""

import os
from typing import Dict, Optional, Tuple, Union

ALLOC_FN: str
"""``"mempool_alloc"``: the allocation function a framework takes."""

FREE_FN: str
"""``"mempool_free"``: the free function a framework takes."""

EXPORTS: Tuple[str, ...]
"""Every C function the extension module exports, in the library header's order."""

class MempoolError(RuntimeError):
    """A call into mempool-hal failed; the message is the library's reason."""

def library_path() -> str:
    """The file a framework loads as its allocator: this extension module.

    ``torch.cuda.memory.CUDAPluggableAllocator(library_path(), ALLOC_FN, FREE_FN)``.
    """

def address(name: str) -> int:
    """The address of the exported C function ``name`` in this library, for the
    frameworks' hook setters. Raises ``MempoolError`` for a name not in ``EXPORTS``."""

def hooks() -> Dict[str, Dict[str, str]]:
    """The optional hooks of each framework (``"pytorch"``, ``"torch_npu"``,
    ``"mindspore"``): hook setter without ``set_`` -> export name, e.g.
    ``{"init_fn": "mempool_init", "reset_fn": "mempool_empty_cache", ...}``."""

def backend() -> str:
    """The backend the library runs on and where it was found (``"emulator (...)"``,
    ``"cuda (...)"``, ``"ascend (...)"``). Raises ``MempoolError`` when it could not start."""

def stats(device: int = 0) -> Dict[str, int]:
    """``device``'s statistics: ``used_current``, ``used_high``, ``reserved_current``,
    ``reserved_high``, ``requested_current``, ``requested_high``, ``small_held_current``,
    ``small_held_high``, ``small_wasted``, ``allocations``, ``pending_frees``,
    ``oom_count``, ``oom_retries``, ``stream_order_violations``, ``memory_limit``.
    Raises ``MempoolError`` for an unknown device."""

def empty_cache() -> None:
    """Gives every cached byte no live allocation holds back to the devices."""

def set_memory_fraction(fraction: float, device: int = 0) -> None:
    """Caps ``device``'s pool at ``fraction`` (in (0, 1]) of the device's memory."""

def record_history(max_entries: int) -> None:
    """Records each device's allocation history, keeping its last ``max_entries`` events
    (0: off, forgetting what was recorded)."""

def dump_snapshot(path: Union[str, "os.PathLike[str]"]) -> None:
    """Writes a memory snapshot (a pickle in the format of PyTorch's
    ``torch.cuda.memory._snapshot()``: ``segments``, ``device_traces``) to ``path``.
    Raises ``MempoolError`` with the reason when it cannot be written."""

def last_error() -> Optional[str]:
    """The calling thread's last failure in the library, or ``None``."""

class Stream:
    """A stream of an emulated device (``Emulator.create_stream``)."""

    @property
    def device(self) -> int:
        """The stream's device."""
    def synchronize(self) -> None:
        """Waits until the stream has run all its queued work."""

class Pool:
    """A stream-ordered pool of an emulated device (``Emulator.create_pool``)."""

    @property
    def size(self) -> int:
        """The pool's size in bytes."""
    def malloc(self, size: int, stream: Stream) -> int:
        """``size`` bytes in stream order on ``stream``: the address."""
    def free(self, ptr: int, stream: Stream) -> None:
        """Frees the allocation at ``ptr`` in stream order on ``stream``."""
    def trim_to(self, bytes: int) -> None:
        """Releases cached memory now, keeping at least ``bytes`` reserved."""
    def stats(self) -> Dict[str, int]:
        """``reserved_current``, ``reserved_high``, ``used_current``, ``used_high``."""

class Emulator:
    """An emulated platform of ``devices`` devices of ``device_memory`` bytes each."""

    def __init__(
        self,
        devices: int = 1,
        device_memory: int = 16 << 30,
        granularity: int = 2 << 20,
        checker: bool = True,
        threaded: bool = True,
    ) -> None: ...
    @property
    def devices(self) -> int:
        """The number of devices."""
    @property
    def device_memory(self) -> int:
        """Each device's memory in bytes."""
    @property
    def granularity(self) -> int:
        """The pools' allocation granularity in bytes."""
    def mem_info(self, device: int = 0) -> Tuple[int, int]:
        """``(free, total)`` bytes of ``device``."""
    def create_stream(self, device: int = 0) -> Stream:
        """A new stream on ``device``."""
    def create_pool(
        self, max_size: int, device: int = 0, release_threshold: Optional[int] = None
    ) -> Pool:
        """A new pool of ``max_size`` bytes on ``device``."""
    def synchronize(self) -> None:
        """Waits until every device has run all its queued work."""

def replay(
    trace: Union[str, "os.PathLike[str]"],
    pool_size: int = 16 << 30,
    small_blocks: Optional[int] = None,
    release_threshold: Optional[int] = None,
    granularity: int = 2 << 20,
) -> Dict[str, Union[int, float]]:
    """Replays a trace (CSV text or a file's path) on a fresh emulator: ``reserved_high``,
    ``used_high``, ``requested_high``, ``ratio`` (RESERVED_HIGH / USED_HIGH),
    ``reserved_over_requested``, ``reserved_end``, ``ops``, ``skipped_failures``."""

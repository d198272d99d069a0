"""The extension module is the allocator library: its exports, the names frameworks take,
and one state shared by `ctypes` (a framework's view) and the Python functions."""

import ast
import ctypes
import math
import os
import re
from pathlib import Path

import mempool_hal
import pytest
from conftest import MiB

# The header's functions, read from the header itself
# (crates/mempool-alloc/include/mempool_alloc.h).
HEADER = Path(__file__).resolve().parents[2] / "crates" / "mempool-alloc" / "include" / "mempool_alloc.h"
HEADER_FUNCTIONS = set(
    re.findall(r"^(?:void|int|const char) \*?(mempool_\w+)\(", HEADER.read_text(), flags=re.MULTILINE)
)


def test_the_extension_module_exports_every_function(lib):
    assert set(mempool_hal.EXPORTS) == HEADER_FUNCTIONS
    assert mempool_hal.ALLOC_FN == "mempool_alloc" and mempool_hal.FREE_FN == "mempool_free"
    path = mempool_hal.library_path()
    # The library is the extension module itself, not a second copy.
    assert os.path.samefile(path, mempool_hal.mempool_hal.__file__)
    for name in mempool_hal.EXPORTS:
        fn = getattr(lib, name)
        assert mempool_hal.address(name) == ctypes.cast(fn, ctypes.c_void_p).value, name
    with pytest.raises(mempool_hal.MempoolError, match="not an export"):
        mempool_hal.address("malloc")


def test_hooks_name_exports_as_the_framework_recipes_do():
    hooks = mempool_hal.hooks()
    assert set(hooks) == {"pytorch", "torch_npu", "mindspore"}
    assert hooks["mindspore"] == {}
    for framework in hooks.values():
        assert set(framework.values()) <= set(mempool_hal.EXPORTS)
    recipes = (Path(__file__).resolve().parents[2] / "docs" / "frameworks.md").read_text()
    seen = set()
    for block in re.findall(r"```python\n(.*?)```", recipes, re.S):
        pairs = re.findall(r'hooks\.set_(\w+)\(fn\("(\w+)"\)\)', block)
        if pairs:
            framework = "torch_npu" if "NPUPluggableAllocator" in block else "pytorch"
            assert dict(pairs) == hooks[framework], framework
            seen.add(framework)
    assert seen == {"pytorch", "torch_npu"}


def test_the_backend_is_the_emulator():
    assert mempool_hal.backend().startswith("emulator")


def test_statistics_follow_allocations_made_through_the_c_functions(lib):
    before = mempool_hal.stats(0)
    other = mempool_hal.stats(1)
    sizes = [1000, 3 * MiB, 5 * MiB + 7]
    ptrs = [lib.mempool_alloc(n, 0, None) for n in sizes]
    assert all(ptrs), lib.mempool_last_error()
    during = mempool_hal.stats(0)
    assert during["requested_current"] - before["requested_current"] == sum(sizes)
    assert during["allocations"] - before["allocations"] == len(sizes)
    assert during["reserved_current"] >= during["used_current"] >= sum(sizes)
    assert during["requested_high"] >= during["requested_current"]
    # Per device: device 1 saw none of it.
    assert mempool_hal.stats(1)["allocations"] == other["allocations"]
    for p, n in zip(ptrs, sizes):
        lib.mempool_free(p, n, 0, None)
        assert lib.mempool_last_error() is None
    after = mempool_hal.stats(0)
    assert after["requested_current"] == before["requested_current"]
    assert after["allocations"] == before["allocations"]


def test_empty_cache_gives_the_cached_bytes_back(lib):
    p = lib.mempool_alloc(64 * MiB, 0, None)
    assert p
    lib.mempool_free(p, 64 * MiB, 0, None)
    # The release threshold is the pool size: the memory stays cached until empty cache.
    assert mempool_hal.stats(0)["reserved_current"] >= 64 * MiB
    mempool_hal.empty_cache()
    s = mempool_hal.stats(0)
    assert s["reserved_current"] == s["used_current"] == 0


def test_a_memory_fraction_caps_the_pool(lib):
    mempool_hal.set_memory_fraction(0.25, 1)
    assert mempool_hal.stats(1)["memory_limit"] == 256 * MiB
    ooms = mempool_hal.stats(1)["oom_count"]
    assert lib.mempool_alloc(512 * MiB, 1, None) is None
    reason = lib.mempool_last_error().decode()
    assert "mempool_alloc" in reason
    assert mempool_hal.last_error() == reason
    assert mempool_hal.stats(1)["oom_count"] == ooms + 1
    for bad in (0.0, 1.5, math.nan):
        with pytest.raises(mempool_hal.MempoolError, match="fraction"):
            mempool_hal.set_memory_fraction(bad, 1)
    assert mempool_hal.stats(1)["memory_limit"] == 256 * MiB
    mempool_hal.set_memory_fraction(1.0, 1)
    p = lib.mempool_alloc(512 * MiB, 1, None)
    assert p
    lib.mempool_free(p, 512 * MiB, 1, None)


def test_failures_raise_with_the_library_reason():
    with pytest.raises(mempool_hal.MempoolError) as e:
        mempool_hal.stats(7)
    assert isinstance(e.value, RuntimeError)
    assert "mempool_stats" in str(e.value)
    assert mempool_hal.last_error() == str(e.value)
    with pytest.raises(mempool_hal.MempoolError):
        mempool_hal.set_memory_fraction(0.5, -1)
    # A successful call clears the thread's last error.
    mempool_hal.stats(0)
    assert mempool_hal.last_error() is None
    with pytest.raises(OverflowError):
        mempool_hal.record_history(-1)


def test_the_wheel_ships_a_stub_that_names_the_whole_module():
    package = Path(mempool_hal.__file__).parent
    assert (package / "py.typed").is_file()
    stub = ast.parse((package / "__init__.pyi").read_text())
    declared = {}
    for node in stub.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            declared[node.name] = node
        elif isinstance(node, ast.AnnAssign):
            declared[node.target.id] = node
    public = {n for n in dir(mempool_hal) if not n.startswith("_")} - {"mempool_hal"}
    assert set(declared) == public
    for name in ("Emulator", "Pool", "Stream"):
        members = {n.name for n in declared[name].body if isinstance(n, ast.FunctionDef)}
        actual = {n for n in dir(getattr(mempool_hal, name)) if not n.startswith("_")}
        assert members - {"__init__"} == actual, name

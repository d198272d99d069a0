//! A drop-in `libacl_rt.so`: the ACL C ABI of the pool API (SPEC.md section 8) on top of
//! the `mempool-hal` CPU emulator.
//!
//! It lets the Ascend backend's real loading and FFI code run in every test, and lets C
//! and C++ programs written for CANN run on a CPU: point `ASCEND_HOME_PATH` at the folder
//! laid out by `cargo xtask shim` (it holds `lib64/libacl_rt.so` and
//! `lib64/libascendcl.so`), or link against the library directly.
//!
//! Handles are registry ids checked on every call: garbage, destroyed or wrong-kind
//! handles get an error code, never a crash. No panic crosses the C boundary (it becomes
//! 507000 with a message). `aclGetRecentErrMsg` is per thread. Device pointers are host
//! addresses, so a host function launched with `aclrtLaunchHostFunc` can work on device
//! memory directly, standing in for a kernel.
//!
//! The emulated platform is configured from the environment at the first call:
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `MEMPOOL_EMU_DEVICES` | number of devices (1 to 1024) | 1 |
//! | `MEMPOOL_EMU_DEVICE_MEMORY` | bytes per device (`4096`, `64M`, `8G`; at most 64 TiB) | 16 GiB |
//! | `MEMPOOL_EMU_GRANULARITY` | pool granularity in bytes (a power of two from a page to 1 GiB) | 2 MiB |
//! | `MEMPOOL_EMU_MODE` | `threaded` or `deferred` | threaded |
//! | `MEMPOOL_EMU_CHECKER` | the stream-order checker: `on`/`1`/`true`/`yes` or `off`/`0`/`false`/`no` | on |
//! | `MEMPOOL_EMU_RACES` | the checker's race mode (unordered overlapping accesses, one a write), same values | off |
//!
//! A value that does not parse or is out of range makes every call fail with 507000 and a
//! message naming the variable (`aclGetRecentErrMsg`), instead of running with a default.
//!
//! With the checker on, a copy or memset that uses freed memory, memory the stream is not
//! ordered after, or a destroyed pool's memory, and a free not ordered after the
//! allocation and every earlier access, answer 107000 with `aclGetRecentErrMsg` naming the
//! streams, positions and operations; nothing is enqueued. A host synchronization orders
//! everything enqueued afterwards, and `aclrtMalloc` memory is ordered before everything
//! enqueued after the call returns (contract §1).
//!
//! # C and C++ headers
//!
//! `backends/acl-shim/include/acl/` holds the project's own CANN-compatible headers:
//! `acl/acl.h` (which includes `acl/acl_base.h` and `acl/acl_rt.h`) and
//! `acl/acl_rt_memory_soma.h` for the pool API. They declare exactly the functions this
//! library exports, with CANN's names, types, values and struct layouts, so a program
//! written for CANN builds unchanged (C99 or later, C++11 or later; 64-bit targets):
//!
//! ```text
//! cargo build -p mempool-acl-shim
//! cc -I backends/acl-shim/include prog.c -L target/debug -lacl_rt -Wl,-rpath,target/debug
//! ```
//!
//! (`-Wl,-rpath` lets the program find the library without `LD_LIBRARY_PATH`.) The
//! `headers` test checks every declaration against the library.

#![deny(missing_docs)]

pub mod exports;
mod signatures;
mod state;

pub use mempool_emu::{ENV_ALL, ENV_CHECKER, ENV_DEVICE_MEMORY, ENV_DEVICES, ENV_GRANULARITY, ENV_MODE, ENV_RACES};

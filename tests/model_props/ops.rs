//! The calls a case is made of, and how it starts.

use mempool_hal::{Profile, ReuseFlags};

/// A stream: one of the case's (by index, modulo the number created, destroyed ones
/// included) or a stream of another emulator instance.
#[derive(Debug, Clone, Copy)]
pub(crate) enum S {
    Idx(u8),
    Foreign,
}

/// An event, chosen like a stream.
#[derive(Debug, Clone, Copy)]
pub(crate) enum E {
    Idx(u8),
    Foreign,
}

/// A pointer to free.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ptr {
    /// The `i`-th live allocation (modulo their number).
    Live(u8),
    /// The `i`-th address ever handed out (modulo their number): live, freed or of a
    /// destroyed pool.
    Handed(u8),
    /// A handed-out address plus `delta` bytes: interior, or another block's start.
    Offset(u8, u64),
    /// The first byte past a pool's end.
    PastEnd(u8),
    Null,
    /// An address of no pool.
    Unknown,
}

/// One side of a copy: device memory at a pointer, or host memory.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Side {
    Dev(Ptr),
    Host,
}

/// A device range a kernel declares: `len` bytes at `ptr`, read or written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KernelArg {
    pub(crate) ptr: Ptr,
    pub(crate) len: u64,
    pub(crate) write: bool,
}

/// A `trim_to` argument, some relative to the pool's state at the call.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Keep {
    Bytes(u64),
    Used,
    UsedMinus1,
    Reserved,
    Size,
    SizePlus1,
}

/// A raw attribute value, some relative to the pool's size.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Val {
    U32(u32),
    U64(u64),
    Size,
    SizePlus1,
}

/// Pool properties: valid ones of several sizes, or one field wrong.
#[derive(Debug, Clone, Copy)]
pub(crate) enum NewPool {
    MaxSize(u64),
    AllocType(i32),
    HandleType(i32),
    LocationHost,
    Device(u32),
    ReservedByte,
}

/// One call.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Op {
    CreateStream,
    /// A stream on a device (the index modulo the number of devices).
    CreateStreamOn(u8),
    /// An event on a device (the index modulo the number of devices).
    CreateEventOn(u8),
    DestroyStream(S),
    CreateEvent,
    DestroyEvent(E),
    CreatePool(NewPool),
    DestroyPool(u8),
    Malloc {
        pool: u8,
        size: u64,
        stream: S,
    },
    /// A synchronous allocation (`EmuPool::malloc_sync`, as `aclrtMalloc` makes).
    MallocSync {
        pool: u8,
        size: u64,
        stream: S,
    },
    Free {
        ptr: Ptr,
        stream: S,
        via_pool: bool,
    },
    HostFn(S),
    Record {
        event: E,
        stream: S,
    },
    Wait {
        stream: S,
        event: E,
    },
    /// `Record { event, stream: from }` then `Wait { stream: to, event }`, each compared.
    Handoff {
        from: S,
        to: S,
        event: E,
    },
    SyncStream(S),
    /// `query_stream`: complete when everything queued has run.
    QueryStream(S),
    SyncEvent(E),
    SyncDevice,
    /// A device synchronization of a device (the index modulo the number of devices).
    SyncDeviceOf(u8),
    Elapsed(E, E),
    Step {
        stream: S,
        n: u8,
    },
    RunPending(S),
    Trim {
        pool: u8,
        keep: Keep,
    },
    SetAttr {
        pool: u8,
        id: u32,
        value: Val,
    },
    GetAttr {
        pool: u8,
        id: u32,
    },
    /// `memset_async` of `len` bytes at `ptr`.
    Memset {
        ptr: Ptr,
        len: u64,
        stream: S,
    },
    /// An asynchronous copy of `len` bytes: host to device (`memcpy_h2d_async`), device to
    /// host (`memcpy_d2h_async`) or device to device (`memcpy_d2d_async`); host to host is
    /// skipped.
    Copy {
        dst: Side,
        src: Side,
        len: u64,
        stream: S,
    },
    /// `launch_kernel` declaring these ranges (each present one, in order); the kernel reads
    /// or writes each whole range when it runs.
    Kernel {
        args: [Option<KernelArg>; 2],
        stream: S,
    },
    /// A synchronous memset by the host (`memset_now`, as `aclrtMemset`).
    HostMemset {
        ptr: Ptr,
        len: u64,
    },
    /// A synchronous copy by the host (`memcpy_raw`, as `aclrtMemcpy`).
    HostCopy {
        dst: Side,
        src: Side,
        len: u64,
    },
}

/// How a case starts: the profile; pool 0's max size, its reuse flags and release
/// threshold (two streams, two events and pool 0 on device 0); whether a stream, an event
/// and a pool (pool 1) on device 1 follow; and whether the checker's race mode is on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Setup {
    pub(crate) profile: Profile,
    pub(crate) max_size: u64,
    pub(crate) flags: ReuseFlags,
    pub(crate) threshold: u64,
    pub(crate) second_device: bool,
    /// The checker's race mode (contract §11).
    pub(crate) races: bool,
}

//! The [`MemPool`] trait and its typed extension [`MemPoolExt`].

use crate::attr::{
    AttrId, AttrValue, RawAttrValue, Readable, ReservedMemCurrent, ReservedMemHigh, Resettable, UsedMemCurrent,
    UsedMemHigh, Writable,
};
use crate::error::{Error, ErrorKind, Result, code};
use crate::ptr::DevicePtr;
use crate::stats::PoolStats;

/// A stream-ordered memory pool (`aclrtMemPool`, `CUmemoryPool` / `cudaMemPool_t`).
///
/// Allocations and frees are enqueued on streams: an allocation made on stream `S` may
/// be used by work ordered after it; a free on `S` means no work ordered after it may
/// touch the memory. Bookkeeping (statistics, the choice of block) happens when the call
/// is made, in call order. "Ordered after" has one precise meaning, defined in
/// [objects and stream order](crate::contract::objects).
///
/// The typed attribute methods (`get`, `set`, `reset`, `stats`) are on [`MemPoolExt`],
/// implemented for every pool; `stats` reads [`MemPool::stats_snapshot`].
///
/// # For backend authors
///
/// Implement the raw path faithfully: [`AttrId::check_write`] and
/// [`AttrId::check_read`] give the rule checks of the
/// [attribute contract](crate::contract::attributes), with the contract's kinds and ACL
/// numbers; a backend of another numbering stamps its own code at its boundary (the CUDA
/// backend: `CUDA_ERROR_INVALID_VALUE` for each). Run `mempool-conformance` against your
/// backend.
pub trait MemPool: Send + Sync {
    /// The backend's stream handle.
    type Stream;

    /// Allocates `size` bytes (rounded up to the granularity) in stream order on `stream`.
    ///
    /// The block comes from the first rule of the reuse order that finds one (same stream,
    /// known complete, then the three flagged rules, then fresh address space), smallest
    /// fit first, then lowest address: see the
    /// [allocation contract](crate::contract::allocation).
    ///
    /// # Errors
    ///
    /// - `size == 0`, or a size that overflows when rounded:
    ///   [`InvalidParam`](crate::ErrorKind::InvalidParam) (ACL 107000; CUDA
    ///   `CUDA_ERROR_INVALID_VALUE`, 1).
    /// - A destroyed or foreign stream: [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL
    ///   107017; CUDA `CUDA_ERROR_INVALID_HANDLE`, 400). A destroyed pool: `InvalidHandle` (ACL
    ///   507000; CUDA 400).
    /// - On the emulator, a stream of another device than the pool's:
    ///   [`WrongContext`](crate::ErrorKind::WrongContext) (ACL 107003). On the Ascend and
    ///   CUDA backends each instance is one device, and such a stream is foreign:
    ///   `InvalidHandle`.
    /// - No block and no address space left: [`OutOfMemory`](crate::ErrorKind::OutOfMemory)
    ///   (ACL 507000; CUDA `CUDA_ERROR_OUT_OF_MEMORY`, 2) with [`Error::oom`] filled in
    ///   (rule g of the [allocation contract](crate::contract::allocation)). The Ascend and
    ///   CUDA backends first retry once when the pool holds cached bytes and a pool trimmed
    ///   to USED could hold the request: they synchronize, trim to USED and allocate again
    ///   (see [profiles](crate::contract::profiles)).
    ///
    /// # Portability
    ///
    /// The emulator follows the reuse order above. The Ascend backend leaves the choice of
    /// block to the runtime (CANN's open runtime takes fresh address space every time: see
    /// [profiles](crate::contract::profiles)), and the CUDA backend to the driver, which
    /// has rules of its own and turns the three reuse flags on for a new pool.
    ///
    /// # Stream ordering
    ///
    /// The memory may be used by later work on `stream`, or by work on other streams
    /// ordered after it through events (see
    /// [objects and stream order](crate::contract::objects)). With
    /// [`ReuseAllowInternalDependencies`] the pool may enqueue a wait on `stream` before the
    /// allocation.
    ///
    /// [`ReuseAllowInternalDependencies`]: crate::attr::ReuseAllowInternalDependencies
    fn malloc_async(&self, size: u64, stream: &Self::Stream) -> Result<DevicePtr>;

    /// Frees `ptr` in stream order on `stream`. USED falls at the call; the block stays
    /// reserved and cached (see the [free contract](crate::contract::free)).
    ///
    /// # Safety
    ///
    /// `ptr` must be the start of a live allocation, and every use of it must be ordered before
    /// this free (on `stream`, or through events). The emulator checks all of this and answers
    /// a bad pointer with an error; the real runtimes cannot (CANN accepts an unknown address
    /// and fails later; the CUDA driver refuses some bad pointers, not all), so a bad pointer
    /// there is undefined behaviour on the device. The `mempool` facade's `Buffer` makes this
    /// call for you, safely. The emulator's [checker](crate::contract::checker) refuses a free
    /// that is not ordered after every earlier use.
    ///
    /// # Errors
    ///
    /// - An interior, already freed or unknown pointer:
    ///   [`InvalidPointer`](crate::ErrorKind::InvalidPointer) (ACL 107000; CUDA
    ///   `CUDA_ERROR_INVALID_VALUE`, 1): always on the emulator, where the runtime or the
    ///   driver can tell on the Ascend and CUDA backends.
    /// - A destroyed or foreign stream: [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL
    ///   107017; CUDA `CUDA_ERROR_INVALID_HANDLE`, 400).
    /// - On the emulator, a stream of another device than the pool's:
    ///   [`WrongContext`](crate::ErrorKind::WrongContext) (ACL 107003); a free not ordered
    ///   after every use of the block:
    ///   [`StreamOrderViolation`](crate::ErrorKind::StreamOrderViolation) (ACL 107000). Over
    ///   the CPU `libcuda.so.1`, the CUDA backend reports the latter as `InvalidPointer`
    ///   (`CUDA_ERROR_INVALID_VALUE`, 1) with the library's message.
    ///
    /// # Stream ordering
    ///
    /// The block is tagged with `stream` and its position there; reuse decisions follow
    /// where the free is ordered, not where the allocation was. Adjacent cached blocks
    /// freed on the same stream merge (see the [free contract](crate::contract::free)).
    // The declaration is the crate's only `unsafe`: it states a caller obligation; the
    // crate itself performs no unsafe operation.
    #[allow(unsafe_code)]
    unsafe fn free_async(&self, ptr: DevicePtr, stream: &Self::Stream) -> Result<()>;

    /// Releases cached memory now, keeping at least `min_bytes_to_keep` reserved.
    ///
    /// Completed cached blocks are released smallest first, the last one split at the
    /// granularity; a block whose free has not executed is never released; at or above
    /// RESERVED nothing happens. It does not synchronize. See
    /// [release and trim](crate::contract::release).
    ///
    /// # Errors
    ///
    /// - A destroyed or foreign pool: [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL
    ///   507000; CUDA `CUDA_ERROR_INVALID_HANDLE`, 400).
    /// - Under Ascend's rules (the emulator's `documented` and `cann-open` profiles, the
    ///   Ascend backend), a target above the pool size or below USED:
    ///   [`InvalidParam`](crate::ErrorKind::InvalidParam) (ACL 507000). Under CUDA's (the
    ///   CUDA backend, the emulator's `cuda` profile) neither is an error (below).
    ///
    /// # Portability
    ///
    /// - The emulator's Ascend profiles refuse both targets, as CANN does; its `cuda`
    ///   profile releases what it can, down to USED, for a target below USED, and nothing
    ///   for one above the pool size.
    /// - The Ascend backend passes the call to the runtime (`aclrtMemPoolTrimTo`): CANN
    ///   refuses both with 507000, which the backend reports as `InvalidParam`; a runtime
    ///   whose driver cannot trim answers 207000
    ///   ([`NotSupported`](crate::ErrorKind::NotSupported)).
    /// - The CUDA backend passes the call to the driver (`cuMemPoolTrimTo`), which refuses
    ///   neither: below USED it releases every cached block whose free has run, and above
    ///   the pool size, or at or above RESERVED, it releases nothing.
    fn trim_to(&self, min_bytes_to_keep: u64) -> Result<()>;

    /// Reads attribute `attr`; the value has the attribute's C width (see the
    /// [attribute contract](crate::contract::attributes)).
    ///
    /// # Errors
    ///
    /// An unknown id: [`UnknownAttribute`](crate::ErrorKind::UnknownAttribute) (ACL 107000;
    /// CUDA `CUDA_ERROR_INVALID_VALUE`, 1). A destroyed or foreign pool:
    /// [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL 107000, CANN's code for the
    /// attribute calls; CUDA `CUDA_ERROR_INVALID_HANDLE`, 400).
    ///
    /// # Portability
    ///
    /// A fresh pool's reuse flags read 0 under Ascend's rules and 1 on the CUDA backend and
    /// the emulator's `cuda` profile (the driver's default).
    fn get_attr_raw(&self, attr: AttrId) -> Result<RawAttrValue>;

    /// Writes attribute `attr`, checking every rule of the
    /// [attribute contract](crate::contract::attributes) at run time.
    ///
    /// # Errors
    ///
    /// The rules of [`AttrId::check_write`], with its kinds. The emulator and the CUDA backend
    /// check them before any runtime call (the CUDA backend reports every one as
    /// `CUDA_ERROR_INVALID_VALUE`, 1); the Ascend backend checks the width and leaves the rest
    /// to the runtime, which answers with its codes (see
    /// [attributes](crate::contract::attributes#where-the-codes-come-from-on-cann)). A
    /// destroyed or foreign pool: [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL
    /// 107000; CUDA `CUDA_ERROR_INVALID_HANDLE`, 400).
    ///
    /// # Portability
    ///
    /// Resetting a high-water mark (writing 0) sets it to 0 under Ascend's rules and to its
    /// current value on the CUDA backend and the emulator's `cuda` profile.
    fn set_attr_raw(&self, attr: AttrId, value: RawAttrValue) -> Result<()>;

    /// The pool's size in bytes (`max_size` after rounding; see the
    /// [property contract](crate::contract::properties)).
    fn size(&self) -> u64;

    /// The four statistics counters (attributes 5-8) as one snapshot, read at one instant,
    /// so that `reserved_current >= used_current` holds in every answer (see
    /// [statistics and lifetime](crate::contract::statistics)).
    /// [`MemPoolExt::stats`] calls it.
    ///
    /// The two names are one answer with two jobs: `stats_snapshot` is the backend's hook
    /// (a method of [`MemPool`], which a backend overrides to read the counters at once, and
    /// which a `dyn MemPool` has), while [`stats`](MemPoolExt::stats) is the call for code
    /// that uses pools, beside `get`, `set` and `reset`. Call `stats`; implement
    /// `stats_snapshot`.
    ///
    /// The provided method reads the four attributes one after the other through
    /// [`MemPool::get_attr_raw`]: a backend whose pool can change between two reads (another
    /// thread allocating, freeing or trimming) may then answer counters of different
    /// instants. Backends that can read them at once override it; the emulator reads them
    /// under its pool lock. The Ascend and CUDA backends keep the four reads, since neither
    /// runtime has a call that reads several attributes together.
    ///
    /// # Errors
    ///
    /// As [`MemPool::get_attr_raw`]; a backend answering with the wrong width is
    /// [`Internal`](crate::ErrorKind::Internal), made here with ACL 507000 whatever the
    /// backend (the project's backends never answer so; a mock may).
    fn stats_snapshot(&self) -> Result<PoolStats> {
        Ok(PoolStats {
            reserved_current: self.get(ReservedMemCurrent)?,
            reserved_high: self.get(ReservedMemHigh)?,
            used_current: self.get(UsedMemCurrent)?,
            used_high: self.get(UsedMemHigh)?,
        })
    }
}

/// Typed attribute access for every [`MemPool`], through its raw path.
///
/// These are provided methods with a blanket impl, so mocks of [`MemPool`] keep them and
/// the type rules hold everywhere.
pub trait MemPoolExt: MemPool {
    /// Reads a typed attribute.
    ///
    /// # Errors
    ///
    /// As [`MemPool::get_attr_raw`]; a backend answering with the wrong width is
    /// [`Internal`](crate::ErrorKind::Internal), made here with ACL 507000 whatever the
    /// backend (the project's backends never answer so; a mock may).
    fn get<A: Readable>(&self, attr: A) -> Result<A::Value> {
        let _ = attr;
        let raw = self.get_attr_raw(A::ID)?;
        A::Value::from_raw(raw).ok_or_else(|| {
            Error::new(
                ErrorKind::Internal,
                code::ACL_ERROR_RT_INTERNAL_ERROR,
                "get_attr",
                format!("backend returned {raw:?} for {:?}", A::ID),
            )
        })
    }

    /// Writes a typed attribute. Only read/write keys compile here.
    ///
    /// # Errors
    ///
    /// As [`MemPool::set_attr_raw`] (a threshold above the pool size is
    /// [`InvalidParam`](crate::ErrorKind::InvalidParam): ACL 507000; CUDA
    /// `CUDA_ERROR_INVALID_VALUE`, 1).
    fn set<A: Writable>(&self, attr: A, value: A::Value) -> Result<()> {
        let _ = attr;
        self.set_attr_raw(A::ID, value.to_raw())
    }

    /// Resets a high-water mark to 0 (Ascend's rule; CUDA resets it to the current
    /// value). It rises again only when its current counter rises (see the
    /// [attribute contract](crate::contract::attributes)).
    ///
    /// # Errors
    ///
    /// As [`MemPool::set_attr_raw`].
    fn reset<A: Resettable>(&self, attr: A) -> Result<()> {
        let _ = attr;
        self.set_attr_raw(A::ID, <A::Value as AttrValue>::to_raw(zero::<A::Value>()))
    }

    /// Reads the four statistics counters together, as [`MemPool::stats_snapshot`] does
    /// (see [statistics and lifetime](crate::contract::statistics)).
    ///
    /// The same answer as `stats_snapshot`, which is the backend's hook: call this one,
    /// and implement that one (see [`MemPool::stats_snapshot`]).
    ///
    /// # Errors
    ///
    /// As [`MemPool::stats_snapshot`].
    fn stats(&self) -> Result<PoolStats> {
        self.stats_snapshot()
    }
}

impl<P: MemPool + ?Sized> MemPoolExt for P {}

fn zero<V: AttrValue>() -> V {
    // Every value type decodes the zero of its width.
    match V::WIDTH {
        crate::attr::AttrWidth::U32 => V::from_raw(RawAttrValue::U32(0)),
        crate::attr::AttrWidth::U64 => V::from_raw(RawAttrValue::U64(0)),
    }
    .expect("zero of the value's own width always decodes")
}

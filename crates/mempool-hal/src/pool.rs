//! The [`MemPool`] trait and its typed extension [`MemPoolExt`].

use crate::attr::{
    AttrId, AttrValue, RawAttrValue, Readable, ReservedMemCurrent, ReservedMemHigh, Resettable, UsedMemCurrent,
    UsedMemHigh, Writable,
};
use crate::error::{Error, ErrorKind, Result, code};
use crate::ptr::DevicePtr;
use crate::stats::PoolStats;

/// A stream-ordered memory pool (`aclrtMemPool`, `cudaMemPool_t`).
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
/// [attribute contract](crate::contract::attributes). Run
/// `mempool-conformance` against your backend.
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
    /// `size == 0` or a size that overflows when rounded: `InvalidParam` (ACL 107000, CUDA 1).
    /// A destroyed or foreign stream: `InvalidHandle` (ACL 107017, CUDA 400). A destroyed pool:
    /// `InvalidHandle` (ACL 507000, CUDA 400). No block and no address space left: `OutOfMemory`
    /// (507000) with [`Error::oom`] filled in (rule g of the
    /// [allocation contract](crate::contract::allocation)).
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
    /// `ptr` must be the start of a live allocation, and every use of it must be ordered
    /// before this free (on `stream`, or through events). The emulator checks all of this
    /// and answers a bad pointer with an error; the real runtime cannot, so a bad pointer
    /// there is undefined behaviour on the device. The `mempool` facade's `Buffer` makes
    /// this call for you, safely. The emulator's [checker](crate::contract::checker)
    /// refuses a free that is not ordered after every earlier use.
    ///
    /// # Errors
    ///
    /// An interior, already freed or unknown pointer: `InvalidPointer` (ACL 107000, CUDA 1).
    /// A destroyed or foreign stream: `InvalidHandle` (ACL 107017, CUDA 400).
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
    /// Above the pool size: [`ErrorKind::InvalidParam`](crate::ErrorKind::InvalidParam)
    /// (ACL 507000; CUDA `CUDA_ERROR_INVALID_VALUE`, 1). Below USED, where the backend
    /// refuses it (see below): `InvalidParam` (ACL 507000).
    ///
    /// # Portability
    ///
    /// A target below USED is CANN's refusal and CUDA's partial release: the Ascend
    /// backend passes the call to the runtime, and the emulator's Ascend profiles
    /// (`documented`, `cann-open`) refuse it; the CUDA backend passes it to the driver,
    /// which releases what it can, and so does the emulator's `cuda` profile.
    fn trim_to(&self, min_bytes_to_keep: u64) -> Result<()>;

    /// Reads attribute `attr`; the value has the attribute's C width (see the
    /// [attribute contract](crate::contract::attributes)).
    ///
    /// # Errors
    ///
    /// Unknown id: `UnknownAttribute` (ACL 107000, CUDA 1). Destroyed pool: `InvalidHandle` (ACL 107000, CUDA 400).
    fn get_attr_raw(&self, attr: AttrId) -> Result<RawAttrValue>;

    /// Writes attribute `attr`, checking every rule of the
    /// [attribute contract](crate::contract::attributes) at run time.
    ///
    /// # Errors
    ///
    /// See [`AttrId::check_write`].
    fn set_attr_raw(&self, attr: AttrId, value: RawAttrValue) -> Result<()>;

    /// The pool's size in bytes (`max_size` after rounding; see the
    /// [property contract](crate::contract::properties)).
    fn size(&self) -> u64;

    /// The four statistics counters (attributes 5-8) as one snapshot, read at one instant,
    /// so that `reserved_current >= used_current` holds in every answer (see
    /// [statistics and lifetime](crate::contract::statistics)).
    /// [`MemPoolExt::stats`] calls it.
    ///
    /// The provided method reads the four attributes one after the other through
    /// [`MemPool::get_attr_raw`]: a backend whose pool can change between two reads (another
    /// thread allocating, freeing or trimming) may then answer counters of different
    /// instants. Backends that can read them at once override it; the emulator reads them
    /// under its pool lock. The Ascend backend keeps the four reads, since the runtime has
    /// no call that reads several attributes together.
    ///
    /// # Errors
    ///
    /// As [`MemPool::get_attr_raw`]; a backend answering with the wrong width is
    /// `Internal`.
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
    /// `Internal`.
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
    /// As [`MemPool::set_attr_raw`] (a threshold above the pool size is 507000).
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

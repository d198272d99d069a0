//! The [`Device`] trait: streams, events, synchronization, copies and pool creation.

use crate::error::Result;
use crate::pool::MemPool;
use crate::props::PoolProps;
use crate::ptr::{DevicePtr, HostBuffer};
use std::fmt;

/// Whether the work before an event has completed (`aclrtEventRecordedStatus`; on CUDA the
/// answer of `cuEventQuery`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventStatus {
    /// Work before the event is still pending, or the event was never recorded
    /// (`ACL_EVENT_RECORDED_STATUS_NOT_READY`, whose CANN meaning covers both; CUDA
    /// instead answers success for an event never recorded).
    NotReady,
    /// Work before the event's latest record has completed
    /// (`ACL_EVENT_RECORDED_STATUS_COMPLETE`).
    Complete,
}

/// Whether everything enqueued on a stream has run (`aclrtStreamStatus`; on CUDA the answer
/// of `cuStreamQuery`: success, or `CUDA_ERROR_NOT_READY`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamStatus {
    /// Every operation enqueued on the stream so far has run (`ACL_STREAM_STATUS_COMPLETE`).
    Complete,
    /// At least one enqueued operation has not run yet (`ACL_STREAM_STATUS_NOT_READY`).
    NotReady,
}

/// Device memory totals (`aclrtGetMemInfo`, `cuMemGetInfo_v2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MemInfo {
    /// Bytes not reserved by any pool or synchronous allocation.
    pub free: u64,
    /// The device's memory size.
    pub total: u64,
}

/// A host function enqueued on a stream: runs once, on a runtime thread, when the stream
/// reaches it.
pub type HostFn = Box<dyn FnOnce() + Send + 'static>;

/// One device of a backend, with the stream, event and pool types it hands out.
///
/// Static dispatch: code generic over `D: Device` compiles to direct calls. Handles are
/// cheap `Clone` values; destroying one makes every clone stale, and a stale handle is
/// answered with [`InvalidHandle`](crate::ErrorKind::InvalidHandle), never undefined behaviour.
///
/// # Errors and their codes
///
/// Each method's `# Errors` names the [`ErrorKind`](crate::ErrorKind) to match on
/// ([`Error::kind`](crate::Error::kind)); log [`Error::code`](crate::Error::code). Where a
/// code matters it is given for both numberings:
///
/// - "ACL n" is what the emulator (on every profile, `cuda` included) and the Ascend
///   backend report ([`Vendor::Acl`](crate::Vendor::Acl), the numbers of
///   [`code`](crate::code));
/// - "CUDA `NAME`, m" is the `CUresult` the CUDA backend reports
///   ([`Vendor::Cuda`](crate::Vendor::Cuda)). It stamps the errors it finds itself (a stale
///   handle, a size of 0, a rule of the contract) at its boundary from one kind → code table
///   (`mempool_cuda::result::code_of`).
///
/// An error the runtime or the driver returns keeps the runtime's or the driver's own code,
/// with the kind the backend's `result` module gives that code
/// (`mempool_ascend::result::kind_of`, `mempool_cuda::result::kind_of`). The mock answers
/// whatever the test's expectations say.
///
/// # Stream ordering
///
/// Copies and memsets are enqueued on a stream and run when the stream reaches them. "Ordered
/// after" and "ordered before" below have the one meaning defined in
/// [objects and stream order](crate::contract::objects): later work on the same stream, work
/// on a stream that waited on an event recorded at or after the point, or work enqueued after
/// the host observed the point complete. Whether work has already executed never counts.
/// Every copy and memset owes the following:
///
/// - **After the allocation.** Each device range must lie inside one live allocation, and
///   the copy or memset must be ordered after that allocation
///   ([`MemPool::malloc_async`]). Work on the allocating stream is; work on another stream
///   needs an event recorded after the allocation and a wait on it
///   ([`Device::record_event`], [`Device::stream_wait_event`]).
/// - **Before the free.** The copy or memset must be enqueued before the block's free
///   ([`MemPool::free_async`]), and that free must be ordered after it: free on the same
///   stream, or record an event after the copy and make the freeing stream wait on it.
/// - **Host buffers.** The host side of an asynchronous copy must stay valid until the copy
///   has run. The typed calls take care of it: [`Device::memcpy_h2d_async`] takes its own
///   copy of the source at the call, and [`Device::memcpy_d2h_async`] keeps a handle on the
///   [`HostBuffer`] until it is written. What the caller still owes is not to read the
///   destination buffer before the copy is ordered before the read: after
///   [`Device::synchronize_stream`], [`Device::synchronize_event`] on an event recorded
///   after the copy, [`Device::synchronize_device`], or in a host function enqueued after
///   the copy ([`Device::launch_host_func`]).
/// - **Device memory on both sides.** Both ranges of a device-to-device copy, and the range
///   of a memset, follow the first two rules; a copy that writes device memory read by other
///   streams must itself be ordered before those reads.
///
/// The backends differ in what happens when a program breaks these rules:
///
/// | backend | an unordered or freed range |
/// |---|---|
/// | the emulator | with its checker on (the default), refused at the call by the [stream-order checker](crate::contract::checker): [`StreamOrderViolation`](crate::ErrorKind::StreamOrderViolation) (ACL 107000), nothing enqueued, a message naming the streams and positions involved; a range outside live memory is [`InvalidPointer`](crate::ErrorKind::InvalidPointer) (ACL 107000) |
/// | the Ascend backend | the runtime cannot check stream order: the device reads stale data or corrupts memory, silently and only sometimes |
/// | the CUDA backend | the driver cannot check stream order either: the same silent corruption. Over the project's CPU `libcuda.so.1` (the emulator behind the driver's C calls) the checker refuses the call, and the backend reports it as [`InvalidPointer`](crate::ErrorKind::InvalidPointer) (`CUDA_ERROR_INVALID_VALUE`, 1) with the library's message naming the streams |
/// | the mock | whatever the test's expectations say; nothing is checked |
///
/// Running a program's tests on the emulator with its checker on is how these mistakes
/// are caught at the call; on the device they show up, if at all, as wrong results. The
/// checker does not refuse everything yet (two unordered accesses to the same memory on
/// different streams, for example): see its status note.
///
/// # For backend authors
///
/// Every method documents what the caller owes and what the backend promises; the
/// `mempool-conformance` crate checks the promises.
pub trait Device: Send + Sync {
    /// A stream (`aclrtStream`, `CUstream`): a FIFO queue of work.
    type Stream: Clone + fmt::Debug + Send + Sync;
    /// An event (`aclrtEvent`, `CUevent`): a point recorded on a stream.
    type Event: Clone + fmt::Debug + Send + Sync;
    /// A stream-ordered memory pool on this device.
    type Pool: MemPool<Stream = Self::Stream> + fmt::Debug;

    /// The device id (from 0).
    fn id(&self) -> u32;

    /// The pool allocation granularity in bytes (2 MiB on Ascend; the CUDA backend answers
    /// 2 MiB too, since the driver has no query for a pool's): sizes are rounded up to it
    /// and statistics count rounded bytes (see the
    /// [property contract](crate::contract::properties)).
    fn pool_granularity(&self) -> u64;

    /// Free and total device memory: free is what no pool and no synchronous allocation
    /// has reserved (see the [property contract](crate::contract::properties)).
    ///
    /// # Errors
    ///
    /// Backend failures only: the runtime's or the driver's refusal, with its own code.
    fn mem_info(&self) -> Result<MemInfo>;

    /// Creates a stream. The CUDA backend's is non-blocking (`CU_STREAM_NON_BLOCKING`): it
    /// does not synchronize with the legacy NULL stream.
    ///
    /// # Errors
    ///
    /// Backend failures only: the runtime's or the driver's refusal, with its own code.
    fn create_stream(&self) -> Result<Self::Stream>;

    /// Destroys a stream. Work already enqueued still runs.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL
    /// 107017; CUDA `CUDA_ERROR_INVALID_HANDLE`, 400). The Ascend and CUDA backends answer the
    /// same for a stream they borrow from other code (`Ascend::borrow_stream`,
    /// `Cuda::borrow_stream`), which stays usable (see [loading](crate::contract::loading)).
    fn destroy_stream(&self, stream: &Self::Stream) -> Result<()>;

    /// Blocks until all work enqueued on `stream` so far has run. Pools of the stream's
    /// device (whichever device this handle is) then release cached memory above their
    /// release threshold (see [release and trim](crate::contract::release)).
    ///
    /// On return the host has observed that work complete: work enqueued afterwards is
    /// ordered after it, and blocks freed on `stream` become reusable on any stream (rule b
    /// of the [allocation contract](crate::contract::allocation); see
    /// [objects and stream order](crate::contract::objects) for what the emulator's checker
    /// already takes from it).
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL
    /// 107017; CUDA `CUDA_ERROR_INVALID_HANDLE`, 400). Work that failed on the stream since the
    /// last synchronization: [`AsyncFailure`](crate::ErrorKind::AsyncFailure), with ACL 507000
    /// on the emulator and the driver's code of the failure on the CUDA backend (700, 714-719);
    /// the Ascend backend keeps the runtime's code, which it cannot tell from other internal
    /// errors ([`Internal`](crate::ErrorKind::Internal)). A wait longer than the emulator's
    /// wait time-out: `Internal` (ACL 507000).
    fn synchronize_stream(&self, stream: &Self::Stream) -> Result<()>;

    /// Whether everything enqueued on `stream` so far has run, without blocking.
    ///
    /// # Stream ordering
    ///
    /// An answer of [`StreamStatus::Complete`] is a host observation of the stream, as
    /// [`Device::synchronize_stream`] returning is: work enqueued afterwards is ordered
    /// after everything the stream held at the query (see
    /// [objects and stream order](crate::contract::objects)). It is not a synchronization:
    /// pools release nothing because of it. [`StreamStatus::NotReady`] observes nothing.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL
    /// 107017; CUDA `CUDA_ERROR_INVALID_HANDLE`, 400).
    ///
    /// # Portability
    ///
    /// - On the emulator a complete answer is a host observation: the stream-order checker
    ///   orders everything enqueued afterwards after the stream's work (contract §1). It is
    ///   no synchronization: reuse rule b counts synchronizations only (contract §4). Failed
    ///   work is left to the next synchronization.
    /// - The Ascend backend calls `aclrtStreamQuery`; CANN does not say whether failed work
    ///   on the stream shows in the answer, so failures are left to the next
    ///   synchronization there too.
    /// - The CUDA backend calls `cuStreamQuery`, whose answer reports failed device work (a
    ///   sticky error) at once: [`AsyncFailure`](crate::ErrorKind::AsyncFailure), with the
    ///   driver's code.
    fn query_stream(&self, stream: &Self::Stream) -> Result<StreamStatus>;

    /// Blocks until all work enqueued on every stream of the device has run, then
    /// releases as [`Device::synchronize_stream`] does. The host has then observed every
    /// stream of the device (see [objects and stream order](crate::contract::objects)).
    ///
    /// A stream that fails or does not complete stops nothing: every other stream is still
    /// drained and observed, and the pools still release, before the first error returns.
    ///
    /// # Errors
    ///
    /// Work that failed on a stream since the last synchronization:
    /// [`AsyncFailure`](crate::ErrorKind::AsyncFailure) (codes as for
    /// [`Device::synchronize_stream`]); a stream that did not complete within the emulator's
    /// wait time-out: [`Internal`](crate::ErrorKind::Internal) (ACL 507000).
    ///
    /// # Portability
    ///
    /// - The emulator waits for every stream of the device, as described above.
    /// - The Ascend backend calls `aclrtSynchronizeDevice` in its own context: CANN waits
    ///   for that context's streams, which are all of the instance's; other contexts on the
    ///   device are not covered.
    /// - The CUDA backend calls `cuCtxSynchronize` in the device's primary context, which
    ///   is shared by everything in the process that uses the device through it (other
    ///   instances, the CUDA runtime): it waits for their streams too, and stops at the
    ///   first failure, which the driver reports for the whole context.
    fn synchronize_device(&self) -> Result<()>;

    /// Creates an event (the CUDA backend's with timing, `CU_EVENT_DEFAULT`).
    ///
    /// # Errors
    ///
    /// Backend failures only: the runtime's or the driver's refusal, with its own code.
    fn create_event(&self) -> Result<Self::Event>;

    /// Destroys an event.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign event: [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL
    /// 107017; CUDA `CUDA_ERROR_INVALID_HANDLE`, 400).
    fn destroy_event(&self, event: &Self::Event) -> Result<()>;

    /// Records `event` at the current end of `stream` (replacing an earlier record).
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream or event:
    /// [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL 107017; CUDA
    /// `CUDA_ERROR_INVALID_HANDLE`, 400).
    fn record_event(&self, event: &Self::Event, stream: &Self::Stream) -> Result<()>;

    /// Makes later work on `stream` wait until the work before `event`'s latest record
    /// has run. Waiting on a never-recorded event is a no-op.
    ///
    /// Later work on `stream` is then ordered after the recorded point, and after
    /// everything that point is ordered after: chains of events order streams
    /// transitively (see [objects and stream order](crate::contract::objects)).
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream or event:
    /// [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL 107017; CUDA
    /// `CUDA_ERROR_INVALID_HANDLE`, 400).
    fn stream_wait_event(&self, stream: &Self::Stream, event: &Self::Event) -> Result<()>;

    /// Blocks until the work before `event` has run; then the pools of the device of the
    /// stream it was recorded on (of the event's own device, if never recorded) release as
    /// at stream synchronization (see [release and trim](crate::contract::release)). The
    /// host has then observed the recorded point complete.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign event: [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL
    /// 107017; CUDA `CUDA_ERROR_INVALID_HANDLE`, 400). Work before the event that failed: as
    /// for [`Device::synchronize_stream`].
    fn synchronize_event(&self, event: &Self::Event) -> Result<()>;

    /// Whether the work before `event` has run. Does not count as a synchronization (no
    /// release). An event never recorded is [`EventStatus::NotReady`], as CANN documents
    /// it; the CUDA backend and the emulator's `cuda` profile answer
    /// [`EventStatus::Complete`] for it, as the driver does. In the contract, an answer of
    /// "complete" is a host observation of the point (see
    /// [objects and stream order](crate::contract::objects)).
    ///
    /// # Errors
    ///
    /// A destroyed or foreign event: [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL
    /// 107017; CUDA `CUDA_ERROR_INVALID_HANDLE`, 400).
    fn query_event(&self, event: &Self::Event) -> Result<EventStatus>;

    /// Milliseconds between the completion of `start` and of `end`
    /// (`aclrtEventElapsedTime`, `cuEventElapsedTime`).
    ///
    /// # Errors
    ///
    /// A destroyed or foreign event: [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL
    /// 107017; CUDA `CUDA_ERROR_INVALID_HANDLE`, 400). An event never recorded, or whose work
    /// has not completed: [`NotReady`](crate::ErrorKind::NotReady), with ACL 507000 on the
    /// emulator (CANN answers 507000 for both) and the driver's code on the CUDA backend
    /// (`CUDA_ERROR_INVALID_HANDLE`, 400, for an event never recorded; `CUDA_ERROR_NOT_READY`,
    /// 600, for one not complete). The Ascend backend passes CANN's 507000 on, which it cannot
    /// tell from other internal errors: [`Internal`](crate::ErrorKind::Internal).
    fn event_elapsed_ms(&self, start: &Self::Event, end: &Self::Event) -> Result<f32>;

    /// Creates a pool (see the [property contract](crate::contract::properties)). Its
    /// attributes start at their defaults (see the
    /// [attribute contract](crate::contract::attributes)).
    ///
    /// # Errors
    ///
    /// - Bad properties: those of [`PoolProps::validate`], which the emulator and the CUDA
    ///   backend call ([`InvalidParam`](crate::ErrorKind::InvalidParam): ACL 100000 or
    ///   107000, CUDA `CUDA_ERROR_INVALID_VALUE`, 1;
    ///   [`InvalidDevice`](crate::ErrorKind::InvalidDevice): ACL 107001, CUDA
    ///   `CUDA_ERROR_INVALID_DEVICE`, 101). The Ascend backend passes the properties to the
    ///   runtime, which answers with its own codes (the drop-in library with those of
    ///   `PoolProps::validate`).
    /// - Host memory for the pool that cannot be obtained:
    ///   [`HostAllocation`](crate::ErrorKind::HostAllocation) (ACL 207001). On the CUDA
    ///   backend the driver's `CUDA_ERROR_OUT_OF_MEMORY` (2) is
    ///   [`OutOfMemory`](crate::ErrorKind::OutOfMemory).
    /// - The CUDA backend only: a pool for another device than the instance's:
    ///   `InvalidDevice` (101); a POSIX handle type the device cannot share:
    ///   [`NotSupported`](crate::ErrorKind::NotSupported) (`CUDA_ERROR_NOT_SUPPORTED`, 801).
    fn create_pool(&self, props: &PoolProps) -> Result<Self::Pool>;

    /// Destroys a pool. Live allocations become unknown addresses; memory still used by
    /// queued work is given back only once that work has run (see
    /// [statistics and lifetime](crate::contract::statistics)).
    ///
    /// # Errors
    ///
    /// A pool destroyed before, or foreign: [`InvalidHandle`](crate::ErrorKind::InvalidHandle)
    /// (ACL 507000; CUDA `CUDA_ERROR_INVALID_HANDLE`, 400). The Ascend backend: a failed
    /// synchronization before the destroy (below), with its error; the pool is then not
    /// destroyed. The CUDA backend: a pool it did not create (the device's default or current
    /// pool): [`InvalidParam`](crate::ErrorKind::InvalidParam) (`CUDA_ERROR_INVALID_VALUE`, 1).
    ///
    /// # Portability
    ///
    /// - The emulator keeps a destroyed pool's memory until every stream has passed the
    ///   destroy (not on the `cann-open` profile: see [profiles](crate::contract::profiles)).
    /// - CANN's `aclrtMemPoolDestroy` does not wait for queued work, so the Ascend backend
    ///   synchronizes its context first.
    /// - The CUDA driver keeps the memory of queued work itself, and keeps live allocations
    ///   usable until they are freed (they do not become unknown addresses there); the CUDA
    ///   backend calls `cuMemPoolDestroy` at once.
    fn destroy_pool(&self, pool: &Self::Pool) -> Result<()>;

    /// Copies `src` to device memory at `dst` in stream order. `src` is staged at the
    /// call, so the caller may reuse it at once. An empty `src` enqueues nothing.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL
    /// 107017; CUDA `CUDA_ERROR_INVALID_HANDLE`, 400). A range that is not inside live device
    /// memory, where the emulator, the runtime or the driver can tell:
    /// [`InvalidPointer`](crate::ErrorKind::InvalidPointer) (ACL 107000; CUDA
    /// `CUDA_ERROR_INVALID_VALUE`, 1). On the emulator, a range the stream is not ordered
    /// after, or freed memory: [`StreamOrderViolation`](crate::ErrorKind::StreamOrderViolation)
    /// (ACL 107000). On the Ascend and CUDA backends, no page-locked staging buffer:
    /// [`HostAllocation`](crate::ErrorKind::HostAllocation), with the runtime's or the driver's
    /// code (207001; `CUDA_ERROR_OUT_OF_MEMORY`, 2). A range released before the copy ran:
    /// [`AsyncFailure`](crate::ErrorKind::AsyncFailure), at the next synchronization.
    ///
    /// # Stream ordering
    ///
    /// `[dst, dst + src.len())` must lie inside one live allocation, and this call must be
    /// ordered after that allocation and enqueued before its free, which must be ordered
    /// after it (see the trait's "Stream ordering" and
    /// [objects and stream order](crate::contract::objects)). Work that reads `dst` must be
    /// ordered after this call. The host side costs nothing: the bytes are copied at the
    /// call.
    ///
    /// # Portability
    ///
    /// - With its checker on (the default), the emulator checks the range and the
    ///   ordering when the call is made and refuses an unordered or freed range with
    ///   `StreamOrderViolation` (ACL 107000), enqueueing nothing (with the checker off,
    ///   freed memory is still `InvalidPointer` unless another allocation has taken it). The
    ///   copy itself is queued and runs when the stream reaches it.
    /// - The Ascend and CUDA backends copy `src` into a page-locked staging buffer, from a
    ///   small cache per instance (`aclrtMallocHost` or `cuMemAllocHost_v2` memory;
    ///   `mempool_backend_kit::staging`), queue `aclrtMemcpyAsync` or
    ///   `cuMemcpyHtoDAsync_v2` from it, and queue a host function after the copy that
    ///   gives the buffer back. Both runtimes make an async copy from pageable memory wait
    ///   for the stream; from page-locked memory it stays asynchronous, so the call does
    ///   not wait for the stream's earlier work. The runtime may refuse an address it does
    ///   not know as device memory (`InvalidPointer`), but it cannot check stream order: an
    ///   unordered or freed `dst` is overwritten silently, possibly after another allocation
    ///   took it over.
    /// - The mock does what the test's expectations say and checks nothing.
    fn memcpy_h2d_async(&self, dst: DevicePtr, src: &[u8], stream: &Self::Stream) -> Result<()>;

    /// Copies `dst.len()` bytes from device memory at `src` into `dst` in stream order.
    /// Read `dst` after synchronizing. The length is taken at the call; an empty `dst`
    /// enqueues nothing.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL
    /// 107017; CUDA `CUDA_ERROR_INVALID_HANDLE`, 400). A range that is not inside live device
    /// memory, where the emulator, the runtime or the driver can tell:
    /// [`InvalidPointer`](crate::ErrorKind::InvalidPointer) (ACL 107000; CUDA
    /// `CUDA_ERROR_INVALID_VALUE`, 1). On the emulator, a range the stream is not ordered
    /// after, or freed memory: [`StreamOrderViolation`](crate::ErrorKind::StreamOrderViolation)
    /// (ACL 107000). On the Ascend and CUDA backends, no page-locked staging buffer:
    /// [`HostAllocation`](crate::ErrorKind::HostAllocation), with the runtime's or the driver's
    /// code (207001; `CUDA_ERROR_OUT_OF_MEMORY`, 2). A range released before the copy ran:
    /// [`AsyncFailure`](crate::ErrorKind::AsyncFailure), at the next synchronization.
    ///
    /// # Stream ordering
    ///
    /// `[src, src + dst.len())` must lie inside one live allocation, and this call must be
    /// ordered after that allocation and after the work that wrote the bytes, and be
    /// enqueued before the block's free, which must be ordered after it (see the trait's
    /// "Stream ordering"). The backend keeps a handle on `dst` until the copy has run, so
    /// the buffer cannot disappear under queued work; the caller owes not reading (or
    /// writing) it until the copy is ordered before the read: after
    /// [`Device::synchronize_stream`] on `stream`, [`Device::synchronize_event`] on an
    /// event recorded after the copy, [`Device::synchronize_device`], or in a host function
    /// enqueued after it on `stream`. Before that, `dst` may hold old bytes.
    ///
    /// # Portability
    ///
    /// - With its checker on (the default), the emulator checks the range and the
    ///   ordering when the call is made and refuses an unordered or freed range with
    ///   `StreamOrderViolation` (ACL 107000), enqueueing nothing (with the checker off,
    ///   freed memory is still `InvalidPointer` unless another allocation has taken it). When
    ///   the copy runs it writes `dst` directly.
    /// - The Ascend and CUDA backends copy into a page-locked staging buffer from the same
    ///   cache (`aclrtMemcpyAsync`, `cuMemcpyDtoHAsync_v2`), so the copy stays asynchronous
    ///   and the call does not wait for the stream; a host function queued after the copy
    ///   moves the bytes into `dst` and gives the buffer back. The runtime cannot check
    ///   stream order: an unordered or freed `src` is read silently and yields stale or
    ///   foreign data. `dst` is written only by that host function, so synchronize before
    ///   reading it, as on every backend.
    /// - The mock does what the test's expectations say and checks nothing; it writes
    ///   nothing into `dst` unless the expectation does.
    fn memcpy_d2h_async(&self, dst: &HostBuffer, src: DevicePtr, stream: &Self::Stream) -> Result<()>;

    /// Copies `len` bytes from `src` to `dst`, both device memory, in stream order.
    /// `len == 0` enqueues nothing.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL
    /// 107017; CUDA `CUDA_ERROR_INVALID_HANDLE`, 400). A range that is not inside live device
    /// memory, where the emulator, the runtime or the driver can tell:
    /// [`InvalidPointer`](crate::ErrorKind::InvalidPointer) (ACL 107000; CUDA
    /// `CUDA_ERROR_INVALID_VALUE`, 1). On the emulator, a range the stream is not ordered
    /// after, or freed memory: [`StreamOrderViolation`](crate::ErrorKind::StreamOrderViolation)
    /// (ACL 107000). A length that does not fit in the host's address space:
    /// [`InvalidParam`](crate::ErrorKind::InvalidParam) (ACL 107000; CUDA
    /// `CUDA_ERROR_INVALID_VALUE`, 1). A range released before the copy ran:
    /// [`AsyncFailure`](crate::ErrorKind::AsyncFailure), at the next synchronization.
    ///
    /// # Stream ordering
    ///
    /// Each of `[src, src + len)` and `[dst, dst + len)` must lie inside one live
    /// allocation (the two may be different allocations, of different pools); this call
    /// must be ordered after both allocations and after the work that wrote `src`, and be
    /// enqueued before both frees, which must be ordered after it. Work that reads `dst`
    /// must be ordered after this call (see the trait's "Stream ordering"). The contract
    /// does not define overlapping ranges.
    ///
    /// # Portability
    ///
    /// - With its checker on (the default), the emulator checks both ranges and the
    ///   ordering when the call is made and refuses an unordered or freed range with
    ///   `StreamOrderViolation` (ACL 107000), enqueueing nothing (with the checker off,
    ///   freed memory is still `InvalidPointer` unless another allocation has taken it). It
    ///   copies through a temporary buffer, so overlapping ranges happen to work there.
    /// - The Ascend backend calls `aclrtMemcpyAsync` (device to device), the CUDA backend
    ///   `cuMemcpyDtoDAsync_v2`. Neither runtime can check stream order: it reads stale data
    ///   from an unordered `src`, and an unordered or freed `dst` is overwritten silently.
    /// - The mock does what the test's expectations say and checks nothing.
    fn memcpy_d2d_async(&self, dst: DevicePtr, src: DevicePtr, len: u64, stream: &Self::Stream) -> Result<()>;

    /// Sets `len` bytes at `dst` to `value` in stream order. `len == 0` enqueues nothing.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL
    /// 107017; CUDA `CUDA_ERROR_INVALID_HANDLE`, 400). A range that is not inside live device
    /// memory, where the emulator, the runtime or the driver can tell:
    /// [`InvalidPointer`](crate::ErrorKind::InvalidPointer) (ACL 107000; CUDA
    /// `CUDA_ERROR_INVALID_VALUE`, 1). On the emulator, a range the stream is not ordered
    /// after, or freed memory: [`StreamOrderViolation`](crate::ErrorKind::StreamOrderViolation)
    /// (ACL 107000). A length that does not fit in the host's address space:
    /// [`InvalidParam`](crate::ErrorKind::InvalidParam) (ACL 107000; CUDA
    /// `CUDA_ERROR_INVALID_VALUE`, 1). A range released before the memset ran:
    /// [`AsyncFailure`](crate::ErrorKind::AsyncFailure), at the next synchronization.
    ///
    /// # Stream ordering
    ///
    /// `[dst, dst + len)` must lie inside one live allocation; this call must be ordered
    /// after that allocation and enqueued before its free, which must be ordered after it.
    /// Work that reads `dst` must be ordered after this call (see the trait's "Stream
    /// ordering"). The contract promises nothing about a fresh allocation's contents, so
    /// a memset on the allocating stream right after [`MemPool::malloc_async`] is the
    /// usual way to clear it.
    ///
    /// # Portability
    ///
    /// - With its checker on (the default), the emulator checks the range and the
    ///   ordering when the call is made and refuses an unordered or freed range with
    ///   `StreamOrderViolation` (ACL 107000), enqueueing nothing (with the checker off,
    ///   freed memory is still `InvalidPointer` unless another allocation has taken it).
    /// - The Ascend backend calls `aclrtMemsetAsync`, the CUDA backend `cuMemsetD8Async`.
    ///   Neither runtime can check stream order: an unordered or freed range is overwritten
    ///   silently, possibly after another allocation took it over.
    /// - The mock does what the test's expectations say and checks nothing.
    /// - Through the C ABI, `aclrtMemset` and `aclrtMemsetAsync` take an `int32_t` value
    ///   and write its low byte; `cuMemsetD8Async` takes the byte, as this method does.
    fn memset_async(&self, dst: DevicePtr, value: u8, len: u64, stream: &Self::Stream) -> Result<()>;

    /// Enqueues a host function (`aclrtLaunchHostFunc`, `cuLaunchHostFunc`); later work on
    /// the stream waits for it to return. The function runs on a runtime thread; on CANN the
    /// host functions of one context run one at a time (see the
    /// [C ABI contract](crate::contract::c_abi)), and a CUDA driver thread may serve several
    /// streams, so a function that blocks may hold back those of other streams. CANN
    /// forbids synchronizing inside a host function, CUDA any CUDA call (through a backend
    /// or not): such a call may deadlock or fail.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: [`InvalidHandle`](crate::ErrorKind::InvalidHandle) (ACL
    /// 107017; CUDA `CUDA_ERROR_INVALID_HANDLE`, 400).
    fn launch_host_func(&self, stream: &Self::Stream, f: HostFn) -> Result<()>;

    /// Whether this device can reach `peer`'s memory directly once peer access is enabled
    /// (`aclrtDeviceCanAccessPeer`, `cuDeviceCanAccessPeer`).
    ///
    /// # Errors
    ///
    /// A peer that does not exist: [`InvalidDevice`](crate::ErrorKind::InvalidDevice) (ACL
    /// 107001; CUDA 101). The device itself: ACL refuses it
    /// ([`InvalidParam`](crate::ErrorKind::InvalidParam), 100000), CUDA answers `false`. A
    /// backend without peer access: [`NotSupported`](crate::ErrorKind::NotSupported), which
    /// is also what this default answers.
    fn can_access_peer(&self, peer: u32) -> Result<bool> {
        Err(peer_access_unsupported("can_access_peer", self.id(), peer))
    }

    /// Lets this device reach `peer`'s memory (one direction; `aclrtDeviceEnablePeerAccess`
    /// with this device current, `cuCtxEnablePeerAccess` with the peer's primary context).
    /// A copy between the two devices is then accepted where the backend requires it (the
    /// drop-in ACL library refuses a device-to-device copy between devices without it).
    ///
    /// # Errors
    ///
    /// The device itself: [`InvalidParam`](crate::ErrorKind::InvalidParam) (ACL 100000) or
    /// [`InvalidDevice`](crate::ErrorKind::InvalidDevice) (CUDA 101); a peer that does not
    /// exist: `InvalidDevice`; enabled already: success on ACL, 704
    /// (`CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED`) on CUDA; no peer access:
    /// [`NotSupported`](crate::ErrorKind::NotSupported), the default.
    fn enable_peer_access(&self, peer: u32) -> Result<()> {
        Err(peer_access_unsupported("enable_peer_access", self.id(), peer))
    }

    /// Ends what [`Device::enable_peer_access`] gave (`aclrtDeviceDisablePeerAccess`,
    /// `cuCtxDisablePeerAccess`).
    ///
    /// # Errors
    ///
    /// As [`Device::enable_peer_access`]; not enabled: ACL 507899, CUDA 705
    /// (`CUDA_ERROR_PEER_ACCESS_NOT_ENABLED`).
    fn disable_peer_access(&self, peer: u32) -> Result<()> {
        Err(peer_access_unsupported("disable_peer_access", self.id(), peer))
    }
}

/// What a backend without peer access answers.
fn peer_access_unsupported(op: &'static str, device: u32, peer: u32) -> crate::Error {
    crate::Error::new(
        crate::ErrorKind::NotSupported,
        crate::code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
        op,
        format!("this backend has no peer access (device {device} to device {peer})"),
    )
}

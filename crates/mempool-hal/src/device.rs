//! The [`Device`] trait: streams, events, synchronization, copies and pool creation.

use crate::error::Result;
use crate::pool::MemPool;
use crate::props::PoolProps;
use crate::ptr::{DevicePtr, HostBuffer};
use std::fmt;

/// Whether the work before an event has completed (`aclrtEventRecordedStatus`).
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

/// Device memory totals (`aclrtGetMemInfo`).
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
/// answered with `InvalidHandle` (code 107017), never undefined behaviour.
///
/// # For backend authors
///
/// Every method documents what the caller owes and what the backend promises; the
/// `mempool-conformance` crate checks the promises.
pub trait Device: Send + Sync {
    /// A stream (`aclrtStream`): a FIFO queue of work.
    type Stream: Clone + fmt::Debug + Send + Sync;
    /// An event (`aclrtEvent`): a point recorded on a stream.
    type Event: Clone + fmt::Debug + Send + Sync;
    /// A stream-ordered memory pool on this device.
    type Pool: MemPool<Stream = Self::Stream> + fmt::Debug;

    /// The device id (from 0).
    fn id(&self) -> u32;

    /// The pool allocation granularity in bytes (2 MiB on Ascend): sizes are rounded up
    /// to it and statistics count rounded bytes.
    fn pool_granularity(&self) -> u64;

    /// Free and total device memory.
    ///
    /// # Errors
    ///
    /// Backend failures only.
    fn mem_info(&self) -> Result<MemInfo>;

    /// Creates a stream.
    ///
    /// # Errors
    ///
    /// Backend failures only.
    fn create_stream(&self) -> Result<Self::Stream>;

    /// Destroys a stream. Work already enqueued still runs.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: `InvalidHandle` (107017).
    fn destroy_stream(&self, stream: &Self::Stream) -> Result<()>;

    /// Blocks until all work enqueued on `stream` so far has run. Pools of the device
    /// then release cached memory above their release threshold.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: `InvalidHandle` (107017). Work that failed on the
    /// stream since the last synchronization: `AsyncFailure`.
    fn synchronize_stream(&self, stream: &Self::Stream) -> Result<()>;

    /// Blocks until all work enqueued on every stream of the device has run, then
    /// releases as [`Device::synchronize_stream`] does.
    ///
    /// # Errors
    ///
    /// Work that failed on a stream since the last synchronization: `AsyncFailure`.
    fn synchronize_device(&self) -> Result<()>;

    /// Creates an event.
    ///
    /// # Errors
    ///
    /// Backend failures only.
    fn create_event(&self) -> Result<Self::Event>;

    /// Destroys an event.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign event: `InvalidHandle` (107017).
    fn destroy_event(&self, event: &Self::Event) -> Result<()>;

    /// Records `event` at the current end of `stream` (replacing an earlier record).
    ///
    /// # Errors
    ///
    /// A destroyed or foreign handle: `InvalidHandle` (107017).
    fn record_event(&self, event: &Self::Event, stream: &Self::Stream) -> Result<()>;

    /// Makes later work on `stream` wait until the work before `event`'s latest record
    /// has run. Waiting on a never-recorded event is a no-op.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign handle: `InvalidHandle` (107017).
    fn stream_wait_event(&self, stream: &Self::Stream, event: &Self::Event) -> Result<()>;

    /// Blocks until the work before `event` has run; then pools release as at stream
    /// synchronization.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign event: `InvalidHandle` (107017).
    fn synchronize_event(&self, event: &Self::Event) -> Result<()>;

    /// Whether the work before `event` has run. Does not count as a synchronization. An
    /// event never recorded is [`EventStatus::NotReady`], as CANN documents it.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign event: `InvalidHandle` (107017).
    fn query_event(&self, event: &Self::Event) -> Result<EventStatus>;

    /// Milliseconds between the completion of `start` and of `end`
    /// (`aclrtEventElapsedTime`).
    ///
    /// # Errors
    ///
    /// A destroyed or foreign event: `InvalidHandle` (107017). An event never recorded:
    /// `InvalidParam` (107000). An event whose work has not completed: `NotReady`.
    fn event_elapsed_ms(&self, start: &Self::Event, end: &Self::Event) -> Result<f32>;

    /// Creates a pool.
    ///
    /// # Errors
    ///
    /// See [`PoolProps::validate`]; host memory that cannot be reserved:
    /// `HostAllocation` (207001).
    fn create_pool(&self, props: &PoolProps) -> Result<Self::Pool>;

    /// Destroys a pool. Live allocations become unknown addresses; memory still used by
    /// queued work is given back only once that work has run.
    ///
    /// # Errors
    ///
    /// A pool destroyed before: `InvalidHandle` (507000).
    fn destroy_pool(&self, pool: &Self::Pool) -> Result<()>;

    /// Copies `src` to device memory at `dst` in stream order. `src` is staged at the
    /// call, so the caller may reuse it at once.
    ///
    /// # Errors
    ///
    /// A range that is not inside live device memory: `InvalidPointer` (107000).
    fn memcpy_h2d_async(&self, dst: DevicePtr, src: &[u8], stream: &Self::Stream) -> Result<()>;

    /// Copies `dst.len()` bytes from device memory at `src` into `dst` in stream order.
    /// Read `dst` after synchronizing.
    ///
    /// # Errors
    ///
    /// A range that is not inside live device memory: `InvalidPointer` (107000).
    fn memcpy_d2h_async(&self, dst: &HostBuffer, src: DevicePtr, stream: &Self::Stream) -> Result<()>;

    /// Copies `len` bytes from `src` to `dst`, both device memory, in stream order.
    ///
    /// # Errors
    ///
    /// A range that is not inside live device memory: `InvalidPointer` (107000).
    fn memcpy_d2d_async(&self, dst: DevicePtr, src: DevicePtr, len: u64, stream: &Self::Stream) -> Result<()>;

    /// Sets `len` bytes at `dst` to `value` in stream order.
    ///
    /// # Errors
    ///
    /// A range that is not inside live device memory: `InvalidPointer` (107000).
    fn memset_async(&self, dst: DevicePtr, value: u8, len: u64, stream: &Self::Stream) -> Result<()>;

    /// Enqueues a host function (`aclrtLaunchHostFunc`); later work on the stream waits
    /// for it to return.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: `InvalidHandle` (107017).
    fn launch_host_func(&self, stream: &Self::Stream, f: HostFn) -> Result<()>;
}

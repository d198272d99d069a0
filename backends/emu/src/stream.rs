//! Streams: a queue of work run in order by a worker thread of its own, started when the
//! first real operation is enqueued (a stream that only allocates, frees and records
//! events never needs one, and costs no thread).
//!
//! Every call that orders work (an operation, a free, an event record) takes the next
//! *position* of the stream. Real operations go into the queue; markers (frees, records)
//! only take a position, so the pool's hot path enqueues nothing. A marker has executed
//! once the last real operation before it (`dep_real`) has completed. A free on a pool's
//! fast path takes its marker without the state lock, validated by a sequence number that
//! every change of what a marker reads moves (`stream/published.rs`).
//!
//! In deferred mode the worker runs an operation only when the host has *allowed* its
//! position (by synchronizing or stepping); a wait on another stream allows what it
//! needs there, so synchronizing runs exactly the work the host asked for and its
//! dependencies.
//!
//! Beside this file: `outside.rs` (waits whose end comes from outside the stream's order,
//! and the order they give), `failure.rs` (failing tasks, the failure mode, aborts),
//! `teardown.rs` (destroys and what they leave), `published.rs` (the lock-free markers).

use crate::clock::Clock;
use crate::hostfn::{on_thread_of, panic_message};
use crate::sync::{
    Arc, AtomicBool, AtomicU64, Condvar, Instant, Mutex, MutexGuard, OnceLock, Ordering, PoisonError, Weak, thread,
    thread_local,
};
use mempool_hal::{Error, ErrorKind, Result, code};
use std::collections::VecDeque;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

mod failure;
mod outside;
mod published;
mod teardown;
pub(crate) use failure::Hooks;
pub use failure::{FailureHook, TaskFailure};
pub(crate) use outside::{Await, Joined, OpenWait};
use published::Published;

thread_local! {
    /// On a stream's worker thread, the address of that stream's [`StreamShared`] (0 on
    /// other threads): a wait of work on its own stream can never end.
    static WORKER_OF: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A unit of queued work. It returns an error to report at the next synchronization.
pub(crate) type Work = Box<dyn FnOnce() -> Result<()> + Send + 'static>;

struct Op {
    pos: u64,
    task: Task,
    /// A host function (which may be waiting for its device's host-function thread).
    host_fn: bool,
}

enum Task {
    /// Work to run.
    Run(Work),
    /// A wait for another stream to complete its real operation at a position (an event
    /// wait, or the wait reuse rule e inserts), in slices of the wait timeout.
    Wait(Arc<StreamShared>, u64, Duration),
    /// A wait whose end comes from outside the stream's order (a notification, a word of
    /// memory: `signal.rs`): it returns the order it gives, known only when it ends, which
    /// the stream then takes (and `open`, when its order was not known when it was
    /// enqueued).
    Await(Await, Option<Arc<OpenWait>>),
}

/// What the worker does once its stream is destroyed and has nothing left to run (the
/// destroy does it when the worker never started): the platform forgets the stream
/// (`Platform::add_stream`).
pub(crate) type OnExit = Box<dyn FnOnce(&Arc<StreamShared>) + Send + 'static>;

/// The host-side state of a stream, under one lock.
pub(crate) struct StreamState {
    /// The position of the last real operation enqueued (read with
    /// [`StreamState::last_real`]; changed only in a write section of
    /// [`StreamShared::published`]).
    last_real: u64,
    /// What this stream's tail is ordered after, on other streams. Shared with the frees
    /// and records that snapshot it; replaced, never changed in place, and only by
    /// [`StreamShared::set_clock_locked`].
    clock: Arc<Clock>,
    /// How many entries `clock` may have before a wait prunes it (`Platform::prune`).
    pub(crate) prune_at: usize,
    /// Event time stamps waiting for a position to complete.
    stamps: Vec<(u64, Arc<OnceLock<Instant>>)>,
    ops: VecDeque<Op>,
    /// The position of the host function the worker is running (0 if none).
    running_host_fn: u64,
    /// Deferred mode: the highest position the worker may run.
    allowed: u64,
    closing: bool,
    /// The stream was destroyed by a destroy that discards the work not yet started
    /// ([`StreamShared::close_discarding`]): the worker drops each remaining operation
    /// instead of running it, and counts it complete.
    discard: bool,
    /// A task failed with the failure mode set to stop: the worker drops every operation
    /// until the host takes the failure (a synchronization reports it).
    failed_stop: bool,
    /// The stream was aborted or stopped: the worker drops the operations up to this
    /// position (those queued then).
    drop_through: u64,
    /// The waits queued whose order is not known yet ([`OpenWait`]).
    open_waits: Vec<Arc<OpenWait>>,
    /// The worker thread was started (by the first real operation enqueued).
    worker: bool,
    /// What ends the stream's life in the platform, taken by the worker when it ends, or
    /// by the destroy of a stream whose worker never started.
    on_exit: Option<OnExit>,
}

impl StreamState {
    /// The position of the last real operation enqueued.
    pub(crate) fn last_real(&self) -> u64 {
        self.last_real
    }

    /// What the stream's tail is ordered after, on other streams.
    pub(crate) fn clock(&self) -> &Arc<Clock> {
        &self.clock
    }

    /// The waits queued whose order is not known yet.
    pub(crate) fn open_waits(&self) -> &[Arc<OpenWait>] {
        &self.open_waits
    }
}

/// One stream, shared by its handles, its worker and the pool blocks freed on it. Aligned
/// to a pair of cache lines, so that two streams used by two host threads never share
/// one (their state locks and positions are written on every free).
#[repr(align(128))]
pub(crate) struct StreamShared {
    /// The stream itself, for the worker it starts.
    me: Weak<StreamShared>,
    pub(crate) id: u64,
    pub(crate) device: u32,
    pub(crate) platform: u64,
    /// The last position handed out (operations and markers), raised under the state
    /// lock or by a free's lock-free marker ([`StreamShared::fast_marker`]); allocations
    /// read it without the lock ([`StreamShared::alloc_position`]).
    pos: AtomicU64,
    state: Mutex<StreamState>,
    /// What a lock-free marker reads of `state`, and the sequence number that validates
    /// it (`stream/published.rs`).
    published: Published,
    /// Under the model check only: the position of every real operation enqueued, in
    /// order, against which each lock-free marker's `dep_real` is checked
    /// ([`StreamShared::fast_marker`]).
    #[cfg(loom)]
    real_positions: Mutex<Vec<u64>>,
    work_cv: Condvar,
    /// The position of the last real operation that has completed.
    completed: AtomicU64,
    done_mx: Mutex<()>,
    done_cv: Condvar,
    /// The highest position the host has observed complete.
    host_known: AtomicU64,
    destroyed: AtomicBool,
    /// The stream was destroyed while a wait of its own could not end: the worker dropped
    /// the rest of its work, which never runs (`completed` stays below it).
    abandoned: AtomicBool,
    failure: Mutex<Option<Error>>,
    /// The failure mode: a failing task stops the stream (its later work is dropped until
    /// the host takes the failure).
    stop_on_failure: AtomicBool,
    /// How many waits whose order is not known yet are queued (`StreamState::open_waits`),
    /// read without the lock by a free's fast path.
    open: AtomicU64,
    hooks: Arc<Hooks>,
    /// Tests: the worker sleeps up to this long before each operation.
    delay: Option<WorkerDelay>,
}

/// Random delays of a stream's worker, for tests of timing independence: before each
/// operation the worker sleeps a pseudo-random time below `max`, from a sequence fixed by
/// `seed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WorkerDelay {
    pub(crate) max: Duration,
    pub(crate) seed: u64,
}

impl std::fmt::Debug for StreamShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream").field("id", &self.id).field("device", &self.device).finish()
    }
}

/// A stream of the emulator. Clones name the same stream.
#[derive(Clone)]
pub struct EmuStream {
    pub(crate) shared: Arc<StreamShared>,
}

/// Clones name the same stream: two handles are equal when they name one stream.
impl PartialEq for EmuStream {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl Eq for EmuStream {}

/// Hashes the stream's id (unique within its platform), consistent with equality.
impl std::hash::Hash for EmuStream {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.shared.id.hash(state);
    }
}

impl fmt::Debug for EmuStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.shared, f)
    }
}

impl EmuStream {
    /// The stream's id (unique within its platform, never reused).
    pub fn id(&self) -> u64 {
        self.shared.id
    }

    /// The stream's state, when it is a live stream of the platform with id `platform`.
    ///
    /// # Errors
    ///
    /// A destroyed stream, or one of another platform: `InvalidHandle` (107017).
    pub(crate) fn live(&self, platform: u64, op: &'static str) -> Result<&Arc<StreamShared>> {
        let s = &self.shared;
        if s.platform != platform || s.is_destroyed() {
            return Err(Error::stale_handle(op, format_args!("stream {}", s.id)));
        }
        Ok(s)
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl StreamShared {
    /// Creates a stream. Its worker starts with the first real operation enqueued and
    /// calls `on_exit` when it ends (the stream destroyed and its work done or dropped);
    /// the destroy calls it when no worker was started.
    pub(crate) fn create(
        id: u64,
        device: u32,
        platform: u64,
        deferred: bool,
        delay: Option<WorkerDelay>,
        hooks: Arc<Hooks>,
        on_exit: OnExit,
    ) -> Arc<StreamShared> {
        let clock = Arc::new(Clock::default());
        let published = Published::new(Arc::as_ptr(&clock));
        Arc::new_cyclic(|me| StreamShared {
            me: me.clone(),
            id,
            device,
            platform,
            pos: AtomicU64::new(0),
            published,
            #[cfg(loom)]
            real_positions: Mutex::new(Vec::new()),
            state: Mutex::new(StreamState {
                last_real: 0,
                clock,
                // The first wait that adds an entry prunes, and sets the next length.
                prune_at: 0,
                stamps: Vec::new(),
                ops: VecDeque::new(),
                running_host_fn: 0,
                allowed: if deferred { 0 } else { u64::MAX },
                closing: false,
                discard: false,
                failed_stop: false,
                drop_through: 0,
                open_waits: Vec::new(),
                worker: false,
                on_exit: Some(on_exit),
            }),
            work_cv: Condvar::new(),
            completed: AtomicU64::new(0),
            done_mx: Mutex::new(()),
            done_cv: Condvar::new(),
            host_known: AtomicU64::new(0),
            destroyed: AtomicBool::new(false),
            abandoned: AtomicBool::new(false),
            failure: Mutex::new(None),
            stop_on_failure: AtomicBool::new(false),
            open: AtomicU64::new(0),
            hooks,
            delay,
        })
    }

    /// Starts the worker thread, under the state lock (so that a destroy, under the same
    /// lock, either sees it started or ends the stream itself).
    ///
    /// # Errors
    ///
    /// The thread cannot be started: `HostAllocation` (207001); nothing changes, and the
    /// next real operation tries again.
    fn start_worker(&self, st: &mut StreamState) -> Result<()> {
        let worker = self.me.upgrade().expect("a stream that enqueues is held");
        let main = move || {
            worker.run();
            let on_exit = worker.state().on_exit.take();
            if let Some(f) = on_exit {
                f(&worker);
            }
        };
        thread::Builder::new().name(format!("mempool-emu-stream-{}", self.id)).spawn(main).map_err(|e| {
            Error::new(
                ErrorKind::HostAllocation,
                code::ACL_ERROR_RT_MEMORY_ALLOCATION,
                "enqueue",
                format!("cannot start the worker thread of stream {}: {e}", self.id),
            )
        })?;
        st.worker = true;
        Ok(())
    }

    fn run(&self) {
        WORKER_OF.with(|w| w.set(std::ptr::from_ref(self) as usize));
        let mut rng = self.delay.map(|d| d.seed ^ self.id.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        loop {
            let op = {
                let mut st = lock(&self.state);
                loop {
                    match st.ops.front() {
                        Some(op) if op.pos <= st.allowed => {
                            let drop_it = st.discard || st.failed_stop || op.pos <= st.drop_through;
                            let op = st.ops.pop_front();
                            if drop_it {
                                st.running_host_fn = 0;
                                break op.map(|op| (op, true));
                            }
                            st.running_host_fn = op.as_ref().filter(|op| op.host_fn).map_or(0, |op| op.pos);
                            break op.map(|op| (op, false));
                        }
                        None if st.closing => break None,
                        _ => st = self.work_cv.wait(st).unwrap_or_else(PoisonError::into_inner),
                    }
                }
            };
            let Some((op, discarded)) = op else { return };
            if discarded {
                // Never started, and now never will: dropped (what it held goes with it)
                // and counted complete, so every wait for it ends.
                let pos = op.pos;
                if let Task::Await(_, Some(open)) = &op.task {
                    self.settle(open, None);
                }
                drop(op);
                self.complete(pos);
                continue;
            }
            if let (Some(d), Some(x)) = (self.delay, rng.as_mut()) {
                // xorshift64: a fixed sequence per seed and stream.
                *x ^= *x << 13;
                *x ^= *x >> 7;
                *x ^= *x << 17;
                let max = d.max.as_nanos().max(1) as u64;
                std::thread::sleep(Duration::from_nanos(*x % max));
            }
            let outcome = match op.task {
                Task::Run(work) => catch_unwind(AssertUnwindSafe(work)),
                Task::Wait(src, target, slice) => {
                    if !self.wait_on(&src, target, slice) {
                        self.abandon();
                        return;
                    }
                    Ok(Ok(()))
                }
                Task::Await(wait, open) => {
                    let pos = op.pos;
                    let outcome = catch_unwind(AssertUnwindSafe(move || wait(pos)));
                    let joined = match &outcome {
                        Ok(Ok(j)) => j.clone(),
                        _ => None,
                    };
                    match open {
                        Some(open) => self.settle(&open, joined),
                        None => {
                            if let Some(j) = joined {
                                self.take_order(&j);
                            }
                        }
                    }
                    outcome.map(|r| r.map(|_| ()))
                }
            };
            let failure = match outcome {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(e),
                Err(panic) => Some(Error::new(
                    ErrorKind::AsyncFailure,
                    code::ACL_ERROR_RT_INTERNAL_ERROR,
                    "host_func",
                    format!("work on stream {} panicked: {}", self.id, panic_message(&*panic)),
                )),
            };
            if let Some(e) = failure {
                self.fail(op.pos, e);
            }
            self.complete(op.pos);
        }
    }

    /// The worker's last step for the operation at `pos`: time stamps and `completed`.
    fn complete(&self, pos: u64) {
        {
            // Under the state lock, so an event recorded meanwhile either sees the
            // operation complete or leaves its stamp for this to set.
            let mut st = lock(&self.state);
            st.running_host_fn = 0;
            if !st.stamps.is_empty() {
                let now = Instant::now();
                st.stamps.retain(|(p, stamp)| {
                    if *p <= pos {
                        let _ = stamp.set(now);
                    }
                    *p > pos
                });
            }
            let _g = lock(&self.done_mx);
            self.completed.store(pos, Ordering::Release);
        }
        self.done_cv.notify_all();
    }

    /// The position of the last real operation enqueued, without the state lock (see
    /// `Published::last_real`).
    pub(crate) fn last_real_hint(&self) -> u64 {
        self.published.last_real()
    }

    /// Locks the host-side state.
    pub(crate) fn state(&self) -> MutexGuard<'_, StreamState> {
        lock(&self.state)
    }

    /// Whether the stream was destroyed.
    pub(crate) fn is_destroyed(&self) -> bool {
        self.destroyed.load(Ordering::Acquire)
    }

    /// Position of the last completed real operation.
    pub(crate) fn completed(&self) -> u64 {
        self.completed.load(Ordering::Acquire)
    }

    /// The highest position the host has observed complete.
    pub(crate) fn host_known(&self) -> u64 {
        self.host_known.load(Ordering::Acquire)
    }

    /// Records that the host has observed everything up to `pos` complete.
    pub(crate) fn observe(&self, pos: u64) {
        self.host_known.fetch_max(pos, Ordering::AcqRel);
    }

    /// Enqueues real work under an already held state lock; returns its position.
    ///
    /// # Errors
    ///
    /// The stream was destroyed (by another thread, after the caller's handle check):
    /// `InvalidHandle` (107017); its worker may already have ended, so nothing more may
    /// be queued. The stream's first real operation starts its worker thread: a thread
    /// that cannot be started is `HostAllocation` (207001), and nothing is queued.
    pub(crate) fn push_locked(&self, st: &mut StreamState, work: Work) -> Result<u64> {
        self.push_op_locked(st, Task::Run(work), false)
    }

    /// Enqueues, under an already held state lock, a wait for stream `src` to complete its
    /// real operation at `target`; returns its position.
    ///
    /// The wait ends only when `src` gets there (or this stream is destroyed): work after
    /// it never runs before, and `completed` never passes it before, so nothing ordered
    /// after the wait is executed, observed or released early. A wait that takes longer
    /// than `timeout` fails no work: the host's synchronizations of this stream time out
    /// meanwhile, each with its error, and nothing they would observe is marked complete
    /// (contract §1).
    ///
    /// # Errors
    ///
    /// As [`StreamShared::push_locked`].
    pub(crate) fn push_wait_locked(
        &self,
        st: &mut StreamState,
        src: Arc<StreamShared>,
        target: u64,
        timeout: Duration,
    ) -> Result<u64> {
        self.push_op_locked(st, Task::Wait(src, target, timeout), false)
    }

    fn push_op_locked(&self, st: &mut StreamState, task: Task, host_fn: bool) -> Result<u64> {
        Self::ensure_open(st, self.id)?;
        if !st.worker {
            self.start_worker(st)?;
        }
        let pos = self.published.write(|| {
            let pos = self.take_pos();
            st.last_real = pos;
            self.published.set_last_real(pos);
            #[cfg(loom)]
            lock(&self.real_positions).push(pos);
            pos
        });
        st.ops.push_back(Op { pos, task, host_fn });
        self.work_cv.notify_one();
        Ok(pos)
    }

    /// Enqueues a host function; returns its position.
    pub(crate) fn push_host_fn(&self, work: Work) -> Result<u64> {
        let mut st = self.state();
        self.push_op_locked(&mut st, Task::Run(work), true)
    }

    /// The worker's side of [`StreamShared::push_wait_locked`]: waits for `src` to complete
    /// `target`, in slices of `slice`, until it does (`true`) or this stream is destroyed
    /// (`false`: the wait can then end only by giving up). A `src` whose own work was
    /// dropped never gets there: the worker then only waits for the destroy.
    fn wait_on(&self, src: &StreamShared, target: u64, slice: Duration) -> bool {
        loop {
            if src.wait_for(target, slice, "stream_wait").is_ok() {
                return true;
            }
            let st = self.state();
            if st.closing {
                return false;
            }
            if src.is_abandoned() {
                // `close` wakes the worker.
                drop(self.work_cv.wait_timeout(st, slice).unwrap_or_else(PoisonError::into_inner));
            }
        }
    }

    /// Whether a host function at or before `pos` has still to run or finish.
    fn host_fn_pending_until(&self, pos: u64) -> bool {
        let st = self.state();
        (st.running_host_fn != 0 && st.running_host_fn <= pos)
            || st.ops.iter().take_while(|op| op.pos <= pos).any(|op| op.host_fn)
    }

    fn ensure_open(st: &StreamState, id: u64) -> Result<()> {
        if st.closing {
            return Err(closed(id));
        }
        Ok(())
    }

    /// The next position, under the state lock: in a write section of
    /// [`StreamShared::published`], so that a lock-free marker taking a later position
    /// sees that it overlapped.
    fn next_pos(&self) -> u64 {
        self.published.write(|| self.take_pos())
    }

    /// The next position, inside a write section ([`published::take_position`], as a
    /// lock-free marker takes one).
    fn take_pos(&self) -> u64 {
        published::take_position(&self.pos)
    }

    /// A marker taken without the state lock, for a free whose block holds the clock
    /// `clock` already: `(pos, dep_real)` as [`StreamShared::marker_locked`] returns
    /// them, or `None` when the caller must take the lock (`stream/published.rs`).
    pub(crate) fn fast_marker(&self, clock: *const Clock) -> Option<(u64, u64)> {
        let marker = self.published.marker(&self.pos, &self.destroyed, clock);
        // The model check's witness: the marker's `dep_real` is the last real operation
        // before its position, whatever ran beside it.
        #[cfg(loom)]
        if let Some((pos, dep_real)) = marker {
            let real = lock(&self.real_positions);
            let last = real.iter().rev().find(|&&q| q < pos).copied().unwrap_or(0);
            assert_eq!(dep_real, last, "stream {}: the marker at {pos} names the wrong last real operation", self.id);
        }
        marker
    }

    /// Replaces the stream's clock (the state lock is held): in a write section, so that
    /// lock-free markers see the change.
    pub(crate) fn set_clock_locked(&self, st: &mut StreamState, clock: Arc<Clock>) {
        self.published.write(|| {
            self.published.set_clock(Arc::as_ptr(&clock));
            st.clock = clock;
        });
    }

    /// Has `stamp` set to the time the real operation at `pos` completes (now if it has).
    pub(crate) fn stamp_at_locked(&self, st: &mut StreamState, pos: u64, stamp: Arc<OnceLock<Instant>>) {
        if self.completed() >= pos {
            let _ = stamp.set(Instant::now());
        } else {
            st.stamps.push((pos, stamp));
        }
    }

    /// Takes a marker position (a free or an event record). Returns `(pos, dep_real)`.
    pub(crate) fn marker_locked(&self, st: &mut StreamState) -> Result<(u64, u64)> {
        Self::ensure_open(st, self.id)?;
        Ok((self.next_pos(), st.last_real))
    }

    /// Where an allocation goes, without the state lock or a position of its own: the
    /// last position handed out, which the allocation follows. An allocation depends on
    /// nothing queued before it, and anything recorded after it takes a later position.
    pub(crate) fn alloc_position(&self) -> Result<u64> {
        if self.is_destroyed() {
            return Err(closed(self.id));
        }
        Ok(self.pos.load(Ordering::Acquire))
    }

    /// Lets the worker run everything up to position `pos` (deferred mode).
    pub(crate) fn allow(&self, pos: u64) {
        let mut st = self.state();
        if st.allowed < pos {
            st.allowed = pos;
            self.work_cv.notify_one();
        }
    }

    /// Blocks until the real operation at `pos` (and everything before it) has completed,
    /// allowing it first. Every wait is bounded: after `timeout` it gives up with an
    /// error naming the stream (a host function that never returns, say), so nothing in
    /// the emulator can hang for ever.
    pub(crate) fn wait_for(&self, pos: u64, timeout: Duration, op: &'static str) -> Result<()> {
        if self.completed() >= pos {
            return Ok(());
        }
        if WORKER_OF.with(std::cell::Cell::get) == std::ptr::from_ref(self) as usize {
            return Err(Error::new(
                ErrorKind::Internal,
                code::ACL_ERROR_RT_INTERNAL_ERROR,
                op,
                format!(
                    "work on stream {} waits for that stream to reach position {pos}, which it cannot \
                     while this work runs (a host function synchronizing its own stream deadlocks)",
                    self.id
                ),
            ));
        }
        if on_thread_of(self.platform, self.device) && self.host_fn_pending_until(pos) {
            return Err(Error::new(
                ErrorKind::Internal,
                code::ACL_ERROR_RT_INTERNAL_ERROR,
                op,
                format!(
                    "a host function waits for stream {} to reach position {pos}, which needs a host function of \
                     that stream to run first, on the device's one host-function thread that this host function \
                     holds (a host function synchronizing a stream with a host function before the awaited work \
                     deadlocks)",
                    self.id
                ),
            ));
        }
        self.allow(pos);
        let deadline = Instant::now() + timeout;
        let mut g = lock(&self.done_mx);
        while self.completed.load(Ordering::Acquire) < pos {
            if self.is_abandoned() {
                return Err(Error::new(
                    ErrorKind::Internal,
                    code::ACL_ERROR_RT_INTERNAL_ERROR,
                    op,
                    format!(
                        "stream {} will never reach position {pos}: it was destroyed while it waited for work \
                         that never completed, and the rest of its work was dropped",
                        self.id
                    ),
                ));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::new(
                    ErrorKind::Internal,
                    code::ACL_ERROR_RT_INTERNAL_ERROR,
                    op,
                    format!(
                        "stream {} did not reach position {pos} within {timeout:?} (it is at {}): is a host function blocked?",
                        self.id,
                        self.completed()
                    ),
                ));
            }
            g = self.done_cv.wait_timeout(g, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        Ok(())
    }

    /// Blocks until everything enqueued so far has run; returns the tail position
    /// (markers included), which the caller may then mark as observed.
    pub(crate) fn drain(&self, timeout: Duration, op: &'static str) -> Result<u64> {
        let (tail, last_real) = {
            let st = self.state();
            (self.pos.load(Ordering::Acquire), st.last_real)
        };
        self.wait_for(last_real, timeout, op)?;
        Ok(tail)
    }

    /// [`StreamShared::drain`] for a host synchronization: also returns the stream's
    /// clock at the tail it drained to, read under the same lock (work enqueued while the
    /// drain waits, a wait on another stream say, is not part of what the caller may mark
    /// as observed), with the stream's own entry at a fresh marker position taken then:
    /// everything enqueued on the stream before the synchronization, allocations included,
    /// comes before that marker, and everything after it comes after.
    pub(crate) fn drain_observing(&self, timeout: Duration, op: &'static str) -> Result<(u64, Clock)> {
        let (tail, last_real, clock) = {
            let st = self.state();
            let tail = self.pos.load(Ordering::Acquire);
            let mut clock = (*st.clock).clone();
            clock.raise(self.id, self.next_pos());
            (tail, st.last_real, clock)
        };
        self.wait_for(last_real, timeout, op)?;
        Ok((tail, clock))
    }

    /// Without waiting or letting deferred work run: when everything enqueued so far has
    /// run, the tail position (markers included) and the stream's clock there, read under
    /// one lock, which the caller may mark as observed; `None` while work is pending. As
    /// in [`StreamShared::drain_observing`], the clock's own entry is a fresh marker, so
    /// the observation covers everything enqueued on the stream before the query.
    pub(crate) fn query(&self) -> Option<(u64, Clock)> {
        let st = self.state();
        if self.completed() < st.last_real {
            return None;
        }
        let tail = self.pos.load(Ordering::Acquire);
        let mut clock = (*st.clock).clone();
        clock.raise(self.id, self.next_pos());
        Some((tail, clock))
    }
}

fn closed(id: u64) -> Error {
    Error::stale_handle("enqueue", format_args!("stream {id}"))
}

//! Notifications and value waits: the two waits whose end comes from outside the waiting
//! stream's order (contract §1).
//!
//! - A **notification** ([`EmuNotify`]) is a counter a stream can wait on. A record adds one
//!   when its stream reaches it; a wait takes one, blocking its stream until there is one
//!   to take. Waits take records in order: the n-th wait enqueued takes the n-th record
//!   enqueued, whichever thread enqueues them and in whichever order, so a wait enqueued
//!   before its record (even one the host then synchronizes, with the record enqueued
//!   from another thread) ends when the record runs.
//! - A **value wait** blocks its stream until a 64-bit word of device memory compares as
//!   asked with a value (`>=`, `==`, `&` non-zero, `!(a | b)` non-zero); a value write
//!   writes the word in stream order.
//!
//! An event wait takes the event's state when it is enqueued; these take theirs when they
//! end. **The order they give** (the stream-order checker's view): a wait whose record, or
//! a value write that satisfies it, was enqueued before it gives that point at once, as an
//! event wait would, and the wait also waits for that point to run; a wait enqueued first
//! is *open* and gives the order of what satisfied it when it ends (a notification's
//! record; the last value write to the word, when its value satisfies the wait). Work
//! enqueued behind an open wait is checked when it runs, with that order (a refusal then
//! fails the task). A host write to the watched word (a synchronous copy or memset, a host
//! function) ends a value wait but gives no order.
//!
//! A wait that does not end within its time limit (a notification wait's own, or the
//! platform's wait timeout for a value wait) fails its task.

use crate::clock::Clock;
use crate::device::Emulator;
use crate::pool::access::{CheckedRange, enqueue_touching_at};
use crate::stream::{EmuStream, Joined, StreamShared, lock};
use crate::sync::{Arc, AtomicBool, Condvar, Instant, Mutex, Ordering, PoisonError};
use mempool_hal::{DevicePtr, Error, ErrorKind, Result};
use std::collections::BTreeMap;

use std::fmt;
use std::time::Duration;

/// How a value wait compares the word `w` with its value `v`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueCompare {
    /// `w >= v` (`ACL_STREAM_WAIT_VALUE_GEQ`).
    Geq,
    /// `w == v` (`ACL_STREAM_WAIT_VALUE_EQ`).
    Eq,
    /// `w & v != 0` (`ACL_STREAM_WAIT_VALUE_AND`).
    And,
    /// `!(w | v) != 0` (`ACL_STREAM_WAIT_VALUE_NOR`).
    Nor,
}

impl ValueCompare {
    /// Whether word `w` satisfies a wait for `v`.
    pub fn holds(self, w: u64, v: u64) -> bool {
        match self {
            ValueCompare::Geq => w >= v,
            ValueCompare::Eq => w == v,
            ValueCompare::And => w & v != 0,
            ValueCompare::Nor => !(w | v) != 0,
        }
    }
}

/// A wait's time limit ran out: the task fails with this code (CANN's
/// `ACL_ERROR_RT_TASK_TIMEOUT`).
const WAIT_TIMEOUT: i32 = 107_020;

/// How often a value wait reads its word again when nothing it hears of changed it (a
/// host write changes it silently).
const POLL: Duration = Duration::from_millis(1);

fn timed_out(op: &'static str, what: String) -> Error {
    Error::new(ErrorKind::AsyncFailure, WAIT_TIMEOUT, op, what)
}

/// A record of a notification: where it is, and the order it gives.
struct Pending {
    stream: Arc<StreamShared>,
    pos: u64,
    joined: Joined,
}

#[derive(Default)]
struct NotifyState {
    /// Records enqueued.
    recorded: u64,
    /// Waits enqueued (the n-th takes record n).
    claimed: u64,
    /// Records that have run.
    fired: u64,
    /// The records no wait has taken yet, by number.
    pending: BTreeMap<u64, Pending>,
    /// Numbers whose wait gave up (timed out, or its stream was cut): the next waits take
    /// them first.
    returned: std::collections::BTreeSet<u64>,
}

/// One notification, shared by its handles.
pub(crate) struct NotifyShared {
    id: u64,
    device: u32,
    platform: u64,
    destroyed: AtomicBool,
    state: Mutex<NotifyState>,
    cv: Condvar,
}

/// A notification of the emulator: a counter streams record and wait on (module docs).
/// Clones name the same notification.
#[derive(Clone)]
pub struct EmuNotify {
    shared: Arc<NotifyShared>,
}

impl fmt::Debug for EmuNotify {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notify").field("id", &self.shared.id).field("device", &self.shared.device).finish()
    }
}

impl EmuNotify {
    /// The notification's id (unique within its platform).
    pub fn id(&self) -> u64 {
        self.shared.id
    }

    fn live(&self, platform: u64, op: &'static str) -> Result<&Arc<NotifyShared>> {
        let n = &self.shared;
        if n.platform != platform || n.destroyed.load(Ordering::Acquire) {
            return Err(Error::stale_handle(op, format_args!("notify {}", n.id)));
        }
        Ok(n)
    }
}

/// Joins `j` into the tail of stream `s` (its state is `st`), as an event wait does.
fn join_now(e: &Emulator, s: &StreamShared, st: &mut crate::stream::StreamState, j: &Joined) {
    if let Some(mut clock) = st.clock().merged(&j.clock, j.point) {
        if clock.len() > st.prune_at {
            e.platform.prune(Arc::make_mut(&mut clock));
            st.prune_at = crate::platform::prune_at(clock.len());
        }
        s.set_clock_locked(st, clock);
    }
}

/// The order of a point of `s` at `pos`, whose clock (before it) is `clock`.
fn joined_at(s: &StreamShared, pos: u64, clock: &Arc<Clock>) -> Joined {
    Joined { clock: Arc::clone(clock), point: (s.id, pos) }
}

/// Reads the 64-bit word of `t` (native byte order).
fn read_word(t: &CheckedRange, op: &'static str) -> Result<u64> {
    let mut b = [0u8; 8];
    t.mem.for_each_piece(t.addr, 8, false, op, |done, p, k| {
        // SAFETY: the piece is committed memory pinned for reading, `k` bytes at `p`, and
        // `done + k <= 8`.
        unsafe { std::ptr::copy_nonoverlapping(p.cast_const(), b.as_mut_ptr().add(done), k) }
    })?;
    Ok(u64::from_ne_bytes(b))
}

impl Emulator {
    /// Creates a notification of this device.
    pub fn create_notify(&self) -> EmuNotify {
        let p = &self.platform;
        EmuNotify {
            shared: Arc::new(NotifyShared {
                id: p.next_id(),
                device: self.device,
                platform: p.id,
                destroyed: AtomicBool::new(false),
                state: Mutex::new(NotifyState::default()),
                cv: Condvar::new(),
            }),
        }
    }

    /// Destroys a notification. Waits already queued on it keep it: they end when their
    /// record runs, or time out.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign notification: `InvalidHandle` (107017).
    pub fn destroy_notify(&self, notify: &EmuNotify) -> Result<()> {
        let n = notify.live(self.platform.id, "destroy_notify")?;
        if n.destroyed.swap(true, Ordering::AcqRel) {
            return Err(Error::stale_handle("destroy_notify", format_args!("notify {}", n.id)));
        }
        Ok(())
    }

    /// Records `notify` on `stream`: when the stream reaches this point, the counter goes
    /// up by one.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign notification or stream: `InvalidHandle` (107017).
    pub fn record_notify(&self, notify: &EmuNotify, stream: &EmuStream) -> Result<()> {
        const OP: &str = "record_notify";
        let n = Arc::clone(notify.live(self.platform.id, OP)?);
        let s = stream.live(self.platform.id, OP)?;
        let fire = Arc::clone(&n);
        let mut st = s.state();
        let mut ns = lock(&n.state);
        let number = ns.recorded + 1;
        let pos = s.push_locked(
            &mut st,
            Box::new(move || {
                let mut ns = lock(&fire.state);
                ns.fired = ns.fired.max(number);
                drop(ns);
                fire.cv.notify_all();
                Ok(())
            }),
        )?;
        ns.recorded = number;
        let joined = joined_at(s, pos, st.clock());
        ns.pending.insert(number, Pending { stream: Arc::clone(s), pos, joined });
        Ok(())
    }

    /// Makes `stream` wait until `notify` has a record to take, and takes it (module
    /// docs); `timeout` `None`: no limit of its own (the wait still gives up when the
    /// stream is destroyed, aborted or stopped).
    ///
    /// # Errors
    ///
    /// A destroyed or foreign notification or stream: `InvalidHandle` (107017). A wait
    /// that runs out of time fails its task (107020), reported by the next synchronization.
    pub fn wait_notify(&self, notify: &EmuNotify, stream: &EmuStream, timeout: Option<Duration>) -> Result<()> {
        const OP: &str = "wait_notify";
        let n = Arc::clone(notify.live(self.platform.id, OP)?);
        let s = stream.live(self.platform.id, OP)?;
        let mut st = s.state();
        let mut ns = lock(&n.state);
        let reused = ns.returned.first().copied();
        let number = reused.unwrap_or(ns.claimed + 1);
        // The record this wait takes, when it is enqueued already: its order now.
        let known = ns.pending.get(&number).map(|p| (Arc::clone(&p.stream), p.pos, p.joined.clone()));
        if let Some((_, _, j)) = &known {
            join_now(self, s, &mut st, j);
        }
        let open = known.is_none();
        let allow = known.map(|(rs, rp, _)| (rs, rp));
        let (waiter, slice) = (Arc::downgrade(s), self.timeout());
        let src = Arc::clone(&n);
        s.push_await_locked(
            &mut st,
            Box::new(move |pos| {
                if let Some((rs, rp)) = &allow {
                    // Deferred mode: the record may run now.
                    rs.allow(*rp);
                }
                let start = Instant::now();
                let mut ns = lock(&src.state);
                while ns.fired < number {
                    if waiter.upgrade().is_none_or(|w| w.gives_up(pos)) {
                        ns.returned.insert(number);
                        return Ok(None);
                    }
                    let left = match timeout {
                        Some(t) => {
                            let left = t.saturating_sub(start.elapsed());
                            if left.is_zero() {
                                ns.returned.insert(number);
                                return Err(timed_out(
                                    OP,
                                    format!("notify {} was not recorded within {} ms", src.id, t.as_millis()),
                                ));
                            }
                            left.min(slice)
                        }
                        None => slice,
                    };
                    ns = src
                        .cv
                        .wait_timeout(ns, left.min(Duration::from_millis(50)))
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
                let taken = ns.pending.remove(&number).map(|p| p.joined);
                Ok(if open { taken } else { None })
            }),
            open,
        )?;
        if reused.is_some() {
            ns.returned.remove(&number);
        } else {
            ns.claimed = number;
        }
        Ok(())
    }

    /// Writes the 64-bit `value` (native byte order) to the device word at `ptr`, in
    /// stream order; value waits on the word hear of it.
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: `InvalidHandle` (107017); a word that is not 8
    /// bytes of live device memory the stream may write: as a memset's.
    pub fn value_write(&self, ptr: DevicePtr, value: u64, stream: &EmuStream) -> Result<()> {
        const OP: &str = "value_write";
        let s = stream.live(self.platform.id, OP)?;
        let t = self.range(ptr, 8, true, OP)?;
        let platform = Arc::clone(&self.platform);
        let (addr, mem) = (ptr.addr(), t.mem.clone());
        let number = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let mine = Arc::clone(&number);
        enqueue_touching_at(
            s,
            std::slice::from_ref(&t),
            OP,
            Box::new(move || {
                mem.for_each_piece(addr, 8, true, OP, |done, p, k| {
                    // SAFETY: the piece is committed memory pinned for writing, `k` bytes
                    // at `p`, and `done + k <= 8`.
                    unsafe { std::ptr::copy_nonoverlapping(value.to_ne_bytes().as_ptr().add(done), p, k) }
                })?;
                let words = &platform.words;
                let mut m = lock(&words.map);
                let w = m.entry(addr).or_default();
                let n = mine.load(Ordering::Acquire);
                if let Some((v, _, _, j)) = w.pending.remove(&n) {
                    w.done = w.done.max(n);
                    w.last = Some((v, j));
                }
                drop(m);
                words.cv.notify_all();
                Ok(())
            }),
            |s, st, pos| {
                // Under the stream's state lock: the write's number and order, before it can run.
                let mut m = lock(&self.platform.words.map);
                let w = m.entry(addr).or_default();
                w.enqueued += 1;
                number.store(w.enqueued, Ordering::Release);
                let j = joined_at(s, pos, st.clock());
                w.pending.insert(w.enqueued, (value, Arc::clone(s), pos, j));
            },
        )?;
        Ok(())
    }

    /// Makes `stream` wait until the device word at `ptr` compares with `value` as `cmp`
    /// asks (module docs).
    ///
    /// # Errors
    ///
    /// A destroyed or foreign stream: `InvalidHandle` (107017); a word that is not 8
    /// bytes of live device memory the stream may read: as a copy's. A wait not satisfied
    /// within the platform's wait timeout fails its task (107020).
    pub fn value_wait(&self, ptr: DevicePtr, value: u64, cmp: ValueCompare, stream: &EmuStream) -> Result<()> {
        const OP: &str = "value_wait";
        let s = stream.live(self.platform.id, OP)?;
        let t = self.range(ptr, 8, false, OP)?;
        let addr = ptr.addr();
        let platform = Arc::clone(&self.platform);
        let limit = self.timeout();
        let (waiter, word) = (Arc::downgrade(s), t.clone());
        // Checked as a read of the word; the wait itself runs as an open or known wait.
        crate::pool::access::check_enqueue(s, std::slice::from_ref(&t), OP, |st| {
            // The latest value write enqueued whose value satisfies the wait: its order now.
            let known = {
                let m = lock(&self.platform.words.map);
                m.get(&addr).and_then(|w| {
                    let pending = w.pending.iter().rev().find(|(_, (v, ..))| cmp.holds(*v, value));
                    match pending {
                        Some((n, (_, rs, rp, j))) => Some((Some((*n, Arc::clone(rs), *rp)), j.clone())),
                        None => w.last.as_ref().filter(|(v, _)| cmp.holds(*v, value)).map(|(_, j)| (None, j.clone())),
                    }
                })
            };
            if let Some((_, j)) = &known {
                join_now(self, s, st, j);
            }
            let open = known.is_none();
            let after = known.and_then(|(a, _)| a);
            s.push_await_locked(
                st,
                Box::new(move |pos| {
                    if let Some((_, rs, rp)) = &after {
                        rs.allow(*rp);
                    }
                    let words = &platform.words;
                    let deadline = Instant::now() + limit;
                    loop {
                        let written = after.as_ref().is_none_or(|(n, ..)| lock(&words.map).get(&addr).is_some_and(|w| w.done >= *n));
                        if written && cmp.holds(read_word(&word, OP)?, value) {
                            break;
                        }
                        if waiter.upgrade().is_none_or(|w| w.gives_up(pos)) {
                            return Ok(None);
                        }
                        let left = deadline.saturating_duration_since(Instant::now());
                        if left.is_zero() {
                            return Err(timed_out(
                                OP,
                                format!(
                                    "the word at {addr:#x} did not satisfy the wait ({cmp:?} {value:#x}) within {limit:?}"
                                ),
                            ));
                        }
                        let m = lock(&words.map);
                        drop(words.cv.wait_timeout(m, left.min(POLL)).unwrap_or_else(PoisonError::into_inner));
                    }
                    if !open {
                        return Ok(None);
                    }
                    let m = lock(&words.map);
                    Ok(m.get(&addr).and_then(|w| w.last.as_ref()).filter(|(v, _)| cmp.holds(*v, value)).map(|(_, j)| j.clone()))
                }),
                open,
            )
        })
    }
}

//! Callbacks run by a subscribed thread: `aclrtSubscribeReport`, `aclrtLaunchCallback`,
//! `aclrtProcessReport`, `aclrtUnSubscribeReport`.
//!
//! A stream is subscribed by at most one thread, named by its `pthread_t` as the caller
//! passes it. A callback launched on a subscribed stream is queued work: when the stream
//! reaches it, it becomes a report in the subscriber's queue, and the stream goes on at
//! once (`ACL_CALLBACK_NO_BLOCK`) or waits until the subscriber has run it
//! (`ACL_CALLBACK_BLOCK`). The subscriber runs one report per `aclrtProcessReport` call,
//! on its own thread.

use crate::ffi::err;
use mempool_ascend::sys;
use mempool_hal::Result;
use std::collections::{HashMap, VecDeque};
use std::ffi::c_void;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

// SAFETY: `pthread_self` has this signature on the supported (LP64 POSIX) targets,
// `pthread_t` being pointer-sized there; it has no preconditions and cannot fail.
unsafe extern "C" {
    safe fn pthread_self() -> usize;
}

/// The calling thread's id, as a C program gets it from `pthread_self()`.
pub(crate) fn thread_id() -> u64 {
    pthread_self() as u64
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A callback and its argument, made `Send`: the C caller guarantees the argument may be
/// used from the subscribed thread (the ACL contract).
#[derive(Clone, Copy)]
pub(crate) struct Callback {
    pub(crate) func: unsafe extern "C" fn(*mut c_void),
    pub(crate) data: *mut c_void,
}
// SAFETY: the pointer is only handed back to the C function it was given for, on the
// thread the C program subscribed for it; the C caller owns its thread safety.
unsafe impl Send for Callback {}

/// A report waiting for its subscriber; `done` is set once it has run (blocking callbacks).
struct Report {
    cb: Callback,
    done: Option<Arc<Done>>,
}

/// Completion of one blocking callback.
#[derive(Default)]
pub(crate) struct Done {
    ran: Mutex<bool>,
    cv: Condvar,
}

impl Done {
    fn set(&self) {
        *lock(&self.ran) = true;
        self.cv.notify_all();
    }

    /// Waits until the callback has run, for at most `limit` (the emulator bounds every
    /// wait, so an abandoned subscriber cannot hang a stream for ever).
    pub(crate) fn wait(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        let mut ran = lock(&self.ran);
        while !*ran {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            ran = self.cv.wait_timeout(ran, left).unwrap_or_else(PoisonError::into_inner).0;
        }
    }
}

/// One subscribed thread: its queue of reports and how many streams it holds.
#[derive(Default)]
struct Queue {
    reports: Mutex<VecDeque<Report>>,
    cv: Condvar,
}

#[derive(Default)]
struct Subs {
    /// (device, stream handle) → subscribing thread.
    by_stream: HashMap<(u32, usize), u64>,
    /// Thread → (queue, number of streams subscribed).
    threads: HashMap<u64, (Arc<Queue>, usize)>,
}

impl Subs {
    /// Ends the subscription of `stream` of `device`, if any; a thread left with no
    /// stream and no report is forgotten.
    fn release(&mut self, device: u32, stream: usize) {
        if let Some(thread) = self.by_stream.remove(&(device, stream))
            && let Some(entry) = self.threads.get_mut(&thread)
        {
            entry.1 -= 1;
            if entry.1 == 0 && lock(&entry.0.reports).is_empty() {
                self.threads.remove(&thread);
            }
        }
    }
}

/// Every subscription of the process.
#[derive(Default)]
pub(crate) struct Reports {
    subs: Mutex<Subs>,
}

/// Where a launched callback goes: the subscriber's queue.
pub(crate) struct Target(Arc<Queue>);

impl Target {
    /// Posts `cb` to the subscriber; for a blocking callback, returns what to wait on.
    pub(crate) fn post(&self, cb: Callback, block: bool) -> Option<Arc<Done>> {
        let done = block.then(|| Arc::new(Done::default()));
        lock(&self.0.reports).push_back(Report { cb, done: done.clone() });
        self.0.cv.notify_all();
        done
    }
}

impl Reports {
    /// Refuses a host function on `stream` of `device` while a thread subscribed it
    /// (107011, `ACL_ERROR_RT_STREAM_SUBSCRIBE`): CANN runs host functions through its own
    /// subscription of the stream, which a user subscription excludes.
    pub(crate) fn refuse_subscribed(&self, device: u32, stream: usize, op: &'static str) -> Result<()> {
        match lock(&self.subs).by_stream.get(&(device, stream)) {
            Some(t) => Err(err(
                sys::ACL_ERROR_RT_STREAM_SUBSCRIBE,
                op,
                format!(
                    "stream {stream:#x} is subscribed for callbacks by thread {t:#x} (aclrtSubscribeReport): use \
                     aclrtLaunchCallback on it, or aclrtLaunchHostFunc on a stream nobody subscribed"
                ),
            )),
            None => Ok(()),
        }
    }

    /// Subscribes `stream` of `device` to `thread`.
    pub(crate) fn subscribe(&self, thread: u64, device: u32, stream: usize, op: &'static str) -> Result<()> {
        let mut s = lock(&self.subs);
        if let Some(t) = s.by_stream.get(&(device, stream)) {
            return Err(err(
                sys::ACL_ERROR_RT_STREAM_SUBSCRIBE,
                op,
                format!("stream {stream:#x} is already subscribed by thread {t:#x}"),
            ));
        }
        s.by_stream.insert((device, stream), thread);
        s.threads.entry(thread).or_default().1 += 1;
        Ok(())
    }

    /// Ends the subscription of `stream` of `device` by `thread`. Reports already queued
    /// stay for the thread to process.
    pub(crate) fn unsubscribe(&self, thread: u64, device: u32, stream: usize, op: &'static str) -> Result<()> {
        let mut s = lock(&self.subs);
        if s.by_stream.get(&(device, stream)) != Some(&thread) {
            return Err(err(
                sys::ACL_ERROR_RT_STREAM_SUBSCRIBE,
                op,
                format!("stream {stream:#x} is not subscribed by thread {thread:#x}"),
            ));
        }
        s.release(device, stream);
        Ok(())
    }

    /// Ends any subscription of `stream` of `device` (the stream is being destroyed).
    /// Reports already queued stay for the thread to process.
    pub(crate) fn forget(&self, device: u32, stream: usize) {
        lock(&self.subs).release(device, stream);
    }

    /// The subscriber of `stream` of `device`.
    pub(crate) fn target(&self, device: u32, stream: usize, op: &'static str) -> Result<Target> {
        let s = lock(&self.subs);
        let queue =
            s.by_stream.get(&(device, stream)).and_then(|t| s.threads.get(t)).map(|(q, _)| Arc::clone(q)).ok_or_else(
                || {
                    err(
                        sys::ACL_ERROR_RT_STREAM_NO_CB_REG,
                        op,
                        format!("no thread subscribed stream {stream:#x} (aclrtSubscribeReport)"),
                    )
                },
            )?;
        Ok(Target(queue))
    }

    /// Runs the next report of the calling thread, waiting for one up to `timeout`
    /// (`None`: as long as it takes).
    pub(crate) fn process(&self, timeout: Option<Duration>, op: &'static str) -> Result<()> {
        let me = thread_id();
        let queue = lock(&self.subs).threads.get(&me).map(|(q, _)| Arc::clone(q)).ok_or_else(|| {
            err(
                sys::ACL_ERROR_RT_THREAD_SUBSCRIBE,
                op,
                format!("thread {me:#x} subscribed no stream (aclrtSubscribeReport)"),
            )
        })?;
        let deadline = timeout.map(|t| Instant::now() + t);
        let report = {
            let mut q = lock(&queue.reports);
            loop {
                if let Some(r) = q.pop_front() {
                    break r;
                }
                match deadline {
                    None => q = queue.cv.wait(q).unwrap_or_else(PoisonError::into_inner),
                    Some(d) => {
                        let left = d.saturating_duration_since(Instant::now());
                        if left.is_zero() {
                            return Err(err(
                                sys::ACL_ERROR_RT_REPORT_TIMEOUT,
                                op,
                                format!("no callback arrived within {} ms", timeout.unwrap_or_default().as_millis()),
                            ));
                        }
                        q = queue.cv.wait_timeout(q, left).unwrap_or_else(PoisonError::into_inner).0;
                    }
                }
            }
        };
        /// Marks a blocking callback done even if it unwinds.
        struct Finish(Option<Arc<Done>>);
        impl Drop for Finish {
            fn drop(&mut self) {
                if let Some(d) = &self.0 {
                    d.set();
                }
            }
        }
        let _finish = Finish(report.done);
        // SAFETY: the C caller launched `func` with `data` for exactly this call, to run on
        // the thread it subscribed, which is this one.
        unsafe { (report.cb.func)(report.cb.data) };
        Ok(())
    }
}

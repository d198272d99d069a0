//! Host functions on one thread per device ([`EmulatorBuilder::host_functions_on_one_thread`]):
//! CANN runs every host function of a context on one callback thread, so a host function
//! that blocks holds back the host functions of the context's other streams.
//!
//! A stream's worker hands its host function to its device's thread and waits for it to
//! return (stream order is kept, and the worker's other work, copies, memsets and kernels,
//! never goes through that thread). The thread starts at the device's first host function
//! and ends when the platform and every queued host function are gone.
//!
//! [`EmulatorBuilder::host_functions_on_one_thread`]: crate::EmulatorBuilder::host_functions_on_one_thread

use mempool_hal::{Error, ErrorKind, HostFn, Result, code};
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;

thread_local! {
    /// On a device's host-function thread, `(platform id, device)`; `None` elsewhere.
    static THREAD_OF: Cell<Option<(u64, u32)>> = const { Cell::new(None) };
}

/// One host function and where its outcome goes (a panic's message on failure).
type Job = (HostFn, mpsc::SyncSender<std::result::Result<(), String>>);

/// The sending end of a device's host-function thread.
pub(crate) type HostFnThread = mpsc::Sender<Job>;

/// Whether the calling thread is the host-function thread of `device` of `platform`.
pub(crate) fn on_thread_of(platform: u64, device: u32) -> bool {
    THREAD_OF.with(Cell::get) == Some((platform, device))
}

/// Starts the host-function thread of `device` of `platform`.
pub(crate) fn spawn(platform: u64, device: u32) -> Result<HostFnThread> {
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name(format!("mempool-emu-hostfn-{device}"))
        .spawn(move || {
            THREAD_OF.with(|t| t.set(Some((platform, device))));
            for (f, reply) in rx {
                let outcome = catch_unwind(AssertUnwindSafe(f)).map_err(|p| panic_message(&*p));
                // The worker waiting for it may be gone only if its platform is.
                let _ = reply.send(outcome);
            }
        })
        .map_err(|e| {
            Error::new(
                ErrorKind::HostAllocation,
                code::ACL_ERROR_RT_MEMORY_ALLOCATION,
                "launch_host_func",
                e.to_string(),
            )
        })?;
    Ok(tx)
}

/// Runs `f` on the host-function thread `to` and waits until it has returned; called by
/// the worker of stream `stream`. The wait is as long as the host function takes, as
/// when the worker runs it itself.
pub(crate) fn run_on(to: &HostFnThread, f: HostFn, stream: u64) -> Result<()> {
    let failed = |msg: String| Error::new(ErrorKind::AsyncFailure, code::ACL_ERROR_RT_INTERNAL_ERROR, "host_func", msg);
    let (reply, outcome) = mpsc::sync_channel(1);
    to.send((f, reply)).map_err(|_| failed(format!("the host-function thread of stream {stream} has ended")))?;
    match outcome.recv() {
        Ok(Ok(())) => Ok(()),
        Ok(Err(panic)) => Err(failed(format!("work on stream {stream} panicked: {panic}"))),
        Err(_) => Err(failed(format!("the host-function thread of stream {stream} has ended"))),
    }
}

/// The text of a panic's payload.
pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

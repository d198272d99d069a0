//! The wider runtime surface, called from Rust: run mode, identity, lifecycle codes,
//! counted device set/reset, stream query, timed synchronization, event time stamps and
//! resets, and callbacks run by a report thread.
//!
//! Only `counted_set_and_reset_device` calls `aclrtSetDevice`/`aclrtResetDevice` (the
//! counts are process-wide) and only `lifecycle_codes` calls `aclInit`/`aclFinalize`; the
//! other tests make a context current with `aclrtCreateContext`.
//!
//! The rules it checks: contract §8 (`mempool_hal::contract::c_abi`).

use acl_rt::exports::*;
use mempool_ascend::sys::*;
use mempool_hal::code;
use std::ffi::{CStr, c_void};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

#[allow(dead_code, reason = "this binary uses only part of the shared helpers")]
mod common;
use common::message;

/// Makes a new context of device 0 current on this thread.
fn context() -> aclrtContext {
    let mut c: aclrtContext = null_mut();
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { aclrtCreateContext(&mut c, 0) }, 0, "{}", message());
    c
}

fn stream() -> aclrtStream {
    let mut s: aclrtStream = null_mut();
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { aclrtCreateStream(&mut s) }, 0, "{}", message());
    s
}

/// A host function that holds its stream until the flag it points to is set.
extern "C" fn wait_for_flag(args: *mut c_void) {
    // SAFETY: `args` is the `AtomicBool` of the test, which outlives the stream's work.
    let flag = unsafe { &*(args as *const AtomicBool) };
    for _ in 0..10_000 {
        if flag.load(Ordering::Acquire) {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn run_mode_soc_name_version_and_device() {
    let mut mode = -1;
    let (mut a, mut b, mut c) = (-1, -1, -1);
    // SAFETY: valid out-pointers; the SoC name is a static string.
    unsafe {
        assert_eq!(aclrtGetRunMode(&mut mode), 0);
        assert_eq!(mode, ACL_HOST);
        let soc = format!("mempool-emu-{}", env!("CARGO_PKG_VERSION"));
        assert_eq!(CStr::from_ptr(aclrtGetSocName()).to_str(), Ok(soc.as_str()), "the library's own version");
        assert_eq!(aclrtGetVersion(&mut a, &mut b, &mut c), 0);
        assert_eq!((a, b, c), (1, 17, 0), "the ACL API version, as CANN answers");
    }
    std::thread::spawn(|| {
        let mut d = -1;
        // SAFETY: a valid out-pointer.
        unsafe {
            assert_eq!(aclrtGetDevice(&mut d), code::ACL_ERROR_RT_CONTEXT_NULL);
            context();
            assert_eq!(aclrtGetDevice(&mut d), 0);
        }
        assert_eq!(d, 0);
    })
    .join()
    .unwrap();
}

#[test]
fn lifecycle_codes() {
    let config = std::env::temp_dir().join(format!("acl-runtime-test-{}.json", std::process::id()));
    std::fs::write(&config, "{}").unwrap();
    let config_c = std::ffi::CString::new(config.to_str().unwrap()).unwrap();
    // SAFETY: NUL-terminated strings or null.
    unsafe {
        assert_eq!(aclFinalize(), 0, "a first finalize before any init");
        assert_eq!(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
        assert_eq!(aclInit(c"/nonexistent/acl.json".as_ptr()), ACL_ERROR_INVALID_FILE);
        assert!(message().starts_with("aclInit: "), "{}", message());
        assert_eq!(aclInit(c"/tmp".as_ptr()), ACL_ERROR_INVALID_FILE, "a directory");
        assert_eq!(aclInit(config_c.as_ptr()), 0);
        assert_eq!(aclInit(std::ptr::null()), ACL_ERROR_REPEAT_INITIALIZE);
        assert_eq!(last_error_code(), ACL_ERROR_REPEAT_INITIALIZE);
        assert_eq!(aclFinalize(), 0);
        assert_eq!(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
        assert_eq!(aclInit(c"".as_ptr()), 0, "an empty path is no configuration");
        assert_eq!(aclFinalize(), 0);
    }
    let _ = std::fs::remove_file(config);
}

/// `aclrtGetLastError` of this thread.
fn last_error_code() -> aclError {
    // SAFETY: takes an integer only.
    unsafe { aclrtGetLastError(ACL_RT_THREAD_LEVEL) }
}

#[test]
fn counted_set_and_reset_device() {
    std::thread::spawn(|| {
        let mut d = -1;
        // SAFETY: integers and a valid out-pointer.
        unsafe {
            assert_eq!(aclrtResetDevice(0), ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, "never set");
            assert_eq!(aclrtResetDeviceForce(0), ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, "never set");
            assert_eq!(aclrtSetDevice(0), 0);
            assert_eq!(aclrtSetDevice(0), 0);
            assert_eq!(aclrtGetDevice(&mut d), 0);
            assert_eq!(aclrtResetDevice(0), 0);
            assert_eq!(aclrtResetDevice(0), 0);
            assert_eq!(aclrtResetDevice(0), ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, "each set undone once");
            assert!(message().starts_with("aclrtResetDevice: "), "{}", message());
            for _ in 0..3 {
                assert_eq!(aclrtSetDevice(0), 0);
            }
            assert_eq!(aclrtResetDeviceForce(0), 0, "whatever the count");
            assert_eq!(aclrtGetDevice(&mut d), code::ACL_ERROR_RT_CONTEXT_NULL, "no longer current");
            assert_eq!(aclrtResetDevice(0), ACL_ERROR_RT_CONTEXT_RELEASE_ERROR);
            assert_eq!(aclrtResetDeviceForce(7), code::ACL_ERROR_RT_INVALID_DEVICEID);
        }
    })
    .join()
    .unwrap();
}

#[test]
fn timeouts_answer_507046_and_507047_while_a_stream_is_blocked() {
    context();
    let s = stream();
    let flag = AtomicBool::new(false);
    let mut ev: aclrtEvent = null_mut();
    let mut status = -1;
    let mut ts = 0u64;
    // SAFETY: live handles; `flag` outlives the stream's work (the stream is synchronized
    // before it goes out of scope).
    unsafe {
        assert_eq!(aclrtCreateEventWithFlag(&mut ev, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE), 0);
        assert_eq!(aclrtLaunchHostFunc(s, Some(wait_for_flag), (&raw const flag).cast_mut().cast()), 0);
        assert_eq!(aclrtRecordEvent(ev, s), 0);
        assert_eq!(aclrtStreamQuery(s, &mut status), 0);
        assert_eq!(status, ACL_STREAM_STATUS_NOT_READY);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(s, 30), code::ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
        assert!(message().starts_with("aclrtSynchronizeStreamWithTimeout: "), "{}", message());
        assert_eq!(aclrtSynchronizeEventWithTimeout(ev, 30), code::ACL_ERROR_RT_EVENT_SYNC_TIMEOUT);
        assert_eq!(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), code::ACL_ERROR_RT_EVENT_SYNC_TIMEOUT);
        assert_eq!(aclrtEventGetTimestamp(ev, &mut ts), code::ACL_ERROR_RT_INTERNAL_ERROR, "not reached");
        let before = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_micros() as u64;
        flag.store(true, Ordering::Release);
        assert_eq!(aclrtSynchronizeEventWithTimeout(ev, 10_000), 0);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(s, -1), 0);
        assert_eq!(aclrtStreamQuery(s, &mut status), 0);
        assert_eq!(status, ACL_STREAM_STATUS_COMPLETE);
        assert_eq!(aclrtEventGetTimestamp(ev, &mut ts), 0);
        assert!(ts + 1_000_000 >= before, "the stamp ({ts}) is close to when the flag was set ({before})");
        assert_eq!(aclrtResetEvent(ev, s), 0);
        let mut rec = -1;
        assert_eq!(aclrtQueryEventStatus(ev, &mut rec), 0);
        assert_eq!(rec, ACL_EVENT_RECORDED_STATUS_NOT_READY, "a reset event is as never recorded");
        assert_eq!(aclrtDestroyEvent(ev), 0);
        assert_eq!(aclrtDestroyStreamForce(s), 0);
        assert_eq!(aclrtDestroyStreamForce(s), code::ACL_ERROR_RT_INVALID_HANDLE);
    }
}

#[test]
fn stream_with_config_and_failure_mode() {
    context();
    let mut s: aclrtStream = null_mut();
    // SAFETY: a valid out-pointer and the handle it received.
    unsafe {
        assert_eq!(aclrtCreateStreamWithConfig(&mut s, 0, ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC), 0);
        assert_eq!(aclrtSetStreamFailureMode(s, ACL_CONTINUE_ON_FAILURE), 0);
        assert_eq!(aclrtSetStreamFailureMode(s, ACL_STOP_ON_FAILURE), 0);
        assert_eq!(aclrtSetStreamFailureMode(s, ACL_CONTINUE_ON_FAILURE), code::ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
        assert_eq!(aclrtSynchronizeStreamWithTimeout(s, 1000), 0);
        assert_eq!(aclrtDestroyStream(s), 0);
    }
}

static RUN_ON: AtomicU64 = AtomicU64::new(0);
static RAN: AtomicUsize = AtomicUsize::new(0);

/// A callback: counts itself and notes the thread it ran on.
extern "C" fn count(_: *mut c_void) {
    RUN_ON.store(report_thread_id(), Ordering::Release);
    RAN.fetch_add(1, Ordering::AcqRel);
}

fn report_thread_id() -> u64 {
    // SAFETY: `pthread_self` has this signature on the supported (LP64 POSIX) targets and
    // no preconditions.
    unsafe extern "C" {
        safe fn pthread_self() -> usize;
    }
    pthread_self() as u64
}

#[test]
fn callbacks_run_on_the_subscribed_report_thread() {
    let ctx = context() as usize;
    let s = stream() as usize;
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let worker = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            // SAFETY: a live context; then integers only.
            unsafe {
                assert_eq!(aclrtSetCurrentContext(ctx as aclrtContext), 0);
                assert_eq!(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE, "not subscribed yet");
            }
            tx.send(report_thread_id()).unwrap();
            let mut timeouts = 0;
            while !stop.load(Ordering::Acquire) {
                // SAFETY: takes an integer only.
                match unsafe { aclrtProcessReport(20) } {
                    0 => {}
                    ACL_ERROR_RT_REPORT_TIMEOUT => timeouts += 1,
                    ACL_ERROR_RT_THREAD_SUBSCRIBE => std::thread::sleep(Duration::from_millis(5)),
                    other => panic!("aclrtProcessReport: {other}: {}", message()),
                }
            }
            timeouts
        })
    };
    let tid = rx.recv().unwrap();
    let s = s as aclrtStream;
    // SAFETY: live handles; `count` ignores its argument.
    unsafe {
        assert_eq!(aclrtLaunchCallback(Some(count), null_mut(), ACL_CALLBACK_BLOCK, s), ACL_ERROR_RT_STREAM_NO_CB_REG);
        assert_eq!(aclrtSubscribeReport(tid, s), 0);
        assert_eq!(aclrtSubscribeReport(tid, s), ACL_ERROR_RT_STREAM_SUBSCRIBE, "already subscribed");
        assert_eq!(aclrtLaunchCallback(Some(count), null_mut(), ACL_CALLBACK_BLOCK, s), 0);
        assert_eq!(aclrtSynchronizeStream(s), 0);
        assert_eq!(RAN.load(Ordering::Acquire), 1, "a blocking callback has run when its stream is synchronized");
        assert_eq!(RUN_ON.load(Ordering::Acquire), tid, "on the subscribed thread");
        assert_eq!(aclrtLaunchCallback(Some(count), null_mut(), ACL_CALLBACK_NO_BLOCK, s), 0);
        assert_eq!(aclrtSynchronizeStream(s), 0);
        for _ in 0..1000 {
            if RAN.load(Ordering::Acquire) == 2 {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(RAN.load(Ordering::Acquire), 2, "the non-blocking callback ran too");
        assert_eq!(aclrtUnSubscribeReport(tid + 1, s), ACL_ERROR_RT_STREAM_SUBSCRIBE, "another thread");
        assert_eq!(aclrtUnSubscribeReport(tid, s), 0);
        assert_eq!(aclrtLaunchCallback(Some(count), null_mut(), ACL_CALLBACK_BLOCK, s), ACL_ERROR_RT_STREAM_NO_CB_REG);
    }
    stop.store(true, Ordering::Release);
    worker.join().unwrap();
    // SAFETY: a live stream.
    assert_eq!(unsafe { aclrtDestroyStream(s) }, 0);
}

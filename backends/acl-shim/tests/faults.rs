//! Faults at the library's boundaries, each in a child process of this test binary (the
//! library reads its settings once per process, and a fault must not leak into other
//! tests):
//!
//! - a host function that does not return: a synchronization of its stream gives up after
//!   the wait time-out (`MEMPOOL_EMU_WAIT_TIMEOUT`) with 507000 and a message naming the
//!   stream; the pool and the device's other streams keep working meanwhile, and the
//!   stream catches up once the function returns;
//! - a process that returns from `main` with work queued behind host functions that never
//!   return exits at once: nothing waits for queued work at exit;
//! - a wait time-out that does not parse makes every call answer 507000 naming it.
//!
//! A panicking host function cannot come through the C ABI (a C function does not
//! unwind); the emulator's tests and the workspace's `tests/faults.rs` cover panics.

use acl_rt::exports::*;
use mempool_ascend::sys::*;
use std::ffi::c_void;
use std::process::{Command, Stdio};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

mod common;
use common::{message, props};

/// Set in a child: the test it runs for real.
const CHILD: &str = "MEMPOOL_SHIM_FAULTS_CHILD";
const WAIT_TIMEOUT_MS: u64 = 300;

/// In the parent: runs this binary again for test `name` alone, with `env`, and fails
/// when the child fails or has not exited within `limit` (it is killed then). In the
/// child: runs `body`.
fn in_child(name: &str, env: &[(&str, &str)], limit: Duration, body: impl FnOnce()) {
    if std::env::var(CHILD).as_deref() == Ok(name) {
        body();
        return;
    }
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let mut cmd = Command::new(exe);
    cmd.args([name, "--exact", "--test-threads=1", "--nocapture"]).env(CHILD, name);
    for var in acl_rt::ENV_ALL {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("the child starts");
    // The output is small (one test's), so the pipes do not fill while this polls.
    let status = loop {
        if let Some(st) = child.try_wait().expect("the child's status") {
            break Some(st);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = start.elapsed();
    let out = child.wait_with_output().expect("the child's output");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    println!("--- child {name} ({took:?}):\n{text}");
    let status = status.unwrap_or_else(|| panic!("the child of {name} did not exit within {limit:?} (a hang)"));
    assert!(status.success(), "the child of {name} failed: {status}");
    assert!(text.contains("test result: ok. 1 passed;"), "the child of {name} did not run its test");
}

static GATE: AtomicBool = AtomicBool::new(false);

/// Blocks until `GATE` opens.
extern "C" fn wait_for_gate(_: *mut c_void) {
    while !GATE.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Never returns.
extern "C" fn never_return(_: *mut c_void) {
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

#[test]
fn a_blocked_host_function_is_bounded_by_the_wait_timeout_and_the_stream_recovers() {
    let ms = WAIT_TIMEOUT_MS.to_string();
    in_child(
        "a_blocked_host_function_is_bounded_by_the_wait_timeout_and_the_stream_recovers",
        &[(acl_rt::ENV_WAIT_TIMEOUT, &ms)],
        Duration::from_secs(60),
        blocked_host_function,
    );
}

fn blocked_host_function() {
    // SAFETY: valid out-pointers and props, live handles, host functions that ignore
    // their argument, host buffers of the stated sizes, addresses the library returned.
    unsafe {
        assert_eq!(aclrtSetDevice(0), 0, "{}", message());
        let [mut s, mut other]: [aclrtStream; 2] = [null_mut(); 2];
        assert_eq!(aclrtCreateStream(&mut s), 0);
        assert_eq!(aclrtCreateStream(&mut other), 0);
        let mut pool: aclrtMemPool = null_mut();
        assert_eq!(aclrtMemPoolCreate(&mut pool, &props(0, 64 << 20)), 0, "{}", message());
        let mut p: *mut c_void = null_mut();
        assert_eq!(aclrtMemPoolMallocAsync(&mut p, 4096, pool, s), 0, "{}", message());
        assert_eq!(aclrtLaunchHostFunc(s, Some(wait_for_gate), null_mut()), 0, "{}", message());
        assert_eq!(aclrtMemsetAsync(p, 4096, 3, 4096, s), 0, "{}", message());

        // The synchronization gives up after the wait time-out, naming the stream.
        let t = Instant::now();
        assert_eq!(aclrtSynchronizeStream(s), 507_000);
        let waited = t.elapsed();
        let msg = message();
        assert!(msg.starts_with("aclrtSynchronizeStream: ") && msg.contains("did not reach"), "{msg}");
        assert!(waited >= Duration::from_millis(WAIT_TIMEOUT_MS), "gave up after {waited:?}");
        assert!(waited < Duration::from_secs(20), "bounded by the time-out: {waited:?}");
        let mut st: aclrtStreamStatus = 0;
        assert_eq!(aclrtStreamQuery(s, &mut st), 0);
        assert_eq!(st, ACL_STREAM_STATUS_NOT_READY, "the work is still queued");

        // Meanwhile the pool and the device's other streams work.
        let mut q: *mut c_void = null_mut();
        assert_eq!(aclrtMemPoolMallocAsync(&mut q, 4096, pool, other), 0, "{}", message());
        assert_eq!(aclrtMemsetAsync(q, 4096, 9, 4096, other), 0, "{}", message());
        let mut back = [0u8; 16];
        assert_eq!(aclrtSynchronizeStream(other), 0, "{}", message());
        assert_eq!(aclrtMemcpy(back.as_mut_ptr().cast(), 16, q, 16, ACL_MEMCPY_DEVICE_TO_HOST), 0, "{}", message());
        assert_eq!(back, [9; 16]);
        assert_eq!(aclrtMemPoolFreeAsync(q, other), 0, "{}", message());
        assert_eq!(aclrtSynchronizeStream(other), 0, "{}", message());
        let mut used = 0u64;
        assert_eq!(aclrtMemPoolGetAttr(pool, 7, (&raw mut used).cast()), 0);
        assert_eq!(used, 2 << 20, "only p is in use");

        // Once the host function returns, the stream catches up and keeps working.
        GATE.store(true, Ordering::Release);
        assert_eq!(aclrtSynchronizeStream(s), 0, "{}", message());
        assert_eq!(aclrtMemcpy(back.as_mut_ptr().cast(), 16, p, 16, ACL_MEMCPY_DEVICE_TO_HOST), 0, "{}", message());
        assert_eq!(back, [3; 16], "the memset queued behind the host function ran");
        assert_eq!(aclrtLaunchHostFunc(s, Some(wait_for_gate), null_mut()), 0);
        assert_eq!(aclrtMemPoolFreeAsync(p, s), 0, "{}", message());
        assert_eq!(aclrtSynchronizeStream(s), 0, "{}", message());
        assert_eq!(aclrtMemPoolDestroy(pool), 0);
        assert_eq!(aclrtDestroyStream(s), 0);
        assert_eq!(aclrtDestroyStream(other), 0);
    }
}

#[test]
fn a_process_returning_with_work_queued_exits_at_once() {
    in_child(
        "a_process_returning_with_work_queued_exits_at_once",
        &[],
        // Far below the 60 s any wait of the library may take: a wait at exit shows.
        Duration::from_secs(20),
        work_queued_at_exit,
    );
}

fn work_queued_at_exit() {
    // SAFETY: valid out-pointers and props, live handles, a host function that ignores
    // its argument, addresses the library returned.
    unsafe {
        assert_eq!(aclrtSetDevice(0), 0, "{}", message());
        let mut s: aclrtStream = null_mut();
        assert_eq!(aclrtCreateStream(&mut s), 0);
        let mut pool: aclrtMemPool = null_mut();
        assert_eq!(aclrtMemPoolCreate(&mut pool, &props(0, 64 << 20)), 0, "{}", message());
        let mut p: *mut c_void = null_mut();
        assert_eq!(aclrtMemPoolMallocAsync(&mut p, 4096, pool, s), 0, "{}", message());
        let mut d: *mut c_void = null_mut();
        assert_eq!(aclrtMalloc(&mut d, 4096, ACL_MEM_MALLOC_HUGE_FIRST), 0, "{}", message());
        // Work on `s` and on the null stream, all behind a host function that never
        // returns (the device's one host-function thread runs it; the null stream's
        // host function waits behind it).
        assert_eq!(aclrtLaunchHostFunc(s, Some(never_return), null_mut()), 0, "{}", message());
        assert_eq!(aclrtLaunchHostFunc(null_mut(), Some(never_return), null_mut()), 0, "{}", message());
        assert_eq!(aclrtMemsetAsync(p, 4096, 1, 4096, s), 0, "{}", message());
        assert_eq!(aclrtMemsetAsync(d, 4096, 1, 4096, null_mut()), 0, "{}", message());
        assert_eq!(aclrtMemPoolFreeAsync(p, s), 0, "{}", message());
        let mut st: aclrtStreamStatus = 0;
        assert_eq!(aclrtStreamQuery(s, &mut st), 0);
        assert_eq!(st, ACL_STREAM_STATUS_NOT_READY);
    }
    // `d` stays allocated, `p`'s free is queued: the test returns, then the harness's
    // `main`, and the process must exit now.
}

#[test]
fn a_wait_timeout_that_does_not_parse_is_refused_naming_the_variable() {
    in_child(
        "a_wait_timeout_that_does_not_parse_is_refused_naming_the_variable",
        &[(acl_rt::ENV_WAIT_TIMEOUT, "0")],
        Duration::from_secs(20),
        || {
            // SAFETY: takes an integer only.
            assert_eq!(unsafe { aclrtSetDevice(0) }, 507_000);
            let msg = message();
            assert!(msg.contains(acl_rt::ENV_WAIT_TIMEOUT) && msg.contains("\"0\""), "{msg}");
        },
    );
}

//! Rows for the ordering and failure calls: notifications, value waits, event flags,
//! host-function subscription, stream abort and stop, stream state callbacks, the
//! exception callback and its getters, `aclrtGetErrorVerbose`, `aclrtGetThreadLastTaskId`.

use super::*;

const NOT_CAPTURED: aclError = ACL_ERROR_RT_STREAM_NOT_CAPTURED;
/// What the exception-info getters answer for an info they do not know (as an `aclError`).
const INVALID_INFO: aclError = u32::MAX as aclError;

/// A live notification of device 0, made for one row.
fn notify() -> aclrtNotify {
    let mut n = null_mut();
    // SAFETY: a valid out-pointer.
    check(unsafe { aclrtCreateNotify(&mut n, 0) }, "aclrtCreateNotify");
    n
}

pub(super) fn failure_rows(t: &mut Table) {
    t.add("aclrtCreateNotify", "null notify", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtCreateNotify(null_mut(), 0) }
    });
    t.add("aclrtCreateNotify", "flag 2", RT_PARAM, |_| {
        let mut n = SENTINEL as aclrtNotify;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { aclrtCreateNotify(&mut n, 2) }, n as usize)
    });
    t.add("aclrtDestroyNotify", "null", PARAM, |_| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtDestroyNotify(null_mut()) }
    });
    for (input, h) in bad_handles(Kind::Stream) {
        t.add("aclrtDestroyNotify", input.clone(), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtDestroyNotify(sv(f.h(h))) }
        });
        t.add("aclrtRecordNotify", input.clone(), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { aclrtRecordNotify(sv(f.h(h)), sv(f.s)) }
        });
        t.add("aclrtWaitAndResetNotify", input.clone(), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { aclrtWaitAndResetNotify(sv(f.h(h)), sv(f.s), 1) }
        });
    }
    t.add("aclrtDestroyNotify", "a notification destroyed already", HANDLE, |_| {
        let n = notify();
        // SAFETY: handles are looked up, never dereferenced.
        check(unsafe { aclrtDestroyNotify(n) }, "aclrtDestroyNotify");
        // SAFETY: as above.
        unsafe { aclrtDestroyNotify(n) }
    });
    t.add("aclrtRecordNotify", "null notify", PARAM, |f| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtRecordNotify(null_mut(), sv(f.s)) }
    });
    t.add("aclrtRecordNotify", "a destroyed stream", HANDLE, |f| {
        let n = notify();
        // SAFETY: handles are looked up, never dereferenced.
        let rc = unsafe { aclrtRecordNotify(n, sv(f.dead_stream)) };
        // SAFETY: as above.
        check(unsafe { aclrtDestroyNotify(n) }, "aclrtDestroyNotify");
        rc
    });
    t.add("aclrtRecordNotify", "a stream of another device", STREAM_CONTEXT, |f| {
        let n = notify();
        // SAFETY: handles are looked up, never dereferenced.
        let rc = unsafe { aclrtRecordNotify(n, sv(f.s1)) };
        // SAFETY: as above.
        check(unsafe { aclrtDestroyNotify(n) }, "aclrtDestroyNotify");
        rc
    });
    t.add("aclrtWaitAndResetNotify", "null notify", PARAM, |f| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtWaitAndResetNotify(null_mut(), sv(f.s), 0) }
    });
    t.add("aclrtWaitAndResetNotify", "a destroyed stream", HANDLE, |f| {
        let n = notify();
        // SAFETY: handles are looked up, never dereferenced.
        let rc = unsafe { aclrtWaitAndResetNotify(n, sv(f.dead_stream), 1) };
        // SAFETY: as above.
        check(unsafe { aclrtDestroyNotify(n) }, "aclrtDestroyNotify");
        rc
    });

    for (entry, write) in [("aclrtValueWrite", true), ("aclrtValueWait", false)] {
        let call = move |p: usize, flag: u32, s: usize| {
            // SAFETY: the address is checked by the library, never written outside device memory.
            unsafe {
                if write { aclrtValueWrite(sv(p), 1, flag, sv(s)) } else { aclrtValueWait(sv(p), 1, flag, sv(s)) }
            }
        };
        t.add(entry, "null devAddr", PARAM, move |f| call(0, 0, f.s));
        t.add(entry, "host memory (the stack)", RT_PARAM, move |f| call(f.stack, 0, f.s));
        t.add(entry, "aclrtMallocHost memory", RT_PARAM, move |f| call(f.host, 0, f.s));
        t.add(entry, "freed aclrtMalloc memory", RT_PARAM, move |f| call(f.d_freed, 0, f.s));
        t.add(entry, "a garbage address", RT_PARAM, move |f| call(GARBAGE[0], 0, f.s));
        t.add(entry, "a destroyed stream", HANDLE, move |f| call(f.d, 0, f.dead_stream));
        t.add(entry, if write { "flag 1 (reserved, must be 0)" } else { "flag 4" }, RT_PARAM, move |f| {
            call(f.d, if write { 1 } else { 4 }, f.s)
        });
    }

    t.add("aclrtCreateEventExWithFlag", "null event", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtCreateEventExWithFlag(null_mut(), ACL_EVENT_SYNC) }
    });
    for flag in [0, 0x10, 0x20, 0x41, 0x50, u32::MAX] {
        t.add("aclrtCreateEventExWithFlag", format!("flag {flag:#x}"), RT_PARAM, move |_| {
            let mut e = SENTINEL as aclrtEvent;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { aclrtCreateEventExWithFlag(&mut e, flag) }, e as usize)
        });
    }
    t.add("aclrtRecordEventWithFlag", "null event", PARAM, |f| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtRecordEventWithFlag(null_mut(), sv(f.s), 0) }
    });
    t.add("aclrtRecordEventWithFlag", "flag 2", PARAM, |f| {
        // SAFETY: as above.
        unsafe { aclrtRecordEventWithFlag(sv(f.e_unrecorded), sv(f.s), 2) }
    });
    t.add("aclrtRecordEventWithFlag", "external, on an event not made by the Ex call", FEATURE, |f| {
        // SAFETY: as above.
        unsafe { aclrtRecordEventWithFlag(sv(f.e_unrecorded), sv(f.s), ACL_EVENT_RECORD_EXTERNAL) }
    });
    t.add("aclrtRecordEventWithFlag", "external, on a stream not capturing", NOT_CAPTURED, |f| {
        let mut e = null_mut();
        // SAFETY: a valid out-pointer.
        check(unsafe { aclrtCreateEventExWithFlag(&mut e, ACL_EVENT_SYNC) }, "aclrtCreateEventExWithFlag");
        // SAFETY: handles are looked up, never dereferenced.
        let rc = unsafe { aclrtRecordEventWithFlag(e, sv(f.s), ACL_EVENT_RECORD_EXTERNAL) };
        // SAFETY: as above.
        check(unsafe { aclrtDestroyEvent(e) }, "aclrtDestroyEvent");
        rc
    });
    t.add("aclrtRecordEventWithFlag", "a destroyed stream", HANDLE, |f| {
        // SAFETY: as above.
        unsafe { aclrtRecordEventWithFlag(sv(f.e_unrecorded), sv(f.dead_stream), 0) }
    });
    t.add("aclrtStreamWaitEventWithFlag", "null event", PARAM, |f| {
        // SAFETY: as above.
        unsafe { aclrtStreamWaitEventWithFlag(sv(f.s), null_mut(), 0, 0) }
    });
    t.add("aclrtStreamWaitEventWithFlag", "flag 2", PARAM, |f| {
        // SAFETY: as above.
        unsafe { aclrtStreamWaitEventWithFlag(sv(f.s), sv(f.e), 0, 2) }
    });
    t.add("aclrtStreamWaitEventWithFlag", "external with a timeout", PARAM, |f| {
        // SAFETY: as above.
        unsafe { aclrtStreamWaitEventWithFlag(sv(f.s), sv(f.e), 5, ACL_EVENT_WAIT_EXTERNAL) }
    });
    t.add("aclrtStreamWaitEventWithFlag", "a destroyed event", HANDLE, |f| {
        // SAFETY: as above.
        unsafe { aclrtStreamWaitEventWithFlag(sv(f.s), sv(f.dead_event), 0, 0) }
    });

    t.add("aclrtSubscribeHostFunc", "null stream", RT_PARAM, |_| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtSubscribeHostFunc(1, null_mut()) }
    });
    t.add("aclrtSubscribeHostFunc", "a destroyed stream", HANDLE, |f| {
        // SAFETY: as above.
        unsafe { aclrtSubscribeHostFunc(1, sv(f.dead_stream)) }
    });
    t.add("aclrtUnSubscribeHostFunc", "null stream", RT_PARAM, |_| {
        // SAFETY: as above.
        unsafe { aclrtUnSubscribeHostFunc(1, null_mut()) }
    });
    t.add("aclrtUnSubscribeHostFunc", "a stream nobody subscribed", STREAM_SUBSCRIBE, |f| {
        // SAFETY: as above.
        unsafe { aclrtUnSubscribeHostFunc(1, sv(f.s)) }
    });
    for timeout in [0, -2, i32::MIN] {
        t.add("aclrtProcessHostFunc", format!("timeout {timeout}"), RT_PARAM, move |_| {
            // SAFETY: no pointer arguments.
            unsafe { aclrtProcessHostFunc(timeout) }
        });
    }
    t.add("aclrtProcessHostFunc", "on a thread that subscribed nothing", THREAD_SUBSCRIBE, |_| {
        // SAFETY: no pointer arguments.
        unsafe { aclrtProcessHostFunc(10) }
    });

    for (input, h) in bad_handles(Kind::Stream) {
        t.add("aclrtStreamAbort", input.clone(), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtStreamAbort(sv(f.h(h))) }
        });
        t.add("aclrtStreamStop", input, HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { aclrtStreamStop(sv(f.h(h))) }
        });
    }
    // A stream of its own for each: what an abort or a failed wait leaves reaches the
    // next synchronization of that stream only.
    t.add("aclrtSynchronizeStream", "after aclrtStreamAbort of the stream", ACL_ERROR_RT_STREAM_ABORT, |_| {
        let mut s = null_mut();
        // SAFETY: a valid out-pointer; handles from the shim.
        unsafe {
            check(aclrtCreateStream(&mut s), "aclrtCreateStream");
            check(aclrtStreamAbort(s), "aclrtStreamAbort");
            let rc = aclrtSynchronizeStream(s);
            check(aclrtSynchronizeStream(s), "aclrtSynchronizeStream again");
            check(aclrtDestroyStream(s), "aclrtDestroyStream");
            rc
        }
    });
    t.add(
        "aclrtSynchronizeStream",
        "after a notification wait that ran out of time (1 s)",
        ACL_ERROR_RT_TASK_TIMEOUT,
        |_| {
            let (mut s, n) = (null_mut(), notify());
            // SAFETY: a valid out-pointer; handles from the shim.
            unsafe {
                check(aclrtCreateStream(&mut s), "aclrtCreateStream");
                check(aclrtWaitAndResetNotify(n, s, 1), "aclrtWaitAndResetNotify");
                let rc = aclrtSynchronizeStream(s);
                check(aclrtDestroyStream(s), "aclrtDestroyStream");
                check(aclrtDestroyNotify(n), "aclrtDestroyNotify");
                rc
            }
        },
    );
    t.add("aclrtStreamStop", "null (the default stream)", RT_PARAM, |_| {
        // SAFETY: as above.
        unsafe { aclrtStreamStop(null_mut()) }
    });
    t.add("aclrtStreamAbort", "a stream of another device", STREAM_CONTEXT, |f| {
        // SAFETY: as above.
        unsafe { aclrtStreamAbort(sv(f.s1)) }
    });
    t.add("aclrtRegStreamStateCallback", "null name", PARAM, |_| {
        // SAFETY: a null name, refused before it is read.
        unsafe { aclrtRegStreamStateCallback(std::ptr::null(), None, null_mut()) }
    });
    t.add("aclrtRegStreamStateCallback", "removing a name never registered", OK, |_| {
        // SAFETY: a NUL-terminated name.
        unsafe { aclrtRegStreamStateCallback(c"hostile-never-registered".as_ptr(), None, null_mut()) }
    });

    t.add("aclrtSetExceptionInfoCallback", "null (none)", OK, |_| {
        // SAFETY: no callback to call.
        unsafe { aclrtSetExceptionInfoCallback(None) }
    });
    type Getter = unsafe extern "C" fn(*const aclrtExceptionInfo) -> u32;
    let getters: [(&'static str, Getter); 5] = [
        ("aclrtGetTaskIdFromExceptionInfo", aclrtGetTaskIdFromExceptionInfo),
        ("aclrtGetStreamIdFromExceptionInfo", aclrtGetStreamIdFromExceptionInfo),
        ("aclrtGetThreadIdFromExceptionInfo", aclrtGetThreadIdFromExceptionInfo),
        ("aclrtGetDeviceIdFromExceptionInfo", aclrtGetDeviceIdFromExceptionInfo),
        ("aclrtGetErrorCodeFromExceptionInfo", aclrtGetErrorCodeFromExceptionInfo),
    ];
    for (entry, get) in getters {
        for (input, p) in [("null info", 0usize), ("a garbage info", GARBAGE[0]), ("the stack", 1)] {
            t.add(entry, input, INVALID_INFO, move |f| {
                let p = if p == 1 { f.stack } else { p };
                // SAFETY: the info is compared with the running callback's, never read otherwise.
                unsafe { get(p as *const aclrtExceptionInfo) as aclError }
            });
        }
    }
    t.add("aclrtGetArgsFromExceptionInfo", "null info", INVALID_INFO, |_| {
        let (mut p, mut n) = (null_mut(), 0u32);
        // SAFETY: valid out-pointers; the info is never read.
        unsafe { aclrtGetArgsFromExceptionInfo(std::ptr::null(), &mut p, &mut n) }
    });
    t.add("aclrtGetArgsFromExceptionInfo", "a garbage info", INVALID_INFO, |_| {
        let (mut p, mut n) = (null_mut(), 0u32);
        // SAFETY: as above.
        unsafe { aclrtGetArgsFromExceptionInfo(GARBAGE[0] as *const aclrtExceptionInfo, &mut p, &mut n) }
    });
    t.add("aclrtGetFuncHandleFromExceptionInfo", "null info", INVALID_INFO, |_| {
        let mut h = null_mut();
        // SAFETY: as above.
        unsafe { aclrtGetFuncHandleFromExceptionInfo(std::ptr::null(), &mut h) }
    });
    t.add("aclrtGetErrorVerbose", "null errorInfo", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtGetErrorVerbose(0, null_mut()) }
    });
    for device in [2, -1, i32::MAX] {
        t.add("aclrtGetErrorVerbose", format!("device {device}"), DEVICE_ID, move |_| {
            let mut info = std::mem::MaybeUninit::<aclrtErrorInfo>::zeroed();
            // SAFETY: a valid out-pointer (left alone on refusal).
            unsafe { aclrtGetErrorVerbose(device, info.as_mut_ptr()) }
        });
    }
    t.add("aclrtGetThreadLastTaskId", "null taskId", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtGetThreadLastTaskId(null_mut()) }
    });
}

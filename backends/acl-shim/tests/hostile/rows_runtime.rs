//! Rows for the wider runtime surface: run mode, device, version, SoC name, stream query
//! and configuration, event flags, resets, timed synchronization and time stamps,
//! `aclrtMallocAlign32`, callbacks and report threads, and the last error.

use super::*;

const THREAD_LEVEL: aclrtLastErrLevel = ACL_RT_THREAD_LEVEL;

pub(super) fn runtime_rows(t: &mut Table) {
    t.add("aclrtGetRunMode", "null runMode", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtGetRunMode(null_mut()) }
    });
    t.fresh("aclrtGetRunMode", "without a current device (answers ACL_HOST)", OK, |_| {
        let mut m = -1;
        // SAFETY: a valid out-pointer.
        let rc = unsafe { aclrtGetRunMode(&mut m) };
        assert_eq!(m, ACL_HOST);
        rc
    });
    t.add("aclrtGetDevice", "null deviceId", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtGetDevice(null_mut()) }
    });
    t.fresh("aclrtGetDevice", "without a current device", NO_CONTEXT, |_| {
        let mut d = SENTINEL as i32;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { aclrtGetDevice(&mut d) }, d as usize)
    });
    t.add("aclrtGetDevice", "device 0 current", OK, |_| {
        let mut d = -1;
        // SAFETY: a valid out-pointer.
        let rc = unsafe { aclrtGetDevice(&mut d) };
        assert_eq!(d, 0);
        rc
    });
    for which in 0..3 {
        t.add("aclrtGetVersion", format!("null pointer {which}"), PARAM, move |_| {
            let mut v = [0i32; 3];
            let p = |i: usize, v: &mut [i32; 3]| if i == which { null_mut() } else { &raw mut v[i] };
            // SAFETY: valid out-pointers except the null one, refused before any write.
            unsafe { aclrtGetVersion(p(0, &mut v), p(1, &mut v), p(2, &mut v)) }
        });
    }
    t.fresh("aclrtGetVersion", "without a current device", OK, |_| {
        let (mut a, mut b, mut c) = (-1, -1, -1);
        // SAFETY: valid out-pointers.
        let rc = unsafe { aclrtGetVersion(&mut a, &mut b, &mut c) };
        assert!(a >= 0 && b >= 0 && c >= 0);
        rc
    });
    t.fresh("aclrtGetSocName", "without a current device (a static name)", OK, |_| {
        // SAFETY: takes no arguments; the answer is a static NUL-terminated string.
        let name = unsafe { std::ffi::CStr::from_ptr(aclrtGetSocName()) };
        let want = format!("mempool-emu-{}", env!("CARGO_PKG_VERSION"));
        if name.to_bytes() == want.as_bytes() { OK } else { INTERNAL }
    });
    t.add("aclrtMallocAlign32", "null devPtr", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtMallocAlign32(null_mut(), 16, ACL_MEM_MALLOC_HUGE_FIRST) }
    });
    t.add("aclrtMallocAlign32", "size 0", PARAM, |_| {
        let mut p = SENTINEL as *mut c_void;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { aclrtMallocAlign32(&mut p, 0, ACL_MEM_MALLOC_HUGE_FIRST) }, p as usize)
    });
    t.add("aclrtMallocAlign32", "more than the device holds (207001, as CANN)", HOST_ALLOC, |_| {
        let mut p = SENTINEL as *mut c_void;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { aclrtMallocAlign32(&mut p, DEVICE_MEMORY + GRAN, ACL_MEM_MALLOC_HUGE_FIRST) }, p as usize)
    });
    t.fresh("aclrtMallocAlign32", "without a current device", NO_CONTEXT, |_| {
        let mut p = SENTINEL as *mut c_void;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { aclrtMallocAlign32(&mut p, 16, ACL_MEM_MALLOC_HUGE_FIRST) }, p as usize)
    });
    t.add("aclrtMallocAlign32", "16 bytes (32-byte aligned), then aclrtFree", OK, |_| {
        let mut p: *mut c_void = null_mut();
        // SAFETY: a valid out-pointer, then the address it received.
        unsafe {
            let rc = aclrtMallocAlign32(&mut p, 16, ACL_MEM_MALLOC_HUGE_FIRST);
            assert_eq!(p as usize % 32, 0);
            check(aclrtFree(p), "aclrtFree");
            rc
        }
    });
    for (entry, get) in [("aclrtGetLastError", true), ("aclrtPeekAtLastError", false)] {
        let call = move |level| {
            // SAFETY: takes an integer only.
            unsafe { if get { aclrtGetLastError(level) } else { aclrtPeekAtLastError(level) } }
        };
        for level in [1, -1, i32::MAX] {
            t.add(entry, format!("level {level}"), PARAM, move |_| call(level));
        }
        t.fresh(entry, "after a refused call: its code, then 0 (Get) or the same (Peek)", OK, move |_| {
            assert_eq!(call(THREAD_LEVEL), OK, "nothing failed yet on this thread");
            // SAFETY: a null out-pointer, refused.
            assert_eq!(unsafe { aclrtGetDevice(null_mut()) }, PARAM);
            assert_eq!(call(THREAD_LEVEL), PARAM);
            assert_eq!(call(THREAD_LEVEL), if get { OK } else { PARAM });
            OK
        });
    }
}

pub(super) fn stream_extra_rows(t: &mut Table) {
    t.add("aclrtCreateStreamWithConfig", "null stream", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtCreateStreamWithConfig(null_mut(), 0, 0) }
    });
    t.fresh("aclrtCreateStreamWithConfig", "without a current device", NO_CONTEXT, |_| {
        let mut s = SENTINEL as aclrtStream;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { aclrtCreateStreamWithConfig(&mut s, 0, 0) }, s as usize)
    });
    t.add("aclrtCreateStreamWithConfig", "priority and flags u32::MAX (accepted), then destroyed", OK, |_| {
        let mut s: aclrtStream = null_mut();
        // SAFETY: a valid out-pointer, then the handle it received.
        unsafe {
            let rc = aclrtCreateStreamWithConfig(&mut s, u32::MAX, u32::MAX);
            check(aclrtDestroyStream(s), "destroying it");
            rc
        }
    });
    t.add("aclrtDestroyStreamForce", "null", PARAM, |_| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtDestroyStreamForce(null_mut()) }
    });
    t.add("aclrtDestroyStreamForce", "a stream of another device", STREAM_CONTEXT, |f| {
        // SAFETY: a live handle, checked against the current device.
        unsafe { aclrtDestroyStreamForce(sv(f.s1)) }
    });
    t.fresh("aclrtDestroyStreamForce", "a live stream, without a current device", NO_CONTEXT, |f| {
        // SAFETY: a live handle.
        unsafe { aclrtDestroyStreamForce(sv(f.s)) }
    });
    t.add("aclrtDestroyStreamForce", "a new stream with queued work", OK, |_| {
        let mut s: aclrtStream = null_mut();
        // SAFETY: a valid out-pointer, then the handle it received.
        unsafe {
            check(aclrtCreateStream(&mut s), "a stream");
            check(aclrtLaunchHostFunc(s, Some(ignore_args), null_mut()), "queued work");
            aclrtDestroyStreamForce(s)
        }
    });
    t.add("aclrtStreamQuery", "null status", PARAM, |f| {
        // SAFETY: a live handle and a null out-pointer, refused before any write.
        unsafe { aclrtStreamQuery(sv(f.s), null_mut()) }
    });
    t.fresh("aclrtStreamQuery", "a live stream, without a current device", NO_CONTEXT, |f| {
        let mut st = SENTINEL as aclrtStreamStatus;
        // SAFETY: a live handle and a valid out-pointer.
        untouched(unsafe { aclrtStreamQuery(sv(f.s), &mut st) }, st as usize)
    });
    for (input, h, want) in [("a live stream", H::Live(Kind::Stream), OK), ("null (the default stream)", H::Null, OK)] {
        t.add("aclrtStreamQuery", input, want, move |f| {
            let mut st = -1;
            // SAFETY: a live handle and a valid out-pointer.
            let rc = unsafe { aclrtStreamQuery(sv(f.h(h)), &mut st) };
            assert_eq!(st, ACL_STREAM_STATUS_COMPLETE, "nothing is queued");
            rc
        });
    }
    t.add("aclrtStreamQuery", "a stream of another device (not checked, as on CANN)", OK, |f| {
        let mut st = -1;
        // SAFETY: a live handle and a valid out-pointer.
        unsafe { aclrtStreamQuery(sv(f.s1), &mut st) }
    });
    t.add("aclrtSetStreamFailureMode", "a stream of another device", STREAM_CONTEXT, |f| {
        // SAFETY: a live handle, checked against the current device.
        unsafe { aclrtSetStreamFailureMode(sv(f.s1), ACL_STOP_ON_FAILURE) }
    });
    t.fresh("aclrtSetStreamFailureMode", "without a current device", NO_CONTEXT, |f| {
        // SAFETY: a live handle.
        unsafe { aclrtSetStreamFailureMode(sv(f.s), ACL_STOP_ON_FAILURE) }
    });
    t.add("aclrtSetStreamFailureMode", "null (the default stream), CONTINUE", OK, |_| {
        // SAFETY: null means the default stream.
        unsafe { aclrtSetStreamFailureMode(null_mut(), ACL_CONTINUE_ON_FAILURE) }
    });
    t.add("aclrtSetStreamFailureMode", "a new stream: u64::MAX (bit 0: STOP), then CONTINUE", FEATURE, |_| {
        let mut s: aclrtStream = null_mut();
        // SAFETY: a valid out-pointer, then the handle it received.
        unsafe {
            check(aclrtCreateStream(&mut s), "a stream");
            check(aclrtSetStreamFailureMode(s, u64::MAX), "STOP");
            check(aclrtSetStreamFailureMode(s, ACL_STOP_ON_FAILURE), "STOP again");
            let rc = aclrtSetStreamFailureMode(s, ACL_CONTINUE_ON_FAILURE);
            check(aclrtDestroyStream(s), "destroying it");
            rc
        }
    });
    for timeout in [0, -2, i32::MIN] {
        t.add("aclrtSynchronizeStreamWithTimeout", format!("timeout {timeout}"), RT_PARAM, move |f| {
            // SAFETY: a live handle.
            unsafe { aclrtSynchronizeStreamWithTimeout(sv(f.s), timeout) }
        });
    }
    t.add("aclrtSynchronizeStreamWithTimeout", "a stream of another device (synchronized, as on CANN)", OK, |f| {
        // SAFETY: a live handle.
        unsafe { aclrtSynchronizeStreamWithTimeout(sv(f.s1), 100) }
    });
    t.fresh("aclrtSynchronizeStreamWithTimeout", "without a current device", NO_CONTEXT, |f| {
        // SAFETY: a live handle.
        unsafe { aclrtSynchronizeStreamWithTimeout(sv(f.s), 100) }
    });
    for (input, h, timeout) in
        [("a live stream, -1", H::Live(Kind::Stream), -1), ("null (the default stream), i32::MAX", H::Null, i32::MAX)]
    {
        t.add("aclrtSynchronizeStreamWithTimeout", input, OK, move |f| {
            // SAFETY: a live handle or null.
            unsafe { aclrtSynchronizeStreamWithTimeout(sv(f.h(h)), timeout) }
        });
    }
    for (input, h) in bad_handles(Kind::Stream) {
        t.add("aclrtDestroyStreamForce", input.clone(), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtDestroyStreamForce(sv(f.h(h))) }
        });
        t.add("aclrtStreamQuery", input.clone(), HANDLE, move |f| {
            let mut st = SENTINEL as aclrtStreamStatus;
            // SAFETY: handles are looked up; a valid out-pointer.
            untouched(unsafe { aclrtStreamQuery(sv(f.h(h)), &mut st) }, st as usize)
        });
        t.add("aclrtSetStreamFailureMode", input.clone(), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtSetStreamFailureMode(sv(f.h(h)), ACL_STOP_ON_FAILURE) }
        });
        t.add("aclrtSynchronizeStreamWithTimeout", input.clone(), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtSynchronizeStreamWithTimeout(sv(f.h(h)), 100) }
        });
        t.add("aclrtResetEvent", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtResetEvent(sv(f.e_unrecorded), sv(f.h(h))) }
        });
        t.add("aclrtLaunchCallback", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtLaunchCallback(Some(ignore_args), null_mut(), ACL_CALLBACK_NO_BLOCK, sv(f.h(h))) }
        });
        t.add("aclrtSubscribeReport", input.clone(), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtSubscribeReport(1, sv(f.h(h))) }
        });
        t.add("aclrtUnSubscribeReport", input, HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtUnSubscribeReport(1, sv(f.h(h))) }
        });
    }
}

pub(super) fn event_extra_rows(t: &mut Table) {
    t.add("aclrtCreateEventWithFlag", "null event", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtCreateEventWithFlag(null_mut(), ACL_EVENT_SYNC) }
    });
    t.fresh("aclrtCreateEventWithFlag", "without a current device", NO_CONTEXT, |_| {
        let mut e = SENTINEL as aclrtEvent;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { aclrtCreateEventWithFlag(&mut e, ACL_EVENT_TIME_LINE) }, e as usize)
    });
    // CANN keeps the flags and checks them: one or more of 0x1-0x20, at most 0x3F, and
    // ACL_EVENT_DEVICE_USE_ONLY (0x10) and ACL_EVENT_EXTERNAL (0x20) only alone.
    for flags in [0, 0x40, u32::MAX, 0x11, 0x21] {
        t.add("aclrtCreateEventWithFlag", format!("flags {flags:#x}"), RT_PARAM, move |_| {
            let mut e = SENTINEL as aclrtEvent;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { aclrtCreateEventWithFlag(&mut e, flags) }, e as usize)
        });
    }
    t.add("aclrtCreateEventWithFlag", "flags 0xF, then destroyed", OK, |_| {
        let mut e: aclrtEvent = null_mut();
        // SAFETY: a valid out-pointer, then the handle it received.
        unsafe {
            let rc = aclrtCreateEventWithFlag(&mut e, 0x0F);
            check(aclrtDestroyEvent(e), "destroying it");
            rc
        }
    });
    for (entry, wait) in [("aclrtStreamWaitEvent", true), ("aclrtResetEvent", false)] {
        t.add(entry, "an event created without ACL_EVENT_SYNC (ACL_EVENT_TIME_LINE only)", FEATURE, move |f| {
            let mut e: aclrtEvent = null_mut();
            // SAFETY: a valid out-pointer, then the handles it and the fixture hold.
            unsafe {
                check(aclrtCreateEventWithFlag(&mut e, ACL_EVENT_TIME_LINE), "creating a timing event");
                let rc = if wait { aclrtStreamWaitEvent(sv(f.s), e) } else { aclrtResetEvent(e, sv(f.s)) };
                check(aclrtDestroyEvent(e), "destroying it");
                rc
            }
        });
    }
    t.add("aclrtResetEvent", "null event", PARAM, |f| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtResetEvent(null_mut(), sv(f.s)) }
    });
    t.add("aclrtResetEvent", "a stream of another device", STREAM_CONTEXT, |f| {
        // SAFETY: live handles, the stream checked against the current device.
        unsafe { aclrtResetEvent(sv(f.e_unrecorded), sv(f.s1)) }
    });
    t.fresh("aclrtResetEvent", "without a current device", NO_CONTEXT, |f| {
        // SAFETY: live handles.
        unsafe { aclrtResetEvent(sv(f.e_unrecorded), sv(f.s)) }
    });
    t.add("aclrtResetEvent", "a new recorded event: then not ready", OK, |f| {
        let mut e: aclrtEvent = null_mut();
        let mut st = -1;
        // SAFETY: a valid out-pointer, then the handle it received and live handles.
        unsafe {
            check(aclrtCreateEvent(&mut e), "an event");
            check(aclrtRecordEvent(e, sv(f.s)), "recording it");
            check(aclrtSynchronizeEvent(e), "its point");
            let rc = aclrtResetEvent(e, null_mut());
            check(aclrtQueryEventStatus(e, &mut st), "querying it");
            check(aclrtDestroyEvent(e), "destroying it");
            assert_eq!(st, ACL_EVENT_RECORDED_STATUS_NOT_READY);
            rc
        }
    });
    t.add("aclrtSynchronizeEventWithTimeout", "null", PARAM, |_| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtSynchronizeEventWithTimeout(null_mut(), 100) }
    });
    for timeout in [0, -2, i32::MIN] {
        t.add("aclrtSynchronizeEventWithTimeout", format!("timeout {timeout}"), RT_PARAM, move |f| {
            // SAFETY: a live handle.
            unsafe { aclrtSynchronizeEventWithTimeout(sv(f.e), timeout) }
        });
    }
    for (input, h, timeout) in
        [("a recorded event, -1", H::Live(Kind::Event), -1), ("a never recorded event, 1", H::Raw(0), 1)]
    {
        t.fresh("aclrtSynchronizeEventWithTimeout", format!("{input}, without a current device"), OK, move |f| {
            let e = if let H::Raw(0) = h { f.e_unrecorded } else { f.h(h) };
            // SAFETY: a live handle.
            unsafe { aclrtSynchronizeEventWithTimeout(sv(e), timeout) }
        });
    }
    t.add("aclrtEventGetTimestamp", "null event", PARAM, |_| {
        let mut v = 0u64;
        // SAFETY: a valid out-pointer.
        unsafe { aclrtEventGetTimestamp(null_mut(), &mut v) }
    });
    t.add("aclrtEventGetTimestamp", "null timestamp", PARAM, |f| {
        // SAFETY: a live handle and a null out-pointer, refused before any write.
        unsafe { aclrtEventGetTimestamp(sv(f.e), null_mut()) }
    });
    t.add("aclrtEventGetTimestamp", "a never recorded event", INTERNAL, |f| {
        let mut v = SENTINEL as u64;
        // SAFETY: a live handle and a valid out-pointer.
        untouched(unsafe { aclrtEventGetTimestamp(sv(f.e_unrecorded), &mut v) }, v as usize)
    });
    t.fresh("aclrtEventGetTimestamp", "a recorded event, without a current device", OK, |f| {
        let mut v = 0u64;
        // SAFETY: a live handle and a valid out-pointer.
        let rc = unsafe { aclrtEventGetTimestamp(sv(f.e), &mut v) };
        assert!(v > 1_600_000_000_000_000, "microseconds since the Unix epoch: {v}");
        rc
    });
    for (input, h) in bad_handles(Kind::Event) {
        t.add("aclrtResetEvent", input.clone(), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtResetEvent(sv(f.h(h)), sv(f.s)) }
        });
        t.add("aclrtSynchronizeEventWithTimeout", input.clone(), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtSynchronizeEventWithTimeout(sv(f.h(h)), 100) }
        });
        t.add("aclrtEventGetTimestamp", input, HANDLE, move |f| {
            let mut v = SENTINEL as u64;
            // SAFETY: handles are looked up; a valid out-pointer.
            untouched(unsafe { aclrtEventGetTimestamp(sv(f.h(h)), &mut v) }, v as usize)
        });
    }
}

pub(super) fn callback_rows(t: &mut Table) {
    t.add("aclrtLaunchCallback", "null fn", PARAM, |f| {
        // SAFETY: a live handle; the null function is refused.
        unsafe { aclrtLaunchCallback(None, null_mut(), ACL_CALLBACK_NO_BLOCK, sv(f.s)) }
    });
    for block in [2, -1, i32::MAX] {
        t.add("aclrtLaunchCallback", format!("block type {block}"), PARAM, move |f| {
            // SAFETY: a live handle.
            unsafe { aclrtLaunchCallback(Some(ignore_args), null_mut(), block, sv(f.s)) }
        });
    }
    t.add("aclrtLaunchCallback", "a stream nobody subscribed", NO_SUBSCRIBER, |f| {
        // SAFETY: a live handle.
        unsafe { aclrtLaunchCallback(Some(ignore_args), null_mut(), ACL_CALLBACK_BLOCK, sv(f.s)) }
    });
    t.add("aclrtLaunchCallback", "a stream of another device", STREAM_CONTEXT, |f| {
        // SAFETY: a live handle, checked against the current device.
        unsafe { aclrtLaunchCallback(Some(ignore_args), null_mut(), ACL_CALLBACK_BLOCK, sv(f.s1)) }
    });
    t.fresh("aclrtLaunchCallback", "without a current device", NO_CONTEXT, |f| {
        // SAFETY: a live handle.
        unsafe { aclrtLaunchCallback(Some(ignore_args), null_mut(), ACL_CALLBACK_BLOCK, sv(f.s)) }
    });
    t.add("aclrtSubscribeReport", "a stream of another device", STREAM_CONTEXT, |f| {
        // SAFETY: a live handle, checked against the current device.
        unsafe { aclrtSubscribeReport(1, sv(f.s1)) }
    });
    t.fresh("aclrtSubscribeReport", "without a current device", NO_CONTEXT, |f| {
        // SAFETY: a live handle.
        unsafe { aclrtSubscribeReport(1, sv(f.s)) }
    });
    t.add("aclrtSubscribeReport", "a stream already subscribed by another thread id", STREAM_SUBSCRIBE, |f| {
        // SAFETY: a live handle; thread ids are only compared.
        unsafe {
            check(aclrtSubscribeReport(u64::MAX, sv(f.s)), "subscribing");
            let rc = aclrtSubscribeReport(7, sv(f.s));
            check(aclrtUnSubscribeReport(u64::MAX, sv(f.s)), "unsubscribing");
            rc
        }
    });
    t.add("aclrtUnSubscribeReport", "a stream not subscribed", STREAM_SUBSCRIBE, |f| {
        // SAFETY: a live handle.
        unsafe { aclrtUnSubscribeReport(1, sv(f.s)) }
    });
    t.fresh("aclrtUnSubscribeReport", "without a current device", NO_CONTEXT, |f| {
        // SAFETY: a live handle.
        unsafe { aclrtUnSubscribeReport(1, sv(f.s)) }
    });
    for timeout in [0, -2, i32::MIN] {
        t.add("aclrtProcessReport", format!("timeout {timeout}"), PARAM, move |_| {
            // SAFETY: takes an integer only.
            unsafe { aclrtProcessReport(timeout) }
        });
    }
    t.fresh("aclrtProcessReport", "a thread that subscribed nothing", THREAD_SUBSCRIBE, |_| {
        // SAFETY: takes an integer only.
        unsafe { aclrtProcessReport(10) }
    });
    t.add("aclrtProcessReport", "subscribed, nothing launched: times out", ACL_ERROR_RT_REPORT_TIMEOUT, |f| {
        let me = current_thread_id();
        // SAFETY: a live handle; this thread's id.
        unsafe {
            check(aclrtSubscribeReport(me, sv(f.s)), "subscribing");
            let rc = aclrtProcessReport(5);
            check(aclrtUnSubscribeReport(me, sv(f.s)), "unsubscribing");
            rc
        }
    });
}

/// This thread's `pthread_t`, as a C program passes it to `aclrtSubscribeReport`.
pub(super) fn current_thread_id() -> u64 {
    // SAFETY: `pthread_self` has this signature on the supported (LP64 POSIX) targets and
    // no preconditions.
    unsafe extern "C" {
        safe fn pthread_self() -> usize;
    }
    pthread_self() as u64
}

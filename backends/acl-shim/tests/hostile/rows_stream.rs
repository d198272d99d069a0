//! Rows for streams and events.

use super::*;

pub(super) fn stream_rows(t: &mut Table) {
    t.add("aclrtCreateStream", "null stream", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtCreateStream(null_mut()) }
    });
    t.fresh("aclrtCreateStream", "without a current device", NO_CONTEXT, |_| {
        let mut s = SENTINEL as aclrtStream;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { aclrtCreateStream(&mut s) }, s as usize)
    });
    t.add("aclrtDestroyStream", "null (the default stream)", PARAM, |_| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtDestroyStream(null_mut()) }
    });
    for (input, h) in bad_handles(Kind::Stream) {
        t.add("aclrtDestroyStream", input.clone(), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtDestroyStream(sv(f.h(h))) }
        });
        t.add("aclrtSynchronizeStream", input, HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtSynchronizeStream(sv(f.h(h))) }
        });
    }
    t.add("aclrtDestroyStream", "a stream of another device", STREAM_CONTEXT, |f| {
        // SAFETY: a live handle, checked against the current device.
        unsafe { aclrtDestroyStream(sv(f.s1)) }
    });
    // CANN switches to the stream's context and synchronizes it.
    t.add("aclrtSynchronizeStream", "a stream of another device (synchronized, as on CANN)", OK, |f| {
        // SAFETY: a live handle.
        unsafe { aclrtSynchronizeStream(sv(f.s1)) }
    });
    t.add("aclrtSynchronizeStream", "null (the default stream)", OK, |_| {
        // SAFETY: null means the default stream.
        unsafe { aclrtSynchronizeStream(null_mut()) }
    });
    // The handle is checked before the context, as on CANN.
    t.fresh("aclrtSynchronizeStream", "a destroyed stream, without a current device", HANDLE, |f| {
        // SAFETY: handles are looked up in the shim's registry, never dereferenced.
        unsafe { aclrtSynchronizeStream(sv(f.dead_stream)) }
    });
    for (entry, input, h) in [
        ("aclrtDestroyStream", "a live stream", H::Live(Kind::Stream)),
        ("aclrtSynchronizeStream", "a live stream", H::Live(Kind::Stream)),
        ("aclrtSynchronizeStream", "null (the default stream)", H::Null),
    ] {
        t.fresh(entry, format!("{input}, without a current device"), NO_CONTEXT, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe {
                if entry == "aclrtDestroyStream" {
                    aclrtDestroyStream(sv(f.h(h)))
                } else {
                    aclrtSynchronizeStream(sv(f.h(h)))
                }
            }
        });
    }
    t.fresh("aclrtSynchronizeDevice", "without a current device", NO_CONTEXT, |_| {
        // SAFETY: takes no arguments.
        unsafe { aclrtSynchronizeDevice() }
    });
    t.add("aclrtSynchronizeDevice", "with a current device (the witness pools keep their memory)", OK, |_| {
        // SAFETY: takes no arguments.
        unsafe { aclrtSynchronizeDevice() }
    });
}

pub(super) fn event_rows(t: &mut Table) {
    t.add("aclrtCreateEvent", "null event", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtCreateEvent(null_mut()) }
    });
    t.fresh("aclrtCreateEvent", "without a current device", NO_CONTEXT, |_| {
        let mut e = SENTINEL as aclrtEvent;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { aclrtCreateEvent(&mut e) }, e as usize)
    });
    // Null events: a null pointer (100000), as CANN checks before the runtime.
    t.add("aclrtDestroyEvent", "null", PARAM, |_| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtDestroyEvent(null_mut()) }
    });
    t.add("aclrtRecordEvent", "null event", PARAM, |f| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtRecordEvent(null_mut(), sv(f.s)) }
    });
    t.add("aclrtStreamWaitEvent", "null event", PARAM, |f| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtStreamWaitEvent(sv(f.s), null_mut()) }
    });
    t.add("aclrtSynchronizeEvent", "null", PARAM, |_| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtSynchronizeEvent(null_mut()) }
    });
    t.add("aclrtQueryEventStatus", "null event", PARAM, |_| {
        let mut st = SENTINEL as aclrtEventRecordedStatus;
        // SAFETY: a valid out-pointer; handles are looked up, never dereferenced.
        untouched(unsafe { aclrtQueryEventStatus(null_mut(), &mut st) }, st as usize)
    });
    t.add("aclrtQueryEventStatus", "null status", PARAM, |f| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtQueryEventStatus(sv(f.e), null_mut()) }
    });
    t.add("aclrtEventElapsedTime", "null ms", PARAM, |f| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtEventElapsedTime(null_mut(), sv(f.e), sv(f.e)) }
    });
    t.add("aclrtEventElapsedTime", "null start event", PARAM, |f| {
        let mut ms = f32::NAN;
        // SAFETY: a valid out-pointer; handles are looked up, never dereferenced.
        let rc = unsafe { aclrtEventElapsedTime(&mut ms, null_mut(), sv(f.e)) };
        assert!(ms.is_nan(), "a refused call wrote ms");
        rc
    });
    t.add("aclrtEventElapsedTime", "null end event", PARAM, |f| {
        let mut ms = f32::NAN;
        // SAFETY: a valid out-pointer; handles are looked up, never dereferenced.
        unsafe { aclrtEventElapsedTime(&mut ms, sv(f.e), null_mut()) }
    });
    for (input, h) in bad_handles(Kind::Event) {
        let i = |what: &str| format!("{what}: {input}");
        t.add("aclrtDestroyEvent", input.clone(), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtDestroyEvent(sv(f.h(h))) }
        });
        t.add("aclrtRecordEvent", i("event"), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtRecordEvent(sv(f.h(h)), sv(f.s)) }
        });
        t.add("aclrtStreamWaitEvent", i("event"), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtStreamWaitEvent(sv(f.s), sv(f.h(h))) }
        });
        t.add("aclrtSynchronizeEvent", input.clone(), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtSynchronizeEvent(sv(f.h(h))) }
        });
        t.add("aclrtQueryEventStatus", i("event"), HANDLE, move |f| {
            let mut st = SENTINEL as aclrtEventRecordedStatus;
            // SAFETY: a valid out-pointer; handles are looked up, never dereferenced.
            untouched(unsafe { aclrtQueryEventStatus(sv(f.h(h)), &mut st) }, st as usize)
        });
        t.add("aclrtEventElapsedTime", i("start event"), HANDLE, move |f| {
            let mut ms = f32::NAN;
            // SAFETY: a valid out-pointer; handles are looked up, never dereferenced.
            unsafe { aclrtEventElapsedTime(&mut ms, sv(f.h(h)), sv(f.e)) }
        });
        t.add("aclrtEventElapsedTime", i("end event"), HANDLE, move |f| {
            let mut ms = f32::NAN;
            // SAFETY: a valid out-pointer; handles are looked up, never dereferenced.
            unsafe { aclrtEventElapsedTime(&mut ms, sv(f.e), sv(f.h(h))) }
        });
    }
    for (input, h) in bad_handles(Kind::Stream) {
        t.add("aclrtRecordEvent", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtRecordEvent(sv(f.e_unrecorded), sv(f.h(h))) }
        });
        t.add("aclrtStreamWaitEvent", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtStreamWaitEvent(sv(f.h(h)), sv(f.e)) }
        });
    }
    t.add("aclrtRecordEvent", "event and stream swapped", HANDLE, |f| {
        // SAFETY: handles are looked up in the shim's registry, never dereferenced.
        unsafe { aclrtRecordEvent(sv(f.s), sv(f.e)) }
    });
    t.add("aclrtStreamWaitEvent", "stream and event swapped", HANDLE, |f| {
        // SAFETY: handles are looked up in the shim's registry, never dereferenced.
        unsafe { aclrtStreamWaitEvent(sv(f.e), sv(f.s)) }
    });
    t.add("aclrtRecordEvent", "a stream of another device", STREAM_CONTEXT, |f| {
        // SAFETY: live handles.
        unsafe { aclrtRecordEvent(sv(f.e_unrecorded), sv(f.s1)) }
    });
    t.add("aclrtStreamWaitEvent", "a stream of another device", STREAM_CONTEXT, |f| {
        // SAFETY: live handles.
        unsafe { aclrtStreamWaitEvent(sv(f.s1), sv(f.e)) }
    });
    t.add("aclrtStreamWaitEvent", "an event never recorded (nothing to wait for)", OK, |f| {
        // SAFETY: live handles.
        unsafe { aclrtStreamWaitEvent(sv(f.s), sv(f.e_unrecorded)) }
    });
    t.add("aclrtSynchronizeEvent", "an event never recorded (returns at once)", OK, |f| {
        // SAFETY: a live handle.
        unsafe { aclrtSynchronizeEvent(sv(f.e_unrecorded)) }
    });
    t.add("aclrtQueryEventStatus", "an event never recorded (NOT_READY, as CANN documents)", OK, |f| {
        let mut st = -1;
        // SAFETY: a valid out-pointer and a live handle.
        let rc = unsafe { aclrtQueryEventStatus(sv(f.e_unrecorded), &mut st) };
        assert_eq!(st, ACL_EVENT_RECORDED_STATUS_NOT_READY, "status of an event never recorded");
        rc
    });
    t.add("aclrtEventElapsedTime", "a start event never recorded (CANN: 507000)", INTERNAL, |f| {
        let mut ms = f32::NAN;
        // SAFETY: a valid out-pointer and live handles.
        let rc = unsafe { aclrtEventElapsedTime(&mut ms, sv(f.e_unrecorded), sv(f.e)) };
        assert!(ms.is_nan(), "a refused call wrote ms");
        rc
    });
    for (entry, needs_stream) in [
        ("aclrtDestroyEvent", false),
        ("aclrtRecordEvent", true),
        ("aclrtStreamWaitEvent", true),
        ("aclrtSynchronizeEvent", false),
        ("aclrtQueryEventStatus", false),
        ("aclrtEventElapsedTime", false),
    ] {
        // CANN: destroying, synchronizing and querying an event and the elapsed time need
        // no current context; recording and waiting do.
        let (input, want) = if needs_stream {
            ("a live event and stream", NO_CONTEXT)
        } else {
            ("a live event (recorded and complete)", OK)
        };
        t.fresh(entry, format!("{input}, without a current device"), want, move |f| {
            let (e, s) = (sv(f.e), sv(f.s));
            let (mut st, mut ms) = (-1, 0f32);
            // SAFETY: live handles and valid out-pointers.
            unsafe {
                match entry {
                    "aclrtDestroyEvent" => {
                        // An event of its own, made with device 0 current for a moment.
                        let mut own: aclrtEvent = null_mut();
                        check(aclrtSetDevice(0), "device 0");
                        check(aclrtCreateEvent(&mut own), "an event");
                        check(aclrtResetDevice(0), "no current device any more");
                        aclrtDestroyEvent(own)
                    }
                    "aclrtRecordEvent" => aclrtRecordEvent(e, s),
                    "aclrtStreamWaitEvent" => aclrtStreamWaitEvent(s, e),
                    "aclrtSynchronizeEvent" => aclrtSynchronizeEvent(e),
                    "aclrtQueryEventStatus" => aclrtQueryEventStatus(e, &mut st),
                    _ => aclrtEventElapsedTime(&mut ms, e, e),
                }
            }
        });
    }
}

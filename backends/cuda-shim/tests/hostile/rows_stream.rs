//! Rows for streams (the default stream handles `CU_STREAM_LEGACY` and
//! `CU_STREAM_PER_THREAD` included) and events.

use super::*;

pub(super) fn stream_rows(t: &mut Table) {
    t.add("cuStreamCreate", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuStreamCreate(null_mut(), 0) }
    });
    for flags in [2, 3, 0x100, u32::MAX] {
        t.add("cuStreamCreate", format!("flags {flags:#x}"), VALUE, move |_| {
            let mut s = SENTINEL as CUstream;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { cuStreamCreate(&mut s, flags) }, s as usize)
        });
    }
    t.fresh("cuStreamCreate", "without a current context", CONTEXT, |_| {
        let mut s = SENTINEL as CUstream;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { cuStreamCreate(&mut s, 0) }, s as usize)
    });
    t.add("cuStreamCreateWithPriority", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuStreamCreateWithPriority(null_mut(), 0, 0) }
    });
    t.add("cuStreamCreateWithPriority", "flags 0x2", VALUE, |_| {
        let mut s = SENTINEL as CUstream;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { cuStreamCreateWithPriority(&mut s, 2, 0) }, s as usize)
    });
    t.fresh("cuStreamCreateWithPriority", "without a current context", CONTEXT, |_| {
        let mut s = SENTINEL as CUstream;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { cuStreamCreateWithPriority(&mut s, 0, -1) }, s as usize)
    });
    for priority in [i32::MIN, 5, i32::MAX] {
        t.add("cuStreamCreateWithPriority", format!("priority {priority} (clamped)"), OK, move |_| {
            let mut s = null_mut();
            // SAFETY: a valid out-pointer.
            let rc = unsafe { cuStreamCreateWithPriority(&mut s, CU_STREAM_NON_BLOCKING, priority) };
            assert!(!s.is_null());
            // SAFETY: the stream just made.
            check(unsafe { cuStreamDestroy_v2(s) }, "destroying it");
            rc
        });
    }
    t.add("cuStreamDestroy_v2", "NULL (the default stream)", HANDLE, |_| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { cuStreamDestroy_v2(null_mut()) }
    });
    for (name, h) in [("CU_STREAM_LEGACY", CU_STREAM_LEGACY), ("CU_STREAM_PER_THREAD", CU_STREAM_PER_THREAD)] {
        let h = h as usize;
        t.add("cuStreamDestroy_v2", name, HANDLE, move |_| {
            // SAFETY: handles are looked up, never dereferenced.
            unsafe { cuStreamDestroy_v2(st(h)) }
        });
        t.add("cuStreamQuery", name, OK, move |_| {
            // SAFETY: as above.
            unsafe { cuStreamQuery(st(h)) }
        });
        t.fresh("cuStreamSynchronize", format!("{name} without a current context"), CONTEXT, move |_| {
            // SAFETY: as above.
            unsafe { cuStreamSynchronize(st(h)) }
        });
        t.fresh("cuLaunchHostFunc", format!("{name} without a current context"), CONTEXT, move |_| {
            // SAFETY: as above; the function is never run.
            unsafe { cuLaunchHostFunc(st(h), Some(ignore), null_mut()) }
        });
    }
    for (input, h) in bad_handles(Kind::Stream) {
        t.add("cuStreamDestroy_v2", input.clone(), HANDLE, move |f| {
            // SAFETY: handles are looked up, never dereferenced.
            unsafe { cuStreamDestroy_v2(st(f.h(h))) }
        });
        t.add("cuStreamSynchronize", input.clone(), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuStreamSynchronize(st(f.h(h))) }
        });
        t.add("cuStreamQuery", input.clone(), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuStreamQuery(st(f.h(h))) }
        });
        t.add("cuStreamWaitEvent", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuStreamWaitEvent(st(f.h(h)), ev(f.e), 0) }
        });
        t.add("cuEventRecord", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuEventRecord(ev(f.e_unrecorded), st(f.h(h))) }
        });
        t.add("cuLaunchHostFunc", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: as above; the function is never run.
            unsafe { cuLaunchHostFunc(st(f.h(h)), Some(ignore), null_mut()) }
        });
    }
    t.fresh("cuStreamSynchronize", "NULL without a current context", CONTEXT, |_| {
        // SAFETY: the null stream needs a current context, which this thread lacks.
        unsafe { cuStreamSynchronize(null_mut()) }
    });
    t.fresh("cuStreamSynchronize", "a live stream without a current context", OK, |f| {
        // SAFETY: a live handle.
        unsafe { cuStreamSynchronize(st(f.s)) }
    });
    t.fresh("cuStreamQuery", "NULL without a current context", CONTEXT, |_| {
        // SAFETY: as above.
        unsafe { cuStreamQuery(null_mut()) }
    });
    t.add("cuStreamQuery", "an idle stream", OK, |f| {
        // SAFETY: a live handle.
        unsafe { cuStreamQuery(st(f.s)) }
    });
    t.add("cuStreamWaitEvent", "flags 1", VALUE, |f| {
        // SAFETY: live handles.
        unsafe { cuStreamWaitEvent(st(f.s), ev(f.e), 1) }
    });
    t.add("cuStreamWaitEvent", "a stream of device 1 on an event of device 0", OK, |f| {
        // SAFETY: live handles.
        unsafe { cuStreamWaitEvent(st(f.s1), ev(f.e), 0) }
    });
    t.add("cuEventRecord", "an event of device 0 on a stream of device 1", OK, |f| {
        let mut e: CUevent = null_mut();
        // SAFETY: a valid out-pointer and live handles; the event is destroyed again.
        unsafe {
            check(cuEventCreate(&mut e, 0), "an event");
            let rc = cuEventRecord(e, st(f.s1));
            check(cuEventSynchronize(e), "synchronizing it");
            check(cuEventDestroy_v2(e), "destroying it");
            rc
        }
    });
    t.add("cuLaunchHostFunc", "null fn", VALUE, |f| {
        // SAFETY: a live stream; the null function is refused.
        unsafe { cuLaunchHostFunc(st(f.s), None, null_mut()) }
    });
    t.fresh("cuLaunchHostFunc", "NULL stream without a current context", CONTEXT, |_| {
        // SAFETY: the function is never run.
        unsafe { cuLaunchHostFunc(null_mut(), Some(ignore), null_mut()) }
    });
}
pub(super) fn event_rows(t: &mut Table) {
    t.add("cuEventCreate", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuEventCreate(null_mut(), 0) }
    });
    for (flags, want) in
        [(0x8, VALUE), (0x80, VALUE), (u32::MAX, VALUE), (CU_EVENT_INTERPROCESS, VALUE), (0x6, SUPPORT)]
    {
        t.add("cuEventCreate", format!("flags {flags:#x}"), want, move |_| {
            let mut e = SENTINEL as CUevent;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { cuEventCreate(&mut e, flags) }, e as usize)
        });
    }
    t.fresh("cuEventCreate", "without a current context", CONTEXT, |_| {
        let mut e = SENTINEL as CUevent;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { cuEventCreate(&mut e, 0) }, e as usize)
    });
    let mut handles = bad_handles(Kind::Event);
    handles.insert(0, ("null".into(), H::Null));
    for (input, h) in handles {
        t.add("cuEventRecord", format!("event: {input}"), HANDLE, move |f| {
            // SAFETY: handles are looked up, never dereferenced.
            unsafe { cuEventRecord(ev(f.h(h)), st(f.s)) }
        });
        t.add("cuStreamWaitEvent", format!("event: {input}"), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuStreamWaitEvent(st(f.s), ev(f.h(h)), 0) }
        });
        t.add("cuEventSynchronize", input.clone(), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuEventSynchronize(ev(f.h(h))) }
        });
        t.add("cuEventQuery", input.clone(), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuEventQuery(ev(f.h(h))) }
        });
        t.add("cuEventDestroy_v2", input.clone(), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuEventDestroy_v2(ev(f.h(h))) }
        });
        t.add("cuEventElapsedTime", format!("start: {input}"), HANDLE, move |f| {
            let mut ms = f32::from_bits(SENTINEL as u32);
            // SAFETY: a valid out-pointer; handles are looked up.
            let rc = unsafe { cuEventElapsedTime(&mut ms, ev(f.h(h)), ev(f.e)) };
            untouched(rc, ms.to_bits() as usize)
        });
    }
    t.fresh("cuEventQuery", "a recorded event without a current context", OK, |f| {
        // SAFETY: a live handle.
        unsafe { cuEventQuery(ev(f.e)) }
    });
    t.add("cuEventQuery", "never recorded: complete", OK, |f| {
        // SAFETY: a live handle.
        unsafe { cuEventQuery(ev(f.e_unrecorded)) }
    });
    t.fresh("cuEventSynchronize", "never recorded, without a current context", OK, |f| {
        // SAFETY: a live handle.
        unsafe { cuEventSynchronize(ev(f.e_unrecorded)) }
    });
    t.add("cuEventElapsedTime", "null ms", VALUE, |f| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuEventElapsedTime(null_mut(), ev(f.e), ev(f.e)) }
    });
    t.add("cuEventElapsedTime", "end never recorded", HANDLE, |f| {
        let mut ms = 0.0;
        // SAFETY: a valid out-pointer, live handles.
        unsafe { cuEventElapsedTime(&mut ms, ev(f.e), ev(f.e_unrecorded)) }
    });
    t.add("cuEventElapsedTime", "an event without timing", HANDLE, |f| {
        let mut ms = 0.0;
        // SAFETY: a valid out-pointer, live handles.
        unsafe { cuEventElapsedTime(&mut ms, ev(f.e_untimed), ev(f.e)) }
    });
    t.add("cuEventElapsedTime_v2", "null ms", VALUE, |f| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuEventElapsedTime_v2(null_mut(), ev(f.e), ev(f.e)) }
    });
    t.add("cuEventElapsedTime_v2", "garbage start", HANDLE, |f| {
        let mut ms = f32::from_bits(SENTINEL as u32);
        // SAFETY: a valid out-pointer; handles are looked up.
        let rc = unsafe { cuEventElapsedTime_v2(&mut ms, ev(GARBAGE[2]), ev(f.e)) };
        untouched(rc, ms.to_bits() as usize)
    });
    t.add("cuEventElapsedTime_v2", "an event without timing", HANDLE, |f| {
        let mut ms = 0.0;
        // SAFETY: a valid out-pointer, live handles.
        unsafe { cuEventElapsedTime_v2(&mut ms, ev(f.e_untimed), ev(f.e)) }
    });
    t.add("cuEventElapsedTime_v2", "the same event twice: 0 ms", OK, |f| {
        let mut ms = -1.0;
        // SAFETY: a valid out-pointer, live handles.
        let rc = unsafe { cuEventElapsedTime_v2(&mut ms, ev(f.e), ev(f.e)) };
        assert_eq!(ms, 0.0);
        rc
    });
    t.add("cuEventElapsedTime", "the same event twice: 0 ms", OK, |f| {
        let mut ms = -1.0;
        // SAFETY: a valid out-pointer, live handles.
        let rc = unsafe { cuEventElapsedTime(&mut ms, ev(f.e), ev(f.e)) };
        assert_eq!(ms, 0.0);
        rc
    });
}

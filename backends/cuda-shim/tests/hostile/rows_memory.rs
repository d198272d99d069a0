//! Rows for page-locked host memory, memory information, error names and strings,
//! copies and memsets.

use super::*;

pub(super) fn memory_rows(t: &mut Table) {
    t.add("cuMemAllocHost_v2", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuMemAllocHost_v2(null_mut(), 16) }
    });
    for (input, size, want) in [("size 0", 0, VALUE), ("size SIZE_MAX", usize::MAX, OOM), ("size 2^62", 1 << 62, OOM)] {
        t.add("cuMemAllocHost_v2", input, want, move |_| {
            let mut p = SENTINEL as *mut c_void;
            // SAFETY: a valid out-pointer.
            untouched(unsafe { cuMemAllocHost_v2(&mut p, size) }, p as usize)
        });
    }
    t.fresh("cuMemAllocHost_v2", "without a current context", CONTEXT, |_| {
        let mut p = SENTINEL as *mut c_void;
        // SAFETY: a valid out-pointer.
        untouched(unsafe { cuMemAllocHost_v2(&mut p, 16) }, p as usize)
    });
    type HostAddr = fn(&Fx) -> usize;
    let frees: [(&str, HostAddr); 7] = [
        ("null", |_| 0),
        ("garbage 0x1234", |_| 0x1234),
        ("freed cuMemAllocHost memory", |f| f.host_freed),
        ("an interior pointer of cuMemAllocHost memory", |f| f.host + 8),
        ("a heap buffer", |f| f.buf),
        ("device memory", |f| f.a as usize),
        ("a stack address", |_| {
            let x = 0u8;
            std::hint::black_box(&raw const x) as usize
        }),
    ];
    for (input, addr) in frees {
        t.add("cuMemFreeHost", input, VALUE, move |f| {
            // SAFETY: the library looks the address up; it frees only its own allocations.
            unsafe { cuMemFreeHost(addr(f) as *mut c_void) }
        });
    }
    t.add("cuMemGetInfo_v2", "null free", VALUE, |_| {
        let mut total = 0;
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuMemGetInfo_v2(null_mut(), &mut total) }
    });
    t.add("cuMemGetInfo_v2", "null total", VALUE, |_| {
        let mut free = SENTINEL;
        // SAFETY: a null out-pointer, refused before any write.
        untouched(unsafe { cuMemGetInfo_v2(&mut free, null_mut()) }, free)
    });
    t.fresh("cuMemGetInfo_v2", "without a current context", CONTEXT, |_| {
        let (mut free, mut total) = (SENTINEL, SENTINEL);
        // SAFETY: valid out-pointers.
        let rc = unsafe { cuMemGetInfo_v2(&mut free, &mut total) };
        untouched(rc, free);
        untouched(rc, total)
    });
    for code in [9, 998, -1, 12_345] {
        t.add("cuGetErrorName", format!("unknown code {code}: NULL"), VALUE, move |_| {
            let mut s = SENTINEL as *const std::ffi::c_char;
            // SAFETY: a valid out-pointer.
            let rc = unsafe { cuGetErrorName(code, &mut s) };
            assert!(s.is_null(), "an unknown code gives NULL");
            rc
        });
        t.add("cuGetErrorString", format!("unknown code {code}: NULL"), VALUE, move |_| {
            let mut s = SENTINEL as *const std::ffi::c_char;
            // SAFETY: a valid out-pointer.
            let rc = unsafe { cuGetErrorString(code, &mut s) };
            assert!(s.is_null(), "an unknown code gives NULL");
            rc
        });
    }
    t.add("cuGetErrorName", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuGetErrorName(CUDA_ERROR_INVALID_VALUE, null_mut()) }
    });
    t.add("cuGetErrorString", "null", VALUE, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { cuGetErrorString(CUDA_ERROR_INVALID_VALUE, null_mut()) }
    });
}
pub(super) fn copy_rows(t: &mut Table) {
    let len = 16;
    t.add("cuMemcpyHtoDAsync_v2", "null src", VALUE, move |f| {
        // SAFETY: a null source, refused before any read.
        unsafe { cuMemcpyHtoDAsync_v2(f.a, std::ptr::null(), len, st(f.s)) }
    });
    t.add("cuMemcpyHtoDAsync_v2", "dst 0", VALUE, move |f| {
        // SAFETY: a null destination, refused.
        unsafe { cuMemcpyHtoDAsync_v2(0, f.buf as *const c_void, len, st(f.s)) }
    });
    t.add("cuMemcpyDtoHAsync_v2", "null dst", VALUE, move |f| {
        // SAFETY: a null destination, refused before any write.
        unsafe { cuMemcpyDtoHAsync_v2(null_mut(), f.a, len, st(f.s)) }
    });
    t.add("cuMemcpyDtoDAsync_v2", "src 0", VALUE, move |f| {
        // SAFETY: a null source, refused.
        unsafe { cuMemcpyDtoDAsync_v2(f.a, 0, len, st(f.s)) }
    });
    t.add("cuMemsetD8Async", "dst 0", VALUE, move |f| {
        // SAFETY: a null destination, refused.
        unsafe { cuMemsetD8Async(0, 7, len, st(f.s)) }
    });
    for (input, addr) in bad_device_pointers(false) {
        let addr = Arc::new(addr);
        let (a1, a2, a3, a4) = (Arc::clone(&addr), Arc::clone(&addr), Arc::clone(&addr), Arc::clone(&addr));
        t.add("cuMemcpyHtoDAsync_v2", format!("dst: {input}"), VALUE, move |f| {
            // SAFETY: the source is a live heap buffer of HOST_LEN bytes; the destination is
            // checked by the emulator and refused.
            unsafe { cuMemcpyHtoDAsync_v2(a1(f), f.buf as *const c_void, len, st(f.s)) }
        });
        t.add("cuMemcpyDtoHAsync_v2", format!("src: {input}"), VALUE, move |f| {
            // SAFETY: the destination is a live heap buffer; the source is refused.
            unsafe { cuMemcpyDtoHAsync_v2(f.buf as *mut c_void, a2(f), len, st(f.s)) }
        });
        t.add("cuMemcpyDtoDAsync_v2", format!("dst: {input}"), VALUE, move |f| {
            // SAFETY: device pointers are checked by the emulator, never dereferenced raw.
            unsafe { cuMemcpyDtoDAsync_v2(a3(f), f.a, len, st(f.s)) }
        });
        t.add("cuMemsetD8Async", input, VALUE, move |f| {
            // SAFETY: the target is looked up (device memory, or cuMemAllocHost memory).
            unsafe { cuMemsetD8Async(a4(f), 7, len, st(f.s)) }
        });
    }
    t.add("cuMemcpyHtoDAsync_v2", "past the end of the allocation", VALUE, move |f| {
        // SAFETY: the source holds HOST_LEN bytes; the range is refused first.
        unsafe { cuMemcpyHtoDAsync_v2(f.a + GRAN as u64 - 8, f.buf as *const c_void, len, st(f.s)) }
    });
    t.add("cuMemcpyHtoDAsync_v2", "src lying in device memory", VALUE, move |f| {
        // SAFETY: a host side in device memory is refused, never read raw.
        unsafe { cuMemcpyHtoDAsync_v2(f.a, f.a as *const c_void, len, st(f.s)) }
    });
    t.add("cuMemcpyDtoHAsync_v2", "past the end of cuMemAllocHost memory", VALUE, move |f| {
        // SAFETY: the range is refused before any write.
        unsafe { cuMemcpyDtoHAsync_v2((f.host + HOST_LEN - 8) as *mut c_void, f.a, len, st(f.s)) }
    });
    t.add("cuMemcpyDtoHAsync_v2", "count 0", OK, move |f| {
        // SAFETY: nothing is copied.
        unsafe { cuMemcpyDtoHAsync_v2(f.buf as *mut c_void, f.a, 0, st(f.s)) }
    });
    t.add("cuMemcpyHtoDAsync_v2", "pageable memory, done at once", OK, move |f| {
        // SAFETY: the source is a live heap buffer of HOST_LEN bytes; `a` is live.
        unsafe { cuMemcpyHtoDAsync_v2(f.a, f.buf as *const c_void, len, st(f.s)) }
    });
    t.add("cuMemsetD8Async", "a heap buffer (pageable)", VALUE, move |f| {
        // SAFETY: refused: pageable memory is not a memset target.
        unsafe { cuMemsetD8Async(f.buf as u64, 7, len, st(f.s)) }
    });
    for (input, h) in bad_handles(Kind::Stream) {
        t.add("cuMemcpyHtoDAsync_v2", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: the stream is refused before anything is copied.
            unsafe { cuMemcpyHtoDAsync_v2(f.a, f.buf as *const c_void, len, st(f.h(h))) }
        });
        t.add("cuMemcpyDtoHAsync_v2", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuMemcpyDtoHAsync_v2(f.buf as *mut c_void, f.a, len, st(f.h(h))) }
        });
        t.add("cuMemcpyDtoDAsync_v2", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuMemcpyDtoDAsync_v2(f.a + 64, f.a, len, st(f.h(h))) }
        });
        t.add("cuMemsetD8Async", format!("stream: {input}"), HANDLE, move |f| {
            // SAFETY: as above.
            unsafe { cuMemsetD8Async(f.a, 7, len, st(f.h(h))) }
        });
    }
    t.fresh("cuMemcpyDtoDAsync_v2", "NULL stream without a current context", CONTEXT, move |f| {
        // SAFETY: refused before anything is copied.
        unsafe { cuMemcpyDtoDAsync_v2(f.a + 64, f.a, len, null_mut()) }
    });
}

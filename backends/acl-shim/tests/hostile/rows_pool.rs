//! Rows for pools: create and destroy, attributes, allocation, free and trim.

use super::*;

pub(super) fn pool_create_destroy_rows(t: &mut Table) {
    const C: &str = "aclrtMemPoolCreate";
    let create = |pr: aclrtMemPoolProps| {
        let mut pool = SENTINEL as aclrtMemPool;
        // SAFETY: a valid out-pointer and props struct.
        let rc = unsafe { aclrtMemPoolCreate(&mut pool, &pr) };
        if rc == OK {
            // SAFETY: the handle just created.
            check(unsafe { aclrtMemPoolDestroy(pool) }, "destroying it again");
        }
        untouched(rc, pool as usize)
    };
    t.add(C, "null pool", PARAM, |_| {
        let pr = props(0, POOL_SIZE);
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtMemPoolCreate(null_mut(), &pr) }
    });
    t.add(C, "null props", PARAM, |_| {
        let mut pool = SENTINEL as aclrtMemPool;
        // SAFETY: a valid out-pointer; null props are refused before any read.
        untouched(unsafe { aclrtMemPoolCreate(&mut pool, std::ptr::null()) }, pool as usize)
    });
    let mut cases: Vec<(String, aclrtMemPoolProps, aclError)> = Vec::new();
    for v in [1, 2, -1, i32::MAX] {
        cases.push((format!("allocType {v}"), aclrtMemPoolProps { allocType: v, ..props(0, POOL_SIZE) }, PARAM));
    }
    for v in [1, 3, -1, i32::MAX] {
        cases.push((format!("handleType {v}"), aclrtMemPoolProps { handleType: v, ..props(0, POOL_SIZE) }, PARAM));
    }
    for v in [0, 2, -1, i32::MAX] {
        let mut pr = props(0, POOL_SIZE);
        pr.location.type_ = v;
        cases.push((format!("location.type {v}"), pr, PARAM));
    }
    for v in [2, u32::MAX] {
        cases.push((format!("location.id {v}"), props(v, POOL_SIZE), DEVICE_ID));
    }
    for i in [0, 17, 31] {
        let mut pr = props(0, POOL_SIZE);
        pr.reserved[i] = 0xff;
        cases.push((format!("reserved[{i}] not zero"), pr, PARAM));
    }
    cases.push(("maxSize of the device + 1".into(), props(0, DEVICE_MEMORY + 1), RT_PARAM));
    cases.push(("maxSize 2^62".into(), props(0, 1 << 62), RT_PARAM));
    for n in OVERFLOWING {
        cases.push((format!("maxSize {n:#x} (overflows when rounded)"), props(0, n), RT_PARAM));
    }
    cases.push(("maxSize 1 (one granule)".into(), props(0, 1), OK));
    cases.push((
        "handleType POSIX (2), accepted".into(),
        aclrtMemPoolProps { handleType: 2, ..props(0, POOL_SIZE) },
        OK,
    ));
    cases.push(("a pool of another device than the current one".into(), props(1, POOL_SIZE), OK));
    for (input, pr, want) in cases {
        t.add(C, input, want, move |_| create(pr));
    }
    t.add(C, "props at a misaligned address (read unaligned)", OK, |_| {
        let mut bytes = [0u8; size_of::<aclrtMemPoolProps>() + 1];
        let pr = props(0, POOL_SIZE);
        let at = bytes[1..].as_mut_ptr().cast::<aclrtMemPoolProps>();
        let mut pool: aclrtMemPool = null_mut();
        // SAFETY: `at` has room for one props struct (written unaligned); the shim reads
        // it unaligned; the pool created is destroyed again.
        unsafe {
            at.write_unaligned(pr);
            let rc = aclrtMemPoolCreate(&mut pool, at);
            check(aclrtMemPoolDestroy(pool), "destroying it");
            rc
        }
    });
    t.fresh(C, "without a current device", NO_CONTEXT, |_| {
        let mut pool = SENTINEL as aclrtMemPool;
        let pr = props(0, POOL_SIZE);
        // SAFETY: a valid out-pointer and props.
        untouched(unsafe { aclrtMemPoolCreate(&mut pool, &pr) }, pool as usize)
    });

    const D: &str = "aclrtMemPoolDestroy";
    t.add(D, "null", PARAM, |_| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtMemPoolDestroy(null_mut()) }
    });
    for (input, h) in bad_handles(Kind::Pool) {
        t.add(D, input, INTERNAL, move |f| {
            // SAFETY: handles are looked up in the shim's registry, never dereferenced.
            unsafe { aclrtMemPoolDestroy(sv(f.h(h))) }
        });
    }
    t.fresh(D, "a live pool, without a current device (it stays alive)", NO_CONTEXT, |f| {
        // SAFETY: a live handle.
        unsafe { aclrtMemPoolDestroy(sv(f.p)) }
    });
}

pub(super) fn pool_attr_rows(t: &mut Table) {
    const S: &str = "aclrtMemPoolSetAttr";
    const G: &str = "aclrtMemPoolGetAttr";
    let set = |pool: usize, attr: i32, value: Option<u64>| {
        mempool_hostile::with_value(value, |ptr| {
            // SAFETY: `ptr` is null or points to a `uint64_t`, at least as wide as any
            // attribute's value (a `uint32_t` is read from its first four bytes: little
            // endian); handles are looked up, never dereferenced.
            unsafe { aclrtMemPoolSetAttr(sv(pool), attr, ptr) }
        })
    };
    let get = |pool: usize, attr: i32, out: bool| {
        let (rc, v) = mempool_hostile::with_out(out, |ptr| {
            // SAFETY: `ptr` is null or points to a `uint64_t`, room for any attribute's
            // value; handles are looked up, never dereferenced.
            unsafe { aclrtMemPoolGetAttr(sv(pool), attr, ptr) }
        });
        untouched(rc, v)
    };
    t.add(S, "null pool", PARAM, move |_| set(0, 4, Some(0)));
    t.add(G, "null pool", PARAM, move |_| get(0, 7, true));
    for (input, h) in bad_handles(Kind::Pool) {
        t.add(S, format!("pool: {input}"), RT_PARAM, move |f| set(f.h(h), 4, Some(0)));
        t.add(G, format!("pool: {input}"), RT_PARAM, move |f| get(f.h(h), 7, true));
    }
    for attr in [0, 9, -1, i32::MAX, i32::MIN] {
        t.add(S, format!("attribute {attr}"), RT_PARAM, move |f| set(f.p, attr, Some(0)));
        t.add(G, format!("attribute {attr}"), RT_PARAM, move |f| get(f.p, attr, true));
    }
    for attr in 1..=8 {
        t.add(S, format!("attribute {attr}, null value"), RT_PARAM, move |f| set(f.p, attr, None));
        t.add(G, format!("attribute {attr}, null value"), RT_PARAM, move |f| get(f.p, attr, false));
    }
    for attr in [5, 7] {
        for v in [0, 1, u64::MAX] {
            t.add(S, format!("read-only attribute {attr} = {v}"), RT_PARAM, move |f| set(f.p, attr, Some(v)));
        }
    }
    for attr in [6, 8] {
        for v in [1, GRAN as u64, u64::MAX] {
            t.add(S, format!("high mark {attr} = {v} (only 0 resets)"), INTERNAL, move |f| set(f.p, attr, Some(v)));
        }
    }
    for (input, v) in [("pool size + 1", POOL_SIZE as u64 + 1), ("u64::MAX", u64::MAX)] {
        t.add(S, format!("threshold {input} (above the pool size)"), INTERNAL, move |f| set(f.p, 4, Some(v)));
    }
    t.add(S, "threshold = the pool size through a misaligned value pointer (read unaligned)", OK, |f| {
        let mut bytes = [0u8; 9];
        bytes[1..].copy_from_slice(&(POOL_SIZE as u64).to_ne_bytes());
        // SAFETY: eight readable bytes at `bytes[1]`, read unaligned by the shim; a live
        // pool.
        unsafe { aclrtMemPoolSetAttr(sv(f.p), 4, bytes[1..].as_mut_ptr().cast()) }
    });
    t.add(G, "attribute 7 through a misaligned value pointer (written unaligned)", OK, |f| {
        let mut bytes = [0u8; 9];
        // SAFETY: eight writable bytes at `bytes[1]`, written unaligned by the shim; a
        // live pool.
        let rc = unsafe { aclrtMemPoolGetAttr(sv(f.p), 7, bytes[1..].as_mut_ptr().cast()) };
        assert_eq!(u64::from_ne_bytes(bytes[1..].try_into().unwrap()), GRAN as u64, "USED of the witness pool");
        rc
    });
    t.add(S, "reuse flag 1 = 0xdeadbeef (stores 1), then 0", OK, |f| {
        let (on, off) = (0xdead_beef_u32, 0u32);
        let mut back = 0u32;
        // SAFETY: `uint32_t` values, the width of attribute 1; a live pool.
        unsafe {
            let rc = aclrtMemPoolSetAttr(sv(f.p), 1, (&raw const on).cast_mut().cast());
            check(aclrtMemPoolGetAttr(sv(f.p), 1, (&raw mut back).cast()), "reading the flag");
            assert_eq!(back, 1, "a non-zero flag reads 1");
            check(aclrtMemPoolSetAttr(sv(f.p), 1, (&raw const off).cast_mut().cast()), "turning it off");
            rc
        }
    });
    // Attributes 4-8 need the current context on CANN (it crashes without one): 107002.
    t.fresh(S, "attribute 4 of a live pool, without a current device", NO_CONTEXT, |f| {
        let v = POOL_SIZE as u64;
        // SAFETY: a `uint64_t`, the width of attribute 4; a live pool.
        unsafe { aclrtMemPoolSetAttr(sv(f.p), 4, (&raw const v).cast_mut().cast()) }
    });
    t.fresh(G, "attribute 7 of a live pool, without a current device", NO_CONTEXT, move |f| get(f.p, 7, true));
    t.fresh(S, "attribute 1 of a live pool, without a current device (the reuse flags need none)", OK, |f| {
        let v = 0u32;
        // SAFETY: a `uint32_t`, the width of attribute 1; a live pool.
        unsafe { aclrtMemPoolSetAttr(sv(f.p), 1, (&raw const v).cast_mut().cast()) }
    });
    t.fresh(G, "attribute 1 of a live pool, without a current device (the reuse flags need none)", OK, move |f| {
        get(f.p, 1, true)
    });
}

pub(super) fn pool_alloc_rows(t: &mut Table) {
    const M: &str = "aclrtMemPoolMallocAsync";
    let malloc = |out: bool, size: usize, pool: usize, stream: usize| {
        let mut p = SENTINEL as *mut c_void;
        let ptr: *mut *mut c_void = if out { &mut p } else { null_mut() };
        // SAFETY: `ptr` is null or a valid out-pointer; handles are looked up, never
        // dereferenced.
        let rc = unsafe { aclrtMemPoolMallocAsync(ptr, size, sv(pool), sv(stream)) };
        if rc == OK && p as usize != SENTINEL {
            // SAFETY: the address was just allocated on `stream`.
            check(unsafe { aclrtMemPoolFreeAsync(p, sv(stream)) }, "freeing it again");
        }
        untouched(rc, p as usize)
    };
    t.add(M, "null ptr", PARAM, move |f| malloc(false, 16, f.p, f.s));
    t.add(M, "null pool", PARAM, move |f| malloc(true, 16, 0, f.s));
    t.add(M, "null stream", PARAM, move |f| malloc(true, 16, f.p, 0));
    t.add(M, "size 0 (nothing written)", OK, move |f| malloc(true, 0, f.p, f.s));
    t.add(M, "size 0 with a garbage pool and stream (size 0 is checked first)", OK, move |_| {
        malloc(true, 0, 0x1234, 0x1234)
    });
    for (input, h) in bad_handles(Kind::Pool) {
        t.add(M, format!("pool: {input}"), INTERNAL, move |f| malloc(true, 16, f.h(h), f.s));
    }
    for (input, h) in bad_handles(Kind::Stream) {
        t.add(M, format!("stream: {input}"), HANDLE, move |f| malloc(true, 16, f.p, f.h(h)));
    }
    t.add(M, "a stream of another device", STREAM_CONTEXT, move |f| malloc(true, 16, f.p, f.s1));
    t.add(M, "a pool of another device than the stream", STREAM_CONTEXT, move |f| malloc(true, 16, f.p1, f.s));
    for n in OVERFLOWING {
        t.add(M, format!("size {n:#x} (overflows when rounded)"), RT_PARAM, move |f| malloc(true, n, f.p, f.s));
    }
    for (input, n) in
        [("pool size + 1", POOL_SIZE + 1), ("2^62", 1 << 62), ("SIZE_MAX - 2 granules", usize::MAX - 2 * GRAN)]
    {
        t.add(M, format!("size {input} (more than the pool)"), INTERNAL, move |f| malloc(true, n, f.p, f.s));
    }
    t.add(M, "size 1 in a new pool (one granule)", OK, |f| {
        let pool = witness_pool(0);
        let mut p: *mut c_void = null_mut();
        let mut used = 0u64;
        // SAFETY: a valid out-pointer, live handles, a `uint64_t` for attribute 7; the
        // allocation is freed and the pool destroyed.
        unsafe {
            let rc = aclrtMemPoolMallocAsync(&mut p, 1, sv(pool), sv(f.s));
            check(aclrtMemPoolGetAttr(sv(pool), 7, (&raw mut used).cast()), "USED");
            assert_eq!(used, GRAN as u64, "one byte uses one granule");
            assert_eq!(p as usize % GRAN, 0, "granule-aligned");
            check(aclrtMemPoolFreeAsync(p, sv(f.s)), "freeing it");
            check(aclrtSynchronizeStream(sv(f.s)), "synchronizing");
            check(aclrtMemPoolDestroy(sv(pool)), "destroying the pool");
            rc
        }
    });
    t.fresh(M, "live pool and stream, without a current device", STREAM_CONTEXT, move |f| malloc(true, 16, f.p, f.s));

    const F: &str = "aclrtMemPoolFreeAsync";
    let free = |ptr: usize, stream: usize| {
        // SAFETY: pointers are looked up by the emulator, never dereferenced; handles are
        // looked up in the shim's registry.
        unsafe { aclrtMemPoolFreeAsync(sv(ptr), sv(stream)) }
    };
    t.add(F, "null ptr", PARAM, move |f| free(0, f.s));
    t.add(F, "null ptr and null stream", PARAM, move |_| free(0, 0));
    t.add(F, "a live pointer on a null stream", INTERNAL, move |f| free(f.a, 0));
    for (input, h) in bad_handles(Kind::Stream) {
        t.add(F, format!("a live pointer on stream: {input}"), HANDLE, move |f| free(f.a, f.h(h)));
    }
    t.add(F, "a live pointer on a stream of another device", STREAM_CONTEXT, move |f| free(f.a, f.s1));
    let mut ptrs = bad_free_pointers();
    ptrs.extend([
        ("an interior pointer of aclrtMalloc memory".to_string(), Ptr::D(8)),
        ("an aclrtMalloc address already freed".to_string(), Ptr::DFreed),
    ]);
    for (input, p) in ptrs {
        t.add(F, input, RT_PARAM, move |f| free(f.ptr(p), f.s));
    }
    t.fresh(F, "a live pointer, without a current device", STREAM_CONTEXT, move |f| free(f.a, f.s));

    const T: &str = "aclrtMemPoolTrimTo";
    let trim = |pool: usize, keep: usize| {
        // SAFETY: handles are looked up in the shim's registry, never dereferenced.
        unsafe { aclrtMemPoolTrimTo(sv(pool), keep) }
    };
    t.add(T, "null pool", PARAM, move |_| trim(0, 0));
    for (input, h) in bad_handles(Kind::Pool) {
        t.add(T, format!("pool: {input}"), INTERNAL, move |f| trim(f.h(h), POOL_SIZE));
    }
    for (input, keep) in
        [("0, below USED", 0), ("USED - 1", GRAN - 1), ("pool size + 1", POOL_SIZE + 1), ("SIZE_MAX", usize::MAX)]
    {
        t.add(T, format!("keep {input}"), INTERNAL, move |f| trim(f.p, keep));
    }
    t.add(T, "keep RESERVED (nothing to do)", OK, move |f| trim(f.p, 2 * GRAN));
    t.fresh(T, "keep the pool size, without a current device (107002, as CANN)", NO_CONTEXT, move |f| {
        trim(f.p, POOL_SIZE)
    });
}

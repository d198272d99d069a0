//! Rows for the virtual-memory calls (contract §14): null pointers, sizes 0, 1 and
//! `SIZE_MAX`, flags, every property field, garbage, freed and wrong-kind handles,
//! addresses outside a reservation, inside one, misaligned, mapped and unmapped, access
//! descriptors, granularity options. Their codes are CANN's, layer by layer: 100000 (ACL),
//! 107001 and 107002 (runtime), 107000 and 207000 (driver library), 507899 (kernel).
//!
//! The rows share a small fixture of their own, made at the first row that needs it: a
//! range of four granules with one chunk mapped at its start, a handle already freed, and
//! the start of a range already released.

use super::*;
use std::sync::OnceLock;

const DRV: aclError = ACL_ERROR_RT_DRV_INTERNAL_ERROR;

/// An address (or handle value) a row computes from the fixtures.
type At = Box<dyn Fn(&Fx) -> usize + Send + Sync>;
/// An address and a size a row computes from the fixtures.
type Span = Box<dyn Fn(&Fx) -> (usize, usize) + Send + Sync>;
const G: usize = GRAN;

/// The rows' own objects, as addresses and handle values.
struct Vfx {
    /// A range of four granules; a live chunk of one granule mapped at its start.
    base: usize,
    chunk: usize,
    /// A live chunk mapped nowhere.
    spare: usize,
    /// A handle already freed, and the start of a range already released.
    freed: usize,
    released: usize,
}

fn vfx() -> &'static Vfx {
    static V: OnceLock<Vfx> = OnceLock::new();
    V.get_or_init(|| {
        let prop = prop();
        let [mut base, mut released] = [null_mut::<c_void>(); 2];
        let [mut chunk, mut spare, mut freed] = [null_mut::<c_void>(); 3];
        // SAFETY: valid out-pointers, props, and handles and addresses the shim returned.
        unsafe {
            check(aclrtReserveMemAddress(&mut base, 4 * G, 0, null_mut(), 0), "reserving");
            check(aclrtMallocPhysical(&mut chunk, G, &prop, 0), "a chunk");
            check(aclrtMapMem(base, G, 0, chunk, 0), "mapping it");
            check(aclrtMallocPhysical(&mut spare, G, &prop, 0), "a spare chunk");
            check(aclrtMallocPhysical(&mut freed, G, &prop, 0), "a chunk to free");
            check(aclrtFreePhysical(freed), "freeing it");
            check(aclrtReserveMemAddress(&mut released, G, 0, null_mut(), 0), "reserving");
            check(aclrtReleaseMemAddress(released), "releasing it");
        }
        Vfx {
            base: base as usize,
            chunk: chunk as usize,
            spare: spare as usize,
            freed: freed as usize,
            released: released as usize,
        }
    })
}

/// Pinned device memory of device 0 in 2 MiB pages.
fn prop() -> aclrtPhysicalMemProp {
    aclrtPhysicalMemProp::device(0)
}

/// Hostile physical properties and the code each gets from `aclrtMallocPhysical`; the
/// granularity query (no handle or allocation type checks) answers `for_granularity`.
fn bad_props() -> Vec<(String, aclrtPhysicalMemProp, aclError, aclError)> {
    let with = |f: &dyn Fn(&mut aclrtPhysicalMemProp)| {
        let mut p = prop();
        f(&mut p);
        p
    };
    let mut v = vec![
        ("handleType POSIX".to_string(), with(&|p| p.handleType = 2), PARAM, OK),
        ("handleType -1".to_string(), with(&|p| p.handleType = -1), PARAM, OK),
        ("allocationType 1".to_string(), with(&|p| p.allocationType = 1), PARAM, OK),
        ("location unregistered (2)".to_string(), with(&|p| p.location.type_ = 2), PARAM, OK),
        ("location managed (3)".to_string(), with(&|p| p.location.type_ = 3), PARAM, RT_PARAM),
        ("location type 5".to_string(), with(&|p| p.location.type_ = 5), RT_PARAM, RT_PARAM),
        ("location type -1".to_string(), with(&|p| p.location.type_ = -1), RT_PARAM, RT_PARAM),
        ("device 2 (of 2)".to_string(), with(&|p| p.location.id = 2), DEVICE_ID, DEVICE_ID),
        ("device u32::MAX".to_string(), with(&|p| p.location.id = u32::MAX), DEVICE_ID, DEVICE_ID),
        ("reserve 1".to_string(), with(&|p| p.reserve = 1), RT_PARAM, RT_PARAM),
        ("host location (0)".to_string(), with(&|p| p.location.type_ = 0), FEATURE, OK),
    ];
    for attr in [0, 1, 8, 9, 11, 18, -1, i32::MAX] {
        v.push((format!("memAttr {attr}"), with(&|p| p.memAttr = attr), PARAM, PARAM));
    }
    for attr in [2, 3, 6, 7] {
        v.push((format!("memAttr {attr} (DDR) on a device"), with(&|p| p.memAttr = attr), PARAM, PARAM));
    }
    v
}

pub(super) fn vmm_rows(t: &mut Table) {
    reserve_rows(t);
    physical_rows(t);
    map_rows(t);
    access_rows(t);
    granularity_rows(t);
}

fn reserve_rows(t: &mut Table) {
    const E: &str = "aclrtReserveMemAddress";
    t.add(E, "null virPtr", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtReserveMemAddress(null_mut(), G, 0, null_mut(), 0) }
    });
    let cases: Vec<(String, usize, usize, usize, u64, aclError)> = vec![
        ("size 0".into(), 0, 0, 0, 0, PARAM),
        ("flags 2".into(), G, 0, 0, 2, PARAM),
        ("flags u64::MAX".into(), G, 0, 0, u64::MAX, PARAM),
        ("alignment 4096 (it must be 0)".into(), G, 4096, 0, 0, RT_PARAM),
        ("alignment SIZE_MAX".into(), G, usize::MAX, 0, 0, RT_PARAM),
        ("expectPtr 0x1234 (misaligned)".into(), G, 0, 0x1234, 0, RT_PARAM),
        ("expectPtr one granule, size 3 granules (below its power of two)".into(), 3 * G, 0, G, 0, RT_PARAM),
        ("expectPtr usize::MAX".into(), G, 0, usize::MAX, 0, RT_PARAM),
        ("size SIZE_MAX, expectPtr one granule (no power of two above it)".into(), usize::MAX, 0, G, 0, RT_PARAM),
        ("size 2^62, expectPtr one granule (below its power of two)".into(), 1 << 62, 0, G, 0, RT_PARAM),
        ("size SIZE_MAX".into(), usize::MAX, 0, 0, 0, RT_PARAM),
        (
            "size SIZE_MAX - granule + 2 (not a multiple of the granularity)".into(),
            usize::MAX - G + 2,
            0,
            0,
            0,
            RT_PARAM,
        ),
        ("size 1.5 granules".into(), G + G / 2, 0, 0, 0, RT_PARAM),
        ("size 2^62 (no such address space)".into(), 1 << 62, 0, 0, 0, HOST_ALLOC),
    ];
    for (input, size, align, expect, flags, want) in cases {
        t.add(E, input, want, move |_| {
            let mut p = SENTINEL as *mut c_void;
            // SAFETY: a valid out-pointer; `expect` is only compared.
            untouched(unsafe { aclrtReserveMemAddress(&mut p, size, align, sv(expect), flags) }, p as usize)
        });
    }
    for (input, size, flags) in [("size 1 (one granule), flags 1", 1, 1), ("without a current device", G, 0)] {
        t.fresh(E, input, OK, move |_| {
            let mut p: *mut c_void = null_mut();
            // SAFETY: a valid out-pointer, then the address it received.
            unsafe {
                let rc = aclrtReserveMemAddress(&mut p, size, 0, null_mut(), flags);
                assert_eq!(p as usize % G, 0, "a reservation is aligned to the granularity");
                check(aclrtReleaseMemAddress(p), "releasing it");
                rc
            }
        });
    }

    const R: &str = "aclrtReleaseMemAddress";
    t.add(R, "null", PARAM, |_| {
        // SAFETY: addresses are looked up, never dereferenced.
        unsafe { aclrtReleaseMemAddress(null_mut()) }
    });
    let mut ptrs: Vec<(String, At)> =
        GARBAGE.iter().map(|&g| (format!("garbage {g:#x}"), Box::new(move |_: &Fx| g) as _)).collect();
    ptrs.push(("a range still mapped".into(), Box::new(|_| vfx().base)));
    ptrs.push(("inside a range".into(), Box::new(|_| vfx().base + G)));
    ptrs.push(("a range already released".into(), Box::new(|_| vfx().released)));
    ptrs.push(("a pool allocation".into(), Box::new(|f| f.a)));
    ptrs.push(("aclrtMalloc memory".into(), Box::new(|f| f.d)));
    ptrs.push(("a host stack address".into(), Box::new(|f| f.stack)));
    for (input, p) in ptrs {
        t.add(R, input, RT_PARAM, move |f| {
            // SAFETY: addresses are looked up, never dereferenced.
            unsafe { aclrtReleaseMemAddress(sv(p(f))) }
        });
    }
}

fn physical_rows(t: &mut Table) {
    const E: &str = "aclrtMallocPhysical";
    t.add(E, "null handle", PARAM, |_| {
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtMallocPhysical(null_mut(), G, &prop(), 0) }
    });
    t.add(E, "null prop", PARAM, |_| {
        let mut h = SENTINEL as aclrtDrvMemHandle;
        // SAFETY: a null props pointer, refused before any read.
        untouched(unsafe { aclrtMallocPhysical(&mut h, G, std::ptr::null(), 0) }, h as usize)
    });
    let mut cases: Vec<(String, aclrtPhysicalMemProp, usize, u64, aclError)> = vec![
        ("size 0".into(), prop(), 0, 0, PARAM),
        ("flags 1".into(), prop(), G, 1, PARAM),
        ("size 1 (not a multiple of the granularity)".into(), prop(), 1, 0, DRV),
        ("size granule + 1".into(), prop(), G + 1, 0, DRV),
        ("size SIZE_MAX".into(), prop(), usize::MAX, 0, DRV),
        ("size twice the device".into(), prop(), 2 * DEVICE_MEMORY, 0, HOST_ALLOC),
    ];
    let mut giant = prop();
    giant.memAttr = ACL_HBM_MEM_HUGE1G;
    cases.push(("a 1 GiB page kind, size SIZE_MAX (no such memory)".into(), giant, usize::MAX, 0, HOST_ALLOC));
    cases.extend(bad_props().into_iter().map(|(input, p, want, _)| (input, p, G, 0, want)));
    for (input, p, size, flags, want) in cases {
        t.add(E, input, want, move |_| {
            let mut h = SENTINEL as aclrtDrvMemHandle;
            // SAFETY: a valid out-pointer and props.
            untouched(unsafe { aclrtMallocPhysical(&mut h, size, &p, flags) }, h as usize)
        });
    }
    let mut numa = prop();
    numa.location.type_ = 4;
    t.fresh(E, "host-NUMA location, without a current device", NO_CONTEXT, move |_| {
        let mut h = SENTINEL as aclrtDrvMemHandle;
        // SAFETY: a valid out-pointer and props.
        untouched(unsafe { aclrtMallocPhysical(&mut h, G, &numa, 0) }, h as usize)
    });
    t.add(E, "host-NUMA location (not supported)", FEATURE, move |_| {
        let mut h = SENTINEL as aclrtDrvMemHandle;
        // SAFETY: a valid out-pointer and props.
        untouched(unsafe { aclrtMallocPhysical(&mut h, G, &numa, 0) }, h as usize)
    });
    t.fresh(E, "one granule of device 1, without a current device", OK, |_| {
        let mut p = prop();
        p.location.id = 1;
        let mut h: aclrtDrvMemHandle = null_mut();
        // SAFETY: a valid out-pointer and props, then the handle it received.
        unsafe {
            let rc = aclrtMallocPhysical(&mut h, G, &p, 0);
            check(aclrtFreePhysical(h), "freeing it");
            rc
        }
    });

    const F: &str = "aclrtFreePhysical";
    t.add(F, "null", PARAM, |_| {
        // SAFETY: handles are looked up, never dereferenced.
        unsafe { aclrtFreePhysical(null_mut()) }
    });
    for (input, h) in bad_chunks() {
        t.add(F, input, RT_PARAM, move |f| {
            // SAFETY: handles are looked up, never dereferenced.
            unsafe { aclrtFreePhysical(sv(h(f))) }
        });
    }
}

/// Handles `aclrtFreePhysical` and `aclrtMapMem` refuse (107000).
fn bad_chunks() -> Vec<(String, At)> {
    let mut v: Vec<(String, At)> =
        GARBAGE.iter().map(|&g| (format!("garbage {g:#x}"), Box::new(move |_: &Fx| g) as _)).collect();
    v.push(("a handle already freed".into(), Box::new(|_| vfx().freed)));
    v.push(("a stream handle".into(), Box::new(|f| f.s)));
    v.push(("a pool handle".into(), Box::new(|f| f.p)));
    v.push(("a mapped address".into(), Box::new(|_| vfx().base)));
    v
}

fn map_rows(t: &mut Table) {
    const E: &str = "aclrtMapMem";
    let free_at = |_: &Fx| vfx().base + G;
    t.add(E, "null virPtr", PARAM, |_| {
        // SAFETY: addresses and handles are looked up, never dereferenced.
        unsafe { aclrtMapMem(null_mut(), G, 0, sv(vfx().spare), 0) }
    });
    t.add(E, "null handle", PARAM, move |f| {
        // SAFETY: as above.
        unsafe { aclrtMapMem(sv(free_at(f)), G, 0, null_mut(), 0) }
    });
    let cases: Vec<(String, usize, usize, u64, aclError)> = vec![
        ("size 0".into(), 0, 0, 0, PARAM),
        ("flags 1".into(), G, 0, 1, PARAM),
        ("flags u64::MAX".into(), G, 0, u64::MAX, PARAM),
        ("offset one granule (it must be 0)".into(), G, G, 0, RT_PARAM),
        ("offset SIZE_MAX".into(), G, usize::MAX, 0, RT_PARAM),
        ("size 1".into(), 1, 0, 0, DRV),
        ("size SIZE_MAX (past the chunk)".into(), usize::MAX, 0, 0, DRV),
        ("size two granules (past the chunk)".into(), 2 * G, 0, 0, DRV),
    ];
    for (input, size, offset, flags, want) in cases {
        t.add(E, input, want, move |f| {
            // SAFETY: as above.
            unsafe { aclrtMapMem(sv(free_at(f)), size, offset, sv(vfx().spare), flags) }
        });
    }
    for (input, h) in bad_chunks() {
        t.add(E, format!("handle: {input}"), RT_PARAM, move |f| {
            // SAFETY: as above.
            unsafe { aclrtMapMem(sv(free_at(f)), G, 0, sv(h(f)), 0) }
        });
    }
    let mut at: Vec<(String, At)> =
        GARBAGE.iter().map(|&g| (format!("garbage {g:#x}"), Box::new(move |_: &Fx| g) as _)).collect();
    at.push(("over the mapped chunk".into(), Box::new(|_| vfx().base)));
    at.push(("misaligned inside the range".into(), Box::new(|_| vfx().base + G + 4096)));
    at.push(("a range already released".into(), Box::new(|_| vfx().released)));
    at.push(("a pool allocation".into(), Box::new(|f| f.a)));
    at.push(("a host stack address".into(), Box::new(|f| f.stack)));
    for (input, p) in at {
        t.add(E, format!("at {input}"), DRV, move |f| {
            // SAFETY: as above.
            unsafe { aclrtMapMem(sv(p(f)), G, 0, sv(vfx().spare), 0) }
        });
    }

    const U: &str = "aclrtUnmapMem";
    t.add(U, "null", PARAM, |_| {
        // SAFETY: addresses are looked up, never dereferenced.
        unsafe { aclrtUnmapMem(null_mut()) }
    });
    let mut ptrs: Vec<(String, At)> =
        GARBAGE.iter().map(|&g| (format!("garbage {g:#x}"), Box::new(move |_: &Fx| g) as _)).collect();
    ptrs.push(("inside a mapping".into(), Box::new(|_| vfx().base + 4096)));
    ptrs.push(("an unmapped part of a range".into(), Box::new(|_| vfx().base + G)));
    ptrs.push(("a pool allocation".into(), Box::new(|f| f.a)));
    ptrs.push(("a host stack address".into(), Box::new(|f| f.stack)));
    for (input, p) in ptrs {
        t.add(U, input, DRV, move |f| {
            // SAFETY: as above.
            unsafe { aclrtUnmapMem(sv(p(f))) }
        });
    }
    t.fresh(U, "a whole mapping, without a current device; mapped again after", OK, |_| {
        let v = vfx();
        // SAFETY: the fixture's range and chunk.
        unsafe {
            let rc = aclrtUnmapMem(sv(v.base));
            check(aclrtMapMem(sv(v.base), G, 0, sv(v.chunk), 0), "mapping it again");
            rc
        }
    });
}

fn desc(flags: i32, location_type: i32, id: u32) -> aclrtMemAccessDesc {
    aclrtMemAccessDesc { flags, location: aclrtMemLocation { id, type_: location_type }, rsv: [0; 12] }
}

fn access_rows(t: &mut Table) {
    const E: &str = "aclrtMemSetAccess";
    let rw = desc(ACL_RT_MEM_ACCESS_FLAGS_READWRITE, ACL_MEM_LOCATION_TYPE_DEVICE, 0);
    t.add(E, "null virPtr (107000: ACL checks nothing here)", RT_PARAM, move |_| {
        let mut d = rw;
        // SAFETY: one readable descriptor.
        unsafe { aclrtMemSetAccess(null_mut(), G, &mut d, 1) }
    });
    t.add(E, "null desc", RT_PARAM, |_| {
        // SAFETY: a null descriptor pointer, refused before any read.
        unsafe { aclrtMemSetAccess(sv(vfx().base), G, null_mut(), 1) }
    });
    let mut cases: Vec<(String, aclrtMemAccessDesc, usize, aclError)> = vec![
        ("count 0".into(), rw, 0, RT_PARAM),
        ("flags NONE (only read-write is granted)".into(), desc(0, 1, 0), 1, FEATURE),
        ("flags READ".into(), desc(1, 1, 0), 1, FEATURE),
        ("the host with id 1".into(), desc(3, 0, 1), 1, RT_PARAM),
        ("device 2 (of 2)".into(), desc(3, 1, 2), 1, RT_PARAM),
        ("count SIZE_MAX, the first descriptor refused".into(), desc(7, 1, 0), usize::MAX, RT_PARAM),
    ];
    for flags in [2, 7, -1] {
        cases.push((format!("flags {flags}"), desc(flags, 1, 0), 1, RT_PARAM));
    }
    for ty in [2, 3, 4, -1] {
        cases.push((format!("location type {ty}"), desc(3, ty, 0), 1, RT_PARAM));
    }
    for (input, d, count, want) in cases {
        t.add(E, input, want, move |_| {
            let mut d = d;
            // SAFETY: one readable descriptor; a larger count is refused at the first.
            unsafe { aclrtMemSetAccess(sv(vfx().base), G, &mut d, count) }
        });
    }
    let ranges: Vec<(String, Span, aclError)> = vec![
        ("an unmapped part of a range".into(), Box::new(|_| (vfx().base + G, G)), RT_PARAM),
        ("the mapping and an unmapped granule".into(), Box::new(|_| (vfx().base, 2 * G)), RT_PARAM),
        ("half the mapping".into(), Box::new(|_| (vfx().base, G / 2)), RT_PARAM),
        ("garbage 0x1234".into(), Box::new(|_| (0x1234, G)), RT_PARAM),
        ("a pool allocation".into(), Box::new(|f| (f.a, G)), RT_PARAM),
        ("the mapping, size SIZE_MAX".into(), Box::new(|_| (vfx().base, usize::MAX)), RT_PARAM),
        ("exactly the mapping, read-write (granted)".into(), Box::new(|_| (vfx().base, G)), OK),
    ];
    for (input, r, want) in ranges {
        t.add(E, input, want, move |f| {
            let (at, size) = r(f);
            let mut d = rw;
            // SAFETY: one readable descriptor; addresses are looked up.
            unsafe { aclrtMemSetAccess(sv(at), size, &mut d, 1) }
        });
    }
}

fn granularity_rows(t: &mut Table) {
    const E: &str = "aclrtMemGetAllocationGranularity";
    t.add(E, "null prop", PARAM, |_| {
        let mut g = SENTINEL;
        // SAFETY: a null props pointer, refused before any read.
        untouched(unsafe { aclrtMemGetAllocationGranularity(null_mut(), 0, &mut g) }, g)
    });
    t.add(E, "null granularity", PARAM, |_| {
        let mut p = prop();
        // SAFETY: a null out-pointer, refused before any write.
        unsafe { aclrtMemGetAllocationGranularity(&mut p, 0, null_mut()) }
    });
    let mut cases: Vec<(String, aclrtPhysicalMemProp, i32, aclError)> =
        bad_props().into_iter().map(|(input, p, _, want)| (input, p, 0, want)).collect();
    for option in [2, ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF, -1] {
        cases.push((format!("option {option}"), prop(), option, FEATURE));
    }
    for (input, p, option, want) in cases {
        t.add(E, input, want, move |_| {
            let mut p = p;
            let mut g = SENTINEL;
            // SAFETY: valid props and out-pointer.
            let rc = untouched(unsafe { aclrtMemGetAllocationGranularity(&mut p, option, &mut g) }, g);
            assert!(rc != OK || g == G, "granularity {g}");
            rc
        });
    }
    let mut giant = prop();
    giant.memAttr = ACL_MEM_HUGE1G;
    t.fresh(E, "a 1 GiB page kind, without a current device", OK, move |_| {
        let mut p = giant;
        let mut g = 0usize;
        // SAFETY: valid props and out-pointer.
        let rc = unsafe { aclrtMemGetAllocationGranularity(&mut p, ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, &mut g) };
        assert_eq!(g, 1 << 30);
        rc
    });
}

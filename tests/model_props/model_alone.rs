//! The model alone, against contract §10 (`mempool_hal::contract::conformance`), and
//! against the checker (§11), devices (§1) and profiles (§12).

use super::*;
use mempool_hal::ErrorKind;

/// A valid pool of 32 granules on `device`.
fn props(device: u32) -> Props {
    Props { alloc_type: 0, handle_type: 0, device, location_type: 1, max_size: 32 * G, reserved_dirty: false }
}

fn model_of(profile: Profile) -> (Model, usize, usize, usize) {
    let mut m = Model::new(G, 1, DEVICE, profile, Deviations::default());
    let (a, b) = (m.create_stream(), m.create_stream());
    let p = m.create_pool(&props(0));
    (m, a, b, p.unwrap())
}

fn model() -> (Model, usize, usize, usize) {
    model_of(Profile::Documented)
}

fn kind<T: std::fmt::Debug>(r: Res<T>) -> ErrorKind {
    r.unwrap_err().kind
}

fn at(pool: usize, offset: u64) -> Addr {
    Addr::Pool { pool, offset }
}

#[test]
fn model_best_fit_takes_the_smallest_block_then_the_lowest_address() {
    // Scenario 12: cached blocks of 3, 5 and 8 granules; 4 granules take the 5.
    let (mut m, a, _, p) = model();
    let offs: Vec<u64> = [3, 1, 5, 1, 8, 1].iter().map(|&g| m.malloc(p, g * G, a).unwrap().0).collect();
    for i in [0, 2, 4] {
        m.free(at(p, offs[i]), a).unwrap();
    }
    assert_eq!(m.malloc(p, 4 * G, a), Ok((offs[2], Rule::SameStream)));
    assert_eq!(m.malloc(p, G, a), Ok((offs[2] + 4 * G, Rule::SameStream)), "the rest of the 5 stays cached");
    assert_eq!(m.stats(p).unwrap().reserved_current, 19 * G);
}

#[test]
fn model_cross_stream_reuse_needs_sync_or_an_event() {
    // Scenarios 13-15.
    let (mut m, a, b, p) = model();
    let x = m.malloc(p, G, a).unwrap().0;
    m.free(at(p, x), a).unwrap();
    assert_eq!(m.malloc(p, G, b).unwrap().1, Rule::Fresh);
    let e = m.create_event();
    m.record_event(e, a).unwrap();
    m.stream_wait_event(b, e).unwrap();
    assert_eq!(m.malloc(p, G, b).unwrap().1, Rule::Fresh, "flag 1 is off");
    m.set_attr(p, 1, RawAttrValue::U32(9)).unwrap();
    assert_eq!(m.get_attr(p, 1), Ok(RawAttrValue::U32(1)));
    assert_eq!(m.malloc(p, G, b), Ok((x, Rule::EventDependency)));
    // An event recorded before the free does not order it.
    let y = m.malloc(p, G, a).unwrap().0;
    let e2 = m.create_event();
    m.record_event(e2, a).unwrap();
    m.free(at(p, y), a).unwrap();
    m.stream_wait_event(b, e2).unwrap();
    assert_eq!(m.malloc(p, G, b).unwrap().1, Rule::Fresh);
    m.synchronize_stream(a).unwrap();
    assert_eq!(m.stats(p).unwrap().reserved_current, m.stats(p).unwrap().used_current, "released at sync");
}

#[test]
fn model_chains_of_events_order_across_three_streams() {
    // Scenario 16.
    let (mut m, a, b, p) = model();
    let c = m.create_stream();
    m.set_attr(p, 1, RawAttrValue::U32(1)).unwrap();
    let x = m.malloc(p, G, a).unwrap().0;
    m.free(at(p, x), a).unwrap();
    let (e1, e2) = (m.create_event(), m.create_event());
    m.record_event(e1, a).unwrap();
    m.stream_wait_event(b, e1).unwrap();
    m.record_event(e2, b).unwrap();
    m.stream_wait_event(c, e2).unwrap();
    assert_eq!(m.malloc(p, G, c), Ok((x, Rule::EventDependency)));
}

#[test]
fn model_opportunistic_and_internal_reuse_follow_execution() {
    // Scenarios 17, 18 and 27.
    let (mut m, a, b, p) = model();
    m.set_attr(p, 2, RawAttrValue::U32(1)).unwrap();
    m.launch_host_func(a).unwrap();
    let x = m.malloc(p, G, a).unwrap().0;
    m.free(at(p, x), a).unwrap();
    assert_eq!(m.malloc(p, G, b).unwrap().1, Rule::Fresh, "the free has not executed");
    m.synchronize_stream(b).unwrap();
    assert_eq!(m.pending_cached_bytes(p), G, "a sync of another stream releases nothing pending");
    assert_eq!(m.trim_to(p, m.stats(p).unwrap().used_current), Ok(()));
    assert_eq!(m.stats(p).unwrap().reserved_current, 2 * G, "nor does a trim");
    m.set_attr(p, 3, RawAttrValue::U32(1)).unwrap();
    assert_eq!(m.malloc(p, G, b), Ok((x, Rule::InternalDependency)));
    assert_eq!(m.is_idle(b), Ok(false), "b waits for a");
    assert_eq!(m.step(b, 1), Ok(1));
    assert_eq!(m.is_idle(a), Ok(true), "running b's wait ran a");
    let y = m.malloc(p, G, a).unwrap().0;
    m.launch_host_func(a).unwrap();
    m.free(at(p, y), a).unwrap();
    m.run_pending(a).unwrap();
    m.set_attr(p, 3, RawAttrValue::U32(0)).unwrap();
    assert_eq!(m.malloc(p, G, b), Ok((y, Rule::Opportunistic)));
}

#[test]
fn model_release_and_trim_split_the_last_block() {
    // Scenarios 22-26.
    let (mut m, a, _, p) = model();
    let offs: Vec<u64> = [2, 1, 3, 1].iter().map(|&g| m.malloc(p, g * G, a).unwrap().0).collect();
    m.free(at(p, offs[0]), a).unwrap();
    m.free(at(p, offs[2]), a).unwrap();
    assert_eq!(m.trim_to(p, 33 * G).unwrap_err().code, 507_000);
    assert_eq!(m.trim_to(p, G).unwrap_err().code, 507_000);
    assert_eq!(m.trim_to(p, 7 * G), Ok(()));
    assert_eq!(m.stats(p).unwrap().reserved_current, 7 * G, "at or above RESERVED: nothing happens");
    m.trim_to(p, 4 * G).unwrap();
    // Smallest first: the 2-granule block, then the low granule of the 3.
    assert_eq!(m.stats(p).unwrap().reserved_current, 4 * G);
    assert_eq!(m.malloc(p, 2 * G, a), Ok((offs[2] + G, Rule::SameStream)));
    m.free(at(p, offs[2] + G), a).unwrap();
    m.set_attr(p, 4, RawAttrValue::U64(3 * G)).unwrap();
    m.synchronize_device(0).unwrap();
    assert_eq!(m.stats(p).unwrap().reserved_current, 3 * G, "down to the threshold");
    assert_eq!(m.set_attr(p, 4, RawAttrValue::U64(32 * G + 1)).unwrap_err().code, 507_000);
    assert_eq!(m.set_attr(p, 4, RawAttrValue::U64(32 * G)), Ok(()), "equal to the size is allowed");
}

#[test]
fn model_attributes_and_errors() {
    // Scenarios 1-6, 9, 19-21, 28, 29.
    let (mut m, a, _, p) = model();
    for id in 1..=8 {
        let zero = if id <= 3 { RawAttrValue::U32(0) } else { RawAttrValue::U64(0) };
        assert_eq!(m.get_attr(p, id), Ok(zero));
    }
    assert_eq!(m.set_attr(p, 5, RawAttrValue::U64(0)).unwrap_err().kind, mempool_hal::ErrorKind::ReadOnly);
    assert_eq!(m.set_attr(p, 8, RawAttrValue::U64(100)).unwrap_err().code, 507_000);
    assert_eq!(m.get_attr(p, 9).unwrap_err().code, 107_000);
    let x = m.malloc(p, 1, a).unwrap().0;
    assert_eq!(m.stats(p).unwrap().used_current, G);
    assert_eq!(m.free(at(p, x + 1), a).unwrap_err().code, 107_000, "interior");
    m.free(at(p, x), a).unwrap();
    assert_eq!(m.free(at(p, x), a).unwrap_err().code, 107_000, "double free");
    let oom = m.malloc(p, 33 * G, a).unwrap_err();
    assert_eq!((oom.code, oom.oom.map(|o| o.largest_free_range)), (507_000, Some(31 * G)));
    let y = m.malloc(p, G, a).unwrap().0;
    assert_eq!(y, x, "the pool still works");
    m.set_attr(p, 8, RawAttrValue::U64(0)).unwrap();
    assert_eq!(m.stats(p).unwrap().used_high, 0);
    m.malloc(p, G, a).unwrap();
    assert_eq!(m.stats(p).unwrap().used_high, 2 * G);
    m.destroy_pool(p).unwrap();
    assert_eq!(m.free(at(p, y), a).unwrap_err().code, 107_000, "a destroyed pool's pointer is unknown");
    assert_eq!(m.destroy_pool(p).unwrap_err().code, 507_000);
    m.destroy_stream(a).unwrap();
    assert_eq!(m.launch_host_func(a).unwrap_err().code, 107_017);
}

#[test]
fn model_checker_orders_copies_memsets_and_frees() {
    // Contract §11: accesses after the allocation, frees after every access, no use after
    // free, host observation orders later work.
    let (mut m, a, b, p) = model();
    let x = m.malloc(p, G, a).unwrap().0;
    assert_eq!(kind(m.access(b, &[at(p, x)], 8)), ErrorKind::StreamOrderViolation, "b is not ordered after it");
    assert_eq!(kind(m.host_access(&[(at(p, x), true)], 8)), ErrorKind::StreamOrderViolation, "nor is the host");
    assert_eq!(m.access(b, &[at(p, x)], 0), Ok(()), "an empty copy touches nothing");
    m.access(a, &[at(p, x)], 8).unwrap();
    let e = m.create_event();
    m.record_event(e, a).unwrap();
    m.stream_wait_event(b, e).unwrap();
    m.access(b, &[at(p, x)], G).unwrap();
    assert_eq!(kind(m.access(b, &[at(p, x)], G + 1)), ErrorKind::InvalidPointer, "past the allocation");
    assert_eq!(kind(m.free(at(p, x), a)), ErrorKind::StreamOrderViolation, "a is not ordered after b's copy");
    m.record_event(e, b).unwrap();
    m.stream_wait_event(a, e).unwrap();
    m.free(at(p, x), a).unwrap();
    assert_eq!(kind(m.access(a, &[at(p, x)], 1)), ErrorKind::StreamOrderViolation, "use after free");
    m.synchronize_stream(a).unwrap();
    assert_eq!(m.stats(p).unwrap().reserved_current, 0, "released");
    assert_eq!(kind(m.access(a, &[at(p, x)], 1)), ErrorKind::StreamOrderViolation, "still a use after free");
    assert_eq!(kind(m.access(a, &[at(p, 8 * G)], 1)), ErrorKind::InvalidPointer, "never allocated");
    // A device-to-device copy: both sides checked, each noted for the free.
    let y = m.malloc(p, G, a).unwrap().0;
    let z = m.malloc(p, G, b).unwrap().0;
    assert_eq!(kind(m.access(a, &[at(p, y), at(p, z)], 8)), ErrorKind::StreamOrderViolation);
    m.synchronize_stream(b).unwrap();
    m.host_access(&[(at(p, z), true)], G).unwrap();
    m.access(a, &[at(p, y), at(p, z)], 8).unwrap();
    assert_eq!(kind(m.free(at(p, z), b)), ErrorKind::StreamOrderViolation, "a's copy reads z");
    m.synchronize_device(0).unwrap();
    m.free(at(p, z), b).unwrap();
}

#[test]
fn model_cann_open_reuses_nothing_and_releases_only_by_trim() {
    // Contract §12.
    let (mut m, a, _, p) = model_of(Profile::CannOpen);
    let x = m.malloc(p, G, a).unwrap().0;
    m.free(at(p, x), a).unwrap();
    assert_eq!(m.malloc(p, G, a), Ok((x + G, Rule::Fresh)), "no reuse, not even on the same stream");
    m.synchronize_device(0).unwrap();
    assert_eq!(m.stats(p).unwrap().reserved_current, 2 * G, "no release at synchronization");
    m.trim_to(p, G).unwrap();
    assert_eq!(m.stats(p).unwrap().reserved_current, G, "trim releases");
    // A destroy does not wait: the memset queued before it fails when it runs, and the
    // next synchronization of its stream says so, once.
    m.access(a, &[at(p, x + G)], 8).unwrap();
    m.destroy_pool(p).unwrap();
    assert_eq!(kind(m.synchronize_stream(a)), ErrorKind::InvalidPointer);
    assert_eq!(m.synchronize_stream(a), Ok(()));
}

#[test]
fn model_devices_keep_their_pools_and_synchronizations() {
    // Contract §1 and §6: pools and streams belong to a device.
    let mut m = Model::new(G, 2, DEVICE, Profile::Documented, Deviations::default());
    let (a, b) = (m.create_stream(), m.create_stream_on(1));
    let (p0, p1) = (m.create_pool(&props(0)).unwrap(), m.create_pool(&props(1)).unwrap());
    assert_eq!(m.malloc(p0, G, b).unwrap_err().code, 107_003, "a stream of another device");
    let x = m.malloc(p1, G, b).unwrap().0;
    m.malloc(p0, G, a).unwrap();
    assert_eq!((m.mem_free(0), m.mem_free(1)), (DEVICE - G, DEVICE - G));
    m.free(at(p1, x), b).unwrap();
    m.synchronize_device(0).unwrap();
    assert_eq!(m.stats(p1).unwrap().reserved_current, G, "device 0's synchronization releases nothing of device 1");
    m.synchronize_device(1).unwrap();
    assert_eq!(m.stats(p1).unwrap().reserved_current, 0);
    assert_eq!(m.mem_free(1), DEVICE);
}

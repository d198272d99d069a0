//! Disagreements between the emulator and the contract, replayed.
//!
//! Each sequence below is a minimal one the property test (or the soak) found while the
//! emulator departed from the spec there. For a fixed one, the replay keeps it so (with
//! every deviation switched off: the spec's behaviour), and where the departure was in one
//! call's result, it also asserts that result as the contract gives it. For one still open
//! (its switch on in `OPEN`), the replay checks that the emulator still departs exactly so,
//! and fails once it follows the spec, so that the switch is turned off then. None is
//! open now.

use super::*;

const A: S = S::Idx(0);
const B: S = S::Idx(1);
/// The third stream, once a `CreateStream` has run.
const C: S = S::Idx(2);
const E0: E = E::Idx(0);
/// With `second_device`: the stream of device 1.
const D1: S = S::Idx(2);

fn setup_with(flags: ReuseFlags) -> Setup {
    Setup { profile: Profile::Documented, max_size: 16 * G, flags, threshold: 0, second_device: false, races: false }
}

/// An event recorded while work is pending is a marker (the brief's model and the
/// emulator's own documentation): stepping past the host function before it leaves the
/// stream idle and the free after the record executed. The emulator queues a time-stamp
/// operation for the record, so the stream is not idle and the free has not executed.
fn record_is_a_marker() -> (Setup, Vec<Op>) {
    let ops = vec![
        Op::Malloc { pool: 0, size: G, stream: A },
        Op::HostFn(A),
        Op::Record { event: E0, stream: A },
        Op::Free { ptr: Ptr::Handed(0), stream: A, via_pool: false },
        Op::Step { stream: A, n: 1 },
    ];
    (setup_with(ReuseFlags::NONE), ops)
}

#[test]
fn replay_record_is_a_marker() {
    let (setup, ops) = record_is_a_marker();
    replay(setup, &ops, Deviations::default()).map(drop).unwrap();
}

/// contract §3 and §7: after a reset to 0 a high-water mark "rises again with the next
/// change" and is "the maximum of its CURRENT since ... the last reset": a free after the
/// reset makes USED_HIGH the new USED; a release after the reset makes RESERVED_HIGH the
/// new RESERVED. The emulator raises the marks only on increases, so both stay 0.
fn high_marks_follow_a_decrease() -> (Setup, Vec<Op>) {
    let ops = vec![
        Op::Malloc { pool: 0, size: 1, stream: A },
        Op::Malloc { pool: 0, size: 1, stream: A },
        Op::SetAttr { pool: 0, id: 8, value: Val::U64(0) },
        Op::Free { ptr: Ptr::Handed(0), stream: A, via_pool: false },
    ];
    (setup_with(ReuseFlags::NONE), ops)
}

#[test]
fn replay_high_marks_follow_a_decrease() {
    let (setup, ops) = high_marks_follow_a_decrease();
    replay(setup, &ops, Deviations::default()).map(drop).unwrap();
}

/// contract §4e: an internal dependency orders the allocating stream "exactly as if the
/// caller had recorded an event after the free and waited on it", so also after what the
/// free was itself ordered after. Here A frees x and records E; B waits for E and frees
/// y; C takes y by rule e, so C is ordered after A's free of x: with rule e switched off,
/// C reuses x by rule c. The emulator orders C after B's position only and carves fresh
/// memory instead.
fn internal_dependency_is_transitive() -> (Setup, Vec<Op>) {
    let ops = vec![
        Op::CreateStream,
        Op::Malloc { pool: 0, size: 2 * G, stream: A },
        Op::Malloc { pool: 0, size: G, stream: B },
        Op::Free { ptr: Ptr::Handed(0), stream: A, via_pool: false },
        Op::Record { event: E0, stream: A },
        Op::Wait { stream: B, event: E0 },
        Op::Free { ptr: Ptr::Handed(1), stream: B, via_pool: false },
        Op::Malloc { pool: 0, size: G, stream: C },
        Op::SetAttr { pool: 0, id: 3, value: Val::U32(0) },
        Op::Malloc { pool: 0, size: 2 * G, stream: C },
    ];
    (setup_with(ReuseFlags { follow_event_dependencies: true, internal_dependencies: true, ..ReuseFlags::NONE }), ops)
}

#[test]
fn replay_internal_dependency_is_transitive() {
    let (setup, ops) = internal_dependency_is_transitive();
    replay(setup, &ops, Deviations::default()).map(drop).unwrap();
}

/// Replays `ops` in both modes with every deviation off (the spec) and checks that the
/// last call, an allocation, was served at `offset` by `rule` on both sides.
fn replay_ends_with_alloc(setup: Setup, ops: &[Op], offset: u64, rule: Rule) {
    for mode in [Mode::Deferred, Mode::Threaded] {
        let pair =
            replay_in(mode, setup, ops, Deviations::default()).unwrap_or_else(|e| panic!("{}: {e}", mode.name()));
        assert_eq!(pair.last, Some(Ok(Out::Alloc(offset, rule))), "{}", mode.name());
    }
}

/// contract §4 rule b: a block is "known complete" after a synchronization (of the freeing
/// stream, of an event recorded after the free, or of the device); contract §1: a query
/// answering complete orders later work, but rule b counts synchronizations only. Here A
/// frees x, the host queries A (complete: nothing is queued), and B allocates: by the
/// contract no rule serves x (flags off), so B gets fresh memory. The emulator's
/// `query_stream` used to mark the stream observed for rule b too, and B reused x by
/// rule b; now a complete query only orders later calls.
fn stream_query_is_not_a_synchronization() -> (Setup, Vec<Op>) {
    let ops = vec![
        Op::Malloc { pool: 0, size: 1, stream: A },
        Op::Free { ptr: Ptr::Live(0), stream: A, via_pool: false },
        Op::QueryStream(A),
        Op::Malloc { pool: 0, size: 1, stream: B },
    ];
    (setup_with(ReuseFlags::NONE), ops)
}

#[test]
fn replay_stream_query_is_not_a_synchronization() {
    let (setup, ops) = stream_query_is_not_a_synchronization();
    replay_ends_with_alloc(setup, &ops, G, Rule::Fresh);
    // A synchronization in its place makes x known complete (the threshold keeps it
    // cached).
    let mut synced = ops;
    synced[2] = Op::SyncStream(A);
    replay_ends_with_alloc(Setup { threshold: 16 * G, ..setup }, &synced, 0, Rule::KnownComplete);
}

/// contract §4 rule b: a block is known complete once the host has observed its free
/// complete, "after ... a synchronize_device"; contract §1: ordering is applied
/// transitively. Here A frees x and hands over to D1 (a stream of device 1); a
/// synchronization of device 1 observes D1's end, which is ordered after the free, so B
/// reuses x by rule b. Device 1's synchronization releases nothing of pool 0 (a pool of
/// device 0), threshold 0 or not (contract §6). The emulator's device synchronization
/// used to mark only the device's own streams observed for rule b (a stream
/// synchronization marks every stream its clock covers), and B got fresh memory.
///
/// (The first version of this replay freed x on D1, which the emulator now refuses as a
/// free on another device's stream, contract §5; the free is on A now.)
fn device_sync_observes_transitively() -> (Setup, Vec<Op>) {
    let ops = vec![
        Op::Malloc { pool: 0, size: 1, stream: A },
        Op::Free { ptr: Ptr::Live(0), stream: A, via_pool: false },
        Op::Handoff { from: A, to: D1, event: E0 },
        Op::SyncDeviceOf(1),
        Op::Malloc { pool: 0, size: 1, stream: B },
    ];
    let setup = Setup { second_device: true, ..setup_with(ReuseFlags::NONE) };
    (setup, ops)
}

#[test]
fn replay_device_sync_observes_transitively() {
    let (setup, ops) = device_sync_observes_transitively();
    replay_ends_with_alloc(setup, &ops, 0, Rule::KnownComplete);
    // Without the hand-over, device 1's synchronization observes nothing of A.
    let mut unordered = ops;
    unordered[2] = Op::Record { event: E0, stream: A };
    replay_ends_with_alloc(setup, &unordered, G, Rule::Fresh);
}

/// contract §1 (ordering applied transitively) and §4 rule b: B frees y and hands over to
/// A, then B is destroyed (its work has run); a synchronization of device 1 follows, then
/// one of A, whose end is ordered after the free: the host has observed the free
/// complete, so A reuses y by rule b (the threshold keeps y cached). The emulator's device
/// synchronization used to forget the destroyed streams of every device but observe only
/// its own device's, and a later observation of a forgotten stream through another
/// stream's clock was dropped: A got fresh memory.
fn forgotten_stream_is_still_observed() -> (Setup, Vec<Op>) {
    let ops = vec![
        Op::Malloc { pool: 0, size: 1, stream: B },
        Op::Free { ptr: Ptr::Live(0), stream: B, via_pool: false },
        Op::Handoff { from: B, to: A, event: E0 },
        Op::DestroyStream(B),
        Op::SyncDeviceOf(1),
        Op::SyncStream(A),
        Op::Malloc { pool: 0, size: 1, stream: A },
    ];
    (Setup { threshold: 16 * G, ..setup_with(ReuseFlags::NONE) }, ops)
}

#[test]
fn replay_forgotten_stream_is_still_observed() {
    let (setup, ops) = forgotten_stream_is_still_observed();
    replay_ends_with_alloc(setup, &ops, 0, Rule::KnownComplete);
}

/// Found by `cargo xtask soak` (deferred, documented), a departure of the model: A
/// allocates and frees x (the threshold keeps it cached) and is destroyed (its work has
/// run); device 1 is synchronized, then device 0, then B allocates. Device 0's
/// synchronization covers A, a destroyed stream of device 0 whose work ran since the last
/// synchronization of device 0 (contract §1), so the free is known complete and B reuses x
/// by rule b (contract §4). The model forgot the destroyed streams of every device at any
/// device's synchronization (device 1's here), so device 0's no longer covered A, and it
/// gave fresh memory; the emulator was right.
fn device_sync_covers_streams_destroyed_before_another_devices_sync() -> (Setup, Vec<Op>) {
    let ops = vec![
        Op::Malloc { pool: 0, size: 1, stream: A },
        Op::Free { ptr: Ptr::Live(0), stream: A, via_pool: false },
        Op::DestroyStream(A),
        Op::SyncDeviceOf(1),
        Op::SyncDevice,
        Op::Malloc { pool: 0, size: 1, stream: B },
    ];
    (Setup { threshold: G + 1, ..setup_with(ReuseFlags::NONE) }, ops)
}

#[test]
fn replay_device_sync_covers_streams_destroyed_before_another_devices_sync() {
    let (setup, ops) = device_sync_covers_streams_destroyed_before_another_devices_sync();
    replay_ends_with_alloc(setup, &ops, 0, Rule::KnownComplete);
    // Without device 0's synchronization, nothing observed A's free.
    let mut unsynced = ops;
    unsynced.remove(4);
    replay_ends_with_alloc(setup, &unsynced, G, Rule::Fresh);
}

/// Found by `cargo xtask soak` (deferred, documented), as it shrank it (stream and event
/// indexes are taken modulo the handles that exist): a stream C of device 1 is created; B
/// allocates and frees x (two granules), then records an event that A and C both wait on;
/// device 1 is synchronized (threshold 0), then A allocates. Device 1's synchronization
/// observes C's end, which is ordered after B's free through the event (contract §1,
/// transitively), so the free is known complete and A reuses x by rule b (contract §4), at
/// offset 0; pool 0 belongs to device 0, so that synchronization released nothing of it
/// (contract §6). The emulator marked only device 1's own streams observed for rule b,
/// kept x cached and carved fresh memory after it (offset 131072). The same departure as
/// [`replay_device_sync_observes_transitively`]'s; A's own wait plays no part.
fn device_sync_after_two_waits_on_one_event() -> (Setup, Vec<Op>) {
    let setup = Setup { threshold: 0, second_device: false, max_size: 1 << 20, ..setup_with(ReuseFlags::NONE) };
    let ops = vec![
        Op::CreateStreamOn(215),
        Op::Malloc { pool: 0, size: 65537, stream: S::Idx(190) },
        Op::Free { ptr: Ptr::Live(0), stream: S::Idx(97), via_pool: false },
        Op::Handoff { from: S::Idx(190), to: S::Idx(0), event: E::Idx(187) },
        Op::Wait { stream: S::Idx(179), event: E::Idx(35) },
        Op::SyncDeviceOf(43),
        Op::Malloc { pool: 0, size: 1, stream: S::Idx(45) },
    ];
    (setup, ops)
}

#[test]
fn replay_device_sync_after_two_waits_on_one_event() {
    let (setup, mut ops) = device_sync_after_two_waits_on_one_event();
    replay_ends_with_alloc(setup, &ops, 0, Rule::KnownComplete);
    // Without C's wait, device 1's synchronization observes nothing of B: fresh memory
    // after x, which stays cached.
    ops.remove(4);
    replay_ends_with_alloc(setup, &ops, 2 * G, Rule::Fresh);
}

//! The generator reaches every path.

use super::*;

/// A fixed sample of generated cases (deferred mode, both profiles) reaches every reuse
/// rule, every error the calls can give, the checker's verdicts on frees, copies and
/// memsets, both devices, and the less common paths of the model (merges, split releases,
/// queued waits, work that fails on a pool destroyed on `cann-open`). If the generator
/// drifts so that a path is no longer exercised, this fails.
#[test]
fn generated_cases_reach_every_path() {
    use proptest::strategy::ValueTree;
    let mut runner = TestRunner::deterministic();
    let mut outcomes: BTreeMap<String, u32> = BTreeMap::new();
    let mut tally = model::Tally::default();
    for profile in Profile::ASCEND {
        let cases = (setup(Mode::Deferred, profile), prop::collection::vec(op(), 1..64));
        for _ in 0..400 {
            let (setup, ops) = cases.new_tree(&mut runner).expect("a case").current();
            let pair = replay(setup, &ops, OPEN).unwrap_or_else(|e| panic!("{e}\nops: {ops:?}"));
            for (k, v) in pair.outcomes {
                *outcomes.entry(k).or_default() += v;
            }
            let t = pair.model.tally;
            tally.merges += t.merges;
            tally.releases += t.releases;
            tally.split_releases += t.split_releases;
            tally.queued_waits += t.queued_waits;
            tally.ran += t.ran;
            tally.accesses += t.accesses;
            tally.failed_work += t.failed_work;
            tally.race_refusals += t.race_refusals;
        }
    }
    let expected = [
        "Malloc: SameStream",
        "Malloc: KnownComplete",
        "Malloc: EventDependency",
        "Malloc: Opportunistic",
        "Malloc: InternalDependency",
        "Malloc: Fresh",
        "Malloc: OutOfMemory 507000",
        "Malloc: InvalidParam 107000",
        "Malloc: InvalidHandle 107017",
        "Malloc: InvalidHandle 507000",
        "Free: ok",
        "Free: InvalidPointer 107000",
        "Free: InvalidPointer 100000",
        "Free: InvalidHandle 107017",
        "Record: ok",
        "Wait: ok",
        "Step: ran",
        "Step: ran nothing",
        "SyncStream: ok",
        "SyncEvent: ok",
        "Elapsed: ok",
        "Elapsed: NotReady 507000",
        "Trim: ok",
        "Trim: InvalidParam 507000",
        "SetAttr: ok",
        "SetAttr: ReadOnly 107000",
        "SetAttr: UnknownAttribute 107000",
        "SetAttr: InvalidParam 107000",
        "SetAttr: InvalidParam 507000",
        "SetAttr: InvalidHandle 107000",
        "GetAttr: ok",
        "GetAttr: UnknownAttribute 107000",
        "CreatePool: ok",
        "CreatePool: InvalidParam 100000",
        "CreatePool: InvalidParam 107000",
        "CreatePool: InvalidDevice 107001",
        "DestroyPool: ok",
        "DestroyPool: InvalidHandle 507000",
        "DestroyStream: ok",
        "DestroyStream: InvalidHandle 107017",
        "DestroyEvent: ok",
        "DestroyEvent: InvalidHandle 107017",
        "Malloc: WrongContext 107003",
        "MallocSync: SameStream",
        "MallocSync: KnownComplete",
        "MallocSync: Fresh",
        "MallocSync: OutOfMemory 507000",
        "Free: StreamOrderViolation 107000",
        "Memset: ok",
        "Memset: StreamOrderViolation 107000",
        "Memset: InvalidPointer 107000",
        "CopyH2D: ok",
        "CopyH2D: StreamOrderViolation 107000",
        "CopyD2H: ok",
        "CopyD2H: StreamOrderViolation 107000",
        "CopyD2D: ok",
        "CopyD2D: StreamOrderViolation 107000",
        "CopyD2D: InvalidPointer 107000",
        "Kernel: ok",
        "Kernel: StreamOrderViolation 107000",
        "Kernel: InvalidPointer 107000",
        "HostMemset: ok",
        "HostMemset: StreamOrderViolation 107000",
        "HostCopyD2H: ok",
        "HostCopyH2D: StreamOrderViolation 107000",
        "CreateStreamOn: ok",
        "CreateEventOn: ok",
        "SyncDeviceOf: ok",
        "QueryStream: complete",
        "QueryStream: not ready",
    ];
    let missing: Vec<_> = expected.iter().filter(|k| !outcomes.contains_key(**k)).collect();
    assert!(missing.is_empty(), "never reached: {missing:?}\nreached: {outcomes:#?}");
    assert!(
        tally.merges > 0
            && tally.releases > 0
            && tally.split_releases > 0
            && tally.queued_waits > 0
            && tally.ran > 0
            && tally.accesses > 0
            && tally.failed_work > 0
            && tally.race_refusals > 0,
        "{tally:?}"
    );
}

/// A fixed program (copies, memsets and frees across streams, both devices) gives the same
/// results on both sides in both modes and on both profiles, and the checker refuses
/// exactly the calls that break stream order.
#[test]
fn a_fixed_program_agrees_in_both_modes_on_both_profiles() {
    let (a, b, d1) = (S::Idx(0), S::Idx(1), S::Idx(2));
    let ops = [
        Op::Malloc { pool: 0, size: G, stream: a },
        // b is not ordered after the allocation.
        Op::Copy { dst: Side::Dev(Ptr::Live(0)), src: Side::Host, len: 8, stream: b },
        Op::Memset { ptr: Ptr::Live(0), len: G, stream: a },
        Op::Handoff { from: a, to: b, event: E::Idx(0) },
        Op::Copy { dst: Side::Host, src: Side::Dev(Ptr::Live(0)), len: G, stream: b },
        // a is not ordered after b's copy.
        Op::Free { ptr: Ptr::Live(0), stream: a, via_pool: false },
        Op::Handoff { from: b, to: a, event: E::Idx(1) },
        Op::Free { ptr: Ptr::Live(0), stream: a, via_pool: false },
        // A use after free, by the host.
        Op::HostMemset { ptr: Ptr::Handed(0), len: 1 },
        Op::SyncDevice,
        // Device 1: its stream allocates from its pool, not from device 0's.
        Op::Malloc { pool: 1, size: G, stream: d1 },
        Op::Malloc { pool: 0, size: G, stream: d1 },
        Op::Copy { dst: Side::Dev(Ptr::Live(0)), src: Side::Host, len: G, stream: d1 },
        Op::SyncDeviceOf(1),
    ];
    let expected = [
        "CopyH2D: StreamOrderViolation 107000",
        "Memset: ok",
        "CopyD2H: ok",
        "Free: StreamOrderViolation 107000",
        "Free: ok",
        "HostMemset: StreamOrderViolation 107000",
        "Malloc: WrongContext 107003",
        "CopyH2D: ok",
        "SyncDeviceOf: ok",
    ];
    for mode in [Mode::Deferred, Mode::Threaded] {
        for profile in Profile::ASCEND {
            let setup = Setup {
                profile,
                max_size: 16 * G,
                flags: ReuseFlags::NONE,
                threshold: 0,
                second_device: true,
                races: false,
            };
            let pair = replay_in(mode, setup, &ops, OPEN)
                .unwrap_or_else(|e| panic!("{} {}: {e}", mode.name(), profile.name()));
            let missing: Vec<_> = expected.iter().filter(|k| !pair.outcomes.contains_key(**k)).collect();
            assert!(missing.is_empty(), "{} {}: {missing:?} not in {:#?}", mode.name(), profile.name(), pair.outcomes);
        }
    }
}

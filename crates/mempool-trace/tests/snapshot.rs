//! Traces exported as PyTorch memory snapshots come back through the importer with the
//! same allocations and frees; snapshots of several devices import one device at a time;
//! writing to a path that cannot be written is an error naming it.

mod roundtrip;

use mempool_trace::import::{ImportOptions, import};
use mempool_trace::snapshot::{Snapshot, SnapshotAction, SnapshotBlock, SnapshotEvent, SnapshotSegment};
use mempool_trace::{Op, generate, parse};
use std::path::PathBuf;

/// A scratch folder for one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("mempool-trace-snapshot-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&d).expect("temp dir");
        Scratch(d)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_synthetic_trace_round_trips() {
    // Three streams first mentioned in the order 7, 3, 5; a free on another stream than
    // its allocation; an address used again after its free; an allocation failure; event
    // and synchronization rows (no snapshot event); a row recorded out of time order; and
    // allocations still live at the end.
    let text = "Thread,Time,Action,Pointer,Size,Stream\n\
                1,0.000001500,allocate,0x7f0000000000,1000,7\n\
                2,0.000002000,allocate,0x7f0000200000,4194304,3\n\
                1,0.000002500,record,1,,3\n\
                2,0.000003000,wait,1,,7\n\
                1,0.000004000,free,0x7f0000000000,1000,3\n\
                1,0.000005000,allocate failure,0x0,1099511627776,5\n\
                2,0.000004900,allocate,0x7f0000000000,24,5\n\
                1,0.000006000,sync_device,,,\n\
                1,0.000007000,free,0x7f0000200000,4194304,3\n\
                1,0.000009000,allocate,0x7f0000400000,512,7\n";
    let trace = parse(text).unwrap();
    assert_eq!(roundtrip::round_trip(&trace), Ok(7));
    // The rows the importer gives, spelled out: streams 7, 3, 5 become 1, 2, 3; times are
    // whole microseconds since the first allocation; the late row keeps the time before.
    let imported = import(&Snapshot::from_trace(&trace).to_pickle(), &ImportOptions::default()).unwrap();
    assert_eq!(
        imported.trace.to_csv(),
        "Thread,Time,Action,Pointer,Size,Stream\n\
         1,0.000000000,allocate,0x7f0000000000,1000,1\n\
         1,0.000001000,allocate,0x7f0000200000,4194304,2\n\
         1,0.000003000,free,0x7f0000000000,1000,2\n\
         1,0.000004000,allocate failure,0x0,1099511627776,3\n\
         1,0.000004000,allocate,0x7f0000000000,24,3\n\
         1,0.000006000,free,0x7f0000200000,4194304,2\n\
         1,0.000008000,allocate,0x7f0000400000,512,1\n"
    );
}

#[test]
fn the_bundled_traces_round_trip() {
    for (name, trace) in generate::bundled() {
        let allocs = trace.rows.iter().filter(|r| matches!(r.op, Op::Allocate { .. })).count();
        let rows = roundtrip::round_trip(&trace).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(allocs > 100 && rows > allocs, "{name}: {rows} rows for {allocs} allocations");
    }
    // The pipeline's loader stream (2) is mentioned first: it comes back as stream 1.
    let pipeline = generate::pipeline(generate::SEED);
    let first = pipeline.rows.iter().find_map(|r| match r.op {
        Op::Allocate { stream, .. } => Some(stream),
        _ => None,
    });
    assert_eq!(first, Some(2));
    let back = import(&Snapshot::from_trace(&pipeline).to_pickle(), &ImportOptions::default()).unwrap();
    assert!(matches!(back.trace.rows[0].op, Op::Allocate { stream: 1, .. }));
}

fn ev(action: SnapshotAction, addr: u64, size: u64, stream: u64, time_us: u64) -> SnapshotEvent {
    SnapshotEvent { action, addr, size, stream, time_us }
}

/// Two devices with events, and segments on both: blocks live at the dump that no event
/// mentions become allocations at time 0 of their own device only.
fn two_devices() -> Snapshot {
    use SnapshotAction::*;
    let seg1 = 0x8000_0000u64;
    Snapshot {
        device_traces: vec![
            vec![
                ev(SegmentAlloc, 0x1000, 2 << 20, 0xaa, 5),
                ev(Alloc, 0x1000, 512, 0xaa, 5),
                ev(FreeRequested, 0x1000, 512, 0xaa, 9),
                ev(FreeCompleted, 0x1000, 512, 0xaa, 9),
            ],
            vec![
                ev(SegmentAlloc, seg1, 2 << 20, 0xbb, 10),
                ev(Alloc, seg1, 1000, 0xbb, 10),
                // Allocated before recording started: its first mention is its free.
                ev(FreeRequested, 0x9000_0000, 300, 0xcc, 20),
                ev(FreeCompleted, 0x9000_0000, 300, 0xcc, 21),
                ev(Oom, 0, 1 << 40, 0xbb, 30),
            ],
        ],
        segments: vec![
            SnapshotSegment {
                device: 0,
                address: 0x1000,
                total_size: 2 << 20,
                stream: 0xaa,
                blocks: vec![
                    SnapshotBlock { address: 0x1000, size: 1024, requested_size: 0, active: false },
                    SnapshotBlock { address: 0x1400, size: 512, requested_size: 100, active: true },
                    SnapshotBlock { address: 0x1600, size: (2 << 20) - 0x600, requested_size: 0, active: false },
                ],
            },
            SnapshotSegment {
                device: 1,
                address: seg1,
                total_size: 2 << 20,
                stream: 0xbb,
                blocks: vec![
                    SnapshotBlock { address: seg1, size: 1024, requested_size: 1000, active: true },
                    SnapshotBlock { address: seg1 + 0x400, size: 512, requested_size: 200, active: true },
                    SnapshotBlock { address: seg1 + 0x600, size: (2 << 20) - 0x600, requested_size: 0, active: false },
                ],
            },
        ],
    }
}

#[test]
fn a_snapshot_of_two_devices_imports_the_device_chosen() {
    let scratch = Scratch::new("two-devices");
    let path = scratch.0.join("two.pickle");
    two_devices().write_file(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes, two_devices().to_pickle());

    let device = |d: Option<usize>| import(&bytes, &ImportOptions { device: d }).map(|i| i.trace.to_csv());
    assert_eq!(device(None).unwrap_err().to_string(), "events on devices [0, 1]: choose one with --device");
    assert_eq!(
        device(Some(1)).unwrap(),
        "Thread,Time,Action,Pointer,Size,Stream\n\
         1,0.000000000,allocate,0x90000000,300,2\n\
         1,0.000000000,allocate,0x80000400,200,1\n\
         1,0.000000000,allocate,0x80000000,1000,1\n\
         1,0.000010000,free,0x90000000,300,2\n\
         1,0.000020000,allocate failure,0x0,1099511627776,1\n"
    );
    assert_eq!(
        device(Some(0)).unwrap(),
        "Thread,Time,Action,Pointer,Size,Stream\n\
         1,0.000000000,allocate,0x1400,100,1\n\
         1,0.000000000,allocate,0x1000,512,1\n\
         1,0.000004000,free,0x1000,512,1\n"
    );
    assert_eq!(device(Some(2)).unwrap_err().to_string(), "no device 2: the snapshot has traces for 2 device(s)");
}

#[test]
fn unwritable_paths_are_errors_naming_the_path() {
    let scratch = Scratch::new("unwritable");
    let snapshot = Snapshot::from_trace(&generate::pipeline(generate::SEED));
    let missing = scratch.0.join("no-such-folder").join("s.pickle");
    let e = snapshot.write_file(&missing).unwrap_err();
    assert!(e.starts_with(&format!("cannot write {}: ", missing.display())), "{e}");
    // A folder where the file should be.
    let e = snapshot.write_file(&scratch.0).unwrap_err();
    assert!(e.starts_with(&format!("cannot write {}: ", scratch.0.display())), "{e}");
    assert!(!missing.exists());
    // A writable path is written, and written again over the old file.
    let ok = scratch.0.join("s.pickle");
    std::fs::write(&ok, b"old contents, longer than nothing").unwrap();
    Snapshot::default().write_file(&ok).unwrap();
    assert_eq!(std::fs::read(&ok).unwrap(), Snapshot::default().to_pickle());
}

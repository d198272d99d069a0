//! Small synthetic inputs for every rule and every kind of bad file; the real snapshots
//! are checked by `tests/real_traces.rs` when they are present.

use super::*;
use std::io::Write as _;

fn run(input: &[u8]) -> Result<Imported, ImportError> {
    import(input, &ImportOptions::default())
}

fn csv(input: &[u8]) -> String {
    run(input).unwrap_or_else(|e| panic!("{e}")).trace.to_csv()
}

fn err(input: &[u8]) -> String {
    match run(input) {
        Ok(i) => panic!("imported {} rows, expected an error", i.trace.rows.len()),
        Err(e) => e.to_string(),
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

// ---- RMM logs ----

const RMM_HEADER: &str = "Thread,Time,Action,Pointer,Size,Stream\n";

#[test]
fn rmm_per_thread_default_streams_are_one_per_thread() {
    let log = format!(
        "{RMM_HEADER}\
         139820,10:00:00.000001,allocate,0x7f0000000000,256,0x2\n\
         139999,10:00:00.000002,allocate,0x7f0000100000,512,0x2\n\
         139820,10:00:00.000003,allocate,0x7f0000200000,100,0x0\n\
         139999,10:00:00.000004,allocate,0x7f0000300000,100,0x1\n\
         139999,10:00:00.000005,allocate,0x7f0000400000,64,0x55d0c0ffee00\n\
         139820,10:00:00.000006,allocate failure,0x0,1099511627776,0x55d0c0ffee00\n\
         139820,10:00:00.000007,free,0x7f0000000000,256,0x2\n"
    );
    assert_eq!(
        csv(log.as_bytes()),
        "Thread,Time,Action,Pointer,Size,Stream\n\
         1,0.000000000,allocate,0x7f0000000000,256,1\n\
         2,0.000001000,allocate,0x7f0000100000,512,2\n\
         1,0.000002000,allocate,0x7f0000200000,100,3\n\
         2,0.000003000,allocate,0x7f0000300000,100,3\n\
         2,0.000004000,allocate,0x7f0000400000,64,4\n\
         1,0.000005000,allocate failure,0x0,1099511627776,4\n\
         1,0.000006000,free,0x7f0000000000,256,1\n"
    );
    assert_eq!(run(log.as_bytes()).unwrap().format, Format::RmmLog);
}

#[test]
fn rmm_clock_passes_midnight_and_keeps_times_monotone() {
    let log = "23:59:59 is the last second\n";
    assert!(err(log.as_bytes()).starts_with("line 1: expected 6"), "{}", err(log.as_bytes()));
    let log = format!(
        "{RMM_HEADER}\
         1,23:59:59.5,allocate,0x1000,8,0x2\n\
         1,00:00:00.25,allocate,0x2000,8,0x2\n\
         2,00:00:00.249,allocate,0x3000,8,0x2\n\
         1,01:00:00,free,0x1000,8,0x2\n"
    );
    let got = run(log.as_bytes()).unwrap();
    let times: Vec<u64> = got.trace.rows.iter().map(|r| r.time_ns).collect();
    // 0.75 s after the first row across midnight; a row written a millisecond out of
    // order keeps the previous time; then an hour on.
    assert_eq!(times, [0, 750_000_000, 750_000_000, 3_600_500_000_000]);
    assert!(got.notes.iter().any(|n| n.contains("midnight 1 time")), "{:?}", got.notes);
    assert!(got.notes.iter().any(|n| n.contains("1 rows had a time before")), "{:?}", got.notes);
    // Lines are the log's.
    assert_eq!(got.trace.lines, [2, 3, 4, 5]);
}

#[test]
fn rmm_logs_with_epoch_seconds_and_deallocate_are_read() {
    let log = format!(
        "{RMM_HEADER}\
         140573312345856,1634567890.123456,allocate,0x7f8a40000000,1024,0x7f8a38001020\n\
         140573312345856,1634567890.234567,deallocate,0x7f8a40000000,1024,0x7f8a38001020\n"
    );
    assert_eq!(
        csv(log.as_bytes()),
        "Thread,Time,Action,Pointer,Size,Stream\n\
         1,0.000000000,allocate,0x7f8a40000000,1024,1\n\
         1,0.111111000,free,0x7f8a40000000,1024,1\n"
    );
    // One log, one form of time.
    let mixed = format!("{RMM_HEADER}1,1634567890.1,allocate,0x10,8,0x2\n1,12:00:00.000000,free,0x10,8,0x2\n");
    assert!(
        err(mixed.as_bytes()).starts_with("line 3: time \"12:00:00.000000\" is neither"),
        "{}",
        err(mixed.as_bytes())
    );
}

#[test]
fn rmm_bad_rows_name_their_line() {
    let cases: &[(&str, &str)] = &[
        ("1,25:00:00.000000,allocate,0x1000,8,0x2", "line 3: time \"25:00:00.000000\" is not a time of day"),
        ("1,12:61:00.000000,allocate,0x1000,8,0x2", "line 3: time \"12:61:00.000000\" is not a time of day"),
        ("1,12:3x:00.000000,allocate,0x1000,8,0x2", "line 3: time \"12:3x:00.000000\" is not a wall-clock time"),
        ("1,12:00,allocate,0x1000,8,0x2", "line 3: time \"12:00\" is not a wall-clock time"),
        ("1,12:00:00.1234567890,allocate,0x1000,8,0x2", "line 3: time \"12:00:00.1234567890\" is not"),
        ("1,12:00:00.5,free,0x9000,8,0x2", "line 3: free of 0x9000, which is not allocated (an unmatched free)"),
        ("1,12:00:00.5,free,0x1000,9,0x2", "line 3: free of 0x1000 with size 9, allocated with size 8"),
        ("1,12:00:00.5,allocate,0x1000,8,0x2", "line 3: allocate at 0x1000, which is still allocated"),
        ("1,12:00:00.5,allocate,0x0,8,0x2", "line 3: allocate at the null pointer"),
        ("1,12:00:00.5,allocate,0xzz,8,0x2", "line 3: pointer \"0xzz\" is not a number"),
        ("1,12:00:00.5,allocate,0x2000,-8,0x2", "line 3: size \"-8\" is not a number"),
        ("1,12:00:00.5,allocate,0x2000,8,stream", "line 3: stream \"stream\" is not a number"),
        ("1,12:00:00.5,reallocate,0x2000,8,0x2", "line 3: unknown action \"reallocate\""),
        ("1,12:00:00.5,allocate,0x2000,8", "line 3: expected 6 comma-separated fields, found 5"),
        (",12:00:00.5,allocate,0x2000,8,0x2", "line 3: empty thread"),
    ];
    for (row, want) in cases {
        let log = format!("{RMM_HEADER}1,12:00:00.000000,allocate,0x1000,8,0x2\n{row}\n");
        let got = err(log.as_bytes());
        assert!(got.starts_with(want), "{row}: got {got:?}, want {want:?}");
    }
}

#[test]
fn rmm_log_cut_short_is_an_error_or_its_rows() {
    let log = format!("{RMM_HEADER}1,12:00:00.000000,allocate,0x1000,8,0x2\n1,12:00:00.000001,free,0x10");
    // The cut row no longer matches its allocation.
    assert_eq!(err(log.as_bytes()), "line 3: expected 6 comma-separated fields, found 4");
    let log = format!("{RMM_HEADER}1,12:00:00.000000,allocate,0x1000,8,0x2\n1,12:00:00.000001,free,0x10,8,0x2");
    assert_eq!(err(log.as_bytes()), "line 3: free of 0x10, which is not allocated (an unmatched free)");
}

#[test]
fn the_projects_own_format_is_accepted() {
    let own =
        "Thread,Time,Action,Pointer,Size,Stream\n1,0.5,allocate,0x1000,8,1\n1,0.6,record,3,,1\n1,0.7,free,0x1000,8,1\n";
    let got = run(own.as_bytes()).unwrap();
    assert_eq!(got.format, Format::Project);
    assert_eq!(
        got.trace.to_csv(),
        "Thread,Time,Action,Pointer,Size,Stream\n\
         1,0.500000000,allocate,0x1000,8,1\n\
         1,0.600000000,record,3,,1\n\
         1,0.700000000,free,0x1000,8,1\n"
    );
    assert_eq!(err(b"1,0.5,free,0x1000,8,1\n"), "line 1: free of unknown pointer 0x1000");
    // Gzipped text too.
    assert_eq!(run(&gzip(own.as_bytes())).unwrap().trace, got.trace);
}

#[test]
fn empty_and_garbage_inputs_are_errors() {
    assert_eq!(err(b""), "empty input");
    assert_eq!(err(b"  \n\n"), "empty input");
    assert_eq!(err(RMM_HEADER.as_bytes()), "no operations (a header alone)");
    assert_eq!(
        err(b"Thread,Time\n\xff\xfe\x00garbage"),
        "line 2: not UTF-8 text (and not a pickle of protocol 2 or later)"
    );
    assert!(err(b"\x1f\x8b\x08\x00garbage").starts_with("gzip data is damaged"), "{}", err(b"\x1f\x8b\x08\x00garbage"));
    let whole = gzip(b"1,0.5,allocate,0x1000,8,1\n");
    assert!(err(&whole[..whole.len() - 6]).starts_with("gzip data is damaged"));
}

// ---- PyTorch snapshots ----

/// What Python 3.11's `pickle.dumps(snapshot, 4)` writes for this snapshot (frames
/// empty, as `_dump_snapshot` writes them when no stack was recorded):
///
/// ```python
/// ev = lambda a, addr, size, t, stream=0: {'action': a, 'addr': addr, 'size': size,
///                                          'stream': stream, 'time_us': t, 'frames': []}
/// snapshot = {
///     'segments': [{'device': 0, 'address': 0x1000000, 'stream': 0, 'blocks': [
///         {'address': 0x1000000, 'size': 2097152, 'requested_size': 1000, 'state': 'active_allocated'},
///         {'address': 0x1200000, 'size': 2097152, 'requested_size': 3000, 'state': 'active_allocated'},
///         {'address': 0x1400000, 'size': 2097152, 'requested_size': 0, 'state': 'inactive'}]}],
///     'device_traces': [[
///         ev('segment_alloc', 0x1000000, 6291456, 100),
///         ev('alloc', 0x1200000, 3000, 150),
///         ev('free_requested', 0x1600000, 500, 200),
///         ev('free_completed', 0x1600000, 500, 200),
///         ev('alloc', 0x1600000, 700, 1100, 7)]]}
/// ```
const SNAPSHOT: &[u8] = b"\x80\x04\x95\xd4\x01\x00\x00\x00\x00\x00\x00}\x94(\x8c\x08segments\x94]\x94}\x94(\
\x8c\x06device\x94K\x00\x8c\x07address\x94J\x00\x00\x00\x01\x8c\x06stream\x94K\x00\x8c\x06blocks\x94]\x94(}\
\x94(h\x05J\x00\x00\x00\x01\x8c\x04size\x94J\x00\x00 \x00\x8c\x0erequested_size\x94M\xe8\x03\x8c\x05state\x94\
\x8c\x10active_allocated\x94u}\x94(h\x05J\x00\x00 \x01h\nJ\x00\x00 \x00h\x0bM\xb8\x0bh\x0ch\ru}\x94(h\x05J\x00\
\x00@\x01h\nJ\x00\x00 \x00h\x0bK\x00h\x0c\x8c\x08inactive\x94ueua\x8c\rdevice_traces\x94]\x94]\x94(}\x94(\x8c\
\x06action\x94\x8c\rsegment_alloc\x94\x8c\x04addr\x94J\x00\x00\x00\x01h\nJ\x00\x00`\x00h\x06K\x00\x8c\x07time_us\
\x94Kd\x8c\x06frames\x94]\x94u}\x94(h\x15\x8c\x05alloc\x94h\x17J\x00\x00 \x01h\nM\xb8\x0bh\x06K\x00h\x18K\x96h\
\x19]\x94u}\x94(h\x15\x8c\x0efree_requested\x94h\x17J\x00\x00`\x01h\nM\xf4\x01h\x06K\x00h\x18K\xc8h\x19]\x94u}\
\x94(h\x15\x8c\x0efree_completed\x94h\x17J\x00\x00`\x01h\nM\xf4\x01h\x06K\x00h\x18K\xc8h\x19]\x94u}\x94(h\x15h\
\x1ch\x17J\x00\x00`\x01h\nM\xbc\x02h\x06K\x07h\x18ML\x04h\x19]\x94ueau.";

/// The conversion of [`SNAPSHOT`].
const SNAPSHOT_CSV: &str = "Thread,Time,Action,Pointer,Size,Stream\n\
    1,0.000000000,allocate,0x1600000,500,1\n\
    1,0.000000000,allocate,0x1000000,1000,1\n\
    1,0.000050000,allocate,0x1200000,3000,1\n\
    1,0.000100000,free,0x1600000,500,1\n\
    1,0.001000000,allocate,0x1600000,700,2\n";

#[test]
fn a_snapshot_converts_by_the_rules() {
    // Row 1: freed before it was allocated (allocated before recording); row 2: active at
    // the dump, never mentioned; 0x1200000, active at the dump, is the trace's own
    // allocation; free_completed and segment_alloc are dropped; raw stream 7 is stream 2.
    let got = run(SNAPSHOT).unwrap();
    assert_eq!(got.format, Format::Snapshot);
    assert_eq!(got.trace.to_csv(), SNAPSHOT_CSV);
    assert!(
        got.notes.iter().any(|n| n.contains("1 blocks freed but never allocated") && n.contains("1 blocks active"))
    );
    assert_eq!(run(&gzip(SNAPSHOT)).unwrap(), got, "gzipped");
}

#[test]
fn snapshots_cut_short_or_damaged_are_errors() {
    for cut in [3, 40, SNAPSHOT.len() / 2, SNAPSHOT.len() - 1] {
        let e = run(&SNAPSHOT[..cut]).unwrap_err();
        assert!(
            e.message.starts_with("not a memory snapshot pickle") && e.message.contains("offset"),
            "cut at {cut}: {e}"
        );
    }
    let mut flipped = SNAPSHOT.to_vec();
    flipped[20] = 0xff; // an opcode that does not exist
    assert!(run(&flipped).is_err());
    assert!(err(b"\x80\x04garbage").contains("not a memory snapshot pickle"));
}

/// A snapshot written by the pickle crate's serializer, for the rules' corner cases.
mod built {
    #[derive(deser::Serialize)]
    pub(super) struct Snap {
        pub device_traces: Vec<Vec<Ev>>,
        pub segments: Vec<()>,
    }

    #[derive(deser::Serialize)]
    pub(super) struct Ev {
        pub action: String,
        pub addr: u64,
        pub size: u64,
        pub stream: u64,
        pub time_us: u64,
    }

    pub(super) fn ev(action: &str, addr: u64, size: u64, time_us: u64) -> Ev {
        Ev { action: action.into(), addr, size, stream: 0, time_us }
    }

    pub(super) fn pickle(devices: Vec<Vec<Ev>>) -> Vec<u8> {
        deser_pickle::to_vec(&Snap { device_traces: devices, segments: Vec::new() }).unwrap()
    }
}

#[test]
fn snapshot_events_that_break_the_rules_name_their_index() {
    use built::{ev, pickle};
    let cases: Vec<(Vec<built::Ev>, &str)> = vec![
        (
            vec![ev("alloc", 0x1000, 8, 0), ev("free_requested", 0x1000, 8, 1), ev("free_requested", 0x1000, 8, 2)],
            "event 2: free of 0x1000, which was already freed",
        ),
        (
            vec![ev("alloc", 0x1000, 8, 0), ev("alloc", 0x1000, 8, 1)],
            "event 1: alloc at 0x1000, which is still allocated",
        ),
        (
            vec![ev("alloc", 0x1000, 8, 0), ev("free_requested", 0x1000, 16, 1)],
            "event 1: free of 0x1000 with size 16, allocated with size 8",
        ),
        (
            vec![ev("alloc", 0x1000, 8, 5), ev("alloc", 0x2000, 8, 4)],
            "event 1: time_us 4 is before the previous event's 5",
        ),
        (vec![ev("alloc", 0x1000, 8, 0), ev("resize", 0x1000, 8, 1)], "event 1: unknown action \"resize\""),
        (vec![ev("alloc", 0, 8, 0)], "event 0: alloc at address 0"),
    ];
    for (events, want) in cases {
        assert_eq!(err(&pickle(vec![events])), want);
    }
    // The out-of-memory event is an allocation failure; the order of times is kept.
    let got = csv(&pickle(vec![vec![ev("alloc", 0x1000, 8, 10), ev("oom", 0, 1 << 40, 12)]]));
    assert_eq!(
        got,
        "Thread,Time,Action,Pointer,Size,Stream\n1,0.000000000,allocate,0x1000,8,1\n1,0.000002000,allocate failure,0x0,1099511627776,1\n"
    );
}

#[test]
fn snapshot_devices_are_chosen() {
    use built::{ev, pickle};
    assert_eq!(err(&pickle(vec![vec![], vec![]])), "the snapshot has no events (was memory history recorded?)");
    let two = pickle(vec![vec![ev("alloc", 0x1000, 8, 0)], vec![ev("alloc", 0x2000, 16, 0)]]);
    assert_eq!(err(&two), "events on devices [0, 1]: choose one with --device");
    let one = import(&two, &ImportOptions { device: Some(1) }).unwrap();
    assert_eq!(one.trace.to_csv(), "Thread,Time,Action,Pointer,Size,Stream\n1,0.000000000,allocate,0x2000,16,1\n");
    assert_eq!(
        import(&two, &ImportOptions { device: Some(2) }).unwrap_err().to_string(),
        "no device 2: the snapshot has traces for 2 device(s)"
    );
    // A pickle of something else.
    assert!(err(&deser_pickle::to_vec(&vec![1u32, 2]).unwrap()).contains("not a memory snapshot"), "a list");
    let no_traces = deser_pickle::to_vec(&std::collections::BTreeMap::from([("segments", Vec::<u32>::new())])).unwrap();
    assert!(err(&no_traces).starts_with("no `device_traces`"), "{}", err(&no_traces));
}

#[test]
fn a_pickle_that_multiplies_shared_values_is_refused() {
    // `l = ['x']; for _ in range(40): l = [l, l]` as the value of a key the conversion
    // skips: 40 levels of a list holding the level below twice, 2**40 leaves from a few
    // hundred bytes.
    let mut p = b"\x80\x04}\x8c\x04junk".to_vec(); // a dict and a key
    p.extend_from_slice(b"]\x94\x8c\x01x\x94a0"); // ['x'] as memo 0 ('x' is memo 1), popped
    for level in 0..40u32 {
        // MARK, the level below twice (memo 0, then memo `level + 1`), LIST, MEMOIZE, POP.
        let below = if level == 0 { 0 } else { level + 1 };
        p.push(b'(');
        for _ in 0..2 {
            p.push(b'j');
            p.extend_from_slice(&below.to_le_bytes());
        }
        p.extend_from_slice(b"l\x94");
        if level < 39 {
            p.push(b'0');
        }
    }
    p.extend_from_slice(b"s."); // SETITEM, STOP
    let started = std::time::Instant::now();
    let e = run(&p).unwrap_err();
    assert!(e.message.contains("not a memory snapshot pickle") && e.message.contains("too often"), "{e}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "took {:?}", started.elapsed());
}

#[test]
fn a_clock_that_wraps_too_often_is_an_error_not_an_overflow() {
    // Every other row goes back 13 hours: a new day each time, until the days no longer fit.
    let mut log = String::from(RMM_HEADER);
    for i in 0..430_000u64 {
        let t = if i % 2 == 0 { "23:00:00" } else { "10:00:00" };
        log.push_str(&format!("1,{t},allocate failure,0x0,8,0x2\n"));
    }
    let e = err(log.as_bytes());
    assert!(e.contains("too many days after the first row"), "{e}");
}

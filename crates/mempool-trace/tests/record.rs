//! Recording on the emulator and parsing the trace back.

use mempool_emu::Emulator;
use mempool_hal::{Device, MemPool, PoolProps};
use mempool_trace::{Op, Recorder, parse};

#[test]
fn record_parse_round_trip() -> mempool_hal::Result<()> {
    let rec = Recorder::new(Emulator::builder().deferred().build()?);
    let (a, b) = (rec.create_stream()?, rec.create_stream()?);
    let ev = rec.create_event()?;
    let pool = rec.create_pool(&PoolProps::builder().max_size(64 << 20).build())?;
    let p = pool.malloc_async(3 << 20, &a)?;
    rec.record_event(&ev, &a)?;
    rec.stream_wait_event(&b, &ev)?;
    // SAFETY: `p` is live and only ordered before this free.
    unsafe { pool.free_async(p, &b)? };
    assert!(pool.malloc_async(1 << 40, &a).is_err());
    rec.synchronize_stream(&a)?;
    rec.synchronize_event(&ev)?;
    rec.synchronize_device()?;

    let trace = rec.trace();
    let ops: Vec<Op> = trace.rows.iter().map(|r| r.op).collect();
    let (sa, sb, e) = (a.id(), b.id(), ev.id());
    assert_ne!(sa, sb);
    assert_eq!(
        ops,
        vec![
            Op::Allocate { ptr: p.addr(), size: 3 << 20, stream: sa },
            Op::Record { event: e, stream: sa },
            Op::Wait { event: e, stream: sb },
            Op::Free { ptr: p.addr(), size: 3 << 20, stream: sb },
            Op::AllocateFailure { size: 1 << 40, stream: sa },
            Op::SyncStream { stream: sa },
            Op::SyncEvent { event: e },
            Op::SyncDevice,
        ]
    );
    assert!(trace.rows.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
    let csv = trace.to_csv();
    assert!(csv.starts_with("Thread,Time,Action,Pointer,Size,Stream\n"));
    assert!(csv.contains(&format!(",allocate,{:#x},3145728,{sa}\n", p.addr())));
    assert!(csv.contains(&format!(",wait,{e},,{sb}\n")));
    assert_eq!(parse(&csv).expect("the recorded trace parses"), trace);
    Ok(())
}

#[test]
fn threads_get_distinct_ids() -> mempool_hal::Result<()> {
    let rec = Recorder::new(Emulator::new());
    let pool = rec.create_pool(&PoolProps::builder().max_size(256 << 20).build())?;
    std::thread::scope(|sc| {
        for _ in 0..2 {
            sc.spawn(|| -> mempool_hal::Result<()> {
                let s = rec.create_stream()?;
                for _ in 0..20 {
                    let p = pool.malloc_async(1 << 20, &s)?;
                    // SAFETY: `p` is live and unused.
                    unsafe { pool.free_async(p, &s)? };
                }
                Ok(())
            });
        }
    });
    let trace = rec.trace();
    assert_eq!(trace.rows.len(), 80);
    let mut threads: Vec<u64> = trace.rows.iter().map(|r| r.thread).collect();
    threads.sort_unstable();
    threads.dedup();
    assert_eq!(threads.len(), 2);
    // Rows are in the order the pool saw the calls, so the parser's liveness check passes.
    assert_eq!(parse(&trace.to_csv()).expect("parses"), trace);
    Ok(())
}

#[test]
fn errors_carry_line_numbers() {
    let h = "Thread,Time,Action,Pointer,Size,Stream\n";
    let cases = [
        (format!("{h}1,0.1,allocate,0x1000,10,1\n1,0.2,free,0x2000,10,1\n"), 3, "free of unknown pointer 0x2000"),
        (format!("{h}1,0.1,allocate,0x1000,10,1\n\n1,0.2,allocate,0x1000,10,1\n"), 4, "still live"),
        (format!("{h}1,0.1,allocate,0x1000,10,1\n1,0.2,free,0x1000,12,1\n"), 3, "size 12"),
        (format!("{h}1,0.1,launch,0x1000,10,1\n"), 2, "unknown action \"launch\""),
        (format!("{h}1,0.1,allocate,0x1000,10\n"), 2, "6 comma-separated fields"),
        (format!("{h}1,0.1,allocate,zz,10,1\n"), 2, "pointer \"zz\" is not a number"),
        (format!("{h}1,yesterday,sync_device,,,\n"), 2, "time"),
        (format!("{h}1,0.1,record,,,1\n"), 2, "event id"),
    ];
    for (text, line, msg) in cases {
        let e = parse(&text).expect_err(&text);
        assert_eq!(e.line, line, "{e}");
        assert!(e.to_string().starts_with(&format!("line {line}: ")), "{e}");
        assert!(e.message.contains(msg), "{e} lacks {msg}");
    }
}

/// A workload recorded on the emulator replays to the same statistics and reuse decisions.
#[test]
fn recorded_trace_replays_faithfully() -> mempool_hal::Result<()> {
    use mempool_hal::{MemPoolExt, attr};
    use mempool_trace::{ReplayOptions, ReuseFlags, replay};

    let rec = Recorder::new(Emulator::builder().deferred().build()?);
    let (a, b) = (rec.create_stream()?, rec.create_stream()?);
    let ev = rec.create_event()?;
    let pool = rec.create_pool(&PoolProps::builder().max_size(1 << 30).build())?;
    pool.set(attr::ReleaseThreshold, 1 << 30)?;
    pool.set(attr::ReuseFollowEventDependencies, true)?;
    let mut live = Vec::new();
    for i in 0..40u64 {
        let s = if i % 3 == 0 { &b } else { &a };
        live.push((pool.malloc_async((1 + i % 5) << 20, s)?, s.clone()));
        if i % 4 == 3 {
            for (p, s) in live.drain(..live.len() / 2) {
                // SAFETY: `p` is live and nothing uses it.
                unsafe { pool.free_async(p, &s)? };
            }
            rec.record_event(&ev, &a)?;
            rec.stream_wait_event(&b, &ev)?;
        }
        if i % 10 == 9 {
            rec.synchronize_device()?;
        }
    }
    let stats = pool.stats()?;
    let counts = pool.inner().reuse_counts();

    let trace = parse(&rec.trace().to_csv()).expect("parses");
    let options = ReplayOptions {
        pool_size: 1 << 30,
        threshold: Some(1 << 30),
        flags: ReuseFlags { follow_event_dependencies: true, ..ReuseFlags::default() },
        ..ReplayOptions::default()
    };
    let report = replay(&trace, &options, |_| {}).expect("replays");
    assert_eq!((report.used_high, report.reserved_high), (stats.used_high, stats.reserved_high));
    assert_eq!(report.reuse, counts);
    assert!(counts.event_dependency > 0, "{counts:?}");
    Ok(())
}

//! The bundled traces and the `mempool-trace` command line tool.

use mempool_trace::{ReplayOptions, generate, parse, replay};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn tool(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mempool-trace")).args(args).output().expect("the tool runs")
}

/// A scratch folder for one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("mempool-trace-test-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&d).expect("temp dir");
        Scratch(d)
    }

    fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn bundled_traces_regenerate_byte_identical() {
    for (name, trace) in generate::bundled() {
        let path = dir().join("traces").join(name);
        let committed = std::fs::read_to_string(&path).expect("bundled trace present");
        assert!(committed.len() < 1 << 20, "{name} is {} bytes", committed.len());
        assert!(committed == trace.to_csv(), "{name} differs from the generator: run `mempool-trace generate traces`");
        assert_eq!(parse(&committed).expect("bundled traces parse"), trace);
    }
    // Another seed gives another trace; the same seed the same one.
    assert_ne!(generate::pipeline(1).to_csv(), generate::pipeline(2).to_csv());
    assert_eq!(generate::training(9).to_csv(), generate::training(9).to_csv());
}

#[test]
fn training_trace_shapes() {
    let t = generate::training(generate::SEED);
    let r = replay(&t, &ReplayOptions::default(), |_| {}).expect("replays");
    // Peak USED is the activations of all 12 layers and the loss: between 8 and 12 GiB.
    assert!((8u64 << 30..12 << 30).contains(&r.used_high), "{}", r.used_high);
    // The target with threshold = pool size.
    assert!(r.ratio() <= 1.05, "RESERVED_HIGH / USED_HIGH = {}", r.ratio());
    assert!(r.reuse.same_stream > r.reuse.fresh);
}

#[test]
fn replay_prints_table_and_valid_svg() {
    let scratch = Scratch::new("replay");
    for name in ["training.csv", "pipeline.csv"] {
        let trace = dir().join("traces").join(name);
        let svg = scratch.file(&format!("{name}.svg"));
        let out = tool(&["replay", trace.to_str().unwrap(), "--flags", "follow", "--svg", svg.to_str().unwrap()]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
        for label in [
            "peak requested (live)",
            "USED_HIGH (rounded)",
            "RESERVED_HIGH / peak requested",
            "fragmentation",
            "reuse: same stream",
            "time/op: allocate",
            "follow",
        ] {
            assert!(stdout.contains(label), "{name}: no {label} in\n{stdout}");
        }
        let text = std::fs::read_to_string(&svg).expect("svg written");
        let doc = roxmltree::Document::parse(&text).expect("the SVG is well-formed XML");
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        for id in ["used", "reserved", "requested"] {
            let line = doc
                .descendants()
                .find(|n| n.attribute("id") == Some(id))
                .unwrap_or_else(|| panic!("{name}: no {id} series"));
            assert_eq!(line.tag_name().name(), "polyline");
            assert!(line.attribute("points").expect("points").split(' ').count() > 100);
        }
    }
}

#[test]
fn pipeline_reuses_across_streams_with_follow() {
    let t = generate::pipeline(generate::SEED);
    let off = replay(&t, &ReplayOptions::default(), |_| {}).expect("replays");
    let mut o = ReplayOptions::default();
    o.flags.follow_event_dependencies = true;
    let on = replay(&t, &o, |_| {}).expect("replays");
    assert_eq!(off.reuse.event_dependency, 0);
    assert!(on.reuse.event_dependency > 0);
    assert!(on.reserved_high <= off.reserved_high);
}

#[test]
fn compare_puts_thresholds_side_by_side() {
    let trace = dir().join("traces").join("pipeline.csv");
    let out = tool(&["compare", trace.to_str().unwrap(), "--threshold", "0", "--threshold", "1G"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let header = stdout.lines().find(|l| l.starts_with('|')).expect("a table");
    assert!(header.contains("threshold 0 B") && header.contains("threshold 1 GiB"), "{header}");
    let cell = |label: &str| -> Vec<String> {
        let row = stdout.lines().find(|l| l.starts_with(&format!("| {label} "))).expect(label);
        row.split('|').skip(2).filter(|c| !c.trim().is_empty()).map(|c| c.trim().to_string()).collect()
    };
    assert_eq!(cell("threshold"), ["0 B", "1 GiB"]);
    // Threshold 0 releases everything at each synchronization; 1 GiB keeps it all.
    let end = cell("RESERVED at end");
    assert_eq!(end[0], "0 B");
    assert_ne!(end[1], "0 B");

    // A value given twice makes one column; a byte count under 1 KiB shows as bytes.
    let args = ["compare", trace.to_str().unwrap(), "--threshold", "1", "--threshold", "1G", "--threshold", "1"];
    let out = tool(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let header = stdout.lines().find(|l| l.starts_with('|')).expect("a table");
    assert_eq!(header.matches("threshold ").count(), 2, "{header}");
    assert!(header.contains("threshold 1 B"), "{header}");
    // Values that would round to the same text are named exactly.
    let args = ["compare", trace.to_str().unwrap(), "--threshold", "1048577", "--threshold", "1048578"];
    let out = tool(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let header = stdout.lines().find(|l| l.starts_with('|')).expect("a table");
    assert!(header.contains("threshold 1048577 B") && header.contains("threshold 1048578 B"), "{header}");
}

#[test]
fn compare_replays_through_the_small_block_layer() {
    for name in ["training.csv", "pipeline.csv"] {
        let trace = dir().join("traces").join(name);
        let args = ["compare", trace.to_str().unwrap(), "--small-blocks", "1M", "--small-blocks", "64M"];
        let out = tool(&[&args[..], &["--small-blocks", "1M"]].concat());
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
        let header = stdout.lines().find(|l| l.starts_with('|')).expect("a table");
        // The pool alone first, then one column per distinct threshold.
        assert_eq!(header.matches('|').count(), 5, "{header}");
        assert!(header.contains("pool alone") && header.contains("small blocks 1 MiB"), "{header}");
        let cell = |label: &str| -> Vec<String> {
            let row = stdout.lines().find(|l| l.starts_with(&format!("| {label} "))).expect(label);
            row.split('|').skip(2).filter(|c| !c.trim().is_empty()).map(|c| c.trim().to_string()).collect()
        };
        assert_eq!(cell("small blocks"), ["off", "up to 1 MiB", "up to 64 MiB"]);
        let peak = cell("peak requested (live)");
        assert!(peak.iter().all(|p| *p == peak[0]), "{stdout}");
        let ratios: Vec<f64> =
            cell("RESERVED_HIGH / peak requested").iter().map(|r| r.parse().expect("a ratio")).collect();
        assert!(ratios.iter().all(|&r| r >= 1.0), "{stdout}");
    }
    // `replay` takes one threshold.
    let trace = dir().join("traces").join("training.csv");
    let out = tool(&["replay", trace.to_str().unwrap(), "--small-blocks", "2M"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("up to 2 MiB"), "{stdout}");
    let out = tool(&["replay", trace.to_str().unwrap(), "--small-blocks", "32G"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("threshold") && !stderr.contains("panicked"), "{stderr}");
}

#[test]
fn compare_varies_granularity_and_flags() {
    let trace = dir().join("traces").join("pipeline.csv");
    let args = ["compare", trace.to_str().unwrap(), "--granularity", "2M", "--granularity", "32M", "--flags", "none"];
    let out = tool(&[&args[..], &["--flags", "follow"]].concat());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let header = stdout.lines().find(|l| l.starts_with('|')).expect("a table");
    for col in ["granularity 2 MiB, flags none", "granularity 32 MiB, flags follow"] {
        assert!(header.contains(col), "{header}");
    }
    let cell = |label: &str| -> Vec<String> {
        let row = stdout.lines().find(|l| l.starts_with(&format!("| {label} "))).expect(label);
        row.split('|').skip(2).filter(|c| !c.trim().is_empty()).map(|c| c.trim().to_string()).collect()
    };
    assert_eq!(cell("granularity"), ["2 MiB", "2 MiB", "32 MiB", "32 MiB"]);
    assert_eq!(cell("reuse flags"), ["none", "follow", "none", "follow"]);
    // Following event dependencies lets the consumer stream reuse the producer's blocks.
    let peaks = cell("RESERVED_HIGH");
    assert_ne!(peaks[0], peaks[1], "{stdout}");
}

#[test]
fn trace_errors_name_the_line_and_fail() {
    let scratch = Scratch::new("errors");
    let bad = scratch.file("bad.csv");
    std::fs::write(
        &bad,
        "Thread,Time,Action,Pointer,Size,Stream\n1,0.1,allocate,0x1000,10,1\n1,0.2,free,0x2000,10,1\n",
    )
    .expect("write");
    let out = tool(&["replay", bad.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("line 3: free of unknown pointer 0x2000"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    std::fs::write(&bad, "Thread,Time,Action,Pointer,Size,Stream\n1,0.1,allocate,0x1000,99G,1\n").expect("write");
    let out = tool(&["replay", bad.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 2: size \"99G\" is not a number"));

    // An allocation that does not fit in the replay's pool names its line too.
    std::fs::write(
        &bad,
        "Thread,Time,Action,Pointer,Size,Stream\n1,0.1,allocate,0x1000,4096,1\n1,0.2,allocate,0x2000,8589934592,1\n",
    )
    .expect("write");
    let out = tool(&["replay", bad.to_str().unwrap(), "--pool-size", "1G"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("line 3: allocate failed in the replay"), "{stderr}");
}

#[test]
fn odd_files_get_clear_errors_and_other_tools_logs_replay() {
    let scratch = Scratch::new("odd");
    let file = scratch.file("odd.csv");
    let run = |contents: &[u8], extra: &[&str]| {
        std::fs::write(&file, contents).expect("write");
        let out = tool(&[&["replay", file.to_str().unwrap()], extra].concat());
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!stderr.contains("panicked"), "{stderr}");
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
    };
    // Nothing to replay is an error, not an empty table.
    for empty in [&b""[..], b"Thread,Time,Action,Pointer,Size,Stream\n", b"\n\n"] {
        let (code, _, stderr) = run(empty, &[]);
        assert_eq!(code, Some(1), "{stderr}");
        assert!(stderr.contains("no operations"), "{stderr}");
    }
    // Bytes that are not UTF-8 name their line.
    let (code, _, stderr) = run(b"Thread,Time,Action,Pointer,Size,Stream\n1,0.1,allocate,0x1000,\xff,1\n", &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("line 2: not UTF-8 text"), "{stderr}");
    // A huge field is quoted shortened.
    let long = format!("Thread,Time,Action,Pointer,Size,Stream\n1,0.1,allocate,0x1000,{},1\n", "9".repeat(100_000));
    let (code, _, stderr) = run(long.as_bytes(), &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("line 2: size") && stderr.contains("(100000 bytes) is not a number"), "{stderr}");
    assert!(stderr.len() < 500, "{} bytes of error", stderr.len());
    // An RMM log: native thread ids, and a byte-order mark before the header.
    let rmm = "\u{feff}Thread,Time,Action,Pointer,Size,Stream\n\
               140573312345856,1634567890.123456,allocate,0x7f0000000000,1048576,1\n\
               140573312345856,1634567890.223456,free,0x7f0000000000,1048576,1\n";
    let (code, stdout, stderr) = run(rmm.as_bytes(), &[]);
    assert_eq!(code, Some(0), "{stderr}");
    // A header after blank lines is still the header.
    let (code, _, stderr) = run(format!("\n\n{}", rmm.trim_start_matches('\u{feff}')).as_bytes(), &[]);
    assert_eq!(code, Some(0), "{stderr}");
    let ops = stdout.lines().find(|l| l.starts_with("| operations ")).unwrap_or_default();
    assert_eq!(ops.split('|').nth(2).map(str::trim), Some("2"), "{stdout}");
}

#[test]
fn committed_plot_is_the_training_replay() {
    // The plot in docs/traces.md is what `replay traces/training.csv --svg docs/training.svg` writes.
    let t = generate::training(generate::SEED);
    let r = replay(&t, &ReplayOptions::default(), |_| {}).expect("replays");
    let svg = mempool_trace::svg::plot("training.csv: USED, RESERVED and requested (MiB)", &r.samples);
    let committed = std::fs::read_to_string(dir().join("docs").join("training.svg")).expect("docs/training.svg");
    assert!(committed == svg, "docs/training.svg is stale: regenerate it with the command in docs/traces.md");
}

#[test]
fn settings_change_the_replay() {
    // The training trace's small tensors (token ids, the loss) take a whole 2 MiB granule.
    let training = generate::training(generate::SEED);
    let coarse = replay(&training, &ReplayOptions::default(), |_| {}).expect("replays");
    let fine = replay(&training, &ReplayOptions { granularity: 64 << 10, ..ReplayOptions::default() }, |_| {})
        .expect("replays");
    assert_eq!(fine.options.granularity, 64 << 10);
    assert!(fine.used_high < coarse.used_high, "{} vs {}", fine.used_high, coarse.used_high);
    let t = generate::pipeline(generate::SEED);
    let base = replay(&t, &ReplayOptions::default(), |_| {}).expect("replays");
    // Threaded replay runs too (which rule serves what then depends on timing).
    let threaded = replay(&t, &ReplayOptions { threaded: true, ..ReplayOptions::default() }, |_| {}).expect("replays");
    assert_eq!(threaded.used_high, base.used_high);
    let c = threaded.reuse;
    let served =
        c.same_stream + c.known_complete + c.event_dependency + c.opportunistic + c.internal_dependency + c.fresh;
    assert_eq!(served, 192);
    // Bad settings are errors, not panics.
    let bad = replay(&t, &ReplayOptions { granularity: 3 << 20, ..ReplayOptions::default() }, |_| {});
    assert!(bad.expect_err("granularity must be a power of two").to_string().contains("granularity"));
    let out = tool(&["replay", "traces/pipeline.csv", "--flags", "follow,eager"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown reuse flag \"eager\""));
}

#[test]
fn progress_reaches_the_end() {
    let t = generate::training(generate::SEED);
    let mut seen = Vec::new();
    replay(&t, &ReplayOptions::default(), |n| seen.push(n)).expect("replays");
    assert_eq!(seen, [1024, t.rows.len()]);
}

#[test]
fn import_converts_an_rmm_log_and_rejects_bad_files() {
    let scratch = Scratch::new("import");
    let log = scratch.file("rmm.csv");
    let out_csv = scratch.file("out.csv");
    std::fs::write(
        &log,
        "Thread,Time,Action,Pointer,Size,Stream\n\
         140001,23:59:59.999900,allocate,0x7f3a00000000,4096,0x2\n\
         140002,00:00:00.000100,allocate,0x7f3a00200000,1024,0x2\n\
         140001,00:00:00.000200,free,0x7f3a00000000,4096,0x2\n",
    )
    .expect("write");
    let out = tool(&["import", log.to_str().unwrap(), "-o", out_csv.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("RMM log") && stderr.contains("midnight"), "{stderr}");
    let written = std::fs::read_to_string(&out_csv).expect("written");
    assert_eq!(
        written,
        "Thread,Time,Action,Pointer,Size,Stream\n\
         1,0.000000000,allocate,0x7f3a00000000,4096,1\n\
         2,0.000200000,allocate,0x7f3a00200000,1024,2\n\
         1,0.000300000,free,0x7f3a00000000,4096,1\n"
    );
    // The result replays.
    let out = tool(&["replay", out_csv.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("| peak requested (live)"));

    // Without -o the CSV goes to standard output.
    let out = tool(&["import", log.to_str().unwrap()]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), written);

    let bad = scratch.file("bad.csv");
    for (contents, want) in [
        (&b"Thread,Time,Action,Pointer,Size,Stream\n1,12:00:00.000001,free,0x10,8,0x2\n"[..], "line 2: free of 0x10"),
        (b"Thread,Time,Action,Pointer,Size,Stream\n1,12:00:99.000001,allocate,0x10,8,0x2\n", "line 2: time"),
        (b"", "empty input"),
        (b"\x80\x04\x95\x10", "not a memory snapshot pickle"),
        (b"\x1f\x8b\x08\x00\x00", "gzip data is damaged"),
    ] {
        std::fs::write(&bad, contents).expect("write");
        let out = tool(&["import", bad.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{want}: {stderr}");
        assert!(stderr.contains(want), "{want}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let out = tool(&["import", scratch.file("missing.pickle").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn export_writes_a_snapshot_that_imports_back() {
    let scratch = Scratch::new("export");
    let trace = dir().join("traces").join("training.csv");
    let pickle = scratch.file("training.pickle");
    let out = tool(&["export", trace.to_str().unwrap(), "-o", pickle.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("wrote") && stderr.contains("allocations live at the end"), "{stderr}");
    assert!(std::fs::read(&pickle).expect("written").starts_with(b"\x80\x04"), "a protocol 4 pickle");

    // The tool's own import gives back the trace's allocations and frees: training.csv
    // has one stream (1), which stays 1, so only its sync rows are missing.
    let back = scratch.file("back.csv");
    let out = tool(&["import", pickle.to_str().unwrap(), "-o", back.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("PyTorch memory snapshot"), "{stderr}");
    let original = parse(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let imported = parse(&std::fs::read_to_string(&back).unwrap()).unwrap();
    let kept: Vec<_> =
        original.rows.iter().filter(|r| !matches!(r.op, mempool_trace::Op::SyncStream { .. })).map(|r| r.op).collect();
    let ops: Vec<_> = imported.rows.iter().map(|r| r.op).collect();
    assert_eq!(ops, kept);
}

#[test]
fn export_to_an_unwritable_path_fails_with_the_reason() {
    let scratch = Scratch::new("export-bad");
    let trace = dir().join("traces").join("pipeline.csv");
    let missing = scratch.file("no-such-folder/out.pickle");
    for target in [&missing, &scratch.0] {
        let out = tool(&["export", trace.to_str().unwrap(), "-o", target.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.starts_with(&format!("mempool-trace: cannot write {}: ", target.display())), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    assert!(!missing.exists());
    // A trace that does not parse, and no -o, are errors before anything is written.
    let bad = scratch.file("bad.csv");
    std::fs::write(&bad, "Thread,Time,Action,Pointer,Size,Stream\n1,0.1,free,0x10,8,1\n").unwrap();
    let out = tool(&["export", bad.to_str().unwrap(), "-o", scratch.file("x.pickle").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 2: free of unknown pointer 0x10"));
    assert!(!scratch.file("x.pickle").exists());
    let out = tool(&["export", trace.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "clap's usage error");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--output"));
}

//! The probe (`mempool_ascend::probe`) through the Ascend backend over the drop-in library,
//! on both emulator profiles: each profile runs in a child process of this test binary
//! (the library reads `MEMPOOL_EMU_PROFILE` once per process), once for the whole binary;
//! the two tables must differ in the reuse and release rows and agree in the others, one
//! rstest case per row.
//!
//! The rules it checks: contract §12 (`mempool_hal::contract::profiles`).

use mempool_emu::Profile;
use rstest::rstest;
use std::process::Command;
use std::sync::OnceLock;

/// Set in a child: the profile it probes.
const CHILD: &str = "MEMPOOL_TEST_PROBE_CHILD";
const BEGIN: &str = "--- probe table ---";
const END: &str = "--- end ---";

/// The child's part: probe the library that `ASCEND_HOME_PATH` names and print the table.
#[test]
fn child_probe() {
    let Some(profile) = std::env::var_os(CHILD) else { return };
    let dev = mempool_ascend::Ascend::open(0).expect("the drop-in library is found through ASCEND_HOME_PATH");
    let report = mempool_ascend::probe::run(&dev);
    println!("{BEGIN}\n{report}{END}");
    let want = profile.to_string_lossy().parse::<Profile>().expect("a profile name");
    assert_eq!(report.profile(), Some(want), "\n{report}");
}

/// Runs the probe in a child process over the drop-in library with `profile`.
fn probe_table(profile: Profile) -> String {
    let home = mempool_tests::shim_home();
    let out = Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", "child_probe", "--nocapture", "--test-threads", "1"])
        .env(CHILD, profile.name())
        .env("ASCEND_HOME_PATH", home.path())
        .env_remove(mempool_ascend::ENV_LIBRARY)
        .env(mempool_emu::ENV_PROFILE, profile.name())
        .env(mempool_emu::ENV_GRANULARITY, "64K")
        .env(mempool_emu::ENV_DEVICE_MEMORY, "1G")
        .output()
        .expect("the child runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{profile}: the child failed\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let table = stdout.split(BEGIN).nth(1).and_then(|t| t.split(END).next()).expect("the child printed a table");
    table.trim().to_string()
}

fn row<'a>(table: &'a str, what: &str) -> &'a str {
    table.lines().find(|l| l.starts_with(&format!("| {what}"))).unwrap_or_else(|| panic!("no row {what:?} in\n{table}"))
}

/// The tables of `documented` and `cann-open`, probed once for every case below.
fn tables() -> &'static (String, String) {
    static TABLES: OnceLock<(String, String)> = OnceLock::new();
    TABLES.get_or_init(|| {
        let documented = probe_table(Profile::Documented);
        let cann_open = probe_table(Profile::CannOpen);
        println!("documented:\n{documented}\n\ncann-open:\n{cann_open}");
        (documented, cann_open)
    })
}

#[rstest]
#[case::same_stream_reuse("same-stream reuse")]
#[case::event_dependency_reuse("event-dependency reuse")]
#[case::release_at_synchronization("release at synchronization")]
#[case::profile("profile")]
fn the_tables_of_the_two_profiles_differ_in(#[case] what: &str) {
    let (documented, cann_open) = tables();
    assert_ne!(row(documented, what), row(cann_open, what), "{what}");
}

#[rstest]
#[case::granularity("granularity")]
#[case::version("version")]
#[case::pageable_copies("pageable aclrtMemcpyAsync")]
fn the_tables_of_the_two_profiles_agree_in(#[case] what: &str) {
    let (documented, cann_open) = tables();
    assert_eq!(row(documented, what), row(cann_open, what), "{what}");
}

#[test]
fn the_reuse_and_release_rows_say_how_cann_open_differs() {
    let (documented, cann_open) = tables();
    assert!(row(documented, "same-stream reuse").ends_with("| as documented |"), "{documented}");
    assert!(row(cann_open, "same-stream reuse").contains("differs: no reuse (cann-open)"), "{cann_open}");
    assert!(row(cann_open, "release at synchronization").contains("kept until trim_to"), "{cann_open}");
}

//! Shared pieces of the workspace integration tests: the conformance harnesses of the
//! backends built in this workspace, the drop-in ACL library laid out for loading, and a
//! test case run on one emulator profile in a child process.

use mempool::Result;
use mempool_ascend::Ascend;
use mempool_conformance::{Capability, Harness};
use mempool_emu::{EmuStream, Emulator, ExecutionMode, Profile};
use std::path::{Path, PathBuf};

/// The emulator under the conformance suite, in one execution mode and one profile, with
/// small granules (64 KiB) and a 1 GiB device so the suite runs fast.
#[derive(Debug, Clone, Copy)]
pub struct EmuHarness {
    /// Threaded or deferred.
    pub mode: ExecutionMode,
    /// `documented` or `cann-open` (contract §12).
    pub profile: Profile,
}

impl Harness for EmuHarness {
    type Device = Emulator;

    fn device(&self) -> Result<Emulator> {
        Emulator::builder().granularity(64 << 10).device_memory(1 << 30).mode(self.mode).profile(self.profile).build()
    }

    fn profile(&self) -> Profile {
        self.profile
    }

    fn supports(&self, cap: Capability) -> bool {
        // The emulator offers every capability in both modes.
        let _ = cap;
        true
    }

    fn let_run(&self, dev: &Emulator, stream: &EmuStream) -> Result<()> {
        dev.run_pending(stream)
    }

    /// Devices 0 and 1 of a two-device platform.
    fn peer_pair(&self) -> Result<(Emulator, Emulator)> {
        let e = Emulator::builder()
            .devices(2)
            .granularity(64 << 10)
            .device_memory(1 << 30)
            .mode(self.mode)
            .profile(self.profile)
            .build()?;
        Ok((e.device(0)?, e.device(1)?))
    }
}

/// The Ascend backend under the conformance suite, over whatever runtime its normal
/// search finds (the tests point `ASCEND_HOME_PATH` at the drop-in library).
#[derive(Debug, Clone, Copy)]
pub struct AscendHarness {
    /// Whether the runtime answers bad free pointers with an error (the drop-in library
    /// does; real hardware cannot promise it).
    pub checked_free: bool,
    /// The runtime's profile (contract §12): the drop-in library's `MEMPOOL_EMU_PROFILE`,
    /// or what the probe found on an installed runtime.
    pub profile: Profile,
}

impl Harness for AscendHarness {
    type Device = Ascend;

    fn device(&self) -> Result<Ascend> {
        Ascend::open(0)
    }

    /// Devices 0 and 1, where the drop-in library runs with two (`MEMPOOL_EMU_DEVICES=2`;
    /// the suite's own runs have one, so the capability is off).
    fn peer_pair(&self) -> Result<(Ascend, Ascend)> {
        Ok((Ascend::open(0)?, Ascend::open(1)?))
    }

    fn supports(&self, cap: Capability) -> bool {
        match cap {
            Capability::CheckedFree => self.checked_free,
            // Each `Ascend::open` is a separate instance whose handles the others refuse.
            Capability::ForeignHandles
            | Capability::BlockingHostFunctions
            | Capability::ObserveExecutionWithoutSync
            | Capability::Threads => true,
            // The drop-in libraries run these suites with one emulated device.
            Capability::PeerDevices => false,
        }
    }

    fn profile(&self) -> Profile {
        self.profile
    }
    // `let_run` keeps the default: poll an event without synchronizing.
}

/// The conformance harness over the CUDA backend: devices opened on whatever
/// `libcuda.so.1` the backend finds (the project's CPU library in `cargo test`, through
/// `MEMPOOL_CUDA_LIBRARY`), on the `cuda` profile (contract §12).
#[derive(Debug, Clone, Copy)]
pub struct CudaHarness {
    /// The driver's profile: [`Profile::Cuda`] for the CPU library and NVIDIA's driver.
    pub profile: Profile,
    /// The device ordinal the scenarios run on.
    pub device: u32,
}

impl Harness for CudaHarness {
    type Device = mempool_cuda::Cuda;

    fn device(&self) -> Result<mempool_cuda::Cuda> {
        mempool_cuda::Cuda::open(self.device)
    }

    fn supports(&self, cap: Capability) -> bool {
        match cap {
            // The CPU library checks every pointer it is given; a real driver need not.
            Capability::CheckedFree => true,
            // Each `Cuda::open` is an instance of its own whose handles the others refuse.
            Capability::ForeignHandles
            | Capability::BlockingHostFunctions
            | Capability::ObserveExecutionWithoutSync
            | Capability::Threads => true,
            // The CPU libcuda.so.1 runs this suite with two emulated devices.
            Capability::PeerDevices => true,
        }
    }

    /// Devices 0 and 1 of the CPU `libcuda.so.1` (`cuda_conformance_env` sets two).
    fn peer_pair(&self) -> Result<(mempool_cuda::Cuda, mempool_cuda::Cuda)> {
        Ok((mempool_cuda::Cuda::open(0)?, mempool_cuda::Cuda::open(1)?))
    }

    fn profile(&self) -> Profile {
        self.profile
    }
}

/// The project's CPU `libcuda.so` that cargo built next to this test binary (the tests
/// crate depends on the CUDA shim crate, whose cdylib lands in `target/<profile>/deps`).
pub fn cuda_shim_library() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let deps = exe.parent().expect("test binaries live in target/<profile>/deps");
    let lib = deps.join("libcuda.so");
    assert!(lib.exists(), "{} is missing: the CUDA shim crate's cdylib was not built", lib.display());
    lib
}

/// A folder holding `libcuda.so.1` and `libcuda.so` (links to the built CPU library),
/// private to one caller, removed when the value is dropped; give it to the backend as
/// `MEMPOOL_CUDA_LIBRARY`.
pub fn cuda_shim_home() -> ShimHome {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let lib = cuda_shim_library();
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let home = std::env::temp_dir().join(format!("mempool-cuda-shim-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&home).expect("the CUDA shim folder can be made");
    for name in mempool_cuda::LIBRARY_NAMES {
        let dst = home.join(name);
        let _ = std::fs::remove_file(&dst);
        std::os::unix::fs::symlink(&lib, &dst).expect("the CUDA shim folder can be laid out");
    }
    ShimHome(home)
}

/// The environment of a conformance child over the CPU `libcuda.so.1` in `home`: the
/// library, two devices, and the 2 MiB granularity the CUDA backend assumes for pools.
pub fn cuda_conformance_env(home: &ShimHome) -> Vec<(&'static str, std::ffi::OsString)> {
    vec![
        (mempool_cuda::ENV_LIBRARY, home.path().into()),
        (mempool_emu::ENV_DEVICES, "2".into()),
        (mempool_emu::ENV_GRANULARITY, (2u64 << 20).to_string().into()),
        (mempool_emu::ENV_DEVICE_MEMORY, (4u64 << 30).to_string().into()),
    ]
}

/// In a child process of [`on_profile_with`] with [`cuda_conformance_env`]: opens the CUDA
/// backend as the conformance harness will, and checks that it loaded the laid-out CPU
/// library.
pub fn check_cuda_conformance_runtime() {
    let home = std::env::var_os(mempool_cuda::ENV_LIBRARY).expect("the parent sets MEMPOOL_CUDA_LIBRARY");
    let dev = mempool_cuda::Cuda::open(0).expect("the CPU libcuda.so.1 is found through MEMPOOL_CUDA_LIBRARY");
    assert!(
        dev.runtime().path().starts_with(&home),
        "loaded {} instead of the laid-out CPU library",
        dev.runtime().path().display()
    );
    println!("driver: {}", dev.runtime().path().display());
}

/// Calls `$m!` with the names of the thirty scenarios of contract §10, in order (the names
/// of their functions in `mempool_conformance::scenarios`): test files that make one test
/// per scenario write it with these. [`check_scenario_names`] checks the list against the
/// suite's own table, so a scenario added there and not here fails a test.
#[macro_export]
macro_rules! each_scenario {
    ($m:ident) => {
        $m! {
            s01_fresh_pool_defaults,
            s02_reuse_flags_round_trip,
            s03_read_only_counters_refuse_writes,
            s04_high_marks_reset_only,
            s05_unknown_attribute_id,
            s06_threshold_limits,
            s07_bad_props_rejected,
            s08_max_size_zero_and_rounding,
            s09_one_byte_rounds_to_granule,
            s10_fresh_allocations_in_address_order,
            s11_same_stream_reuse,
            s12_best_fit,
            s13_cross_stream_no_flags_no_sync,
            s14_cross_stream_after_sync,
            s15_event_dependency,
            s16_event_chain,
            s17_opportunistic_reuse,
            s18_internal_dependencies,
            s19_pool_exhaustion,
            s20_bad_free_pointers,
            s21_high_marks,
            s22_release_threshold_zero,
            s23_release_threshold_t,
            s24_release_at_event_and_device_sync,
            s25_trim_errors,
            s26_trim_smallest_first_split,
            s27_unexecuted_free_not_released,
            s28_destroy_with_live_allocations,
            s29_bad_handles,
            s30_concurrent_alloc_free,
        }
    };
}

/// Panics unless `names` are exactly the suite's scenarios, in order.
pub fn check_scenario_names<H: Harness>(names: &[&str]) {
    let suite: Vec<_> = mempool_conformance::scenarios::<H>().iter().map(|s| s.name).collect();
    assert_eq!(names, suite, "the tests' scenario list (each_scenario!) and the suite's table differ");
}

/// Runs the conformance scenario `name` against `harness` and panics with the failure and
/// the contract page it checks. A scenario that needs a capability the harness lacks is a
/// failure here, never a silent pass: the harnesses that run this way support every one.
pub fn run_scenario<H: Harness>(name: &str, harness: &H) {
    run_from(&mempool_conformance::scenarios::<H>(), name, harness);
}

/// Calls `$m!` with the names of the scenarios of virtual memory (contract §14), in order
/// (their functions in `mempool_conformance::scenarios`); [`check_vmm_scenario_names`]
/// checks the list against the suite's table.
#[macro_export]
macro_rules! each_vmm_scenario {
    ($m:ident) => {
        $m! {
            vmm01_round_trip,
            vmm02_chunk_mapped_twice,
            vmm03_chunk_released_while_mapped,
            vmm04_misuse_answered,
        }
    };
}

/// Panics unless `names` are exactly the suite's scenarios of virtual memory, in order.
pub fn check_vmm_scenario_names<H: Harness>(names: &[&str])
where
    H::Device: mempool_hal::VirtualMemory,
{
    let suite: Vec<_> = mempool_conformance::vmm_scenarios::<H>().iter().map(|s| s.name).collect();
    assert_eq!(names, suite, "the tests' scenario list (each_vmm_scenario!) and the suite's table differ");
}

/// [`run_scenario`] for a scenario of virtual memory (contract §14).
pub fn run_vmm_scenario<H: Harness>(name: &str, harness: &H)
where
    H::Device: mempool_hal::VirtualMemory,
{
    run_from(&mempool_conformance::vmm_scenarios::<H>(), name, harness);
}

/// [`run_scenario`] for the host registration scenario `name` (contract §15).
pub fn run_host_register_scenario<H: Harness>(name: &str, harness: &H)
where
    H::Device: mempool_hal::HostRegistration,
{
    run_from(&mempool_conformance::host_register_scenarios::<H>(), name, harness);
}

/// Checks that `names` are the host registration scenarios of the suite, in order.
pub fn check_host_register_names<H: Harness>(names: &[&str])
where
    H::Device: mempool_hal::HostRegistration,
{
    let suite: Vec<_> = mempool_conformance::host_register_scenarios::<H>().iter().map(|s| s.name).collect();
    assert_eq!(names, suite, "the tests' host registration list and the suite's table differ");
}

/// The host registration scenarios (contract §15), for a macro that makes one test each.
#[macro_export]
macro_rules! each_host_register_scenario {
    ($m:ident) => {
        $m! {
            h01_registered_range_copies_both_ways,
            h02_overlapping_registration_refused,
            h03_unregister_names_the_start,
            h04_register_again_after_unregister,
        }
    };
}

/// Runs scenario `name` of `scenarios` (see [`run_scenario`]).
fn run_from<H: Harness>(scenarios: &[mempool_conformance::Scenario<H>], name: &str, harness: &H) {
    let scenario = scenarios.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no scenario {name}"));
    let missing: Vec<_> = scenario.needs.iter().chain(scenario.optional).filter(|&&c| !harness.supports(c)).collect();
    assert!(missing.is_empty(), "{name}: the harness lacks {missing:?}, so it cannot run every check");
    if let Err(f) = scenario.run_on(harness) {
        panic!("{name}: {f}\n(the rule: {})", scenario.contract);
    }
}

/// The settings of a child process that runs the conformance suite through the Ascend
/// backend over the drop-in library: `ASCEND_HOME_PATH` at `home` (the backend finds the
/// library there, as it would find CANN; no explicit library path), 64 KiB granules and a
/// 1 GiB device, so the suite runs fast. For [`on_profile_with`].
pub fn shim_conformance_env(home: &ShimHome) -> Vec<(&'static str, std::ffi::OsString)> {
    vec![
        ("ASCEND_HOME_PATH", home.path().into()),
        (mempool_emu::ENV_GRANULARITY, (64u64 << 10).to_string().into()),
        (mempool_emu::ENV_DEVICE_MEMORY, (1u64 << 30).to_string().into()),
    ]
}

/// In a child process of [`on_profile_with`] with [`shim_conformance_env`]: opens the
/// Ascend backend as the conformance harness will, and checks that it loaded the laid-out
/// drop-in library with the settings given.
pub fn check_shim_conformance_runtime(profile: Profile) {
    let home = std::env::var_os("ASCEND_HOME_PATH").expect("the parent sets ASCEND_HOME_PATH");
    let dev = Ascend::open(0).expect("the drop-in library is found through ASCEND_HOME_PATH");
    assert!(
        dev.runtime().path().starts_with(&home),
        "loaded {} instead of the laid-out shim",
        dev.runtime().path().display()
    );
    assert_eq!(mempool_hal::Device::pool_granularity(&dev), 64 << 10, "the probe measures the shim's granularity");
    println!("runtime: {} (profile {profile})", dev.runtime().path().display());
}

/// The drop-in `libacl_rt.so` that cargo built next to this test binary (the tests crate
/// depends on the shim crate, whose cdylib lands in `target/<profile>/deps`).
pub fn shim_library() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let deps = exe.parent().expect("test binaries live in target/<profile>/deps");
    let lib = deps.join("libacl_rt.so");
    assert!(lib.exists(), "{} is missing: the shim crate's cdylib was not built", lib.display());
    lib
}

/// The pluggable-allocator library `libmempool_alloc.so` that cargo built next to this test
/// binary (the tests crate depends on `mempool-alloc`, whose cdylib lands in
/// `target/<profile>/deps`), for programs that dlopen it as the frameworks do.
pub fn alloc_library() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let deps = exe.parent().expect("test binaries live in target/<profile>/deps");
    let lib = deps.join("libmempool_alloc.so");
    assert!(lib.exists(), "{} is missing: the mempool-alloc crate's cdylib was not built", lib.display());
    lib
}

/// A folder `<dir>/lib64` holding `libacl_rt.so` and `libascendcl.so` (links to the built
/// shim), private to one caller: tests that run at the same time never share, relink or
/// remove each other's folder. The folder is removed when the value is dropped.
#[derive(Debug)]
pub struct ShimHome(PathBuf);

impl ShimHome {
    /// `<dir>`: the value for `ASCEND_HOME_PATH`.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ShimHome {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Lays out a fresh [`ShimHome`], unique to this process and this call.
pub fn shim_home() -> ShimHome {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let lib = shim_library();
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let home = std::env::temp_dir().join(format!("mempool-acl-shim-{}-{n}", std::process::id()));
    lay_out(&lib, &home).expect("the shim folder can be laid out");
    ShimHome(home)
}

/// Lays out `home/lib64` with both library names linking to `lib`.
fn lay_out(lib: &Path, home: &Path) -> std::io::Result<()> {
    let lib64 = home.join("lib64");
    std::fs::create_dir_all(&lib64)?;
    for name in mempool_ascend::loader::LIBRARY_NAMES {
        let dst = lib64.join(name);
        let _ = std::fs::remove_file(&dst);
        std::os::unix::fs::symlink(lib, &dst)?;
    }
    Ok(())
}

/// The variable that marks a child process of [`on_profile`].
const PROFILE_CHILD_VAR: &str = "MEMPOOL_TEST_PROFILE_CHILD";

/// Runs the calling test's `body` on `profile` (contract §12) in a child process of its
/// own, since the drop-in library reads `MEMPOOL_EMU_PROFILE` once per process, at its
/// first call. Each profile is a test case of its own (an rstest case per profile), so
/// each reports on its own.
///
/// In the parent (the test as cargo runs it), this runs the binary again as
/// `<exe> <test> --exact --test-threads=1 --nocapture`, where `<test>` is the calling
/// test's name (libtest names each test's thread after it), with every `MEMPOOL_EMU_*`
/// setting cleared except `MEMPOOL_EMU_PROFILE`; it prints the child's output and panics
/// when the child fails or did not run exactly that one test. `body` does not run there.
/// In the child, it runs `body` with `profile`, after checking that the child got it.
pub fn on_profile(profile: Profile, body: impl FnOnce(Profile)) {
    on_profile_with(profile, &[], body);
}

/// [`on_profile`] with more environment for the child: after clearing every
/// `MEMPOOL_EMU_*` setting (and the Ascend backend's explicit library path,
/// `mempool_ascend::ENV_LIBRARY`), the parent sets `env` in the child as well as the
/// profile. The parent keeps whatever `env` names (a folder, say) alive until the child
/// has ended.
pub fn on_profile_with(profile: Profile, env: &[(&str, std::ffi::OsString)], body: impl FnOnce(Profile)) {
    let current = std::thread::current();
    let test = current.name().filter(|n| *n != "main").expect("on_profile runs on a libtest test thread");
    if std::env::var_os(PROFILE_CHILD_VAR).is_some() {
        let name = std::env::var(mempool_emu::ENV_PROFILE).expect("a child of on_profile has a profile");
        let got = name.parse::<Profile>().unwrap_or_else(|e| panic!("{}={name}: {e}", mempool_emu::ENV_PROFILE));
        assert_eq!(got, profile, "{test}: the child runs the case of its profile");
        println!("{test}: profile {profile}");
        body(profile);
        return;
    }
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let mut cmd = std::process::Command::new(&exe);
    cmd.args([test, "--exact", "--test-threads=1", "--nocapture"]);
    for var in mempool_emu::ENV_ALL {
        cmd.env_remove(var);
    }
    cmd.env_remove(mempool_ascend::ENV_LIBRARY);
    cmd.env_remove(mempool_cuda::ENV_LIBRARY);
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    cmd.env(PROFILE_CHILD_VAR, "1").env(mempool_emu::ENV_PROFILE, profile.name());
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let ran_one = text.contains("running 1 test") && text.contains("test result: ok. 1 passed;");
    println!("--- {test} on {profile}: {}\n{text}", if ran_one { "ok" } else { "FAILED" });
    assert!(out.status.success() && ran_one, "{test} failed in its child on {profile} ({})", out.status);
}

/// Appends one timed loop's percentiles to `target/bench-percentiles.tsv` (the file
/// `cargo xtask bench` reads, next to the bench binary's profile folder) as
/// `group impl median_ns p99_ns samples`, and prints them; `unit` names a sample.
pub fn write_percentiles(group: &str, name: &str, unit: &str, mut ns: Vec<u64>) {
    use std::io::Write;
    if ns.is_empty() {
        return;
    }
    ns.sort_unstable();
    let at = |q: f64| ns[((ns.len() - 1) as f64 * q).round() as usize];
    let (median, p99) = (at(0.5), at(0.99));
    println!("{group}/{name}: {} samples, median {median} ns, p99 {p99} ns per {unit}", ns.len());
    let exe = std::env::current_exe().unwrap_or_default();
    // target/<profile>/deps/<bench>
    let path =
        exe.ancestors().nth(3).map_or_else(|| PathBuf::from("target"), Path::to_path_buf).join("bench-percentiles.tsv");
    let line = format!("{group}\t{name}\t{median}\t{p99}\t{}\n", ns.len());
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        eprintln!("cannot write {}: {e}", path.display());
    }
}

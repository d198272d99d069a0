//! Prints which behaviour the installed Ascend runtime's pools have (contract §12), as a
//! table with a verdict per row against the documented behaviour.
//!
//! ```text
//! cargo run -p mempool-ascend --example probe          # the backend's normal search
//! MEMPOOL_ASCEND_LIBRARY=/path/to/libacl_rt.so cargo run -p mempool-ascend --example probe
//! ```

fn main() -> std::process::ExitCode {
    let dev = match mempool_ascend::Ascend::open(0) {
        Ok(dev) => dev,
        Err(e) => {
            eprintln!("no Ascend runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    print!("{}", mempool_ascend::probe::run(&dev));
    std::process::ExitCode::SUCCESS
}

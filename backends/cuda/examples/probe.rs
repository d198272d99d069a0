//! Prints which behaviour the CUDA driver's pools have (contract §12), as a table with a
//! verdict per row against CUDA's documented behaviour, and whether the library is the
//! project's CPU libcuda.
//!
//! ```text
//! cargo run -p mempool-cuda --example probe          # the backend's normal search
//! MEMPOOL_CUDA_LIBRARY=/path/to/libcuda.so.1 cargo run -p mempool-cuda --example probe
//! ```
//!
//! The driver is found as the backend finds it: `MEMPOOL_CUDA_LIBRARY`, the system loader,
//! then the usual driver folders. With no driver (or one without pools, or no device 0)
//! it prints why on standard error and exits with status 1, as the Ascend probe does.

fn main() -> std::process::ExitCode {
    let dev = match mempool_cuda::Cuda::open(0) {
        Ok(dev) => dev,
        Err(e) => {
            eprintln!("no CUDA driver: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    print!("{}", mempool_cuda::probe::run(&dev));
    std::process::ExitCode::SUCCESS
}

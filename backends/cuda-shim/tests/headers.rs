//! `include/cuda.h` against the library it describes.
//!
//! - The functions the header declares are exactly the library's exports (both ways), and
//!   every `_v2` name macro names one of them.
//! - A C11 program that takes the address of every declared function, and checks the
//!   header's constants and struct layout against the Rust side with `_Static_assert`
//!   (and the stream handle macros `CU_STREAM_LEGACY` and `CU_STREAM_PER_THREAD` when it
//!   runs), is compiled with every warning an error and linked against the built
//!   `libcuda.so` (by its path, so the driver of the machine, if any, is never picked);
//!   the same checks compile as C++17.
//! - `tests/c/pool.c`, a program in the driver API's style, runs on the library and prints
//!   its summary line.
//!
//! A missing C or C++ compiler fails the test: it is not skipped.

mod common;

use common::{CRATE, exported_functions, library};
use cuda::types::*;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::mem::{offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

fn header() -> String {
    let p = Path::new(CRATE).join("include/cuda.h");
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The functions the header declares: lines `CUresult CUDAAPI name(` and
/// `const char *name(`.
fn declared_functions(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("CUresult CUDAAPI ").or_else(|| l.strip_prefix("const char *")))
        .filter_map(|rest| rest.split_once('(').map(|(name, _)| name.trim().to_string()))
        .collect()
}

/// The name macros: `#define cuName cuName_v2`.
fn name_macros(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("#define cu"))
        .filter_map(|rest| {
            let mut parts = rest.split_whitespace();
            Some((format!("cu{}", parts.next()?), parts.next()?.to_string()))
        })
        .collect()
}

#[test]
fn the_header_declares_exactly_what_the_library_exports() {
    let text = header();
    let declared = declared_functions(&text);
    let declared_set: BTreeSet<_> = declared.iter().cloned().collect();
    assert_eq!(declared.len(), declared_set.len(), "a function is declared twice: {declared:?}");
    // Every name of the driver table is exported by the built library, and the library's
    // cuGetProcAddress_v2 hands out, for every base name at the table's version, the
    // address of the variant the table chooses.
    // SAFETY: the library built next to this test; loading it runs no initializer of note.
    let lib = unsafe { libloading::Library::new(library()) }.expect("the built library loads");
    type GetProc =
        unsafe extern "C" fn(*const std::ffi::c_char, *mut *mut std::ffi::c_void, i32, u64, *mut i32) -> CUresult;
    // SAFETY: the symbol has this C signature.
    let get_proc = unsafe { lib.get::<GetProc>(b"cuGetProcAddress_v2") }.expect("cuGetProcAddress_v2 is exported");
    let address = |symbol: &str| -> usize {
        // SAFETY: only the address is read, never called.
        let sym = unsafe { lib.get::<*const std::ffi::c_void>(symbol.as_bytes()) }
            .unwrap_or_else(|e| panic!("{symbol} is not exported: {e}"));
        *sym as usize
    };
    for v in cuda::table::variants() {
        assert_ne!(address(v.symbol), 0, "{}", v.symbol);
    }
    let bases: BTreeSet<&str> = cuda::table::variants().iter().map(|v| v.base).collect();
    for base in bases {
        for per_thread in [false, true] {
            let cuda::table::Lookup::Found(want) =
                cuda::table::resolve(base.as_bytes(), cuda::table::TABLE_VERSION, per_thread)
            else {
                panic!("{base} is not found at the table's version");
            };
            let name = std::ffi::CString::new(base).expect("no NUL");
            let (mut pfn, mut status) = (std::ptr::null_mut(), -1);
            let flags = if per_thread { 2 } else { 0 };
            // SAFETY: a NUL-terminated name and writable out-values.
            let rc = unsafe { get_proc(name.as_ptr(), &mut pfn, cuda::table::TABLE_VERSION, flags, &mut status) };
            assert_eq!((rc, status), (CUDA_SUCCESS, 0), "{base}");
            assert_eq!(pfn as usize, address(want.symbol), "{base} (per-thread {per_thread}) is not {}", want.symbol);
        }
    }
    let own = ["mempool_cuda_shim_last_error", "mempool_cuda_shim_version"];
    // The header declares exactly the implemented variants (a stub or a legacy variant is
    // exported, not declared).
    let implemented: BTreeSet<String> = exported_functions().into_iter().collect();
    assert!(own.iter().all(|o| implemented.contains(*o)));
    let missing: Vec<_> = implemented.difference(&declared_set).collect();
    let extra: Vec<_> = declared_set.difference(&implemented).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "implemented, not declared: {missing:?}; declared, not implemented: {extra:?}"
    );
    assert!(implemented.len() > 140, "{} implemented", implemented.len());
    let macros = name_macros(&text);
    assert_eq!(macros.len(), 27, "{macros:?}");
    for (name, target) in macros {
        assert!(target.starts_with(&format!("{name}_v")), "the macro {name} names {target}");
        assert!(declared_set.contains(&target), "{name} names {target}, which is not declared");
    }
}

/// Every constant the header defines, with its value on the Rust side.
fn constants() -> Vec<(&'static str, i64)> {
    vec![
        ("CUDA_SUCCESS", CUDA_SUCCESS.into()),
        ("CUDA_ERROR_INVALID_VALUE", CUDA_ERROR_INVALID_VALUE.into()),
        ("CUDA_ERROR_OUT_OF_MEMORY", CUDA_ERROR_OUT_OF_MEMORY.into()),
        ("CUDA_ERROR_NOT_INITIALIZED", CUDA_ERROR_NOT_INITIALIZED.into()),
        ("CUDA_ERROR_INVALID_DEVICE", CUDA_ERROR_INVALID_DEVICE.into()),
        ("CUDA_ERROR_INVALID_CONTEXT", CUDA_ERROR_INVALID_CONTEXT.into()),
        ("CUDA_ERROR_INVALID_HANDLE", CUDA_ERROR_INVALID_HANDLE.into()),
        ("CUDA_ERROR_NOT_READY", CUDA_ERROR_NOT_READY.into()),
        ("CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED.into()),
        ("CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED.into()),
        ("CU_MEMHOSTREGISTER_PORTABLE", CU_MEMHOSTREGISTER_PORTABLE.into()),
        ("CU_MEMHOSTREGISTER_DEVICEMAP", CU_MEMHOSTREGISTER_DEVICEMAP.into()),
        ("CU_MEMHOSTREGISTER_IOMEMORY", CU_MEMHOSTREGISTER_IOMEMORY.into()),
        ("CU_MEMHOSTREGISTER_READ_ONLY", CU_MEMHOSTREGISTER_READ_ONLY.into()),
        ("CUDA_ERROR_NOT_SUPPORTED", CUDA_ERROR_NOT_SUPPORTED.into()),
        ("CUDA_ERROR_UNKNOWN", CUDA_ERROR_UNKNOWN.into()),
        ("CUDA_ERROR_NOT_FOUND", CUDA_ERROR_NOT_FOUND as i64),
        ("CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY", CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY as i64),
        ("CU_GET_PROC_ADDRESS_DEFAULT", CU_GET_PROC_ADDRESS_DEFAULT as i64),
        ("CU_GET_PROC_ADDRESS_LEGACY_STREAM", CU_GET_PROC_ADDRESS_LEGACY_STREAM as i64),
        ("CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM", CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM as i64),
        ("CU_GET_PROC_ADDRESS_SUCCESS", CU_GET_PROC_ADDRESS_SUCCESS as i64),
        ("CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND", CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND as i64),
        ("CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT", CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT as i64),
        ("CU_MEMORYTYPE_HOST", CU_MEMORYTYPE_HOST as i64),
        ("CU_MEMORYTYPE_DEVICE", CU_MEMORYTYPE_DEVICE as i64),
        ("CU_MEMORYTYPE_ARRAY", CU_MEMORYTYPE_ARRAY as i64),
        ("CU_MEMORYTYPE_UNIFIED", CU_MEMORYTYPE_UNIFIED as i64),
        ("CU_POINTER_ATTRIBUTE_CONTEXT", CU_POINTER_ATTRIBUTE_CONTEXT as i64),
        ("CU_POINTER_ATTRIBUTE_MEMORY_TYPE", CU_POINTER_ATTRIBUTE_MEMORY_TYPE as i64),
        ("CU_POINTER_ATTRIBUTE_DEVICE_POINTER", CU_POINTER_ATTRIBUTE_DEVICE_POINTER as i64),
        ("CU_POINTER_ATTRIBUTE_HOST_POINTER", CU_POINTER_ATTRIBUTE_HOST_POINTER as i64),
        ("CU_POINTER_ATTRIBUTE_P2P_TOKENS", CU_POINTER_ATTRIBUTE_P2P_TOKENS as i64),
        ("CU_POINTER_ATTRIBUTE_SYNC_MEMOPS", CU_POINTER_ATTRIBUTE_SYNC_MEMOPS as i64),
        ("CU_POINTER_ATTRIBUTE_BUFFER_ID", CU_POINTER_ATTRIBUTE_BUFFER_ID as i64),
        ("CU_POINTER_ATTRIBUTE_IS_MANAGED", CU_POINTER_ATTRIBUTE_IS_MANAGED as i64),
        ("CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL", CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL as i64),
        ("CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE", CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE as i64),
        ("CU_POINTER_ATTRIBUTE_RANGE_START_ADDR", CU_POINTER_ATTRIBUTE_RANGE_START_ADDR as i64),
        ("CU_POINTER_ATTRIBUTE_RANGE_SIZE", CU_POINTER_ATTRIBUTE_RANGE_SIZE as i64),
        ("CU_POINTER_ATTRIBUTE_MAPPED", CU_POINTER_ATTRIBUTE_MAPPED as i64),
        ("CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES", CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES as i64),
        ("CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE", CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE as i64),
        ("CU_POINTER_ATTRIBUTE_ACCESS_FLAGS", CU_POINTER_ATTRIBUTE_ACCESS_FLAGS as i64),
        ("CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE", CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE as i64),
        ("CU_POINTER_ATTRIBUTE_MAPPING_SIZE", CU_POINTER_ATTRIBUTE_MAPPING_SIZE as i64),
        ("CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR", CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR as i64),
        ("CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID", CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID as i64),
        ("CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE", CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE as i64),
        ("CU_POINTER_ATTRIBUTE_LOCALITY_DOMAIN_ORDINAL", CU_POINTER_ATTRIBUTE_LOCALITY_DOMAIN_ORDINAL as i64),
        ("CU_STREAM_CAPTURE_STATUS_NONE", CU_STREAM_CAPTURE_STATUS_NONE as i64),
        ("CU_STREAM_CAPTURE_STATUS_ACTIVE", CU_STREAM_CAPTURE_STATUS_ACTIVE as i64),
        ("CU_STREAM_CAPTURE_STATUS_INVALIDATED", CU_STREAM_CAPTURE_STATUS_INVALIDATED as i64),
        ("CU_DEVICE_ATTRIBUTE_WARP_SIZE", CU_DEVICE_ATTRIBUTE_WARP_SIZE.into()),
        ("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT.into()),
        ("CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY", CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY.into()),
        ("CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING", CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING.into()),
        ("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR.into()),
        ("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR.into()),
        ("CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY", CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY.into()),
        ("CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS", CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS.into()),
        ("CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED", CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED.into()),
        (
            "CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES",
            CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES.into(),
        ),
        ("CU_STREAM_DEFAULT", CU_STREAM_DEFAULT.into()),
        ("CU_STREAM_NON_BLOCKING", CU_STREAM_NON_BLOCKING.into()),
        ("CU_EVENT_DEFAULT", CU_EVENT_DEFAULT.into()),
        ("CU_EVENT_BLOCKING_SYNC", CU_EVENT_BLOCKING_SYNC.into()),
        ("CU_EVENT_DISABLE_TIMING", CU_EVENT_DISABLE_TIMING.into()),
        ("CU_EVENT_INTERPROCESS", CU_EVENT_INTERPROCESS.into()),
        ("CU_MEM_ALLOCATION_TYPE_INVALID", 0),
        ("CU_MEM_ALLOCATION_TYPE_PINNED", CU_MEM_ALLOCATION_TYPE_PINNED.into()),
        ("CU_MEM_HANDLE_TYPE_NONE", CU_MEM_HANDLE_TYPE_NONE.into()),
        ("CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR", CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR.into()),
        ("CU_MEM_LOCATION_TYPE_INVALID", 0),
        ("CU_MEM_LOCATION_TYPE_DEVICE", CU_MEM_LOCATION_TYPE_DEVICE.into()),
        ("CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES", CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES.into()),
        ("CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC", CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC.into()),
        ("CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES", CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES.into()),
        ("CU_MEMPOOL_ATTR_RELEASE_THRESHOLD", CU_MEMPOOL_ATTR_RELEASE_THRESHOLD.into()),
        ("CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT", CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT.into()),
        ("CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH", CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH.into()),
        ("CU_MEMPOOL_ATTR_USED_MEM_CURRENT", CU_MEMPOOL_ATTR_USED_MEM_CURRENT.into()),
        ("CU_MEMPOOL_ATTR_USED_MEM_HIGH", CU_MEMPOOL_ATTR_USED_MEM_HIGH.into()),
        ("CUDA_VERSION", cuda::exports::DRIVER_VERSION.into()),
        ("CU_MEM_ALLOC_GRANULARITY_MINIMUM", CU_MEM_ALLOC_GRANULARITY_MINIMUM.into()),
        ("CU_MEM_ALLOC_GRANULARITY_RECOMMENDED", CU_MEM_ALLOC_GRANULARITY_RECOMMENDED.into()),
        ("CU_MEM_ACCESS_FLAGS_PROT_NONE", CU_MEM_ACCESS_FLAGS_PROT_NONE.into()),
        ("CU_MEM_ACCESS_FLAGS_PROT_READ", CU_MEM_ACCESS_FLAGS_PROT_READ.into()),
        ("CU_MEM_ACCESS_FLAGS_PROT_READWRITE", CU_MEM_ACCESS_FLAGS_PROT_READWRITE.into()),
    ]
}

/// The stream handle macros the header defines (`#define CU_... ((CUstream)0x...)`), with
/// their value on the Rust side: checked when the C program runs (a pointer cast is no
/// constant expression for `_Static_assert`).
fn stream_handles() -> Vec<(&'static str, usize)> {
    vec![("CU_STREAM_LEGACY", CU_STREAM_LEGACY as usize), ("CU_STREAM_PER_THREAD", CU_STREAM_PER_THREAD as usize)]
}

/// The constants the header defines (`NAME = value,` lines, `#define CUDA_VERSION` and the
/// `#define CU_...` handle macros).
fn defined_constants(text: &str) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = text
        .lines()
        .map(str::trim)
        .filter_map(|l| l.split_once(" = ").map(|(name, _)| name))
        .filter(|n| n.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        .map(str::to_string)
        .collect();
    if text.contains("#define CUDA_VERSION ") {
        out.insert("CUDA_VERSION".to_string());
    }
    out.extend(
        text.lines()
            .filter_map(|l| l.strip_prefix("#define CU_"))
            .filter_map(|rest| rest.split_whitespace().next().map(|n| format!("CU_{n}"))),
    );
    out
}

#[test]
fn every_constant_the_header_defines_is_checked() {
    let defined = defined_constants(&header());
    let checked: BTreeSet<String> = constants()
        .into_iter()
        .map(|(n, _)| n)
        .chain(stream_handles().into_iter().map(|(n, _)| n))
        .map(str::to_string)
        .collect();
    assert_eq!(defined, checked);
}

/// Static assertions of every constant and of the props layout, and a table with the
/// address of every declared function (C and C++ alike).
fn checks() -> String {
    let mut s = String::from("#include <cuda.h>\n#include <stddef.h>\n\n");
    let sa = |s: &mut String, cond: String| {
        let _ = writeln!(s, "MEMPOOL_CUDA_STATIC_ASSERT({cond}, \"{}\");", cond.replace('"', "'"));
    };
    for (name, value) in constants() {
        sa(&mut s, format!("(long long)({name}) == {value}LL"));
    }
    type P = CUmemPoolProps;
    for (field, offset) in [
        ("allocType", offset_of!(P, allocType)),
        ("handleTypes", offset_of!(P, handleTypes)),
        ("location", offset_of!(P, location)),
        ("location.id", offset_of!(P, location) + offset_of!(CUmemLocation, id)),
        ("win32SecurityAttributes", offset_of!(P, win32SecurityAttributes)),
        ("maxSize", offset_of!(P, maxSize)),
        ("usage", offset_of!(P, usage)),
        ("reserved", offset_of!(P, reserved)),
    ] {
        sa(&mut s, format!("offsetof(CUmemPoolProps, {field}) == {offset}"));
    }
    sa(&mut s, format!("sizeof(CUmemPoolProps) == {}", size_of::<P>()));
    type A = CUmemAllocationProp;
    type F = CUmemAllocationProp_allocFlags;
    let flags = offset_of!(A, allocFlags);
    for (field, offset) in [
        ("type", offset_of!(A, type_)),
        ("requestedHandleTypes", offset_of!(A, requestedHandleTypes)),
        ("location", offset_of!(A, location)),
        ("location.id", offset_of!(A, location) + offset_of!(CUmemLocation, id)),
        ("win32HandleMetaData", offset_of!(A, win32HandleMetaData)),
        ("allocFlags", flags),
        ("allocFlags.compressionType", flags + offset_of!(F, compressionType)),
        ("allocFlags.gpuDirectRDMACapable", flags + offset_of!(F, gpuDirectRDMACapable)),
        ("allocFlags.usage", flags + offset_of!(F, usage)),
        ("allocFlags.reserved", flags + offset_of!(F, reserved)),
    ] {
        sa(&mut s, format!("offsetof(CUmemAllocationProp, {field}) == {offset}"));
    }
    sa(&mut s, format!("sizeof(CUmemAllocationProp) == {}", size_of::<A>()));
    sa(&mut s, format!("offsetof(CUmemAccessDesc, flags) == {}", offset_of!(CUmemAccessDesc, flags)));
    sa(&mut s, format!("sizeof(CUmemAccessDesc) == {}", size_of::<CUmemAccessDesc>()));
    sa(&mut s, format!("sizeof(CUmemGenericAllocationHandle) == {}", size_of::<CUmemGenericAllocationHandle>()));
    sa(&mut s, "sizeof(CUmemAccess_flags) == sizeof(int)".to_string());
    sa(&mut s, "sizeof(CUmemAllocationGranularity_flags) == sizeof(int)".to_string());
    sa(&mut s, format!("sizeof(((CUmemPoolProps *)0)->reserved) == {}", size_of::<[u8; 54]>()));
    sa(&mut s, "sizeof(CUresult) == sizeof(int)".to_string());
    sa(&mut s, "sizeof(CUmemPool_attribute) == sizeof(int)".to_string());
    sa(&mut s, "sizeof(CUdevice_attribute) == sizeof(int)".to_string());
    s.push_str("\n/* The stream handle macros (pointer casts, checked at run time). */\n");
    s.push_str("int mempool_stream_handles_ok(void) {\n    return 1");
    for (name, value) in stream_handles() {
        let _ = write!(s, "\n        && (size_t)({name}) == {value}u");
    }
    s.push_str(";\n}\n");
    s.push_str("\nvoid *const every_function[] = {\n");
    for f in declared_functions(&header()) {
        let _ = writeln!(s, "    (void *)&{f},");
    }
    s.push_str("};\n");
    s
}

fn compiler(var: &str, default: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| default.to_string())
}

fn compile(compiler: &str, std: &str, src: &Path, out: &Path, link: Option<&Path>) {
    let mut cmd = Command::new(compiler);
    cmd.arg(std).args(["-Wall", "-Wextra", "-Werror", "-I", &format!("{CRATE}/include")]).arg(src);
    match link {
        // By its path, with a run path to its folder: the program loads this library
        // whatever `LD_LIBRARY_PATH` or the loader cache holds.
        Some(lib) => {
            let dir = lib.parent().expect("the library has a folder");
            cmd.arg("-o").arg(out).arg(lib).arg(format!("-Wl,-rpath,{}", dir.display()));
        }
        None => {
            cmd.arg("-c").arg("-o").arg(out);
        }
    }
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("the compiler `{compiler}` could not run (it is required, not optional): {e}"));
    assert!(
        output.status.success(),
        "{compiler} {} failed:\n{}",
        src.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cuda-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp folder");
    dir
}

#[test]
fn the_header_compiles_as_c11_and_cpp17_and_links_every_function() {
    let lib = library();
    let dir = scratch("checks");
    let c = dir.join("checks.c");
    let main = "int main(void) { return every_function[0] == NULL || !mempool_stream_handles_ok(); }";
    std::fs::write(&c, format!("{}\n{main}\n", checks())).expect("write the C program");
    let exe = dir.join("checks");
    compile(&compiler("CC", "cc"), "-std=c11", &c, &exe, Some(&lib));
    let out = Command::new(&exe).output().expect("the C program runs");
    assert!(out.status.success(), "the C program failed: {}", out.status);
    let cpp = dir.join("checks.cpp");
    std::fs::write(&cpp, checks()).expect("write the C++ program");
    compile(&compiler("CXX", "c++"), "-std=c++17", &cpp, &dir.join("checks_cpp.o"), None);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_program_in_the_driver_apis_style_runs_on_the_library() {
    let lib = library();
    let dir = scratch("pool");
    let exe = dir.join("pool");
    compile(&compiler("CC", "cc"), "-std=c11", &Path::new(CRATE).join("tests/c/pool.c"), &exe, Some(&lib));
    let mut run = Command::new(&exe);
    for var in cuda::ENV_ALL {
        run.env_remove(var);
    }
    let out = run.env(cuda::ENV_DEVICE_MEMORY, "1G").output().expect("the C program runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the C program failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.trim_end(),
        format!(
            "cuda pool: 1 device(s), driver 13050, 1048576 bytes round-tripped, host function ran 1 time(s), on \
             mempool-emu-{}",
            env!("CARGO_PKG_VERSION")
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

//! `include/mempool_alloc.h` declares exactly the library's exports, each defined with
//! `#[unsafe(no_mangle)]` in `src/exports/`, and both headers compile as C11, C++17 and
//! (the C header) C++11.

use mempool_alloc::exports::EXPORTS;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The names of the functions the header declares: `name(` after a return type, at the
/// start of a declaration line.
fn declared(header: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in header.lines() {
        let t = line.trim_start();
        if t.starts_with("typedef") || t.starts_with('#') || t.starts_with('*') || t.starts_with("/*") {
            continue;
        }
        let Some(open) = t.find('(') else { continue };
        let head = &t[..open];
        if !(head.starts_with("void") || head.starts_with("int") || head.starts_with("const char")) {
            continue;
        }
        let name: String = head.rsplit([' ', '*']).next().unwrap_or("").to_string();
        if name.starts_with("mempool_") {
            out.insert(name);
        }
    }
    out
}

#[test]
fn the_header_declares_exactly_the_exports() {
    let header = std::fs::read_to_string(root().join("include/mempool_alloc.h")).unwrap();
    let want: BTreeSet<String> = EXPORTS.iter().map(|s| s.to_string()).collect();
    assert_eq!(declared(&header), want);
    let mut defined = BTreeSet::new();
    for entry in std::fs::read_dir(root().join("src/exports")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let mut marked = false;
        for line in text.lines() {
            if line.trim() == "#[unsafe(no_mangle)]" {
                marked = true;
            } else if marked {
                let name = line.split("fn ").nth(1).and_then(|r| r.split('(').next()).unwrap_or("");
                defined.insert(name.to_string());
                marked = false;
            }
        }
    }
    assert_eq!(defined, want, "the #[unsafe(no_mangle)] functions of src/exports");
}

/// A compiler by name; the README lists a C and a C++ compiler among what the tests need.
fn compiler(name: &str) -> String {
    let ok = Command::new(name).arg("--version").output().is_ok_and(|o| o.status.success());
    assert!(ok, "`{name}` does not run: the tests need a C and a C++ compiler (see the README)");
    name.to_string()
}

fn syntax_check(cc: &str, lang: &str, std: &str, file: &Path) {
    let include = root().join("include");
    let out = Command::new(cc)
        .args(["-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-x", lang, &format!("-std={std}")])
        .arg(format!("-I{}", include.display()))
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{cc} -std={std} {}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
}

#[test]
fn the_headers_compile() {
    let (cc, cxx) = (compiler("cc"), compiler("c++"));
    let dir = std::env::temp_dir().join(format!("mempool-alloc-header-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c = dir.join("use.c");
    std::fs::write(
        &c,
        "#include <mempool_alloc.h>\n\
         static void seen(int d, size_t n, const mempool_alloc_stats *s, void *u) { (void)d; (void)n; (void)s; (void)u; }\n\
         int main(void) {\n\
           void *(*a)(size_t, int, void *) = mempool_alloc;\n\
           void (*f)(void *, size_t, int, void *) = mempool_free;\n\
           mempool_alloc_stats s;\n\
           s.version = MEMPOOL_ALLOC_STATS_VERSION; s.size = sizeof s;\n\
           (void)a; (void)f; return mempool_stats(0, &s) + mempool_on_oom(seen, 0);\n\
         }\n",
    )
    .unwrap();
    let cpp = dir.join("use.cpp");
    std::fs::write(
        &cpp,
        "#include <mempool_alloc.hpp>\n\
         MEMPOOL_ALLOC_THROWING_EXPORTS(my_alloc, my_free)\n\
         int main() {\n\
           try { mempool_alloc_cpp::deallocate(mempool_alloc_cpp::allocate(1, 0, nullptr), 1, 0, nullptr); }\n\
           catch (const std::bad_alloc &e) { return e.what() == nullptr; }\n\
           return 0;\n\
         }\n",
    )
    .unwrap();
    syntax_check(&cc, "c", "c11", &c);
    syntax_check(&cxx, "c++", "c++11", &c);
    syntax_check(&cxx, "c++", "c++17", &cpp);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The recipes of `docs/frameworks.md` (PyTorch, torch_npu, MindSpore) name only the
/// library's exports.
#[test]
fn the_framework_recipes_name_the_exports() {
    let page = std::fs::read_to_string(root().join("../../docs/frameworks.md")).unwrap();
    let start = page.find("## Frameworks: the pluggable allocator").expect("the page's allocator section");
    let section = &page[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let mut named = BTreeSet::new();
    for block in section.split("```python").skip(1) {
        let code = block.split("```").next().unwrap();
        for quoted in code.split('"').skip(1).step_by(2) {
            if quoted.starts_with("mempool_") {
                named.insert(quoted.to_string());
            }
        }
    }
    for recipe in ["CUDAPluggableAllocator", "NPUPluggableAllocator", "PluggableAllocator(\"/opt"] {
        assert!(section.contains(recipe), "docs/frameworks.md has the {recipe} recipe");
    }
    assert!(named.len() >= 7, "the recipes name the exports they install: {named:?}");
    for name in &named {
        assert!(EXPORTS.contains(&name.as_str()), "docs/frameworks.md names {name}, which the library does not export");
    }
}

/// The built `libmempool_alloc.so`, beside this test's binary (`target/<profile>/deps/`,
/// where cargo builds the crate's cdylib for its own tests).
fn built_library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let lib = exe.parent().unwrap().join("libmempool_alloc.so");
    assert!(lib.is_file(), "{} is built with the crate", lib.display());
    lib
}

/// The C++ wrapper at run time: `allocate` throws `mempool_alloc_cpp::bad_alloc` (a
/// `std::bad_alloc`) with the library's reason, and the throwing exports the macro defines
/// work through C linkage, linked against the built library on the emulator.
#[test]
fn the_cpp_wrapper_throws_bad_alloc_with_the_reason() {
    let cxx = compiler("c++");
    let lib = built_library();
    let dir = std::env::temp_dir().join(format!("mempool-alloc-cpp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("throws.cpp");
    std::fs::write(
        &src,
        "#include <mempool_alloc.hpp>\n\
         #include <cstdio>\n\
         #include <cstring>\n\
         MEMPOOL_ALLOC_THROWING_EXPORTS(my_alloc, my_free)\n\
         int main() {\n\
           void *p = my_alloc(1024, 0, nullptr);\n\
           my_free(p, 1024, 0, nullptr);\n\
           try { mempool_alloc_cpp::allocate(std::size_t(1) << 62, 0, nullptr); }\n\
           catch (const std::bad_alloc &e) {\n\
             std::printf(\"caught: %s\\n\", e.what());\n\
             return std::strstr(e.what(), \"out of memory\") ? 0 : 2;\n\
           }\n\
           return 1;\n\
         }\n",
    )
    .unwrap();
    let exe = dir.join("throws");
    let out = Command::new(&cxx)
        .args(["-std=c++17", "-Wall", "-Werror"])
        .arg(format!("-I{}", root().join("include").display()))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", lib.parent().unwrap().display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run = Command::new(&exe)
        .env("MEMPOOL_ALLOC_BACKEND", "emulator")
        .env("MEMPOOL_EMU_DEVICE_MEMORY", "1G")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "exit {:?}: {stdout}{}", run.status, String::from_utf8_lossy(&run.stderr));
    assert!(stdout.starts_with("caught: mempool_alloc: out of memory on device 0"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

//! Test helpers: build tiny programs with the system compiler so tests check real linker
//! output rather than hand-made ELF files.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A fresh directory under the system temp dir, unique per process and call.
pub(super) fn temp_dir(tag: &str) -> PathBuf {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("scry-symtest-{}-{n}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

/// A compiled test program; its directory is removed when this is dropped.
pub(super) struct TempExe {
    path: PathBuf,
    dir: PathBuf,
}

impl std::ops::Deref for TempExe {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for TempExe {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl TempExe {
    /// The directory holding the program (and anything a test puts beside it).
    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Runs a tool (objcopy, strip, ...) and panics with its output when it fails.
pub(super) fn run_tool(tool: &str, args: &[&std::ffi::OsStr]) {
    let out = Command::new(tool)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running {tool}: {e}"));
    assert!(
        out.status.success(),
        "{tool} {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Drop for TempExe {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Compiles `source` (C, or C++ when `cxx`) with `flags` into an executable. Panics with the
/// compiler's output on failure.
pub(super) fn compile(tag: &str, source: &str, cxx: bool, flags: &[&str]) -> TempExe {
    let dir = temp_dir(tag);
    let src = dir.join(if cxx { "prog.cc" } else { "prog.c" });
    std::fs::write(&src, source).expect("write source");
    let exe = dir.join("prog");
    let compiler = if cxx { "c++" } else { "cc" };
    let out = Command::new(compiler)
        .args(flags)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("running {compiler}: {e}"));
    assert!(
        out.status.success(),
        "{compiler} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    TempExe { path: exe, dir }
}

/// The address `nm` reports for `name`, if `nm` lists it.
pub(super) fn nm_address(exe: &Path, name: &str) -> Option<u64> {
    let out = Command::new("nm").arg(exe).output().ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|line| {
            let mut it = line.split_whitespace();
            let (addr, _kind, sym) = (it.next()?, it.next()?, it.next()?);
            (sym == name)
                .then(|| u64::from_str_radix(addr, 16).ok())
                .flatten()
        })
}

pub(super) const C_PROGRAM: &str = r#"
#include <stdio.h>

int counter = 42;
static int hidden_total;
__thread int tls_value = 7;

static int helper(int x) { return x * 3 + counter; }

int add(int a, int b) {
    hidden_total += a;
    return a + b + helper(b);
}

int main(int argc, char **argv) {
    (void)argv;
    printf("%d\n", add(argc, 2));
    return 0;
}
"#;

pub(super) const CXX_PROGRAM: &str = r#"
namespace ns {
struct Foo {
    int bar(int x);
    int bar(double x);
};
int Foo::bar(int x) { return x + 1; }
int Foo::bar(double x) { return (int)x + 2; }
}

int main() {
    ns::Foo f;
    return f.bar(1) + f.bar(2.0);
}
"#;

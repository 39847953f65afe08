//! Source lines and inlined-function chains from DWARF, through addr2line: which source
//! positions an address is, and which addresses a source line is. Link-time addresses.

use std::panic::AssertUnwindSafe;

use super::info::DwarfInfo;
use crate::symbols::addr::FileAddr;

/// Inlined calls reported per address at most.
const MAX_INLINE_DEPTH: usize = 64;

/// One source position of an address. A single machine address can be several positions at
/// once when calls were inlined into it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location {
    pub file: Option<String>,
    pub line: Option<u32>,
    /// Demangled.
    pub function: Option<String>,
    /// True for a function inlined into the next location's function.
    pub inlined: bool,
}

impl DwarfInfo {
    /// Source positions of a link-time address, innermost inlined call first and the
    /// function that physically contains the address last. Empty where DWARF says nothing.
    pub fn locations(&self, addr: FileAddr) -> Vec<Location> {
        // A parser bug on hostile DWARF costs this answer, not the debugger.
        std::panic::catch_unwind(AssertUnwindSafe(|| self.locations_inner(addr.0)))
            .unwrap_or_default()
    }

    /// The source position of a link-time address from the line table alone: the innermost
    /// position (the line table records where inlined code came from), without the function
    /// or its inlined callers. Parses no function: what a stop line needs.
    pub fn line_at(&self, addr: FileAddr) -> Option<Location> {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            if let Some(row) = self.stmt_line(addr.0) {
                return Some(Location {
                    file: Some(row.file),
                    line: Some(row.line),
                    function: None,
                    inlined: false,
                });
            }
            let ctx = self.context()?;
            let loc = ctx.find_location(addr.0).ok()??;
            Some(Location {
                file: loc.file.map(str::to_string),
                line: loc.line,
                function: None,
                inlined: false,
            })
        }))
        .ok()
        .flatten()
    }

    /// Whether the line-table row at `addr` is a statement boundary (`is_stmt`): a stepper
    /// stops only at those, as gdb's does. True where the tables do not say.
    pub fn is_statement(&self, addr: FileAddr) -> bool {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            self.stmt_line(addr.0).is_none_or(|row| row.stmt)
        }))
        .unwrap_or(true)
    }

    /// Whether `addr` is in code the line table says is "line 0" (made up by the compiler:
    /// rustc's drops and jumps between a loop's parts), which a line stepper passes as gdb's
    /// does. False where the tables do not say.
    pub fn in_line_zero(&self, addr: FileAddr) -> bool {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            self.stmt.in_line_zero(self.unit_spans(), addr.0)
        }))
        .unwrap_or(false)
    }

    /// Whether any line-table row, statement or not, begins exactly at `addr`: where gdb's
    /// stepper, back in a caller, takes the line it is in. False where the tables do not say.
    pub fn starts_row(&self, addr: FileAddr) -> bool {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            self.stmt_line(addr.0).is_some_and(|row| row.starts)
        }))
        .unwrap_or(false)
    }

    /// The addresses of the line-table row holding `addr`, from its start to where the next
    /// row begins: the range gdb's line stepper runs through before it looks where it is.
    pub fn row_span(&self, addr: FileAddr) -> Option<(u64, u64)> {
        std::panic::catch_unwind(AssertUnwindSafe(|| self.stmt_line(addr.0).map(|r| r.span)))
            .ok()
            .flatten()
    }

    /// Whether a line begins at `addr` as gdb sees lines: a row begins there and the row
    /// that ends there, if any, is of another line (gdb merges a run of rows of one line
    /// into one range; glibc's `poll` has three of line 29 in its first 24 bytes). False
    /// where the tables do not say.
    pub fn starts_line(&self, addr: FileAddr) -> bool {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            let Some(row) = self.stmt_line(addr.0).filter(|r| r.starts) else {
                return false;
            };
            let before = addr.0.checked_sub(1).and_then(|a| self.stmt_line(a));
            !before.is_some_and(|b| b.span.1 == addr.0 && b.line == row.line && b.file == row.file)
        }))
        .unwrap_or(false)
    }

    fn locations_inner(&self, addr: u64) -> Vec<Location> {
        // A unit nesting too deep for the function parser still has its line table.
        let Some(ctx) = self.context_at(addr) else {
            return self.line_at(FileAddr(addr)).into_iter().collect();
        };
        let Ok(mut frames) = ctx.find_frames(addr).skip_all_loads() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        while out.len() < MAX_INLINE_DEPTH {
            let Ok(Some(frame)) = frames.next() else {
                break;
            };
            let function = frame
                .function
                .as_ref()
                .and_then(|f| f.demangle().ok())
                .map(|name| name.into_owned());
            let (file, line) = frame
                .location
                .as_ref()
                .map_or((None, None), |l| (l.file.map(str::to_string), l.line));
            out.push(Location {
                file,
                line,
                function,
                inlined: true,
            });
        }
        if let Some(last) = out.last_mut() {
            last.inlined = false;
        }
        // The innermost position is the line table's: the statement row gdb reports.
        if let (Some(first), Some(row)) = (out.first_mut(), self.stmt_line(addr)) {
            first.file = Some(row.file);
            first.line = Some(row.line);
        }
        out
    }
}

impl DwarfInfo {
    /// Link-time addresses where `line` of a file whose path ends with `file` begins: the
    /// first address of each run of statement rows on that line (of any rows when none is a
    /// statement), at most `MAX_LINE_SITES`, ascending. gdb places `file:line` breakpoints
    /// the same way, so a stop there sees what the line's code begins with.
    pub fn line_addresses(&self, file: &str, line: u32) -> Vec<FileAddr> {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            let matches = |path: &str| path_ends_with(path, file);
            let mut out: Vec<FileAddr> = self
                .stmt
                .line_addresses(&matches, line)
                .into_iter()
                .map(FileAddr)
                .collect();
            out.truncate(MAX_LINE_SITES);
            out
        }))
        .unwrap_or_default()
    }
}

impl DwarfInfo {
    /// Whether any unit's line table names a file whose path ends with `file`.
    pub fn has_source_file(&self, file: &str) -> bool {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            self.stmt
                .names_file(&|path: &str| path_ends_with(path, file))
        }))
        .unwrap_or(false)
    }
}

/// At most this many code locations for one source line.
const MAX_LINE_SITES: usize = 64;

/// `/src/app/main.c` ends with `main.c` and `app/main.c`, not with `ain.c`.
fn path_ends_with(path: &str, suffix: &str) -> bool {
    path == suffix
        || path
            .strip_suffix(suffix)
            .is_some_and(|head| head.ends_with('/'))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::symbols::elf::ElfImage;
    use crate::symbols::testutil::compile;

    const PROGRAM: &str = r#"#include <stdio.h>

volatile int sink;

static inline __attribute__((always_inline)) void twice(int x) {
    sink = x * 2;
}

int main(int argc, char **argv) {
    (void)argv;
    twice(argc);
    printf("%d\n", sink);
    return 0;
}
"#;

    fn line_of(text: &str) -> u32 {
        PROGRAM.lines().position(|l| l.contains(text)).unwrap() as u32 + 1
    }

    fn dwarf_of(exe: &Path) -> DwarfInfo {
        let img = ElfImage::load(exe).unwrap();
        DwarfInfo::from_elf(img.shared_bytes()).expect("DWARF in a -g build")
    }

    #[test]
    fn main_line_and_inlined_call() {
        // Unoptimized, the first instruction of main belongs to the line main is written on.
        let exe = compile("lines-O0", PROGRAM, false, &["-g", "-O0"]);
        let img = ElfImage::load(&exe).unwrap();
        let dwarf = dwarf_of(&exe);
        let main = img.symbols.lookup_name("main").unwrap();
        let locs = dwarf.locations(main.addr);
        assert_eq!(locs.len(), 1, "{locs:?}");
        let last = &locs[0];
        assert_eq!(last.function.as_deref(), Some("main"));
        assert!(
            last.file.as_deref().unwrap().ends_with("prog.c"),
            "{locs:?}"
        );
        assert_eq!(last.line, Some(line_of("int main(")));
        assert!(!last.inlined);

        let exe = compile("lines-O2", PROGRAM, false, &["-g", "-O2"]);
        let img = ElfImage::load(&exe).unwrap();
        let dwarf = dwarf_of(&exe);
        let main = img.symbols.lookup_name("main").unwrap();
        let last = dwarf
            .locations(main.addr)
            .pop()
            .expect("a location for main");
        assert_eq!(last.function.as_deref(), Some("main"));

        // Somewhere in main, the store of the inlined `twice` is attributed to it.
        let twice_line = line_of("sink = x * 2;");
        let call_line = line_of("twice(argc);");
        let found = (0..main.size).find_map(|off| {
            let locs = dwarf.locations(FileAddr(main.addr.0 + off));
            (locs.len() == 2 && locs[0].function.as_deref() == Some("twice")).then_some(locs)
        });
        let locs = found.expect("an address inside the inlined twice()");
        assert!(locs[0].inlined && !locs[1].inlined, "{locs:?}");
        assert_eq!(locs[0].line, Some(twice_line));
        assert_eq!(locs[1].function.as_deref(), Some("main"));
        assert_eq!(locs[1].line, Some(call_line), "the call site, in main");
        assert!(locs[1].file.as_deref().unwrap().ends_with("prog.c"));
    }

    #[test]
    fn no_debug_info_means_no_lines() {
        let exe = compile("nolines", PROGRAM, false, &["-O2", "-no-pie", "-fno-pie"]);
        let img = ElfImage::load(&exe).unwrap();
        assert!(DwarfInfo::from_elf(img.shared_bytes()).is_none());
    }

    #[test]
    fn line_addresses_match_the_line_table() {
        let exe = compile("lines-addr", PROGRAM, false, &["-g", "-O0"]);
        let dwarf = dwarf_of(&exe);
        let line = line_of("printf(");
        let addrs = dwarf.line_addresses("prog.c", line);
        assert_eq!(addrs.len(), 1, "{addrs:?}");
        let loc = dwarf.locations(addrs[0]).pop().unwrap();
        assert_eq!(loc.line, Some(line));
        assert!(
            dwarf.line_addresses("rog.c", line).is_empty(),
            "whole names only"
        );
        assert!(dwarf.line_addresses("prog.c", 9999).is_empty());
    }

    #[test]
    fn path_suffixes_match_whole_components() {
        assert!(path_ends_with("/src/app/main.c", "main.c"));
        assert!(path_ends_with("/src/app/main.c", "app/main.c"));
        assert!(path_ends_with("main.c", "main.c"));
        assert!(!path_ends_with("/src/app/main.c", "ain.c"));
    }
}

//! Source positions across the modules of the store, in runtime addresses.

use super::SymbolStore;
use crate::symbols::addr::{FileAddr, RuntimeAddr};
use crate::symbols::dwarf::Location;

impl SymbolStore {
    /// Where `file:line` begins, in the executable first, then the libraries: the lowest
    /// address of the first module that has the line (past the prologue when the line
    /// begins a function: see `line_breakpoint_sites`). `None` if no line table has it.
    pub fn line_address(&self, file: &str, line: u32) -> Option<RuntimeAddr> {
        self.line_breakpoint_sites(file, line, 1).first().copied()
    }

    /// Where a `file:line` breakpoint goes, as gdb places one: in the first module that has
    /// the line, the lowest address of each function or inlined call that holds code of the
    /// line (an inlined helper's line is a site in every copy), ascending, at most `max`. The
    /// first is `line_address`.
    pub fn line_breakpoint_sites(&self, file: &str, line: u32, max: usize) -> Vec<RuntimeAddr> {
        let Some(m) = self
            .modules()
            .iter()
            .find(|m| !m.file.line_addresses(file, line).is_empty())
        else {
            return Vec::new();
        };
        let mut addrs = m.file.line_addresses(file, line);
        addrs.sort_unstable();
        addrs.dedup();
        let mut seen: Vec<usize> = Vec::new();
        let mut out = Vec::new();
        for a in addrs {
            if out.len() >= max {
                break;
            }
            // Rows of one scope (a loop's line at its top and its bottom) are one site.
            if let Some(scope) = m.file.dwarf().and_then(|d| d.innermost_scope_at(a)) {
                if seen.contains(&scope) {
                    continue;
                }
                seen.push(scope);
            }
            // A line that begins a function (a one-line lambda, `int f() {`): after the
            // prologue, where the arguments are in place, as gdb places it, when the body
            // still belongs to the line.
            let body = m.file.body_start(a);
            let line_of = |x| m.file.dwarf().and_then(|d| d.line_at(x)).map(|l| l.line);
            let same_line = body != a && line_of(body) == line_of(a);
            out.push(m.bias.to_runtime(if same_line { body } else { a }));
        }
        out
    }

    /// Whether some module's line tables name a file whose path ends with `file`.
    pub fn has_source_file(&self, file: &str) -> bool {
        self.modules()
            .iter()
            .any(|m| m.file.dwarf().is_some_and(|d| d.has_source_file(file)))
    }

    /// Every address where `file:line` begins, in every module, ascending.
    pub fn line_sites(&self, file: &str, line: u32) -> Vec<RuntimeAddr> {
        let mut out: Vec<RuntimeAddr> = self
            .modules()
            .iter()
            .flat_map(|m| {
                m.file
                    .line_addresses(file, line)
                    .into_iter()
                    .map(|a| m.bias.to_runtime(a))
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The innermost source position of a runtime address, from the line table alone (no
    /// function is parsed; see `DwarfInfo::line_at`): what a stop line shows.
    pub fn line_at(&self, addr: RuntimeAddr) -> Option<Location> {
        let module = self.module_at(addr).or_else(|| self.unloaded_at(addr))?;
        module.file.dwarf()?.line_at(module.bias.to_file(addr))
    }

    /// Whether the line-table row covering a runtime address is a statement boundary; true
    /// where no line table says otherwise.
    pub fn is_statement(&self, addr: RuntimeAddr) -> bool {
        let Some(module) = self.module_at(addr) else {
            return true;
        };
        module
            .file
            .dwarf()
            .is_none_or(|d| d.is_statement(module.bias.to_file(addr)))
    }

    /// Whether a runtime address is in code the line table calls "line 0" (see
    /// `DwarfInfo::in_line_zero`).
    pub fn in_line_zero(&self, addr: RuntimeAddr) -> bool {
        self.module_at(addr).is_some_and(|module| {
            module
                .file
                .dwarf()
                .is_some_and(|d| d.in_line_zero(module.bias.to_file(addr)))
        })
    }

    /// The runtime addresses of the line-table row holding `addr` (see
    /// `DwarfInfo::row_span`).
    pub fn row_span(&self, addr: RuntimeAddr) -> Option<(u64, u64)> {
        let module = self.module_at(addr)?;
        let (start, end) = module.file.dwarf()?.row_span(module.bias.to_file(addr))?;
        let at = |a: u64| module.bias.to_runtime(FileAddr(a)).0;
        Some((at(start), at(end)))
    }

    /// Whether any line-table row begins exactly at a runtime address (see
    /// `DwarfInfo::starts_row`).
    pub fn starts_row(&self, addr: RuntimeAddr) -> bool {
        self.module_at(addr).is_some_and(|module| {
            module
                .file
                .dwarf()
                .is_some_and(|d| d.starts_row(module.bias.to_file(addr)))
        })
    }

    /// Whether a line begins at `addr`, rows of one line merged (see `DwarfInfo::starts_line`).
    pub fn starts_line(&self, addr: RuntimeAddr) -> bool {
        self.module_at(addr).is_some_and(|module| {
            module
                .file
                .dwarf()
                .is_some_and(|d| d.starts_line(module.bias.to_file(addr)))
        })
    }

    /// Source positions of a runtime address: innermost inlined frame first, then its callers
    /// within the same physical frame, last the real function. Without DWARF, the ELF symbol
    /// covering the address gives one location with only `function` set; with neither, the
    /// list is empty. A function DWARF leaves unnamed is filled in from the ELF symbol too.
    pub fn locations(&self, addr: RuntimeAddr) -> Vec<Location> {
        let Some(module) = self.module_at(addr) else {
            return Vec::new();
        };
        let mut out = module.file.locations(module.bias.to_file(addr));
        let symbol = || {
            self.symbol_at(addr)
                .map(|(_, s, _)| s.display_name().into_owned())
        };
        match out.last_mut() {
            Some(last) if last.function.is_none() => last.function = symbol(),
            Some(_) => {}
            None => {
                if let Some(name) = symbol() {
                    out.push(Location {
                        function: Some(name),
                        ..Location::default()
                    });
                }
            }
        }
        out
    }

    /// Where the outermost of the `hidden` innermost calls inlined at `addr` ends (see
    /// `DwarfInfo::inlined_call_end`).
    pub fn inlined_call_end(&self, addr: RuntimeAddr, hidden: usize) -> Option<RuntimeAddr> {
        let module = self.module_at(addr)?;
        let end = module
            .file
            .dwarf()?
            .inlined_call_end(module.bias.to_file(addr), hidden)?;
        Some(module.bias.to_runtime(FileAddr(end)))
    }

    /// How many innermost calls inlined at `addr` begin exactly there (see
    /// `DwarfInfo::inlined_entries_at`).
    pub fn inlined_entries_at(&self, addr: RuntimeAddr, named: &str) -> usize {
        let Some(module) = self.module_at(addr) else {
            return 0;
        };
        module.file.dwarf().map_or(0, |d| {
            d.inlined_entries_at(module.bias.to_file(addr), named)
        })
    }

    /// Where a function that has no code of its own runs: the entries of its inlined copies
    /// in the first module (executable first) whose DWARF has any, ascending, at most `max`.
    /// The entries of the copies of `name` inlined in the unit of its out-of-line code at
    /// `func` (see `DwarfInfo::inlined_copies_near`).
    pub fn inlined_sites_near(
        &self,
        func: RuntimeAddr,
        name: &str,
        max: usize,
    ) -> Vec<RuntimeAddr> {
        let Some(m) = self.module_at(func) else {
            return Vec::new();
        };
        let Some(dwarf) = m.file.dwarf() else {
            return Vec::new();
        };
        dwarf
            .inlined_copies_near(m.bias.to_file(func), name, max)
            .into_iter()
            .map(|a| m.bias.to_runtime(a))
            .collect()
    }

    pub fn inlined_function_sites(&self, name: &str, max: usize) -> Vec<RuntimeAddr> {
        self.modules()
            .iter()
            .find_map(|m| {
                let copies = m.file.dwarf()?.inlined_copies(name, max);
                (!copies.is_empty())
                    .then(|| copies.into_iter().map(|a| m.bias.to_runtime(a)).collect())
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::symbols::elf::ElfImage;
    use crate::symbols::testutil::compile;

    const PROGRAM: &str = "int main(void) { return 0; }\n";

    #[test]
    fn without_debug_info_symbols_still_name_functions() {
        let exe = compile("nolines", PROGRAM, false, &["-O2", "-no-pie", "-fno-pie"]);
        let img = ElfImage::load(&exe).unwrap();
        let main = img.symbols.lookup_name("main").unwrap().addr;

        let maps = crate::maps::parse_maps(&format!(
            "00400000-00500000 r-xp 00000000 08:01 5 {}\n",
            exe.display()
        ));
        let mut store = SymbolStore::new();
        store.refresh(&maps, Some(&*exe), &|m| {
            PathBuf::from(m.file_path().unwrap_or_default())
        });
        assert!(!store.modules()[0].file.has_dwarf());
        let locs = store.locations(RuntimeAddr(main.0 + 1));
        assert_eq!(
            locs,
            vec![Location {
                function: Some("main".into()),
                ..Location::default()
            }]
        );
        assert!(store.locations(RuntimeAddr(0x10)).is_empty());
        assert_eq!(store.line_address("prog.c", 1), None);
    }
}

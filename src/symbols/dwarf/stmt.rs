//! Line-table rows as gdb reads them. addr2line keeps one row per address (the last), which
//! loses what `-O2` line tables say with several rows at one address: a function's first
//! bytes are lines 17, 18, 19, 20 (statements) and 17 again (not a statement), and a loop's
//! `sink = i;` begins at an address that is also lines 14 and 14. A debugger reports the
//! last *statement* row at an address and puts a `file:line` breakpoint on statement rows,
//! so its stops land where the line's code begins, not where its scheduling left a stray
//! instruction. Rows are read per unit with `is_stmt`, once, when a lookup first needs them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use gimli::Reader as _;

use super::reader::DwarfReader as Reader;
use super::units::UnitSpans;

/// Rows of one unit's line program kept at most (hostile tables end here).
const MAX_ROWS: usize = 4_000_000;

#[derive(Clone, Copy, Debug)]
struct Row {
    addr: u64,
    line: u32,
    file: u32,
    stmt: bool,
    /// The first address past a sequence: no line here.
    end: bool,
}

/// One unit's rows, sequences in address order, rows within a sequence in program order.
struct UnitRows {
    rows: Vec<Row>,
    files: Arc<Vec<String>>,
    /// Address ranges of rows that say "line 0" (code the compiler made up), ascending: they
    /// are dropped from `rows` (the line before covers them) but a line stepper passes them.
    zero: Vec<(u64, u64)>,
}

/// A row's position as a debugger reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct StmtLine {
    pub file: String,
    pub line: u32,
    /// False when no row at this address is a statement boundary (a stepper goes on
    /// through such rows).
    pub stmt: bool,
    /// Whether the row begins exactly at the address asked about (not in the middle of it).
    pub starts: bool,
    /// The row's addresses: from its start to where the next row begins.
    pub span: (u64, u64),
}

pub(crate) struct StmtLines {
    dwarf: Arc<gimli::Dwarf<Reader>>,
    units: Mutex<HashMap<usize, Arc<UnitRows>>>,
    /// Each unit's file names, from its line program's header alone: a `file:line` lookup
    /// reads the rows of only the units that name the file (a large program's line tables
    /// took half a second to read whole, for a breakpoint in one file).
    files: Mutex<HashMap<usize, Arc<Vec<String>>>>,
}

impl StmtLines {
    pub(super) fn new(dwarf: Arc<gimli::Dwarf<Reader>>) -> StmtLines {
        StmtLines {
            dwarf,
            units: Mutex::new(HashMap::new()),
            files: Mutex::new(HashMap::new()),
        }
    }

    /// The position of link-time address `pc`: the last statement row at the address of
    /// the row covering `pc`, else that address's last row.
    pub(super) fn line_at(&self, spans: &UnitSpans, pc: u64) -> Option<StmtLine> {
        for unit in spans.units_at(pc) {
            let Some(rows) = self.rows(unit) else {
                continue;
            };
            if let Some(found) = rows.line_at(pc) {
                return Some(found);
            }
        }
        None
    }

    /// Whether link-time address `pc` is in a row that says "line 0".
    pub(super) fn in_line_zero(&self, spans: &UnitSpans, pc: u64) -> bool {
        spans.units_at(pc).into_iter().any(|unit| {
            self.rows(unit).is_some_and(|rows| {
                let after = rows.zero.partition_point(|&(start, _)| start <= pc);
                after.checked_sub(1).is_some_and(|i| pc < rows.zero[i].1)
            })
        })
    }

    /// Addresses where `line` of a file `matches` begins: each statement row on the line
    /// whose statement row before (in its sequence) is on another line. Rows that are no
    /// statement do not count, as in gdb: a line that has only such rows has no code of its
    /// own. A unit that marks no row a statement at all (some assemblers) counts every row.
    pub(super) fn line_addresses(&self, matches: &dyn Fn(&str) -> bool, line: u32) -> Vec<u64> {
        let mut out = Vec::new();
        let mut units = self.dwarf.units();
        while let Ok(Some(header)) = units.next() {
            let Some(offset) = header.debug_info_offset() else {
                continue;
            };
            let Some(files) = self.files(offset.0) else {
                continue;
            };
            let wanted: Vec<bool> = files.iter().map(|f| matches(f)).collect();
            if !wanted.contains(&true) {
                continue;
            }
            let Some(rows) = self.rows(offset.0) else {
                continue;
            };
            let every_row = !rows.rows.iter().any(|r| r.stmt);
            let on =
                |r: &Row| r.line == line && wanted.get(r.file as usize).copied().unwrap_or(false);
            let mut prev_on = false;
            for r in &rows.rows {
                if r.end {
                    prev_on = false;
                    continue;
                }
                if !(r.stmt || every_row) {
                    continue;
                }
                let here = on(r);
                if here && !prev_on {
                    out.push(r.addr);
                }
                prev_on = here;
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether some unit's line table names a file `matches` accepts.
    pub(super) fn names_file(&self, matches: &dyn Fn(&str) -> bool) -> bool {
        let mut units = self.dwarf.units();
        while let Ok(Some(header)) = units.next() {
            let Some(offset) = header.debug_info_offset() else {
                continue;
            };
            if self
                .files(offset.0)
                .is_some_and(|files| files.iter().any(|f| matches(f)))
            {
                return true;
            }
        }
        false
    }

    fn files(&self, unit: usize) -> Option<Arc<Vec<String>>> {
        if let Some(f) = self
            .files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&unit)
        {
            return Some(f.clone());
        }
        let header = self
            .dwarf
            .debug_info
            .header_from_offset(gimli::DebugInfoOffset(unit))
            .ok()?;
        let u = self.dwarf.unit(header).ok()?;
        let program = u.line_program.as_ref()?;
        let files = Arc::new(file_names(&self.dwarf, &u, program.header()));
        self.files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(unit, files.clone());
        Some(files)
    }

    fn rows(&self, unit: usize) -> Option<Arc<UnitRows>> {
        if let Some(r) = self.lock().get(&unit) {
            return Some(r.clone());
        }
        let built = Arc::new(read_rows(&self.dwarf, unit)?);
        self.lock().insert(unit, built.clone());
        Some(built)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<usize, Arc<UnitRows>>> {
        self.units.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl UnitRows {
    fn line_at(&self, pc: u64) -> Option<StmtLine> {
        let after = self.rows.partition_point(|r| r.addr <= pc);
        let last = after.checked_sub(1)?;
        let row = self.rows[last];
        if row.end {
            return None;
        }
        // gdb's rule: a row that is no statement gives way to a statement row at the same
        // address before it.
        let mut best = row;
        if !row.stmt {
            for r in self.rows[..last].iter().rev() {
                if r.addr != row.addr || r.end {
                    break;
                }
                if r.stmt {
                    best = *r;
                    break;
                }
            }
        }
        if best.line == 0 {
            return None;
        }
        Some(StmtLine {
            file: self.files.get(best.file as usize).cloned()?,
            line: best.line,
            stmt: best.stmt,
            starts: best.addr == pc,
            span: (
                row.addr,
                self.rows.get(after).map_or(pc + 1, |next| next.addr),
            ),
        })
    }
}

fn read_rows(dwarf: &gimli::Dwarf<Reader>, unit_offset: usize) -> Option<UnitRows> {
    let header = dwarf
        .debug_info
        .header_from_offset(gimli::DebugInfoOffset(unit_offset))
        .ok()?;
    let unit = dwarf.unit(header).ok()?;
    let program = unit.line_program.clone()?;
    let files = Arc::new(file_names(dwarf, &unit, program.header()));
    let mut sequences: Vec<Vec<Row>> = Vec::new();
    let mut current = Vec::new();
    let mut total = 0;
    let mut zero: Vec<(u64, u64)> = Vec::new();
    let mut zero_open: Option<u64> = None;
    let mut rows = program.rows();
    while let Ok(Some((_, row))) = rows.next_row() {
        total += 1;
        if total > MAX_ROWS {
            break;
        }
        let r = Row {
            addr: row.address(),
            line: row
                .line()
                .map_or(0, |l| u32::try_from(l.get()).unwrap_or(0)),
            file: u32::try_from(row.file_index()).unwrap_or(u32::MAX),
            stmt: row.is_stmt(),
            end: row.end_sequence(),
        };
        // Line 0 is "no source line" (code the compiler made up: rustc puts it at most
        // return addresses). gdb drops such rows, so the line before them goes on covering
        // their addresses: a return address reads as the line of its call.
        // A line-0 row runs to the next row's address.
        if let Some(open) = zero_open.take() {
            if r.addr > open {
                zero.push((open, r.addr));
            }
        }
        if r.line == 0 && !r.end {
            zero_open = Some(r.addr);
            continue;
        }
        current.push(r);
        if r.end {
            // A sequence that starts past its end, or at address 0 or a tombstone near 2^64
            // (a function the linker discarded: GNU ld leaves its rows at 0, lld at -1 or
            // -2, and no code of an ELF file is at 0, where its header is) is no code:
            // rustc's 16 codegen units leave many such copies, whose rows put line
            // breakpoints into the ELF header.
            let real = |a: u64| a != 0 && a < u64::MAX - 0xff;
            if current
                .first()
                .is_some_and(|f| f.addr < r.addr && real(f.addr))
            {
                sequences.push(std::mem::take(&mut current));
            } else {
                current.clear();
            }
        }
    }
    sequences.sort_by_key(|s| s.first().map_or(0, |r| r.addr));
    zero.sort_unstable();
    Some(UnitRows {
        rows: sequences.into_iter().flatten().collect(),
        files,
        zero,
    })
}

/// File names by index as addr2line renders them (the unit's directory, the file's
/// directory, the name; an absolute part replaces what came before).
pub(super) fn file_names(
    dwarf: &gimli::Dwarf<Reader>,
    unit: &gimli::Unit<Reader>,
    header: &gimli::LineProgramHeader<Reader>,
) -> Vec<String> {
    let text = |v: gimli::AttributeValue<Reader>| -> Option<String> {
        let s = dwarf.attr_string(unit, v).ok()?;
        Some(s.to_string_lossy().ok()?.into_owned())
    };
    let comp_dir = unit
        .comp_dir
        .as_ref()
        .and_then(|d| d.to_string_lossy().ok().map(|s| s.into_owned()))
        .unwrap_or_default();
    let count = header.file_names().len() as u64;
    // DWARF 5 numbers files from 0; earlier versions from 1 (index 0 is then unused).
    let first = if header.version() >= 5 { 0 } else { 1 };
    let mut out = vec![String::new(); (count + first) as usize];
    for index in first..count + first {
        let Some(file) = header.file(index) else {
            continue;
        };
        let mut path = comp_dir.clone();
        if file.directory_index() != 0 {
            if let Some(dir) = file.directory(header).and_then(text) {
                push(&mut path, &dir);
            }
        }
        if let Some(name) = text(file.path_name()) {
            push(&mut path, &name);
        }
        out[index as usize] = path;
    }
    out
}

fn push(path: &mut String, part: &str) {
    if part.starts_with('/') || path.is_empty() {
        *path = part.to_string();
    } else {
        if !path.ends_with('/') {
            path.push('/');
        }
        path.push_str(part);
    }
}

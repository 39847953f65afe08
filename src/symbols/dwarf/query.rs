//! Questions about one file's DWARF that start from a pc: the unit whose code holds it, the
//! scopes there, where a function's body begins. Link-time addresses.

use std::panic::AssertUnwindSafe;

use super::info::DwarfInfo;
use super::location::FrameAccess;
use super::reader::DwarfReader as Reader;
use super::render::Limits;
use super::scope::ScopeChain;
use super::target::Target;
use super::tree::UnitHandle;
use super::value::Value;
use crate::symbols::addr::FileAddr;

impl DwarfInfo {
    /// The unit whose code holds `pc` (a link-time address): of the units whose ranges hold
    /// it, the first with a function there (ranges of units can overlap where a linker
    /// kept one copy of a function several units define).
    pub(crate) fn unit_for_pc(&self, pc: u64) -> Option<UnitHandle> {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            let mut first = None;
            for start in self.unit_spans().units_at(pc) {
                let Some(unit) = self.tree.unit_starting_at(start) else {
                    continue;
                };
                if self.tree.function_at(&unit, pc).is_some() {
                    return Some(unit);
                }
                first.get_or_insert(unit);
            }
            first
        }))
        .ok()
        .flatten()
    }

    /// The function at `pc` and the calls inlined into it down to `pc`, with their variables.
    pub(crate) fn scopes_at(&self, pc: FileAddr) -> Option<ScopeChain> {
        let unit = self.unit_for_pc(pc.0)?;
        self.tree.scopes(&unit, pc.0)
    }

    /// Entry addresses of the inlined copies of a function called `name` (see
    /// `InfoTree::inlined_copies`).
    pub fn inlined_copies(&self, name: &str, max: usize) -> Vec<FileAddr> {
        std::panic::catch_unwind(AssertUnwindSafe(|| self.tree.inlined_copies(name, max)))
            .unwrap_or_default()
            .into_iter()
            .map(FileAddr)
            .collect()
    }

    /// Entry addresses of the copies of the function called `name` inlined in the unit
    /// of its out-of-line code at `func`: where a compiler inlines a function it also emits
    /// (LTO aside). One unit's walk, where the index of every unit's inlined functions would
    /// cost a pass over all of `.debug_info` for every breakpoint on a function.
    pub fn inlined_copies_near(&self, func: FileAddr, name: &str, max: usize) -> Vec<FileAddr> {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            let unit = self.unit_for_pc(func.0)?;
            let mut out = self.tree.inlined_copies_with_headers(&unit, name, max);
            // An LTO program keeps the copies inlined into other units under one abstract
            // instance: found by one pass over every unit (gdb's further locations).
            if let Some(origin) = self.tree.lto_origin(&unit, func.0) {
                out.extend(self.tree.inlined_copies_of_origin(origin, max));
                out.sort_unstable();
                out.dedup();
                out.truncate(max);
            }
            Some(out)
        }))
        .ok()
        .flatten()
        .unwrap_or_default()
        .into_iter()
        .map(FileAddr)
        .collect()
    }

    /// The DIE of the innermost function or inlined call whose code holds `pc`.
    pub(crate) fn innermost_scope_at(&self, pc: FileAddr) -> Option<usize> {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            self.scopes_at(pc)?.chain.last().map(|s| s.die)
        }))
        .ok()
        .flatten()
    }

    /// Where the outermost of the `hidden` innermost calls inlined at `pc` ends (its highest
    /// address): gdb's `next` from a stop that hides them steps no further than that before
    /// it looks where it is.
    pub(crate) fn inlined_call_end(&self, pc: FileAddr, hidden: usize) -> Option<u64> {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            let chain = self.scopes_at(pc)?;
            let at = chain.chain.len().checked_sub(hidden)?;
            let scope = chain.chain.get(at).filter(|s| s.inlined)?;
            self.tree.block_end(&chain.unit, scope.die)
        }))
        .ok()
        .flatten()
    }

    /// How many of the innermost calls inlined at `pc` begin exactly at `pc` (counted from
    /// the innermost, stopping at the first that does not): the calls a stop at `pc` has
    /// not entered yet, by gdb's rule for a breakpoint on the function they are inlined in.
    /// `named`: the function the breakpoint names; a call of it is not hidden (nor are the
    /// calls around it).
    pub(crate) fn inlined_entries_at(&self, pc: FileAddr, named: &str) -> usize {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            let Some(chain) = self.scopes_at(pc) else {
                return 0;
            };
            // The block before pc, for telling where a block's later range begins.
            let before = std::cell::OnceCell::new();
            let starts_here = |die: usize| {
                // gdb's entry of the block: its first range's start (GCC's DW_AT_entry_pc
                // may be later, after a first part the call begins with; gdb 13 reads none).
                if self.tree.first_range_start(&chain.unit, die) == Some(pc.0) {
                    return true;
                }
                // gdb's block_starting_point_at: a range of the block begins at pc and the
                // instruction before is not the block's (a call inlined in two parts, the
                // second reached by a jump): entering it there is entering the call.
                self.tree.range_begins_at(&chain.unit, die, pc.0)
                    && !before
                        .get_or_init(|| {
                            pc.0.checked_sub(1)
                                .and_then(|p| self.scopes_at(FileAddr(p)))
                        })
                        .as_ref()
                        .is_some_and(|b: &ScopeChain| b.chain.iter().any(|s| s.die == die))
            };
            chain
                .chain
                .iter()
                .rev()
                .take_while(|s| {
                    s.inlined
                        && !s.name.as_deref().is_some_and(|n| same_function(n, named))
                        && starts_here(s.die)
                })
                .count()
        }))
        .unwrap_or(0)
    }

    /// Where the body of the function that starts at `func` begins (after its prologue);
    /// `None` when DWARF does not describe a function starting there. `code` holds the
    /// function's first bytes.
    pub fn body_start(&self, func: FileAddr, code: &[u8]) -> Option<FileAddr> {
        let unit = self.unit_for_pc(func.0)?;
        let tree = &self.tree;
        let function = tree.function_at(&unit, func.0)?;
        let (low, _) = tree.function_range(&unit, function)?;
        if low != func.0 {
            return None;
        }
        std::panic::catch_unwind(AssertUnwindSafe(|| tree.body_start(&unit, function, code)))
            .ok()
            .flatten()
            .map(FileAddr)
    }

    /// The start of the function of a scope chain.
    pub(crate) fn function_start(&self, chain: &ScopeChain) -> Option<FileAddr> {
        self.tree
            .function_range(&chain.unit, chain.function)
            .map(|(lo, _)| FileAddr(lo))
    }
}

/// Whether a scope's name and a breakpoint's function name the same function, one of them
/// perhaps qualified (`geo::area`, `area`).
fn same_function(scope: &str, named: &str) -> bool {
    scope == named
        || scope.ends_with(&format!("::{named}"))
        || named.ends_with(&format!("::{scope}"))
}

/// A frame with nothing known but memory: what an offline reader (a test, a tool over a memory
/// image) can evaluate.
struct MemoryOnly<'a> {
    read: &'a dyn Fn(u64, &mut [u8]) -> bool,
}

impl FrameAccess for MemoryOnly<'_> {
    fn register(&self, _reg: u16) -> Option<Vec<u8>> {
        None
    }
    fn cfa(&self) -> Option<u64> {
        None
    }
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        (self.read)(addr, buf)
    }
    fn tls(&self, _offset: u64) -> Option<u64> {
        None
    }
    fn entry_value(&self, _expr: &gimli::Expression<Reader>, _unit: &UnitHandle) -> Option<u64> {
        None
    }
    fn bias(&self) -> u64 {
        0
    }
}

impl Target for MemoryOnly<'_> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        (self.read)(addr, buf)
    }
    fn symbolize(&self, _addr: u64) -> Option<String> {
        None
    }
    fn load_bias(&self) -> Option<u64> {
        Some(0)
    }
}

impl DwarfInfo {
    /// `name: type = value` for every variable of every scope at `pc`, and for the global
    /// `global`, with no register known and memory read through `read`: the whole value
    /// reader exercised offline (the mutation test runs it over broken files).
    pub fn describe(
        &self,
        pc: FileAddr,
        global: &str,
        read: &dyn Fn(u64, &mut [u8]) -> bool,
    ) -> Vec<String> {
        let frame = MemoryOnly { read };
        let limits = Limits::default();
        let tree = &self.tree;
        let line = |name: &str, v: &Value| {
            format!(
                "{name}: {} = {}",
                tree.type_name(v.ty),
                tree.render(v, &frame, &limits)
            )
        };
        let mut out = Vec::new();
        if let Some(chain) = self.scopes_at(pc) {
            for level in 0..chain.chain.len() {
                for v in tree.frame_vars(&chain, level, pc.0, &frame, false) {
                    out.push(line(&v.name, &v.value));
                }
            }
        }
        for die in tree.global_vars(global).into_iter().take(4) {
            let Some((unit, entry)) = tree.entry(die) else {
                continue;
            };
            let (_, ty) = tree.name_and_type(&unit, &entry);
            let size = tree.size_of(ty).unwrap_or(8);
            let place = tree.var_place(&unit, &entry, ty, size, 0, &frame, false, || None);
            out.push(line(
                global,
                &Value {
                    ty,
                    place,
                    bits: None,
                },
            ));
        }
        out
    }
}

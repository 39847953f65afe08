//! Names to addresses and back, across the modules of the store: address expressions
//! (`main+0x10`, `libc:puts`), symbol lookups with the dynamic linker's precedence, and
//! "did you mean" suggestions.

use std::sync::Arc;

use super::expr::{self, Base};
use super::{LoadedModule, SymbolStore};
use crate::symbols::addr::{FileAddr, RuntimeAddr};
use crate::symbols::elf::{fuzzy, SymKind, Symbol};
use crate::symbols::error::SymbolError;

/// How many "did you mean" names an unknown-symbol error carries.
const SUGGESTIONS: usize = 3;

impl SymbolStore {
    /// Modules whose name matches `prefix`, best match class only, in store order.
    fn modules_matching(&self, prefix: &str) -> Result<Vec<&LoadedModule>, SymbolError> {
        let best = self
            .modules
            .iter()
            .filter_map(|m| m.match_rank(prefix))
            .min();
        let Some(best) = best else {
            let names: Vec<&str> = self.modules.iter().map(|m| m.name.as_str()).collect();
            return Err(SymbolError::BadExpr(format!(
                "no loaded module matches '{prefix}' (loaded: {})",
                names.join(", ")
            )));
        };
        Ok(self
            .modules
            .iter()
            .filter(|m| m.match_rank(prefix) == Some(best))
            .collect())
    }

    /// Evaluates an address expression: `main`, `main+0x10`, `main+16`, `libc:puts`,
    /// `libc.so.6:puts`, `0x401136`, `4198710`, `libc.so.6:0x29d90` (file address).
    /// Names are searched in the executable first, then libraries in order.
    pub fn resolve(&self, text: &str) -> Result<RuntimeAddr, SymbolError> {
        match self.try_resolve(text)? {
            Some(addr) => Ok(addr),
            None => Err(self.unknown_in(text)),
        }
    }

    /// `resolve`, with `Ok(None)` for a name no module (or no module the expression names)
    /// has, where `resolve` works out suggestions: they compare the name with every symbol
    /// (for a large C++ program, demangling them all), which a caller with another way to
    /// find the name, or another try after a refresh, should not pay for each time.
    pub fn try_resolve(&self, text: &str) -> Result<Option<RuntimeAddr>, SymbolError> {
        let e = expr::parse(text)?;
        let base = match e.base {
            Base::Addr(a) => a,
            Base::ModuleAddr { module, addr } => {
                let m = self.modules_matching(module)?[0];
                m.bias.to_runtime(FileAddr(addr)).0
            }
            Base::Symbol { module, name } => {
                let scope = match module {
                    Some(prefix) => self.modules_matching(prefix)?,
                    None => self.modules.iter().collect(),
                };
                match find_in(&scope, name) {
                    Some((_, _, addr)) => addr.0,
                    // `libc.so.6+0x8e8d9`, as `symbolize` names an address no symbol covers.
                    None if module.is_none() => match self.module_named(name) {
                        // A function inlined everywhere named like a module (`hash` in the
                        // program ./hash) is the function: a breakpoint finds its copies
                        // (the module's base read as code was refused as data).
                        Some(_)
                            if e.offset == 0
                                && !self.inlined_function_sites(name, 1).is_empty() =>
                        {
                            return Ok(None)
                        }
                        Some(m) => m.bias.0,
                        None => return Ok(None),
                    },
                    None => return Ok(None),
                }
            }
        };
        let total = i128::from(base) + e.offset;
        u64::try_from(total)
            .map(|a| Some(RuntimeAddr(a)))
            .map_err(|_| {
                SymbolError::BadExpr(format!("'{}' is outside the address space", text.trim()))
            })
    }

    /// The error for an expression `try_resolve` found no symbol for, with suggestions.
    pub fn unknown_in(&self, text: &str) -> SymbolError {
        let e = match expr::parse(text) {
            Ok(e) => e,
            Err(e) => return e,
        };
        let Base::Symbol { module, name } = e.base else {
            return SymbolError::BadExpr(format!("'{}' names no symbol", text.trim()));
        };
        let scope = match module {
            Some(prefix) => match self.modules_matching(prefix) {
                Ok(scope) => scope,
                Err(e) => return e,
            },
            None => self.modules.iter().collect(),
        };
        self.unknown(&scope, name)
    }

    fn unknown(&self, scope: &[&LoadedModule], name: &str) -> SymbolError {
        let scored = scope
            .iter()
            .flat_map(|m| m.file.symbols().nearest_scored(name, SUGGESTIONS))
            .collect();
        let suggestions = fuzzy::best_k(scored, SUGGESTIONS)
            .into_iter()
            .map(|(_, n)| n)
            .collect();
        let thread_local = scope.iter().any(|m| {
            m.file
                .symbols()
                .lookup_name(name)
                .is_some_and(|s| s.kind == SymKind::Tls)
        });
        if thread_local {
            return SymbolError::BadExpr(format!(
                "'{name}' is thread-local: it has an address only per thread"
            ));
        }
        SymbolError::Unknown {
            name: name.to_string(),
            suggestions,
        }
    }

    /// The definition of `name` (raw, demangled, or demangled without parameters) and its
    /// runtime address. TLS symbols are excluded: see `tls_symbol`.
    pub fn lookup(&self, name: &str) -> Option<(&LoadedModule, &Symbol, RuntimeAddr)> {
        let scope: Vec<&LoadedModule> = self.modules.iter().collect();
        find_in(&scope, name)
    }

    /// A linker-level name (`_dl_debug_state`, `_r_debug`) by its raw spelling only, with the
    /// dynamic linker's precedence: for scry's own look-ups of ABI symbols, which no demangled
    /// name can mean. `resolve` would try the executable's demangled names first and, on a
    /// miss, work out suggestions: both demangle a large C++ program's whole table.
    ///
    /// The modules' own tables are searched before any separate debug file's: an ABI
    /// symbol is exported, and a stripped library met on the way (libc, before the loader
    /// that defines `_dl_debug_state`) would otherwise have its debug file found, read and
    /// sorted at every start (a tenth of the time to the first stop of a large program).
    pub fn lookup_raw(&self, name: &str) -> Option<RuntimeAddr> {
        let scope: Vec<&LoadedModule> = self.modules.iter().collect();
        find_with(&scope, |m| m.file.image.symbols.lookup_name_raw(name))
            .or_else(|| find_with(&scope, |m| m.file.symbols().lookup_name_raw(name)))
            .map(|(_, _, a)| a)
    }

    /// The symbol covering `addr` and the offset into it.
    pub fn symbol_at(&self, addr: RuntimeAddr) -> Option<(&LoadedModule, &Symbol, u64)> {
        let m = self.module_at(addr)?;
        let (s, off) = m.file.symbols().lookup_addr(m.bias.to_file(addr))?;
        Some((m, s, off))
    }

    /// `main+0x4` (`main` at offset 0), demangled, without a module prefix. An address no
    /// symbol covers is named by its module: `libc.so.6+0x8e8d9`, the offset from the
    /// module's load base (its link-time address, which `resolve` reads back); outside every
    /// module, by its mapping: `[heap]+0x40`, `[anon]+0x1000`. `None` only where nothing is
    /// mapped (as of the last refresh).
    pub fn symbolize(&self, addr: RuntimeAddr) -> Option<String> {
        match self.symbol_at(addr) {
            Some((m, s, off)) => Some(with_offset(&self.qualified_name(m, s), off)),
            None => self
                .module_offset(addr)
                .or_else(|| self.region_offset(addr)),
        }
    }

    /// `main+0x4` when a symbol covers `addr`; `None` otherwise (no module or mapping
    /// names): for pointers in values, where only a symbol says something a hex address
    /// does not.
    pub fn symbol_name(&self, addr: RuntimeAddr) -> Option<String> {
        let (m, s, off) = self.symbol_at(addr)?;
        Some(with_offset(&self.qualified_name(m, s), off))
    }

    /// A function's name as a user reads it, with its module (`libdisk.so!publish`) where
    /// another module has a function of the same (linker) name too: six plugins each with a
    /// static `publish` are six names, not one. `libdisk.so!publish` reads back in `resolve`.
    /// The dynamic linker's private copies of libc's functions (`memcpy`, `__lll_lock_wait`,
    /// `__restore_rt`) do not count: they would qualify libc's names in every other stop.
    fn qualified_name(&self, m: &LoadedModule, s: &Symbol) -> String {
        let name = s.display_name();
        let elsewhere = s.kind == SymKind::Func
            && self.modules.len() > 1
            && !is_dynamic_linker(m)
            && self.modules.iter().any(|o| {
                !std::ptr::eq(o, m)
                    && !is_dynamic_linker(o)
                    && o.file
                        .symbols()
                        .lookup_name_raw(&s.name)
                        .is_some_and(|t| t.kind == SymKind::Func)
            });
        if elsewhere {
            format!("{}!{name}", m.name)
        } else {
            name.into_owned()
        }
    }

    /// Like `symbolize`, for a caller's frame whose `pc` is a return address: the function
    /// is found by `lookup` (the call, one byte back, so a call ending a function is not
    /// attributed to the next one) and the offset is `pc`'s.
    pub fn symbolize_return(&self, pc: RuntimeAddr, lookup: RuntimeAddr) -> Option<String> {
        match self.symbol_at(lookup) {
            Some((m, s, _)) => {
                let start = m.bias.to_runtime(s.addr).0;
                Some(with_offset(
                    &self.qualified_name(m, s),
                    pc.0.wrapping_sub(start),
                ))
            }
            None if self.module_at(lookup).is_some() => self.module_offset(pc),
            None => self.region_offset(pc),
        }
    }

    /// `libc.so.6+0x8e8d9` for an address in a module.
    fn module_offset(&self, addr: RuntimeAddr) -> Option<String> {
        let m = self.module_at(addr)?;
        Some(format!("{}+{:#x}", m.name, m.bias.to_file(addr).0))
    }

    /// The module whose file name (or path) is exactly `name`.
    fn module_named(&self, name: &str) -> Option<&LoadedModule> {
        self.modules.iter().find(|m| m.match_rank(name) == Some(0))
    }

    /// Every addressable symbol with its runtime address, optionally only those whose raw or
    /// demangled name contains `filter`, and only in the modules `module` names (as in
    /// `libc:puts`: `libc` matches `libc.so.6`); an error when no module matches it.
    pub fn symbols<'a>(
        &'a self,
        filter: Option<&str>,
        module: Option<&str>,
    ) -> Result<impl Iterator<Item = (&'a LoadedModule, &'a Symbol, RuntimeAddr)> + 'a, SymbolError>
    {
        let scope = match module {
            Some(prefix) => self.modules_matching(prefix)?,
            None => self.modules.iter().collect(),
        };
        let filter: Option<Arc<str>> = filter.map(Arc::from);
        Ok(scope.into_iter().flat_map(move |m| {
            let filter = filter.clone();
            m.file
                .symbols()
                .iter()
                .filter(move |s| {
                    s.kind != SymKind::Tls && filter.as_deref().is_none_or(|f| s.matches(f))
                })
                .map(move |s| (m, s, m.bias.to_runtime(s.addr)))
        }))
    }

    /// A thread-local symbol by name; its `addr` is an offset in the module's TLS block.
    pub fn tls_symbol(&self, name: &str) -> Option<(&LoadedModule, &Symbol)> {
        self.modules.iter().find_map(|m| {
            let s = m
                .file
                .symbols()
                .lookup_name(name)
                .filter(|s| s.kind == SymKind::Tls)?;
            Some((m, s))
        })
    }
}

/// `ld-linux-x86-64.so.2`, musl's `ld-musl-x86_64.so.1`, by file name.
fn is_dynamic_linker(m: &LoadedModule) -> bool {
    m.name.starts_with("ld-linux") || m.name.starts_with("ld-musl") || m.name.starts_with("ld.so")
}

fn with_offset(name: &str, off: u64) -> String {
    if off == 0 {
        name.to_string()
    } else {
        format!("{name}+{off:#x}")
    }
}

/// The dynamic linker binds a name to the first module exporting it, so a global definition
/// anywhere beats a file-local one earlier in the list; failing that, the first local. Names
/// spelled out in full are tried in every module before any path-suffix shorthand, so `write`
/// finds libc's `write` rather than a unique `mycrate::io::write` in the executable.
fn find_in<'a>(
    scope: &[&'a LoadedModule],
    name: &str,
) -> Option<(&'a LoadedModule, &'a Symbol, RuntimeAddr)> {
    find_with(scope, |m| m.file.symbols().lookup_name_exact(name))
        .or_else(|| find_with(scope, |m| m.file.symbols().lookup_name(name)))
        .or_else(|| find_clone(scope, name))
}

/// A function the compiler kept only as specialised copies (`weigh.constprop.0.isra.0`,
/// `f.part.0`), named as the source names it, as gdb does from the copy's DWARF origin: the
/// copy at the lowest address in the first module that has one. A `.cold` split-off part
/// is never the function's entry.
fn find_clone<'a>(
    scope: &[&'a LoadedModule],
    name: &str,
) -> Option<(&'a LoadedModule, &'a Symbol, RuntimeAddr)> {
    if name.is_empty() || name.contains(['.', ' ', '(']) {
        return None;
    }
    scope.iter().find_map(|&m| {
        m.file
            .symbols()
            .iter()
            .filter(|s| s.kind == SymKind::Func && is_clone_of(&s.name, name))
            .min_by_key(|s| s.addr.0)
            .map(|s| (m, s, m.bias.to_runtime(s.addr)))
    })
}

impl SymbolStore {
    /// The entries of the specialised copies GCC made of the function at `func` named `name`
    /// (`PyTuple_New.part.0`, `.constprop.1`, `.isra.0`; never `.cold`), in its module,
    /// ascending: gdb's further locations of `break PyTuple_New`, since each copy's DWARF
    /// names the function it was made from.
    /// Every function a plain name (`price`, `gen::largest`, `lib:f`; no offset) names in
    /// the first module, in search order, that has any: where gdb's `break NAME` puts its
    /// locations (overloads, a generic's instances, `Widget::price` and `Gadget::price`).
    pub fn functions_named(&self, text: &str, limit: usize) -> Vec<RuntimeAddr> {
        let Ok(e) = expr::parse(text) else {
            return Vec::new();
        };
        let (Base::Symbol { module, name }, 0) = (e.base, e.offset) else {
            return Vec::new();
        };
        let scope = match module {
            Some(prefix) => match self.modules_matching(prefix) {
                Ok(scope) => scope,
                Err(_) => return Vec::new(),
            },
            None => self.modules.iter().collect(),
        };
        for m in scope {
            let found = m.file.symbols().functions_named(name, limit);
            if !found.is_empty() {
                return found.iter().map(|s| m.bias.to_runtime(s.addr)).collect();
            }
        }
        Vec::new()
    }

    pub fn clones_of(&self, func: RuntimeAddr, name: &str) -> Vec<RuntimeAddr> {
        let Some(m) = self.module_at(func) else {
            return Vec::new();
        };
        if name.is_empty() || name.contains(['.', ' ', '(']) {
            return Vec::new();
        }
        let mut out: Vec<RuntimeAddr> = m
            .file
            .symbols()
            .iter()
            .filter(|s| s.kind == SymKind::Func && is_clone_of(&s.name, name))
            .map(|s| m.bias.to_runtime(s.addr))
            .filter(|&a| a != func)
            .collect();
        out.sort_unstable_by_key(|a| a.0);
        out.dedup();
        out
    }
}

/// Whether `raw` is `name` followed only by GCC's clone suffixes (`.constprop.N`, `.isra.N`,
/// `.part.N`, `.lto_priv.N`, `.localalias`), each a word or a number.
fn is_clone_of(raw: &str, name: &str) -> bool {
    let Some(rest) = raw.strip_prefix(name).and_then(|r| r.strip_prefix('.')) else {
        return false;
    };
    let mut words = 0;
    for part in rest.split('.') {
        match part {
            "constprop" | "isra" | "part" | "lto_priv" | "localalias" => words += 1,
            p if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {}
            _ => return false,
        }
    }
    words > 0
}

fn find_with<'a>(
    scope: &[&'a LoadedModule],
    lookup: impl Fn(&'a LoadedModule) -> Option<&'a Symbol>,
) -> Option<(&'a LoadedModule, &'a Symbol, RuntimeAddr)> {
    let mut local = None;
    for &m in scope {
        let Some(s) = lookup(m) else { continue };
        if s.kind == SymKind::Tls {
            continue;
        }
        let hit = (m, s, m.bias.to_runtime(s.addr));
        if s.global {
            return Some(hit);
        }
        local.get_or_insert(hit);
    }
    local
}

#[cfg(test)]
mod clone_names {
    use super::is_clone_of;

    #[test]
    fn only_gcc_clone_suffixes_name_the_function() {
        assert!(is_clone_of("weigh.constprop.0.isra.0", "weigh"));
        assert!(is_clone_of("f.part.0", "f"));
        assert!(is_clone_of("f.isra.12", "f"));
        assert!(!is_clone_of("f.cold", "f"));
        assert!(!is_clone_of("f.part.0.cold", "f"));
        assert!(!is_clone_of("fx.part.0", "f"));
        assert!(!is_clone_of("f", "f"));
        assert!(!is_clone_of("f.0", "f"));
    }
}

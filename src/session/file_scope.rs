//! `'other.c'::counter`: a global or static of one source file, as gdb reads it, for when
//! two files define the same name.

use super::typed_value::TypedValue;
use super::*;
use crate::symbols::elf::{demangle, SymKind};

impl Session {
    /// The variable `name` defined in a unit compiling the source file `file` names (whole
    /// trailing path components: `other.c`, `src/other.c`), in any module.
    pub fn lookup_in_file(&mut self, file: &str, name: &str) -> Result<TypedValue> {
        let fs_base = self.thread_pointer();
        let ins = self.inspect(fs_base)?;
        let store = ins.store;
        for module in store.modules() {
            let Some(debug) = module.file.dwarf().map(|d| &d.tree) else {
                continue;
            };
            for die in debug.global_vars(name) {
                let Some(unit) = debug.unit_of(die) else {
                    continue;
                };
                if !debug.unit_compiles(&unit, file) {
                    continue;
                }
                if let Some(v) = ins.global_value(module, die) {
                    return Ok(v);
                }
            }
        }
        // `'file.c'::func::counter`: a static local of that file's function `func` (two
        // files may each have a static `func`).
        if let Some((func, var)) = name.rsplit_once("::") {
            for addr in functions_in_file(store, file, func) {
                if let Some(v) = ins.function_static_at(addr, var) {
                    return Ok(v);
                }
            }
        }
        let known = store
            .modules()
            .iter()
            .filter_map(|m| m.file.dwarf())
            .any(|d| d.tree.compiles_file(file));
        Err(SessionError::Invalid(if known {
            format!("no global or static '{name}' in '{file}'")
        } else {
            format!("no source file '{file}' in the program's debug info (DWARF, -g)")
        }))
    }
}

/// Where the functions named `func` (raw or demangled path) whose code a unit compiling `file`
/// holds begin. Only symbols whose raw names spell the path are demangled.
pub(super) fn functions_in_file(store: &SymbolStore, file: &str, func: &str) -> Vec<RuntimeAddr> {
    let needles = demangle::path_needles(func);
    let names = |raw: &str| {
        raw == func
            || needles.as_ref().is_some_and(|needles| {
                demangle::spells_path(raw, needles)
                    && demangle::demangle(raw)
                        .is_some_and(|d| demangle::strip_signature(&d) == func)
            })
    };
    let mut found = Vec::new();
    for module in store.modules() {
        let Some(dwarf) = module.file.dwarf() else {
            continue;
        };
        for sym in module.file.symbols().iter() {
            if sym.kind != SymKind::Func || !names(&sym.name) {
                continue;
            }
            let in_file = dwarf
                .unit_for_pc(sym.addr.0)
                .is_some_and(|unit| dwarf.tree.unit_compiles(&unit, file));
            if in_file {
                found.push(module.bias.to_runtime(sym.addr));
            }
        }
    }
    found
}

/// `'net.c'::publish`: the source file and the name after it, as gdb spells a function or
/// variable of one file, read by the path grammar values use. `None` for any other form.
pub(super) fn file_scoped(spec: &str) -> Option<(String, String)> {
    // Asked at every breakpoint hit (is its spec a function?): a spec that cannot be one
    // costs no parse.
    if !spec.trim_start().starts_with('\'') {
        return None;
    }
    match crate::symbols::dwarf::path::parse(spec) {
        Ok(crate::symbols::dwarf::path::Path::InFile { file, name }) => Some((file, name)),
        _ => None,
    }
}

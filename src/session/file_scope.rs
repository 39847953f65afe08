//! `'other.c'::counter`: a global or static of one source file, as gdb reads it, for when
//! two files define the same name.

use super::values::{global_value, TypedValue};
use super::*;

impl Session {
    /// The variable `name` defined in a unit compiling the source file `file` names (whole
    /// trailing path components: `other.c`, `src/other.c`), in any module.
    pub fn lookup_in_file(&mut self, file: &str, name: &str) -> Result<TypedValue> {
        let fs_base = self.regs().map(|r| r.fs_base).unwrap_or(0);
        let (inferior, store) = self.live_parts()?;
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
                if let Some(v) = global_value(inferior, store, module, die, fs_base) {
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

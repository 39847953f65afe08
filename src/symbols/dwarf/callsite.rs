//! Call-site information (`DW_TAG_call_site`, GNU's `DW_TAG_GNU_call_site`): what a caller
//! put in a parameter register at a call, as an expression over the caller's own frame, and
//! what it called. It recovers `DW_OP_entry_value(reg)`: a callee's argument whose register
//! was reused after entry.

use gimli::{AttributeValue, Expression, Operation, UnitOffset};

use super::tree::{Die, InfoTree, Reader, UnitHandle};

/// DIEs searched per function at most.
const MAX_DIES: usize = 200_000;

const DW_TAG_GNU_CALL_SITE: gimli::DwTag = gimli::DwTag(0x4109);
const DW_TAG_GNU_CALL_SITE_PARAMETER: gimli::DwTag = gimli::DwTag(0x410a);
const DW_AT_GNU_CALL_SITE_VALUE: gimli::DwAt = gimli::DwAt(0x2111);
const DW_AT_GNU_CALL_SITE_TARGET: gimli::DwAt = gimli::DwAt(0x2113);

/// Which argument of a call a caller's call site is asked about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Passed {
    /// The one passed in this DWARF register (`DW_OP_entry_value(DW_OP_regN)`).
    InRegister(u16),
    /// The one for this formal parameter DIE (`DW_OP_GNU_parameter_ref`).
    Parameter(usize),
}

/// What a call site says it called.
#[derive(Clone, Debug)]
pub(crate) enum Callee {
    /// The called function's DIE (a definition, or a declaration of one defined elsewhere).
    Function(usize),
    /// A call through a pointer: the expression giving the address it called, over the
    /// caller's frame (`DW_AT_call_target`).
    Computed(Expression<Reader>),
    /// A call through a pointer DWARF says nothing more about.
    Unknown,
}

impl InfoTree {
    /// The call site of function `function` (a DIE of `unit`) at `pc` (a link-time address):
    /// when `after`, the address after its call (`DW_AT_call_return_pc`, GNU's
    /// `DW_AT_low_pc`), else the call instruction itself (`DW_AT_call_pc`: how DWARF 5 may
    /// place a tail call, which has no return address).
    pub(crate) fn call_site_at(
        &self,
        unit: &UnitHandle,
        function: usize,
        pc: u64,
        after: bool,
    ) -> Option<usize> {
        find_below(unit, function, |entry, _| {
            let tag = entry.tag();
            if tag != gimli::DW_TAG_call_site && tag != DW_TAG_GNU_CALL_SITE {
                return None;
            }
            let at = if after {
                address(unit, entry, gimli::DW_AT_call_return_pc)
                    .or_else(|| address(unit, entry, gimli::DW_AT_low_pc))
            } else {
                address(unit, entry, gimli::DW_AT_call_pc)
            };
            (at == Some(pc)).then(|| unit.global(entry.offset()))
        })
    }

    /// What the call site `site` (a DIE of `unit`) called.
    pub(crate) fn call_site_callee(&self, unit: &UnitHandle, site: usize) -> Callee {
        let Some(entry) = unit.entry_at(site) else {
            return Callee::Unknown;
        };
        if let Some(die) = unit
            .reference(&entry, gimli::DW_AT_call_origin)
            .or_else(|| unit.reference(&entry, gimli::DW_AT_abstract_origin))
        {
            return Callee::Function(die);
        }
        let target = entry
            .attr_value(gimli::DW_AT_call_target)
            .or_else(|| entry.attr_value(DW_AT_GNU_CALL_SITE_TARGET));
        match target {
            Some(AttributeValue::Exprloc(e)) => Callee::Computed(e),
            _ => Callee::Unknown,
        }
    }

    /// The expression call site `site` (a DIE of `unit`) gives for the parameter `which`.
    pub(crate) fn call_site_param(
        &self,
        unit: &UnitHandle,
        site: usize,
        which: Passed,
    ) -> Option<Expression<Reader>> {
        find_below(unit, site, |entry, depth| {
            let tag = entry.tag();
            if depth != 1
                || (tag != gimli::DW_TAG_call_site_parameter
                    && tag != DW_TAG_GNU_CALL_SITE_PARAMETER)
            {
                return None;
            }
            let matches = match which {
                Passed::InRegister(reg) => match entry.attr_value(gimli::DW_AT_location) {
                    Some(AttributeValue::Exprloc(loc)) => single_register(&loc, unit) == Some(reg),
                    _ => false,
                },
                // DWARF 5 names the parameter; GCC's DWARF 4 extension, by abstract origin.
                Passed::Parameter(param) => {
                    unit.reference(entry, gimli::DW_AT_call_parameter)
                        .or_else(|| unit.reference(entry, gimli::DW_AT_abstract_origin))
                        == Some(param)
                }
            };
            if !matches {
                return None;
            }
            let value = entry
                .attr_value(gimli::DW_AT_call_value)
                .or_else(|| entry.attr_value(DW_AT_GNU_CALL_SITE_VALUE));
            match value {
                Some(AttributeValue::Exprloc(v)) => Some(v),
                _ => None,
            }
        })
    }
}

/// The first answer `f` gives for a DIE below `die` (a DIE of `unit`), in order, with its
/// depth below `die` (1 for a child); at most `MAX_DIES` DIEs are looked at.
fn find_below<T>(
    unit: &UnitHandle,
    die: usize,
    mut f: impl FnMut(&Die, isize) -> Option<T>,
) -> Option<T> {
    let off = UnitOffset(die.checked_sub(unit.start())?);
    let mut cursor = unit.unit.entries_at_offset(off).ok()?;
    let top = cursor.next_dfs().ok()??.depth();
    let mut seen = 0;
    while let Ok(Some(entry)) = cursor.next_dfs() {
        seen += 1;
        if entry.depth() <= top || seen > MAX_DIES {
            return None;
        }
        if let Some(found) = f(entry, entry.depth() - top) {
            return Some(found);
        }
    }
    None
}

fn address(unit: &UnitHandle, die: &Die, at: gimli::DwAt) -> Option<u64> {
    match die.attr_value(at)? {
        AttributeValue::Addr(a) => Some(a),
        v => unit.unit_ref().attr_address(v).ok().flatten(),
    }
}

/// The register an expression of exactly `DW_OP_regN` (or `DW_OP_regval_type`, how GCC
/// names an xmm register inside `DW_OP_entry_value`) names.
pub(crate) fn single_register(expr: &Expression<Reader>, unit: &UnitHandle) -> Option<u16> {
    let mut ops = expr.clone().operations(unit.encoding());
    let first = ops.next().ok()??;
    if !matches!(ops.next(), Ok(None)) {
        return None;
    }
    match first {
        Operation::Register { register } => Some(register.0),
        Operation::RegisterOffset {
            register,
            offset: 0,
            base_type,
        } if base_type.0 != 0 => Some(register.0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;
    use crate::symbols::dwarf::DwarfInfo;
    use crate::symbols::elf::ElfImage;
    use crate::symbols::testutil::{compile, nm_address};

    const PROGRAM: &str = r#"
volatile int sink;
__attribute__((noinline, noclone)) void leaf(int v) { sink = v; }
void (*volatile hook)(int) = leaf;
__attribute__((noinline, noclone)) void mid(int v) { leaf(v + 1); }
int main(int argc, char **argv) {
    (void)argv;
    mid(7);
    hook(argc);
    sink = 0;
    return 0;
}
"#;

    /// The address after each call or jump instruction of `function`, with its text, as
    /// objdump reads it (address + the instruction's byte count).
    fn after_calls(exe: &std::path::Path, function: &str) -> Vec<(u64, String)> {
        let out = Command::new("objdump").arg("-d").arg(exe).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let body = text.split(&format!("<{function}>:\n")).nth(1).unwrap();
        body.lines()
            .take_while(|l| !l.trim().is_empty())
            .filter_map(|l| {
                let mut cols = l.split('\t');
                let addr =
                    u64::from_str_radix(cols.next()?.trim().trim_end_matches(':'), 16).ok()?;
                let len = cols.next()?.split_whitespace().count() as u64;
                let insn = cols.next()?.to_string();
                (insn.starts_with("call") || insn.starts_with("jmp")).then_some((addr + len, insn))
            })
            .collect()
    }

    #[test]
    fn call_sites_name_what_they_called_and_what_they_passed() {
        let exe = compile("callsites", PROGRAM, false, &["-g", "-O2"]);
        let img = ElfImage::load(&exe).unwrap();
        let dwarf = DwarfInfo::from_elf(img.shared_bytes()).unwrap();
        let entry = |name: &str| nm_address(&exe, name).unwrap();
        let site_in = |function: &str, pc: u64, after: bool| {
            let unit = dwarf.unit_for_pc(entry(function)).unwrap();
            let f = dwarf.tree.function_at(&unit, entry(function)).unwrap();
            dwarf
                .tree
                .call_site_at(&unit, f, pc, after)
                .map(|s| (unit, s))
        };
        let none = |_: &str| None;
        let calls = after_calls(&exe, "main");
        let direct = calls.iter().find(|(_, i)| i.contains("<mid>")).unwrap().0;
        let indirect = calls
            .iter()
            .find(|(_, i)| i.contains("call") && i.contains('*'));
        let (unit, site) = site_in("main", direct, true).expect("the call to mid");
        let Callee::Function(die) = dwarf.tree.call_site_callee(&unit, site) else {
            panic!("mid by name");
        };
        assert_eq!(dwarf.function_entry(die, &none), Some(entry("mid")));
        // mid(7): rdi (DWARF 5) holds the constant.
        let value = dwarf
            .tree
            .call_site_param(&unit, site, Passed::InRegister(5))
            .expect("rdi's value");
        let op = value.operations(unit.encoding()).next().unwrap().unwrap();
        assert!(
            matches!(op, Operation::UnsignedConstant { value: 7 }),
            "{op:?}"
        );
        assert!(dwarf
            .tree
            .call_site_param(&unit, site, Passed::InRegister(4))
            .is_none());
        // A return address is not a call instruction's address.
        assert!(site_in("main", direct, false).is_none());
        if let Some((pc, _)) = indirect {
            let (unit, site) = site_in("main", *pc, true).expect("the call through hook");
            assert!(!matches!(
                dwarf.tree.call_site_callee(&unit, site),
                Callee::Function(_)
            ));
        }
        // mid's last instruction jumps to leaf: a tail call site, after the jump.
        let jump = after_calls(&exe, "mid")
            .into_iter()
            .find(|(_, i)| i.contains("jmp") && i.contains("<leaf>"))
            .expect("mid tail-calls leaf at -O2")
            .0;
        let (unit, site) = site_in("mid", jump, true).expect("the tail call");
        let Callee::Function(die) = dwarf.tree.call_site_callee(&unit, site) else {
            panic!("leaf by name");
        };
        assert_eq!(dwarf.function_entry(die, &none), Some(entry("leaf")));
    }
}

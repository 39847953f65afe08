//! `name@plt` symbols for the procedure linkage table, which no symbol table lists. Each PLT
//! entry jumps through a GOT slot (`jmp *disp(%rip)`); the dynamic relocation that fills that
//! slot names the function. Decoding the jump rather than assuming an entry order covers the
//! layouts linkers emit: lazy `.plt`, `.plt.sec` (IBT: `endbr64; bnd jmp`), and `.plt.got`
//! (functions whose GOT slot is a GLOB_DAT, e.g. with `-z now` or address-taken functions).

use std::collections::HashMap;

use object::elf::{self, SectionHeader64};
use object::read::elf::SectionHeader;
use object::Endianness;

use super::sections::Sections;
use super::symbol::{SymKind, Symbol};
use crate::symbols::addr::FileAddr;

const R_X86_64_GLOB_DAT: u64 = 6;
const R_X86_64_JUMP_SLOT: u64 = 7;
/// The slot gets what an IFUNC resolver (at the addend) returns: named after the resolver's
/// symbol, which is the function's own name (`memcpy`). objdump writes `*ABS*+0x9f550@plt`.
const R_X86_64_IRELATIVE: u64 = 37;
const ENDBR64: [u8; 4] = [0xf3, 0x0f, 0x1e, 0xfa];
/// PLT entries read per section at most; real tables have a few thousand.
const MAX_ENTRIES: usize = 1 << 20;

/// The synthesized symbols, one per PLT entry whose GOT slot a relocation names. `known` are
/// the file's own symbols, which name IFUNC resolvers.
pub(super) fn entries(
    endian: Endianness,
    data: &[u8],
    sections: &Sections<'_>,
    known: &[Symbol],
) -> Vec<Symbol> {
    let plts: Vec<&SectionHeader64<Endianness>> = [&b".plt"[..], b".plt.sec", b".plt.got"]
        .iter()
        .filter_map(|name| sections.section_by_name(endian, name).map(|(_, s)| s))
        .filter(|s| s.sh_type(endian) == elf::SHT_PROGBITS)
        .collect();
    if plts.is_empty() {
        return Vec::new();
    }
    let slots = got_slot_names(endian, data, sections, known);
    let mut out = Vec::new();
    for sh in plts {
        let Ok(bytes) = sh.data(endian, data) else {
            continue;
        };
        let entsize = match sh.sh_entsize(endian) {
            8 => 8,
            _ => 16,
        };
        let base = sh.sh_addr(endian);
        for (i, entry) in bytes.chunks(entsize).take(MAX_ENTRIES).enumerate() {
            let at = base.wrapping_add((i * entsize) as u64);
            let Some(slot) = jump_slot(entry, at) else {
                continue;
            };
            if let Some(name) = slots.get(&slot) {
                out.push(Symbol {
                    addr: FileAddr(at),
                    size: entsize as u64,
                    kind: SymKind::Func,
                    global: false,
                    name: format!("{name}@plt").into(),
                    version: None,
                });
            }
        }
    }
    out
}

/// The GOT address an entry at `at` jumps through: `[endbr64] [bnd] jmp *disp32(%rip)`.
fn jump_slot(entry: &[u8], at: u64) -> Option<u64> {
    let mut pos = 0;
    if entry.starts_with(&ENDBR64) {
        pos += ENDBR64.len();
    }
    if entry.get(pos) == Some(&0xf2) {
        pos += 1;
    }
    if entry.get(pos..pos + 2)? != [0xff, 0x25] {
        return None;
    }
    let disp = i32::from_le_bytes(entry.get(pos + 2..pos + 6)?.try_into().ok()?);
    let next = at.wrapping_add(pos as u64 + 6);
    Some(next.wrapping_add_signed(i64::from(disp)))
}

/// GOT slot address -> the name of the function whose address the loader stores there.
fn got_slot_names(
    endian: Endianness,
    data: &[u8],
    sections: &Sections<'_>,
    known: &[Symbol],
) -> HashMap<u64, String> {
    let mut out = HashMap::new();
    for sh in sections.iter() {
        let Ok(Some((relas, link))) = sh.rela(endian, data) else {
            continue;
        };
        let symtab = sections.symbol_table_by_index(endian, data, link).ok();
        for r in relas {
            let info = r.r_info.get(endian);
            let (sym, kind) = (info >> 32, info & 0xffff_ffff);
            let name = match kind {
                R_X86_64_JUMP_SLOT | R_X86_64_GLOB_DAT if sym != 0 => {
                    let Some(table) = &symtab else { continue };
                    let Ok(s) = table.symbol(object::SymbolIndex(sym as usize)) else {
                        continue;
                    };
                    match table.symbol_name(endian, s) {
                        Ok(n) if !n.is_empty() => String::from_utf8_lossy(n).into_owned(),
                        _ => continue,
                    }
                }
                R_X86_64_IRELATIVE => {
                    let resolver = r.r_addend.get(endian) as u64;
                    match resolver_name(known, resolver) {
                        Some(n) => n.to_string(),
                        None => continue,
                    }
                }
                _ => continue,
            };
            out.insert(r.r_offset.get(endian), name);
        }
    }
    out
}

/// The function symbol at `addr`, preferring an exported one (`memcpy` over `__memcpy_ifunc`).
fn resolver_name(known: &[Symbol], addr: u64) -> Option<&str> {
    known
        .iter()
        .filter(|s| s.addr.0 == addr && s.kind == SymKind::Func)
        .max_by_key(|s| (s.global, std::cmp::Reverse(s.leading_underscores())))
        .map(|s| &*s.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_the_jump_forms() {
        // jmp *0x2fe2(%rip) at 0x1030: slot = 0x1036 + 0x2fe2.
        let lazy = [
            0xff, 0x25, 0xe2, 0x2f, 0, 0, 0x68, 0, 0, 0, 0, 0xe9, 0, 0, 0, 0,
        ];
        assert_eq!(jump_slot(&lazy, 0x1030), Some(0x1036 + 0x2fe2));
        // endbr64; bnd jmp *-0x10(%rip)
        let ibt = [
            0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25, 0xf0, 0xff, 0xff, 0xff, 0x0f, 0x1f, 0x44, 0,
            0,
        ];
        assert_eq!(jump_slot(&ibt, 0x2000), Some(0x2000 + 11 - 0x10));
        // push; jmp rel32 (an IBT .plt stub, named through .plt.sec instead).
        let stub = [
            0xf3, 0x0f, 0x1e, 0xfa, 0x68, 0, 0, 0, 0, 0xf2, 0xe9, 0, 0, 0, 0, 0x90,
        ];
        assert_eq!(jump_slot(&stub, 0x1000), None);
        assert_eq!(jump_slot(&[0xff, 0x25, 1], 0), None, "truncated");
    }
}

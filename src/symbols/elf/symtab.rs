//! Reading `.symtab` and `.dynsym` into `Symbol`s. Stripped binaries and shared libraries
//! often keep only `.dynsym`; unstripped ones have both, and `.dynsym` is then (almost always)
//! a subset of `.symtab`. Dynamic entries `.symtab` already gave are dropped here; the index
//! still merges any duplicates that remain.

use object::elf::{self, FileHeader64, Sym64};
use object::read::elf::{SectionTable, Sym};
use object::Endianness;

use super::symbol::{SymKind, Symbol};
use crate::symbols::addr::FileAddr;

type Sections<'data> = SectionTable<'data, FileHeader64<Endianness>, &'data [u8]>;

pub fn read_symbols(
    endian: Endianness,
    data: &[u8],
    sections: &Sections<'_>,
) -> anyhow::Result<Vec<Symbol>> {
    let bad = |e: object::read::Error| anyhow::anyhow!("bad symbol table: {e}");
    let symtab = sections
        .symbols(endian, data, elf::SHT_SYMTAB)
        .map_err(bad)?;
    let dynsym = sections
        .symbols(endian, data, elf::SHT_DYNSYM)
        .map_err(bad)?;

    let mut out = Vec::with_capacity(symtab.len().max(dynsym.len()));
    for sym in symtab.iter() {
        // A bad name offset spoils one symbol, not the table.
        let Ok(name) = symtab.symbol_name(endian, sym) else {
            continue;
        };
        if let Some(s) = convert(sym, endian, name) {
            out.push(s);
        }
    }

    // .dynsym is small next to .symtab in the files that have both: its entries are
    // gathered first, and one pass over .symtab's crosses off the copies, so a large
    // .symtab is never sorted here.
    let mut extra: Vec<(Symbol, bool)> = Vec::new();
    for sym in dynsym.iter() {
        let Ok(name) = dynsym.symbol_name(endian, sym) else {
            continue;
        };
        if let Some(s) = convert(sym, endian, name) {
            extra.push((s, false));
        }
    }
    if !extra.is_empty() && !out.is_empty() {
        extra.sort_unstable_by_key(|e| e.0.addr);
        for s in &out {
            let from = extra.partition_point(|e| e.0.addr < s.addr);
            for e in extra[from..].iter_mut().take_while(|e| e.0.addr == s.addr) {
                if e.0.name == s.name {
                    e.1 = true;
                }
            }
        }
    }
    let mut extra: Vec<Symbol> = extra
        .into_iter()
        .filter_map(|(s, seen)| (!seen).then_some(s))
        .collect();
    out.append(&mut extra);
    Ok(out)
}

fn convert(sym: &Sym64<Endianness>, endian: Endianness, raw: &[u8]) -> Option<Symbol> {
    let shndx = sym.st_shndx(endian);
    // Undefined symbols are references to other modules, not definitions. Absolute ones hold
    // constants rather than addresses (adding a load bias to them would be wrong), and common
    // ones only exist in relocatable objects.
    if shndx == elf::SHN_UNDEF || shndx == elf::SHN_ABS || shndx == elf::SHN_COMMON {
        return None;
    }
    let kind = match sym.st_type() {
        elf::STT_FUNC | elf::STT_GNU_IFUNC => SymKind::Func,
        elf::STT_OBJECT | elf::STT_COMMON => SymKind::Object,
        elf::STT_TLS => SymKind::Tls,
        elf::STT_SECTION | elf::STT_FILE => return None,
        _ => SymKind::Other,
    };
    let global = matches!(
        sym.st_bind(),
        elf::STB_GLOBAL | elf::STB_WEAK | elf::STB_GNU_UNIQUE
    );
    if raw.is_empty() {
        return None;
    }
    // Validating is much cheaper than the lossy conversion, and names are nearly always UTF-8.
    let name = match std::str::from_utf8(raw) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(raw),
    };
    let addr = FileAddr(sym.st_value(endian));
    let size = sym.st_size(endian);
    Some(Symbol::new(&name, addr, size, kind, global))
}

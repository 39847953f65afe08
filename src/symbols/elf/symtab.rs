//! Reading `.symtab` and `.dynsym` into `Symbol`s. Stripped binaries and shared libraries
//! often keep only `.dynsym`; unstripped ones have both, and `.dynsym` is then (almost always)
//! a subset of `.symtab`. Dynamic entries `.symtab` already gave are dropped here; the index
//! still merges any duplicates that remain.

use object::elf::{self, FileHeader64, Sym64};
use object::read::elf::{Sym, SymbolTable};
use object::Endianness;

use super::symbol::{SymKind, Symbol};
use crate::symbols::addr::FileAddr;

use super::sections::Sections;
type Table<'data> = SymbolTable<'data, FileHeader64<Endianness>, &'data [u8]>;

/// Tables with more entries than this are converted by two threads: a large C++ program's
/// 300,000 symbols took a fifth of its start-up on one, and while scry loads symbols the
/// stopped program leaves the second core idle.
const TWO_THREADS_FROM: usize = 50_000;

pub(super) fn read_symbols(
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

    // Room for everything that follows (.dynsym's extras, and the PLT entries the image adds,
    // at most one per dynamic symbol): growing a large table later copies it whole.
    let mut out = Vec::with_capacity(symtab.len() + 2 * dynsym.len());
    convert_table(&symtab, endian, &mut out);

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

/// Every definition in `table`, in table order, appended to `out`.
fn convert_table(table: &Table<'_>, endian: Endianness, out: &mut Vec<Symbol>) {
    let convert_part = |part: &[Sym64<Endianness>], out: &mut Vec<Symbol>| {
        out.extend(part.iter().filter_map(|sym| {
            // A bad name offset spoils one symbol, not the table.
            let name = table.symbol_name(endian, sym).ok()?;
            convert(sym, endian, name)
        }))
    };
    let all = table.symbols();
    if all.len() < TWO_THREADS_FROM {
        return convert_part(all, out);
    }
    let (first, second) = all.split_at(all.len() / 2);
    std::thread::scope(|scope| {
        let helper = std::thread::Builder::new()
            .name("scry-symbols".into())
            .spawn_scoped(scope, || {
                let mut rest = Vec::with_capacity(second.len());
                convert_part(second, &mut rest);
                rest
            });
        convert_part(first, out);
        match helper.ok().map(|h| h.join()) {
            Some(Ok(mut rest)) => out.append(&mut rest),
            // No thread to be had (or it died): the second half on this one.
            _ => convert_part(second, out),
        }
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::testutil::{compile, nm_address};
    use object::read::elf::FileHeader;

    /// The symbols of the ELF file at `path`, and the same table converted on one thread.
    fn both_ways(path: &std::path::Path) -> (Vec<Symbol>, Vec<Symbol>) {
        let data = std::fs::read(path).unwrap();
        let header = FileHeader64::<Endianness>::parse(&*data).unwrap();
        let endian = header.endian().unwrap();
        let sections = header.sections(endian, &*data).unwrap();
        let read = read_symbols(endian, &data, &sections).unwrap();
        let table = sections.symbols(endian, &*data, elf::SHT_SYMTAB).unwrap();
        let one_thread: Vec<Symbol> = table
            .symbols()
            .iter()
            .filter_map(|sym| convert(sym, endian, table.symbol_name(endian, sym).ok()?))
            .collect();
        (read, one_thread)
    }

    #[test]
    fn a_large_table_reads_as_it_does_on_one_thread() {
        // 60,000 functions from the assembler (a C compiler would take far longer).
        let n = TWO_THREADS_FROM + 10_000;
        let mut asm = String::from("__asm__(\".text\\n\"\n");
        for i in 0..n {
            asm.push_str(&format!(
                "\".globl big_{i}\\n.type big_{i},@function\\nbig_{i}: ret\\n.size big_{i},1\\n\"\n"
            ));
        }
        asm.push_str(");\nint main(void) { return 0; }\n");
        let exe = compile("manysyms", &asm, false, &["-O0"]);
        let (read, one_thread) = both_ways(&exe);
        let names = |v: &[Symbol]| {
            v.iter()
                .map(|s| (s.name.to_string(), s.addr))
                .collect::<Vec<_>>()
        };
        let read_names = names(&read);
        // .dynsym adds nothing here beyond what .symtab lists (an executable exports none
        // of these), so the two agree entry for entry, in table order.
        assert_eq!(read_names[..one_thread.len()], names(&one_thread)[..]);
        let big: Vec<_> = read.iter().filter(|s| s.name.starts_with("big_")).collect();
        assert_eq!(big.len(), n);
        for i in [0, 1, n / 2 - 1, n / 2, n / 2 + 1, n - 1] {
            let name = format!("big_{i}");
            let s = read.iter().find(|s| *s.name == *name).unwrap();
            assert_eq!(Some(s.addr.0), nm_address(&exe, &name), "{name}");
            assert_eq!((s.size, s.kind, s.global), (1, SymKind::Func, true));
        }
    }
}

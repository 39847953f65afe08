//! One entry of a symbol table, reduced to what a debugger needs.

use std::borrow::Cow;

use super::demangle;
use crate::symbols::addr::FileAddr;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymKind {
    /// STT_FUNC, and STT_GNU_IFUNC (a resolver function: still code at that address).
    Func,
    /// STT_OBJECT and STT_COMMON.
    Object,
    /// STT_TLS: `addr` is an offset inside the module's TLS block, not an address.
    Tls,
    /// STT_NOTYPE and anything unusual, e.g. labels in hand-written assembly.
    Other,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// Link-time address (st_value); for `SymKind::Tls`, the offset in the TLS segment.
    pub addr: FileAddr,
    pub size: u64,
    pub kind: SymKind,
    /// STB_GLOBAL, STB_WEAK or STB_GNU_UNIQUE: visible outside its object file.
    pub global: bool,
    /// The raw ELF name without any `@VERSION` / `@@VERSION` suffix.
    pub name: Box<str>,
    /// The symbol version that followed `@` or `@@` in the raw name, if any.
    pub version: Option<Box<str>>,
}

impl Symbol {
    /// Builds a symbol from a raw ELF name, splitting off a `.symver`-style version suffix.
    /// Mangled names never contain `@`, so the split cannot cut a real name.
    pub fn new(raw_name: &str, addr: FileAddr, size: u64, kind: SymKind, global: bool) -> Symbol {
        let (name, version) = match raw_name.split_once('@') {
            Some((base, ver)) if !base.is_empty() => {
                let ver = ver.trim_start_matches('@');
                (base, (!ver.is_empty()).then(|| Box::<str>::from(ver)))
            }
            _ => (raw_name, None),
        };
        Symbol {
            addr,
            size,
            kind,
            global,
            name: name.into(),
            version,
        }
    }

    /// Demangled name (Rust without its hash, C++ with its parameter list), or the raw name.
    pub fn display_name(&self) -> Cow<'_, str> {
        demangle::display(&self.name)
    }

    /// Case-sensitive substring match on the raw or the demangled name.
    pub fn matches(&self, needle: &str) -> bool {
        self.name.contains(needle)
            || (demangle::looks_mangled(&self.name) && self.display_name().contains(needle))
    }

    /// Whether `addr` lies inside this symbol's extent. Zero-sized symbols contain nothing.
    pub fn contains(&self, addr: FileAddr) -> bool {
        addr.0
            .checked_sub(self.addr.0)
            .is_some_and(|off| off < self.size)
    }

    /// Exclusive end, saturating: a hostile st_size must not wrap around the address space.
    pub fn end(&self) -> u64 {
        self.addr.0.saturating_add(self.size)
    }

    pub(crate) fn leading_underscores(&self) -> usize {
        self.name.bytes().take_while(|&b| b == b'_').count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_version_suffix() {
        let s = Symbol::new("memcpy@@GLIBC_2.14", FileAddr(1), 2, SymKind::Func, true);
        assert_eq!(&*s.name, "memcpy");
        assert_eq!(s.version.as_deref(), Some("GLIBC_2.14"));
        let s = Symbol::new("memcpy@GLIBC_2.2.5", FileAddr(1), 2, SymKind::Func, true);
        assert_eq!(s.version.as_deref(), Some("GLIBC_2.2.5"));
        let s = Symbol::new("plain", FileAddr(1), 2, SymKind::Func, true);
        assert_eq!((&*s.name, s.version), ("plain", None));
    }

    #[test]
    fn containment_is_half_open() {
        let s = Symbol::new("f", FileAddr(0x100), 0x10, SymKind::Func, true);
        assert!(s.contains(FileAddr(0x100)));
        assert!(s.contains(FileAddr(0x10f)));
        assert!(!s.contains(FileAddr(0x110)));
        assert!(!s.contains(FileAddr(0xff)));
        let huge = Symbol::new(
            "h",
            FileAddr(u64::MAX - 1),
            u64::MAX,
            SymKind::Object,
            false,
        );
        assert_eq!(huge.end(), u64::MAX);
    }
}

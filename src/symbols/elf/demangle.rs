//! Turning raw linker names into what a person types: demangling (Rust legacy and v0, C++
//! Itanium) and trimming a demangled name down to its bare path.

use std::borrow::Cow;

/// Whether `raw` uses a mangling scheme we know. Checked before calling a demangler because
/// the C++ demangler also accepts bare type encodings: a C global named `i` would otherwise
/// "demangle" to `int`.
pub fn looks_mangled(raw: &str) -> bool {
    // `_Z` is Itanium (and Rust legacy, which reuses it); `__Z` is the Mach-O style some tools
    // still emit; `_R` is Rust v0.
    raw.starts_with("_Z") || raw.starts_with("__Z") || raw.starts_with("_R")
}

/// The demangled form of `raw`, or `None` when it is not mangled or fails to demangle.
/// Rust hashes (`::h0123456789abcdef`) are left out, as users never type them.
pub fn demangle(raw: &str) -> Option<String> {
    if !looks_mangled(raw) {
        return None;
    }
    // addr2line tries Rust first, then C++, and hands back the input untouched on failure;
    // for Rust it formats with `{:#}`, which is the hash-free form.
    match addr2line::demangle_auto(Cow::Borrowed(raw), None) {
        Cow::Owned(s) if s != raw => Some(special_names(s)),
        _ => None,
    }
}

/// The C++ demangler spells a vtable `{vtable(geo::Rect)}`; c++filt, gdb and every other
/// special name (`typeinfo for geo::Rect`) say `vtable for geo::Rect`.
fn special_names(s: String) -> String {
    match s
        .strip_prefix("{vtable(")
        .and_then(|rest| rest.strip_suffix(")}"))
    {
        Some(class) => format!("vtable for {class}"),
        None => s,
    }
}

/// What every mangled spelling of the plain path `query` (`vb::leaf`, `Foo::bar`, `helper`)
/// must contain: each component as a length-prefixed source name (`2vb`, `4leaf`), the way
/// Itanium and both Rust schemes spell an identifier the first time it appears (Rust v0 puts
/// a `_` after the length of one that starts with `_`). A symbol without them cannot
/// demangle to that path, so a lookup can demangle a handful of candidates instead of the
/// whole table. `None` when that does not hold: operators, templates, signatures,
/// non-ASCII names, `std` (Itanium abbreviates it to `St`), anonymous namespaces.
pub fn path_needles(query: &str) -> Option<Vec<Vec<String>>> {
    let plain = |c: &str| {
        let mut bytes = c.bytes();
        bytes
            .next()
            .is_some_and(|b| b == b'_' || b.is_ascii_alphabetic())
            && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric())
    };
    query
        .split("::")
        .map(|c| {
            if !plain(c) || c == "std" {
                return None;
            }
            let mut spellings = vec![format!("{}{c}", c.len())];
            if c.starts_with('_') {
                spellings.push(format!("{}_{c}", c.len()));
            }
            Some(spellings)
        })
        .collect()
}

/// Whether the raw name `raw` is mangled and spells every component of a path, as
/// `path_needles` gives them: a symbol that does not cannot demangle to that path.
pub fn spells_path(raw: &str, needles: &[Vec<String>]) -> bool {
    looks_mangled(raw)
        && needles
            .iter()
            .all(|alts| alts.iter().any(|n| raw.contains(n.as_str())))
}

/// The name to show for `raw`: demangled when possible, else `raw` itself.
pub fn display(raw: &str) -> Cow<'_, str> {
    match demangle(raw) {
        Some(s) => Cow::Owned(s),
        None => Cow::Borrowed(raw),
    }
}

/// The bare qualified name of a demangled C++ function: `ns::Foo::bar(int) const` becomes
/// `ns::Foo::bar`, `void f<int>(int)` becomes `f<int>`. Returns the input when there is
/// nothing to trim (Rust paths, C names).
pub fn strip_signature(demangled: &str) -> &str {
    let mut s = demangled.trim_end();
    // GCC clones ("foo() [clone .cold]") and ABI tags come after the parameter list.
    while let Some(rest) = s.strip_suffix(']') {
        match matching_open(rest, b'[', b']') {
            Some(open) => s = rest[..open].trim_end(),
            None => break,
        }
    }
    // Member function qualifiers follow the parameter list.
    loop {
        let before = s;
        for q in [" const", " volatile", " &&", " &", " noexcept"] {
            if let Some(rest) = s.strip_suffix(q) {
                s = rest.trim_end();
            }
        }
        if s == before {
            break;
        }
    }
    let Some(rest) = s.strip_suffix(')') else {
        // A variable's ABI tag too: `g_title[abi:cxx11]` (a std::string global, a
        // thread_local std::string) is `g_title`, as gdb takes `print g_title`; it was
        // "unknown symbol".
        let mut name = demangled.trim_end();
        while let Some(at) = name.rfind("[abi:").filter(|_| name.ends_with(']')) {
            name = name[..at].trim_end();
        }
        return if name.is_empty() { demangled } else { name };
    };
    let Some(open) = matching_open(rest, b'(', b')') else {
        return demangled;
    };
    let mut name = rest[..open].trim_end();
    // `operator()` with no parameter list after it (a DWARF name): the parentheses are
    // the name's.
    let word_start = name
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    if &name[word_start..] == "operator" && rest[open..] == *"(" {
        return demangled;
    }
    // An ABI tag names a library version, not the function: `label[abi:cxx11](int)` is
    // `label` (how gdb takes `break label`).
    while let Some(at) = name.rfind("[abi:").filter(|_| name.ends_with(']')) {
        name = &name[..at];
    }
    if name.is_empty() {
        return demangled;
    }
    strip_return_type(name)
}

/// Index of the bracket that opens the group whose closer was just removed from the end of
/// `s`, scanning backwards and honouring nesting.
fn matching_open(s: &str, open: u8, close: u8) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &b) in s.as_bytes().iter().enumerate().rev() {
        if b == close {
            depth += 1;
        } else if b == open {
            if depth == 0 {
                return Some(i);
            }
            depth -= 1;
        }
    }
    None
}

/// Itanium mangles the return type only for template functions, which makes the demangler
/// print `void f<int>`; the name is what follows the last space outside brackets.
fn strip_return_type(name: &str) -> &str {
    let bytes = name.as_bytes();
    let mut depth = 0usize;
    for (i, &b) in bytes.iter().enumerate().rev() {
        match b {
            b'>' | b')' | b']' => depth += 1,
            b'<' | b'(' | b'[' => depth = depth.saturating_sub(1),
            b' ' if depth == 0 => {
                // `operator new`, `operator delete[]`, conversion operators: the space is
                // part of the name.
                if name[..i].ends_with("operator") {
                    continue;
                }
                return &name[i + 1..];
            }
            _ => {}
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_rust_legacy_without_hash() {
        assert_eq!(
            demangle("_ZN4core3fmt5write17h0123456789abcdefE").as_deref(),
            Some("core::fmt::write")
        );
    }

    #[test]
    fn names_vtables_as_gdb_does() {
        assert_eq!(
            demangle("_ZTVN3geo4RectE").as_deref(),
            Some("vtable for geo::Rect")
        );
        assert_eq!(
            demangle("_ZTIN3geo4RectE").as_deref(),
            Some("typeinfo for geo::Rect")
        );
    }

    #[test]
    fn demangles_cpp() {
        assert_eq!(
            demangle("_ZN2ns3Foo3barEi").as_deref(),
            Some("ns::Foo::bar(int)")
        );
        assert_eq!(demangle("_Z3addii").as_deref(), Some("add(int, int)"));
    }

    #[test]
    fn leaves_plain_names_alone() {
        assert_eq!(demangle("main"), None);
        assert_eq!(demangle("i"), None, "a C global named like a type code");
        assert_eq!(display("puts"), "puts");
        assert_eq!(demangle("_Zgarbage"), None);
    }

    #[test]
    fn path_needles_match_every_scheme() {
        let contains_all = |raw: &str, q: &str| {
            path_needles(q)
                .unwrap()
                .iter()
                .all(|alts| alts.iter().any(|n| raw.contains(n.as_str())))
        };
        assert!(contains_all("_ZN2vb4leafEi", "vb::leaf"));
        assert!(
            contains_all("_ZNK2ns3Foo3barEv", "ns::Foo::bar"),
            "const method"
        );
        assert!(
            contains_all("_ZN2ns3FooC2Ev", "ns::Foo::Foo"),
            "constructor"
        );
        assert!(contains_all(
            "_ZN4core3fmt5write17h0123456789abcdefE",
            "core::fmt::write"
        ));
        assert!(
            contains_all("_ZZ4mainE5count", "main::count"),
            "function-local static"
        );
        assert!(!contains_all("_ZN2vb5chainEii", "vb::leaf"));
        for q in [
            "std::swap",
            "operator new",
            "f<int>",
            "f(int)",
            "(anonymous namespace)::h",
            "",
            "a::",
        ] {
            assert_eq!(path_needles(q), None, "{q}");
        }
        assert_eq!(
            path_needles("_priv").unwrap(),
            vec![vec!["5_priv".to_string(), "5__priv".to_string()]]
        );
    }

    #[test]
    fn strips_signatures() {
        assert_eq!(strip_signature("ns::Foo::bar(int)"), "ns::Foo::bar");
        assert_eq!(strip_signature("ns::Foo::bar(int) const"), "ns::Foo::bar");
        assert_eq!(strip_signature("foo() [clone .cold]"), "foo");
        assert_eq!(strip_signature("label[abi:cxx11](int)"), "label");
        // A variable's tag: a std::string global.
        assert_eq!(strip_signature("g_title[abi:cxx11]"), "g_title");
        assert_eq!(
            strip_signature("cfg::Limits::banner[abi:cxx11]"),
            "cfg::Limits::banner"
        );
        assert_eq!(strip_signature("operator()"), "operator()");
        assert_eq!(strip_signature("S::operator()"), "S::operator()");
        assert_eq!(strip_signature("S::operator()(int) const"), "S::operator()");
        assert_eq!(
            strip_signature("std::__cxx11::to_string[abi:cxx11][abi:x](long)"),
            "std::__cxx11::to_string"
        );
        assert_eq!(strip_signature("void f<int>(int)"), "f<int>");
        assert_eq!(
            strip_signature(
                "(anonymous namespace)::helper(std::vector<int, std::allocator<int> >&)"
            ),
            "(anonymous namespace)::helper"
        );
        assert_eq!(
            strip_signature("X::operator new(unsigned long)"),
            "X::operator new"
        );
        assert_eq!(strip_signature("core::fmt::write"), "core::fmt::write");
        assert_eq!(
            strip_signature("<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop"),
            "<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop"
        );
        assert_eq!(strip_signature("main"), "main");
    }
}

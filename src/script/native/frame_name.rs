//! A C++ frame's name without its parameter types, for unwind rows that list the arguments
//! by name: `total(std::vector<geo::Shape*> const&, geo::Ring<int, 4>&)+0x6d` reads
//! `total+0x6d(shapes={…}, ring={…})`, as gdb's `total (shapes=..., ring=...)`. The types
//! stay in the row's `symbol` and in stop lines.

use std::borrow::Cow;

use crate::symbols::elf::demangle::strip_signature;

/// `name(params) const+0x10` -> `name+0x10`; anything else as it is.
pub(super) fn without_parameters(symbol: &str) -> Cow<'_, str> {
    // The offset is the last `+0x` after the final `)` or `]` (a clone's tag).
    let Some(close) = symbol.rfind([')', ']']) else {
        return Cow::Borrowed(symbol);
    };
    let (name, offset) = match symbol[close..].find("+0x") {
        Some(i) => symbol.split_at(close + i),
        None => (symbol, ""),
    };
    let bare = strip_signature(name);
    if bare.len() == name.len() {
        return Cow::Borrowed(symbol);
    }
    Cow::Owned(format!("{bare}{offset}"))
}

#[cfg(test)]
mod tests {
    use super::without_parameters as w;

    #[test]
    fn parameter_lists_go_offsets_stay() {
        assert_eq!(
            w("total(std::vector<geo::Shape*, std::allocator<geo::Shape*> > const&, geo::Ring<int, 4>&)+0x6d"),
            "total+0x6d"
        );
        assert_eq!(w("geo::Rect::area() const+0x8"), "geo::Rect::area+0x8");
        assert_eq!(w("geo::Rect::area() const"), "geo::Rect::area");
        assert_eq!(w("f(void (*)(int), char)"), "f");
        assert_eq!(w("S::operator()(int) const"), "S::operator()");
        assert_eq!(
            w("(anonymous namespace)::g(int)+0x4"),
            "(anonymous namespace)::g+0x4"
        );
        assert_eq!(w("work(int) [clone .cold]+0x3"), "work+0x3");
        assert_eq!(w("void f<int>(int)+0x9"), "f<int>+0x9");
    }

    #[test]
    fn c_and_rust_names_are_unchanged() {
        assert_eq!(w("main+0x1f"), "main+0x1f");
        assert_eq!(w("inv::audit+0x8"), "inv::audit+0x8");
        assert_eq!(
            w("core::option::Option<T>::ok_or_else"),
            "core::option::Option<T>::ok_or_else"
        );
        assert_eq!(w("(anonymous namespace)"), "(anonymous namespace)");
        assert_eq!(w("broken)+0x4"), "broken)+0x4");
        assert_eq!(w(""), "");
    }
}

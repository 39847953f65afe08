//! A C++ frame's name as stop lines and unwind rows show it: without its parameter types
//! (the row lists the arguments by name: `total(std::vector<geo::Shape*> const&,
//! geo::Ring<int, 4>&)+0x6d` reads `total+0x6d(shapes={…}, ring={…})`, as gdb's `total
//! (shapes=..., ring=...)`), and with template argument lists longer than
//! `MAX_TEMPLATE_ARGS` bytes cut to `<…>` (`std::__sort<…>+0x2d`), namespaces kept; a Rust
//! impl's `<X as Y>` keeps the two types' last segments (`<Iter<T> as Iterator>::fold`); an
//! LTO rename's `.lto_priv.0` goes. The whole signature stays in an unwind row's `symbol` and
//! in `symbol_at()`.

use std::borrow::Cow;

use super::demangle::strip_signature;

/// A template argument list longer than this prints as `<…>`.
const MAX_TEMPLATE_ARGS: usize = 40;

/// The short name of a frame's symbol (`name(params)+0x10` -> `name+0x10`, long template
/// arguments cut); C and Rust names as they are, unless a template list is long.
pub fn short_frame_name(symbol: &str) -> Cow<'_, str> {
    let bare = without_parameters(symbol);
    let bare = match without_lto_priv(&bare) {
        Some(plain) => Cow::Owned(plain),
        None => bare,
    };
    match abbreviate_templates(&bare) {
        Some(short) => Cow::Owned(short),
        None => bare,
    }
}

/// `list_append.lto_priv.0+0x4` -> `list_append+0x4`: LTO renames a file-local function so
/// that it may become global, which says nothing about the code (gdb shows the name the
/// source gives it). Clone suffixes (`.constprop.0`, `.cold`) stay: they are other code.
fn without_lto_priv(name: &str) -> Option<String> {
    const TAG: &str = ".lto_priv.";
    let at = name.find(TAG)?;
    let digits = name[at + TAG.len()..]
        .bytes()
        .take_while(u8::is_ascii_digit)
        .count();
    if digits == 0 {
        return None;
    }
    let rest = &name[at + TAG.len() + digits..];
    let mut out = format!("{}{rest}", &name[..at]);
    if let Some(again) = without_lto_priv(&out) {
        out = again;
    }
    Some(out)
}

/// `f<…>` for every outermost `<...>` longer than `MAX_TEMPLATE_ARGS`; `None` when nothing
/// is cut. `operator<`, `operator<<` and `operator<=` are operators, not lists.
fn abbreviate_templates(name: &str) -> Option<String> {
    let bytes = name.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    let mut cut = false;
    while i < bytes.len() {
        if bytes[i] == b'<' && !name[..i].ends_with("operator") && !name[..i].ends_with("operator<")
        {
            // The matching `>`, if the list closes.
            let mut depth = 0usize;
            let mut end = None;
            for (j, &b) in bytes.iter().enumerate().skip(i) {
                match b {
                    b'<' => depth += 1,
                    b'>' => {
                        depth -= 1;
                        if depth == 0 {
                            end = Some(j);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let Some(end) = end else { break };
            if end - i - 1 > MAX_TEMPLATE_ARGS {
                out.push_str(&name[copied..i]);
                // Rust's `<core::slice::iter::Iter<T> as core::iter::Iterator>::fold`: the
                // two types by their last path segments (`<Iter<T> as Iterator>::fold`),
                // which say whose method it is; `<…>` would say nothing.
                match qualified_self(&name[i + 1..end]) {
                    Some(short) => out.push_str(&short),
                    None => out.push_str("<…>"),
                }
                copied = end + 1;
                cut = true;
            }
            i = end + 1;
            continue;
        }
        i += 1;
    }
    if !cut {
        return None;
    }
    out.push_str(&name[copied..]);
    Some(out)
}

/// `<Iter<T> as Iterator>` from the inside of Rust's `<path::Iter<T> as path::Iterator>`,
/// each type by its last path segment and long generics cut; `None` when it is no `X as Y`.
fn qualified_self(inside: &str) -> Option<String> {
    let split = top_level(inside, " as ")?;
    let (ty, tr) = (&inside[..split], &inside[split + 4..]);
    let last = |path: &str| -> String {
        let seg = match top_level_last(path, "::") {
            Some(i) => &path[i + 2..],
            None => path,
        };
        abbreviate_templates(seg).unwrap_or_else(|| seg.to_string())
    };
    Some(format!("<{} as {}>", last(ty), last(tr)))
}

/// The first occurrence of `pat` in `text` outside `<...>`.
fn top_level(text: &str, pat: &str) -> Option<usize> {
    top_level_all(text, pat).next()
}

fn top_level_last(text: &str, pat: &str) -> Option<usize> {
    top_level_all(text, pat).last()
}

fn top_level_all<'a>(text: &'a str, pat: &'a str) -> impl Iterator<Item = usize> + 'a {
    let mut depth = 0i32;
    text.char_indices().filter_map(move |(i, c)| {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            _ => {}
        }
        (depth == 0 && text[i..].starts_with(pat)).then_some(i)
    })
}

/// `name(params) const+0x10` -> `name+0x10`; anything else as it is.
fn without_parameters(symbol: &str) -> Cow<'_, str> {
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
    // A clone's tag stays, as gdb shows it: `work [clone .cold]+0x3` is code of its own,
    // not `work+0x3`.
    let clones = name
        .find(" [clone ")
        .filter(|&i| name[..i].ends_with(|c: char| c == ')' || c.is_alphanumeric() || c == ' '))
        .map_or("", |i| &name[i..]);
    Cow::Owned(format!("{bare}{clones}{offset}"))
}

#[cfg(test)]
mod tests {
    use super::short_frame_name;
    use super::without_parameters as w;

    #[test]
    fn long_template_arguments_are_cut_short_ones_kept() {
        assert_eq!(
            short_frame_name("void std::__sort<__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, __gnu_cxx::__ops::_Iter_comp_iter<main::{lambda(int, int)#1}> >(__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, __gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, __gnu_cxx::__ops::_Iter_comp_iter<main::{lambda(int, int)#1}>)+0x2d"),
            "std::__sort<…>+0x2d"
        );
        assert_eq!(
            short_frame_name("geo::Ring<int, 4>::push(int)+0x8"),
            "geo::Ring<int, 4>::push+0x8"
        );
        assert_eq!(
            short_frame_name("std::operator<<(std::ostream&, char const*)+0x4"),
            "std::operator<<+0x4"
        );
        assert_eq!(short_frame_name("main+0x1f"), "main+0x1f");
    }

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
        assert_eq!(w("work(int) [clone .cold]+0x3"), "work [clone .cold]+0x3");
        assert_eq!(
            w("weigh(int) [clone .constprop.0] [clone .isra.0]"),
            "weigh [clone .constprop.0] [clone .isra.0]"
        );
        assert_eq!(w("void f<int>(int)+0x9"), "f<int>+0x9");
    }

    #[test]
    fn lto_renames_go_and_rust_impls_keep_their_types() {
        assert_eq!(
            short_frame_name("list_append.lto_priv.0+0x1f"),
            "list_append+0x1f"
        );
        assert_eq!(
            short_frame_name("pycore_init.lto_priv.12.cold+0x3"),
            "pycore_init.cold+0x3"
        );
        assert_eq!(short_frame_name("a.lto_privx+0x1"), "a.lto_privx+0x1");
        assert_eq!(
            short_frame_name(
                "<core::slice::iter::Iter<T> as core::iter::traits::iterator::Iterator>::fold+0x5c"
            ),
            "<Iter<T> as Iterator>::fold+0x5c"
        );
        assert_eq!(
            short_frame_name("<prog::Dog as prog::Animal>::name+0x4"),
            "<prog::Dog as prog::Animal>::name+0x4"
        );
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

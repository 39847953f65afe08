//! A type's name as its source language writes it: `const wchar_t *`, `char *const *`,
//! `short [2][3]`, `int (*)(int, int)`, `struct node *` in C; Rust types by the names rustc
//! gives them (`&str`, `alloc::vec::Vec<i32, alloc::alloc::Global>`), `[u8; 4]` for arrays.

use super::tree::InfoTree;
use super::types::{AggKind, Kind, TypeId};

/// Declarators nested deeper than this are cut with `?` (a hostile or cyclic DIE graph).
const MAX_DEPTH: usize = 24;
/// Names are cut at this many bytes.
const MAX_LEN: usize = 400;

impl InfoTree {
    /// The C (or Rust) spelling of a type; `void` for `None`.
    pub fn type_name(&self, id: Option<TypeId>) -> String {
        let mut name = self.declare(id, String::new(), 0);
        if name.len() > MAX_LEN {
            let mut cut = MAX_LEN;
            while !name.is_char_boundary(cut) {
                cut -= 1;
            }
            name.truncate(cut);
            name.push('…');
        }
        name
    }

    /// `inner` is the declarator built so far (what this type is the type *of*): `*` for
    /// "pointer to this", `[3]` for "array of this".
    fn declare(&self, id: Option<TypeId>, inner: String, depth: usize) -> String {
        if depth > MAX_DEPTH {
            return join("?", &inner);
        }
        let Some(id) = id else {
            return join("void", &inner);
        };
        let Some(t) = self.type_of(id) else {
            return join("?", &inner);
        };
        if t.rust {
            return join(&self.rust_name(&t, depth), &inner);
        }
        match &t.kind {
            Kind::Pointer(target) => self.declare(*target, format!("*{inner}"), depth + 1),
            Kind::Reference { target, rvalue } => {
                let amp = if *rvalue { "&&" } else { "&" };
                self.declare(*target, format!("{amp}{inner}"), depth + 1)
            }
            Kind::Qualified(q, target) => {
                let pointee = target
                    .and_then(|p| self.type_of(p))
                    .and_then(|p| match p.kind {
                        Kind::Pointer(to) => Some(to),
                        _ => None,
                    });
                match (target, pointee) {
                    // A qualified pointer: the qualifier follows its star (`char *const`).
                    (Some(_), Some(to)) => {
                        let sp = if inner.is_empty() { "" } else { " " };
                        self.declare(to, format!("*{q}{sp}{inner}"), depth + 2)
                    }
                    _ => {
                        // A qualified array is an array of qualified elements: GCC writes
                        // `const` on both (`const char [5]` for `__func__`), once is enough.
                        let rest = self.declare(*target, inner, depth + 1);
                        if rest.starts_with(&format!("{q} ")) {
                            rest
                        } else {
                            format!("{q} {rest}")
                        }
                    }
                }
            }
            Kind::Array { elem, counts } => {
                let mut dims = String::new();
                for c in counts {
                    match c {
                        Some(n) => dims.push_str(&format!("[{n}]")),
                        None => dims.push_str("[]"),
                    }
                }
                self.declare(*elem, format!("{}{dims}", paren(&inner)), depth + 1)
            }
            Kind::Function {
                ret,
                params,
                varargs,
            } => {
                let mut list: Vec<String> = params
                    .iter()
                    .map(|p| self.declare(*p, String::new(), depth + 1))
                    .collect();
                if *varargs {
                    list.push("...".into());
                }
                if list.is_empty() {
                    list.push("void".into());
                }
                let inner = format!("{}({})", paren(&inner), list.join(", "));
                self.declare(*ret, inner, depth + 1)
            }
            Kind::Aggregate { kind, .. } => {
                let word = match kind {
                    AggKind::Struct => "struct",
                    AggKind::Class => "class",
                    AggKind::Union => "union",
                };
                let base = match &t.name {
                    Some(n) if t.c => format!("{word} {n}"),
                    Some(n) => n.clone(),
                    None => format!("{word} {{...}}"),
                };
                join(&base, &inner)
            }
            Kind::Enum { .. } => {
                let base = match &t.name {
                    Some(n) if t.c => format!("enum {n}"),
                    Some(n) => n.clone(),
                    None => "enum {...}".into(),
                };
                join(&base, &inner)
            }
            Kind::Base(_) | Kind::Typedef(_) | Kind::Other => {
                join(t.name.as_deref().unwrap_or("?"), &inner)
            }
        }
    }

    fn rust_name(&self, t: &super::types::Type, depth: usize) -> String {
        if let Some(n) = &t.name {
            return n.clone();
        }
        match &t.kind {
            Kind::Pointer(to) => format!("*const {}", self.declare(*to, String::new(), depth + 1)),
            Kind::Reference { target, .. } => {
                format!("&{}", self.declare(*target, String::new(), depth + 1))
            }
            Kind::Array { elem, counts } => {
                let mut name = self.declare(*elem, String::new(), depth + 1);
                for c in counts.iter().rev() {
                    name = match c {
                        Some(n) => format!("[{name}; {n}]"),
                        None => format!("[{name}]"),
                    };
                }
                name
            }
            Kind::Qualified(_, target) | Kind::Typedef(target) => {
                self.declare(*target, String::new(), depth + 1)
            }
            Kind::Function { ret, params, .. } => {
                let list: Vec<String> = params
                    .iter()
                    .map(|p| self.declare(*p, String::new(), depth + 1))
                    .collect();
                format!(
                    "fn({}) -> {}",
                    list.join(", "),
                    self.declare(*ret, String::new(), depth + 1)
                )
            }
            _ => "?".into(),
        }
    }
}

fn join(base: &str, inner: &str) -> String {
    if inner.is_empty() {
        base.to_string()
    } else {
        format!("{base} {inner}")
    }
}

/// A pointer declarator inside an array or function declarator needs parentheses:
/// `int (*)[4]`, `int (*)(int)`.
fn paren(inner: &str) -> String {
    if inner.starts_with('*') || inner.starts_with('&') {
        format!("({inner})")
    } else {
        inner.to_string()
    }
}

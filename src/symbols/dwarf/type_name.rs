//! A type's name as its source language writes it: `const wchar_t *`, `char *const *`,
//! `short [2][3]`, `int (*)(int, int)`, `struct node *` in C; Rust types by the names rustc
//! gives them (`&str`, `alloc::vec::Vec<i32, alloc::alloc::Global>`), `[u8; 4]` for arrays.

use std::collections::HashMap;
use std::sync::Arc;

use super::tree::{InfoTree, Reader, UnitHandle};
use super::types::{AggKind, Kind, Type, TypeId};

/// Declarators nested deeper than this are cut with `?` (a hostile or cyclic DIE graph).
const MAX_DEPTH: usize = 24;
/// Names are cut at this many bytes.
const MAX_LEN: usize = 400;

impl InfoTree {
    /// The C (or Rust) spelling of a type; `void` for `None`.
    pub(crate) fn type_name(&self, id: Option<TypeId>) -> String {
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
            // `int Cls::*`, `int (Cls::*)(Cls * const)`.
            Kind::MemberPointer { class, target } => {
                let class = self.declare(*class, String::new(), depth + 1);
                let inner = format!("{class}::*{inner}");
                let inner = if self.is_function(*target) {
                    format!("({inner})")
                } else {
                    inner
                };
                self.declare(*target, inner, depth + 1)
            }
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
                    Some(n) => self.scoped(id, n),
                    None => format!("{word} {{...}}"),
                };
                join(&base, &inner)
            }
            Kind::Enum { .. } => {
                let base = match &t.name {
                    Some(n) if t.c => format!("enum {n}"),
                    Some(n) => self.scoped(id, n),
                    None => "enum {...}".into(),
                };
                join(&base, &inner)
            }
            Kind::Typedef(_) if !t.c => {
                join(&self.scoped(id, t.name.as_deref().unwrap_or("?")), &inner)
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

impl InfoTree {
    /// The name printers match: a C++ type's as `type_name` spells it, a Rust type's with
    /// the modules it is declared in (`std::collections::hash::map::HashMap<i32, ...>`,
    /// where `type_name` says `HashMap<i32, ...>`), so a program's own `HashMap` is not
    /// taken for the standard one.
    pub(crate) fn qualified_type_name(&self, id: TypeId) -> String {
        match self.type_of(id) {
            Some(t) if t.rust && matches!(t.kind, Kind::Aggregate { .. }) => match &t.name {
                Some(n) => self.scoped(id, n),
                None => self.type_name(Some(id)),
            },
            _ => self.type_name(Some(id)),
        }
    }

    /// A C++ type's name with the namespaces and classes it is declared in (`std::vector<int>`).
    fn scoped(&self, id: TypeId, name: &str) -> String {
        match self.scope_path(id) {
            Some(prefix) => format!("{prefix}::{name}"),
            None => name.to_string(),
        }
    }

    /// What goes before a C++ enumerator's name, as gdb prints it: the enum's own qualified
    /// name for an `enum class` (`geo::Color::`), else the scope the enum is declared in
    /// (`geo::`, whose scope its enumerators join); nothing for C, Rust or a global enum.
    pub(crate) fn enumerator_prefix(&self, ty: &Type) -> String {
        let Kind::Enum { scoped, .. } = &ty.kind else {
            return String::new();
        };
        if ty.c || ty.rust {
            return String::new();
        }
        let outer = self.scope_path(ty.id);
        match (scoped, &ty.name, outer) {
            (true, Some(name), Some(outer)) => format!("{outer}::{name}::"),
            (true, Some(name), None) => format!("{name}::"),
            (_, _, Some(outer)) => format!("{outer}::"),
            _ => String::new(),
        }
    }

    /// The namespaces and classes a C++ type (or member function declaration) is declared
    /// in (`std`), if any.
    pub(super) fn scope_path(&self, id: TypeId) -> Option<String> {
        let unit = self.unit_of(id.0)?;
        let key = unit.start();
        let cached = self
            .prefixes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .cloned();
        let map = cached.unwrap_or_else(|| {
            let mut map = HashMap::new();
            if let Ok(mut tree) = unit.unit.entries_tree(None) {
                if let Ok(root) = tree.root() {
                    let mut path = Vec::new();
                    record_scopes(&unit, root, &mut path, &mut map);
                }
            }
            let map = Arc::new(map);
            let mut all = self.prefixes.lock().unwrap_or_else(|e| e.into_inner());
            if all.len() >= MAX_PREFIX_UNITS {
                all.clear();
            }
            all.insert(key, map.clone());
            map
        });
        map.get(&id.0).cloned()
    }
}

/// Units whose type paths are kept at most.
const MAX_PREFIX_UNITS: usize = 1024;
/// Types given a path per unit at most.
const MAX_PREFIXED: usize = 1_000_000;

/// Records the namespace/class path of every type declared inside a namespace or a type.
fn record_scopes(
    unit: &UnitHandle,
    node: gimli::EntriesTreeNode<'_, '_, Reader>,
    path: &mut Vec<String>,
    map: &mut HashMap<usize, String>,
) {
    let mut children = node.children();
    while let Ok(Some(child)) = children.next() {
        let die = child.entry();
        let scope = matches!(
            die.tag(),
            gimli::DW_TAG_namespace
                | gimli::DW_TAG_structure_type
                | gimli::DW_TAG_class_type
                | gimli::DW_TAG_union_type
        );
        let is_type = scope
            || matches!(
                die.tag(),
                gimli::DW_TAG_enumeration_type | gimli::DW_TAG_typedef
            );
        // A member function's declaration too: an inline-only one (`Acc::add` at -O2) is
        // named from it (see `names`).
        let member_fn = die.tag() == gimli::DW_TAG_subprogram;
        if (is_type || member_fn) && !path.is_empty() && map.len() < MAX_PREFIXED {
            map.insert(unit.global(die.offset()), path.join("::"));
        }
        if scope && die.has_children() && path.len() < MAX_DEPTH {
            let name = unit.string(die, gimli::DW_AT_name).unwrap_or_else(|| {
                if die.tag() == gimli::DW_TAG_namespace {
                    "(anonymous namespace)".into()
                } else {
                    "(anonymous)".into()
                }
            });
            path.push(name);
            record_scopes(unit, child, path, map);
            path.pop();
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

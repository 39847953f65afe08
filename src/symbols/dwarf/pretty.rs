//! Printers: a value whose type a printer claims (a `std::vector`, a Rust `HashMap`) prints
//! as what it holds (`vector(5) [7, -3, 12, 40, 5]`) instead of its layout. The printers
//! themselves live with the front end (scry's are JavaScript, extensible by scripts); this
//! module is the boundary: the renderer asks the `Target`'s `Pretty` whether a type is
//! claimed and, if so, for the value's summary and children, which it renders like any
//! other value, nested printers included. The renderer stays pure: it never knows what a
//! printer is written in.

use super::render::{Limits, Out, Plain};
use super::tree::InfoTree;
use super::types::Type;
use super::value::{Target, Value};

/// What a printed value shows after its summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Only the summary (`unique_ptr(null)`).
    Summary,
    /// `summary [a, b, …]`.
    List,
    /// `summary {k: v, …}`.
    Map,
    /// `summary -> v` (what a smart pointer points at).
    Pointer,
    /// `summary(v)` (the one value a wrapper holds: `optional(42)`).
    Value,
}

/// A child of a printed value: a typed value (rendered, printers included) or text the
/// printer made.
#[derive(Clone, Debug, PartialEq)]
pub enum Child {
    Value(Value),
    Text(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Printed {
    pub summary: String,
    pub shape: Shape,
    /// Children in order, with their keys for a map.
    pub items: Vec<(Option<Child>, Child)>,
    /// Children not produced (the printer was asked for fewer), when it knows how many.
    pub more: Option<u64>,
    /// Children remain but the printer does not know how many.
    pub truncated: bool,
    /// What a text-like value (a `std::string`) is as plain data: its characters.
    pub text: Option<String>,
}

/// Why a printer gave no answer for a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrintError {
    NotInstalled,
    /// The printer threw, or answered with something that is no answer.
    Failed(String),
    /// The printer's own account of why it cannot print the value (`invalid: …`), whole.
    Said(String),
    /// A part the printer read has no value here, said as such a value says itself
    /// (`<optimized out>`): the container is not corrupt, so it prints as it is.
    Missing(String),
    /// The front end could not hand the value to its printers: the engine's words.
    Engine(String),
}

impl PrintError {
    /// The error where the value would be printed.
    pub(crate) fn bracketed(&self) -> String {
        match self {
            PrintError::Missing(s) => s.clone(),
            e => format!("<{e}>"),
        }
    }
}

impl std::fmt::Display for PrintError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrintError::NotInstalled => write!(f, "printers are not installed"),
            PrintError::Failed(why) => write!(f, "printer error: {why}"),
            PrintError::Said(s) | PrintError::Missing(s) | PrintError::Engine(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for PrintError {}

/// The front end's printers, as the renderer sees them.
pub trait Pretty {
    /// Whether a printer claims values of `ty` (named `name`, qualified with its
    /// namespaces and template arguments).
    fn claims(&self, ty: &Type, name: &str) -> bool;
    /// The value printed, at most `want` children produced. An error is the printer's own
    /// failure (`<printer error: …>`) or the container's (`<invalid: …>`), said whole.
    fn print(&self, v: &Value, want: usize) -> Result<Printed, PrintError>;
}

impl InfoTree {
    /// The printer's answer for `v` if its type is claimed.
    pub(super) fn printed(
        &self,
        v: &Value,
        ty: &Type,
        t: &dyn Target,
        want: usize,
    ) -> Option<Result<Printed, PrintError>> {
        let pretty = t.pretty()?;
        let name = self.qualified_type_name(ty.id);
        if !pretty.claims(ty, &name) {
            return None;
        }
        Some(pretty.print(v, want))
    }

    /// Writes `v` through its printer; false when no printer claims its type.
    pub(super) fn write_printed(
        &self,
        v: &Value,
        ty: &Type,
        t: &dyn Target,
        lim: &Limits,
        depth: usize,
        out: &mut Out,
    ) -> bool {
        let want = if depth >= lim.depth { 0 } else { lim.elements };
        let p = match self.printed(v, ty, t, want) {
            None => return false,
            Some(Ok(p)) => p,
            Some(Err(e)) => {
                out.push(&e.bracketed());
                return true;
            }
        };
        out.push(&p.summary);
        let (open, close) = match p.shape {
            Shape::Summary => return true,
            Shape::List => (" [", "]"),
            Shape::Map => (" {", "}"),
            Shape::Pointer => (" -> ", ""),
            Shape::Value => ("(", ")"),
        };
        if depth >= lim.depth {
            // Too deep for the children (a sequence's summary says how many there are); a
            // printer whose child is the value itself ends here too, never recursing.
            match p.shape {
                Shape::Pointer => out.push(" -> …"),
                Shape::Value => out.push("(…)"),
                _ => {}
            }
            return true;
        }
        out.push(open);
        for (i, (key, value)) in p.items.iter().enumerate() {
            if i > 0 {
                out.push(", ");
            }
            if let Some(k) = key {
                self.write_child(k, t, lim, depth, out);
                out.push(": ");
            }
            self.write_child(value, t, lim, depth, out);
            if out.full() {
                break;
            }
        }
        match (p.more, p.truncated) {
            (Some(n), _) if n > 0 => out.push(&format!(", … {n} more")),
            (_, true) => out.push(", …"),
            _ => {}
        }
        out.push(close);
        true
    }

    fn write_child(&self, c: &Child, t: &dyn Target, lim: &Limits, depth: usize, out: &mut Out) {
        match c {
            Child::Value(v) => self.write(v, t, lim, depth + 1, out),
            Child::Text(s) => out.push(s),
        }
    }

    /// `v` as plain data through its printer: a list, an object for a map whose keys are
    /// text or numbers (else a list of `[key, value]` pairs), what a pointer or wrapper
    /// holds, or the summary. `None` when no printer claims the type.
    pub(super) fn plain_printed(
        &self,
        v: &Value,
        ty: &Type,
        t: &dyn Target,
        lim: &Limits,
        mut child: impl FnMut(&Value) -> Plain,
    ) -> Option<Plain> {
        let want = (lim.elements).saturating_mul(32);
        let p = match self.printed(v, ty, t, want)? {
            Ok(p) => p,
            Err(e) => return Some(Plain::Missing(e.to_string())),
        };
        let mut plain = |c: &Child| match c {
            Child::Value(v) => child(v),
            Child::Text(s) => Plain::Str(s.clone()),
        };
        let more = p.more.unwrap_or(0);
        Some(match p.shape {
            Shape::Summary => Plain::Str(p.text.unwrap_or(p.summary)),
            Shape::List => Plain::List(p.items.iter().map(|(_, v)| plain(v)).collect(), more),
            Shape::Pointer | Shape::Value => match p.items.first() {
                Some((_, v)) => plain(v),
                None => Plain::Null,
            },
            Shape::Map => {
                let pairs: Vec<(Plain, Plain)> = p
                    .items
                    .iter()
                    .map(|(k, v)| (k.as_ref().map_or(Plain::Null, &mut plain), plain(v)))
                    .collect();
                let keyed = pairs.iter().all(|(k, _)| {
                    matches!(
                        k,
                        Plain::Str(_) | Plain::Int(_) | Plain::UInt(_) | Plain::Bool(_)
                    )
                });
                if keyed {
                    Plain::Obj(pairs.into_iter().map(|(k, v)| (key_text(&k), v)).collect())
                } else {
                    Plain::List(
                        pairs
                            .into_iter()
                            .map(|(k, v)| Plain::List(vec![k, v], 0))
                            .collect(),
                        more,
                    )
                }
            }
        })
    }
}

fn key_text(k: &Plain) -> String {
    match k {
        Plain::Str(s) => s.clone(),
        Plain::Int(n) => n.to_string(),
        Plain::UInt(n) => n.to_string(),
        Plain::Bool(b) => b.to_string(),
        _ => String::new(),
    }
}

/// Why a type has no `i`th template parameter with a type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ParamError {
    Void,
    /// Not a struct or class.
    NoParams {
        ty: String,
    },
    Untyped {
        name: String,
    },
    /// A template instance whose DWARF lists no parameters, and whose name's argument names
    /// no type here.
    NotRecorded {
        ty: String,
    },
    /// Fewer parameters than asked for; `wanted` counts from 1.
    TooFew {
        ty: String,
        has: usize,
        wanted: usize,
    },
}

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamError::Void => write!(f, "void has no template parameters"),
            ParamError::NoParams { ty } => write!(f, "{ty} has no template parameters"),
            ParamError::Untyped { name } => write!(f, "template parameter {name} has no type"),
            ParamError::NotRecorded { ty } => write!(
                f,
                "{ty} has no template parameters in its debug information"
            ),
            ParamError::TooFew { ty, has, wanted } => write!(
                f,
                "{ty} has {has} template parameter{}, not {wanted}",
                if *has == 1 { "" } else { "s" }
            ),
        }
    }
}

impl std::error::Error for ParamError {}

impl InfoTree {
    /// The `i`th template parameter of a struct or class type (`T` of `vector<T>`), for
    /// printers that read a container's elements.
    pub(crate) fn template_param(
        &self,
        ty: Option<super::types::TypeId>,
        i: usize,
    ) -> Result<Option<super::types::TypeId>, ParamError> {
        let t = self.strip(ty).ok_or(ParamError::Void)?;
        let t = self.complete(t);
        let super::types::Kind::Aggregate { params, .. } = &t.kind else {
            return Err(ParamError::NoParams {
                ty: self.type_name(ty),
            });
        };
        match params.get(i) {
            Some((_, Some(p))) => Ok(Some(*p)),
            Some((name, None)) => Err(ParamError::Untyped { name: name.clone() }),
            // GCC leaves the template parameters off some instances (`std::_List_iterator<int>`
            // has none): the argument as the type's name spells it, looked up by that name.
            None if params.is_empty() => {
                let name = self.qualified_type_name(t.id);
                let named = template_arguments(&name)
                    .and_then(|args| args.get(i).cloned())
                    .and_then(|arg| self.type_by_spec(&arg).ok().flatten());
                named.ok_or(ParamError::NotRecorded { ty: name })
            }
            None => Err(ParamError::TooFew {
                ty: self.type_name(ty),
                has: params.len(),
                wanted: i + 1,
            }),
        }
    }
}

impl InfoTree {
    /// What a printer is asked to print for `v`: the struct, class or union it is or that a
    /// C++ or Rust reference to it leads to, with its qualified type name. `None` for any
    /// other value (numbers, raw pointers, arrays).
    pub(crate) fn printable(&self, v: &Value, t: &dyn Target) -> Option<(String, Value)> {
        let mut v = v.clone();
        for _ in 0..4 {
            let ty = self.strip(v.ty)?;
            match &ty.kind {
                super::types::Kind::Aggregate { .. } => {
                    return Some((self.qualified_type_name(ty.id), v));
                }
                super::types::Kind::Reference { .. } => v = self.deref(&v, t).ok()?,
                super::types::Kind::Pointer(_) if super::rust::is_rust_ref(&ty) => {
                    v = self.deref(&v, t).ok()?
                }
                _ => return None,
            }
        }
        None
    }

    /// The base-class parts of a C++ object, with their type names, in declaration order.
    pub(crate) fn bases(&self, v: &Value) -> Vec<(String, Value)> {
        let Some(ty) = self.strip(v.ty) else {
            return Vec::new();
        };
        let ty = self.complete(ty);
        let super::types::Kind::Aggregate { members, .. } = &ty.kind else {
            return Vec::new();
        };
        members
            .iter()
            .filter(|m| m.base)
            .map(|m| (self.type_name(m.ty), self.member_value(v, m)))
            .collect()
    }
}

/// `bytes` (code units of `unit` bytes: 1, 2 or 4) as a quoted string, at most `max`
/// characters shown: how a printer shows a string's text the way scry shows C strings.
pub fn quoted(bytes: &[u8], unit: usize, max: usize) -> String {
    super::render::quoted_units(bytes, unit, max)
}

/// Vtables indexed at most (a hostile file cannot make the index unbounded).
const MAX_VTABLES: usize = 1 << 20;

impl InfoTree {
    /// The concrete type behind a Rust trait object whose vtable is at link-time address
    /// `vtable`: its name (`colls::Square` of `<colls::Square as colls::Shape>::{vtable}`)
    /// and type (the vtable type's `DW_AT_containing_type`). `None` when no vtable variable
    /// of this DWARF is there.
    pub(crate) fn dyn_type_at(
        &self,
        vtable: u64,
    ) -> Option<(String, Option<super::types::TypeId>)> {
        let index = self.vtables.get_or_init(|| {
            let mut out = Vec::new();
            for name in self.global_names_ending("::{vtable}") {
                for die in self.global_vars(&name) {
                    if let Some(addr) = self.fixed_address(die) {
                        out.push((addr, die));
                    }
                    if out.len() >= MAX_VTABLES {
                        break;
                    }
                }
            }
            out.sort_unstable();
            out
        });
        let i = index.partition_point(|&(a, _)| a < vtable);
        let &(addr, die) = index.get(i)?;
        if addr != vtable {
            return None;
        }
        let (unit, entry) = self.entry(die)?;
        let name = unit.string(&entry, gimli::DW_AT_name)?;
        let concrete = name
            .strip_prefix('<')
            .and_then(|n| n.split_once(" as "))
            .map(|(t, _)| t.to_string())?;
        let ty = unit
            .reference(&entry, gimli::DW_AT_type)
            .and_then(|t| self.entry(t))
            .and_then(|(tu, te)| tu.reference(&te, gimli::DW_AT_containing_type))
            .map(super::types::TypeId);
        Some((concrete, ty))
    }

    /// The address a variable's `DW_AT_location` names with a lone `DW_OP_addr`.
    fn fixed_address(&self, die: usize) -> Option<u64> {
        let (unit, entry) = self.entry(die)?;
        let attr = entry.attr_value(gimli::DW_AT_location)?;
        let expr = attr.exprloc_value()?;
        let mut ops = expr.operations(unit.unit.encoding());
        match ops.next().ok()?? {
            gimli::Operation::Address { address } => Some(address),
            _ => None,
        }
    }
}

/// The template arguments of a type name, top-level commas only: `map<K, pair<A, B>>` gives
/// `["K", "pair<A, B>"]`. `None` without a template list.
fn template_arguments(name: &str) -> Option<Vec<String>> {
    let open = name.find('<')?;
    let inner = name[open + 1..].strip_suffix('>')?;
    let mut args = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                args.push(inner[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    args.push(inner[start..].trim().to_string());
    Some(args)
}

#[cfg(test)]
mod template_tests {
    use super::{template_arguments, ParamError, PrintError};

    #[test]
    fn errors_read_as_before() {
        let one = ParamError::TooFew {
            ty: "box<int>".into(),
            has: 1,
            wanted: 2,
        };
        assert_eq!(one.to_string(), "box<int> has 1 template parameter, not 2");
        let two = ParamError::TooFew {
            ty: "map<int, int>".into(),
            has: 2,
            wanted: 3,
        };
        assert_eq!(
            two.to_string(),
            "map<int, int> has 2 template parameters, not 3"
        );
        assert_eq!(
            PrintError::Failed("bad result".into()).bracketed(),
            "<printer error: bad result>"
        );
        assert_eq!(
            PrintError::Missing("<optimized out>".into()).bracketed(),
            "<optimized out>"
        );
    }

    #[test]
    fn template_arguments_split_at_the_top_level() {
        assert_eq!(
            template_arguments("std::_List_iterator<int>").unwrap(),
            ["int"]
        );
        assert_eq!(
            template_arguments("std::map<int, std::pair<char, long> >").unwrap(),
            ["int", "std::pair<char, long>"]
        );
        assert!(template_arguments("Point").is_none());
    }
}

//! What printers ask of a value besides its members and elements: a template parameter's
//! type (`T` of `vector<T>`), the object a reference leads to with its qualified type name,
//! the base-class parts, a Rust trait object's concrete type, and a string's text quoted as
//! scry quotes C strings.

use super::render::quoted_units;
use super::rust::is_rust_ref;
use super::target::Target;
use super::tree::InfoTree;
use super::types::{Kind, TypeId};
use super::value::Value;

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
        ty: Option<TypeId>,
        i: usize,
    ) -> Result<Option<TypeId>, ParamError> {
        let t = self.strip(ty).ok_or(ParamError::Void)?;
        let t = self.complete(t);
        let Kind::Aggregate { params, .. } = &t.kind else {
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
                Kind::Aggregate { .. } => {
                    return Some((self.qualified_type_name(ty.id), v));
                }
                Kind::Reference { .. } => v = self.deref(&v, t).ok()?,
                Kind::Pointer(_) if is_rust_ref(&ty) => v = self.deref(&v, t).ok()?,
                _ => return None,
            }
        }
        None
    }

    /// The base-class parts of a C++ object, with their type names, in declaration order.
    pub(crate) fn bases(&self, v: &Value, t: &dyn Target) -> Vec<(String, Value)> {
        let Some(ty) = self.strip(v.ty) else {
            return Vec::new();
        };
        let ty = self.complete(ty);
        let Kind::Aggregate { members, .. } = &ty.kind else {
            return Vec::new();
        };
        members
            .iter()
            .filter(|m| m.base)
            .map(|m| (self.type_name(m.ty), self.member_value_in(v, m, t)))
            .collect()
    }

    /// Where the base class named `base` sits inside the class `derived`: its offset (bases
    /// of bases summed), `Err(())` when the way to it passes a virtual base (whose place is
    /// each object's own, in its vtable), `None` when it is no base of it. What C++'s
    /// base-to-derived `static_cast` subtracts.
    pub(crate) fn base_offset(
        &self,
        derived: Option<TypeId>,
        base: &str,
    ) -> Option<Result<u64, ()>> {
        let mut queue = std::collections::VecDeque::from([(derived, 0u64, false)]);
        // Bounded: a hostile file's bases may form a cycle.
        for _ in 0..256 {
            let (ty, at, through_virtual) = queue.pop_front()?;
            let Some(t) = self.strip(ty) else {
                continue;
            };
            let Kind::Aggregate { members, .. } = &self.complete(t).kind else {
                continue;
            };
            for m in members.iter().filter(|m| m.base) {
                let virtual_way = through_virtual || m.vbase.is_some();
                let offset = at.wrapping_add(m.offset);
                if self.type_name(m.ty) == base {
                    return Some(if virtual_way { Err(()) } else { Ok(offset) });
                }
                queue.push_back((m.ty, offset, virtual_way));
            }
        }
        None
    }
}

/// `bytes` (code units of `unit` bytes: 1, 2 or 4) as a quoted string, at most `max`
/// characters shown: how a printer shows a string's text the way scry shows C strings.
pub fn quoted(bytes: &[u8], unit: usize, max: usize, wide: bool) -> String {
    quoted_units(bytes, unit, max, wide)
}

/// Vtables indexed at most (a hostile file cannot make the index unbounded).
const MAX_VTABLES: usize = 1 << 20;

impl InfoTree {
    /// The concrete type behind a Rust trait object whose vtable is at link-time address
    /// `vtable`: its name (`colls::Square` of `<colls::Square as colls::Shape>::{vtable}`)
    /// and type (the vtable type's `DW_AT_containing_type`). `None` when no vtable variable
    /// of this DWARF is there.
    pub(crate) fn dyn_type_at(&self, vtable: u64) -> Option<(String, Option<TypeId>)> {
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
            .map(TypeId);
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
mod tests {
    use super::{template_arguments, ParamError};

    #[test]
    fn too_few_parameters_are_counted_in_words() {
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

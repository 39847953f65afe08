//! Globals and types by name: an index from names to DIE offsets, built the first time a
//! name is looked up by one raw pass over `.debug_info` that parses attributes only of the
//! DIEs it keeps (variables and type definitions outside functions). Names inside C++
//! namespaces and Rust modules are indexed both bare (`COUNTER`) and qualified
//! (`values::COUNTER`).

use std::collections::HashMap;
use std::sync::Arc;

use gimli::{AttributeValue, UnitOffset};

use super::tree::InfoTree;
use super::types::{Kind, Type, TypeId};
use crate::symbols::elf::fuzzy;

/// Namespace nesting followed at most.
const MAX_NESTING: usize = 32;
/// Declarations remembered per unit at most.
const MAX_DECLARED: usize = 1_000_000;

#[derive(Default)]
pub(crate) struct NameIndex {
    /// Variables with a location or a constant value (definitions), by name.
    vars: HashMap<String, Vec<usize>>,
    /// Complete struct, class, union and enum types, by name.
    types: HashMap<String, Vec<usize>>,
}

impl InfoTree {
    fn names(&self) -> &NameIndex {
        self.names.get_or_init(|| build(self))
    }

    /// DIEs of global or namespace-level variables called `name` (bare or qualified).
    pub fn global_vars(&self, name: &str) -> Vec<usize> {
        self.names().vars.get(name).cloned().unwrap_or_default()
    }

    /// The complete definition of a struct, union, class or enum named like `decl`.
    pub fn find_type_definition(&self, name: &str, decl: &Type) -> Option<Arc<Type>> {
        let candidates = self.names().types.get(name)?;
        candidates.iter().find_map(|&die| {
            let t = self.type_of(TypeId(die))?;
            let same_kind = std::mem::discriminant(&t.kind) == std::mem::discriminant(&decl.kind);
            let complete = !matches!(
                t.kind,
                Kind::Aggregate {
                    declaration: true,
                    ..
                }
            );
            (same_kind && complete).then_some(t)
        })
    }

    /// Global variable names close to `name` (for "did you mean"), best first.
    pub fn similar_globals(&self, name: &str, max: usize) -> Vec<String> {
        let limit = fuzzy::max_distance(name);
        let scored: Vec<(usize, String)> = self
            .names()
            .vars
            .keys()
            .filter_map(|k| fuzzy::bounded_distance(name, k, limit).map(|d| (d, k.clone())))
            .collect();
        fuzzy::best_k(scored, max)
            .into_iter()
            .map(|(_, n)| n)
            .collect()
    }
}

fn build(info: &InfoTree) -> NameIndex {
    let mut index = NameIndex::default();
    for start in info.unit_starts() {
        let Some(unit) = info.unit_starting_at(start) else {
            continue;
        };
        scan_unit(&unit, &mut index);
    }
    index
}

/// One raw pass over a unit: the path of enclosing namespaces is kept by depth; subprogram
/// bodies are passed over without parsing their attributes.
fn scan_unit(unit: &super::tree::UnitHandle, index: &mut NameIndex) {
    let Ok(mut cursor) = unit.unit.entries_raw(None) else {
        return;
    };
    // (depth, name) of each open namespace or type scope.
    let mut scopes: Vec<(isize, String)> = Vec::new();
    // Depth of a function being skipped: everything deeper is local.
    let mut inside_function: Option<isize> = None;
    // Qualified names of declarations (`extern`, static members): a C++ definition outside
    // its namespace or class names its declaration instead of a name of its own.
    let mut declared: HashMap<usize, String> = HashMap::new();
    while !cursor.is_empty() {
        let depth = cursor.next_depth();
        let offset = cursor.next_offset();
        let abbrev = match cursor.read_abbreviation() {
            Ok(Some(a)) => a,
            Ok(None) => continue,
            Err(_) => return,
        };
        while scopes.last().is_some_and(|(d, _)| *d >= depth) {
            scopes.pop();
        }
        if inside_function.is_some_and(|d| depth > d) {
            if cursor.skip_attributes(abbrev.attributes()).is_err() {
                return;
            }
            continue;
        }
        inside_function = None;
        let tag = abbrev.tag();
        let wanted = matches!(
            tag,
            gimli::DW_TAG_variable
                | gimli::DW_TAG_namespace
                | gimli::DW_TAG_structure_type
                | gimli::DW_TAG_class_type
                | gimli::DW_TAG_union_type
                | gimli::DW_TAG_enumeration_type
                | gimli::DW_TAG_subprogram
        );
        if !wanted {
            if cursor.skip_attributes(abbrev.attributes()).is_err() {
                return;
            }
            continue;
        }
        if tag == gimli::DW_TAG_subprogram {
            if abbrev.has_children() {
                inside_function = Some(depth);
            }
            if cursor.skip_attributes(abbrev.attributes()).is_err() {
                return;
            }
            continue;
        }
        if cursor.skip_attributes(abbrev.attributes()).is_err() {
            return;
        }
        let Ok(die) = unit.unit.entry(UnitOffset(offset.0)) else {
            continue;
        };
        let name = unit.string(&die, gimli::DW_AT_name);
        let global = unit.global(offset);
        match tag {
            gimli::DW_TAG_namespace => {
                if abbrev.has_children() && scopes.len() < MAX_NESTING {
                    scopes.push((depth, name.unwrap_or_else(|| "(anonymous)".into())));
                }
            }
            gimli::DW_TAG_variable => {
                let defined = die.attr_value(gimli::DW_AT_location).is_some()
                    || die.attr_value(gimli::DW_AT_const_value).is_some();
                if !defined {
                    if let Some(n) = name {
                        if declared.len() < MAX_DECLARED {
                            declared.insert(global, qualified(&scopes, &n));
                        }
                    }
                    continue;
                }
                if let Some(n) = name {
                    add(&mut index.vars, &scopes, &n, global);
                    continue;
                }
                // A C++ definition outside its namespace or class: the declaration's names.
                let Some(spec) = unit.reference(&die, gimli::DW_AT_specification) else {
                    continue;
                };
                let full = declared.get(&spec).cloned().or_else(|| {
                    let d = unit.entry_at(spec)?;
                    unit.string(&d, gimli::DW_AT_name)
                });
                if let Some(full) = full {
                    let bare = full.rsplit("::").next().unwrap_or(&full).to_string();
                    index.vars.entry(bare.clone()).or_default().push(global);
                    if full != bare {
                        index.vars.entry(full).or_default().push(global);
                    }
                }
            }
            _ => {
                let declaration = matches!(
                    die.attr_value(gimli::DW_AT_declaration),
                    Some(AttributeValue::Flag(true))
                );
                if let Some(n) = &name {
                    if !declaration {
                        add(&mut index.types, &scopes, n, global);
                    }
                    if abbrev.has_children() && scopes.len() < MAX_NESTING {
                        scopes.push((depth, n.clone()));
                    }
                }
            }
        }
    }
}

fn add(map: &mut HashMap<String, Vec<usize>>, scopes: &[(isize, String)], name: &str, die: usize) {
    map.entry(name.to_string()).or_default().push(die);
    if !scopes.is_empty() {
        map.entry(qualified(scopes, name)).or_default().push(die);
    }
}

/// `ns::Class::name` from the open scopes.
fn qualified(scopes: &[(isize, String)], name: &str) -> String {
    let mut q: Vec<&str> = scopes.iter().map(|(_, s)| s.as_str()).collect();
    q.push(name);
    q.join("::")
}

//! Globals and types by name: indexes from names to DIE offsets, each built the first time it
//! is needed by one pass over every unit's top level and namespaces (function bodies and the
//! insides of types are jumped over by their DW_AT_sibling). Names inside C++ namespaces and
//! Rust modules are indexed both bare (`COUNTER`) and qualified (`values::COUNTER`).
//!
//! A third index, of inlined functions' abstract instances, is built only when a breakpoint
//! names a function no symbol has (see `inlined`).
//!
//! Variables and types are separate indexes because a global look-up needs only the first:
//! a C++ unit declares thousands of types in `std` and a handful of variables, and reading
//! every type's name touches most of `.debug_str` (on the 45 MB benchmark binary the type
//! index was 11,500 names in 56,000 entries). Types are indexed when an incomplete type first
//! needs its definition. Units parsed for a pass are not kept: their abbreviation tables
//! are most of their size, and a later question re-parses the one unit it needs.

use std::collections::HashMap;
use std::sync::Arc;

use gimli::{AttributeValue, Section};

use super::indexes::ByName;
use super::tree::InfoTree;
use super::tree::UnitHandle;
use super::types::{Kind, Type, TypeId};
use crate::symbols::elf::{demangle, fuzzy};

/// What follows the last `::` outside template brackets: `f<ns::T>` of `ns::f<ns::T>`.
fn last_component(path: &str) -> &str {
    let bytes = path.as_bytes();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'<' | b'(' => depth += 1,
            b'>' | b')' => depth = depth.saturating_sub(1),
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => start = i + 2,
            _ => {}
        }
    }
    path.get(start..).unwrap_or(path)
}

/// Namespace nesting followed at most.
const MAX_NESTING: usize = 32;
/// Declarations remembered per unit at most.
const MAX_DECLARED: usize = 1_000_000;

/// What one pass collects.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    Vars,
    Types,
    Inlines,
    TypeNames,
}

impl InfoTree {
    fn vars(&self) -> &ByName {
        self.names.vars.get_or_init(|| build(self, Pass::Vars))
    }

    fn types(&self) -> &ByName {
        self.names.types.get_or_init(|| build(self, Pass::Types))
    }

    /// The DIEs of the types named `name` (a struct, class, union, enum, typedef or base
    /// type, complete definitions before anything else), in unit order.
    pub(crate) fn types_named(&self, name: &str) -> Vec<usize> {
        if self.names.type_names.get().is_none() && !self.may_name(name) {
            return Vec::new();
        }
        self.names
            .type_names
            .get_or_init(|| build(self, Pass::TypeNames))
            .get(name)
            .cloned()
            .unwrap_or_default()
    }

    /// DIEs of the abstract instances of inlined functions called `name` (bare or
    /// qualified).
    pub(crate) fn inline_functions(&self, name: &str) -> Vec<usize> {
        if self.names.inlines.get().is_none() && !self.may_name(name) {
            return Vec::new();
        }
        self.names
            .inlines
            .get_or_init(|| build(self, Pass::Inlines))
            .get(name)
            .cloned()
            .unwrap_or_default()
    }

    /// Whether a DIE of this file could be named `name`: the name's last component (what a
    /// DW_AT_name holds), NUL-terminated, occurs in a string section or, for the short names
    /// compilers write inline, in `.debug_info`. A name none holds is nothing of this file,
    /// and a breakpoint on a typo then costs a search of the bytes, not a pass over every
    /// unit (0.1 s on the 45 MB benchmark program, more with libc's debug file). Strings may be
    /// tail-merged (`sq` as the end of `xsq`), so a match anywhere counts.
    fn may_name(&self, name: &str) -> bool {
        let mut needle = last_component(name).as_bytes().to_vec();
        needle.push(0);
        let finder = memchr::memmem::Finder::new(&needle);
        let in_info = {
            let info = self.dwarf.debug_info.reader();
            let found = finder.find(info.bytes()).is_some();
            // Read once, as the name passes do: its pages leave the process again.
            info.release(0..info.bytes().len());
            found
        };
        in_info
            || finder.find(self.dwarf.debug_str.reader().bytes()).is_some()
            || finder
                .find(self.dwarf.debug_line_str.reader().bytes())
                .is_some()
    }

    /// DIEs of global or namespace-level variables called `name` (bare or qualified).
    pub(crate) fn global_vars(&self, name: &str) -> Vec<usize> {
        self.vars().get(name).cloned().unwrap_or_default()
    }

    /// The definition of the static data member declared at `decl` and called `qualified`
    /// (`ns::Cfg::shared`): the variable whose DW_AT_specification is that declaration, else
    /// (a class in a header, its static defined in another unit) one of that name that
    /// completes another declaration. Costs the variable index, built on first use.
    pub(crate) fn static_definition(&self, decl: usize, qualified: &str) -> Option<usize> {
        let candidates = self.vars().get(qualified)?;
        let mut other = None;
        for &die in candidates.iter().take(64) {
            let Some((unit, entry)) = self.entry(die) else {
                continue;
            };
            match unit.reference(&entry, gimli::DW_AT_specification) {
                Some(spec) if spec == decl => return Some(die),
                Some(_) if other.is_none() => other = Some(die),
                _ => {}
            }
        }
        other
    }

    /// The complete definition of a struct, union, class or enum named like `decl`.
    pub(crate) fn find_type_definition(&self, name: &str, decl: &Type) -> Option<Arc<Type>> {
        let candidates = self.types().get(name)?;
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
    /// The names of global variables that end with `suffix`.
    pub(crate) fn global_names_ending(&self, suffix: &str) -> Vec<String> {
        self.vars()
            .keys()
            .filter(|k| k.ends_with(suffix))
            .cloned()
            .collect()
    }

    /// The globals and static members whose qualified name is `name` but for spaces
    /// (GCC names `Box<std::pair<int, char> >` what clang and a user write `...char>>`) or
    /// ends with `::name` so (`Worker::created` of `sched::Worker::created`, written under
    /// `using namespace sched;`), at most `max`. A scan of the index: asked only when the
    /// exact name is none.
    pub(crate) fn globals_like(&self, name: &str, max: usize) -> Vec<String> {
        let spaced = |c: &char| !c.is_whitespace();
        let bare: Vec<char> = name.chars().filter(spaced).collect();
        self.vars()
            .keys()
            .filter(|k| {
                let mut back = k.chars().rev().filter(spaced);
                if !bare.iter().rev().all(|c| back.next() == Some(*c)) {
                    return false;
                }
                // All of it, or a whole scope's worth more.
                match back.next() {
                    None => true,
                    Some(':') => back.next() == Some(':'),
                    Some(_) => false,
                }
            })
            .take(max)
            .cloned()
            .collect()
    }

    pub(crate) fn similar_globals(&self, name: &str, max: usize) -> Vec<String> {
        let limit = fuzzy::max_distance(name);
        let scored: Vec<(usize, String)> = self
            .vars()
            .keys()
            .filter_map(|k| fuzzy::bounded_distance(name, k, limit).map(|d| (d, k.clone())))
            .collect();
        fuzzy::best_k(scored, max)
            .into_iter()
            .map(|(_, n)| n)
            .collect()
    }
}

/// Threads a pass uses at most.
const MAX_THREADS: usize = 4;

/// One pass over every unit, split into contiguous runs of units walked on separate threads
/// (a large C++ program has tens of megabytes of DWARF and units are independent); the
/// partial indexes are merged in unit order, so each name's DIEs come out in the order a
/// single walk would list them.
fn build(info: &InfoTree, pass: Pass) -> ByName {
    let starts = info.unit_starts();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_THREADS)
        .min(starts.len().max(1));
    let walk = |chunk: &[usize]| {
        let mut index = ByName::new();
        for &start in chunk {
            if let Some(unit) = info.unit_for_scan(start) {
                scan_unit(&unit, pass, &mut index);
            }
            info.release_unit(start);
        }
        index
    };
    if threads < 2 {
        let mut index = walk(&starts);
        name_by_origin(info, &mut index);
        name_by_specification(info, &mut index);
        return index;
    }
    let chunk = starts.len().div_ceil(threads);
    let parts: Vec<ByName> = std::thread::scope(|scope| {
        let handles: Vec<_> = starts
            .chunks(chunk)
            .map(|c| scope.spawn(move || walk(c)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let mut parts = parts.into_iter();
    let mut index = parts.next().unwrap_or_default();
    for part in parts {
        for (name, dies) in part {
            index.entry(name).or_default().extend(dies);
        }
    }
    name_by_origin(info, &mut index);
    name_by_specification(info, &mut index);
    index
}

/// Where the walk keeps a nameless definition under its abstract origin's offset.
const ORIGIN_KEY: char = '\u{1}';
/// Where the walk keeps a nameless inline function under its declaration's offset.
const SPEC_KEY: char = '\u{2}';

/// Files the inline functions known only by their declaration in a class (`SPEC_KEY`
/// entries) under its name and its qualified name (`add`, `Acc::add`).
fn name_by_specification(info: &InfoTree, index: &mut ByName) {
    for (spec, dies) in take_pending(index, SPEC_KEY) {
        let Some((unit, entry)) = info.entry(spec) else {
            continue;
        };
        let Some(name) = unit.string(&entry, gimli::DW_AT_name) else {
            continue;
        };
        if let Some(scope) = info.scope_path(super::types::TypeId(spec)) {
            index
                .entry(format!("{scope}::{name}"))
                .or_default()
                .extend(dies.iter().copied());
        }
        index.entry(name).or_default().extend(dies);
    }
}

/// The DIEs the walk kept under `key` and an offset (a DIE that names them), by that
/// offset, taken out of the index.
fn take_pending(index: &mut ByName, key: char) -> Vec<(usize, Vec<usize>)> {
    let pending: Vec<String> = index
        .keys()
        .filter(|k| k.starts_with(key))
        .cloned()
        .collect();
    pending
        .into_iter()
        .filter_map(|k| {
            let dies = index.remove(&k)?;
            let at = k[key.len_utf8()..].parse::<usize>().ok()?;
            Some((at, dies))
        })
        .collect()
}

/// Files the definitions the walk could not name (`ORIGIN_KEY` entries) under their
/// abstract origin's name, read now that every unit is reachable.
fn name_by_origin(info: &InfoTree, index: &mut ByName) {
    for (origin, dies) in take_pending(index, ORIGIN_KEY) {
        let Some((unit, entry)) = info.entry(origin) else {
            continue;
        };
        if let (Some(name), _) = info.name_and_type(&unit, &entry) {
            index.entry(name).or_default().extend(dies);
        }
    }
}

/// One walk over a unit's top level and the namespaces in it; everything else (function
/// bodies, the members of types) is passed over by its DW_AT_sibling without being parsed.
fn scan_unit(unit: &UnitHandle, pass: Pass, index: &mut ByName) {
    let Ok(mut tree) = unit.unit.entries_tree(None) else {
        return;
    };
    let Ok(root) = tree.root() else { return };
    let mut walk = Walk {
        unit,
        pass,
        index,
        scopes: Vec::new(),
        declared: HashMap::new(),
    };
    walk.children(root);
}

struct Walk<'a> {
    unit: &'a UnitHandle,
    pass: Pass,
    index: &'a mut ByName,
    /// The namespaces around the DIEs being read.
    scopes: Vec<String>,
    /// Qualified names of variable declarations (`extern`, a namespace's declaration): a
    /// C++ definition outside its namespace names its declaration instead of a name of its
    /// own.
    declared: HashMap<usize, String>,
}

impl Walk<'_> {
    fn children(&mut self, node: gimli::EntriesTreeNode<'_, '_, super::tree::Reader>) {
        let unit = self.unit;
        let mut children = node.children();
        while let Ok(Some(child)) = children.next() {
            let die = child.entry();
            let global = unit.global(die.offset());
            match die.tag() {
                gimli::DW_TAG_namespace if self.scopes.len() < MAX_NESTING => {
                    let name = unit
                        .string(die, gimli::DW_AT_name)
                        .unwrap_or_else(|| "(anonymous namespace)".into());
                    self.scopes.push(name);
                    self.children(child);
                    self.scopes.pop();
                }
                gimli::DW_TAG_variable if self.pass == Pass::Vars => self.variable(die, global),
                gimli::DW_TAG_subprogram
                    if self.pass == Pass::Inlines
                        && die.attr_value(gimli::DW_AT_inline).is_some() =>
                {
                    if let Some(n) = unit.string(die, gimli::DW_AT_name) {
                        add(self.index, &self.scopes, &n, global);
                    } else if let Some(spec) = unit.reference(die, gimli::DW_AT_specification) {
                        // A member function defined outside its class (`Acc::add` inlined
                        // everywhere at -O2): named by its declaration in the class, once
                        // every unit is reachable.
                        let key = format!("{SPEC_KEY}{spec}");
                        self.index.entry(key).or_default().push(global);
                    }
                }
                // Complete named types: the Types pass takes aggregates and enums (what a
                // declaration is completed from), TypeNames every type a user may write.
                tag @ (gimli::DW_TAG_structure_type
                | gimli::DW_TAG_class_type
                | gimli::DW_TAG_union_type
                | gimli::DW_TAG_enumeration_type
                | gimli::DW_TAG_typedef
                | gimli::DW_TAG_base_type)
                    if self.pass == Pass::TypeNames
                        || (self.pass == Pass::Types
                            && !matches!(tag, gimli::DW_TAG_typedef | gimli::DW_TAG_base_type)) =>
                {
                    let declaration = matches!(
                        die.attr_value(gimli::DW_AT_declaration),
                        Some(AttributeValue::Flag(true))
                    );
                    if let Some(n) = unit.string(die, gimli::DW_AT_name) {
                        if !declaration {
                            add(self.index, &self.scopes, &n, global);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn variable(&mut self, die: &super::tree::Die, global: usize) {
        let unit = self.unit;
        let name = unit.string(die, gimli::DW_AT_name);
        let defined = die.attr_value(gimli::DW_AT_location).is_some()
            || die.attr_value(gimli::DW_AT_const_value).is_some();
        if !defined {
            let declaration = matches!(
                die.attr_value(gimli::DW_AT_declaration),
                Some(AttributeValue::Flag(true))
            );
            if let Some(n) = name {
                // A definition the optimizer dropped (a static only ever stored to) has
                // neither a location nor DW_AT_declaration: it exists, its value is gone,
                // as gdb says. Readers prefer a definition with a location over it.
                if !declaration {
                    add(self.index, &self.scopes, &n, global);
                } else if self.declared.len() < MAX_DECLARED {
                    self.declared.insert(global, qualified(&self.scopes, &n));
                }
            }
            return;
        }
        if let Some(n) = name {
            add(self.index, &self.scopes, &n, global);
            return;
        }
        // A definition outside its namespace or class: its declaration's names. A static
        // member's declaration sits inside its class, which this walk does not enter: its
        // linkage name says where it belongs (`_ZN3geo6Square4madeE`).
        let Some(spec) = unit.reference(die, gimli::DW_AT_specification) else {
            // LTO's concrete copy of a global (`_PyRuntime` of python3.11): no name, an
            // abstract origin (often in another unit) that has it; named after the walk.
            if let Some(origin) = unit.reference(die, gimli::DW_AT_abstract_origin) {
                self.index
                    .entry(format!("{ORIGIN_KEY}{origin}"))
                    .or_default()
                    .push(global);
            }
            return;
        };
        let demangled = |d: &super::tree::Die| {
            unit.string(d, gimli::DW_AT_linkage_name)
                .and_then(|l| demangle::demangle(&l))
        };
        // DWARF 4 puts the linkage name on the definition, DWARF 5 on the declaration.
        let full = self
            .declared
            .get(&spec)
            .cloned()
            .or_else(|| demangled(die))
            .or_else(|| {
                let d = unit.entry_at(spec)?;
                demangled(&d).or_else(|| unit.string(&d, gimli::DW_AT_name))
            });
        if let Some(full) = full {
            let bare = full.rsplit("::").next().unwrap_or(&full).to_string();
            self.index.entry(bare.clone()).or_default().push(global);
            if full != bare {
                self.index.entry(full).or_default().push(global);
            }
        }
    }
}

fn add(map: &mut ByName, scopes: &[String], name: &str, die: usize) {
    map.entry(name.to_string()).or_default().push(die);
    if !scopes.is_empty() {
        map.entry(qualified(scopes, name)).or_default().push(die);
    }
}

/// `ns::Class::name` from the open scopes.
fn qualified(scopes: &[String], name: &str) -> String {
    let mut q: Vec<&str> = scopes.iter().map(String::as_str).collect();
    q.push(name);
    q.join("::")
}

#[cfg(test)]
mod tests {
    use super::last_component;
    use crate::symbols::dwarf::DwarfInfo;
    use crate::symbols::elf::ElfImage;
    use crate::symbols::testutil::compile;

    /// A name the file's strings do not hold is answered without the pass over every unit;
    /// one they hold (short enough to be written inline in `.debug_info`, as `sq` is) is found.
    #[test]
    fn a_name_no_string_holds_skips_the_inline_pass() {
        let exe = compile(
            "inline-names",
            "static inline int sq(int x) { return x * x; }\n\
             int main(int argc, char **argv) { (void)argv; return sq(argc); }\n",
            false,
            &["-g", "-O2"],
        );
        let img = ElfImage::load(&exe).unwrap();
        let dwarf = DwarfInfo::from_elf(img.shared_bytes()).unwrap();
        let tree = &dwarf.tree;
        assert!(tree.inline_functions("no_such_function_xyz").is_empty());
        assert!(
            tree.names.inlines.get().is_none(),
            "the pass ran for a typo"
        );
        assert_eq!(tree.inline_functions("sq").len(), 1);
        assert!(tree.names.inlines.get().is_some());
    }

    #[test]
    fn the_last_component_is_what_a_die_names() {
        assert_eq!(last_component("sq"), "sq");
        assert_eq!(last_component("ns::Foo::bar"), "bar");
        assert_eq!(last_component("ns::f<ns::T>"), "f<ns::T>");
        assert_eq!(
            last_component("ns::f<std::pair<a::b, c>>"),
            "f<std::pair<a::b, c>>"
        );
        assert_eq!(last_component("ns::"), "");
    }
}

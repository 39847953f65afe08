//! What is in scope at a pc: the function that physically holds it, the calls inlined into
//! it down to pc (each an unwind row of its own), and the parameters and variables of each,
//! with names and types taken through `DW_AT_abstract_origin` and `DW_AT_specification` (an
//! out-of-line or inlined copy of a function often has nothing but a location and a pointer
//! to the abstract DIE).

use std::sync::Arc;

use gimli::UnitOffset;

use super::indexes::FunctionIndex;
use super::tree::{Die, InfoTree, UnitHandle};
use super::types::TypeId;

/// Blocks nested in one function, and inlined calls in one another, at most: as deep as a
/// unit may nest DIEs at all (`nesting`), far past what compilers write.
const MAX_DEPTH: usize = 512;
/// Variables of one scope chain at most.
const MAX_VARS: usize = 10_000;
const MAX_ORIGIN_HOPS: usize = 8;
/// Functions indexed per unit at most.
const MAX_FUNCTIONS: usize = 1_000_000;

/// One parameter or variable.
#[derive(Clone, Debug)]
pub struct VarDecl {
    /// The DIE that says where it is (the concrete one); the abstract DIE when a parameter of
    /// an inlined call has no concrete DIE (then it has no location: optimized out).
    pub die: usize,
    pub name: String,
    pub ty: Option<TypeId>,
    pub param: bool,
    /// Nesting of lexical blocks below the function: an inner variable shadows an outer one
    /// of the same name.
    pub block_depth: usize,
}

/// A function at pc, or a call inlined into it.
#[derive(Clone, Debug)]
pub struct Scope {
    pub die: usize,
    pub name: Option<String>,
    pub inlined: bool,
    pub vars: Vec<VarDecl>,
}

/// The physical function at a pc and the calls inlined into it, outermost first.
#[derive(Clone)]
pub(crate) struct ScopeChain {
    pub unit: UnitHandle,
    /// The subprogram DIE (its frame base applies to every scope of the chain).
    pub function: usize,
    pub chain: Vec<Scope>,
}

impl InfoTree {
    /// Every subprogram of a unit with code, by address (built once per unit).
    fn functions(&self, unit: &UnitHandle) -> Arc<FunctionIndex> {
        let cache = &self.functions;
        let key = unit.start();
        if let Some(ix) = cache
            .by_unit
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return ix.clone();
        }
        let mut out = Vec::new();
        if let Ok(mut tree) = unit.unit.entries_tree(None) {
            if let Ok(root) = tree.root() {
                // Only GNU C nests functions with code in functions: elsewhere a function's
                // body is jumped over.
                let c = super::tree::is_c(unit.language());
                index_functions(unit, root, 0, c, &mut out);
            }
        }
        out.sort_unstable();
        let ix = Arc::new(out);
        cache
            .by_unit
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, ix.clone());
        ix
    }

    /// The innermost subprogram of `unit` whose code holds `pc`.
    pub(crate) fn function_at(&self, unit: &UnitHandle, pc: u64) -> Option<usize> {
        let ix = self.functions(unit);
        let end = ix.partition_point(|(lo, _, _)| *lo <= pc);
        ix[..end]
            .iter()
            .filter(|(lo, hi, _)| *lo <= pc && pc < *hi)
            .min_by_key(|(lo, hi, _)| hi - lo)
            .map(|(_, _, die)| *die)
    }

    /// The function at `pc` in `unit` and the calls inlined into it, with their variables.
    pub(crate) fn scopes(&self, unit: &UnitHandle, pc: u64) -> Option<ScopeChain> {
        let function = self.function_at(unit, pc)?;
        let die = unit.entry_at(function)?;
        let mut chain = Vec::new();
        let mut scope = Scope {
            die: function,
            name: self.die_name(unit, &die),
            inlined: false,
            vars: Vec::new(),
        };
        let mut next = self.collect(unit, function, pc, 0, &mut scope.vars);
        self.add_missing_params(unit, &die, &mut scope.vars);
        chain.push(scope);
        while let Some(inl) = next.take() {
            if chain.len() >= MAX_DEPTH {
                break;
            }
            let Some(die) = unit.entry_at(inl) else { break };
            let mut scope = Scope {
                die: inl,
                name: self.die_name(unit, &die),
                inlined: true,
                vars: Vec::new(),
            };
            next = self.collect(unit, inl, pc, 0, &mut scope.vars);
            self.add_missing_params(unit, &die, &mut scope.vars);
            chain.push(scope);
        }
        Some(ScopeChain {
            unit: unit.clone(),
            function,
            chain,
        })
    }

    /// Gathers the variables of the scope at `at` visible at pc (descending into lexical
    /// blocks that hold pc, outer ones first); returns the inlined call holding pc, if any.
    /// Iterative: every Rust `let` opens a block, so a long function nests hundreds deep
    /// (a recursion bounded at 64 levels lost every local after the 64th `let`).
    fn collect(
        &self,
        unit: &UnitHandle,
        at: usize,
        pc: u64,
        depth: usize,
        out: &mut Vec<VarDecl>,
    ) -> Option<usize> {
        let mut inlined = None;
        // Blocks still to read, the next on top (so in the order recursion would read them).
        let mut pending = vec![(at, depth)];
        while let Some((at, depth)) = pending.pop() {
            if depth > MAX_DEPTH {
                continue;
            }
            let Some(off) = at.checked_sub(unit.start()).map(UnitOffset) else {
                continue;
            };
            let Ok(mut tree) = unit.unit.entries_tree(Some(off)) else {
                continue;
            };
            let Ok(root) = tree.root() else { continue };
            let mut children = root.children();
            let mut blocks = Vec::new();
            while let Ok(Some(child)) = children.next() {
                let entry = child.entry();
                let global = unit.global(entry.offset());
                match entry.tag() {
                    gimli::DW_TAG_formal_parameter | gimli::DW_TAG_variable => {
                        if out.len() >= MAX_VARS {
                            continue;
                        }
                        if let Some(v) = self.var_decl(unit, entry, global, depth) {
                            out.push(v);
                        }
                    }
                    gimli::DW_TAG_lexical_block if contains(unit, entry, pc) => {
                        blocks.push(global);
                    }
                    gimli::DW_TAG_inlined_subroutine
                        if inlined.is_none() && contains(unit, entry, pc) =>
                    {
                        inlined = Some(global);
                    }
                    _ => {}
                }
            }
            pending.extend(blocks.into_iter().rev().map(|b| (b, depth + 1)));
        }
        inlined
    }

    fn var_decl(
        &self,
        unit: &UnitHandle,
        die: &Die,
        global: usize,
        depth: usize,
    ) -> Option<VarDecl> {
        let (name, ty) = self.name_and_type(unit, die);
        Some(VarDecl {
            die: global,
            name: name?,
            ty,
            param: die.tag() == gimli::DW_TAG_formal_parameter,
            block_depth: depth,
        })
    }

    /// A DIE's name and type, following abstract origins and specifications.
    pub(crate) fn name_and_type(
        &self,
        unit: &UnitHandle,
        die: &Die,
    ) -> (Option<String>, Option<TypeId>) {
        let mut name = unit.string(die, gimli::DW_AT_name);
        let mut ty = unit.reference(die, gimli::DW_AT_type).map(TypeId);
        let mut next = origin(unit, die);
        for _ in 0..MAX_ORIGIN_HOPS {
            if name.is_some() && ty.is_some() {
                break;
            }
            let Some(at) = next else { break };
            let Some((u, d)) = self.entry(at) else { break };
            name = name.or_else(|| u.string(&d, gimli::DW_AT_name));
            ty = ty.or_else(|| u.reference(&d, gimli::DW_AT_type).map(TypeId));
            next = origin(&u, &d);
        }
        (name, ty)
    }

    /// Whether a variable's name is visible to other units (`DW_AT_external`, on the DIE or
    /// on the declaration it completes).
    pub(crate) fn is_external(&self, unit: &UnitHandle, die: &Die) -> bool {
        if unit.flag(die, gimli::DW_AT_external) {
            return true;
        }
        let mut next = origin(unit, die);
        for _ in 0..MAX_ORIGIN_HOPS {
            let Some(at) = next else { break };
            let Some((u, d)) = self.entry(at) else { break };
            if u.flag(&d, gimli::DW_AT_external) {
                return true;
            }
            next = origin(&u, &d);
        }
        false
    }

    fn die_name(&self, unit: &UnitHandle, die: &Die) -> Option<String> {
        self.name_and_type(unit, die).0
    }

    /// A copy's parameters in the order the abstract function declares them (a copy's DIEs
    /// may come in another order), with the ones it does not mention added: they were
    /// optimized away, and are listed so (as debuggers do) rather than silently missing; the
    /// same for the function's own variables, after the copy's.
    fn add_missing_params(&self, unit: &UnitHandle, die: &Die, vars: &mut Vec<VarDecl>) {
        let Some(at) = origin(unit, die) else { return };
        let Some((u, _)) = self.entry(at) else { return };
        let Some(off) = at.checked_sub(u.start()) else {
            return;
        };
        let Ok(mut tree) = u.unit.entries_tree(Some(UnitOffset(off))) else {
            return;
        };
        let Ok(root) = tree.root() else { return };
        let mut declared: Vec<VarDecl> = Vec::new();
        let mut locals: Vec<VarDecl> = Vec::new();
        let mut children = root.children();
        while let Ok(Some(child)) = children.next() {
            let entry = child.entry();
            let list = match entry.tag() {
                gimli::DW_TAG_formal_parameter => &mut declared,
                gimli::DW_TAG_variable => &mut locals,
                _ => continue,
            };
            if list.len() >= MAX_VARS {
                continue;
            }
            let global = u.global(entry.offset());
            if let Some(v) = self.var_decl(&u, entry, global, 0) {
                list.push(v);
            }
        }
        // The function's own variables the copy does not mention were optimized away
        // entirely: listed so (gdb lists them `<optimized out>`), never "no variable".
        let origins: Vec<usize> = vars
            .iter()
            .filter_map(|v| self.entry(v.die).and_then(|(vu, vd)| origin(&vu, &vd)))
            .collect();
        let missing_locals: Vec<VarDecl> = locals
            .into_iter()
            .filter(|l| !origins.contains(&l.die))
            .collect();
        if declared.is_empty() {
            vars.extend(missing_locals);
            return;
        }
        // Each parameter of the copy, by the abstract parameter it stands for.
        let mut copies: Vec<Option<VarDecl>> = vec![None; declared.len()];
        let mut rest = Vec::new();
        for v in vars.drain(..) {
            let slot = v.param.then(|| {
                let o = self.entry(v.die).and_then(|(vu, vd)| origin(&vu, &vd))?;
                declared.iter().position(|d| d.die == o)
            });
            match slot.flatten() {
                Some(i) if copies[i].is_none() => copies[i] = Some(v),
                _ => rest.push(v),
            }
        }
        for (copy, decl) in copies.into_iter().zip(declared) {
            vars.push(copy.unwrap_or(decl));
        }
        vars.extend(rest);
        vars.extend(missing_locals);
    }
}

/// Adds the code ranges of the subprograms among `node`'s children, looking inside
/// namespaces and types (C++ and Rust nest functions in those), inside function bodies for
/// the types declared there (a C++ lambda's `operator()` is a member of a class local to
/// the function that writes it) and, for GNU C, for nested functions; everything else is
/// jumped over by its DW_AT_sibling.
fn index_functions(
    unit: &UnitHandle,
    node: gimli::EntriesTreeNode<'_, '_, super::tree::Reader>,
    depth: usize,
    nested_functions: bool,
    out: &mut FunctionIndex,
) {
    index_in(unit, node, depth, nested_functions, false, out)
}

/// `index_functions` of `node`'s children; `in_body`: `node` is a function body (or a block
/// in one), whose own subprograms count only as GNU C nested functions.
fn index_in(
    unit: &UnitHandle,
    node: gimli::EntriesTreeNode<'_, '_, super::tree::Reader>,
    depth: usize,
    nested_functions: bool,
    in_body: bool,
    out: &mut FunctionIndex,
) {
    let mut children = node.children();
    while let Ok(Some(child)) = children.next() {
        if out.len() >= MAX_FUNCTIONS {
            return;
        }
        let die = child.entry();
        let tag = die.tag();
        if tag == gimli::DW_TAG_subprogram && (!in_body || nested_functions) {
            let global = unit.global(die.offset());
            if let Ok(mut ranges) = unit.unit_ref().die_ranges(die) {
                let mut n = 0;
                while let Ok(Some(r)) = ranges.next() {
                    n += 1;
                    if r.begin < r.end {
                        out.push((r.begin, r.end, global));
                    }
                    if n > 1024 {
                        break;
                    }
                }
            }
        }
        let (nests, body) = match tag {
            gimli::DW_TAG_namespace
            | gimli::DW_TAG_structure_type
            | gimli::DW_TAG_class_type
            | gimli::DW_TAG_union_type => (true, false),
            gimli::DW_TAG_subprogram | gimli::DW_TAG_lexical_block => (true, true),
            _ => (false, false),
        };
        if nests && die.has_children() && depth < MAX_DEPTH {
            index_in(unit, child, depth + 1, nested_functions, body, out);
        }
    }
}

/// Where a DIE's name and type come from when it does not say them itself.
fn origin(unit: &UnitHandle, die: &Die) -> Option<usize> {
    unit.reference(die, gimli::DW_AT_abstract_origin)
        .or_else(|| unit.reference(die, gimli::DW_AT_specification))
}

/// Whether a DIE's code ranges hold `pc`.
pub(crate) fn contains(unit: &UnitHandle, die: &Die, pc: u64) -> bool {
    let Ok(mut ranges) = unit.unit_ref().die_ranges(die) else {
        return false;
    };
    let mut seen = 0;
    while let Ok(Some(r)) = ranges.next() {
        seen += 1;
        if r.begin <= pc && pc < r.end {
            return true;
        }
        if seen > 1024 {
            break;
        }
    }
    false
}

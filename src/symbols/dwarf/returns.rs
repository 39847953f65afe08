//! Where the x86-64 psABI puts a function's returned aggregate: in memory (the caller's
//! buffer, whose address comes back in rax) or in registers, one class per eightbyte
//! (INTEGER: rax then rdx; SSE: xmm0 then xmm1). Pure: types in, an answer out; the session
//! reads the registers. Where the rule cannot be applied with certainty (x87 `long double`
//! members, bit-fields) the answer is `None`, never a guess. rustc's own ABI for small
//! aggregates is `rust_returns.rs`'s.

use super::tree::InfoTree;
use super::types::{Encoding, Kind, TypeId};

/// The psABI's limit for returning in registers: two eightbytes.
const MAX_IN_REGISTERS: u64 = 16;
/// Leaves (scalars) looked at per type at most.
const MAX_LEAVES: usize = 256;
/// `DW_AT_calling_convention` values of a type (DWARF 5).
const DW_CC_PASS_BY_REFERENCE: u64 = 4;
/// `DW_AT_calling_convention` of a function: it does not follow the ABI (an optimizer
/// dropped its return value or changed how it hands it back).
const DW_CC_NOCALL: u64 = 3;
/// `DW_AT_defaulted`: `= default` inside the class (trivial if its members' are).
const DW_DEFAULTED_IN_CLASS: u64 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Eightbyte {
    Integer,
    Sse,
}

/// Bytes `offset..offset + size` of a returned value: the low bytes of the next register of
/// `class` (INTEGER: rax, then rdx; SSE: xmm0, then xmm1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    pub offset: u64,
    pub size: u64,
    pub class: Eightbyte,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Returned {
    /// In the caller's buffer; rax holds its address on return.
    Memory,
    /// In registers, piece by piece, in order of offset (the psABI: one per eightbyte).
    Registers(Vec<Piece>),
}

impl InfoTree {
    /// Whether the function DIE at `die` (or the declaration or abstract function it
    /// completes) says `DW_CC_nocall`: its registers at the return are no value of its
    /// return type (rustc -O2 marks functions whose unused result LLVM dropped so).
    pub(crate) fn nocall(&self, die: usize) -> bool {
        let mut at = Some(die);
        for _ in 0..4 {
            let Some((unit, entry)) = at.and_then(|d| self.entry(d)) else {
                return false;
            };
            if unit.calling_convention(&entry) == Some(DW_CC_NOCALL) {
                return true;
            }
            at = unit
                .reference(&entry, gimli::DW_AT_abstract_origin)
                .or_else(|| unit.reference(&entry, gimli::DW_AT_specification));
        }
        false
    }

    /// How a function returning a value of aggregate type `ty` (struct, class, union or
    /// array) hands it back; `None` for other types and where the rule is uncertain.
    /// `rust_fn`: the function is a mangled Rust function, so a tuple or an array it
    /// returns comes back by rustc's own ABI (an `extern "C"` one returning them is
    /// not FFI-safe, and rustc warns).
    pub(crate) fn returned_aggregate(&self, ty: Option<TypeId>, rust_fn: bool) -> Option<Returned> {
        let t = self.strip(ty)?;
        if !matches!(t.kind, Kind::Aggregate { .. } | Kind::Array { .. }) {
            return None;
        }
        let size = self.size_of(ty)?;
        // A C++ class with a non-trivial copy constructor or destructor is returned in
        // memory whatever its size; GCC and clang say so on the type (DWARF 5).
        let by_reference = self
            .entry(t.id.0)
            .and_then(|(u, d)| u.calling_convention(&d))
            == Some(DW_CC_PASS_BY_REFERENCE)
            || (!t.c && !t.rust && self.non_trivial(ty, 0));
        if size > MAX_IN_REGISTERS || by_reference {
            return Some(Returned::Memory);
        }
        if size == 0 {
            return None;
        }
        if t.rust {
            return self.rust_returned(&t, size, rust_fn);
        }
        let mut classes: Vec<Option<Eightbyte>> = vec![None; size.div_ceil(8) as usize];
        let mut leaves = 0;
        self.classify(ty, 0, &mut classes, &mut leaves, 0)?;
        let pieces = (0..).step_by(8).zip(classes).map(|(offset, class)| {
            Some(Piece {
                offset,
                size: 8,
                class: class?,
            })
        });
        Some(Returned::Registers(pieces.collect::<Option<_>>()?))
    }

    /// Whether a C++ class cannot be copied as bytes (the Itanium ABI then passes and
    /// returns it by reference; GCC 12 does not always say so by DW_AT_calling_convention):
    /// a destructor, copy or move constructor the class declares itself, a vtable pointer,
    /// or a base or member that is such a class (its implicit ones are then not trivial).
    fn non_trivial(&self, ty: Option<TypeId>, depth: usize) -> bool {
        if depth > 16 {
            return true;
        }
        let Some(t) = self.strip(ty) else {
            return false;
        };
        match &t.kind {
            Kind::Array { elem, .. } => self.non_trivial(*elem, depth + 1),
            Kind::Aggregate { members, .. } => {
                if members.iter().any(|m| {
                    m.artificial && m.name.as_deref().is_some_and(|n| n.starts_with("_vptr"))
                }) {
                    return true;
                }
                if self.declares_special_member(&t) {
                    return true;
                }
                members.iter().any(|m| self.non_trivial(m.ty, depth + 1))
            }
            _ => false,
        }
    }

    /// A destructor, or a constructor whose only parameter is a reference (copy, move), that
    /// the class provides itself (neither implicit nor `= default` in the class).
    fn declares_special_member(&self, t: &super::types::Type) -> bool {
        let Some((unit, die)) = self.entry(t.id.0) else {
            return false;
        };
        let class = t.name.as_deref().map(|n| n.split('<').next().unwrap_or(n));
        super::type_read::children(&unit, &die).iter().any(|f| {
            if f.tag() != gimli::DW_TAG_subprogram
                || unit.flag(f, gimli::DW_AT_artificial)
                || unit.udata(f, gimli::DW_AT_defaulted) == Some(DW_DEFAULTED_IN_CLASS)
            {
                return false;
            }
            let Some(name) = unit.string(f, gimli::DW_AT_name) else {
                return false;
            };
            if name.starts_with('~') {
                return true;
            }
            if class != Some(name.as_str()) {
                return false;
            }
            let params: Vec<_> = super::type_read::children(&unit, f)
                .into_iter()
                .filter(|p| {
                    p.tag() == gimli::DW_TAG_formal_parameter
                        && !unit.flag(p, gimli::DW_AT_artificial)
                })
                .collect();
            params.len() == 1
                && unit
                    .reference(&params[0], gimli::DW_AT_type)
                    .and_then(|r| self.type_of(TypeId(r)))
                    .is_some_and(|p| match p.kind {
                        Kind::Reference { target, .. } => self.is_class(target, t),
                        _ => false,
                    })
        })
    }

    /// Whether `target` (through qualifiers) is the class `t` itself: a copy or move
    /// constructor takes a reference to its own class; one taking another type's
    /// (`complex<double>(const complex<float>&)`, `Conv(const Other&)`) converts and leaves
    /// the class trivially copyable, returned in registers.
    fn is_class(&self, target: Option<TypeId>, t: &super::types::Type) -> bool {
        match self.strip(target) {
            Some(r) => r.id == t.id || (r.name.is_some() && r.name == t.name),
            None => false,
        }
    }

    /// Merges the classes of `ty`'s scalars at `offset` into `classes`; `None` for anything
    /// the rule is not applied to here.
    fn classify(
        &self,
        ty: Option<TypeId>,
        offset: u64,
        classes: &mut [Option<Eightbyte>],
        leaves: &mut usize,
        depth: usize,
    ) -> Option<()> {
        if depth > 16 {
            return None;
        }
        let t = self.strip(ty)?;
        match &t.kind {
            Kind::Aggregate { members, .. } => {
                for m in members {
                    if m.bits.is_some() {
                        return None;
                    }
                    self.classify(m.ty, offset + m.offset, classes, leaves, depth + 1)?;
                }
                Some(())
            }
            Kind::Array { elem, .. } => {
                let one = self.size_of(*elem)?;
                let n = self.size_of(ty)? / one.max(1);
                for i in 0..n {
                    self.classify(*elem, offset + i * one, classes, leaves, depth + 1)?;
                }
                Some(())
            }
            _ => {
                *leaves += 1;
                if *leaves > MAX_LEAVES {
                    return None;
                }
                let size = self.size_of(ty)?;
                if t.kind == Kind::Base(Encoding::ComplexFloat) {
                    // `_Complex float` is one SSE eightbyte, `_Complex double` two (the real
                    // part, then the imaginary); `_Complex long double` goes in memory.
                    if !offset.is_multiple_of(8) || !(size == 8 || size == 16) {
                        return None;
                    }
                    for k in 0..size / 8 {
                        let slot = classes.get_mut((offset / 8 + k) as usize)?;
                        *slot = merge(*slot, Eightbyte::Sse);
                    }
                    return Some(());
                }
                let class = match t.kind {
                    Kind::Base(Encoding::Float) if size <= 8 => Eightbyte::Sse,
                    Kind::Base(Encoding::Float | Encoding::ComplexFloat) => return None,
                    Kind::Base(_) | Kind::Enum { .. } | Kind::Pointer(_) => Eightbyte::Integer,
                    Kind::Reference { .. } => Eightbyte::Integer,
                    _ => return None,
                };
                // A scalar straddling two eightbytes is unaligned: memory (packed structs).
                if size == 0 || offset / 8 != (offset + size - 1) / 8 {
                    return None;
                }
                let slot = classes.get_mut((offset / 8) as usize)?;
                *slot = merge(*slot, class);
                Some(())
            }
        }
    }
}

/// The class of an eightbyte holding scalars of `was` and `class`: INTEGER wins.
fn merge(was: Option<Eightbyte>, class: Eightbyte) -> Option<Eightbyte> {
    match (was, class) {
        (Some(Eightbyte::Integer), _) | (_, Eightbyte::Integer) => Some(Eightbyte::Integer),
        _ => Some(Eightbyte::Sse),
    }
}

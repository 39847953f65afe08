//! Where rustc's own ABI (the `Rust` calling convention) puts a small returned aggregate,
//! which is not the psABI's: a type with one scalar inside comes back as that scalar; one
//! with two (a "scalar pair": `(u32, u32)`, `&[T]`, `&str`, `&dyn T`) in a register each,
//! integers in rax then rdx and floats in xmm0 then xmm1, even when both would fit one
//! eightbyte; any other aggregate of up to 8 bytes as an integer in rax. Checked against
//! rustc 1.95's code. Larger ones are the psABI's memory case, or (9 to 16 bytes and more
//! than two scalars) returned in memory by some rustc versions and in registers by older
//! ones: `None`, never a guess.
//!
//! A type that can come from an `extern "C"` function gets an answer only where both ABIs
//! agree (a pair in two eightbytes, a small aggregate with an integer in it); a tuple or an
//! array (not FFI-safe) from a mangled Rust function gets rustc's.

use super::returns::{Eightbyte, Piece, Returned};
use super::rust::is_rust_tuple;
use super::tree::{Die, InfoTree, UnitHandle};
use super::types::{AggKind, Encoding, Kind, Type, TypeId};

/// Scalars looked at inside one returned type at most (two make a pair).
const MAX_SCALARS: usize = 8;

/// One scalar inside a returned aggregate.
#[derive(Clone, Copy, Debug)]
struct Scalar {
    offset: u64,
    size: u64,
    class: Eightbyte,
}

/// The scalars of a Rust aggregate, and whether an array is among its parts (arrays are
/// never a scalar or a pair to rustc).
#[derive(Default)]
struct Parts {
    scalars: Vec<Scalar>,
    array: bool,
}

impl InfoTree {
    /// How a mangled Rust function (`rust_fn`) or any function returning the Rust
    /// aggregate `t` of `size` bytes (at most 16) hands it back; `None` where it is not
    /// certain.
    pub(super) fn rust_returned(&self, t: &Type, size: u64, rust_fn: bool) -> Option<Returned> {
        let mut parts = Parts::default();
        self.rust_parts(Some(t.id), 0, &mut parts, 0)?;
        let mut s = parts.scalars;
        s.sort_by_key(|p| p.offset);
        let piece = |p: &Scalar| Piece {
            offset: p.offset,
            size: p.size,
            class: p.class,
        };
        // The returned type itself, not a part of it: a repr(C) struct holding an array
        // can come from an `extern "C"` function.
        let non_ffi = rust_fn && (is_rust_tuple(t) || matches!(t.kind, Kind::Array { .. }));
        match s.as_slice() {
            // A newtype: the scalar itself (both ABIs).
            [one] if !parts.array && one.offset == 0 && one.size == size => {
                if one.size == 16 && one.class == Eightbyte::Integer {
                    // `u128` in rax:rdx.
                    let half = |offset| Piece {
                        offset,
                        size: 8,
                        class: Eightbyte::Integer,
                    };
                    return Some(Returned::Registers(vec![half(0), half(8)]));
                }
                (one.size <= 8).then(|| Returned::Registers(vec![piece(one)]))
            }
            [a, b] if !parts.array && a.size <= 8 && b.size <= 8 => {
                // In two eightbytes the psABI reads it the same way; in one it packs both
                // into one register.
                let apart = a.offset / 8 != b.offset / 8;
                (apart || non_ffi).then(|| Returned::Registers(vec![piece(a), piece(b)]))
            }
            _ if size <= 8 => {
                // rustc: an integer of the aggregate's size. The psABI agrees when an
                // integer is in it (the eightbyte is INTEGER); all floats go to xmm0.
                let integer = s.iter().any(|p| p.class == Eightbyte::Integer);
                (integer || non_ffi).then(|| {
                    Returned::Registers(vec![Piece {
                        offset: 0,
                        size,
                        class: Eightbyte::Integer,
                    }])
                })
            }
            _ => None,
        }
    }

    /// Collects the non-empty scalars of `ty` at `offset` into `parts`; `None` for a type
    /// whose layout is not plain (an enum with data, a union, a bit-field, too many).
    fn rust_parts(
        &self,
        ty: Option<TypeId>,
        offset: u64,
        parts: &mut Parts,
        depth: usize,
    ) -> Option<()> {
        if depth > 16 {
            return None;
        }
        let t = self.strip(ty)?;
        let size = self.size_of(ty)?;
        if size == 0 {
            return Some(());
        }
        let class = match &t.kind {
            Kind::Aggregate {
                kind: AggKind::Union,
                ..
            } => return None,
            Kind::Aggregate {
                members, variants, ..
            } => {
                if variants.is_some() {
                    return None;
                }
                for m in members {
                    if m.bits.is_some() || m.vbase.is_some() {
                        return None;
                    }
                    self.rust_parts(m.ty, offset + m.offset, parts, depth + 1)?;
                }
                return Some(());
            }
            Kind::Array { .. } => {
                parts.array = true;
                return Some(());
            }
            Kind::Base(Encoding::Float) if size <= 8 => Eightbyte::Sse,
            Kind::Base(Encoding::Float | Encoding::ComplexFloat) => return None,
            Kind::Base(_) | Kind::Enum { .. } | Kind::Pointer(_) | Kind::Reference { .. } => {
                Eightbyte::Integer
            }
            _ => return None,
        };
        if parts.scalars.len() == MAX_SCALARS {
            return None;
        }
        parts.scalars.push(Scalar {
            offset,
            size,
            class,
        });
        Some(())
    }
}

/// Whether the function `die` was compiled by rustc with its own ABI: rustc mangles every
/// function but the `#[no_mangle]` ones (legacy `_ZN...17h<hash>E`, or v0 `_R`).
pub(crate) fn mangled_by_rustc(unit: &UnitHandle, die: &Die) -> bool {
    unit.string(die, gimli::DW_AT_linkage_name)
        .is_some_and(|n| n.starts_with("_R") || (n.starts_with("_ZN") && n.contains("17h")))
}

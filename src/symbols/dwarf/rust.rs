//! Rust's standard layouts read from their DWARF: `&str` and slices (`data_ptr`, `length`),
//! `String` and `Vec<T>` (a pointer buried in `buf`, and `len`), and enums described by a
//! `DW_TAG_variant_part` (`Option`, `Result`, user enums: the variant the discriminant
//! selects). Nothing here depends on a particular Rust version's private field names beyond
//! `len`, `vec`, `data_ptr` and `length`; the element type of a `Vec` is its `T` parameter.

use super::location::Gone;
use super::target::Target;
use super::tree::InfoTree;
use super::types::{Kind, Type, TypeId, Variant, VariantPart};
use super::value::{Scalar, Value};
use super::value_error::ValueError;

/// Depth searched for the data pointer inside a `Vec`'s buffer.
const MAX_PTR_DEPTH: usize = 8;

/// A sequence's element type, data address and length.
pub type Sequence = (Option<TypeId>, u64, u64);

/// The kind of sequence a Rust type is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RustSeq {
    /// `&str`, `String`: UTF-8 text.
    Text,
    /// `&[T]`, `Vec<T>`.
    Elements,
}

impl InfoTree {
    /// Whether `ty` is a Rust string or sequence, and which.
    pub(crate) fn rust_seq_kind(&self, ty: &Type) -> Option<RustSeq> {
        if !ty.rust {
            return None;
        }
        let name = ty.name.as_deref()?;
        let bare = name
            .trim_start_matches("alloc::string::")
            .trim_start_matches("alloc::vec::");
        if matches!(name, "&str" | "&mut str" | "*const str" | "*mut str") || bare == "String" {
            return Some(RustSeq::Text);
        }
        // `Box<[T]>` and `Box<str>` are fat pointers like `&[T]` and `&str`.
        let boxed = name.strip_prefix("alloc::boxed::Box<").unwrap_or("");
        if boxed.starts_with("str,") || boxed.starts_with("str>") {
            return Some(RustSeq::Text);
        }
        // A raw slice pointer is the same fat pair (rustc gives a `&[u8]` that type at -O2).
        if (name.starts_with("&[")
            || name.starts_with("&mut [")
            || name.starts_with("*const [")
            || name.starts_with("*mut [")
            || bare.starts_with("Vec<")
            || boxed.starts_with('['))
            && matches!(ty.kind, Kind::Aggregate { .. })
        {
            return Some(RustSeq::Elements);
        }
        None
    }

    /// The element type, data address and length of a Rust slice, `&str`, `Vec` or
    /// `String`; `None` when `ty` is none of them.
    pub(crate) fn rust_sequence(
        &self,
        v: &Value,
        ty: &Type,
        t: &dyn Target,
    ) -> Option<Result<Sequence, ValueError>> {
        self.rust_seq_kind(ty)?;
        let Kind::Aggregate {
            members, params, ..
        } = &ty.kind
        else {
            return None;
        };
        // `String` is a `Vec<u8>` called `vec`.
        if let Some(inner) = members.iter().find(|m| m.name.as_deref() == Some("vec")) {
            let inner_v = self.member_value(v, inner);
            let inner_t = self.strip(inner.ty)?;
            return self.rust_sequence(&inner_v, &inner_t, t);
        }
        let field = |n: &str| members.iter().find(|m| m.name.as_deref() == Some(n));
        let read_u64 = |val: &Value| -> Result<u64, ValueError> {
            match self.scalar(val, t)? {
                Some(Scalar::Unsigned(n)) => Ok(n as u64),
                Some(Scalar::Signed(n)) => Ok(n as u64),
                Some(Scalar::Pointer(p)) => Ok(p),
                _ => Err(ValueError::NotANumber),
            }
        };
        let result = (|| {
            if let (Some(ptr), Some(len)) = (field("data_ptr"), field("length")) {
                let elem = match self.strip(ptr.ty).map(|p| p.kind.clone()) {
                    Some(Kind::Pointer(to)) => to,
                    _ => None,
                };
                let n = read_u64(&self.member_value(v, len))?;
                // The length may be known where the address is not (-O2 keeps them apart).
                let p = read_u64(&self.member_value(v, ptr))
                    .map_err(|_| ValueError::ElementsGone { len: n })?;
                return Ok((elem, p, n));
            }
            let len = field("len").ok_or(ValueError::NoField("len"))?;
            let n = read_u64(&self.member_value(v, len))?;
            let buf = field("buf").ok_or(ValueError::NoField("buf"))?;
            // The length may be known where the address is not (-O2 keeps them apart).
            let p = self
                .first_pointer(&self.member_value(v, buf), t, 0)
                .map_err(|_| ValueError::ElementsGone { len: n })?;
            let elem = params
                .iter()
                .find(|(n, _)| n == "T")
                .and_then(|(_, ty)| *ty);
            // A live Vec's elements fit in memory at their alignment: one that does not is
            // said to be impossible, not printed as `[… 93824992279437 elements]`.
            let size = self.size_of(elem).unwrap_or(1).max(1);
            let align = self.align_of(elem).unwrap_or(1).max(1);
            let span = n.checked_mul(size);
            if n > 0 && (span.is_none_or(|s| s > 1 << 40) || p % align != 0 || p == 0) {
                return Err(ValueError::ImpossibleSequence { len: n, ptr: p });
            }
            Ok((elem, p, n))
        })();
        Some(result)
    }

    /// The first pointer found by descending the first members (a `Vec`'s `RawVec` keeps it
    /// a few wrappers down: `inner.ptr.pointer.pointer`).
    fn first_pointer(&self, v: &Value, t: &dyn Target, depth: usize) -> Result<u64, ValueError> {
        if depth > MAX_PTR_DEPTH {
            return Err(ValueError::NoDataPointer);
        }
        let ty = self.strip(v.ty).ok_or(ValueError::NoDataPointer)?;
        match &ty.kind {
            Kind::Pointer(_) => match self.scalar(v, t)? {
                Some(Scalar::Pointer(p)) => Ok(p),
                _ => Err(ValueError::NoDataPointer),
            },
            Kind::Aggregate { members, .. } => {
                for m in members {
                    if let Ok(p) = self.first_pointer(&self.member_value(v, m), t, depth + 1) {
                        return Ok(p);
                    }
                }
                Err(ValueError::NoDataPointer)
            }
            _ => Err(ValueError::NoDataPointer),
        }
    }

    /// The variant a Rust enum value holds (by its discriminant), or why it is unknown.
    pub(crate) fn active_variant<'a>(
        &self,
        v: &Value,
        vp: &'a VariantPart,
        t: &dyn Target,
    ) -> Result<Option<&'a Variant>, ValueError> {
        let discr = match &vp.discr {
            Some(m) => match self.scalar(&self.member_value(v, m), t)? {
                // Compared as `discriminant` reads the variants' values: unsigned ones as
                // themselves, signed ones sign-extended.
                Some(Scalar::Unsigned(n)) => Some(n as i128),
                Some(Scalar::Signed(n)) => Some(n),
                Some(Scalar::Pointer(p)) => Some(i128::from(p)),
                Some(Scalar::Char(c, _)) => Some(i128::from(c)),
                Some(Scalar::Bool(b)) => Some(i128::from(b)),
                Some(Scalar::Enum(e)) => Some(e),
                _ => None,
            },
            None => None,
        };
        // Compared at the discriminant's width: a DWARF constant may be written signed for
        // an unsigned discriminant (a niche value) or the other way round.
        let bytes = vp
            .discr
            .as_ref()
            .and_then(|m| self.size_of(m.ty))
            .unwrap_or(16);
        let width = |x: i128| match bytes {
            0 | 16.. => x as u128,
            n => (x as u128) & ((1u128 << (n * 8)) - 1),
        };
        let exact = discr.and_then(|d| {
            vp.variants
                .iter()
                .find(|x| x.discr_value.map(width) == Some(width(d)))
        });
        Ok(exact.or_else(|| vp.variants.iter().find(|x| x.discr_value.is_none())))
    }

    /// Members of a Rust enum's active variant by name (`v.__0` of a `Some`), or the variant
    /// itself by its name (`v.Some`).
    pub(crate) fn rust_member(
        &self,
        v: &Value,
        ty: &Type,
        name: &str,
        t: &dyn Target,
    ) -> Option<Result<Value, ValueError>> {
        let (variant, inner, vt) = match self.active_parts(v, ty, t)? {
            Ok(parts) => parts,
            Err(e) => return Some(Err(e)),
        };
        if variant.member.name.as_deref() == Some(name) {
            return Some(Ok(inner));
        }
        let Kind::Aggregate { members, .. } = &vt.kind else {
            return None;
        };
        let m = members.iter().find(|m| m.name.as_deref() == Some(name))?;
        Some(Ok(self.member_value(&inner, m)))
    }

    /// The names of the fields of the Rust enum `v`'s active variant (`__0` of a `Some`).
    pub(crate) fn rust_variant_fields(
        &self,
        v: &Value,
        ty: &Type,
        t: &dyn Target,
    ) -> Option<Vec<String>> {
        let (_, _, vt) = self.active_parts(v, ty, t)?.ok()?;
        let Kind::Aggregate { members, .. } = &vt.kind else {
            return None;
        };
        Some(members.iter().filter_map(|m| m.name.clone()).collect())
    }

    /// The active variant of the Rust enum `v` (of type `ty`), what it holds and that
    /// part's type; `None` for no enum or no variant known.
    fn active_parts<'a>(
        &self,
        v: &Value,
        ty: &'a Type,
        t: &dyn Target,
    ) -> Option<Result<ActiveParts<'a>, ValueError>> {
        let Kind::Aggregate {
            variants: Some(vp), ..
        } = &ty.kind
        else {
            return None;
        };
        let variant = match self.active_variant(v, vp, t) {
            Ok(Some(x)) => x,
            Ok(None) => return None,
            Err(e) => return Some(Err(e)),
        };
        let inner = self.member_value(v, &variant.member);
        let vt = self.strip(variant.member.ty)?;
        Some(Ok((variant, inner, vt)))
    }

    /// `*v` of a Rust enum: what its active variant holds when that is one value (`Some(x)`
    /// is `x`, `Ok(v)` is `v`, as a wrapper's `$deref()` is what it holds); a variant that
    /// holds nothing (`None`) says so. `None` for anything else.
    pub(crate) fn rust_deref(
        &self,
        v: &Value,
        ty: &Type,
        t: &dyn Target,
    ) -> Option<Result<Value, ValueError>> {
        let (variant, inner, vt) = match self.active_parts(v, ty, t)? {
            Ok(parts) => parts,
            Err(e) => return Some(Err(e)),
        };
        let Kind::Aggregate { members, .. } = &vt.kind else {
            return None;
        };
        let name = variant.member.name.clone().unwrap_or_else(|| "?".into());
        match members.as_slice() {
            [only] => Some(Ok(self.member_value(&inner, only))),
            [] => Some(Err(ValueError::Gone(Gone::Unavailable(format!(
                "{name} holds nothing to dereference"
            ))))),
            _ => None,
        }
    }
}

/// A Rust enum's active variant, what it holds, and that part's type.
type ActiveParts<'a> = (&'a Variant, Value, std::sync::Arc<Type>);

/// `&T` and `&mut T` of Rust (a pointer type rustc names with `&`): always points at a live
/// value, so printing and indexing see through it.
pub fn is_rust_ref(ty: &Type) -> bool {
    ty.rust && ty.name.as_deref().is_some_and(|n| n.starts_with('&'))
}

/// A Rust tuple or tuple struct (`(1, "two")`, `Point(3, 4)`, a variant's payload): every
/// member a positional field.
pub fn is_rust_tuple(ty: &Type) -> bool {
    let Kind::Aggregate {
        members, statics, ..
    } = &ty.kind
    else {
        return false;
    };
    ty.rust
        && statics.is_empty()
        && !members.is_empty()
        && members
            .iter()
            .all(|m| !m.base && m.name.as_deref().is_some_and(is_tuple_field))
}

/// Whether a member name is a tuple field (`__0`, `__1`).
pub fn is_tuple_field(name: &str) -> bool {
    name.strip_prefix("__")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

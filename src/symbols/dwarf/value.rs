//! A typed value: a type and where its bytes are. Members, elements and pointees are
//! resolved only when asked for, reading target memory through `Target`; the same value
//! serves printing (`render`) and navigation from scripts.

use super::location::{Gone, Place};
use super::statics::statics_before;
use super::tree::InfoTree;
use super::types::{Encoding, Kind, Member, Type, TypeId};
use super::value_error::ValueError;

/// Bytes read for one value at most (a huge array is read element by element).
pub const MAX_VALUE_BYTES: u64 = 1 << 20;

/// What values read: target memory, and names for code addresses.
pub trait Target {
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool;
    /// `add` or `add+0x4` for a code address.
    fn symbolize(&self, addr: u64) -> Option<String>;
    /// The load bias of the module whose DWARF describes the values: where a static
    /// member's storage is (its definition gives a link-time address). `None`: unknown, and
    /// such a member reads as unavailable.
    fn load_bias(&self) -> Option<u64> {
        None
    }
    /// The address of `offset` in that module's thread-local block (a `thread_local`
    /// static member), for the selected thread.
    fn tls_address(&self, _offset: u64) -> Option<u64> {
        None
    }
    /// The front end's printers, if values are printed through them.
    fn pretty(&self) -> Option<&dyn super::pretty::Pretty> {
        None
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Value {
    /// `None` is `void`.
    pub ty: Option<TypeId>,
    pub place: Place,
    /// A bit-field: (bit offset from the place, width).
    pub bits: Option<(u64, u64)>,
}

/// A value reduced to a number, a flag or a pointer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Signed(i128),
    Unsigned(u128),
    Float(f64),
    Bool(bool),
    /// A character of the given encoding (`char`, `wchar_t`, `char32_t`, Rust `char`): its
    /// code, negative for a negative `signed char`.
    Char(i64, Encoding),
    Pointer(u64),
    Enum(i128),
    /// A `_Complex` number: real and imaginary parts.
    Complex(f64, f64),
}

impl Value {
    pub fn at(ty: Option<TypeId>, addr: u64) -> Value {
        Value {
            ty,
            place: Place::Memory(addr),
            bits: None,
        }
    }

    /// Where the value is in memory (also when printing works on a copy of it).
    pub fn address(&self) -> Option<u64> {
        match self.place {
            Place::Memory(a) if self.bits.is_none() => Some(a),
            Place::Bytes {
                origin: Some(a), ..
            } if self.bits.is_none() => Some(a),
            _ => None,
        }
    }
}

impl InfoTree {
    /// The value's size in bytes (a bit-field's storage rounded up).
    pub(crate) fn value_size(&self, v: &Value) -> Option<u64> {
        if let Some((off, width)) = v.bits {
            return Some((off % 8 + width).div_ceil(8));
        }
        self.size_of(v.ty)
    }

    /// The value's bytes (at most `MAX_VALUE_BYTES`).
    pub(crate) fn bytes(&self, v: &Value, t: &dyn Target) -> Result<Vec<u8>, ValueError> {
        let size = self.value_size(v).ok_or_else(|| ValueError::NoSize {
            ty: self.type_name(v.ty),
        })?;
        if size > MAX_VALUE_BYTES {
            return Err(ValueError::TooLarge {
                ty: self.type_name(v.ty),
                size,
            });
        }
        let first = v.bits.map_or(0, |(off, _)| off / 8);
        match &v.place {
            Place::Memory(addr) => {
                let at = addr.wrapping_add(first);
                let mut buf = vec![0u8; size as usize];
                if t.read(at, &mut buf) {
                    Ok(buf)
                } else {
                    Err(ValueError::Unreadable { addr: at, size })
                }
            }
            Place::Bytes { bytes, unknown, .. } => {
                let end = first + size;
                // Bytes the place does not have are as unknown as the marked ones.
                if unknown.iter().any(|&(a, b)| a < end && first < b) || end > bytes.len() as u64 {
                    return Err(ValueError::Gone(Gone::OptimizedOut));
                }
                let mut out = bytes
                    .get(first as usize..(end as usize).min(bytes.len()))
                    .unwrap_or_default()
                    .to_vec();
                out.resize(size as usize, 0);
                Ok(out)
            }
            Place::Gone(g) => Err(ValueError::Gone(g.clone())),
        }
    }

    /// The number, flag, character or pointer a value holds; `None` for aggregates.
    pub(crate) fn scalar(&self, v: &Value, t: &dyn Target) -> Result<Option<Scalar>, ValueError> {
        let Some(ty) = self.strip(v.ty) else {
            return Ok(None);
        };
        let kind_is_scalar = matches!(
            ty.kind,
            Kind::Base(_) | Kind::Pointer(_) | Kind::Reference { .. } | Kind::Enum { .. }
        );
        if !kind_is_scalar {
            return Ok(None);
        }
        let bytes = self.bytes(v, t)?;
        Ok(Some(decode(&ty, &bytes, v.bits)))
    }

    /// A member by name. A pointer or reference to a struct is followed first (as `->`),
    /// and members of anonymous structs and unions inside are found too.
    pub(crate) fn member(
        &self,
        v: &Value,
        name: &str,
        t: &dyn Target,
    ) -> Result<Value, ValueError> {
        let v = self.through_pointers(v, t)?;
        let ty = self.strip(v.ty).ok_or_else(|| ValueError::VoidMember {
            name: name.to_string(),
        })?;
        let ty = self.complete(ty);
        if let Some(found) = self.find_member(&v, &ty, name, t, 0) {
            return found;
        }
        if let Some(found) = self.rust_member(&v, &ty, name, t) {
            return found;
        }
        Err(ValueError::NoMember {
            ty: self.type_name(v.ty),
            name: name.to_string(),
            members: self.member_names(&v, t),
        })
    }

    /// The member `name` of `v`, its own or lent by an anonymous struct or union or a base
    /// class; an error where two base classes both have one (C++'s ambiguous lookup: gdb
    /// says so too), never one of them picked.
    fn find_member(
        &self,
        v: &Value,
        ty: &Type,
        name: &str,
        t: &dyn Target,
        depth: usize,
    ) -> Option<Result<Value, ValueError>> {
        let Kind::Aggregate {
            members, statics, ..
        } = &ty.kind
        else {
            return None;
        };
        if let Some(m) = members.iter().find(|m| m.name.as_deref() == Some(name)) {
            return Some(Ok(self.member_value(v, m)));
        }
        if let Some(s) = statics.iter().find(|s| s.name == name) {
            return Some(Ok(self.static_value(ty, s, t)));
        }
        if depth > 8 {
            return None;
        }
        let mut in_base: Option<(Value, Option<TypeId>)> = None;
        for m in members.iter().filter(|m| m.name.is_none() || m.base) {
            let inner = self.member_value(v, m);
            let Some(mt) = self.strip(m.ty) else { continue };
            match self.find_member(&inner, &mt, name, t, depth + 1) {
                None => {}
                Some(Err(e)) => return Some(Err(e)),
                Some(Ok(found)) if !m.base => return Some(Ok(found)),
                Some(Ok(found)) => match &in_base {
                    None => in_base = Some((found, m.ty)),
                    // A virtual base reached twice is one object: the same member.
                    Some((first, _)) if first.place == found.place && first.ty == found.ty => {}
                    Some((_, first_base)) => {
                        return Some(Err(ValueError::AmbiguousMember {
                            name: name.to_string(),
                            first: self.type_name(*first_base),
                            second: self.type_name(m.ty),
                        }))
                    }
                },
            }
        }
        in_base.map(|(found, _)| Ok(found))
    }

    /// A member of the object `v` (which must be an aggregate).
    pub(crate) fn member_value(&self, v: &Value, m: &Member) -> Value {
        let base_bits = v.bits.map_or(0, |(off, _)| off);
        let place = shift(&v.place, m.offset);
        match m.bits {
            Some((pos, width)) => Value {
                ty: m.ty,
                place: shift(&v.place, pos / 8),
                bits: Some((base_bits % 8 + pos % 8, width)),
            },
            None => Value {
                ty: m.ty,
                place,
                bits: None,
            },
        }
    }

    /// Member names of an aggregate (after following pointers), in declaration order.
    pub(crate) fn member_names(&self, v: &Value, t: &dyn Target) -> Vec<String> {
        let Ok(v) = self.through_pointers(v, t) else {
            return Vec::new();
        };
        let Some(ty) = self.strip(v.ty).map(|t| self.complete(t)) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        self.collect_names(&ty, &mut out, 0);
        out
    }

    fn collect_names(&self, ty: &Type, out: &mut Vec<String>, depth: usize) {
        let Kind::Aggregate {
            members, statics, ..
        } = &ty.kind
        else {
            return;
        };
        for (i, m) in members.iter().enumerate() {
            out.extend(statics_before(statics, i).map(|s| s.name.clone()));
            match &m.name {
                Some(n) if !m.base => out.push(n.clone()),
                _ if depth < 8 => {
                    if let Some(mt) = self.strip(m.ty) {
                        self.collect_names(&mt, out, depth + 1);
                    }
                }
                _ => {}
            }
        }
        out.extend(statics_before(statics, members.len()).map(|s| s.name.clone()));
    }

    /// Follows pointers and references (at most a few levels) to a non-pointer value, as
    /// member access does.
    fn through_pointers(&self, v: &Value, t: &dyn Target) -> Result<Value, ValueError> {
        let mut cur = v.clone();
        for _ in 0..4 {
            let Some(ty) = self.strip(cur.ty) else {
                return Ok(cur);
            };
            match ty.kind {
                Kind::Pointer(_) | Kind::Reference { .. } => cur = self.deref(&cur, t)?,
                _ => return Ok(cur),
            }
        }
        Ok(cur)
    }

    /// The object a pointer or reference points to.
    pub(crate) fn deref(&self, v: &Value, t: &dyn Target) -> Result<Value, ValueError> {
        let ty = self.strip(v.ty).ok_or(ValueError::DerefVoid)?;
        let target = match ty.kind {
            Kind::Pointer(to) | Kind::Reference { target: to, .. } => to,
            // C's rule: an array used as a value is a pointer to its first element.
            Kind::Array { .. } => return self.element(v, 0, t),
            _ => {
                if let Some(inner) = self.rust_deref(v, &ty, t) {
                    return inner;
                }
                return Err(ValueError::NotDereferenceable {
                    ty: self.type_name(v.ty),
                });
            }
        };
        // A synthetic pointer (to an object in registers): the object, read where it is.
        if let Place::Gone(Gone::Synthetic {
            target: object,
            offset,
        }) = &v.place
        {
            if matches!(**object, Place::Gone(_)) {
                return Ok(Value {
                    ty: target,
                    place: (**object).clone(),
                    bits: None,
                });
            }
            return Ok(Value {
                ty: target,
                place: shift(object, *offset as u64),
                bits: None,
            });
        }
        let addr = match self.scalar(v, t)? {
            Some(Scalar::Pointer(a)) => a,
            _ => return Err(ValueError::NotAPointer),
        };
        if addr == 0 {
            return Err(ValueError::Null {
                ty: self.type_name(v.ty),
            });
        }
        if target.is_none() {
            return Err(ValueError::DerefVoidPointer);
        }
        Ok(Value::at(target, addr))
    }

    /// Element `i` of an array, a pointer (pointer arithmetic), or a Rust slice or Vec.
    pub(crate) fn element(&self, v: &Value, i: i64, t: &dyn Target) -> Result<Value, ValueError> {
        let ty = self.strip(v.ty).ok_or(ValueError::IndexVoid)?;
        match &ty.kind {
            Kind::Array { elem, counts } => {
                let count = counts.first().copied().flatten();
                if i < 0 || count.is_some_and(|c| i as u64 >= c) {
                    return Err(ValueError::OutOfBounds {
                        index: i,
                        ty: self.type_name(v.ty),
                        count,
                    });
                }
                // A multi-dimensional array's element is the array of the remaining dims.
                let (ety, stride) = if counts.len() > 1 {
                    let sub = self.synthetic_array(*elem, counts[1..].to_vec());
                    (Some(sub), self.size_of(Some(sub)))
                } else {
                    (*elem, self.size_of(*elem))
                };
                let stride = stride.ok_or(ValueError::NoElementSize)?;
                Ok(Value {
                    ty: ety,
                    place: shift(&v.place, stride.saturating_mul(i as u64)),
                    bits: None,
                })
            }
            Kind::Pointer(_) if super::rust::is_rust_ref(&ty) => {
                self.element(&self.deref(v, t)?, i, t)
            }
            Kind::Pointer(to) => {
                let base = match self.scalar(v, t)? {
                    Some(Scalar::Pointer(a)) => a,
                    _ => return Err(ValueError::NotAPointer),
                };
                let stride = self.size_of(*to).ok_or(ValueError::NoPointeeSize)?;
                let at = base.wrapping_add_signed(i.wrapping_mul(stride as i64));
                Ok(Value::at(*to, at))
            }
            Kind::Reference { .. } => self.element(&self.deref(v, t)?, i, t),
            _ => match self.rust_sequence(v, &ty, t) {
                Some(Ok((elem, ptr, len))) => {
                    if i < 0 || i as u64 >= len {
                        return Err(ValueError::PastLength { index: i, len });
                    }
                    let stride = self.size_of(elem).ok_or(ValueError::NoElementSize)?;
                    Ok(Value::at(elem, ptr.wrapping_add(stride * i as u64)))
                }
                Some(Err(e)) => Err(e),
                None => Err(ValueError::NotIndexable {
                    ty: self.type_name(v.ty),
                }),
            },
        }
    }

    /// The number of elements of an array (outermost dimension) or Rust slice, Vec or str.
    pub(crate) fn length(&self, v: &Value, t: &dyn Target) -> Option<u64> {
        let ty = self.strip(v.ty)?;
        match &ty.kind {
            Kind::Array { counts, .. } => counts.first().copied().flatten(),
            Kind::Reference { .. } => self.length(&self.deref(v, t).ok()?, t),
            Kind::Pointer(_) if super::rust::is_rust_ref(&ty) => {
                self.length(&self.deref(v, t).ok()?, t)
            }
            _ => match self.rust_sequence(v, &ty, t)? {
                Ok((_, _, len)) => Some(len),
                Err(_) => None,
            },
        }
    }

    /// `&v`: a pointer to a value in memory.
    pub(crate) fn address_of(&self, v: &Value) -> Result<Value, ValueError> {
        let addr = v.address().ok_or(ValueError::NotInMemory)?;
        let ptr = self.synthetic_pointer(v.ty);
        Ok(Value {
            ty: Some(ptr),
            place: Place::bytes(addr.to_le_bytes().to_vec()),
            bits: None,
        })
    }

    /// A struct known only by declaration here (`struct foo;`) completed from the unit that
    /// defines it.
    pub(crate) fn complete(&self, ty: std::sync::Arc<Type>) -> std::sync::Arc<Type> {
        if let Kind::Aggregate {
            declaration: true, ..
        } = ty.kind
        {
            if let Some(full) = ty
                .name
                .as_deref()
                .and_then(|n| self.find_type_definition(n, &ty))
            {
                return full;
            }
        }
        ty
    }
}

/// A place `offset` bytes further.
pub fn shift(place: &Place, offset: u64) -> Place {
    match place {
        Place::Memory(a) => Place::Memory(a.wrapping_add(offset)),
        Place::Bytes {
            bytes,
            unknown,
            origin,
        } => {
            let start = (offset as usize).min(bytes.len());
            Place::Bytes {
                origin: origin.map(|a| a.wrapping_add(offset)),
                bytes: bytes[start..].to_vec(),
                unknown: unknown
                    .iter()
                    .filter(|(_, b)| *b > offset)
                    .map(|(a, b)| (a.saturating_sub(offset), b - offset))
                    .collect(),
            }
        }
        Place::Gone(g) => Place::Gone(g.clone()),
    }
}

/// Decodes the bytes of a scalar type.
pub fn decode(ty: &Type, bytes: &[u8], bits: Option<(u64, u64)>) -> Scalar {
    if ty.kind == Kind::Base(Encoding::ComplexFloat) {
        return complex(bytes);
    }
    let mut raw = [0u8; 16];
    let n = bytes.len().min(16);
    raw[..n].copy_from_slice(&bytes[..n]);
    let mut word = u128::from_le_bytes(raw);
    let mut width = (n * 8) as u32;
    if let Some((off, w)) = bits {
        word >>= off % 8;
        width = (w as u32).min(128);
        if width < 128 {
            word &= (1u128 << width) - 1;
        }
    }
    let signed = |w: u128| -> i128 {
        if width == 0 || width >= 128 {
            return w as i128;
        }
        let shift = 128 - width;
        ((w << shift) as i128) >> shift
    };
    match &ty.kind {
        Kind::Pointer(_) | Kind::Reference { .. } => Scalar::Pointer(word as u64),
        Kind::Enum { signed: s, .. } => Scalar::Enum(if *s { signed(word) } else { word as i128 }),
        Kind::Base(enc) => match enc {
            Encoding::Signed => Scalar::Signed(signed(word)),
            Encoding::Float => match n {
                4 => Scalar::Float(f32::from_bits(word as u32) as f64),
                8 => Scalar::Float(f64::from_bits(word as u64)),
                // x87 80-bit extended (long double), in 16 bytes.
                10 | 16 => Scalar::Float(f80_to_f64(&raw[..10])),
                _ => Scalar::Unsigned(word),
            },
            Encoding::Bool => Scalar::Bool(word != 0),
            Encoding::SignedChar => Scalar::Char(signed(word) as i64, *enc),
            Encoding::UnsignedChar | Encoding::Utf => Scalar::Char(word as i64, *enc),
            Encoding::Unsigned | Encoding::Other | Encoding::ComplexFloat => Scalar::Unsigned(word),
        },
        _ => Scalar::Unsigned(word),
    }
}

/// A `_Complex` value's two halves by its size: two floats (8 bytes), two doubles (16), two
/// x87 long doubles (32, each in 16 bytes).
fn complex(bytes: &[u8]) -> Scalar {
    let half = bytes.len() / 2;
    let part = |b: &[u8]| match half {
        4 => f64::from(f32::from_le_bytes(b[..4].try_into().unwrap_or([0; 4]))),
        8 => f64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8])),
        16 => f80_to_f64(&b[..10]),
        _ => f64::NAN,
    };
    Scalar::Complex(part(&bytes[..half]), part(&bytes[half..]))
}

/// The nearest f64 to an x87 80-bit extended value.
fn f80_to_f64(b: &[u8]) -> f64 {
    let mant = u64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8]));
    let se = u16::from_le_bytes([b[8], b[9]]);
    let sign = if se & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from(se & 0x7fff);
    if exp == 0 && mant == 0 {
        return 0.0 * sign;
    }
    if exp == 0x7fff {
        return if mant << 1 == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    sign * (mant as f64) * 2f64.powi(exp - 16383 - 63)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(enc: Encoding, size: u64) -> Type {
        Type {
            id: TypeId(1),
            name: None,
            size: Some(size),
            kind: Kind::Base(enc),
            rust: false,
            c: true,
        }
    }

    #[test]
    fn scalars_decode_by_encoding_and_width() {
        let i = base(Encoding::Signed, 4);
        assert_eq!(decode(&i, &(-6i32).to_le_bytes(), None), Scalar::Signed(-6));
        let u = base(Encoding::Unsigned, 8);
        assert_eq!(
            decode(&u, &u64::MAX.to_le_bytes(), None),
            Scalar::Unsigned(u64::MAX as u128)
        );
        let f = base(Encoding::Float, 8);
        assert_eq!(
            decode(&f, &0.25f64.to_le_bytes(), None),
            Scalar::Float(0.25)
        );
        let f4 = base(Encoding::Float, 4);
        assert_eq!(decode(&f4, &1.5f32.to_le_bytes(), None), Scalar::Float(1.5));
        // 1.5 as x87 extended: exponent 16383, mantissa 0xC000...
        let mut ld = [0u8; 16];
        ld[..8].copy_from_slice(&0xC000_0000_0000_0000u64.to_le_bytes());
        ld[8..10].copy_from_slice(&16383u16.to_le_bytes());
        assert_eq!(
            decode(&base(Encoding::Float, 16), &ld, None),
            Scalar::Float(1.5)
        );
    }

    #[test]
    fn bit_fields_are_extracted_and_sign_extended() {
        // level : 4 at bit 4 of the byte, holding -3 (0b1101).
        let i = base(Encoding::Signed, 4);
        let bytes = [0b1101_0000u8];
        assert_eq!(decode(&i, &bytes, Some((4, 4))), Scalar::Signed(-3));
        let u = base(Encoding::Unsigned, 4);
        assert_eq!(decode(&u, &bytes, Some((4, 4))), Scalar::Unsigned(13));
        // A 40-bit field across five bytes, starting at bit 3.
        let v: u64 = 0x12_3456_789a;
        let word = (v << 3).to_le_bytes();
        let u8b = base(Encoding::Unsigned, 8);
        assert_eq!(
            decode(&u8b, &word[..6], Some((3, 40))),
            Scalar::Unsigned(v as u128)
        );
    }

    #[test]
    fn shifting_bytes_keeps_unknown_ranges_aligned() {
        let p = Place::Bytes {
            bytes: vec![1, 2, 3, 4],
            unknown: vec![(2, 4)],
            origin: Some(100),
        };
        assert_eq!(
            shift(&p, 1),
            Place::Bytes {
                bytes: vec![2, 3, 4],
                unknown: vec![(1, 3)],
                origin: Some(101),
            }
        );
        assert_eq!(shift(&Place::Memory(10), 6), Place::Memory(16));
    }
}

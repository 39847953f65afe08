//! Reading a typed value and reaching its parts: its bytes and the number they hold, members
//! by name (through pointers, anonymous members and base classes), elements, the pointee,
//! the address. Each step reads target memory only when taken, and says why it cannot be
//! taken as a `ValueError`.

use super::fields::statics_before;
use super::location::{Gone, Place};
use super::rust::is_rust_ref;
use super::target::Target;
use super::tree::InfoTree;
use super::types::{Kind, Member, Type, TypeId};
use super::value::{decode, shift, Scalar, Value};
use super::value_error::ValueError;

/// Bytes read for one value at most (a huge array is read element by element).
pub const MAX_VALUE_BYTES: u64 = 1 << 20;

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
            return Some(Ok(self.member_value_in(v, m, t)));
        }
        if let Some(s) = statics.iter().find(|s| s.name == name) {
            return Some(Ok(self.static_value(ty, s, t)));
        }
        if depth > 8 {
            return None;
        }
        let mut in_base: Option<(Value, Option<TypeId>)> = None;
        for m in members.iter().filter(|m| m.name.is_none() || m.base) {
            let inner = self.member_value_in(v, m, t);
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

    /// A member of the object `v`, a virtual base found where the object's vtable says.
    pub(crate) fn member_value_in(&self, v: &Value, m: &Member, t: &dyn Target) -> Value {
        let Some(expr) = &m.vbase else {
            return self.member_value(v, m);
        };
        let place = match v.address() {
            Some(addr) => match virtual_base_address(expr, addr, t) {
                Some(at) => Place::Memory(at),
                None => Place::Gone(Gone::Unavailable(
                    "the virtual base's offset could not be read from the object's vtable".into(),
                )),
            },
            None => Place::Gone(Gone::Unavailable(
                "a virtual base of an object in no memory (its vtable says where)".into(),
            )),
        };
        Value {
            ty: m.ty,
            place,
            bits: None,
        }
    }

    /// A member of the object `v` (which must be an aggregate). A virtual base needs the
    /// target's memory (`member_value_in`): without it, it is unavailable, never guessed.
    pub(crate) fn member_value(&self, v: &Value, m: &Member) -> Value {
        if m.vbase.is_some() {
            return Value {
                ty: m.ty,
                place: Place::Gone(Gone::Unavailable(
                    "a virtual base (its place is read from the vtable)".into(),
                )),
                bits: None,
            };
        }
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
        if out.is_empty() {
            // A Rust enum lends its active variant's fields (`__0` of a `Some`): those are
            // what a member of it names (`Option<Pt> has no member 'x'; members: __0`).
            out = self.rust_variant_fields(&v, &ty, t).unwrap_or_default();
        }
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
            Kind::Pointer(_) if is_rust_ref(&ty) => self.element(&self.deref(v, t)?, i, t),
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
            Kind::Pointer(_) if is_rust_ref(&ty) => self.length(&self.deref(v, t).ok()?, t),
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

/// Where the virtual base of the object at `addr` is: its location expression run with the
/// object's address pushed (GCC and Clang write `dup, deref, lit N, minus, deref, plus`: the
/// vtable pointer, the offset stored N bytes before its target, added to the object). Only
/// the stack operations such expressions use; anything else is no answer.
fn virtual_base_address(expr: &[u8], addr: u64, t: &dyn Target) -> Option<u64> {
    use gimli::Operation;
    let encoding = gimli::Encoding {
        format: gimli::Format::Dwarf32,
        version: 4,
        address_size: 8,
    };
    let bytes = gimli::EndianSlice::new(expr, gimli::LittleEndian);
    let mut ops = gimli::Expression(bytes).operations(encoding);
    let mut stack = vec![addr];
    for _ in 0..64 {
        let Ok(op) = ops.next() else { return None };
        let Some(op) = op else {
            return stack.pop();
        };
        match op {
            Operation::Pick { index } => {
                let at = stack.len().checked_sub(1 + usize::from(index))?;
                stack.push(stack[at]);
            }
            Operation::Deref {
                size, space: false, ..
            } if (1..=8).contains(&size) => {
                let at = stack.pop()?;
                let mut raw = [0u8; 8];
                if !t.read(at, &mut raw[..usize::from(size)]) {
                    return None;
                }
                stack.push(u64::from_le_bytes(raw));
            }
            Operation::UnsignedConstant { value } => stack.push(value),
            Operation::SignedConstant { value } => stack.push(value as u64),
            Operation::PlusConstant { value } => {
                let top = stack.pop()?;
                stack.push(top.wrapping_add(value));
            }
            Operation::Plus | Operation::Minus => {
                let (b, a) = (stack.pop()?, stack.pop()?);
                stack.push(match op {
                    Operation::Plus => a.wrapping_add(b),
                    _ => a.wrapping_sub(b),
                });
            }
            Operation::Drop => {
                stack.pop()?;
            }
            Operation::Swap => {
                let n = stack.len();
                if n < 2 {
                    return None;
                }
                stack.swap(n - 1, n - 2);
            }
            _ => return None,
        }
    }
    None
}

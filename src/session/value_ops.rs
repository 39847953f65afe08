//! The operations scripts apply to a typed value: members, elements, dereference, the
//! address, text and plain data, its type's name, size and kind. Each reads through the
//! value's module (its DWARF) and the process's memory, and never changes the target.

use super::error::guarded;
use super::typed_value::TypedValue;
use super::*;
use crate::symbols::dwarf::pretty::Pretty;
use crate::symbols::dwarf::tree::InfoTree;
use crate::symbols::dwarf::value_error::ValueError;
use crate::symbols::dwarf::{Limits, Plain, Scalar, Target, TooLarge, Value};

impl Session {
    pub fn value_index_number(&self, v: &TypedValue) -> Result<i64> {
        match self.value_scalar(v)? {
            Some(Scalar::Signed(i)) => i64::try_from(i).ok(),
            Some(Scalar::Unsigned(u)) => i64::try_from(u).ok(),
            Some(Scalar::Enum(e)) => i64::try_from(e).ok(),
            Some(Scalar::Char(c, _)) => Some(c),
            _ => None,
        }
        .ok_or_else(|| SessionError::Invalid("an index must be an integer".into()))
    }

    /// Runs `f` with the value's DWARF reader and the target.
    pub(super) fn with_value<T>(
        &self,
        v: &TypedValue,
        f: impl FnOnce(&InfoTree, &dyn Target) -> T,
    ) -> Result<T> {
        self.with_value_printed(v, None, f)
    }

    /// `with_value`, values printed through `pretty`'s printers.
    fn with_value_printed<T>(
        &self,
        v: &TypedValue,
        pretty: Option<&dyn Pretty>,
        f: impl FnOnce(&InfoTree, &dyn Target) -> T,
    ) -> Result<T> {
        let debug = v
            .tree()
            .ok_or_else(|| SessionError::Invalid("the value's module has no DWARF".into()))?;
        // The registers read at this stop (a value was looked up through them); only a
        // thread-local static member needs fs_base.
        let ins = self.inspect(self.at_stop.snapshot.noted_regs().map_or(0, |r| r.fs_base))?;
        let module = ins
            .store
            .modules()
            .iter()
            .find(|m| Arc::ptr_eq(&m.file, &v.file));
        let target = ins.values(module, pretty);
        guarded(|| f(debug, &target))
    }

    pub(super) fn derived<E: Into<SessionError>>(
        &self,
        v: &TypedValue,
        r: std::result::Result<Value, E>,
    ) -> Result<TypedValue> {
        r.map(|value| TypedValue {
            file: v.file.clone(),
            value,
        })
        .map_err(Into::into)
    }

    /// Member `name` of `v`; of a C++ object reached through a base (`shapes[1]->w` of a
    /// `Rect` held as a `Shape`), also a member of the whole object its vtable names, as
    /// gdb reads it with `set print object on`.
    pub fn value_member(&self, v: &TypedValue, name: &str) -> Result<TypedValue> {
        let r = self.with_value(v, |d, t| d.member(&v.value, name, t))?;
        if let Err(ValueError::NoMember { .. }) = &r {
            // A Rust `Option` or `Result` lends the members of what it holds, as a wrapper
            // does: `head.val` of an `Option<Box<Node>>` (it was `no member 'val'; members:
            // __0`, and every step down a list needed `(*head).val`).
            if let Some(held) = self.held_by_variant(v) {
                return held
                    .map_err(|why| SessionError::Invalid(format!("no member '{name}': {why}")))
                    .and_then(|held| self.value_member(&held, name));
            }
            // `p->m` reads the member through the pointer (C's `->` is `.` here).
            let object = match self.value_scalar(v) {
                Ok(Some(Scalar::Pointer(_))) => self.value_deref(v).ok(),
                _ => Some(self.referent(v)),
            };
            if let Some(whole) = object.and_then(|o| self.dynamic_object(&o)) {
                if let Ok(Ok(m)) = self.with_value(&whole, |d, t| d.member(&whole.value, name, t)) {
                    return Ok(TypedValue {
                        file: whole.file.clone(),
                        value: m,
                    });
                }
                if let Err(e) = &r {
                    return Err(SessionError::Invalid(format!(
                        "{e}; the whole object is a {} (its vtable says), whose members are: {}",
                        self.value_type_name(&whole),
                        self.value_members(&whole).join(" ")
                    )));
                }
            }
        }
        self.derived(v, r)
    }

    pub fn value_index(&self, v: &TypedValue, i: i64) -> Result<TypedValue> {
        let r = self.with_value(v, |d, t| d.element(&v.value, i, t))?;
        if let Err(ValueError::NotIndexable { .. }) = &r {
            // `opt_v[2]` of a `Some(vec![...])`: what the variant holds is indexed.
            if let Some(held) = self.held_by_variant(v) {
                return held
                    .map_err(|why| SessionError::Invalid(format!("no element {i}: {why}")))
                    .and_then(|held| self.value_index(&held, i));
            }
        }
        self.derived(v, r)
    }

    /// What a Rust enum's active variant holds when it holds one value (`Some(x)`'s `x`,
    /// `Ok(v)`'s `v`), or why it holds none (`None holds nothing to dereference`); `None`
    /// for any other value.
    fn held_by_variant(&self, v: &TypedValue) -> Option<Result<TypedValue>> {
        let v = &self.referent(v);
        let r = self
            .with_value(v, |d, t| {
                let ty = d.strip(v.value.ty)?;
                if !ty.rust {
                    return None;
                }
                d.rust_deref(&v.value, &ty, t)
            })
            .ok()??;
        Some(self.derived(v, r))
    }

    pub fn value_deref(&self, v: &TypedValue) -> Result<TypedValue> {
        let r = self.with_value(v, |d, t| d.deref(&v.value, t))?;
        self.derived(v, r)
    }

    /// What a reference refers to (a C++ `T &`, a Rust `&T`), as it prints; any other value
    /// itself. Its number, address and kind are the referent's: `Number(r)` of an `int &r`
    /// is the int, not the address the reference holds.
    pub fn referent(&self, v: &TypedValue) -> TypedValue {
        let mut cur = v.clone();
        for _ in 0..4 {
            let is_ref = cur
                .tree()
                .and_then(|d| d.strip(cur.value.ty))
                .is_some_and(|t| {
                    matches!(t.kind, crate::symbols::dwarf::types::Kind::Reference { .. })
                        || crate::symbols::dwarf::rust::is_rust_ref(&t)
                });
            if !is_ref {
                break;
            }
            match self.value_deref(&cur) {
                Ok(next) => cur = next,
                Err(_) => break,
            }
        }
        cur
    }

    /// `&v`; of a reference, its referent's address (C++'s `&ref`, as gdb), not the
    /// reference's own slot.
    pub fn value_address_of(&self, v: &TypedValue) -> Result<TypedValue> {
        let v = &self.referent(v);
        let r = self.with_value(v, |d, _| d.address_of(&v.value))?;
        self.derived(v, r)
    }

    /// What the value prints as, through `pretty`'s printers when given.
    pub fn value_text(
        &self,
        v: &TypedValue,
        limits: &Limits,
        pretty: Option<&dyn Pretty>,
    ) -> Result<String> {
        self.with_value_printed(v, pretty, |d, t| d.render(&v.value, t, limits))
    }

    /// The value as plain data, whole: one too large for that is an error saying how to
    /// read it in parts, never a part presented as the whole.
    pub fn value_plain(&self, v: &TypedValue, pretty: Option<&dyn Pretty>) -> Result<Plain> {
        self.with_value_printed(v, pretty, |d, t| d.plain(&v.value, t))?
            .map_err(|TooLarge(why)| {
                SessionError::Invalid(format!(
                    "{} has {why}: more than plain data takes whole (at most {} values, {} MiB \
                     a string); read it in parts: v[i], for (const x of v), v.$length",
                    self.value_type_name(v),
                    crate::symbols::dwarf::MAX_PLAIN_VALUES,
                    crate::symbols::dwarf::MAX_PLAIN_TEXT >> 20,
                ))
            })
    }

    pub fn value_scalar(&self, v: &TypedValue) -> Result<Option<Scalar>> {
        self.with_value(v, |d, t| d.scalar(&v.value, t))?
            .map_err(Into::into)
    }

    pub fn value_type_name(&self, v: &TypedValue) -> String {
        v.tree()
            .map(|d| d.type_name(v.value.ty))
            .unwrap_or_else(|| "?".into())
    }

    pub fn value_size(&self, v: &TypedValue) -> Option<u64> {
        v.tree()?.value_size(&v.value)
    }

    pub fn value_members(&self, v: &TypedValue) -> Vec<String> {
        self.with_value(v, |d, t| d.member_names(&v.value, t))
            .unwrap_or_default()
    }

    pub fn value_length(&self, v: &TypedValue) -> Option<u64> {
        self.with_value(v, |d, t| d.length(&v.value, t)).ok()?
    }

    /// Whether the value is an array of characters (its plain data is a string).
    pub fn value_is_char_array(&self, v: &TypedValue) -> bool {
        v.tree().is_some_and(|d| d.is_char_array(v.value.ty))
    }

    /// What kind of thing the value is, for scripts: `int`, `float`, `bool`, `char`,
    /// `pointer`, `enum`, `struct`, `union`, `array`, `text`, `function`, `void`.
    pub fn value_kind(&self, v: &TypedValue) -> &'static str {
        use crate::symbols::dwarf::types::{AggKind, Encoding, Kind};
        let v = &self.referent(v);
        let Some(d) = v.tree() else {
            return "void";
        };
        let Some(t) = d.strip(v.value.ty) else {
            return "void";
        };
        if d.rust_seq_kind(&t) == Some(crate::symbols::dwarf::rust::RustSeq::Text) {
            return "text";
        }
        match &t.kind {
            Kind::Base(Encoding::Float) => "float",
            Kind::Base(Encoding::ComplexFloat) => "complex",
            Kind::Base(Encoding::Bool) => "bool",
            Kind::Base(Encoding::SignedChar | Encoding::UnsignedChar | Encoding::Utf) => "char",
            Kind::Base(_) => "int",
            Kind::Pointer(_) | Kind::Reference { .. } => "pointer",
            Kind::Enum { .. } => "enum",
            Kind::Aggregate {
                kind: AggKind::Union,
                ..
            } => "union",
            Kind::Aggregate {
                variants: Some(_), ..
            } => "enum",
            Kind::Aggregate { .. } if d.rust_seq_kind(&t).is_some() => "array",
            Kind::Aggregate { .. } => "struct",
            Kind::Array { .. } => "array",
            Kind::Function { .. } => "function",
            _ => "other",
        }
    }
}

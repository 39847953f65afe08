//! A typed value as plain data for scripts (numbers, strings, lists, objects), whole or not
//! at all: the text of a value is cut to fit a line, but plain data is what a script computes
//! with (`v.value.reduce(...)`, `JSON.stringify(v)`), and a sum over the first 1,024 elements
//! of 100,000 is a wrong answer. So there are no cuts here: past its bounds a value is
//! refused, with how to read it in parts instead.

use crate::symbols::dwarf::fields::{fields_in_order, Field, Seen};
use crate::symbols::dwarf::location::Place;
use crate::symbols::dwarf::rust::{is_rust_ref, is_rust_tuple, RustSeq};
use crate::symbols::dwarf::target::{PageCache, Target};
use crate::symbols::dwarf::tree::InfoTree;
use crate::symbols::dwarf::types::{Kind, Type};
use crate::symbols::dwarf::value::{Scalar, Value};
use crate::symbols::dwarf::value_error::ValueError;

use super::literals::{hex_bytes, string_literal, unquote};
use super::Plain;

/// Values (numbers, strings, elements, members) one conversion may produce.
pub const MAX_VALUES: usize = 1_000_000;
/// Bytes of one string's characters.
pub const MAX_TEXT: usize = 16 << 20;
/// Aggregates nested in one another (pointers are not followed, so only a type nests).
const MAX_DEPTH: usize = 32;

/// Why a value has no whole plain data: it is larger than a conversion may be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooLarge(pub String);

impl InfoTree {
    /// The value as plain data: numbers, booleans, strings, lists and objects (pointers as
    /// addresses, except text a `char *` points to).
    pub(crate) fn plain(&self, v: &Value, t: &dyn Target) -> Result<Plain, TooLarge> {
        let cache = PageCache::new(t);
        let t = &cache;
        let v = self.prefetch(v, t);
        let mut budget = Budget {
            left: MAX_VALUES,
            seen: Seen::default(),
            held: Vec::new(),
            cut: None,
        };
        let p = self.plain_at(&v, t, 0, &mut budget);
        match budget.cut {
            Some(why) => Err(TooLarge(why)),
            None => Ok(p),
        }
    }

    pub(super) fn plain_at(
        &self,
        v: &Value,
        t: &dyn Target,
        depth: usize,
        budget: &mut Budget,
    ) -> Plain {
        if !budget.take(1) {
            return Plain::Null;
        }
        if let Place::Gone(g) = &v.place {
            return Plain::Gone(g.text());
        }
        let Some(ty) = self.strip(v.ty) else {
            return Plain::Null;
        };
        match &ty.kind {
            Kind::Pointer(_) if is_rust_ref(&ty) && depth < MAX_DEPTH => match self.deref(v, t) {
                Ok(target) => self.plain_at(&target, t, depth + 1, budget),
                Err(e) => unread(e),
            },
            Kind::Base(_) if ty.size == Some(0) => Plain::Null,
            Kind::Base(_) | Kind::Enum { .. } | Kind::Pointer(_) => {
                if let Kind::Pointer(to) = &ty.kind {
                    if let Some(kind) = self.text_kind(*to) {
                        if let Ok(Some(Scalar::Pointer(a))) = self.scalar(v, t) {
                            if a != 0 {
                                match self.read_units(a, kind, MAX_TEXT / kind.unit(), t) {
                                    Some((units, true)) => {
                                        return Plain::Str(unquote(&string_literal(
                                            &units,
                                            kind,
                                            usize::MAX,
                                            true,
                                            false,
                                        )))
                                    }
                                    Some((_, false)) => {
                                        budget.refuse(format!(
                                            "the text at {a:#x} runs past {} MiB with no end",
                                            MAX_TEXT >> 20
                                        ));
                                        return Plain::Null;
                                    }
                                    None => {}
                                }
                            }
                        }
                    }
                }
                match self.scalar(v, t) {
                    // A Rust fieldless enum (`Dir::South`, `Ordering::Greater`) is its
                    // variant's name, as a data-carrying one's empty variant is (`"None"`)
                    // and as serde writes it; C's and C++'s enums stay their numbers.
                    Ok(Some(Scalar::Enum(n))) if ty.rust => match &ty.kind {
                        Kind::Enum { enumerators, .. } => enumerators
                            .iter()
                            .find(|(_, e)| *e == n)
                            .map_or(Plain::Int(n), |(name, _)| Plain::Str(name.clone())),
                        _ => Plain::Int(n),
                    },
                    Ok(Some(s)) => scalar_plain(s),
                    Ok(None) => Plain::Null,
                    Err(e) => unread(e),
                }
            }
            Kind::Reference { .. } => match self.deref(v, t) {
                Ok(target) => self.plain_at(&target, t, depth, budget),
                Err(e) => unread(e),
            },
            Kind::Array { elem, .. } => {
                if let Some(kind) = self.text_kind(*elem) {
                    if self.value_size(v).is_some_and(|n| n > MAX_TEXT as u64) {
                        budget.refuse(format!("more than {} MiB of text", MAX_TEXT >> 20));
                        return Plain::Null;
                    }
                    return match self.bytes(v, t) {
                        Ok(b) => {
                            Plain::Str(unquote(&string_literal(&b, kind, usize::MAX, true, false)))
                        }
                        Err(e) => unread(e),
                    };
                }
                let count = self.length(v, t).unwrap_or(0);
                self.plain_list(t, depth, budget, count, |i| self.element(v, i, t))
            }
            Kind::Aggregate { .. } => {
                let ty = self.complete(ty.clone());
                if depth >= MAX_DEPTH {
                    budget.refuse(format!("more than {MAX_DEPTH} aggregates nested"));
                    return Plain::Null;
                }
                if let Some(p) = self.plain_printed(v, &ty, t, depth, budget) {
                    return p;
                }
                self.plain_aggregate(v, &ty, t, depth, budget)
            }
            Kind::MemberPointer { class, target } => match self.bytes(v, t) {
                Ok(b) => Plain::Str(self.member_pointer_text(*class, *target, &b, t)),
                Err(e) => unread(e),
            },
            _ => match self.bytes(v, t) {
                Ok(b) => Plain::Str(hex_bytes(&b)),
                Err(e) => unread(e),
            },
        }
    }

    pub(super) fn plain_list(
        &self,
        t: &dyn Target,
        depth: usize,
        budget: &mut Budget,
        count: u64,
        element: impl Fn(i64) -> Result<Value, ValueError>,
    ) -> Plain {
        // Refused before anything is read: a corrupt length of 2^40 costs nothing.
        if count > budget.left as u64 {
            budget.refuse(format!("{count} elements"));
            return Plain::Null;
        }
        let mut items = Vec::with_capacity(count as usize);
        for i in 0..count {
            items.push(match element(i as i64) {
                Ok(e) => self.plain_at(&e, t, depth + 1, budget),
                Err(e) => unread(e),
            });
            if budget.cut.is_some() {
                break;
            }
        }
        Plain::List(items)
    }

    fn plain_aggregate(
        &self,
        v: &Value,
        ty: &Type,
        t: &dyn Target,
        depth: usize,
        budget: &mut Budget,
    ) -> Plain {
        let Kind::Aggregate {
            members,
            statics,
            variants,
            ..
        } = &ty.kind
        else {
            return Plain::Null;
        };
        if let Some(seq) = self.rust_seq_kind(ty) {
            return match self.rust_sequence(v, ty, t) {
                Some(Ok((elem, ptr, len))) => match seq {
                    RustSeq::Text if len > MAX_TEXT as u64 => {
                        budget.refuse(format!("a string of {len} bytes"));
                        Plain::Null
                    }
                    RustSeq::Text => {
                        let n = len as usize;
                        let mut buf = vec![0u8; n];
                        if n == 0 || t.read(ptr, &mut buf) {
                            Plain::Str(String::from_utf8_lossy(&buf).into_owned())
                        } else {
                            Plain::Missing(
                                ValueError::Unreadable {
                                    addr: ptr,
                                    size: n as u64,
                                }
                                .to_string(),
                            )
                        }
                    }
                    RustSeq::Elements => {
                        let stride = self.size_of(elem).unwrap_or(0);
                        self.plain_list(t, depth, budget, len, |i| {
                            Ok(Value::at(elem, ptr.wrapping_add(stride * i as u64)))
                        })
                    }
                },
                Some(Err(e)) => unread(e),
                None => Plain::Null,
            };
        }
        if let Some(vp) = variants {
            return match self.active_variant(v, vp, t) {
                Ok(Some(x)) => {
                    let name = x.member.name.clone().unwrap_or_else(|| "?".into());
                    let inner = self.member_value(v, &x.member);
                    let body = self.plain_at(&inner, t, depth + 1, budget);
                    match body {
                        Plain::Obj(fields) if fields.is_empty() => Plain::Str(name),
                        // A variant holding one value is that value (`{"Some": 5}`), as
                        // serde writes a newtype variant; several are a list.
                        Plain::List(mut one)
                            if one.len() == 1
                                && self.strip(inner.ty).is_some_and(|t| is_rust_tuple(&t)) =>
                        {
                            Plain::Obj(vec![(name, one.remove(0))])
                        }
                        other => Plain::Obj(vec![(name, other)]),
                    }
                }
                Ok(None) => Plain::Missing("unknown variant".into()),
                Err(e) => unread(e),
            };
        }
        // A Rust tuple or tuple struct (`(1, "two")`, `Point(3, 4)`) is positional: a list,
        // as serde writes it, not an object of `__0`, `__1`.
        if is_rust_tuple(ty) {
            return Plain::List(
                members
                    .iter()
                    .map(|m| self.plain_at(&self.member_value_in(v, m, t), t, depth + 1, budget))
                    .collect(),
            );
        }
        let mut fields = Vec::new();
        for field in fields_in_order(members, statics) {
            let m = match field {
                Field::Member(m) if self.empty_base(m) => continue,
                Field::Member(m) => m,
                Field::Static(s) => {
                    let sv = self.static_value(ty, s, t);
                    let value = match self.compound_address(&sv) {
                        Some(a) if !budget.seen.first(a) => Plain::Missing("shown above".into()),
                        _ => self.plain_at(&self.prefetch(&sv, t), t, depth + 1, budget),
                    };
                    fields.push((s.name.clone(), value));
                    continue;
                }
            };
            let value = self.plain_at(&self.member_value_in(v, m, t), t, depth + 1, budget);
            let name = match (&m.name, m.base) {
                (Some(n), false) => n.clone(),
                // An anonymous struct or union lends its members to the enclosing one, as
                // C reads them (`tg.d`): they are the object's own keys.
                (None, false) => match value {
                    Plain::Obj(inner) => {
                        fields.extend(inner);
                        continue;
                    }
                    _ => format!("<{}>", self.type_name(m.ty)),
                },
                _ => format!("<{}>", self.type_name(m.ty)),
            };
            fields.push((name, value));
        }
        Plain::Obj(fields)
    }
}

/// What plain data may still cost, the static members it already holds, and why it was
/// refused (the first reason; the conversion stops there).
pub(super) struct Budget {
    left: usize,
    seen: Seen,
    /// Where the values that smart pointers hold on the way down to this one are: one met
    /// again is a link back (a Weak to a parent, an Rc cycle), never followed.
    pub(super) held: Vec<u64>,
    cut: Option<String>,
}

impl Budget {
    /// Books `n` values; false (and the value refused) once there is no room.
    pub(super) fn take(&mut self, n: usize) -> bool {
        if self.cut.is_some() {
            return false;
        }
        if n > self.left {
            self.refuse(format!("more than {MAX_VALUES} values"));
            return false;
        }
        self.left -= n;
        true
    }

    pub(super) fn room(&self) -> usize {
        self.left
    }

    pub(super) fn refuse(&mut self, why: String) {
        self.cut.get_or_insert(why);
    }
}

fn scalar_plain(s: Scalar) -> Plain {
    match s {
        Scalar::Signed(n) | Scalar::Enum(n) => Plain::Int(n),
        Scalar::Unsigned(n) => Plain::UInt(n),
        Scalar::Float(f) => Plain::Float(f),
        Scalar::Complex(re, im) => Plain::Obj(vec![
            ("real".to_string(), Plain::Float(re)),
            ("imag".to_string(), Plain::Float(im)),
        ]),
        Scalar::Bool(b) => Plain::Bool(b),
        Scalar::Char(c, _) => Plain::Int(i128::from(c)),
        Scalar::Pointer(p) => Plain::UInt(u128::from(p)),
    }
}

/// Plain data for a value that could not be read: `Gone` where the value has none here (a
/// sequence whose elements' address was optimized out too), `Missing` for a failed read.
fn unread(e: ValueError) -> Plain {
    match e {
        ValueError::Gone(g) => Plain::Gone(g.text()),
        e @ ValueError::ElementsGone { .. } => Plain::Gone(e.to_string()),
        e => Plain::Missing(e.to_string()),
    }
}

//! A typed value as plain data for scripts (numbers, strings, lists, objects), bounded as the
//! text is.

use crate::symbols::dwarf::fields::{fields_in_order, Field, Seen};
use crate::symbols::dwarf::location::Place;
use crate::symbols::dwarf::rust::{is_rust_ref, RustSeq};
use crate::symbols::dwarf::target::Target;
use crate::symbols::dwarf::tree::InfoTree;
use crate::symbols::dwarf::types::{Kind, Type};
use crate::symbols::dwarf::value::{Scalar, Value};
use crate::symbols::dwarf::value_error::ValueError;

use super::literals::{hex_bytes, string_literal, unquote};
use super::{Limits, Plain};

impl InfoTree {
    /// The value as plain data: numbers, booleans, strings, lists and objects (pointers as
    /// addresses, except text a `char *` points to).
    pub(crate) fn plain(&self, v: &Value, t: &dyn Target, lim: &Limits) -> Plain {
        let v = self.prefetch(v, t);
        let mut budget = Budget {
            left: lim.total.saturating_mul(16),
            seen: Seen::default(),
        };
        self.plain_at(&v, t, lim, 0, &mut budget)
    }

    fn plain_at(
        &self,
        v: &Value,
        t: &dyn Target,
        lim: &Limits,
        depth: usize,
        budget: &mut Budget,
    ) -> Plain {
        if budget.left == 0 {
            return Plain::Missing("too large".into());
        }
        budget.left -= 1;
        if let Place::Gone(g) = &v.place {
            return Plain::Missing(g.text());
        }
        let Some(ty) = self.strip(v.ty) else {
            return Plain::Null;
        };
        match &ty.kind {
            Kind::Pointer(_) if is_rust_ref(&ty) && depth < lim.depth * 2 => {
                match self.deref(v, t) {
                    Ok(target) => self.plain_at(&target, t, lim, depth + 1, budget),
                    Err(e) => Plain::Missing(e.to_string()),
                }
            }
            Kind::Base(_) | Kind::Enum { .. } | Kind::Pointer(_) => {
                if let Kind::Pointer(to) = &ty.kind {
                    if let Some(kind) = self.text_kind(*to) {
                        if let Ok(Some(Scalar::Pointer(a))) = self.scalar(v, t) {
                            if a != 0 {
                                if let Some(s) = self.read_string(a, kind, lim.chars * 8, t) {
                                    return Plain::Str(unquote(&s));
                                }
                            }
                        }
                    }
                }
                match self.scalar(v, t) {
                    Ok(Some(s)) => scalar_plain(s),
                    Ok(None) => Plain::Null,
                    Err(e) => Plain::Missing(e.to_string()),
                }
            }
            Kind::Reference { .. } => match self.deref(v, t) {
                Ok(target) => self.plain_at(&target, t, lim, depth, budget),
                Err(e) => Plain::Missing(e.to_string()),
            },
            Kind::Array { elem, .. } => {
                if let Some(kind) = self.text_kind(*elem) {
                    return match self.bytes(v, t) {
                        Ok(b) => {
                            Plain::Str(unquote(&string_literal(&b, kind, usize::MAX, true, false)))
                        }
                        Err(e) => Plain::Missing(e.to_string()),
                    };
                }
                let count = self.length(v, t).unwrap_or(0);
                self.plain_list(t, lim, depth, budget, count, |i| self.element(v, i, t))
            }
            Kind::Aggregate { .. } => {
                let ty = self.complete(ty.clone());
                if depth < lim.depth * 2 {
                    let printed = self.plain_printed(v, &ty, t, lim, |c| {
                        self.plain_at(&self.prefetch(c, t), t, lim, depth + 1, budget)
                    });
                    if let Some(p) = printed {
                        return p;
                    }
                }
                self.plain_aggregate(v, &ty, t, lim, depth, budget)
            }
            _ => match self.bytes(v, t) {
                Ok(b) => Plain::Str(hex_bytes(&b)),
                Err(e) => Plain::Missing(e.to_string()),
            },
        }
    }

    fn plain_list(
        &self,
        t: &dyn Target,
        lim: &Limits,
        depth: usize,
        budget: &mut Budget,
        count: u64,
        element: impl Fn(i64) -> Result<Value, ValueError>,
    ) -> Plain {
        let max = (lim.elements as u64).saturating_mul(32).min(count);
        let mut items = Vec::new();
        for i in 0..max {
            items.push(match element(i as i64) {
                Ok(e) => self.plain_at(&e, t, lim, depth + 1, budget),
                Err(e) => Plain::Missing(e.to_string()),
            });
        }
        Plain::List(items, count - max)
    }

    fn plain_aggregate(
        &self,
        v: &Value,
        ty: &Type,
        t: &dyn Target,
        lim: &Limits,
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
        if depth >= lim.depth * 2 {
            return Plain::Missing("nested too deep".into());
        }
        if let Some(seq) = self.rust_seq_kind(ty) {
            return match self.rust_sequence(v, ty, t) {
                Some(Ok((elem, ptr, len))) => match seq {
                    RustSeq::Text => {
                        let n = len.min(1 << 20) as usize;
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
                        self.plain_list(t, lim, depth, budget, len, |i| {
                            Ok(Value::at(elem, ptr.wrapping_add(stride * i as u64)))
                        })
                    }
                },
                Some(Err(e)) => Plain::Missing(e.to_string()),
                None => Plain::Null,
            };
        }
        if let Some(vp) = variants {
            return match self.active_variant(v, vp, t) {
                Ok(Some(x)) => {
                    let name = x.member.name.clone().unwrap_or_else(|| "?".into());
                    let inner = self.member_value(v, &x.member);
                    let body = self.plain_at(&inner, t, lim, depth + 1, budget);
                    match body {
                        Plain::Obj(fields) if fields.is_empty() => Plain::Str(name),
                        other => Plain::Obj(vec![(name, other)]),
                    }
                }
                Ok(None) => Plain::Missing("unknown variant".into()),
                Err(e) => Plain::Missing(e.to_string()),
            };
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
                        _ => self.plain_at(&self.prefetch(&sv, t), t, lim, depth + 1, budget),
                    };
                    fields.push((s.name.clone(), value));
                    continue;
                }
            };
            let name = match (&m.name, m.base) {
                (Some(n), false) => n.clone(),
                _ => format!("<{}>", self.type_name(m.ty)),
            };
            let value = self.plain_at(&self.member_value(v, m), t, lim, depth + 1, budget);
            fields.push((name, value));
        }
        Plain::Obj(fields)
    }
}

/// What plain data may still cost, and the static members it already holds.
struct Budget {
    left: usize,
    seen: Seen,
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

//! A typed value as one line of text (`{key: 20, name: "other", next: 0x5555555580e0, w:
//! 0.5}`) and as plain data for scripts. The text is bounded: nesting depth, elements per
//! array, characters per string and total length are capped, and pointers are never followed
//! except to show the text a `char *` points to, so a cyclic list prints in one line. Plain
//! data is whole or refused (`plain`).
//!
//! The parts: this file writes the text, `plain` the data for scripts, `printed` values a
//! printer claims, `literals` the spelling of numbers, characters, strings and enumerators,
//! `text` which values are text and reading it, `member_pointer` C++ pointers to members.

mod literals;
mod plain;
pub use plain::{TooLarge, MAX_TEXT as MAX_PLAIN_TEXT, MAX_VALUES as MAX_PLAIN_VALUES};
mod member_pointer;
mod printed;
mod text;

use super::fields::{fields_in_order, Field, Seen, SHOWN_ABOVE};
use super::location::Place;
use super::rust::{is_rust_ref, is_rust_tuple, is_tuple_field, RustSeq};
use super::target::Target;
use super::tree::InfoTree;
use super::types::{AggKind, Encoding, Kind, Type, TypeId};
use super::value::{Scalar, Value};
use super::value_error::ValueError;
use literals::f80_text;
pub use literals::float_text;
pub(super) use literals::quoted_units;
use literals::{char_literal, code_pointer, enum_text, hex_bytes, string_literal, unclosed, Text};

/// An aggregate smaller than this is read with one memory access before it is printed.
const PREFETCH: u64 = 64 * 1024;

#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Aggregates nested deeper print as `{…}`.
    pub depth: usize,
    /// Elements shown per array; the rest are counted.
    pub elements: usize,
    /// Characters shown per string.
    pub chars: usize,
    /// Bytes of the whole text.
    pub total: usize,
    /// Read what text pointers point to. Off for a value of another time (a watch hit's
    /// old bytes): memory now holds what the pointer leads to now, not then.
    pub pointees: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            depth: 4,
            elements: 32,
            chars: 200,
            total: 4096,
            pointees: true,
        }
    }
}

/// Plain data for scripts: what `value` of a typed value is.
#[derive(Clone, Debug, PartialEq)]
pub enum Plain {
    Null,
    Bool(bool),
    Int(i128),
    UInt(u128),
    Float(f64),
    Str(String),
    List(Vec<Plain>),
    Obj(Vec<(String, Plain)>),
    /// It could not be read, and why (memory that cannot be read, a printer's failure).
    Missing(String),
    /// It has no value here (`<optimized out>`, `<unavailable: ...>`), said so: no error of
    /// the program's or the read's, and no data either.
    Gone(String),
}

pub(super) struct Out {
    s: String,
    limit: usize,
    seen: Seen,
}

impl Out {
    pub(super) fn push(&mut self, text: &str) {
        self.s.push_str(text);
    }

    pub(super) fn full(&self) -> bool {
        self.s.len() >= self.limit
    }
}

impl InfoTree {
    /// The value as one line of text.
    pub(crate) fn render(&self, v: &Value, t: &dyn Target, limits: &Limits) -> String {
        let mut out = Out {
            s: String::new(),
            limit: limits.total,
            seen: Seen::default(),
        };
        let v = self.prefetch(v, t);
        self.write(&v, t, limits, 0, &mut out);
        if out.s.len() > limits.total {
            let mut cut = limits.total;
            while !out.s.is_char_boundary(cut) {
                cut -= 1;
            }
            out.s.truncate(cut);
            out.s.push('…');
            // Close what the cut left open, so `{a: 1, b: …}, c=2` never reads as if `c`
            // were a member.
            let closers = unclosed(&out.s);
            out.s.push_str(&closers);
        }
        out.s
    }

    /// A small aggregate in memory is read once, so its members cost no further reads.
    fn prefetch(&self, v: &Value, t: &dyn Target) -> Value {
        let Place::Memory(_) = v.place else {
            return v.clone();
        };
        let Some(ty) = self.strip(v.ty) else {
            return v.clone();
        };
        if !matches!(ty.kind, Kind::Aggregate { .. } | Kind::Array { .. }) {
            return v.clone();
        }
        // A flexible array member shows where it is: its struct stays in memory.
        if let Kind::Aggregate { members, .. } = &ty.kind {
            let flexible = members.last().is_some_and(|m| {
                self.strip(m.ty)
                    .is_some_and(|mt| matches!(mt.kind, Kind::Array { .. }) && mt.size.is_none())
            });
            if flexible {
                return v.clone();
            }
        }
        match self.value_size(v) {
            Some(n) if n <= PREFETCH => match self.bytes(v, t) {
                Ok(bytes) => Value {
                    ty: v.ty,
                    place: match v.address() {
                        Some(a) => Place::copied(a, bytes),
                        None => Place::bytes(bytes),
                    },
                    bits: v.bits,
                },
                Err(_) => v.clone(),
            },
            _ => v.clone(),
        }
    }

    pub(super) fn write(
        &self,
        v: &Value,
        t: &dyn Target,
        lim: &Limits,
        depth: usize,
        out: &mut Out,
    ) {
        if out.full() {
            return;
        }
        if let Place::Gone(g) = &v.place {
            out.push(&g.text());
            return;
        }
        let Some(ty) = self.strip(v.ty) else {
            out.push("void");
            return;
        };
        match &ty.kind {
            // A type of no bytes (Rust's unit `()`) has no number: it is itself.
            Kind::Base(_) if ty.size == Some(0) => out.push(ty.name.as_deref().unwrap_or("()")),
            Kind::Base(_) | Kind::Enum { .. } => match self.scalar(v, t) {
                // A `uint8_t` is a number (`222`), a `char` a character (`113 'q'`).
                Ok(Some(Scalar::Char(c, _))) if self.byte_typedef(v.ty) => out.push(&c.to_string()),
                // A long double in its own precision and range, from its bytes.
                Ok(Some(Scalar::Float(_)))
                    if matches!(ty.kind, Kind::Base(Encoding::Float))
                        && matches!(ty.size, Some(10 | 16)) =>
                {
                    match self.bytes(v, t) {
                        Ok(b) if b.len() >= 10 => out.push(&f80_text(&b)),
                        Ok(_) => out.push("?"),
                        Err(e) => out.push(&e.bracketed()),
                    }
                }
                Ok(Some(s)) => out.push(&self.scalar_text(&ty, s)),
                Ok(None) => out.push("?"),
                Err(e) => out.push(&e.bracketed()),
            },
            // A Rust reference always points at a live value: it shows that value, as a C++
            // reference does (a raw pointer or a Box shows its address).
            Kind::Pointer(_) if is_rust_ref(&ty) => match self.deref(v, t) {
                Ok(target) => self.write(&target, t, lim, depth, out),
                Err(_) => {
                    let Kind::Pointer(to) = ty.kind else { return };
                    self.write_pointer(v, to, &ty, t, lim, depth, out)
                }
            },
            Kind::Pointer(to) => self.write_pointer(v, *to, &ty, t, lim, depth, out),
            Kind::Reference { .. } => match self.deref(v, t) {
                Ok(target) => self.write(&target, t, lim, depth + 1, out),
                Err(e) => out.push(&e.bracketed()),
            },
            // A flexible array member (`char data[]`) has no size of its own: as gdb, it is
            // its address, with the C string there for a character array.
            Kind::Array { elem, .. } if self.value_size(v).is_none() => {
                let Place::Memory(addr) = v.place else {
                    out.push("<array of unknown size>");
                    return;
                };
                match self.text_kind(*elem) {
                    Some(kind) => match self.read_string(addr, kind, lim.chars, t) {
                        Some(s) if depth == 0 => out.push(&format!("{addr:#x} {s}")),
                        Some(s) => out.push(&s),
                        None => out.push(&format!("{addr:#x} <unreadable>")),
                    },
                    None => out.push(&format!("{addr:#x}")),
                }
            }
            Kind::Array { elem, .. } => {
                if let Some(kind) = self.text_kind(*elem) {
                    match self.bytes(v, t) {
                        Ok(bytes) => {
                            out.push(&string_literal(&bytes, kind, lim.chars, true, ty.rust))
                        }
                        Err(e) => out.push(&e.bracketed()),
                    }
                    return;
                }
                let count = self.length(v, t).unwrap_or(0);
                self.write_elements(v, t, lim, depth, count, out, |i| self.element(v, i, t));
            }
            Kind::Aggregate { .. } => {
                let ty = self.complete(ty.clone());
                if !self.write_printed(v, &ty, t, lim, depth, out) {
                    self.write_aggregate(v, &ty, t, lim, depth, out);
                }
            }
            Kind::Function { .. } => match v.address() {
                Some(a) => out.push(&code_pointer(a, t)),
                None => out.push("<function>"),
            },
            Kind::MemberPointer { class, target } => match self.bytes(v, t) {
                Ok(b) => out.push(&self.member_pointer_text(*class, *target, &b, t)),
                Err(e) => out.push(&e.bracketed()),
            },
            Kind::Typedef(_) | Kind::Qualified(..) | Kind::Other => match self.bytes(v, t) {
                Ok(b) => out.push(&hex_bytes(&b)),
                Err(e) => out.push(&e.bracketed()),
            },
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn write_elements(
        &self,
        _v: &Value,
        t: &dyn Target,
        lim: &Limits,
        depth: usize,
        count: u64,
        out: &mut Out,
        element: impl Fn(i64) -> Result<Value, ValueError>,
    ) {
        if depth >= lim.depth {
            out.push(&format!("[… {count} elements]"));
            return;
        }
        out.push("[");
        let shown = count.min(lim.elements as u64);
        for i in 0..shown {
            if i > 0 {
                out.push(", ");
            }
            match element(i as i64) {
                Ok(e) => self.write(&e, t, lim, depth + 1, out),
                Err(e) => out.push(&e.bracketed()),
            }
            if out.full() {
                break;
            }
        }
        if count > shown {
            out.push(&format!(", … {} more", count - shown));
        }
        out.push("]");
    }

    #[allow(clippy::too_many_arguments)]
    fn write_pointer(
        &self,
        v: &Value,
        to: Option<TypeId>,
        ty: &Type,
        t: &dyn Target,
        lim: &Limits,
        depth: usize,
        out: &mut Out,
    ) {
        let addr = match self.scalar(v, t) {
            Ok(Some(Scalar::Pointer(a))) => a,
            Ok(_) => {
                out.push("?");
                return;
            }
            Err(e) => {
                out.push(&e.bracketed());
                return;
            }
        };
        if addr == 0 {
            out.push("0x0");
            return;
        }
        if let Some(kind) = self.text_kind(to) {
            if !lim.pointees {
                out.push(&format!("{addr:#x}"));
                return;
            }
            let text = self.read_string(addr, kind, lim.chars, t);
            match text {
                Some(s) if depth == 0 => out.push(&format!("{addr:#x} {s}")),
                Some(s) => out.push(&s),
                None => out.push(&format!("{addr:#x} <unreadable>")),
            }
            return;
        }
        let to_code = self
            .strip(to)
            .is_some_and(|p| matches!(p.kind, Kind::Function { .. }));
        if to_code {
            out.push(&code_pointer(addr, t));
            return;
        }
        // A pointer to code pointers is a C++ object's vtable pointer (`_vptr.Shape`): its
        // symbol (`vtable for geo::Rect+0x10`) names the object's dynamic type, at any depth.
        let to_table = self.strip(to).is_some_and(|p| match p.kind {
            Kind::Pointer(inner) => self
                .strip(inner)
                .is_some_and(|f| matches!(f.kind, Kind::Function { .. })),
            _ => false,
        });
        if to_table {
            out.push(&code_pointer(addr, t));
            return;
        }
        let _ = ty;
        // A symbol the address lies in, at any depth as gdb shows it (`p: 0x4c3028 <counter>`
        // inside a struct says where the member points); never a mapping name (`[stack]+0x20`,
        // `[heap]+0x10`), which says nothing the value does not.
        let symbol = t.symbolize(addr).filter(|s| !s.starts_with('['));
        match symbol {
            Some(s) => out.push(&format!("{addr:#x} <{s}>")),
            None => out.push(&format!("{addr:#x}")),
        }
    }

    fn write_aggregate(
        &self,
        v: &Value,
        ty: &Type,
        t: &dyn Target,
        lim: &Limits,
        depth: usize,
        out: &mut Out,
    ) {
        let Kind::Aggregate {
            kind,
            variants,
            declaration,
            ..
        } = &ty.kind
        else {
            return;
        };
        if let Some(seq) = self.rust_seq_kind(ty) {
            match self.rust_sequence(v, ty, t) {
                Some(Ok((elem, ptr, len))) => match seq {
                    RustSeq::Text => {
                        let n = len.min(lim.chars as u64 * 4) as usize;
                        let mut buf = vec![0u8; n];
                        if n == 0 || t.read(ptr, &mut buf) {
                            let mut s = string_literal(&buf, Text::Narrow, lim.chars, false, true);
                            if len as usize > n {
                                s.push('…');
                            }
                            out.push(&s);
                        } else {
                            out.push(&format!("{ptr:#x} <unreadable>"));
                        }
                    }
                    RustSeq::Elements => {
                        let stride = self.size_of(elem).unwrap_or(0);
                        self.write_elements(v, t, lim, depth, len, out, |i| {
                            Ok(Value::at(elem, ptr.wrapping_add(stride * i as u64)))
                        });
                    }
                },
                Some(Err(e)) => out.push(&e.bracketed()),
                None => out.push("?"),
            }
            return;
        }
        if *declaration {
            out.push("<incomplete type>");
            return;
        }
        if depth >= lim.depth {
            // Too deep for the fields; a Rust enum still says which variant it is.
            let variant = variants
                .as_ref()
                .and_then(|vp| self.active_variant(v, vp, t).ok().flatten());
            match variant {
                Some(x) => {
                    out.push(x.member.name.as_deref().unwrap_or("?"));
                    let has_fields = self.strip(x.member.ty).is_some_and(|vt| {
                        matches!(&vt.kind, Kind::Aggregate { members, .. } if !members.is_empty())
                    });
                    if has_fields {
                        out.push("(…)");
                    }
                }
                None => out.push("{…}"),
            }
            return;
        }
        if let Some(vp) = variants {
            match self.active_variant(v, vp, t) {
                Ok(Some(x)) => {
                    let name = x.member.name.clone().unwrap_or_else(|| "?".into());
                    out.push(&name);
                    let inner = self.member_value(v, &x.member);
                    if let Some(vt) = self.strip(x.member.ty) {
                        if let Kind::Aggregate { members, .. } = &vt.kind {
                            if !members.is_empty() {
                                self.write_fields(&inner, &vt, t, lim, depth, out, true);
                            }
                        }
                    }
                }
                Ok(None) => out.push("<unknown variant>"),
                Err(e) => out.push(&e.bracketed()),
            }
            return;
        }
        let tuple = is_rust_tuple(ty);
        let _ = kind == &AggKind::Union;
        self.write_fields(v, ty, t, lim, depth, out, tuple);
    }

    /// `{a: 1, b: 2}`, or `(1, 2)` for tuple fields (`__0`, `__1`).
    #[allow(clippy::too_many_arguments)]
    fn write_fields(
        &self,
        v: &Value,
        owner: &Type,
        t: &dyn Target,
        lim: &Limits,
        depth: usize,
        out: &mut Out,
        tuple_ok: bool,
    ) {
        let Kind::Aggregate {
            members, statics, ..
        } = &owner.kind
        else {
            return;
        };
        let tuple = tuple_ok
            && statics.is_empty()
            && members
                .iter()
                .all(|m| m.name.as_deref().is_some_and(is_tuple_field));
        out.push(if tuple { "(" } else { "{" });
        let mut first = true;
        for field in fields_in_order(members, statics) {
            if matches!(field, Field::Member(m) if self.empty_base(m)) {
                continue;
            }
            if !first {
                out.push(", ");
            }
            first = false;
            let m = match field {
                Field::Member(m) => m,
                Field::Static(s) => {
                    out.push(&format!("static {}: ", s.name));
                    let sv = self.static_value(owner, s, t);
                    self.write_static(&sv, t, lim, depth + 1, out);
                    if out.full() {
                        break;
                    }
                    continue;
                }
            };
            if !tuple {
                match (&m.name, m.base) {
                    (Some(n), false) => out.push(&format!("{n}: ")),
                    _ if m.base => out.push(&format!("<{}>: ", self.type_name(m.ty))),
                    _ => {}
                }
            }
            self.write(&self.member_value_in(v, m, t), t, lim, depth + 1, out);
            if out.full() {
                break;
            }
        }
        out.push(if tuple { ")" } else { "}" });
    }

    /// A base class with no data (`std::__pair_base`, a tag or policy class): it prints as
    /// `<X>: {}` and says nothing, so it is left out, as a struct's empty bases hold no bytes.
    fn empty_base(&self, m: &super::types::Member) -> bool {
        if !m.base {
            return false;
        }
        let Some(ty) = self.strip(m.ty).map(|t| self.complete(t)) else {
            return false;
        };
        match &ty.kind {
            // A base only declared (its definition not found) may hold data: it stays.
            Kind::Aggregate {
                members,
                statics,
                declaration: false,
                variants: None,
                ..
            } => statics.is_empty() && members.iter().all(|b| b.base && self.empty_base(b)),
            _ => false,
        }
    }

    /// A static member's value; one of struct or array type already printed in this value
    /// (a singleton's `inst` inside `inst`) is not printed again.
    fn write_static(&self, v: &Value, t: &dyn Target, lim: &Limits, depth: usize, out: &mut Out) {
        if let Some(addr) = self.compound_address(v) {
            if !out.seen.first(addr) {
                out.push(SHOWN_ABOVE);
                return;
            }
        }
        let v = self.prefetch(v, t);
        self.write(&v, t, lim, depth, out);
    }

    /// Where a struct, union or array value is, if it is in memory.
    fn compound_address(&self, v: &Value) -> Option<u64> {
        let ty = self.strip(v.ty)?;
        let compound = matches!(ty.kind, Kind::Aggregate { .. } | Kind::Array { .. });
        compound.then(|| v.address()).flatten()
    }

    /// The text of a scalar: `20`, `-1.5`, `true`, `113 'q'`, `BLUE`, `6 (no enumerator)`.
    pub(crate) fn scalar_text(&self, ty: &Type, s: Scalar) -> String {
        match s {
            Scalar::Signed(n) => n.to_string(),
            Scalar::Unsigned(n) => n.to_string(),
            Scalar::Float(f) => float_text(f, ty.size == Some(4)),
            // gdb's spelling: `1.5 + 2i`, `1.5 + -2i`.
            Scalar::Complex(re, im) => {
                let single = ty.size == Some(8);
                format!("{} + {}i", float_text(re, single), float_text(im, single))
            }
            Scalar::Bool(b) => b.to_string(),
            Scalar::Char(c, enc) => format!("{c} {}", char_literal(c as u32, enc)),
            Scalar::Pointer(p) => format!("{p:#x}"),
            Scalar::Enum(n) => enum_text(ty, n, &self.enumerator_prefix(ty)),
        }
    }
}

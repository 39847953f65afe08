//! A typed value as one line of text (`{key: 20, name: "other", next: 0x5555555580e0, w:
//! 0.5}`) and as plain data for scripts. Both are bounded: nesting depth, elements per array,
//! characters per string and total length are capped, and pointers are never followed except
//! to show the text a `char *` points to, so a cyclic list prints in one line.

use super::location::Place;
use super::rust::{is_rust_ref, is_tuple_field, RustSeq};
use super::statics::{fields_in_order, Field, Seen, SHOWN_ABOVE};
use super::tree::InfoTree;
use super::types::{AggKind, Encoding, Kind, Type, TypeId};
use super::value::{Scalar, Target, Value};

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
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            depth: 4,
            elements: 32,
            chars: 200,
            total: 4096,
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
    /// Items and how many more there were.
    List(Vec<Plain>, u64),
    Obj(Vec<(String, Plain)>),
    /// No value, and why.
    Missing(String),
}

/// How a character string is spelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Text {
    /// `char`: bytes, shown as UTF-8 where valid.
    Narrow,
    /// `wchar_t`: 4-byte code points, `L"…"`.
    Wide,
    /// `char16_t`: UTF-16, `u"…"`.
    Utf16,
    /// `char32_t`: code points, `U"…"`.
    Utf32,
}

impl Text {
    fn unit(self) -> usize {
        match self {
            Text::Narrow => 1,
            Text::Utf16 => 2,
            Text::Wide | Text::Utf32 => 4,
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Text::Narrow => "",
            Text::Wide => "L",
            Text::Utf16 => "u",
            Text::Utf32 => "U",
        }
    }
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
    pub fn render(&self, v: &Value, t: &dyn Target, limits: &Limits) -> String {
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
            Kind::Base(_) | Kind::Enum { .. } => match self.scalar(v, t) {
                // A `uint8_t` is a number (`222`), a `char` a character (`113 'q'`).
                Ok(Some(Scalar::Char(c, _))) if self.byte_typedef(v.ty) => out.push(&c.to_string()),
                Ok(Some(s)) => out.push(&self.scalar_text(&ty, s)),
                Ok(None) => out.push("?"),
                Err(e) => out.push(&bracket(&e)),
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
                Err(e) => out.push(&bracket(&e)),
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
                        Err(e) => out.push(&bracket(&e)),
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
            Kind::Typedef(_) | Kind::Qualified(..) | Kind::Other => match self.bytes(v, t) {
                Ok(b) => out.push(&hex_bytes(&b)),
                Err(e) => out.push(&bracket(&e)),
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
        element: impl Fn(i64) -> Result<Value, String>,
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
                Err(e) => out.push(&bracket(&e)),
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
                out.push(&bracket(&e));
                return;
            }
        };
        if addr == 0 {
            out.push("0x0");
            return;
        }
        if let Some(kind) = self.text_kind(to) {
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
            members,
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
                Some(Err(e)) => out.push(&bracket(&e)),
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
                Err(e) => out.push(&bracket(&e)),
            }
            return;
        }
        let tuple = ty.rust
            && !members.is_empty()
            && members
                .iter()
                .all(|m| m.name.as_deref().is_some_and(is_tuple_field));
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
            self.write(&self.member_value(v, m), t, lim, depth + 1, out);
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
    pub fn scalar_text(&self, ty: &Type, s: Scalar) -> String {
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

    /// Whether `ty` is reached through a typedef that names a byte as a number (`uint8_t`).
    fn byte_typedef(&self, ty: Option<TypeId>) -> bool {
        let mut cur = ty;
        for _ in 0..16 {
            let Some(t) = cur.and_then(|id| self.type_of(id)) else {
                return false;
            };
            match &t.kind {
                Kind::Typedef(_) if t.name.as_deref().is_some_and(is_byte_typedef) => return true,
                Kind::Typedef(next) | Kind::Qualified(_, next) => cur = *next,
                _ => return false,
            }
        }
        false
    }

    /// What kind of text an element or pointee type is, if it is a character type.
    fn text_kind(&self, elem: Option<TypeId>) -> Option<Text> {
        // `wchar_t` is a typedef of int: recognized by its name before qualifiers go.
        let mut cur = elem;
        for _ in 0..16 {
            let t = self.type_of(cur?)?;
            match &t.kind {
                Kind::Typedef(next) => {
                    match t.name.as_deref() {
                        Some("wchar_t") => return Some(Text::Wide),
                        Some("char16_t") => return Some(Text::Utf16),
                        Some("char32_t") => return Some(Text::Utf32),
                        // A byte type by name is numbers, not characters: `uint8_t key[4]` is
                        // `[222, 173, 190, 239]` (a program that meant text says `char`).
                        Some(name) if is_byte_typedef(name) => return None,
                        _ => {}
                    }
                    cur = *next;
                }
                Kind::Qualified(_, next) => cur = *next,
                Kind::Base(enc) => {
                    return match (enc, t.size) {
                        // Rust's u8 is unsigned char too, but a `*const u8` is not text.
                        (Encoding::SignedChar | Encoding::UnsignedChar, Some(1)) if !t.rust => {
                            Some(Text::Narrow)
                        }
                        (Encoding::Utf, Some(2)) if !t.rust => Some(Text::Utf16),
                        (Encoding::Utf, Some(4)) if !t.rust => Some(Text::Utf32),
                        (Encoding::Utf, Some(1)) if !t.rust => Some(Text::Narrow),
                        _ => None,
                    };
                }
                _ => return None,
            }
        }
        None
    }

    /// A NUL-terminated string at `addr`, quoted, at most `max` characters.
    fn read_string(&self, addr: u64, kind: Text, max: usize, t: &dyn Target) -> Option<String> {
        let unit = kind.unit();
        let mut bytes = Vec::new();
        let chunk = 64 * unit;
        let mut at = addr;
        while bytes.len() < max * unit + unit {
            let mut buf = vec![0u8; chunk];
            if !t.read(at, &mut buf) {
                // The end of a mapping may cut the last chunk: read unit by unit.
                let mut ok = false;
                for c in buf.chunks_mut(unit) {
                    if !t.read(at, c) {
                        break;
                    }
                    ok = true;
                    let end = c.iter().all(|&b| b == 0);
                    bytes.extend_from_slice(c);
                    at += unit as u64;
                    if end {
                        break;
                    }
                }
                if !ok && bytes.is_empty() {
                    return None;
                }
                break;
            }
            let end = buf.chunks(unit).position(|c| c.iter().all(|&b| b == 0));
            match end {
                Some(i) => {
                    bytes.extend_from_slice(&buf[..i * unit]);
                    return Some(string_literal(&bytes, kind, max, true, false));
                }
                None => bytes.extend_from_slice(&buf),
            }
            at += chunk as u64;
        }
        Some(string_literal(&bytes, kind, max, true, false))
    }

    /// The value as plain data: numbers, booleans, strings, lists and objects (pointers as
    /// addresses, except text a `char *` points to).
    pub fn plain(&self, v: &Value, t: &dyn Target, lim: &Limits) -> Plain {
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
                    Err(e) => Plain::Missing(e),
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
                    Err(e) => Plain::Missing(e),
                }
            }
            Kind::Reference { .. } => match self.deref(v, t) {
                Ok(target) => self.plain_at(&target, t, lim, depth, budget),
                Err(e) => Plain::Missing(e),
            },
            Kind::Array { elem, .. } => {
                if let Some(kind) = self.text_kind(*elem) {
                    return match self.bytes(v, t) {
                        Ok(b) => {
                            Plain::Str(unquote(&string_literal(&b, kind, usize::MAX, true, false)))
                        }
                        Err(e) => Plain::Missing(e),
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
                Err(e) => Plain::Missing(e),
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
        element: impl Fn(i64) -> Result<Value, String>,
    ) -> Plain {
        let max = (lim.elements as u64).saturating_mul(32).min(count);
        let mut items = Vec::new();
        for i in 0..max {
            items.push(match element(i as i64) {
                Ok(e) => self.plain_at(&e, t, lim, depth + 1, budget),
                Err(e) => Plain::Missing(e),
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
                            Plain::Missing(format!("cannot read {n} bytes at {ptr:#x}"))
                        }
                    }
                    RustSeq::Elements => {
                        let stride = self.size_of(elem).unwrap_or(0);
                        self.plain_list(t, lim, depth, budget, len, |i| {
                            Ok(Value::at(elem, ptr.wrapping_add(stride * i as u64)))
                        })
                    }
                },
                Some(Err(e)) => Plain::Missing(e),
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
                Err(e) => Plain::Missing(e),
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

/// What closes what `text` leaves open: a string or character literal, then brackets (`{`,
/// `[`, `(`), innermost first; brackets inside literals do not count.
fn unclosed(text: &str) -> String {
    let mut open = Vec::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '{' => open.push('}'),
            '[' => open.push(']'),
            '(' => open.push(')'),
            '}' | ']' | ')' => {
                open.pop();
            }
            _ => {}
        }
    }
    // A cut inside a literal closes the literal first.
    quote
        .into_iter()
        .chain(open.iter().rev().copied())
        .collect()
}

/// Shortest text that reads back as the same number (`0.6666666666666666`, `1.5`, `0.1`
/// for a float that holds 0.1f), with an exponent far from 1 (`4.17767552971e-314`,
/// `1e300`): the garbage double of an uninitialized local would otherwise print as 300
/// digits.
pub fn float_text(f: f64, single: bool) -> String {
    if f.is_nan() {
        // gdb's spelling keeps the sign and the mantissa bits: x86's default NaN (0.0/0.0)
        // is `-nan(0x8000000000000)`, a payload-carrying one tells where it came from.
        let (negative, mantissa) = if single {
            let b = (f as f32).to_bits();
            (b >> 31 != 0, u64::from(b & 0x7f_ffff))
        } else {
            let b = f.to_bits();
            (b >> 63 != 0, b & ((1 << 52) - 1))
        };
        return format!("{}nan({mantissa:#x})", if negative { "-" } else { "" });
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    // Debug is the shortest round-trip text, switching to an exponent below 1e-5 and
    // above 1e16; its `.0` on integral values is dropped (`2`, as C programmers read it).
    let text = if single {
        format!("{:?}", f as f32)
    } else {
        format!("{f:?}")
    };
    match text.strip_suffix(".0") {
        Some(integral) => integral.to_string(),
        None => text,
    }
}

/// An enumerator's text: its name after `prefix` (`geo::Color::` for a C++ scoped enum).
fn enum_text(ty: &Type, n: i128, prefix: &str) -> String {
    let Kind::Enum { enumerators, .. } = &ty.kind else {
        return n.to_string();
    };
    if let Some((name, _)) = enumerators.iter().find(|(_, v)| *v == n) {
        return format!("{prefix}{name}");
    }
    // A flag enum (every enumerator a distinct bit): the value as an OR of flags.
    let flags = !enumerators.is_empty()
        && enumerators
            .iter()
            .all(|(_, v)| *v > 0 && (*v & (*v - 1)) == 0);
    if flags && n > 0 {
        let mut rest = n;
        let mut parts = Vec::new();
        for (name, v) in enumerators {
            if rest & v != 0 {
                parts.push(format!("{prefix}{name}"));
                rest &= !v;
            }
        }
        if !parts.is_empty() {
            if rest != 0 {
                parts.push(format!("{rest:#x}"));
            }
            return parts.join(" | ");
        }
    }
    format!("{n} (no enumerator)")
}

fn char_literal(c: u32, enc: Encoding) -> String {
    let byte = if enc == Encoding::SignedChar {
        c & 0xff
    } else {
        c
    };
    match byte {
        0 => "'\\0'".into(),
        0x0a => "'\\n'".into(),
        0x09 => "'\\t'".into(),
        0x0d => "'\\r'".into(),
        0x27 => "'\\''".into(),
        0x5c => "'\\\\'".into(),
        0x20..=0x7e => format!("'{}'", char::from(byte as u8)),
        _ if byte > 0x7f && enc == Encoding::Utf => match char::from_u32(byte) {
            Some(ch) => format!("'{ch}'"),
            None => format!("'\\u{{{byte:x}}}'"),
        },
        _ if byte < 0x100 => format!("'\\x{byte:02x}'"),
        _ => match char::from_u32(byte) {
            Some(ch) => format!("'{ch}'"),
            None => format!("'\\u{{{byte:x}}}'"),
        },
    }
}

fn code_pointer(addr: u64, t: &dyn Target) -> String {
    match t.symbolize(addr) {
        Some(s) => format!("{addr:#x} <{s}>"),
        None => format!("{addr:#x}"),
    }
}

pub(super) fn bracket(e: &str) -> String {
    if e.starts_with('<') {
        e.to_string()
    } else {
        format!("<{e}>")
    }
}

fn hex_bytes(b: &[u8]) -> String {
    let shown: String = b.iter().take(64).map(|x| format!("{x:02x}")).collect();
    if b.len() > 64 {
        format!("{shown}…")
    } else {
        shown
    }
}

/// `bytes` as code units of `unit` bytes (1: UTF-8 where valid, 2: UTF-16, 4: code points),
/// quoted, NULs shown escaped.
pub(super) fn quoted_units(bytes: &[u8], unit: usize, max: usize) -> String {
    let kind = match unit {
        2 => Text::Utf16,
        4 => Text::Utf32,
        _ => Text::Narrow,
    };
    string_literal(bytes, kind, max, false, false)
}

/// A quoted string from code units. `stop_at_nul`: the text ends at the first NUL when only
/// NULs follow (a C string in a buffer); otherwise everything is shown with NULs escaped.
fn string_literal(bytes: &[u8], kind: Text, max: usize, stop_at_nul: bool, rust: bool) -> String {
    let unit = kind.unit();
    let units: Vec<u32> = bytes
        .chunks(unit)
        .filter(|c| c.len() == unit)
        .map(|c| {
            let mut raw = [0u8; 4];
            raw[..unit].copy_from_slice(c);
            u32::from_le_bytes(raw)
        })
        .collect();
    let mut end = units.len();
    if stop_at_nul {
        if let Some(first_nul) = units.iter().position(|&u| u == 0) {
            if units[first_nul..].iter().all(|&u| u == 0) {
                end = first_nul;
            }
        }
    }
    let units = &units[..end];
    let mut s = String::new();
    let mut shown = 0;
    let mut truncated = false;
    let push = |s: &mut String, ch: Option<char>, raw: u32| match ch {
        Some('"') => s.push_str("\\\""),
        Some('\\') => s.push_str("\\\\"),
        Some('\n') => s.push_str("\\n"),
        Some('\t') => s.push_str("\\t"),
        Some('\r') => s.push_str("\\r"),
        Some('\0') => s.push_str("\\0"),
        Some(c) if !c.is_control() => s.push(c),
        _ if raw < 0x100 => s.push_str(&format!("\\x{raw:02x}")),
        _ => s.push_str(&format!("\\u{{{raw:x}}}")),
    };
    match kind {
        Text::Narrow => {
            let raw: Vec<u8> = units.iter().map(|&u| u as u8).collect();
            let mut rest: &[u8] = &raw;
            while !rest.is_empty() {
                if shown >= max {
                    truncated = true;
                    break;
                }
                match std::str::from_utf8(rest) {
                    Ok(text) => {
                        for ch in text.chars() {
                            if shown >= max {
                                truncated = true;
                                break;
                            }
                            push(&mut s, Some(ch), ch as u32);
                            shown += 1;
                        }
                        break;
                    }
                    Err(e) => {
                        let (good, bad) = rest.split_at(e.valid_up_to());
                        for ch in std::str::from_utf8(good).unwrap_or_default().chars() {
                            if shown >= max {
                                truncated = true;
                                break;
                            }
                            push(&mut s, Some(ch), ch as u32);
                            shown += 1;
                        }
                        if truncated {
                            break;
                        }
                        push(&mut s, None, u32::from(bad[0]));
                        shown += 1;
                        rest = &bad[1..];
                    }
                }
            }
        }
        Text::Utf16 => {
            for ch in char::decode_utf16(units.iter().map(|&u| u as u16)) {
                if shown >= max {
                    truncated = true;
                    break;
                }
                match ch {
                    Ok(c) => push(&mut s, Some(c), c as u32),
                    Err(e) => push(&mut s, None, u32::from(e.unpaired_surrogate())),
                }
                shown += 1;
            }
        }
        Text::Wide | Text::Utf32 => {
            for &u in units {
                if shown >= max {
                    truncated = true;
                    break;
                }
                push(&mut s, char::from_u32(u), u);
                shown += 1;
            }
        }
    }
    let _ = rust;
    let mut out = format!("{}\"{s}\"", kind.prefix());
    if truncated {
        out.push('…');
    }
    out
}

/// The content of a quoted literal from `string_literal`, unescaped for scripts.
fn unquote(lit: &str) -> String {
    let body = lit
        .trim_end_matches('…')
        .trim_start_matches(['L', 'u', 'U'])
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(lit);
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('x') => {
                let h: String = chars.by_ref().take(2).collect();
                if let Ok(b) = u8::from_str_radix(&h, 16) {
                    out.push(char::from(b));
                }
            }
            Some('u') => {
                let code: String = chars.by_ref().skip(1).take_while(|&c| c != '}').collect();
                if let Some(ch) = u32::from_str_radix(&code, 16).ok().and_then(char::from_u32) {
                    out.push(ch);
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// Typedefs that name a byte as a number: `uint8_t` and its spellings in libc, the kernel and
/// glib.
fn is_byte_typedef(name: &str) -> bool {
    let name = name.strip_prefix("std::").unwrap_or(name);
    matches!(
        name,
        "uint8_t"
            | "int8_t"
            | "__uint8_t"
            | "__int8_t"
            | "u_int8_t"
            | "__u8"
            | "__s8"
            | "u8"
            | "s8"
            | "guint8"
            | "gint8"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_stop_at_trailing_nuls_and_escape_the_rest() {
        assert_eq!(
            string_literal(b"abc\0\0\0", Text::Narrow, 100, true, false),
            "\"abc\""
        );
        assert_eq!(
            string_literal(b"\0\0\xc0?", Text::Narrow, 100, true, false),
            "\"\\0\\0\\xc0?\""
        );
        assert_eq!(
            string_literal(b"hello", Text::Narrow, 3, true, false),
            "\"hel\"…"
        );
        let wide: Vec<u8> = "wide ü"
            .chars()
            .flat_map(|c| (c as u32).to_le_bytes())
            .collect();
        assert_eq!(
            string_literal(&wide, Text::Wide, 100, true, false),
            "L\"wide ü\""
        );
        let utf16: Vec<u8> = "six".encode_utf16().flat_map(|u| u.to_le_bytes()).collect();
        assert_eq!(
            string_literal(&utf16, Text::Utf16, 100, true, false),
            "u\"six\""
        );
        assert_eq!(unquote("\"a\\n\\\"b\\x41\""), "a\n\"bA");
    }

    #[test]
    fn floats_and_chars() {
        assert_eq!(float_text(2.0 / 3.0, false), "0.6666666666666666");
        assert_eq!(float_text(0.1f32 as f64, true), "0.1");
        assert_eq!(float_text(-1.5, false), "-1.5");
        assert_eq!(float_text(2.0, false), "2");
        assert_eq!(unclosed("{a: [1, 2], b: {c: \"x{\", d: …"), "}}");
        assert_eq!(unclosed("(5, '(', [\"]\\\"\", …"), "])");
        assert_eq!(unclosed("{a: 1}"), "");
        assert_eq!(unclosed("{s: \"ab…"), "\"}");
        assert_eq!(float_text(4.1776755297e-314, false), "4.1776755297e-314");
        assert_eq!(float_text(f64::from_bits(1), false), "5e-324");
        assert_eq!(float_text(1e300, false), "1e300");
        // NaNs as gdb prints them: sign and mantissa bits.
        assert_eq!(
            float_text(f64::from_bits(0xfff8_0000_0000_0000), false),
            "-nan(0x8000000000000)"
        );
        assert_eq!(
            float_text(f64::from_bits(0x7ff0_0000_0000_0001), false),
            "nan(0x1)"
        );
        assert_eq!(
            float_text(
                f64::from(std::hint::black_box(f32::from_bits(0xffc0_0000))),
                true
            ),
            "-nan(0x400000)"
        );
        assert_eq!(
            float_text(
                f64::from(std::hint::black_box(f32::from_bits(0x7fc0_0001))),
                true
            ),
            "nan(0x400001)"
        );
        assert_eq!(float_text(-f64::MAX, false), "-1.7976931348623157e308");
        assert_eq!(float_text(1.0e-40f32 as f64, true), "1e-40");
        assert_eq!(char_literal(b'q' as u32, Encoding::SignedChar), "'q'");
        assert_eq!(char_literal(0xfb, Encoding::SignedChar), "'\\xfb'");
        assert_eq!(char_literal(0xe9, Encoding::Utf), "'é'");
    }

    #[test]
    fn enums_by_name_flags_or_honest_number() {
        let t = |e: Vec<(&str, i128)>| Type {
            id: TypeId(1),
            name: None,
            size: Some(4),
            kind: Kind::Enum {
                enumerators: e.into_iter().map(|(n, v)| (n.to_string(), v)).collect(),
                signed: false,
                scoped: false,
            },
            rust: false,
            c: true,
        };
        let color = t(vec![("RED", 0), ("GREEN", 1), ("BLUE", 5)]);
        assert_eq!(enum_text(&color, 5, ""), "BLUE");
        assert_eq!(enum_text(&color, 6, ""), "6 (no enumerator)");
        assert_eq!(enum_text(&color, 1, "geo::Color::"), "geo::Color::GREEN");
        assert_eq!(enum_text(&color, 6, "geo::Color::"), "6 (no enumerator)");
        let perm = t(vec![("P_READ", 1), ("P_WRITE", 2), ("P_EXEC", 4)]);
        assert_eq!(enum_text(&perm, 5, ""), "P_READ | P_EXEC");
        assert_eq!(enum_text(&perm, 9, ""), "P_READ | 0x8");
        assert_eq!(enum_text(&perm, 0, ""), "0 (no enumerator)");
        assert_eq!(enum_text(&perm, 3, "io::"), "io::P_READ | io::P_WRITE");
    }
}

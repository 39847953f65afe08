//! JS: what a typed value (`state.var('head')`) does behind its Proxy: `String(v)`, `+v`,
//! members, elements, pointees, `$type`, `$size`, `$addr`, `$base`... Every operation is one
//! native call here; nothing about DWARF types lives in JS.

use super::handle::{handle, H};
use super::printers::JsPretty;
use super::*;
use crate::session::TypedValue;
use crate::symbols::dwarf::pretty::{Pretty, Shape};
use crate::symbols::dwarf::{Limits, Plain, Scalar};

/// The natives this file defines, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    t.def("val_text", text)?; // String(v), v.$text()
    t.def("val_plain", plain)?; // v.$value
    t.def("val_prim", prim)?; // +v, `${v}`, v.valueOf(); a printer's number (strict)
    t.def("val_member", member)?; // v.name, v.$member(name)
    t.def("val_keys", keys)?; // Object.keys(v), v.$keys()
    t.def("val_index", index)?; // v[i], v.$at(i)
    t.def("val_deref", deref)?; // v.$deref()
    t.def("val_ref", address_of)?; // v.$ref()
    t.def("val_addr", addr)?; // v.$addr
    t.def("val_type", type_name)?; // v.$type
    t.def("val_kind", kind)?; // v.$kind
    t.def("val_size", size)?; // v.$size
    t.def("val_len", len)?; // v.$length
    t.def("val_bases", bases)?; // v.$base(name)
    Ok(())
}

fn text<'js>(h: &Host, ctx: Ctx<'js>, v: H<'js>, raw: Opt<bool>) -> rquickjs::Result<String> {
    let tv = v.borrow().0.clone();
    let printers = JsPretty::new(&ctx, h, &tv);
    let pretty = (!raw.0.unwrap_or(false)).then_some(&printers as &dyn Pretty);
    let text = h
        .session_ref(&ctx)?
        .value_text(&tv, &Limits::default(), pretty)
        .or_throw(&ctx)?;
    printers.check()?;
    Ok(text)
}

fn plain<'js>(h: &Host, ctx: Ctx<'js>, v: H<'js>, raw: Opt<bool>, json: Opt<bool>) -> R<'js> {
    let tv = v.borrow().0.clone();
    let printers = JsPretty::new(&ctx, h, &tv);
    let pretty = (!raw.0.unwrap_or(false)).then_some(&printers as &dyn Pretty);
    let p = h
        .session_ref(&ctx)?
        .value_plain(&tv, pretty)
        .or_throw(&ctx)?;
    printers.check()?;
    // A value with none here (`<optimized out>`) has no plain data: an error marked
    // noValue, never a string of scry's words that reads like the program's own text; one
    // that cannot be read (memory, a corrupt container, a printer's failure) is an error
    // that says why. (Such a part of a larger value stays its `<...>` text in place, and
    // JSON.stringify, a rendering, writes the text.)
    if !json.0.unwrap_or(false) {
        match &p {
            Plain::Gone(why) => {
                return Err(throw(
                    &ctx,
                    crate::session::SessionError::NoValue(why.clone()),
                ))
            }
            Plain::Missing(why) => {
                return Err(throw(
                    &ctx,
                    crate::session::SessionError::Invalid(why.clone()),
                ))
            }
            _ => {}
        }
    }
    plain_to_js(&ctx, &p)
}

fn prim<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    v: H<'js>,
    hint: Opt<String>,
    raw: Opt<bool>,
    strict: Opt<bool>,
) -> R<'js> {
    let hint = hint.0.unwrap_or_else(|| "default".into());
    let tv = v.borrow().0.clone();
    let value = primitive(&ctx, h, &tv, &hint, raw.0.unwrap_or(false))?;
    if strict.0.unwrap_or(false) && value.as_float().is_some_and(f64::is_nan) {
        // A printer's read: why there is no number is the error itself (marked when the
        // value has none here), not a NaN to be explained from its text.
        let session = h.session_ref(&ctx)?;
        session
            .value_scalar(&session.referent(&tv))
            .or_throw(&ctx)?;
    }
    Ok(value)
}

fn member<'js>(h: &Host, ctx: Ctx<'js>, v: H<'js>, name: String) -> R<'js> {
    let tv = v.borrow().0.clone();
    let m = h
        .session_ref(&ctx)?
        .value_member(&tv, &name)
        .or_throw(&ctx)?;
    handle(&ctx, m)
}

fn keys<'js>(h: &Host, ctx: Ctx<'js>, v: H<'js>) -> R<'js> {
    let tv = v.borrow().0.clone();
    let names = h.session_ref(&ctx)?.value_members(&tv);
    // Built by definition: a Vec would be converted by assignment, which runs setters a
    // script put on Array.prototype.
    let a = Array::new(ctx.clone())?;
    for name in names {
        a.push(name)?;
    }
    Ok(a.into_value())
}

fn index<'js>(h: &Host, ctx: Ctx<'js>, v: H<'js>, i: Value<'js>) -> R<'js> {
    let i = values::to_integer(&ctx, &i)
        .ok()
        .and_then(|i| i64::try_from(i).ok())
        .ok_or_else(|| throw(&ctx, "an index must be an integer"))?;
    let tv = v.borrow().0.clone();
    let e = h.session_ref(&ctx)?.value_index(&tv, i).or_throw(&ctx)?;
    handle(&ctx, e)
}

fn deref<'js>(h: &Host, ctx: Ctx<'js>, v: H<'js>) -> R<'js> {
    let tv = v.borrow().0.clone();
    let d = h.session_ref(&ctx)?.value_deref(&tv).or_throw(&ctx)?;
    handle(&ctx, d)
}

fn address_of<'js>(h: &Host, ctx: Ctx<'js>, v: H<'js>) -> R<'js> {
    let tv = v.borrow().0.clone();
    let r = h.session_ref(&ctx)?.value_address_of(&tv).or_throw(&ctx)?;
    handle(&ctx, r)
}

fn addr<'js>(h: &Host, ctx: Ctx<'js>, v: H<'js>) -> R<'js> {
    // A reference's address is its referent's.
    let tv = v.borrow().0.clone();
    let referent = h.session_ref(&ctx)?.referent(&tv);
    match referent.value.address() {
        Some(a) => u64_to_js(&ctx, a),
        None => Ok(undefined(&ctx)),
    }
}

fn type_name<'js>(h: &Host, ctx: Ctx<'js>, v: H<'js>) -> rquickjs::Result<String> {
    Ok(h.session_ref(&ctx)?.value_type_name(&v.borrow().0))
}

fn kind<'js>(h: &Host, ctx: Ctx<'js>, v: H<'js>) -> rquickjs::Result<String> {
    Ok(h.session_ref(&ctx)?.value_kind(&v.borrow().0).to_string())
}

fn size<'js>(h: &Host, ctx: Ctx<'js>, v: H<'js>) -> R<'js> {
    match h.session_ref(&ctx)?.value_size(&v.borrow().0) {
        Some(s) => u64_to_js(&ctx, s),
        None => Ok(undefined(&ctx)),
    }
}

fn len<'js>(h: &Host, ctx: Ctx<'js>, v: H<'js>) -> R<'js> {
    let tv = v.borrow().0.clone();
    match h.session_ref(&ctx)?.value_length(&tv) {
        Some(s) => u64_to_js(&ctx, s),
        None => Ok(undefined(&ctx)),
    }
}

/// The base-class parts of a C++ object: `[type name, value]` each.
fn bases<'js>(h: &Host, ctx: Ctx<'js>, v: H<'js>) -> R<'js> {
    let tv = v.borrow().0.clone();
    let bases = h.session_ref(&ctx)?.value_bases(&tv);
    let a = Array::new(ctx.clone())?;
    for (name, b) in bases {
        let pair = Array::new(ctx.clone())?;
        pair.push(name)?;
        pair.push(handle(&ctx, b)?)?;
        a.push(pair)?;
    }
    Ok(a.into_value())
}

fn plain_to_js<'js>(ctx: &Ctx<'js>, p: &Plain) -> R<'js> {
    Ok(match p {
        Plain::Null => Value::new_null(ctx.clone()),
        Plain::Bool(b) => Value::new_bool(ctx.clone(), *b),
        Plain::Int(n) => values::int_to_js(ctx, *n)?,
        Plain::UInt(n) => values::uint_to_js(ctx, *n)?,
        Plain::Float(f) => values::float_to_js(ctx, *f),
        Plain::Str(s) | Plain::Missing(s) | Plain::Gone(s) => s.as_str().into_js(ctx)?,
        Plain::List(items) => {
            let a = Array::new(ctx.clone())?;
            for item in items {
                a.push(plain_to_js(ctx, item)?)?;
            }
            a.into_value()
        }
        Plain::Obj(fields) => {
            let o = Object::new(ctx.clone())?;
            for (k, v) in fields {
                o.put(k.as_str(), plain_to_js(ctx, v)?)?;
            }
            o.into_value()
        }
    })
}

/// The primitive a value turns into. For arithmetic (`Number(v)`, `v * 2`, `v > 3`) a
/// number: integers, characters, enumerators, floats, pointers (their address). For text
/// (`String(v)`, `${v}`, `'' + v`, `v == 'BLUE'`) what prints, except that integers and
/// floats stay numbers and C strings are their characters, so `s == 'other'` compares text.
fn primitive<'js>(ctx: &Ctx<'js>, host: &Host, v: &TypedValue, hint: &str, raw: bool) -> R<'js> {
    primitive_at(ctx, host, v, hint, raw, 0)
}

/// What a printed wrapper or smart pointer is as a number: the number of the one value it
/// holds (`Number(optional)` is 42, not NaN), or the address it points to; `None` where a
/// printer claims no such thing.
enum Held {
    Value(TypedValue),
    Address(u64),
}

fn held_by_printer(printers: &JsPretty<'_, '_>, v: &TypedValue) -> Option<Held> {
    let p = printers.print(&v.value, 1, false).ok()?;
    let Some((_, crate::symbols::dwarf::pretty::Child::Value(c))) = p.items.first() else {
        return None;
    };
    match p.shape {
        Shape::Value => Some(Held::Value(TypedValue {
            file: v.file.clone(),
            value: c.clone(),
        })),
        Shape::Pointer => c.address().map(Held::Address),
        _ => None,
    }
}

fn primitive_at<'js>(
    ctx: &Ctx<'js>,
    host: &Host,
    v: &TypedValue,
    hint: &str,
    raw: bool,
    depth: usize,
) -> R<'js> {
    let session = host.session_ref(ctx)?;
    let v = &session.referent(v);
    let limits = Limits::default();
    let printers = JsPretty::new(ctx, host, v);
    let pretty = (!raw).then_some(&printers as &dyn Pretty);
    let text = |session: &std::cell::Ref<'_, crate::session::Session>| -> R<'js> {
        let text = session.value_text(v, &limits, pretty).or_throw(ctx)?;
        printers.check()?;
        text.into_js(ctx)
    };
    if hint == "string" {
        return text(&session);
    }
    let kind = session.value_kind(v);
    if hint == "number" && matches!(kind, "array" | "text") {
        // An array as a number is its address, as C's arrays decay to a pointer to their
        // first element: `state.memory(state.var('buf'))` reads the buffer.
        if let Some(a) = v.value.address() {
            return u64_to_js(ctx, a);
        }
    }
    let claimed = || {
        session
            .value_printable(v)
            .is_some_and(|(name, _)| printers.claims_name(&name))
    };
    // Wrappers nest (an optional of an optional): a few levels, never a printer's loop.
    if hint == "number" && !raw && matches!(kind, "struct" | "enum") && depth < 4 && claimed() {
        match held_by_printer(&printers, v) {
            Some(Held::Value(held)) => {
                drop(session);
                return primitive_at(ctx, host, &held, hint, raw, depth + 1);
            }
            Some(Held::Address(a)) => return u64_to_js(ctx, a),
            None => {}
        }
    }
    // A Rust `Option` in arithmetic or a comparison is what `Some` holds (`opt > 3`, and
    // `opt == 50`, the default hint), as `$deref()` reads it; `None` is no number (below).
    if hint != "string" && kind == "enum" && depth < 4 {
        let ty = session.value_type_name(v);
        if ty.starts_with("Option<") || ty.starts_with("core::option::Option<") {
            if let Ok(held) = session.value_deref(v) {
                drop(session);
                return primitive_at(ctx, host, &held, hint, raw, depth + 1);
            }
        }
    }
    let scalar = match session.value_scalar(v) {
        Ok(s) => s,
        // A value with none here in arithmetic or a comparison (`v == 2` in a condition):
        // an error marked noValue, as gdb's "value has been optimized out", never a NaN
        // that makes every comparison false (a condition that never fired, silently).
        Err(e @ crate::session::SessionError::NoValue(_)) if hint != "string" => {
            return Err(throw(ctx, e))
        }
        // Unreadable: what prints says why.
        Err(_) if hint == "number" => return Ok(Value::new_number(ctx.clone(), f64::NAN)),
        Err(_) => return text(&session),
    };
    if hint != "number" {
        // A struct's characters only where a printer makes it text (a std::string): any
        // other struct goes straight to its rendering, never through plain data first.
        let printed_struct = kind == "struct" && !raw && claimed();
        // A pointer is its address (`p + 8`, `p > q`, `hex(p)`), except one to characters,
        // which is the text it points to.
        // Plain data only where it may be text: a 100,000-element array is never converted
        // whole only to find it is not.
        let chars = kind == "array" && session.value_is_char_array(v);
        if matches!(kind, "text" | "pointer") || chars || printed_struct {
            if let Ok(Plain::Str(s)) = session.value_plain(v, pretty) {
                return s.into_js(ctx);
            }
        }
        if matches!(kind, "enum" | "struct" | "union" | "array" | "other") {
            return text(&session);
        }
    }
    match scalar {
        Some(Scalar::Signed(n)) | Some(Scalar::Enum(n)) => values::int_to_js(ctx, n),
        Some(Scalar::Unsigned(n)) => values::uint_to_js(ctx, n),
        Some(Scalar::Float(f)) => Ok(values::float_to_js(ctx, f)),
        // Two numbers are no Number: the text (`1.5 + 2i`), NaN where a number is asked for.
        Some(Scalar::Complex(..)) if hint == "number" => {
            Ok(Value::new_number(ctx.clone(), f64::NAN))
        }
        Some(Scalar::Complex(..)) => text(&session),
        Some(Scalar::Bool(b)) => Ok(Value::new_bool(ctx.clone(), b)),
        Some(Scalar::Char(c, _)) => Ok(Value::new_number(ctx.clone(), c as f64)),
        Some(Scalar::Pointer(p)) => u64_to_js(ctx, p),
        // An aggregate as a number (`opt > 3` of a Rust `Option<u32>`, `Number(s)` of a
        // struct): an error naming it, never a NaN that makes every comparison false (a
        // condition that never fires, silently). What a wrapper holds is its number above
        // (`Some(50)` is 50); one that holds nothing (`None`) is no number.
        None if hint == "number" && matches!(kind, "struct" | "enum" | "union") => {
            let shown = session
                .value_text(v, &limits, pretty)
                .unwrap_or_else(|_| "it".into());
            Err(throw(
                ctx,
                format!(
                    "{} {shown} is no number: use a member of it, or its .value",
                    session.value_type_name(v)
                ),
            ))
        }
        None if hint == "number" => Ok(Value::new_number(ctx.clone(), f64::NAN)),
        None => text(&session),
    }
}

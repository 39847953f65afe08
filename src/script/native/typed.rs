//! Typed values in JavaScript: an opaque native handle (a `TypedValue`: the image whose DWARF
//! types it, and where its bytes are) that the prelude wraps in a Proxy so members, elements
//! and pointees read like plain JS (`state.var('head').next.name`). Every operation is one
//! native call here; nothing about DWARF types lives in JS.

use super::handle::{handle, H};
use super::pretty::JsPretty;
use super::*;
use crate::session::TypedValue;
use crate::symbols::dwarf::pretty::Pretty;
use crate::symbols::dwarf::{Limits, Plain, Scalar};

fn frame_arg<'js>(ctx: &Ctx<'js>, v: Opt<Value<'js>>, what: &str) -> rquickjs::Result<usize> {
    match v.0.filter(|v| !v.is_undefined() && !v.is_null()) {
        Some(v) => {
            Ok(values::to_count(ctx, &v, 100_000, what).map_err(|e| throw(ctx, e))? as usize)
        }
        None => Ok(0),
    }
}

fn int_to_js<'js>(ctx: &Ctx<'js>, n: i128) -> R<'js> {
    if let Ok(i) = i64::try_from(n) {
        values::i64_to_js(ctx, i)
    } else if let Ok(u) = u64::try_from(n) {
        u64_to_js(ctx, u)
    } else {
        Ok(Value::new_number(ctx.clone(), n as f64))
    }
}

fn plain_to_js<'js>(ctx: &Ctx<'js>, p: &Plain) -> R<'js> {
    Ok(match p {
        Plain::Null => Value::new_null(ctx.clone()),
        Plain::Bool(b) => Value::new_bool(ctx.clone(), *b),
        Plain::Int(n) => int_to_js(ctx, *n)?,
        Plain::UInt(n) => match u64::try_from(*n) {
            Ok(u) => u64_to_js(ctx, u)?,
            Err(_) => Value::new_number(ctx.clone(), *n as f64),
        },
        Plain::Float(f) => Value::new_number(ctx.clone(), *f),
        Plain::Str(s) | Plain::Missing(s) => s.as_str().into_js(ctx)?,
        Plain::List(items, more) => {
            let a = Array::new(ctx.clone())?;
            for item in items {
                a.push(plain_to_js(ctx, item)?)?;
            }
            if *more > 0 {
                // Printed as `[... N more]`, as other cut listings are.
                a.as_object().put("more", *more as f64)?;
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
    let session = host.session_ref(ctx)?;
    let v = &session.referent(v);
    let limits = Limits::default();
    let printers = JsPretty::new(ctx, host, v);
    let pretty = (!raw).then_some(&printers as &dyn Pretty);
    let text = |session: &std::cell::Ref<'_, crate::session::Session>| -> R<'js> {
        session
            .value_text(v, &limits, pretty)
            .map_err(|e| throw(ctx, e))?
            .into_js(ctx)
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
    let scalar = match session.value_scalar(v) {
        Ok(s) => s,
        // No value (optimized out, unreadable): what prints says why.
        Err(_) if hint == "number" => return Ok(Value::new_number(ctx.clone(), f64::NAN)),
        Err(_) => return text(&session),
    };
    if hint != "number" {
        // A struct's characters only where a printer makes it text (a std::string): any
        // other struct goes straight to its rendering, never through plain data first.
        let printed_struct = kind == "struct"
            && !raw
            && session
                .value_printable(v)
                .is_some_and(|(name, _)| printers.claims_name(&name));
        // A pointer is its address (`p + 8`, `p > q`, `hex(p)`), except one to characters,
        // which is the text it points to.
        let char_pointer = kind == "pointer"
            && matches!(session.value_plain(v, &limits, pretty), Ok(Plain::Str(_)));
        if matches!(kind, "text" | "array") || printed_struct || char_pointer {
            if let Ok(Plain::Str(s)) = session.value_plain(v, &limits, pretty) {
                return s.into_js(ctx);
            }
        }
        if matches!(kind, "enum" | "struct" | "union" | "array" | "other") {
            return text(&session);
        }
    }
    match scalar {
        Some(Scalar::Signed(n)) | Some(Scalar::Enum(n)) => int_to_js(ctx, n),
        Some(Scalar::Unsigned(n)) => int_to_js(ctx, n as i128),
        Some(Scalar::Float(f)) => Ok(Value::new_number(ctx.clone(), f)),
        // Two numbers are no Number: the text (`1.5 + 2i`), NaN where a number is asked for.
        Some(Scalar::Complex(..)) if hint == "number" => {
            Ok(Value::new_number(ctx.clone(), f64::NAN))
        }
        Some(Scalar::Complex(..)) => text(&session),
        Some(Scalar::Bool(b)) => Ok(Value::new_bool(ctx.clone(), b)),
        Some(Scalar::Char(c, _)) => Ok(Value::new_number(ctx.clone(), c as f64)),
        Some(Scalar::Pointer(p)) => u64_to_js(ctx, p),
        None if hint == "number" => Ok(Value::new_number(ctx.clone(), f64::NAN)),
        None => text(&session),
    }
}

/// Defines this part's native functions on `n`.
pub(super) fn install<'js>(
    n: &Object<'js>,
    ctx: &Ctx<'js>,
    host: &Rc<Host>,
) -> rquickjs::Result<()> {
    let h = host.clone();
    def!(n, ctx, "frame_vars", move |ctx: Ctx<'js>,
                                     frame: Opt<Value<'js>>|
          -> R<'js> {
        let frame = frame_arg(&ctx, frame, "locals(frame)")?;
        let list = h
            .session_mut(&ctx)?
            .frame_vars(frame)
            .map_err(|e| throw(&ctx, e))?;
        let rows = Array::new(ctx.clone())?;
        for v in list {
            let o = Object::new(ctx.clone())?;
            o.put("name", v.name.as_str())?;
            o.put("type", h.session_ref(&ctx)?.value_type_name(&v.value))?;
            let addr = v.value.value.address();
            // A parameter's value at entry is a row of its own (`m@entry`, kind `entry`)
            // where it says something the value does not: it differs, or it is all there is.
            let entry = v.entry.filter(|e| {
                let session = h.session_ref(&ctx);
                session.is_ok_and(|s| {
                    let text = |x| s.value_text(x, &Limits::default(), None).ok();
                    text(e) != text(&v.value)
                })
            });
            o.put("value", handle(&ctx, v.value)?)?;
            o.put("kind", if v.param { "param" } else { "local" })?;
            if let Some(a) = addr {
                o.put("addr", u64_to_js(&ctx, a)?)?;
            }
            rows.push(o)?;
            if let Some(e) = entry {
                let o = Object::new(ctx.clone())?;
                o.put("name", format!("{}@entry", v.name))?;
                o.put("type", h.session_ref(&ctx)?.value_type_name(&e))?;
                o.put("value", handle(&ctx, e)?)?;
                o.put("kind", "entry")?;
                rows.push(o)?;
            }
        }
        Ok(rows.into_value())
    });

    let h = host.clone();
    def!(n, ctx, "var", move |ctx: Ctx<'js>,
                              name: String,
                              frame: Opt<Value<'js>>|
          -> R<'js> {
        let frame = frame_arg(&ctx, frame, "var(name, frame)")?;
        let v = h
            .session_mut(&ctx)?
            .lookup_var(&name, frame)
            .map_err(|e| throw(&ctx, e))?;
        handle(&ctx, v)
    });

    let h = host.clone();
    def!(n, ctx, "path", move |ctx: Ctx<'js>,
                               text: String,
                               frame: Opt<Value<'js>>|
          -> R<'js> {
        let frame = frame_arg(&ctx, frame, "value(path, frame)")?;
        let parsed = crate::symbols::dwarf::path::parse(&text).map_err(|e| throw(&ctx, e))?;
        let v = super::pretty::walk_path(&ctx, &h, &parsed, frame)?;
        handle(&ctx, v)
    });

    let h = host.clone();
    def!(n, ctx, "tls_typed", move |ctx: Ctx<'js>,
                                    name: String|
          -> R<'js> {
        match h
            .session_mut(&ctx)?
            .thread_local_typed(&name)
            .map_err(|e| throw(&ctx, e))?
        {
            Some(v) => handle(&ctx, v),
            None => Ok(undefined(&ctx)),
        }
    });

    let h = host.clone();
    def!(n, ctx, "val_text", move |ctx: Ctx<'js>,
                                   v: H<'js>,
                                   raw: Opt<bool>|
          -> rquickjs::Result<String> {
        let tv = v.borrow().0.clone();
        let printers = JsPretty::new(&ctx, &h, &tv);
        let pretty = (!raw.0.unwrap_or(false)).then_some(&printers as &dyn Pretty);
        h.session_ref(&ctx)?
            .value_text(&tv, &Limits::default(), pretty)
            .map_err(|e| throw(&ctx, e))
    });

    let h = host.clone();
    def!(n, ctx, "val_plain", move |ctx: Ctx<'js>,
                                    v: H<'js>,
                                    raw: Opt<bool>|
          -> R<'js> {
        let tv = v.borrow().0.clone();
        let printers = JsPretty::new(&ctx, &h, &tv);
        let pretty = (!raw.0.unwrap_or(false)).then_some(&printers as &dyn Pretty);
        let p = h
            .session_ref(&ctx)?
            .value_plain(&tv, &Limits::default(), pretty)
            .map_err(|e| throw(&ctx, e))?;
        plain_to_js(&ctx, &p)
    });

    let h = host.clone();
    def!(n, ctx, "val_prim", move |ctx: Ctx<'js>,
                                   v: H<'js>,
                                   hint: Opt<String>,
                                   raw: Opt<bool>|
          -> R<'js> {
        let hint = hint.0.unwrap_or_else(|| "default".into());
        let tv = v.borrow().0.clone();
        primitive(&ctx, &h, &tv, &hint, raw.0.unwrap_or(false))
    });

    let h = host.clone();
    def!(n, ctx, "val_member", move |ctx: Ctx<'js>,
                                     v: H<'js>,
                                     name: String|
          -> R<'js> {
        let tv = v.borrow().0.clone();
        let m = h
            .session_ref(&ctx)?
            .value_member(&tv, &name)
            .map_err(|e| throw(&ctx, e))?;
        handle(&ctx, m)
    });

    let h = host.clone();
    def!(n, ctx, "val_keys", move |ctx: Ctx<'js>,
                                   v: H<'js>|
          -> R<'js> {
        let tv = v.borrow().0.clone();
        let names = h.session_ref(&ctx)?.value_members(&tv);
        // Built by definition: a Vec would be converted by assignment, which runs setters a
        // script put on Array.prototype.
        let a = Array::new(ctx.clone())?;
        for name in names {
            a.push(name)?;
        }
        Ok(a.into_value())
    });

    let h = host.clone();
    def!(n, ctx, "val_index", move |ctx: Ctx<'js>,
                                    v: H<'js>,
                                    i: Value<'js>|
          -> R<'js> {
        let i = values::to_integer(&ctx, &i)
            .ok()
            .and_then(|i| i64::try_from(i).ok())
            .ok_or_else(|| throw(&ctx, "an index must be an integer"))?;
        let tv = v.borrow().0.clone();
        let e = h
            .session_ref(&ctx)?
            .value_index(&tv, i)
            .map_err(|e| throw(&ctx, e))?;
        handle(&ctx, e)
    });

    let h = host.clone();
    def!(n, ctx, "val_deref", move |ctx: Ctx<'js>,
                                    v: H<'js>|
          -> R<'js> {
        let tv = v.borrow().0.clone();
        let d = h
            .session_ref(&ctx)?
            .value_deref(&tv)
            .map_err(|e| throw(&ctx, e))?;
        handle(&ctx, d)
    });

    let h = host.clone();
    def!(n, ctx, "val_ref", move |ctx: Ctx<'js>,
                                  v: H<'js>|
          -> R<'js> {
        let tv = v.borrow().0.clone();
        let r = h
            .session_ref(&ctx)?
            .value_address_of(&tv)
            .map_err(|e| throw(&ctx, e))?;
        handle(&ctx, r)
    });

    let h = host.clone();
    def!(n, ctx, "val_addr", move |ctx: Ctx<'js>,
                                   v: H<'js>|
          -> R<'js> {
        // A reference's address is its referent's.
        let tv = v.borrow().0.clone();
        let referent = h.session_ref(&ctx)?.referent(&tv);
        match referent.value.address() {
            Some(a) => u64_to_js(&ctx, a),
            None => Ok(undefined(&ctx)),
        }
    });

    let h = host.clone();
    def!(n, ctx, "val_type", move |ctx: Ctx<'js>,
                                   v: H<'js>|
          -> rquickjs::Result<String> {
        Ok(h.session_ref(&ctx)?.value_type_name(&v.borrow().0))
    });

    let h = host.clone();
    def!(n, ctx, "val_kind", move |ctx: Ctx<'js>,
                                   v: H<'js>|
          -> rquickjs::Result<String> {
        Ok(h.session_ref(&ctx)?.value_kind(&v.borrow().0).to_string())
    });

    let h = host.clone();
    def!(n, ctx, "val_size", move |ctx: Ctx<'js>,
                                   v: H<'js>|
          -> R<'js> {
        match h.session_ref(&ctx)?.value_size(&v.borrow().0) {
            Some(s) => u64_to_js(&ctx, s),
            None => Ok(undefined(&ctx)),
        }
    });

    let h = host.clone();
    def!(n, ctx, "val_len", move |ctx: Ctx<'js>,
                                  v: H<'js>|
          -> R<'js> {
        let tv = v.borrow().0.clone();
        match h.session_ref(&ctx)?.value_length(&tv) {
            Some(s) => u64_to_js(&ctx, s),
            None => Ok(undefined(&ctx)),
        }
    });
    Ok(())
}

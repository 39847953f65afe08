//! JS: `state.var`, `state.value`, `state.locals`, `state.typed`, `state.thread_local`,
//! `state.thread_local_addr`: the program's variables as typed values.

use super::*;
use crate::script::native::handle::handle;
use crate::symbols::dwarf::Limits;

/// The natives this file defines, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    t.def("var", var)?; // state.var(name, frame)
    t.def("path", path)?; // state.value(path, frame)
    t.def("frame_vars", frame_vars)?; // state.locals(frame)
    t.def("typed_at", typed_at)?; // state.typed(addr, type)
    t.def("tls_typed", tls_typed)?; // state.thread_local(name)
    t.def("tls", tls)?; // state.thread_local(name), state.thread_local_addr(name)
    Ok(())
}

fn var<'js>(h: &Host, ctx: Ctx<'js>, name: String, frame: Opt<Value<'js>>) -> R<'js> {
    let frame = frame_arg(&ctx, frame, "var(name, frame)")?;
    let v = h
        .session_mut(&ctx)?
        .lookup_var(&name, frame)
        .or_throw(&ctx)?;
    handle(&ctx, v)
}

fn path<'js>(h: &Host, ctx: Ctx<'js>, text: String, frame: Opt<Value<'js>>) -> R<'js> {
    let frame = frame_arg(&ctx, frame, "value(path, frame)")?;
    let parsed = crate::symbols::dwarf::path::parse(&text).or_throw(&ctx)?;
    let v = printers::walk_path(&ctx, h, &parsed, frame)?;
    handle(&ctx, v)
}

fn frame_vars<'js>(h: &Host, ctx: Ctx<'js>, frame: Opt<Value<'js>>) -> R<'js> {
    let frame = frame_arg(&ctx, frame, "locals(frame)")?;
    let list = h.session_mut(&ctx)?.frame_vars(frame).or_throw(&ctx)?;
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
}

/// `state.typed(addr, 'struct foo *')`: a value of a type the DWARF names, at an address.
fn typed_at<'js>(h: &Host, ctx: Ctx<'js>, at: Value<'js>, spec: String) -> R<'js> {
    let addr = address(&ctx, h, &at)?;
    let v = h.session_ref(&ctx)?.typed_at(addr, &spec).or_throw(&ctx)?;
    handle(&ctx, v)
}

fn tls_typed<'js>(h: &Host, ctx: Ctx<'js>, name: String) -> R<'js> {
    match h
        .session_mut(&ctx)?
        .thread_local_typed(&name)
        .or_throw(&ctx)?
    {
        Some(v) => handle(&ctx, v),
        None => Ok(undefined(&ctx)),
    }
}

fn tls<'js>(h: &Host, ctx: Ctx<'js>, name: String) -> R<'js> {
    let (addr, size) = h.session_mut(&ctx)?.thread_local(&name).or_throw(&ctx)?;
    let o = Object::new(ctx.clone())?;
    o.put("addr", u64_to_js(&ctx, addr)?)?;
    o.put("size", size as f64)?;
    Ok(o.into_value())
}

fn frame_arg<'js>(ctx: &Ctx<'js>, v: Opt<Value<'js>>, what: &str) -> rquickjs::Result<usize> {
    match v.0.filter(|v| !v.is_undefined() && !v.is_null()) {
        Some(v) => Ok(values::to_count(ctx, &v, 100_000, what).or_throw(ctx)? as usize),
        None => Ok(0),
    }
}

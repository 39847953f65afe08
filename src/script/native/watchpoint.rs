//! JS: `watchpoint.set`, `watchpoint.remove`, `watchpoint.list`.

use super::*;
use crate::session::watchpoints::WatchKind;

/// The natives this file defines, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    t.def("wp_set", set)?; // watchpoint.set(at, 'r' | 'w' | 'rw', name, {len})
    t.def("wp_remove", remove)?; // watchpoint.remove(id | name)
    t.def("wp_list", list)?; // watchpoint.list()
    Ok(())
}

fn set<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    at: Value<'js>,
    kind: Opt<Value<'js>>,
    name: Opt<Value<'js>>,
    opts: Opt<Value<'js>>,
) -> R<'js> {
    let kind_text: String = match kind.0.filter(|v| !v.is_undefined()) {
        Some(v) => v
            .get()
            .map_err(|_| throw(&ctx, "watchpoint access must be 'r', 'w' or 'rw'"))?,
        None => "w".into(),
    };
    let kind = WatchKind::parse(&kind_text).ok_or_else(|| {
        throw(
            &ctx,
            format!("watchpoint access must be 'r', 'w' or 'rw', not '{kind_text}'"),
        )
    })?;
    let addr = address(&ctx, h, &at)?;
    let name = match name.0.filter(|v| !v.is_undefined() && !v.is_null()) {
        Some(v) => Some(
            v.as_string()
                .ok_or_else(|| throw(&ctx, "watchpoint name must be a string"))?
                .to_string()?,
        ),
        None => None,
    };
    let explicit = match opts.0.as_ref().and_then(|v| v.as_object()) {
        Some(o) => match o.get::<_, Value>("len")? {
            v if v.is_undefined() => None,
            v => Some(values::to_count(&ctx, &v, 32, "watchpoint len").or_throw(&ctx)?),
        },
        None => None,
    };
    let len = match explicit {
        Some(len) => len,
        None => {
            let sized = at
                .as_string()
                .and_then(|s| s.to_string().ok())
                .and_then(|s| h.session_ref(&ctx).ok()?.symbol_size(&s));
            // The whole variable where the debug registers can cover it (a 16-byte
            // struct is two); else the largest aligned piece at its start.
            let covered =
                |size: u64| crate::session::watch_pieces(addr, size).is_ok_and(|p| p.len() <= 2);
            match sized {
                Some(size) if covered(size) => size,
                _ => [8u64, 4, 2, 1]
                    .into_iter()
                    .find(|l| addr % l == 0)
                    .unwrap_or(1),
            }
        }
    };
    let spec = match at.as_string() {
        Some(s) => s.to_string()?,
        None => format!("{addr:#x}"),
    };
    let id = h
        .session_mut(&ctx)?
        .watchpoint_set(addr, kind, len, name, spec)
        .or_throw(&ctx)?;
    Ok(Value::new_number(ctx.clone(), id as f64))
}

fn remove<'js>(h: &Host, ctx: Ctx<'js>, which: Value<'js>) -> rquickjs::Result<()> {
    if let Some(s) = which.as_string() {
        let name = s.to_string()?;
        h.session_mut(&ctx)?
            .watchpoint_remove(BreakpointRef::Name(&name))
            .or_throw(&ctx)
    } else {
        let id = values::to_count(&ctx, &which, u32::MAX as u64, "watchpoint.remove(id)")
            .or_throw(&ctx)?;
        h.session_mut(&ctx)?
            .watchpoint_remove(BreakpointRef::Id(id as u32))
            .or_throw(&ctx)
    }
}

fn list<'js>(h: &Host, ctx: Ctx<'js>) -> R<'js> {
    let list: Vec<_> = h.session_ref(&ctx)?.watchpoints().to_vec();
    let rows = Array::new(ctx.clone())?;
    for w in &list {
        let o = Object::new(ctx.clone())?;
        o.put("id", w.id)?;
        o.put("addr", u64_to_js(&ctx, w.addr)?)?;
        o.put("len", w.len as f64)?;
        o.put("access", w.kind.as_str())?;
        o.put("name", w.name.as_deref())?;
        o.put("hits", w.hits as f64)?;
        if !w.armed {
            o.put("pending", true)?;
        }
        rows.push(o)?;
    }
    Ok(rows.into_value())
}

//! JS: `watchpoint.set`, `watchpoint.remove`, `watchpoint.list`.

use super::handle::Handle;
use super::*;
use crate::session::watchpoints::WatchKind;
use crate::session::TypedValue;
use crate::symbols::dwarf::Limits;
use rquickjs::Class;

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
    let typed = watched_value(&ctx, h, &at)?;
    let addr = match &typed {
        Some((_, addr, _)) => *addr,
        None => address(&ctx, h, &at)?,
    };
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
            let sized = match &typed {
                Some((_, _, size)) => Some(*size),
                None => at
                    .as_string()
                    .and_then(|s| s.to_string().ok())
                    .and_then(|s| h.session_ref(&ctx).ok()?.symbol_size(&s)),
            };
            // The whole variable, in as many of the four debug registers as it takes (a
            // 24-byte struct or a std::string is three or four). Never cut to a part of
            // it: a watch on a part misses the writes to the rest and reads as "nobody
            // writes it". One too wide for them is refused, naming the ways to watch a
            // part. Without a size (an address), the largest aligned piece at it.
            let fits =
                |size: u64| crate::session::watch_pieces(addr, size).is_ok_and(|p| p.len() <= 4);
            match sized {
                Some(size) if fits(size) => size,
                Some(size) => {
                    let what = at
                        .as_string()
                        .and_then(|s| s.to_string().ok())
                        .map_or_else(|| "the value".to_string(), |s| format!("'{s}'"));
                    return Err(throw(
                        &ctx,
                        format!(
                            "{what} is {size} bytes at {addr:#x}, more than the 4 debug registers watch at once (aligned pieces of 1 to 8 bytes, 32 at most): watch a member of it, or its first bytes with {{len: 8}} (up to 32)"
                        ),
                    ));
                }
                None => [8u64, 4, 2, 1]
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
    // The bytes show as the value's type only when they are all of it.
    let ty = typed.and_then(|(tv, _, size)| (size == len).then_some(tv));
    let id = h
        .session_mut(&ctx)?
        .watchpoint_set(addr, kind, len, name, spec, ty)
        .or_throw(&ctx)?;
    Ok(Value::new_number(ctx.clone(), id as f64))
}

/// What `at` names as a value: a typed value, or a variable or path (`'p->next'`,
/// `'nodes[2].count'`) in the selected frame, with the address and size of its storage
/// (a reference's referent). `None` for a symbol expression (`'main+4'`) or an address.
pub(super) fn watched_value<'js>(
    ctx: &Ctx<'js>,
    h: &Host,
    at: &Value<'js>,
) -> rquickjs::Result<Option<(TypedValue, u64, u64)>> {
    let (tv, said) = if let Ok(handle) = Class::<Handle>::from_value(at) {
        let tv = handle.borrow().0.clone();
        (tv, None)
    } else if let Some(text) = at.as_string().map(|s| s.to_string()).transpose()? {
        let Ok(path) = crate::symbols::dwarf::path::parse(&text) else {
            return Ok(None);
        };
        match printers::walk_path(ctx, h, &path, 0) {
            Ok(tv) => (tv, Some(text)),
            Err(_) => {
                // Not a value here: a symbol expression or address is tried next.
                let _ = ctx.catch();
                return Ok(None);
            }
        }
    } else {
        return Ok(None);
    };
    let session = h.session_ref(ctx)?;
    let tv = session.referent(&tv);
    if session.value_kind(&tv) == "function" {
        return Ok(None);
    }
    let what = said.map_or_else(|| "the value".to_string(), |s| format!("'{s}'"));
    // A bit-field is watched by the bytes that hold its bits; its hits show its own value.
    if let (Some((off, width)), crate::symbols::dwarf::Place::Memory(base)) =
        (tv.value.bits, &tv.value.place)
    {
        let start = base.wrapping_add(off / 8);
        let len = (off % 8 + width).div_ceil(8).max(1);
        let mut field = tv.clone();
        field.value.place = crate::symbols::dwarf::Place::Memory(start);
        field.value.bits = Some((off % 8, width));
        return Ok(Some((field, start, len)));
    }
    let Some(addr) = tv.value.address() else {
        return Err(throw(
            ctx,
            format!(
                "{what} is not in memory here ({}): a watchpoint needs an address",
                session
                    .value_text(&tv, &Limits::default(), None)
                    .unwrap_or_else(|e| e.to_string())
            ),
        ));
    };
    let size = session.value_size(&tv).unwrap_or(1).max(1);
    Ok(Some((tv, addr, size)))
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

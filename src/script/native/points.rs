//! Breakpoints and watchpoints.

use super::*;

/// Defines this part's native functions on `n`.
pub(super) fn install<'js>(
    n: &Object<'js>,
    ctx: &Ctx<'js>,
    host: &Rc<Host>,
) -> rquickjs::Result<()> {
    let h = host.clone();
    def!(n, ctx, "bp_set", move |ctx: Ctx<'js>,
                                 at: Value<'js>,
                                 name: Opt<Value<'js>>|
          -> R<'js> {
        let spec = match at.as_string() {
            Some(s) => s.to_string()?,
            None => values::to_address(&ctx, &at)
                .map(|a| format!("{a:#x}"))
                .unwrap_or_default(),
        };
        // The second argument is a name, or options `{name, force, pending, hardware}`.
        let mut hardware: Option<bool> = None;
        let (name, force, pending) = match name.0.filter(|v| !v.is_undefined() && !v.is_null()) {
            Some(v) if v.is_object() && !v.is_string() => {
                let o = v.as_object().expect("checked");
                let name: Option<String> = o.get("name")?;
                let force: Option<bool> = o.get("force")?;
                let pending: Option<bool> = o.get("pending")?;
                let hw: Value = o.get("hardware")?;
                if !hw.is_undefined() && !hw.is_null() {
                    hardware = Some(hw.as_bool().ok_or_else(|| {
                        throw(&ctx, "breakpoint.set: hardware must be true (a debug register) or false (an int3)")
                    })?);
                }
                (name, force.unwrap_or(false), pending.unwrap_or(true))
            }
            Some(v) => (
                Some(
                    v.as_string()
                        .ok_or_else(|| throw(&ctx, "breakpoint name must be a string"))?
                        .to_string()?,
                ),
                false,
                true,
            ),
            None => (None, false, true),
        };
        let addr = match at.as_string() {
            Some(s) => {
                let text = s.to_string()?;
                if text.len() > MAX_EXPR {
                    // Checked (and refused) the one way every address is.
                    address(&ctx, &h, &at)?;
                }
                let resolved = h.session_mut(&ctx)?.resolve_breakpoint(&text);
                match resolved {
                    Ok(addr) => addr,
                    // Not loaded yet, most likely: a library that comes later has it.
                    Err(e) if pending && e.is_not_loaded() => {
                        let (id, note) = h
                            .session_mut(&ctx)?
                            .breakpoint_pending(name, spec, &e, hardware)
                            .map_err(|e| throw(&ctx, e))?;
                        h.print(&values::clip_message(&note));
                        return Ok(Value::new_number(ctx.clone(), id as f64));
                    }
                    Err(e) => return Err(throw(&ctx, e)),
                }
            }
            None => address(&ctx, &h, &at)?,
        };
        let id = h
            .session_mut(&ctx)?
            .breakpoint_set(addr, name, spec, force, hardware)
            .map_err(|e| throw(&ctx, e))?;
        // Another breakpoint at the same address stops there on its own terms: a condition
        // given to this one does not hold that one back. Said once, here.
        let shared = h
            .session_mut(&ctx)?
            .breakpoints()
            .iter()
            .find(|b| b.id != id && b.armed && b.addr == addr)
            .map(|b| b.id);
        if let Some(other) = shared {
            h.print(&format!(
                "breakpoint {id} shares {addr:#x} with breakpoint {other}: a hit stops if any of them does, each by its own condition and log"
            ));
        }
        Ok(Value::new_number(ctx.clone(), id as f64))
    });

    // Of several breakpoints at one address, the one whose terms stop this hit.
    let h = host.clone();
    def!(n, ctx, "bp_fired", move |id: u32| -> rquickjs::Result<()> {
        h.fired_breakpoint.set(Some(id));
        Ok(())
    });

    let h = host.clone();
    def!(n, ctx, "bp_remove", move |ctx: Ctx<'js>,
                                    which: Value<'js>|
          -> rquickjs::Result<bool> {
        let r = if let Some(s) = which.as_string() {
            let name = s.to_string()?;
            h.session_mut(&ctx)?
                .breakpoint_remove(BreakpointRef::Name(&name))
                .map_err(|e| throw(&ctx, e))?
        } else {
            let id = values::to_count(&ctx, &which, u32::MAX as u64, "breakpoint.remove(id)")
                .map_err(|e| throw(&ctx, e))?;
            h.session_mut(&ctx)?
                .breakpoint_remove(BreakpointRef::Id(id as u32))
                .map_err(|e| throw(&ctx, e))?
        };
        Ok(r.id > 0)
    });

    let h = host.clone();
    def!(n, ctx, "bp_list", move |ctx: Ctx<'js>| -> R<'js> {
        let mut session = h.session_mut(&ctx)?;
        let list: Vec<_> = session.breakpoints().to_vec();
        let rows = Array::new(ctx.clone())?;
        for bp in &list {
            let o = Object::new(ctx.clone())?;
            o.put("id", bp.id)?;
            if bp.armed {
                o.put("addr", u64_to_js(&ctx, bp.addr)?)?;
            }
            o.put("name", bp.name.as_deref())?;
            // A pending one shows what it waits for.
            let symbol = if bp.armed {
                session.symbolize(bp.addr)
            } else {
                Some(bp.spec.clone())
            };
            o.put("symbol", symbol)?;
            o.put("hits", bp.hits as f64)?;
            // How it stops: a debug register (the code untouched) or an int3.
            if let Some(hw) = bp
                .armed
                .then(|| session.breakpoint_is_hardware(bp.addr))
                .flatten()
            {
                o.put("site", if hw { "hw" } else { "int3" })?;
            }
            // A `file.c:line` in several inlined copies: every site it stops at.
            if !bp.more.is_empty() {
                let all = Array::new(ctx.clone())?;
                for a in bp.addresses() {
                    all.push(u64_to_js(&ctx, a)?)?;
                }
                o.put("locations", all)?;
            }
            if !bp.armed {
                o.put("pending", true)?;
            } else if session.breakpoint_overwritten(bp.addr) {
                o.put("overwritten", true)?;
            }
            rows.push(o)?;
        }
        Ok(rows.into_value())
    });

    let h = host.clone();
    def!(n, ctx, "wp_set", move |ctx: Ctx<'js>,
                                 at: Value<'js>,
                                 kind: Opt<Value<'js>>,
                                 name: Opt<Value<'js>>,
                                 opts: Opt<Value<'js>>|
          -> R<'js> {
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
        let addr = address(&ctx, &h, &at)?;
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
                v => Some(
                    values::to_count(&ctx, &v, 32, "watchpoint len").map_err(|e| throw(&ctx, e))?,
                ),
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
                let covered = |size: u64| {
                    crate::session::watch_pieces(addr, size).is_ok_and(|p| p.len() <= 2)
                };
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
            .map_err(|e| throw(&ctx, e))?;
        Ok(Value::new_number(ctx.clone(), id as f64))
    });

    let h = host.clone();
    def!(n, ctx, "wp_remove", move |ctx: Ctx<'js>,
                                    which: Value<'js>|
          -> rquickjs::Result<()> {
        if let Some(s) = which.as_string() {
            let name = s.to_string()?;
            h.session_mut(&ctx)?
                .watchpoint_remove(BreakpointRef::Name(&name))
                .map_err(|e| throw(&ctx, e))
        } else {
            let id = values::to_count(&ctx, &which, u32::MAX as u64, "watchpoint.remove(id)")
                .map_err(|e| throw(&ctx, e))?;
            h.session_mut(&ctx)?
                .watchpoint_remove(BreakpointRef::Id(id as u32))
                .map_err(|e| throw(&ctx, e))
        }
    });

    let h = host.clone();
    def!(n, ctx, "wp_list", move |ctx: Ctx<'js>| -> R<'js> {
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
    });
    Ok(())
}

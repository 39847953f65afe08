//! JS: `breakpoint.set`, `breakpoint.remove`, `breakpoint.list`.

use super::*;

/// The natives this file defines, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    t.def("bp_set", set)?; // breakpoint.set(at, name | {name, if, log, force, pending, hardware})
    t.def("bp_remove", remove)?; // breakpoint.remove(id | name)
    t.def("bp_list", list)?; // breakpoint.list()
    Ok(())
}

fn set<'js>(h: &Host, ctx: Ctx<'js>, at: Value<'js>, name: Opt<Value<'js>>) -> R<'js> {
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
    // Only this set's note (a re-arm made one nobody asked for).
    h.session_mut(&ctx)?.take_sites_cut();
    let addr = match at.as_string() {
        Some(s) => {
            let text = s.to_string()?;
            if text.len() > MAX_EXPR {
                // Checked (and refused) the one way every address is.
                address(&ctx, h, &at)?;
            }
            let resolved = h.session_mut(&ctx)?.resolve_breakpoint(&text);
            match resolved {
                Ok(addr) => addr,
                // Not loaded yet, most likely: a library that comes later has it.
                Err(e) if pending && e.is_not_loaded() => {
                    return waiting(h, &ctx, name, spec, &e, hardware);
                }
                Err(e) => return Err(throw(&ctx, e)),
            }
        }
        None => address(&ctx, h, &at)?,
    };
    let set =
        h.session_mut(&ctx)?
            .breakpoint_set(addr, name.clone(), spec.clone(), force, hardware);
    let id = match set {
        Ok(id) => id,
        // After the program ended: it waits for the next spawn() or attach(), as the
        // breakpoints set before it ended do (gdb's `break` after the program exited).
        Err(e @ crate::session::SessionError::NoProcess(_)) if pending => {
            return waiting(h, &ctx, name, spec, &e, hardware);
        }
        Err(e) => return Err(throw(&ctx, e)),
    };
    if let Some(cut) = h.session_mut(&ctx)?.take_sites_cut() {
        h.print(&format!("breakpoint {id}: {cut}"));
    }
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
}

/// A breakpoint that waits (`pending`) for what `why` says is missing, said in one line: its id.
fn waiting<'js>(
    h: &Host,
    ctx: &Ctx<'js>,
    name: Option<String>,
    spec: String,
    why: &crate::session::SessionError,
    hardware: Option<bool>,
) -> R<'js> {
    let (id, note) = h
        .session_mut(ctx)?
        .breakpoint_pending(name, spec, why, hardware)
        .or_throw(ctx)?;
    h.print(&values::clip_message(&note));
    Ok(Value::new_number(ctx.clone(), id as f64))
}

fn remove<'js>(h: &Host, ctx: Ctx<'js>, which: Value<'js>) -> rquickjs::Result<bool> {
    let r = if let Some(s) = which.as_string() {
        let name = s.to_string()?;
        h.session_mut(&ctx)?
            .breakpoint_remove(BreakpointRef::Name(&name))
            .or_throw(&ctx)?
    } else {
        let id = values::to_count(&ctx, &which, u32::MAX as u64, "breakpoint.remove(id)")
            .or_throw(&ctx)?;
        h.session_mut(&ctx)?
            .breakpoint_remove(BreakpointRef::Id(id as u32))
            .or_throw(&ctx)?
    };
    Ok(r.id > 0)
}

fn list<'js>(h: &Host, ctx: Ctx<'js>) -> R<'js> {
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
        // Hit in more than one process (a tree): each one's count, by pid.
        if bp.by_process.len() > 1 {
            let each = Object::new(ctx.clone())?;
            for (pid, hits) in &bp.by_process {
                each.put(pid.to_string().as_str(), *hits as f64)?;
            }
            o.put("by_process", each)?;
        }
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
}

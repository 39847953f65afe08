//! JS: `record.start`, `record.stop`, `record.status`, `history.writes`, `history.steps`,
//! `goto`, `reverse_step`, `reverse_cont`: recording execution and moving along it.

use super::events::stop_to_js;
use super::handle::handle;
use super::*;

/// The natives this file defines, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    t.def("rec_start", start)?; // record.start({limit, ring})
    t.def("rec_stop", stop)?; // record.stop()
    t.def("rec_status", status)?; // record.status()
    t.def("hist_writes", writes)?; // history.writes(addr, len)
    t.def("hist_steps", steps)?; // history.steps(from, to)
    t.def("rec_goto", goto)?; // goto(step)
    t.def("rec_reverse", reverse)?; // reverse_step / reverse_cont set the direction
    Ok(())
}

fn start<'js>(h: &Host, ctx: Ctx<'js>, opts: Opt<Value<'js>>) -> R<'js> {
    let mut limit = crate::session::DEFAULT_RECORD_LIMIT;
    let mut ring = false;
    if let Some(o) = opts.0.as_ref().and_then(|v| v.as_object()) {
        let l: Value = o.get("limit")?;
        if !l.is_undefined() {
            limit = values::to_count(&ctx, &l, 1 << 40, "record.start limit").or_throw(&ctx)?;
            if limit == 0 {
                return Err(throw(
                    &ctx,
                    "record.start: limit must be at least 1 instruction",
                ));
            }
        }
        let r: Value = o.get("ring")?;
        ring = r.as_bool().unwrap_or(false);
    }
    h.session_mut(&ctx)?
        .record_start(limit, ring)
        .or_throw(&ctx)?;
    Ok(undefined(&ctx))
}

fn stop<'js>(h: &Host, ctx: Ctx<'js>) -> R<'js> {
    h.session_mut(&ctx)?.record_stop().or_throw(&ctx)?;
    Ok(undefined(&ctx))
}

fn status<'js>(h: &Host, ctx: Ctx<'js>) -> R<'js> {
    let session = h.session_ref(&ctx)?;
    let Some(s) = session.record_status() else {
        return Ok(Value::new_null(ctx.clone()));
    };
    let o = Object::new(ctx.clone())?;
    o.put("recording", s.active)?;
    o.put("steps", s.steps as f64)?;
    o.put("first", s.first as f64)?;
    o.put("end", s.end as f64)?;
    o.put("at", s.at as f64)?;
    o.put("bytes", s.bytes as f64)?;
    let threads = Array::new(ctx.clone())?;
    for t in &s.threads {
        threads.push(*t)?;
    }
    o.put("threads", threads)?;
    o.put("limit", s.limit as f64)?;
    o.put("ring", s.ring)?;
    if s.ring {
        o.put("dropped", s.dropped as f64)?;
    }
    if let Some(why) = &s.stale {
        o.put("stale", why.as_str())?;
    }
    Ok(o.into_value())
}

/// Bytes as a watch shows them: a number up to 8 bytes, else hex in memory order.
fn bytes_value<'js>(ctx: &Ctx<'js>, bytes: &[u8]) -> R<'js> {
    if bytes.len() <= 8 {
        u64_to_js(ctx, le_value(bytes))
    } else {
        values::to_hex(bytes).into_js(ctx)
    }
}

fn bytes_text(bytes: &[u8]) -> String {
    if bytes.len() > 8 {
        return values::to_hex(bytes);
    }
    match le_value(bytes) {
        v if v < 65536 => v.to_string(),
        v => format!("{v:#x}"),
    }
}

fn writes<'js>(h: &Host, ctx: Ctx<'js>, at: Value<'js>, len: Opt<Value<'js>>) -> R<'js> {
    // What watchpoint.set takes: a variable or path by name (a local, `g_stats.updated`), a
    // typed value (its storage, not its value as an address), else a symbol or an address.
    let watched = super::watchpoint::watched_value(&ctx, h, &at)?;
    let addr = match &watched {
        Some((_, addr, _)) => *addr,
        None => address(&ctx, h, &at)?,
    };
    let len = match len.0.filter(|v| !v.is_undefined() && !v.is_null()) {
        Some(v) => values::to_count(&ctx, &v, 1 << 32, "history.writes len").or_throw(&ctx)?,
        None => match &watched {
            Some((_, _, size)) => *size,
            None => at
                .as_string()
                .and_then(|s| s.to_string().ok())
                .and_then(|s| h.session_ref(&ctx).ok()?.symbol_size(&s))
                .unwrap_or(1),
        },
    };
    let (found, left_out) = h
        .session_mut(&ctx)?
        .history_writes(addr, len.max(1))
        .or_throw(&ctx)?;
    // A variable: its old and new values typed, as `state.var()` shows it.
    let typed = watched.and_then(|(v, at, size)| {
        (at == addr && size == len && v.value.bits.is_none()).then_some(v)
    });
    let as_typed = |bytes: &[u8]| -> Option<crate::session::TypedValue> {
        let mut v = typed.clone()?;
        v.value.place = crate::symbols::dwarf::Place::Bytes {
            bytes: bytes.to_vec(),
            unknown: Vec::new(),
            origin: Some(addr),
        };
        Some(v)
    };
    let text_of = |v: &crate::session::TypedValue| -> Option<String> {
        let limits = crate::symbols::dwarf::Limits {
            depth: 2,
            elements: 8,
            chars: 64,
            total: 200,
            pointees: true,
        };
        let session = h.session_ref(&ctx).ok()?;
        let printers = super::printers::JsPretty::new(&ctx, h, v);
        session.value_text(v, &limits, Some(&printers)).ok()
    };
    let threads = found.iter().any(|w| w.tid != found[0].tid);
    let out = Array::new(ctx.clone())?;
    for w in found {
        let o = Object::new(ctx.clone())?;
        let mut line = format!("step {} ", w.step);
        match &w.place {
            Some(place) => line.push_str(place),
            None => line.push_str(&format!("{:#x}", w.pc)),
        }
        if threads {
            line.push_str(&format!(" thread {}", w.tid));
        }
        if let Some(insn) = &w.insn {
            line.push_str(&format!(": {}", insn.split("  #").next().unwrap_or(insn)));
        }
        let (old, new) = (as_typed(&w.old), as_typed(&w.new));
        let shown = |v: &Option<crate::session::TypedValue>, bytes: &[u8]| {
            v.as_ref()
                .and_then(&text_of)
                .unwrap_or_else(|| bytes_text(bytes))
        };
        line.push_str(&format!(
            "  {} -> {}",
            shown(&old, &w.old),
            shown(&new, &w.new)
        ));
        o.put("line", line)?;
        o.put("step", w.step as f64)?;
        o.put("tid", w.tid)?;
        o.put("pc", u64_to_js(&ctx, w.pc)?)?;
        if let Some(insn) = w.insn {
            o.put("insn", insn)?;
        }
        if let Some(place) = w.place {
            o.put("at", place)?;
        }
        match (old, new) {
            (Some(old), Some(new)) => {
                o.put("old", handle(&ctx, old)?)?;
                o.put("new", handle(&ctx, new)?)?;
            }
            _ => {
                o.put("old", bytes_value(&ctx, &w.old)?)?;
                o.put("new", bytes_value(&ctx, &w.new)?)?;
            }
        }
        out.push(o)?;
    }
    if left_out > 0 {
        out.as_object().put("left_out", left_out as f64)?;
    }
    Ok(out.into_value())
}

fn steps<'js>(h: &Host, ctx: Ctx<'js>, from: Opt<f64>, to: Opt<f64>) -> R<'js> {
    let session = h.session_ref(&ctx)?;
    let rows = session
        .history_steps(from.0.map(|f| f as u64), to.0.map(|t| t as u64))
        .or_throw(&ctx)?;
    let out = Array::new(ctx.clone())?;
    for (step, tid, pc) in rows {
        let o = Object::new(ctx.clone())?;
        o.put("step", step as f64)?;
        o.put("tid", tid)?;
        o.put("pc", u64_to_js(&ctx, pc)?)?;
        out.push(o)?;
    }
    Ok(out.into_value())
}

fn goto<'js>(h: &Host, ctx: Ctx<'js>, step: Value<'js>) -> R<'js> {
    let k = values::to_count(&ctx, &step, u64::MAX, "goto step").or_throw(&ctx)?;
    let info = h.session_mut(&ctx)?.goto(k).or_throw(&ctx)?;
    *h.last_stop.borrow_mut() = Some(info.clone());
    stop_to_js(&ctx, h, &info)
}

fn reverse<'js>(h: &Host, ctx: Ctx<'js>, on: bool) -> R<'js> {
    h.session_mut(&ctx)?.set_reverse(on).or_throw(&ctx)?;
    Ok(undefined(&ctx))
}

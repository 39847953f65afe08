//! JS: `addEventListener`/`removeEventListener` (which stops scripts decide on), an event's
//! `text`, `source`, `line`, `insn` and `deliver`, a condition's pick among breakpoints at one
//! address; and the stop records `cont()`, `spawn()` and the other runs return.

use super::*;
use crate::runner::Event;
use crate::session::{Shown, StopKind, WatchReport};
use crate::symbols::dwarf::Scalar;

/// The natives this file defines, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    t.def("listened", listened)?; // add/removeEventListener: which types have listeners
    t.def("listening", listening)?; // add/removeEventListener: which stops the run reports
    t.def("thread_events", thread_events)?; // addEventListener('thread', f)
    t.def("last_stop_line", last_stop_line)?; // e.text
    t.def("last_stop_source", last_stop_source)?; // e.source, e.line
    t.def("watch_culprit", watch_culprit)?; // e.insn (a watchpoint event)
    t.def("suppress_signal", suppress_signal)?; // e.deliver = false
    t.def("bp_fired", bp_fired)?; // breakpoint.set(at, {if}): the one that stops
    Ok(())
}

/// Which listener types have listeners: bits of `event_bit`.
fn listened(h: &Host, mask: f64) -> rquickjs::Result<()> {
    h.listened.set(mask as u16);
    Ok(())
}

fn listening<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    breakpoint: bool,
    watchpoint: bool,
    signal: bool,
    library: bool,
    syscall: bool,
) -> rquickjs::Result<()> {
    h.session_mut(&ctx)?.set_listening(
        crate::session::NonStop {
            breakpoint,
            watchpoint,
            signal,
            syscall,
        },
        library,
    );
    Ok(())
}

fn thread_events<'js>(h: &Host, ctx: Ctx<'js>, on: bool) -> rquickjs::Result<()> {
    h.session_mut(&ctx)?.set_thread_events(on);
    Ok(())
}

fn last_stop_line<'js>(h: &Host, ctx: Ctx<'js>) -> rquickjs::Result<String> {
    let info = described_last_stop(&ctx, h)?;
    Ok(info.line())
}

/// `counter.c:8`: the latest stop's source position, as its line shows it.
fn last_stop_source<'js>(h: &Host, ctx: Ctx<'js>) -> rquickjs::Result<Option<String>> {
    let info = described_last_stop(&ctx, h)?;
    Ok(info.source.clone())
}

/// The instruction that made the latest watchpoint stop's access.
fn watch_culprit<'js>(h: &Host, ctx: Ctx<'js>) -> R<'js> {
    // Found once per stop and kept with it; no borrow is held while JS values are made.
    let taken = h.last_stop.borrow_mut().take();
    let mut info = taken.ok_or_else(|| throw(&ctx, "internal: no stop"))?;
    let found = h.session_mut(&ctx).map(|mut s| s.find_culprit(&mut info));
    let watch = info.watch().cloned();
    *h.last_stop.borrow_mut() = Some(info);
    found?;
    let o = Object::new(ctx.clone())?;
    if let Some(w) = &watch {
        if let Some(at) = w.insn_addr {
            o.put("insn_addr", u64_to_js(&ctx, at)?)?;
        }
        if let Some(text) = &w.insn_text {
            o.put("insn", text.as_str())?;
        }
    }
    Ok(o.into_value())
}

fn suppress_signal<'js>(h: &Host, ctx: Ctx<'js>) -> rquickjs::Result<()> {
    h.session_mut(&ctx)?.suppress_signal().or_throw(&ctx)
}

/// Of several breakpoints at one address, the one whose terms stop this hit.
fn bp_fired(h: &Host, id: u32) -> rquickjs::Result<()> {
    h.fired_breakpoint.set(Some(id));
    Ok(())
}

/// Which events have listeners, one bit per [`Event`] in its declaration order, the order of
/// the prelude's `EVENTS` (which sets the bits whenever listeners change): a run hands over
/// only those.
pub(super) fn event_bit(event: Event) -> u16 {
    1 << event as u16
}

/// A stop a call returns, with its line (which the live view shows too).
pub(super) fn stop_to_js<'js>(ctx: &Ctx<'js>, host: &Host, info: &StopInfo) -> R<'js> {
    let v = stop_to_js_fields(ctx, info)?;
    if let Some(o) = v.as_object() {
        if let Some(sym) = &info.symbol {
            o.put("symbol", sym.as_str())?;
        }
        if let Some((done, _)) = info.steps {
            o.put("steps", done as f64)?;
        }
        let line = info.line();
        host.note_stop(&line);
        o.put("line", line)?;
    }
    Ok(v)
}

fn stop_to_js_fields<'js>(ctx: &Ctx<'js>, info: &StopInfo) -> R<'js> {
    let o = Object::new(ctx.clone())?;
    o.put("reason", info.reason().as_str())?;
    if let Some(pc) = info.pc {
        o.put("pc", u64_to_js(ctx, pc)?)?;
    }
    if let Some(pid) = info.pid {
        o.put("pid", pid)?;
    }
    if let Some(tid) = info.tid {
        o.put("tid", tid)?;
    }
    if let Some(r) = info.replay {
        o.put("replay", true)?;
        o.put("direction", if r.reverse { "reverse" } else { "forward" })?;
        o.put("history_step", r.at as f64)?;
    }
    // Each kind's fields, `source` where scripts have always seen it among them.
    let source = |o: &Object<'js>| match &info.source {
        Some(src) => o.put("source", src.as_str()),
        None => Ok(()),
    };
    match &info.kind {
        StopKind::Breakpoint(hit) => {
            if let Some(id) = hit.id {
                o.put("breakpoint_id", id)?;
            }
            if let Some(name) = &hit.name {
                o.put("breakpoint_name", name.as_str())?;
            }
            if !hit.ids.is_empty() {
                let ids = Array::new(ctx.clone())?;
                for id in &hit.ids {
                    ids.push(*id)?;
                }
                o.put("breakpoint_ids", ids)?;
            }
        }
        StopKind::Signal { signal, fault_addr } => {
            o.put("signal", signals::signal_name(*signal))?;
            if let Some(addr) = fault_addr {
                o.put("fault_addr", u64_to_js(ctx, *addr)?)?;
            }
        }
        StopKind::Killed { signal } => o.put("signal", signals::signal_name(*signal))?,
        StopKind::Exited { code } => o.put("code", *code)?,
        _ => {}
    }
    source(&o)?;
    match &info.kind {
        StopKind::Exec { program: Some(p) } => o.put("program", p.as_str())?,
        StopKind::Library(l) => {
            o.put("kind", if l.loaded { "load" } else { "unload" })?;
            o.put("path", l.path.as_str())?;
            o.put("base", u64_to_js(ctx, l.base)?)?;
        }
        StopKind::Watchpoint(w) => watch_fields(ctx, &o, w)?,
        StopKind::Syscall(sys) => super::syscall::put_fields(ctx, &o, sys)?,
        _ => {}
    }
    Ok(o.into_value())
}

fn watch_fields<'js>(ctx: &Ctx<'js>, o: &Object<'js>, w: &WatchReport) -> rquickjs::Result<()> {
    o.put("watchpoint_id", w.id)?;
    if let Some(name) = &w.name {
        o.put("watchpoint_name", name.as_str())?;
        // What the stop line names it by (SPEC 6a: `e.name`).
        o.put("name", name.as_str())?;
    }
    // The instruction that made the access, on every hit, a deleted one's too (a listener
    // reading it on each hit must not throw at the last).
    if let Some(at) = w.insn_addr {
        o.put("insn_addr", u64_to_js(ctx, at)?)?;
    }
    if let Some(text) = &w.insn_text {
        o.put("insn", text.as_str())?;
    }
    // A watchpoint that ended with its frame saw no access of the variable: it has no
    // access type (it said 'read', of a write into the reused stack).
    let access = match (&w.scope_ended, w.is_write) {
        (Some(_), _) => "deleted",
        (None, true) => "write",
        (None, false) => "read",
    };
    o.put("access_type", access)?;
    o.put("addr", u64_to_js(ctx, w.addr)?)?;
    // Up to 8 bytes a number; a wider watch its bytes as hex (memory order), never a
    // number cut to 64 bits.
    // A watch set on a variable gives its numbers as the variable's type (a float's 2.5,
    // a negative int's -3), never the bit pattern.
    let watched = |bytes: &[u8], shown: &Option<Shown>| -> R<'js> {
        if let Some(s) = shown.as_ref().and_then(|s| s.scalar) {
            if let Some(v) = scalar_to_js(ctx, s)? {
                return Ok(v);
            }
        }
        if bytes.len() <= 8 {
            u64_to_js(ctx, le_value(bytes))
        } else {
            values::to_hex(bytes).into_js(ctx)
        }
    };
    if let Some(why) = &w.scope_ended {
        // No access of the variable happened: there is no old or new value to give.
        o.put("deleted", why.as_str())?;
        return Ok(());
    }
    if w.is_write && !w.concurrent {
        o.put("old", watched(&w.old, &w.old_shown)?)?;
    }
    if w.concurrent {
        // Which of several threads' writes came first is not known: no value before, and
        // what memory holds once all stopped in its place.
        o.put("concurrent", true)?;
        o.put("now", watched(&w.old, &w.old_shown)?)?;
    }
    o.put("new", watched(&w.new, &w.new_shown)?)?;
    if w.racy {
        o.put("racy", true)?;
    }
    Ok(())
}

/// A scalar as JavaScript has it: a number (BigInt past 2^53), a flag; `None` for a complex.
fn scalar_to_js<'js>(ctx: &Ctx<'js>, s: Scalar) -> rquickjs::Result<Option<Value<'js>>> {
    Ok(Some(match s {
        Scalar::Signed(n) | Scalar::Enum(n) => values::int_to_js(ctx, n)?,
        Scalar::Unsigned(n) => values::uint_to_js(ctx, n)?,
        Scalar::Float(f) => values::float_to_js(ctx, f),
        Scalar::Bool(b) => Value::new_bool(ctx.clone(), b),
        Scalar::Char(c, _) => Value::new_number(ctx.clone(), c as f64),
        Scalar::Pointer(p) => u64_to_js(ctx, p)?,
        Scalar::Complex(..) => return Ok(None),
    }))
}

/// A stop as a listener sees it: the fields, no symbol and no line (made on demand).
pub(super) fn event_to_js<'js>(ctx: &Ctx<'js>, info: &StopInfo) -> R<'js> {
    stop_to_js_fields(ctx, info)
}

/// A described copy of the latest stop of a run (symbol, source, output count, culprit).
fn described_last_stop(ctx: &Ctx<'_>, host: &Host) -> rquickjs::Result<StopInfo> {
    let last = host.last_stop.borrow().clone();
    let mut info = last.ok_or_else(|| throw(ctx, "internal: no stop to describe"))?;
    host.session_mut(ctx)?.describe(&mut info);
    Ok(info)
}

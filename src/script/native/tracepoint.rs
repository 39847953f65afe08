//! JS: `tracepoint.set`, `tracepoint.remove`, `tracepoint.list`, and the records `trace`
//! listeners receive.

use super::*;
use crate::session::{RegValue, TraceMode, TraceRecord, Want};

/// The natives this file defines, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    t.def("tp_set", set)?; // tracepoint.set(where, {collect, full}, [reg, op, value]?)
    t.def("tp_remove", remove)?; // tracepoint.remove(id)
    t.def("tp_list", list)?; // tracepoint.list()
    t.def("trace_listening", listening)?; // addEventListener('trace', ...)
    Ok(())
}

/// What `collect` lists: register names, and `{mem, len}` / `{mem, str}` objects.
fn wants<'js>(ctx: &Ctx<'js>, collect: &Value<'js>) -> rquickjs::Result<Vec<Want>> {
    const HOW: &str =
        "tracepoint.set(where, {collect: ['rdi', {mem: 'rsi', len: 16}, {mem: 'rdi', str: 64}]})";
    let items: Vec<Value> = if collect.is_undefined() || collect.is_null() {
        Vec::new()
    } else if let Some(a) = collect.as_array() {
        a.iter().collect::<rquickjs::Result<_>>()?
    } else {
        vec![collect.clone()]
    };
    let mut out = Vec::new();
    for v in items {
        if let Some(s) = v.as_string() {
            out.push(Want::Reg(s.to_string()?));
            continue;
        }
        let Some(o) = v.as_object() else {
            return Err(throw(
                ctx,
                format!("collect: each item is a register name or {{mem, len}}: {HOW}"),
            ));
        };
        let mem: Value = o.get("mem")?;
        let at = if let Some(s) = mem.as_string() {
            s.to_string()?
        } else if let Some(n) = mem.as_number().filter(|n| *n >= 0.0) {
            format!("{:#x}", n as u64)
        } else {
            return Err(throw(ctx, format!("collect: {{mem}} is a register with an offset ('rsi', 'rsp+8') or an address: {HOW}")));
        };
        let len: Option<f64> = o.get("len")?;
        let string: Option<f64> = o.get("str")?;
        let (len, string) = match (len, string) {
            (Some(n), None) => (n, false),
            (None, Some(n)) => (n, true),
            _ => {
                return Err(throw(
                    ctx,
                    format!("collect: {{mem: '{at}'}} needs len (bytes) or str (a string's most bytes), one of them: {HOW}"),
                ))
            }
        };
        if !(1.0..=4096.0).contains(&len) || len.fract() != 0.0 {
            return Err(throw(
                ctx,
                format!("collect: {{mem: '{at}'}}: a length from 1 to 4096"),
            ));
        }
        out.push(Want::Mem {
            at,
            len: len as u32,
            string,
        });
    }
    Ok(out)
}

fn set<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    at: Value<'js>,
    collect: Value<'js>,
    full: Opt<Value<'js>>,
    compiled: Opt<Value<'js>>,
) -> R<'js> {
    let full: Option<String> = match full.0.filter(|v| !v.is_undefined() && !v.is_null()) {
        Some(v) => Some(
            v.as_string()
                .ok_or_else(|| throw(&ctx, "tracepoint.set: full is 'wait' or 'drop'"))?
                .to_string()?,
        ),
        None => None,
    };
    let spec = match at.as_string() {
        Some(s) => s.to_string()?,
        None => format!("{:#x}", values::to_address(&ctx, &at).or_throw(&ctx)?),
    };
    let wants = wants(&ctx, &collect)?;
    let wait = match full.as_deref() {
        None | Some("wait") => true,
        Some("drop") => false,
        Some(other) => {
            return Err(throw(
                &ctx,
                format!("tracepoint.set: full is 'wait' (the program waits for room) or 'drop' (the record is lost and counted), not '{other}'"),
            ))
        }
    };
    // The `{if}` the prelude found simple enough for the probe to test: [reg, op, value].
    let cond = match compiled.0.as_ref().and_then(|v| v.as_array()) {
        Some(a) => {
            let reg: String = a.get(0)?;
            let op: String = a.get(1)?;
            let value: Value = a.get(2)?;
            let value = values::to_u64_bits(&ctx, &value).ok();
            value.and_then(|v| crate::session::probe_cond(&reg, &op, v))
        }
        None => None,
    };
    let (id, mode, note) = h
        .session_mut(&ctx)?
        .tracepoint_set(&spec, &wants, wait, cond)
        .or_throw(&ctx)?;
    if let Some(note) = note {
        h.print(&format!("[{}]", values::clip_message(&note)));
    }
    let o = Object::new(ctx.clone())?;
    o.put("id", id)?;
    o.put("mode", mode.name())?;
    Ok(o.into_value())
}

fn remove<'js>(h: &Host, ctx: Ctx<'js>, id: Value<'js>) -> rquickjs::Result<bool> {
    let id = id
        .as_number()
        .filter(|n| n.fract() == 0.0 && (1.0..=u32::MAX as f64).contains(n))
        .ok_or_else(|| {
            throw(
                &ctx,
                "tracepoint.remove(id): id is the number tracepoint.set() gave (tracepoint.list() shows them)",
            )
        })?;
    let note = h
        .session_mut(&ctx)?
        .tracepoint_remove(id as u32)
        .or_throw(&ctx)?;
    if let Some(note) = note {
        h.print(&format!("[{note}]"));
    }
    Ok(true)
}

/// A `tracepoint.list()` row, read out of the session before JS values are made.
struct Row {
    id: u32,
    spec: String,
    addr: u64,
    mode: TraceMode,
    hits: u64,
    delivered: u64,
    lost: u64,
    /// Where the probe tests the `{if}` itself: the hits it wrote no record for.
    filtered: Option<u64>,
    why: Option<String>,
}

fn list<'js>(h: &Host, ctx: Ctx<'js>) -> R<'js> {
    let mut session = h.session_mut(&ctx)?;
    let rows = Array::new(ctx.clone())?;
    let tps: Vec<Row> = session
        .tracepoints()
        .iter()
        .map(|t| Row {
            id: t.id,
            spec: t.spec.clone(),
            addr: t.addr,
            mode: t.mode(),
            hits: t.hits(),
            delivered: t.delivered,
            lost: t.lost(),
            filtered: t.compiled().then(|| t.filtered()),
            why: t.why_trap.clone(),
        })
        .collect();
    for Row {
        id,
        spec,
        addr,
        mode,
        hits,
        delivered,
        lost,
        filtered,
        why,
    } in tps
    {
        let o = Object::new(ctx.clone())?;
        o.put("id", id)?;
        o.put("where", spec)?;
        if mode != TraceMode::Pending {
            o.put("addr", u64_to_js(&ctx, addr)?)?;
            o.put("symbol", session.symbolize(addr))?;
        }
        o.put("mode", mode.name())?;
        o.put("hits", hits as f64)?;
        o.put("delivered", delivered as f64)?;
        o.put("lost", lost as f64)?;
        if let Some(n) = filtered {
            o.put("filtered", n as f64)?;
        }
        if let Some(why) = why {
            o.put("why", why)?;
        }
        rows.push(o)?;
    }
    Ok(rows.into_value())
}

fn listening(h: &Host, ctx: Ctx<'_>, on: bool) -> rquickjs::Result<()> {
    h.session_mut(&ctx)?.set_trace_listening(on);
    Ok(())
}

/// A batch of records as one JS array (one call into the prelude per batch, not per record).
pub(super) fn records_to_js<'js>(ctx: &Ctx<'js>, records: &[TraceRecord]) -> R<'js> {
    let a = Array::new(ctx.clone())?;
    for r in records {
        a.push(record_to_js(ctx, r)?)?;
    }
    Ok(a.into_value())
}

/// A record as a `trace` listener's event: `{id, tid, time, pc, registers, chunks}`, the
/// prelude adding `memory(addr)`, `symbol`, `line`.
pub(super) fn record_to_js<'js>(ctx: &Ctx<'js>, r: &TraceRecord) -> R<'js> {
    let o = Object::new(ctx.clone())?;
    o.put("id", r.id)?;
    o.put("tid", r.tid)?;
    o.put("time", r.time as f64)?;
    o.put("pc", u64_to_js(ctx, r.pc)?)?;
    let regs = Object::new(ctx.clone())?;
    for (name, v) in &r.regs {
        match v {
            RegValue::U64(x) => regs.put(&**name, u64_to_js(ctx, *x)?)?,
            RegValue::Xmm(b) => {
                let lo = u64::from_le_bytes(b[..8].try_into().unwrap_or_default());
                let hi = u64::from_le_bytes(b[8..].try_into().unwrap_or_default());
                let x = Object::new(ctx.clone())?;
                x.put("lo", u64_to_js(ctx, lo)?)?;
                x.put("hi", u64_to_js(ctx, hi)?)?;
                x.put("f64", f64::from_bits(lo))?;
                x.put("f32", f32::from_bits(lo as u32) as f64)?;
                regs.put(&**name, x)?;
            }
        }
    }
    o.put("registers", regs)?;
    let chunks = Array::new(ctx.clone())?;
    for m in &r.mem {
        let c = Object::new(ctx.clone())?;
        c.put("expr", &*m.expr)?;
        c.put("addr", u64_to_js(ctx, m.addr)?)?;
        c.put(
            "bytes",
            rquickjs::TypedArray::<u8>::new(ctx.clone(), m.bytes.clone())?,
        )?;
        c.put("error", m.error.as_deref())?;
        c.put("string", m.string)?;
        chunks.push(c)?;
    }
    o.put("chunks", chunks)?;
    Ok(o.into_value())
}

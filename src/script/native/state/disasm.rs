//! JS: `state.disasm`, `state.instruction`, a step event's `executed`.

use super::*;

/// The natives this file defines, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    t.def("disasm", disasm)?; // state.disasm(n, addr)
    t.def("disasm_function", disasm_function)?; // state.disasm('function')
    t.def("insn", insn)?; // state.instruction
    t.def("executed", executed)?; // e.executed (a step event)
    Ok(())
}

fn disasm<'js>(h: &Host, ctx: Ctx<'js>, at: Opt<Value<'js>>, count: Opt<Value<'js>>) -> R<'js> {
    let addr = match at.0.filter(|v| !v.is_undefined() && !v.is_null()) {
        Some(v) => address(&ctx, h, &v)?,
        None => h.session_mut(&ctx)?.pc().or_throw(&ctx)?,
    };
    let count = match count.0.filter(|v| !v.is_undefined()) {
        Some(v) => values::to_count(&ctx, &v, 10_000, "disasm(n)").or_throw(&ctx)?,
        None => 10,
    };
    let insns = h
        .session_mut(&ctx)?
        .disasm(addr, count as usize)
        .or_throw(&ctx)?;
    let rows = Array::new(ctx.clone())?;
    for insn in &insns {
        rows.push(insn_to_js(&ctx, insn, None)?)?;
    }
    let o = Object::new(ctx.clone())?;
    o.put("rows", rows)?;
    o.put("text", listing(&ctx, h, &insns)?)?;
    Ok(o.into_value())
}

/// The whole function holding `at` (pc when not given).
fn disasm_function<'js>(h: &Host, ctx: Ctx<'js>, at: Opt<Value<'js>>) -> R<'js> {
    let addr = match at.0.filter(|v| !v.is_undefined() && !v.is_null()) {
        Some(v) => address(&ctx, h, &v)?,
        None => h.session_mut(&ctx)?.pc().or_throw(&ctx)?,
    };
    let (insns, left) = h.session_mut(&ctx)?.disasm_function(addr).or_throw(&ctx)?;
    let rows = Array::new(ctx.clone())?;
    for insn in &insns {
        rows.push(insn_to_js(&ctx, insn, None)?)?;
    }
    let mut text = listing(&ctx, h, &insns)?;
    if left > 0 {
        text.push_str(&format!("\n[... {left} more bytes of the function]"));
    }
    let o = Object::new(ctx.clone())?;
    o.put("rows", rows)?;
    o.put("text", text)?;
    Ok(o.into_value())
}

fn insn<'js>(h: &Host, ctx: Ctx<'js>, at: Opt<Value<'js>>) -> R<'js> {
    let addr = match at.0.filter(|v| !v.is_undefined()) {
        Some(v) => address(&ctx, h, &v)?,
        None => h.session_mut(&ctx)?.pc().or_throw(&ctx)?,
    };
    let mut session = h.session_mut(&ctx)?;
    let insns = session.disasm(addr, 1).or_throw(&ctx)?;
    let insn = insns
        .first()
        .ok_or_else(|| throw(&ctx, format!("cannot decode an instruction at {addr:#x}")))?;
    let sym = session.symbolize(addr);
    drop(session);
    insn_to_js(&ctx, insn, sym)
}

/// The instruction the latest step executed (a step event's `executed`).
fn executed<'js>(h: &Host, ctx: Ctx<'js>) -> R<'js> {
    let mut session = h.session_mut(&ctx)?;
    let Some(addr) = session.stepped_from() else {
        return Ok(undefined(&ctx));
    };
    let insns = session.disasm(addr, 1).or_throw(&ctx)?;
    let sym = session.symbolize(addr);
    drop(session);
    match insns.first() {
        Some(insn) => insn_to_js(&ctx, insn, sym),
        None => Ok(undefined(&ctx)),
    }
}

fn insn_to_js<'js>(ctx: &Ctx<'js>, insn: &Insn, symbol: Option<String>) -> R<'js> {
    let o = Object::new(ctx.clone())?;
    o.put("addr", u64_to_js(ctx, insn.addr)?)?;
    o.put("bytes", values::to_hex(&insn.bytes))?;
    o.put("mnemonic", insn.mnemonic.as_str())?;
    let ops = Array::new(ctx.clone())?;
    for op in &insn.operands {
        ops.push(op.as_str())?;
    }
    o.put("operands", ops)?;
    o.put("text", insn.text.as_str())?;
    if let Some(t) = insn.target {
        o.put("target", u64_to_js(ctx, t)?)?;
    }
    if let Some(s) = symbol {
        o.put("symbol", s)?;
    }
    Ok(o.into_value())
}

/// A disassembly listing. Inside a function, a `name 0xstart:` line, then one
/// `+offset<TAB>instruction` line per instruction (the address is start + offset: the same
/// information as a full address per line, at a third of the bytes); outside any symbol,
/// `0xaddress<TAB>instruction`.
fn listing(ctx: &Ctx<'_>, host: &Host, insns: &[Insn]) -> rquickjs::Result<String> {
    let session = host.session_ref(ctx)?;
    let mut out = String::new();
    let mut current: Option<u64> = None;
    for insn in insns {
        let within = session
            .symbol_store()
            .symbol_at(RuntimeAddr(insn.addr))
            .map(|(_, sym, off)| {
                let start = insn.addr - off;
                (start, sym.display_name().into_owned())
            });
        match within {
            Some((start, name)) => {
                if current != Some(start) {
                    out.push_str(&format!("{name} {start:#x}:\n"));
                    current = Some(start);
                }
                out.push_str(&format!("+{:#x}\t{}\n", insn.addr - start, insn.text));
            }
            None => {
                current = None;
                out.push_str(&format!("{:#x}\t{}\n", insn.addr, insn.text));
            }
        }
    }
    out.pop();
    Ok(out)
}

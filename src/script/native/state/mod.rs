//! JS: `state.source`, `state.stack`, `state.symbol_at`, and where `process.select` and
//! `thread.select` say the selection stopped; `state.*`'s other parts are the files below.

use super::*;

mod disasm;
mod fpu;
mod frames;
mod memory;
mod registers;
mod variables;

/// The natives this file and the files below define, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    registers::install(t)?;
    fpu::install(t)?;
    memory::install(t)?;
    disasm::install(t)?;
    frames::install(t)?;
    variables::install(t)?;
    t.def("source", source)?; // state.source(n)
    t.def("stack", stack)?; // state.stack
    t.def("stack_top", stack_top)?; // state.stack.top
    t.def("symbol_at", symbol_at)?; // state.symbol_at(addr), e.symbol
    t.def("where_line", where_line)?; // process.select, thread.select: the line stopped at
    Ok(())
}

fn source<'js>(h: &Host, ctx: Ctx<'js>, context: Opt<Value<'js>>) -> rquickjs::Result<String> {
    let context = match context.0.filter(|v| !v.is_undefined() && !v.is_null()) {
        Some(v) => values::to_count(&ctx, &v, 1000, "source(n)").or_throw(&ctx)? as u32,
        None => 5,
    };
    let view = h.session_mut(&ctx)?.source_lines(context).or_throw(&ctx)?;
    let (path, line, rows) = (view.path, view.line, view.rows);
    let mut out = format!("{path}:{line}");
    if let Some(why) = view.unavailable {
        out.push_str(&format!(" (source not available: {why})"));
    }
    for (n, text) in rows {
        let mark = if n == line { '>' } else { ' ' };
        out.push_str(&format!("\n{mark}{n}\t{text}"));
    }
    Ok(out)
}

fn stack<'js>(h: &Host, ctx: Ctx<'js>) -> R<'js> {
    let b = h.session_mut(&ctx)?.stack().or_throw(&ctx)?;
    let o = Object::new(ctx.clone())?;
    o.put("top", u64_to_js(&ctx, b.top)?)?;
    o.put("usable_base", u64_to_js(&ctx, b.usable_base)?)?;
    o.put("guard_size", u64_to_js(&ctx, b.guard_size)?)?;
    o.put("kind", b.kind)?;
    Ok(o.into_value())
}

fn stack_top<'js>(h: &Host, ctx: Ctx<'js>) -> R<'js> {
    let (top, exact) = h.session_mut(&ctx)?.stack_top().or_throw(&ctx)?;
    let o = Object::new(ctx.clone())?;
    o.put("top", u64_to_js(&ctx, top)?)?;
    o.put("exact", exact)?;
    Ok(o.into_value())
}

fn symbol_at<'js>(h: &Host, ctx: Ctx<'js>, at: Value<'js>) -> R<'js> {
    let addr = address(&ctx, h, &at)?;
    match h.session_mut(&ctx)?.symbolize(addr) {
        Some(s) => s.into_js(&ctx),
        None => Ok(Value::new_null(ctx.clone())),
    }
}

fn where_line<'js>(h: &Host, ctx: Ctx<'js>) -> R<'js> {
    let mut session = h.session_mut(&ctx)?;
    let pc = session.pc().or_throw(&ctx)?;
    match session.source_position(pc) {
        Some(pos) => pos.into_js(&ctx),
        None => Ok(Value::new_null(ctx.clone())),
    }
}

//! JS: `state.unwind`, `state.frame(n)` and its assignable `registers`.

use super::*;

/// The natives this file defines, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    t.def("unwind", unwind)?; // state.unwind(max, {all}), state.frame(n)
    t.def("set_frame_reg", set_frame_reg)?; // state.frame(n).registers.rbx = v
    Ok(())
}

fn unwind<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    max: Opt<Value<'js>>,
    all: Opt<bool>,
    with_args: Opt<bool>,
    rows_limit: Opt<bool>,
) -> R<'js> {
    let max = match max.0.filter(|v| !v.is_undefined() && !v.is_null()) {
        Some(v) => values::to_count(&ctx, &v, 100_000, "unwind(max)").or_throw(&ctx)? as usize,
        None => 64,
    };
    let past_main = all.0.unwrap_or(false);
    let (mut frames, mut stopped) = h.session_mut(&ctx)?.unwind(max, past_main).or_throw(&ctx)?;
    // The walk counts physical frames; a user's `max` counts the rows it sees, inlined
    // and tail-call rows included (one numbering everywhere).
    if rows_limit.0.unwrap_or(false) && frames.len() > max {
        frames.truncate(max);
        stopped = Some(format!("stopped at the frame limit ({max})"));
    }
    let args: Vec<Option<String>> = if with_args.0.unwrap_or(true) {
        let params = h.session_mut(&ctx)?.frame_params(&frames);
        // Printed with the session only read: a printer reads values through it too.
        let session = h.session_ref(&ctx)?;
        let text_of = |v: &crate::session::TypedValue, limits: &crate::symbols::dwarf::Limits| {
            let printers = printers::JsPretty::new(&ctx, h, v);
            session.value_text(v, limits, Some(&printers))
        };
        params
            .iter()
            .map(|p| p.as_ref().map(|p| Session::frame_args_text(p, &text_of)))
            .collect()
    } else {
        vec![None; frames.len()]
    };
    let rows = Array::new(ctx.clone())?;
    let mut text = String::new();
    for (i, f) in frames.iter().enumerate() {
        let o = Object::new(ctx.clone())?;
        o.put("frame", f.frame as f64)?;
        o.put("pc", u64_to_js(&ctx, f.pc)?)?;
        o.put("sp", u64_to_js(&ctx, f.sp)?)?;
        o.put("symbol", f.symbol.clone())?;
        o.put("file", f.file.clone())?;
        o.put("line", f.line)?;
        if f.tail_call {
            o.put("tail_call", true)?;
        }
        if f.inlined {
            o.put("inlined", true)?;
        }
        if let Some(a) = &args[i] {
            o.put("args", a.as_str())?;
        }
        let regs = Object::new(ctx.clone())?;
        for (name, value) in &f.regs {
            regs.put(*name, u64_to_js(&ctx, *value)?)?;
        }
        o.put("registers", regs)?;
        o.put("source", f.source)?;
        // A frame interrupted by a signal sits above the handler's return trampoline.
        let trampoline = frames
            .get(i + 1)
            .is_some_and(|next| next.source == "signal" && next.pc != f.pc);
        let line = frame_line(f, trampoline, args[i].as_deref());
        text.push_str(&line);
        text.push('\n');
        // The row's own text is its line of the listing (the prelude hides it).
        o.put("row_line", line)?;
        rows.push(o)?;
    }
    if let Some(why) = stopped {
        text.push_str(&format!("(unwinding stopped: {why})\n"));
    }
    text.pop();
    let o = Object::new(ctx.clone())?;
    o.put("rows", rows)?;
    o.put("text", text)?;
    Ok(o.into_value())
}

fn set_frame_reg<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    frame: f64,
    name: String,
    v: Value<'js>,
) -> rquickjs::Result<()> {
    let value = values::to_u64_bits(&ctx, &v)
        .map_err(|e| throw(&ctx, format!("frame({frame}).registers.{name}: {e}")))?;
    h.session_mut(&ctx)?
        .set_frame_register(frame as usize, &name, value)
        .or_throw(&ctx)
}

/// `#1 0x401190 main+0x20(argc=1, argv=0x7ffe...) loop.c:15`, with `[inlined]` before an
/// inlined call's name; the arguments when DWARF describes the frame.
fn frame_line(f: &crate::session::FrameRow, trampoline: bool, args: Option<&str>) -> String {
    let mut line = format!("#{} {:#x}", f.frame, f.pc);
    if f.inlined {
        line.push_str(" [inlined]");
    }
    if f.tail_call {
        line.push_str(" [tail call]");
    }
    line.push(' ');
    // The trampoline is `__restore_rt` when the C library's debug file names it; gdb's
    // wording says what it is either way.
    match (&f.symbol, trampoline) {
        (_, true) => line.push_str("<signal handler called>"),
        // The arguments follow by name: the parameter types would say it all twice.
        (Some(s), false) if args.is_some() => {
            line.push_str(&crate::symbols::elf::short_name::short_frame_name(s))
        }
        (Some(s), false) => line.push_str(s),
        (None, false) => line.push_str("??"),
    }
    if let Some(a) = args {
        line.push_str(&format!("({a})"));
    }
    if let Some(file) = &f.file {
        // Absolute paths add bytes, not information a reader needs to find the line.
        let short = if file.starts_with('/') {
            crate::session::short_file(file)
        } else {
            file
        };
        line.push(' ');
        line.push_str(short);
        if let Some(n) = f.line {
            line.push_str(&format!(":{n}"));
        }
    }
    line
}

//! The stopped target: registers, flags, memory, code, symbols, threads, stacks, unwinding.

use super::mem_kind::kind;
use super::*;
use crate::session::capture::escape_invalid_utf8;

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
            file.rsplit('/').next().unwrap_or(file)
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

/// Defines this part's native functions on `n`.
pub(super) fn install<'js>(
    n: &Object<'js>,
    ctx: &Ctx<'js>,
    host: &Rc<Host>,
) -> rquickjs::Result<()> {
    let h = host.clone();
    def!(n, ctx, "reg", move |ctx: Ctx<'js>,
                              name: String|
          -> R<'js> {
        let index = regs::register_index(&name)
            .ok_or_else(|| throw(&ctx, format!("no register '{name}'")))?;
        let raw = h.session_mut(&ctx)?.regs().map_err(|e| throw(&ctx, e))?;
        u64_to_js(&ctx, regs::get_register(&raw, index))
    });

    let h = host.clone();
    def!(n, ctx, "prev_reg", move |ctx: Ctx<'js>,
                                   name: String|
          -> R<'js> {
        let Some(index) = regs::register_index(&name) else {
            return Ok(undefined(&ctx));
        };
        match h.session_ref(&ctx)?.prev_regs() {
            Some(raw) => u64_to_js(&ctx, regs::get_register(raw, index)),
            None => Ok(undefined(&ctx)),
        }
    });

    let h = host.clone();
    def!(n, ctx, "set_reg", move |ctx: Ctx<'js>,
                                  name: String,
                                  v: Value<'js>|
          -> rquickjs::Result<()> {
        let value = values::to_u64_bits(&ctx, &v)
            .map_err(|e| throw(&ctx, format!("registers.{name}: {e}")))?;
        h.session_mut(&ctx)?
            .set_register(&name, value)
            .map_err(|e| throw(&ctx, e))
    });

    let h = host.clone();
    def!(n, ctx, "set_frame_reg", move |ctx: Ctx<'js>,
                                        frame: f64,
                                        name: String,
                                        v: Value<'js>|
          -> rquickjs::Result<()> {
        let value = values::to_u64_bits(&ctx, &v)
            .map_err(|e| throw(&ctx, format!("frame({frame}).registers.{name}: {e}")))?;
        h.session_mut(&ctx)?
            .set_frame_register(frame as usize, &name, value)
            .map_err(|e| throw(&ctx, e))
    });

    def!(n, ctx, "reg_names", move || -> Vec<&'static str> {
        REGISTER_NAMES.to_vec()
    });

    let h = host.clone();
    def!(
        n,
        ctx,
        "regs_text",
        move |ctx: Ctx<'js>| -> rquickjs::Result<String> {
            let raw = h.session_mut(&ctx)?.regs().map_err(|e| throw(&ctx, e))?;
            let lines: Vec<String> = REGISTER_NAMES
                .iter()
                .enumerate()
                .map(|(i, name)| format!("{name}\t{:#x}", regs::get_register(&raw, i)))
                .collect();
            Ok(lines.join("\n"))
        }
    );

    let h = host.clone();
    def!(n, ctx, "flag", move |ctx: Ctx<'js>,
                               name: String,
                               prev: Opt<bool>|
          -> R<'js> {
        let bit = regs::flag_bit(&name).ok_or_else(|| throw(&ctx, format!("no flag '{name}'")))?;
        let eflags = if prev.0.unwrap_or(false) {
            match h.session_ref(&ctx)?.prev_regs() {
                Some(r) => r.eflags,
                None => return Ok(undefined(&ctx)),
            }
        } else {
            h.session_mut(&ctx)?
                .regs()
                .map_err(|e| throw(&ctx, e))?
                .eflags
        };
        Ok(Value::new_bool(ctx.clone(), eflags & (1 << bit) != 0))
    });

    let h = host.clone();
    def!(n, ctx, "set_flag", move |ctx: Ctx<'js>,
                                   name: String,
                                   on: bool|
          -> rquickjs::Result<()> {
        let bit = regs::flag_bit(&name).ok_or_else(|| throw(&ctx, format!("no flag '{name}'")))?;
        let mut session = h.session_mut(&ctx)?;
        let eflags = session.regs().map_err(|e| throw(&ctx, e))?.eflags;
        let new = if on {
            eflags | (1 << bit)
        } else {
            eflags & !(1 << bit)
        };
        session
            .set_register("eflags", new)
            .map_err(|e| throw(&ctx, e))
    });

    let h = host.clone();
    def!(n, ctx, "mem_read", move |ctx: Ctx<'js>,
                                   at: Value<'js>,
                                   k: String|
          -> R<'js> {
        let k = kind(&ctx, &k)?;
        let addr = address(&ctx, &h, &at)?;
        let bytes = h
            .session_mut(&ctx)?
            .read_memory(addr, k.size())
            .map_err(|e| throw(&ctx, e))?;
        k.decode(&ctx, &bytes)
    });

    let h = host.clone();
    def!(n, ctx, "prev_mem", move |ctx: Ctx<'js>,
                                   at: Value<'js>,
                                   k: String|
          -> R<'js> {
        let k = kind(&ctx, &k)?;
        let addr = address(&ctx, &h, &at)?;
        match h.session_ref(&ctx)?.prev_memory(addr, k.size()) {
            Some(bytes) => k.decode(&ctx, &bytes),
            None => Ok(undefined(&ctx)),
        }
    });

    let h = host.clone();
    def!(n, ctx, "mem_bytes", move |ctx: Ctx<'js>,
                                    at: Value<'js>,
                                    len: Value<'js>|
          -> rquickjs::Result<String> {
        let addr = address(&ctx, &h, &at)?;
        let len = values::to_count(&ctx, &len, 1 << 20, "bytes(n)").map_err(|e| throw(&ctx, e))?;
        let bytes = h
            .session_mut(&ctx)?
            .read_memory(addr, len as usize)
            .map_err(|e| throw(&ctx, e))?;
        Ok(values::to_hex(&bytes))
    });

    // `memory(a).array(type, n)`: n values of one type, read at once.
    let h = host.clone();
    def!(n, ctx, "mem_array", move |ctx: Ctx<'js>,
                                    at: Value<'js>,
                                    k: String,
                                    count: Value<'js>|
          -> R<'js> {
        let k = kind(&ctx, &k)?;
        let addr = address(&ctx, &h, &at)?;
        let max = (1u64 << 20) / k.size() as u64;
        let count =
            values::to_count(&ctx, &count, max, "array(type, n)").map_err(|e| throw(&ctx, e))?;
        let bytes = h
            .session_mut(&ctx)?
            .read_memory(addr, count as usize * k.size())
            .map_err(|e| throw(&ctx, e))?;
        let items = Array::new(ctx.clone())?;
        for chunk in bytes.chunks_exact(k.size()) {
            items.push(k.decode(&ctx, chunk)?)?;
        }
        Ok(items.into_value())
    });

    // `memory(a).u8array(n)`: the bytes as a Uint8Array.
    let h = host.clone();
    def!(n, ctx, "mem_u8array", move |ctx: Ctx<'js>,
                                      at: Value<'js>,
                                      len: Value<'js>|
          -> R<'js> {
        let addr = address(&ctx, &h, &at)?;
        let len =
            values::to_count(&ctx, &len, 1 << 20, "u8array(n)").map_err(|e| throw(&ctx, e))?;
        let bytes = h
            .session_mut(&ctx)?
            .read_memory(addr, len as usize)
            .map_err(|e| throw(&ctx, e))?;
        Ok(rquickjs::TypedArray::<u8>::new(ctx.clone(), bytes)?.into_value())
    });

    // The instruction the latest step executed (a step event's `executed`).
    let h = host.clone();
    def!(n, ctx, "executed", move |ctx: Ctx<'js>| -> R<'js> {
        let mut session = h.session_mut(&ctx)?;
        let Some(addr) = session.stepped_from() else {
            return Ok(undefined(&ctx));
        };
        let insns = session.disasm(addr, 1).map_err(|e| throw(&ctx, e))?;
        let sym = session.symbolize(addr);
        drop(session);
        match insns.first() {
            Some(insn) => insn_to_js(&ctx, insn, sym),
            None => Ok(undefined(&ctx)),
        }
    });

    let h = host.clone();
    def!(n, ctx, "mem_str", move |ctx: Ctx<'js>,
                                  at: Value<'js>,
                                  max: Value<'js>|
          -> rquickjs::Result<String> {
        let addr = address(&ctx, &h, &at)?;
        let max = values::to_count(&ctx, &max, 1 << 20, "str(max)").map_err(|e| throw(&ctx, e))?;
        let bytes = h
            .session_mut(&ctx)?
            .read_memory_partial(addr, max as usize)
            .map_err(|e| throw(&ctx, e))?;
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        Ok(escape_invalid_utf8(&bytes[..end]))
    });

    let h = host.clone();
    def!(n, ctx, "mem_write", move |ctx: Ctx<'js>,
                                    at: Value<'js>,
                                    k: String,
                                    v: Value<'js>|
          -> rquickjs::Result<()> {
        let k = kind(&ctx, &k)?;
        let addr = address(&ctx, &h, &at)?;
        let bytes = k
            .encode(&ctx, &v)
            .map_err(|e| throw(&ctx, format!("write: {e}")))?;
        h.session_mut(&ctx)?
            .write_memory(addr, &bytes)
            .map_err(|e| throw(&ctx, e))
    });

    let h = host.clone();
    def!(
        n,
        ctx,
        "mem_write_bytes",
        move |ctx: Ctx<'js>, at: Value<'js>, hex: String| -> rquickjs::Result<()> {
            let addr = address(&ctx, &h, &at)?;
            let bytes = values::parse_hex_bytes(&hex).map_err(|e| throw(&ctx, e))?;
            h.session_mut(&ctx)?
                .write_memory(addr, &bytes)
                .map_err(|e| throw(&ctx, e))
        }
    );

    let h = host.clone();
    def!(n, ctx, "disasm", move |ctx: Ctx<'js>,
                                 at: Opt<Value<'js>>,
                                 count: Opt<Value<'js>>|
          -> R<'js> {
        let addr = match at.0.filter(|v| !v.is_undefined() && !v.is_null()) {
            Some(v) => address(&ctx, &h, &v)?,
            None => h.session_mut(&ctx)?.pc().map_err(|e| throw(&ctx, e))?,
        };
        let count = match count.0.filter(|v| !v.is_undefined()) {
            Some(v) => {
                values::to_count(&ctx, &v, 10_000, "disasm(n)").map_err(|e| throw(&ctx, e))?
            }
            None => 10,
        };
        let insns = h
            .session_mut(&ctx)?
            .disasm(addr, count as usize)
            .map_err(|e| throw(&ctx, e))?;
        let rows = Array::new(ctx.clone())?;
        for insn in &insns {
            rows.push(insn_to_js(&ctx, insn, None)?)?;
        }
        let o = Object::new(ctx.clone())?;
        o.put("rows", rows)?;
        o.put("text", listing(&ctx, &h, &insns)?)?;
        Ok(o.into_value())
    });

    // The whole function holding `at` (pc when not given).
    let h = host.clone();
    def!(n, ctx, "disasm_function", move |ctx: Ctx<'js>,
                                          at: Opt<Value<'js>>|
          -> R<'js> {
        let addr = match at.0.filter(|v| !v.is_undefined() && !v.is_null()) {
            Some(v) => address(&ctx, &h, &v)?,
            None => h.session_mut(&ctx)?.pc().map_err(|e| throw(&ctx, e))?,
        };
        let (insns, left) = h
            .session_mut(&ctx)?
            .disasm_function(addr)
            .map_err(|e| throw(&ctx, e))?;
        let rows = Array::new(ctx.clone())?;
        for insn in &insns {
            rows.push(insn_to_js(&ctx, insn, None)?)?;
        }
        let mut text = listing(&ctx, &h, &insns)?;
        if left > 0 {
            text.push_str(&format!("\n[... {left} more bytes of the function]"));
        }
        let o = Object::new(ctx.clone())?;
        o.put("rows", rows)?;
        o.put("text", text)?;
        Ok(o.into_value())
    });

    let h = host.clone();
    def!(n, ctx, "insn", move |ctx: Ctx<'js>,
                               at: Opt<Value<'js>>|
          -> R<'js> {
        let addr = match at.0.filter(|v| !v.is_undefined()) {
            Some(v) => address(&ctx, &h, &v)?,
            None => h.session_mut(&ctx)?.pc().map_err(|e| throw(&ctx, e))?,
        };
        let mut session = h.session_mut(&ctx)?;
        let insns = session.disasm(addr, 1).map_err(|e| throw(&ctx, e))?;
        let insn = insns
            .first()
            .ok_or_else(|| throw(&ctx, format!("cannot decode an instruction at {addr:#x}")))?;
        let sym = session.symbolize(addr);
        drop(session);
        insn_to_js(&ctx, insn, sym)
    });

    let h = host.clone();
    def!(n, ctx, "symbol_at", move |ctx: Ctx<'js>,
                                    at: Value<'js>|
          -> R<'js> {
        let addr = address(&ctx, &h, &at)?;
        match h.session_mut(&ctx)?.symbolize(addr) {
            Some(s) => s.into_js(&ctx),
            None => Ok(Value::new_null(ctx.clone())),
        }
    });

    let h = host.clone();
    def!(n, ctx, "resolve", move |ctx: Ctx<'js>,
                                  expr: Value<'js>|
          -> R<'js> {
        let addr = address(&ctx, &h, &expr)?;
        u64_to_js(&ctx, addr)
    });

    let h = host.clone();
    def!(n, ctx, "where_line", move |ctx: Ctx<'js>| -> R<'js> {
        let mut session = h.session_mut(&ctx)?;
        let pc = session.pc().map_err(|e| throw(&ctx, e))?;
        match session.source_position(pc) {
            Some(pos) => pos.into_js(&ctx),
            None => Ok(Value::new_null(ctx.clone())),
        }
    });

    let h = host.clone();
    def!(n, ctx, "line_frames", move |ctx: Ctx<'js>| -> R<'js> {
        let frames = h
            .session_mut(&ctx)?
            .line_frames()
            .map_err(|e| throw(&ctx, e))?;
        let o = Object::new(ctx.clone())?;
        o.put("lines", frames.lines.clone())?;
        o.put("functions", frames.functions.clone())?;
        o.put("entries", frames.entries as f64)?;
        o.put("hidden", frames.hidden as f64)?;
        o.put("zero", frames.zero)?;
        Ok(o.into_value())
    });

    let h = host.clone();
    def!(n, ctx, "at_line_start", move |ctx: Ctx<'js>| -> R<'js> {
        let mut session = h.session_mut(&ctx)?;
        let pc = session.pc().map_err(|e| throw(&ctx, e))?;
        Ok(Value::new_bool(ctx.clone(), session.at_line_start(pc)))
    });

    let h = host.clone();
    def!(n, ctx, "at_row_start", move |ctx: Ctx<'js>| -> R<'js> {
        let mut session = h.session_mut(&ctx)?;
        let pc = session.pc().map_err(|e| throw(&ctx, e))?;
        Ok(Value::new_bool(ctx.clone(), session.at_row_start(pc)))
    });

    let h = host.clone();
    def!(n, ctx, "at_statement", move |ctx: Ctx<'js>| -> R<'js> {
        let mut session = h.session_mut(&ctx)?;
        let pc = session.pc().map_err(|e| throw(&ctx, e))?;
        Ok(Value::new_bool(ctx.clone(), session.at_statement(pc)))
    });

    let h = host.clone();
    def!(n, ctx, "threads", move |ctx: Ctx<'js>| -> R<'js> {
        let list = h
            .session_mut(&ctx)?
            .thread_list()
            .map_err(|e| throw(&ctx, e))?;
        let rows = Array::new(ctx.clone())?;
        for t in &list {
            let o = Object::new(ctx.clone())?;
            o.put("tid", t.tid)?;
            o.put("name", t.name.as_str())?;
            o.put("state", t.state.as_str())?;
            o.put("pc", u64_to_js(&ctx, t.pc)?)?;
            o.put("symbol", t.symbol.clone())?;
            if t.selected {
                o.put("selected", true)?;
            }
            rows.push(o)?;
        }
        Ok(rows.into_value())
    });

    let h = host.clone();
    def!(n, ctx, "processes", move |ctx: Ctx<'js>| -> R<'js> {
        let list = h.session_mut(&ctx)?.process_list();
        let rows = Array::new(ctx.clone())?;
        for p in &list {
            let o = Object::new(ctx.clone())?;
            o.put("pid", p.pid)?;
            o.put("program", p.program.as_str())?;
            o.put("state", p.state.as_str())?;
            o.put("threads", p.threads as f64)?;
            rows.push(o)?;
        }
        Ok(rows.into_value())
    });

    let h = host.clone();
    def!(
        n,
        ctx,
        "process_select",
        move |ctx: Ctx<'js>, pid: Value<'js>| -> rquickjs::Result<i32> {
            let pid = values::to_count(&ctx, &pid, i32::MAX as u64, "process.select(pid)")
                .map_err(|e| throw(&ctx, e))?;
            h.session_mut(&ctx)?
                .select_process(pid as i32)
                .map_err(|e| throw(&ctx, e))?;
            Ok(pid as i32)
        }
    );

    let h = host.clone();
    def!(n, ctx, "thread_select", move |ctx: Ctx<'js>,
                                        tid: Value<'js>|
          -> rquickjs::Result<()> {
        let tid = values::to_count(&ctx, &tid, i32::MAX as u64, "thread.select(tid)")
            .map_err(|e| throw(&ctx, e))?;
        h.session_mut(&ctx)?
            .select_thread(tid as i32)
            .map_err(|e| throw(&ctx, e))
    });

    let h = host.clone();
    def!(n, ctx, "unwind", move |ctx: Ctx<'js>,
                                 max: Opt<Value<'js>>,
                                 all: Opt<bool>,
                                 with_args: Opt<bool>,
                                 rows_limit: Opt<bool>|
          -> R<'js> {
        let max = match max.0.filter(|v| !v.is_undefined() && !v.is_null()) {
            Some(v) => values::to_count(&ctx, &v, 100_000, "unwind(max)")
                .map_err(|e| throw(&ctx, e))? as usize,
            None => 64,
        };
        let past_main = all.0.unwrap_or(false);
        let (mut frames, mut stopped) = h
            .session_mut(&ctx)?
            .unwind(max, past_main)
            .map_err(|e| throw(&ctx, e))?;
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
            let text_of = |v: &crate::session::TypedValue,
                           limits: &crate::symbols::dwarf::Limits| {
                let printers = super::pretty::JsPretty::new(&ctx, &h, v);
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
    });

    let h = host.clone();
    def!(n, ctx, "source", move |ctx: Ctx<'js>,
                                 context: Opt<Value<'js>>|
          -> rquickjs::Result<String> {
        let context = match context.0.filter(|v| !v.is_undefined() && !v.is_null()) {
            Some(v) => {
                values::to_count(&ctx, &v, 1000, "source(n)").map_err(|e| throw(&ctx, e))? as u32
            }
            None => 5,
        };
        let view = h
            .session_mut(&ctx)?
            .source_lines(context)
            .map_err(|e| throw(&ctx, e))?;
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
    });

    let h = host.clone();
    def!(n, ctx, "stack", move |ctx: Ctx<'js>| -> R<'js> {
        let b = h.session_mut(&ctx)?.stack().map_err(|e| throw(&ctx, e))?;
        let o = Object::new(ctx.clone())?;
        o.put("top", u64_to_js(&ctx, b.top)?)?;
        o.put("usable_base", u64_to_js(&ctx, b.usable_base)?)?;
        o.put("guard_size", u64_to_js(&ctx, b.guard_size)?)?;
        o.put("kind", b.kind)?;
        Ok(o.into_value())
    });

    let h = host.clone();
    def!(n, ctx, "stack_top", move |ctx: Ctx<'js>| -> R<'js> {
        let (top, exact) = h
            .session_mut(&ctx)?
            .stack_top()
            .map_err(|e| throw(&ctx, e))?;
        let o = Object::new(ctx.clone())?;
        o.put("top", u64_to_js(&ctx, top)?)?;
        o.put("exact", exact)?;
        Ok(o.into_value())
    });

    let h = host.clone();
    def!(n, ctx, "tls", move |ctx: Ctx<'js>,
                              name: String|
          -> R<'js> {
        let (addr, size) = h
            .session_mut(&ctx)?
            .thread_local(&name)
            .map_err(|e| throw(&ctx, e))?;
        let o = Object::new(ctx.clone())?;
        o.put("addr", u64_to_js(&ctx, addr)?)?;
        o.put("size", size as f64)?;
        Ok(o.into_value())
    });

    let h = host.clone();
    def!(
        n,
        ctx,
        "tid",
        move |ctx: Ctx<'js>| -> rquickjs::Result<i32> {
            h.session_mut(&ctx)?
                .selected_tid()
                .map_err(|e| throw(&ctx, e))
        }
    );
    Ok(())
}

//! The native half of the JS API: a hidden object of functions the prelude builds the public
//! API from. Each function is a thin conversion between JS values and a session call.

use std::rc::Rc;
use std::time::{Duration, Instant};

use rquickjs::prelude::{Opt, Rest};
use rquickjs::{Array, Ctx, Exception, Function, IntoJs, Object, Value};

use super::host::Host;
use super::values::{self, u64_to_js};
use super::{api, printer};
use crate::inferior::Stop;
use crate::os::regs::{self, REGISTER_NAMES};
use crate::os::signals;
use crate::session::stop::le_value;
use crate::session::watchpoints::WatchKind;
use crate::session::{BreakpointRef, Session, SignalMode, SpawnSpec, StopInfo};
use crate::symbols::{Insn, RuntimeAddr, SymKind};

type R<'js> = rquickjs::Result<Value<'js>>;

/// Throws a `ScryError`: scry's own errors print as `error: <message>`, without a JS class.
pub fn throw(ctx: &Ctx<'_>, msg: impl std::fmt::Display) -> rquickjs::Error {
    match Exception::from_message(ctx.clone(), &msg.to_string()) {
        Ok(e) => {
            let _ = e.as_object().set("name", "ScryError");
            ctx.throw(e.into_value())
        }
        Err(e) => e,
    }
}

fn address<'js>(ctx: &Ctx<'js>, host: &Host, v: &Value<'js>) -> rquickjs::Result<u64> {
    if let Some(s) = v.as_string() {
        let text = s.to_string()?;
        return host
            .session
            .borrow_mut()
            .resolve(&text)
            .map_err(|e| throw(ctx, e));
    }
    values::to_address(ctx, v).map_err(|e| throw(ctx, e))
}

fn undefined<'js>(ctx: &Ctx<'js>) -> Value<'js> {
    Value::new_undefined(ctx.clone())
}

/// A typed memory access: its size and how the bytes become a JS value.
#[derive(Clone, Copy)]
enum Kind {
    U(u32),
    I(u32),
    F32,
    F64,
}

fn kind(ctx: &Ctx<'_>, name: &str) -> rquickjs::Result<Kind> {
    Ok(match name {
        "u8" => Kind::U(8),
        "u16" => Kind::U(16),
        "u32" => Kind::U(32),
        "u64" => Kind::U(64),
        "i8" => Kind::I(8),
        "i16" => Kind::I(16),
        "i32" => Kind::I(32),
        "i64" => Kind::I(64),
        "f32" => Kind::F32,
        "f64" => Kind::F64,
        other => return Err(throw(ctx, format!("unknown memory type '{other}'"))),
    })
}

impl Kind {
    fn size(self) -> usize {
        match self {
            Kind::U(b) | Kind::I(b) => (b / 8) as usize,
            Kind::F32 => 4,
            Kind::F64 => 8,
        }
    }

    fn decode<'js>(self, ctx: &Ctx<'js>, bytes: &[u8]) -> R<'js> {
        let mut raw = [0u8; 8];
        raw[..bytes.len()].copy_from_slice(bytes);
        let bits = u64::from_le_bytes(raw);
        match self {
            Kind::U(_) => u64_to_js(ctx, bits),
            Kind::I(b) => {
                let shift = 64 - b;
                values::i64_to_js(ctx, ((bits << shift) as i64) >> shift)
            }
            Kind::F32 => Ok(Value::new_number(
                ctx.clone(),
                f32::from_bits(bits as u32) as f64,
            )),
            Kind::F64 => Ok(Value::new_number(ctx.clone(), f64::from_bits(bits))),
        }
    }

    fn encode<'js>(self, ctx: &Ctx<'js>, v: &Value<'js>) -> Result<Vec<u8>, String> {
        let bytes = match self {
            Kind::U(b) | Kind::I(b) => values::to_sized_bits(ctx, v, b)?.to_le_bytes().to_vec(),
            Kind::F32 => (v.as_number().ok_or("expected a Number")? as f32)
                .to_le_bytes()
                .to_vec(),
            Kind::F64 => v
                .as_number()
                .ok_or("expected a Number")?
                .to_le_bytes()
                .to_vec(),
        };
        Ok(bytes[..self.size()].to_vec())
    }
}

fn stop_to_js<'js>(ctx: &Ctx<'js>, info: &StopInfo) -> R<'js> {
    let v = stop_to_js_fields(ctx, info)?;
    if let Some(o) = v.as_object() {
        if let Some(sym) = &info.symbol {
            o.set("symbol", sym.as_str())?;
        }
        if let Some((done, _)) = info.steps {
            o.set("steps", done as f64)?;
        }
        o.set("line", info.line())?;
    }
    Ok(v)
}

fn stop_to_js_fields<'js>(ctx: &Ctx<'js>, info: &StopInfo) -> R<'js> {
    let o = Object::new(ctx.clone())?;
    o.set("reason", info.reason().as_str())?;
    if let Some(pc) = info.pc {
        o.set("pc", u64_to_js(ctx, pc)?)?;
    }
    if let Some(tid) = info.tid {
        o.set("tid", tid)?;
    }
    if let Some(id) = info.breakpoint_id {
        o.set("breakpoint_id", id)?;
    }
    if let Some(name) = &info.breakpoint_name {
        o.set("breakpoint_name", name.as_str())?;
    }
    if let Some(sig) = info.signal {
        o.set("signal", signals::signal_name(sig))?;
    }
    if let Some(addr) = info.fault_addr {
        o.set("fault_addr", u64_to_js(ctx, addr)?)?;
    }
    if let Some(code) = info.exit_code {
        o.set("code", code)?;
    }
    if let Some(src) = &info.source {
        o.set("source", src.as_str())?;
    }
    if let Some(w) = &info.watch {
        o.set("watchpoint_id", w.id)?;
        if let Some(name) = &w.name {
            o.set("watchpoint_name", name.as_str())?;
        }
        o.set("access_type", if w.is_write { "write" } else { "read" })?;
        o.set("addr", u64_to_js(ctx, w.addr)?)?;
        if w.is_write {
            o.set("old", u64_to_js(ctx, le_value(&w.old))?)?;
        }
        o.set("new", u64_to_js(ctx, le_value(&w.new))?)?;
        if let Some(at) = w.insn_addr {
            o.set("insn_addr", u64_to_js(ctx, at)?)?;
        }
        if let Some(text) = &w.insn_text {
            o.set("insn", text.as_str())?;
        }
    }
    Ok(o.into_value())
}

/// A stop as a listener sees it: the fields, no symbol and no line (made on demand).
fn event_to_js<'js>(ctx: &Ctx<'js>, info: &StopInfo) -> R<'js> {
    stop_to_js_fields(ctx, info)
}

fn insn_to_js<'js>(ctx: &Ctx<'js>, insn: &Insn, symbol: Option<String>) -> R<'js> {
    let o = Object::new(ctx.clone())?;
    o.set("addr", u64_to_js(ctx, insn.addr)?)?;
    o.set("bytes", values::to_hex(&insn.bytes))?;
    o.set("mnemonic", insn.mnemonic.as_str())?;
    let ops = Array::new(ctx.clone())?;
    for (i, op) in insn.operands.iter().enumerate() {
        ops.set(i, op.as_str())?;
    }
    o.set("operands", ops)?;
    o.set("text", insn.text.as_str())?;
    if let Some(s) = symbol {
        o.set("symbol", s)?;
    }
    Ok(o.into_value())
}

/// A disassembly listing. Inside a function, a `name 0xstart:` line, then one
/// `+offset<TAB>instruction` line per instruction (the address is start + offset: the same
/// information as a full address per line, at a third of the bytes); outside any symbol,
/// `0xaddress<TAB>instruction`.
fn listing(host: &Host, insns: &[Insn]) -> String {
    let session = host.session.borrow();
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
    out
}

fn finish_run(host: &Host, started: Instant) {
    host.credit(started.elapsed());
}

/// One leg of a run (a step or a continue up to the next event) within the run's deadline.
/// The stop is booked, kept for `last_stop`, and handed to JS with its fields only.
fn run_one<'js>(
    ctx: &Ctx<'js>,
    host: &Host,
    leg: fn(&mut Session, Instant) -> crate::session::Result<StopInfo>,
) -> R<'js> {
    let deadline = host
        .run_deadline
        .get()
        .ok_or_else(|| throw(ctx, "internal: no run in progress"))?;
    let started = Instant::now();
    let info = leg(&mut host.session.borrow_mut(), deadline);
    finish_run(host, started);
    let info = info.map_err(|e| throw(ctx, e))?;
    let rec = event_to_js(ctx, &info);
    *host.last_stop.borrow_mut() = Some(info);
    rec
}

/// Defines every native function on a fresh object.
pub fn install<'js>(ctx: &Ctx<'js>, host: &Rc<Host>) -> rquickjs::Result<Object<'js>> {
    let n = Object::new(ctx.clone())?;
    macro_rules! def {
        ($name:literal, $f:expr) => {
            n.set($name, Function::new(ctx.clone(), $f)?)?;
        };
    }

    let h = host.clone();
    def!("print", move |ctx: Ctx<'js>,
                        args: Rest<Value<'js>>|
          -> rquickjs::Result<()> {
        let text = printer::render_print_args(&ctx, &args.0)?;
        h.print(&text);
        Ok(())
    });

    let h = host.clone();
    def!("reg", move |ctx: Ctx<'js>, name: String| -> R<'js> {
        let index = regs::register_index(&name)
            .ok_or_else(|| throw(&ctx, format!("no register '{name}'")))?;
        let raw = h.session.borrow_mut().regs().map_err(|e| throw(&ctx, e))?;
        u64_to_js(&ctx, regs::get_register(&raw, index))
    });

    let h = host.clone();
    def!("prev_reg", move |ctx: Ctx<'js>, name: String| -> R<'js> {
        let Some(index) = regs::register_index(&name) else {
            return Ok(undefined(&ctx));
        };
        match h.session.borrow().prev_regs() {
            Some(raw) => u64_to_js(&ctx, regs::get_register(raw, index)),
            None => Ok(undefined(&ctx)),
        }
    });

    let h = host.clone();
    def!("set_reg", move |ctx: Ctx<'js>,
                          name: String,
                          v: Value<'js>|
          -> rquickjs::Result<()> {
        let value = values::to_u64_bits(&ctx, &v)
            .map_err(|e| throw(&ctx, format!("registers.{name}: {e}")))?;
        h.session
            .borrow_mut()
            .set_register(&name, value)
            .map_err(|e| throw(&ctx, e))
    });

    def!("reg_names", move || -> Vec<&'static str> {
        REGISTER_NAMES.to_vec()
    });

    let h = host.clone();
    def!(
        "regs_text",
        move |ctx: Ctx<'js>| -> rquickjs::Result<String> {
            let raw = h.session.borrow_mut().regs().map_err(|e| throw(&ctx, e))?;
            let lines: Vec<String> = REGISTER_NAMES
                .iter()
                .enumerate()
                .map(|(i, name)| format!("{name}\t{:#x}", regs::get_register(&raw, i)))
                .collect();
            Ok(lines.join("\n"))
        }
    );

    let h = host.clone();
    def!("flag", move |ctx: Ctx<'js>,
                       name: String,
                       prev: Opt<bool>|
          -> R<'js> {
        let bit = regs::flag_bit(&name).ok_or_else(|| throw(&ctx, format!("no flag '{name}'")))?;
        let eflags = if prev.0.unwrap_or(false) {
            match h.session.borrow().prev_regs() {
                Some(r) => r.eflags,
                None => return Ok(undefined(&ctx)),
            }
        } else {
            h.session
                .borrow_mut()
                .regs()
                .map_err(|e| throw(&ctx, e))?
                .eflags
        };
        Ok(Value::new_bool(ctx.clone(), eflags & (1 << bit) != 0))
    });

    let h = host.clone();
    def!("set_flag", move |ctx: Ctx<'js>,
                           name: String,
                           on: bool|
          -> rquickjs::Result<()> {
        let bit = regs::flag_bit(&name).ok_or_else(|| throw(&ctx, format!("no flag '{name}'")))?;
        let mut session = h.session.borrow_mut();
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
    def!("mem_read", move |ctx: Ctx<'js>,
                           at: Value<'js>,
                           k: String|
          -> R<'js> {
        let k = kind(&ctx, &k)?;
        let addr = address(&ctx, &h, &at)?;
        let bytes = h
            .session
            .borrow_mut()
            .read_memory(addr, k.size())
            .map_err(|e| throw(&ctx, e))?;
        k.decode(&ctx, &bytes)
    });

    let h = host.clone();
    def!("prev_mem", move |ctx: Ctx<'js>,
                           at: Value<'js>,
                           k: String|
          -> R<'js> {
        let k = kind(&ctx, &k)?;
        let addr = address(&ctx, &h, &at)?;
        match h.session.borrow().prev_memory(addr, k.size()) {
            Some(bytes) => k.decode(&ctx, &bytes),
            None => Ok(undefined(&ctx)),
        }
    });

    let h = host.clone();
    def!("mem_bytes", move |ctx: Ctx<'js>,
                            at: Value<'js>,
                            len: Value<'js>|
          -> rquickjs::Result<String> {
        let addr = address(&ctx, &h, &at)?;
        let len = values::to_count(&ctx, &len, 1 << 20, "bytes(n)").map_err(|e| throw(&ctx, e))?;
        let bytes = h
            .session
            .borrow_mut()
            .read_memory(addr, len as usize)
            .map_err(|e| throw(&ctx, e))?;
        Ok(values::to_hex(&bytes))
    });

    let h = host.clone();
    def!("mem_str", move |ctx: Ctx<'js>,
                          at: Value<'js>,
                          max: Value<'js>|
          -> rquickjs::Result<String> {
        let addr = address(&ctx, &h, &at)?;
        let max = values::to_count(&ctx, &max, 1 << 20, "str(max)").map_err(|e| throw(&ctx, e))?;
        let bytes = h
            .session
            .borrow_mut()
            .read_memory_partial(addr, max as usize)
            .map_err(|e| throw(&ctx, e))?;
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        Ok(escape_invalid_utf8(&bytes[..end]))
    });

    let h = host.clone();
    def!("mem_write", move |ctx: Ctx<'js>,
                            at: Value<'js>,
                            k: String,
                            v: Value<'js>|
          -> rquickjs::Result<()> {
        let k = kind(&ctx, &k)?;
        let addr = address(&ctx, &h, &at)?;
        let bytes = k
            .encode(&ctx, &v)
            .map_err(|e| throw(&ctx, format!("write: {e}")))?;
        h.session
            .borrow_mut()
            .write_memory(addr, &bytes)
            .map_err(|e| throw(&ctx, e))
    });

    let h = host.clone();
    def!("mem_write_bytes", move |ctx: Ctx<'js>,
                                  at: Value<'js>,
                                  hex: String|
          -> rquickjs::Result<()> {
        let addr = address(&ctx, &h, &at)?;
        let bytes = values::parse_hex_bytes(&hex).map_err(|e| throw(&ctx, e))?;
        h.session
            .borrow_mut()
            .write_memory(addr, &bytes)
            .map_err(|e| throw(&ctx, e))
    });

    let h = host.clone();
    def!("disasm", move |ctx: Ctx<'js>,
                         at: Opt<Value<'js>>,
                         count: Opt<Value<'js>>|
          -> R<'js> {
        let addr = match at.0.filter(|v| !v.is_undefined() && !v.is_null()) {
            Some(v) => address(&ctx, &h, &v)?,
            None => h.session.borrow_mut().pc().map_err(|e| throw(&ctx, e))?,
        };
        let count = match count.0.filter(|v| !v.is_undefined()) {
            Some(v) => {
                values::to_count(&ctx, &v, 10_000, "disasm(n)").map_err(|e| throw(&ctx, e))?
            }
            None => 10,
        };
        let insns = h
            .session
            .borrow_mut()
            .disasm(addr, count as usize)
            .map_err(|e| throw(&ctx, e))?;
        let rows = Array::new(ctx.clone())?;
        for (i, insn) in insns.iter().enumerate() {
            rows.set(i, insn_to_js(&ctx, insn, None)?)?;
        }
        let o = Object::new(ctx.clone())?;
        o.set("rows", rows)?;
        o.set("text", listing(&h, &insns))?;
        Ok(o.into_value())
    });

    let h = host.clone();
    def!("insn", move |ctx: Ctx<'js>,
                       at: Opt<Value<'js>>|
          -> R<'js> {
        let addr = match at.0.filter(|v| !v.is_undefined()) {
            Some(v) => address(&ctx, &h, &v)?,
            None => h.session.borrow_mut().pc().map_err(|e| throw(&ctx, e))?,
        };
        let mut session = h.session.borrow_mut();
        let insns = session.disasm(addr, 1).map_err(|e| throw(&ctx, e))?;
        let insn = insns
            .first()
            .ok_or_else(|| throw(&ctx, format!("cannot decode an instruction at {addr:#x}")))?;
        let sym = session.symbolize(addr);
        drop(session);
        insn_to_js(&ctx, insn, sym)
    });

    let h = host.clone();
    def!("symbol_at", move |ctx: Ctx<'js>,
                            at: Value<'js>|
          -> R<'js> {
        let addr = address(&ctx, &h, &at)?;
        match h.session.borrow_mut().symbolize(addr) {
            Some(s) => s.into_js(&ctx),
            None => Ok(Value::new_null(ctx.clone())),
        }
    });

    let h = host.clone();
    def!("resolve", move |ctx: Ctx<'js>,
                          expr: Value<'js>|
          -> R<'js> {
        let addr = address(&ctx, &h, &expr)?;
        u64_to_js(&ctx, addr)
    });

    let h = host.clone();
    def!("symbols", move |ctx: Ctx<'js>,
                          filter: Opt<Value<'js>>,
                          limit: Opt<Value<'js>>|
          -> R<'js> {
        let limit = match limit.0.filter(|v| !v.is_undefined() && !v.is_null()) {
            Some(v) => values::to_count(&ctx, &v, 10_000_000, "symbols(filter, limit)")
                .map_err(|e| throw(&ctx, e))? as usize,
            None => 200,
        };
        let filter: Option<String> = match filter.0.filter(|v| !v.is_undefined() && !v.is_null()) {
            Some(v) => Some(v.get()?),
            None => None,
        };
        let session = h.session.borrow();
        let rows = Array::new(ctx.clone())?;
        let mut total = 0usize;
        for (module, sym, addr) in session.symbol_store().symbols(filter.as_deref()) {
            if total < limit {
                let o = Object::new(ctx.clone())?;
                o.set("addr", u64_to_js(&ctx, addr.0)?)?;
                o.set("size", sym.size as f64)?;
                o.set(
                    "type",
                    match sym.kind {
                        SymKind::Func => "func",
                        SymKind::Object => "object",
                        SymKind::Tls => "tls",
                        SymKind::Other => "other",
                    },
                )?;
                o.set("name", sym.display_name().as_ref())?;
                o.set("module", module.name.as_str())?;
                rows.set(total, o)?;
            }
            total += 1;
        }
        let o = Object::new(ctx.clone())?;
        o.set("rows", rows)?;
        o.set("more", total.saturating_sub(limit) as f64)?;
        Ok(o.into_value())
    });

    let h = host.clone();
    def!("spawn", move |ctx: Ctx<'js>,
                        program: String,
                        args: Vec<String>,
                        opts: Opt<Value<'js>>|
          -> R<'js> {
        let mut spec = SpawnSpec {
            program,
            args,
            ..Default::default()
        };
        if let Some(o) = opts.0.as_ref().and_then(|v| v.as_object()) {
            if let Ok(env) = o.get::<_, Object>("env") {
                for key in env.keys::<String>() {
                    let key = key?;
                    let v: Value = env.get(key.as_str())?;
                    let value = if v.is_null() || v.is_undefined() {
                        None
                    } else {
                        Some(
                            <rquickjs::convert::Coerced<String> as rquickjs::FromJs>::from_js(
                                &ctx, v,
                            )?
                            .0,
                        )
                    };
                    spec.env.push((key, value));
                }
            }
            if let Ok(cwd) = o.get::<_, String>("cwd") {
                spec.cwd = Some(cwd.into());
            }
            if let Ok(stdin) = o.get::<_, String>("stdin") {
                spec.stdin = Some(stdin.into_bytes());
            }
        }
        let info = h
            .session
            .borrow_mut()
            .spawn(spec)
            .map_err(|e| throw(&ctx, e))?;
        stop_to_js(&ctx, &info)
    });

    let h = host.clone();
    def!("attach", move |ctx: Ctx<'js>, pid: Value<'js>| -> R<'js> {
        let pid = values::to_count(&ctx, &pid, i32::MAX as u64, "attach(pid)")
            .map_err(|e| throw(&ctx, e))?;
        let info = h
            .session
            .borrow_mut()
            .attach(pid as i32)
            .map_err(|e| throw(&ctx, e))?;
        stop_to_js(&ctx, &info)
    });

    let h = host.clone();
    def!("detach", move |ctx: Ctx<'js>| -> R<'js> {
        let info = h
            .session
            .borrow_mut()
            .detach()
            .map_err(|e| throw(&ctx, e))?;
        stop_to_js(&ctx, &info)
    });

    let h = host.clone();
    def!("kill", move |ctx: Ctx<'js>| -> R<'js> {
        let info = h.session.borrow_mut().kill().map_err(|e| throw(&ctx, e))?;
        stop_to_js(&ctx, &info)
    });

    let h = host.clone();
    def!("run_begin", move |ctx: Ctx<'js>,
                            timeout: Opt<Value<'js>>|
          -> rquickjs::Result<()> {
        if crate::session::signal_pending() {
            return Err(throw(&ctx, "interrupted by a signal to scry"));
        }
        let mut session = h.session.borrow_mut();
        let limit = match timeout.0.filter(|v| !v.is_undefined() && !v.is_null()) {
            Some(v) => {
                let secs = v
                    .as_number()
                    .filter(|s| *s > 0.0 && s.is_finite())
                    .ok_or_else(|| {
                        throw(
                            &ctx,
                            format!(
                                "timeout must be a positive number of seconds, got {}",
                                values::describe(&ctx, &v)
                            ),
                        )
                    })?;
                Duration::from_secs_f64(secs.min(86_400.0))
            }
            None => session.config.timeout,
        };
        let deadline = Instant::now() + limit;
        session.arm(deadline).map_err(|e| throw(&ctx, e))?;
        h.run_deadline.set(Some(deadline));
        Ok(())
    });

    let h = host.clone();
    def!("run_end", move || {
        h.session.borrow_mut().disarm();
        h.run_deadline.set(None);
    });

    let h = host.clone();
    def!("step_one", move |ctx: Ctx<'js>| -> R<'js> {
        run_one(&ctx, &h, Session::step)
    });

    let h = host.clone();
    def!("cont_one", move |ctx: Ctx<'js>| -> R<'js> {
        run_one(&ctx, &h, Session::cont)
    });

    let h = host.clone();
    def!(
        "last_stop_line",
        move |ctx: Ctx<'js>| -> rquickjs::Result<String> {
            let mut info = h
                .last_stop
                .borrow()
                .clone()
                .ok_or_else(|| throw(&ctx, "internal: no stop to describe"))?;
            h.session.borrow_mut().describe(&mut info);
            Ok(info.line())
        }
    );

    let h = host.clone();
    def!("where_line", move |ctx: Ctx<'js>| -> R<'js> {
        let mut session = h.session.borrow_mut();
        let pc = session.pc().map_err(|e| throw(&ctx, e))?;
        match session.source_position(pc) {
            Some(pos) => pos.into_js(&ctx),
            None => Ok(Value::new_null(ctx.clone())),
        }
    });

    let h = host.clone();
    def!("temp_site", move |ctx: Ctx<'js>,
                            at: Value<'js>,
                            on: bool|
          -> rquickjs::Result<()> {
        let addr = address(&ctx, &h, &at)?;
        let result = h.session.borrow_mut().temp_site(addr, on);
        // Taking the site out of a process that ended meanwhile is nothing to report.
        if on {
            result.map_err(|e| throw(&ctx, e))
        } else {
            Ok(())
        }
    });

    // The latest stop, described as the end of a finish() (reason `finish`, and the value the
    // function returned in rax) or of a next() (reason `step`): their last leg may have
    // ended on scry's own breakpoint at a return address, which is no user's breakpoint.
    let h = host.clone();
    def!("stop_as", move |ctx: Ctx<'js>, reason: String| -> R<'js> {
        let mut info = h
            .last_stop
            .borrow()
            .clone()
            .ok_or_else(|| throw(&ctx, "internal: no stop"))?;
        let mut session = h.session.borrow_mut();
        session.describe(&mut info);
        info.breakpoint_id = None;
        info.breakpoint_name = None;
        if reason == "finish" {
            info.reason = Some(crate::session::Reason::Finish);
            info.returned = session.regs().ok().map(|r| r.rax);
        } else {
            info.reason = Some(crate::session::Reason::Step);
        }
        drop(session);
        let v = stop_to_js(&ctx, &info)?;
        if let (Some(o), Some(rax)) = (v.as_object(), info.returned) {
            o.set("returned", u64_to_js(&ctx, rax)?)?;
        }
        Ok(v)
    });

    // The instruction that made the latest watchpoint stop's access.
    let h = host.clone();
    def!("watch_culprit", move |ctx: Ctx<'js>| -> R<'js> {
        let mut last = h.last_stop.borrow_mut();
        let info = last
            .as_mut()
            .ok_or_else(|| throw(&ctx, "internal: no stop"))?;
        h.session.borrow_mut().find_culprit(info);
        let o = Object::new(ctx.clone())?;
        if let Some(w) = &info.watch {
            if let Some(at) = w.insn_addr {
                o.set("insn_addr", u64_to_js(&ctx, at)?)?;
            }
            if let Some(text) = &w.insn_text {
                o.set("insn", text.as_str())?;
            }
        }
        Ok(o.into_value())
    });

    // The described form (symbol, line) of the latest stop of a run, for the one that is
    // returned to the user. `done`/`asked`: the step counts of a step(n) batch.
    let h = host.clone();
    def!("last_stop", move |ctx: Ctx<'js>,
                            done: Opt<f64>,
                            asked: Opt<f64>|
          -> R<'js> {
        let mut info = h
            .last_stop
            .borrow()
            .clone()
            .ok_or_else(|| throw(&ctx, "internal: no stop to describe"))?;
        h.session.borrow_mut().describe(&mut info);
        if let (Some(done), Some(asked)) = (done.0, asked.0) {
            info.steps = Some((done as u64, asked as u64));
        }
        stop_to_js(&ctx, &info)
    });

    // step(n) with nobody listening: the whole batch without entering JS.
    let h = host.clone();
    def!("step_n", move |ctx: Ctx<'js>, count: f64| -> R<'js> {
        let deadline = h
            .run_deadline
            .get()
            .ok_or_else(|| throw(&ctx, "internal: no run in progress"))?;
        let count = count as u64;
        let started = Instant::now();
        let mut session = h.session.borrow_mut();
        let mut done = 0u64;
        let mut last = None;
        while done < count {
            match session.step_raw(deadline) {
                Ok(stop) => {
                    if matches!(stop, Stop::Step { .. } | Stop::Breakpoint { .. }) {
                        done += 1;
                    }
                    last = Some(stop);
                    if !matches!(stop, Stop::Step { .. }) {
                        break;
                    }
                }
                Err(e) => {
                    drop(session);
                    finish_run(&h, started);
                    return Err(throw(&ctx, e));
                }
            }
        }
        let info = match last {
            Some(stop) => session.finish_stop(stop),
            None => session.pc().map(|pc| StopInfo {
                pc: Some(pc),
                ..Default::default()
            }),
        };
        drop(session);
        finish_run(&h, started);
        let mut info = info.map_err(|e| throw(&ctx, e))?;
        info.steps = Some((done, count));
        if last.is_none() {
            info.symbol = h.session.borrow_mut().symbolize(info.pc.unwrap_or(0));
        }
        stop_to_js(&ctx, &info)
    });

    let h = host.clone();
    def!("bp_set", move |ctx: Ctx<'js>,
                         at: Value<'js>,
                         name: Opt<Value<'js>>|
          -> R<'js> {
        let spec = match at.as_string() {
            Some(s) => s.to_string()?,
            None => values::to_address(&ctx, &at)
                .map(|a| format!("{a:#x}"))
                .unwrap_or_default(),
        };
        let addr = address(&ctx, &h, &at)?;
        let name = match name.0.filter(|v| !v.is_undefined() && !v.is_null()) {
            Some(v) => Some(
                v.as_string()
                    .ok_or_else(|| throw(&ctx, "breakpoint name must be a string"))?
                    .to_string()?,
            ),
            None => None,
        };
        let id = h
            .session
            .borrow_mut()
            .breakpoint_set(addr, name, spec)
            .map_err(|e| throw(&ctx, e))?;
        Ok(Value::new_number(ctx.clone(), id as f64))
    });

    let h = host.clone();
    def!("bp_remove", move |ctx: Ctx<'js>,
                            which: Value<'js>|
          -> rquickjs::Result<bool> {
        let r = if let Some(s) = which.as_string() {
            let name = s.to_string()?;
            h.session
                .borrow_mut()
                .breakpoint_remove(BreakpointRef::Name(&name))
                .map_err(|e| throw(&ctx, e))?
        } else {
            let id = values::to_count(&ctx, &which, u32::MAX as u64, "breakpoint.remove(id)")
                .map_err(|e| throw(&ctx, e))?;
            h.session
                .borrow_mut()
                .breakpoint_remove(BreakpointRef::Id(id as u32))
                .map_err(|e| throw(&ctx, e))?
        };
        Ok(r.id > 0)
    });

    let h = host.clone();
    def!("bp_list", move |ctx: Ctx<'js>| -> R<'js> {
        let mut session = h.session.borrow_mut();
        let list: Vec<_> = session.breakpoints().to_vec();
        let rows = Array::new(ctx.clone())?;
        for (i, bp) in list.iter().enumerate() {
            let o = Object::new(ctx.clone())?;
            o.set("id", bp.id)?;
            o.set("addr", u64_to_js(&ctx, bp.addr)?)?;
            o.set("name", bp.name.as_deref())?;
            o.set("symbol", session.symbolize(bp.addr))?;
            o.set("hits", bp.hits as f64)?;
            if !bp.armed {
                o.set("pending", true)?;
            }
            rows.set(i, o)?;
        }
        Ok(rows.into_value())
    });

    let h = host.clone();
    def!("wp_set", move |ctx: Ctx<'js>,
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
                    values::to_count(&ctx, &v, 8, "watchpoint len").map_err(|e| throw(&ctx, e))?,
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
                    .and_then(|s| h.session.borrow().symbol_size(&s));
                match sized {
                    Some(size) if matches!(size, 1 | 2 | 4 | 8) && addr.is_multiple_of(size) => {
                        size
                    }
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
            .session
            .borrow_mut()
            .watchpoint_set(addr, kind, len, name, spec)
            .map_err(|e| throw(&ctx, e))?;
        Ok(Value::new_number(ctx.clone(), id as f64))
    });

    let h = host.clone();
    def!("wp_remove", move |ctx: Ctx<'js>,
                            which: Value<'js>|
          -> rquickjs::Result<()> {
        if let Some(s) = which.as_string() {
            let name = s.to_string()?;
            h.session
                .borrow_mut()
                .watchpoint_remove(BreakpointRef::Name(&name))
                .map_err(|e| throw(&ctx, e))
        } else {
            let id = values::to_count(&ctx, &which, u32::MAX as u64, "watchpoint.remove(id)")
                .map_err(|e| throw(&ctx, e))?;
            h.session
                .borrow_mut()
                .watchpoint_remove(BreakpointRef::Id(id as u32))
                .map_err(|e| throw(&ctx, e))
        }
    });

    let h = host.clone();
    def!("wp_list", move |ctx: Ctx<'js>| -> R<'js> {
        let list: Vec<_> = h.session.borrow().watchpoints().to_vec();
        let rows = Array::new(ctx.clone())?;
        for (i, w) in list.iter().enumerate() {
            let o = Object::new(ctx.clone())?;
            o.set("id", w.id)?;
            o.set("addr", u64_to_js(&ctx, w.addr)?)?;
            o.set("len", w.len as f64)?;
            o.set("access", w.kind.as_str())?;
            o.set("name", w.name.as_deref())?;
            o.set("hits", w.hits as f64)?;
            if !w.armed {
                o.set("pending", true)?;
            }
            rows.set(i, o)?;
        }
        Ok(rows.into_value())
    });

    let h = host.clone();
    def!("threads", move |ctx: Ctx<'js>| -> R<'js> {
        let list = h
            .session
            .borrow_mut()
            .thread_list()
            .map_err(|e| throw(&ctx, e))?;
        let rows = Array::new(ctx.clone())?;
        for (i, t) in list.iter().enumerate() {
            let o = Object::new(ctx.clone())?;
            o.set("tid", t.tid)?;
            o.set("name", t.name.as_str())?;
            o.set("state", t.state.as_str())?;
            o.set("pc", u64_to_js(&ctx, t.pc)?)?;
            o.set("symbol", t.symbol.clone())?;
            if t.selected {
                o.set("selected", true)?;
            }
            rows.set(i, o)?;
        }
        Ok(rows.into_value())
    });

    let h = host.clone();
    def!("thread_select", move |ctx: Ctx<'js>,
                                tid: Value<'js>|
          -> rquickjs::Result<()> {
        let tid = values::to_count(&ctx, &tid, i32::MAX as u64, "thread.select(tid)")
            .map_err(|e| throw(&ctx, e))?;
        h.session
            .borrow_mut()
            .select_thread(tid as i32)
            .map_err(|e| throw(&ctx, e))
    });

    let h = host.clone();
    def!("thread_events", move |on: bool| {
        h.session.borrow_mut().set_thread_events(on);
    });

    let h = host.clone();
    def!("unwind", move |ctx: Ctx<'js>,
                         max: Opt<Value<'js>>,
                         all: Opt<bool>|
          -> R<'js> {
        let max = match max.0.filter(|v| !v.is_undefined() && !v.is_null()) {
            Some(v) => values::to_count(&ctx, &v, 100_000, "unwind(max)")
                .map_err(|e| throw(&ctx, e))? as usize,
            None => 64,
        };
        let past_main = all.0.unwrap_or(false);
        let (frames, stopped) = h
            .session
            .borrow_mut()
            .unwind(max, past_main)
            .map_err(|e| throw(&ctx, e))?;
        let rows = Array::new(ctx.clone())?;
        let mut text = String::new();
        for (i, f) in frames.iter().enumerate() {
            let o = Object::new(ctx.clone())?;
            o.set("frame", f.frame as f64)?;
            o.set("pc", u64_to_js(&ctx, f.pc)?)?;
            o.set("sp", u64_to_js(&ctx, f.sp)?)?;
            o.set("symbol", f.symbol.clone())?;
            o.set("file", f.file.clone())?;
            o.set("line", f.line)?;
            if f.inlined {
                o.set("inlined", true)?;
            }
            let regs = Object::new(ctx.clone())?;
            for (name, value) in &f.regs {
                regs.set(*name, u64_to_js(&ctx, *value)?)?;
            }
            o.set("registers", regs)?;
            o.set("source", f.source)?;
            rows.set(i, o)?;
            // A frame interrupted by a signal sits above the handler's return trampoline.
            let trampoline = frames
                .get(i + 1)
                .is_some_and(|next| next.source == "signal" && next.pc != f.pc);
            text.push_str(&frame_line(f, trampoline));
            text.push('\n');
        }
        if let Some(why) = stopped {
            text.push_str(&format!("(unwinding stopped: {why})\n"));
        }
        text.pop();
        let o = Object::new(ctx.clone())?;
        o.set("rows", rows)?;
        o.set("text", text)?;
        Ok(o.into_value())
    });

    let h = host.clone();
    def!("source", move |ctx: Ctx<'js>,
                         context: Opt<Value<'js>>|
          -> rquickjs::Result<String> {
        let context = match context.0.filter(|v| !v.is_undefined() && !v.is_null()) {
            Some(v) => {
                values::to_count(&ctx, &v, 1000, "source(n)").map_err(|e| throw(&ctx, e))? as u32
            }
            None => 5,
        };
        let view = h
            .session
            .borrow_mut()
            .source_lines(context)
            .map_err(|e| throw(&ctx, e))?;
        let (path, line, rows) = (view.path, view.line, view.rows);
        let mut out = format!("{path}:{line}");
        for (n, text) in rows {
            let mark = if n == line { '>' } else { ' ' };
            out.push_str(&format!("\n{mark}{n}\t{text}"));
        }
        Ok(out)
    });

    let h = host.clone();
    def!("stack", move |ctx: Ctx<'js>| -> R<'js> {
        let b = h.session.borrow_mut().stack().map_err(|e| throw(&ctx, e))?;
        let o = Object::new(ctx.clone())?;
        o.set("top", u64_to_js(&ctx, b.top)?)?;
        o.set("usable_base", u64_to_js(&ctx, b.usable_base)?)?;
        o.set("guard_size", u64_to_js(&ctx, b.guard_size)?)?;
        o.set("kind", b.kind)?;
        Ok(o.into_value())
    });

    let h = host.clone();
    def!("tls", move |ctx: Ctx<'js>, name: String| -> R<'js> {
        let (addr, size) = h
            .session
            .borrow_mut()
            .thread_local(&name)
            .map_err(|e| throw(&ctx, e))?;
        let o = Object::new(ctx.clone())?;
        o.set("addr", u64_to_js(&ctx, addr)?)?;
        o.set("size", size as f64)?;
        Ok(o.into_value())
    });

    let h = host.clone();
    def!("output", move || -> String {
        h.session.borrow_mut().output()
    });

    let h = host.clone();
    def!("status", move |ctx: Ctx<'js>| -> R<'js> {
        let session = h.session.borrow();
        let o = Object::new(ctx.clone())?;
        o.set("live", session.is_live())?;
        o.set("pid", session.pid())?;
        o.set("program", session.program())?;
        Ok(o.into_value())
    });

    let h = host.clone();
    def!("config_get", move |ctx: Ctx<'js>, key: String| -> R<'js> {
        let s = h.session.borrow();
        let c = &s.config;
        Ok(match key.as_str() {
            "timeout" => Value::new_number(ctx.clone(), c.timeout.as_secs_f64()),
            "script_timeout" => Value::new_number(ctx.clone(), c.script_timeout.as_secs_f64()),
            "output_limit" => Value::new_number(ctx.clone(), c.output_limit as f64),
            "aslr" => Value::new_bool(ctx.clone(), c.aslr),
            "read_only" => Value::new_bool(ctx.clone(), c.read_only),
            _ => return Err(throw(&ctx, format!("no setting '{key}'"))),
        })
    });

    let h = host.clone();
    def!("config_set", move |ctx: Ctx<'js>,
                             key: String,
                             v: Value<'js>|
          -> rquickjs::Result<()> {
        let mut s = h.session.borrow_mut();
        let positive = |what: &str| -> rquickjs::Result<f64> {
            v.as_number()
                .filter(|n| *n > 0.0 && n.is_finite())
                .ok_or_else(|| throw(&ctx, format!("config.{what} must be a positive number")))
        };
        match key.as_str() {
            "timeout" => {
                s.config.timeout = Duration::from_secs_f64(positive("timeout")?.min(86_400.0))
            }
            "script_timeout" => {
                s.config.script_timeout =
                    Duration::from_secs_f64(positive("script_timeout")?.min(86_400.0))
            }
            "output_limit" => {
                s.config.output_limit = positive("output_limit")?.clamp(256.0, 1e9) as usize
            }
            "aslr" => {
                s.config.aslr = v
                    .as_bool()
                    .ok_or_else(|| throw(&ctx, "config.aslr must be true or false"))?
            }
            "read_only" => {
                return Err(throw(
                    &ctx,
                    "config.read_only is set on the command line (--read-only)",
                ))
            }
            _ => return Err(throw(&ctx, format!("no setting '{key}'"))),
        }
        Ok(())
    });

    let h = host.clone();
    def!("signal_mode", move |ctx: Ctx<'js>,
                              sig: String,
                              mode: String|
          -> rquickjs::Result<()> {
        let num = signals::signal_number(&sig)
            .ok_or_else(|| throw(&ctx, format!("unknown signal '{sig}'")))?;
        let mode = match mode.as_str() {
            "stop" => SignalMode::Stop,
            "pass" => SignalMode::Pass,
            other => {
                return Err(throw(
                    &ctx,
                    format!("signal mode must be 'stop' or 'pass', got '{other}'"),
                ))
            }
        };
        h.session
            .borrow_mut()
            .signal_mode(num, mode)
            .map_err(|e| throw(&ctx, e))
    });

    let h = host.clone();
    def!("tid", move |ctx: Ctx<'js>| -> rquickjs::Result<i32> {
        h.session
            .borrow_mut()
            .selected_tid()
            .map_err(|e| throw(&ctx, e))
    });

    let h = host.clone();
    def!(
        "suppress_signal",
        move |ctx: Ctx<'js>| -> rquickjs::Result<()> {
            h.session
                .borrow_mut()
                .suppress_signal()
                .map_err(|e| throw(&ctx, e))
        }
    );

    def!("global_names", move || -> Vec<&'static str> {
        api::global_names()
    });

    def!(
        "help",
        move |topic: Opt<Value<'js>>| -> rquickjs::Result<String> {
            let topic: Option<String> = match topic.0.filter(|v| !v.is_undefined()) {
                Some(v) => Some(v.get()?),
                None => None,
            };
            Ok(api::help(topic.as_deref()))
        }
    );

    Ok(n)
}

/// `#1 0x401190 main+0x20 loop.c:15`, with `[inlined]` before an inlined call's name.
fn frame_line(f: &crate::session::FrameRow, trampoline: bool) -> String {
    let mut line = format!("#{} {:#x}", f.frame, f.pc);
    if f.inlined {
        line.push_str(" [inlined]");
    }
    line.push(' ');
    match (&f.symbol, trampoline) {
        (None, true) => line.push_str("<signal handler called>"),
        (Some(s), _) => line.push_str(s),
        (None, false) => line.push_str("??"),
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

/// Target strings are bytes: valid UTF-8 passes through, anything else shows as `\xNN`.
fn escape_invalid_utf8(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                let n = e.error_len().unwrap_or(bad.len()).max(1);
                for b in &bad[..n] {
                    out.push_str(&format!("\\x{b:02x}"));
                }
                rest = &bad[n..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::escape_invalid_utf8;

    #[test]
    fn invalid_utf8_is_escaped() {
        assert_eq!(escape_invalid_utf8(b"ok\xff\xfeend"), "ok\\xff\\xfeend");
        assert_eq!(escape_invalid_utf8("é".as_bytes()), "é");
    }
}

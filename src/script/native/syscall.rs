//! JS: `syscall.catch`, `syscall.uncatch`, `syscall.list`, and the fields of a `syscall` event.

use super::*;
use crate::session::syscalls::{Phase, SyscallReport};
use crate::session::vocabulary::{CatchMode, SyscallArg as ArgValue};

/// The natives this file defines, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    t.def("sc_catch", catch)?; // syscall.catch(what, {phase})
    t.def("sc_uncatch", uncatch)?; // syscall.uncatch(id)
    t.def("sc_list", list)?; // syscall.list()
    Ok(())
}

fn catch<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    what: Value<'js>,
    phase: Opt<Value<'js>>,
) -> rquickjs::Result<u32> {
    let words = words(&ctx, &what)?;
    let phase = match phase.0.filter(|v| !v.is_undefined()) {
        None => Phase::Exit,
        Some(v) => {
            let text = v.as_string().map(|s| s.to_string()).transpose()?;
            text.as_deref().and_then(Phase::parse).ok_or_else(|| {
                    throw(
                        &ctx,
                        format!(
                            "syscall.catch(what, {{phase}}): phase is 'exit' (default), 'entry' or 'both', got {}",
                            values::describe(&ctx, &v)
                        ),
                    )
                })?
        }
    };
    h.session_mut(&ctx)?
        .syscall_catch(&words, phase)
        .or_throw(&ctx)
}

fn uncatch<'js>(h: &Host, ctx: Ctx<'js>, id: Value<'js>) -> rquickjs::Result<()> {
    let id = values::to_count(&ctx, &id, u32::MAX as u64, "syscall.uncatch(id)").or_throw(&ctx)?;
    h.session_mut(&ctx)?
        .syscall_uncatch(id as u32)
        .or_throw(&ctx)
}

fn list<'js>(h: &Host, ctx: Ctx<'js>) -> R<'js> {
    let (list, mode) = {
        let session = h.session_ref(&ctx)?;
        (session.syscall_catches().to_vec(), session.syscall_mode())
    };
    let rows = Array::new(ctx.clone())?;
    let mut text = String::from("id\tsyscalls\tphase\thits");
    for c in &list {
        let o = Object::new(ctx.clone())?;
        o.put("id", c.id)?;
        o.put("syscalls", c.spec.as_str())?;
        o.put("phase", c.phase.as_str())?;
        o.put("hits", c.hits as f64)?;
        rows.push(o)?;
        text.push_str(&format!(
            "\n{}\t{}\t{}\t{}",
            c.id,
            c.spec,
            c.phase.as_str(),
            c.hits
        ));
    }
    text.push_str(&format!("\nmode: {}", mode_text(mode)));
    let res = Object::new(ctx.clone())?;
    res.put("rows", rows)?;
    res.put("text", text)?;
    Ok(res.into_value())
}

/// Most words one `syscall.catch([...])` takes (there are fewer than 400 system calls).
const MAX_WORDS: usize = 1024;

fn arg_value<'js>(ctx: &Ctx<'js>, v: &ArgValue) -> R<'js> {
    Ok(match v {
        ArgValue::Int(i) => values::i64_to_js(ctx, *i)?,
        ArgValue::UInt(u) | ArgValue::Addr(u) => u64_to_js(ctx, *u)?,
        ArgValue::Sym(s) | ArgValue::Text(s) => s.as_str().into_js(ctx)?,
        ArgValue::List(items) => {
            let a = Array::new(ctx.clone())?;
            for s in items {
                a.push(s.as_str())?;
            }
            a.into_value()
        }
    })
}

/// A syscall stop's own fields: `phase nr name args call ret errno catch_id` and each
/// decoded argument by its name (`path`, `flags`, `fd` ...).
pub(super) fn put_fields<'js>(
    ctx: &Ctx<'js>,
    o: &Object<'js>,
    sys: &SyscallReport,
) -> rquickjs::Result<()> {
    o.put("phase", if sys.exit { "exit" } else { "entry" })?;
    o.put("nr", sys.call.nr as f64)?;
    o.put("name", sys.call.name.as_str())?;
    let raw = Array::new(ctx.clone())?;
    for v in sys.raw {
        raw.push(u64_to_js(ctx, v)?)?;
    }
    o.put("args", raw)?;
    // At exit the call with its result, as the stop line shows it: `openat(...) = -1 ENOENT`.
    o.put("call", sys.call.text())?;
    if let Some(ret) = sys.call.ret {
        o.put("ret", values::i64_to_js(ctx, ret)?)?;
        // null on success: a result is known, and it is no error (undefined at entry).
        match sys.call.errno() {
            Some(errno) => o.put("errno", errno)?,
            None => o.put("errno", Value::new_null(ctx.clone()))?,
        }
    }
    if let Some(id) = sys.catch_id {
        o.put("catch_id", id)?;
    }
    for a in &sys.call.args {
        o.put(a.name, arg_value(ctx, &a.value)?)?;
    }
    Ok(())
}

/// The words of `syscall.catch(what)`: a name, a number, or an array of them.
fn words<'js>(ctx: &Ctx<'js>, what: &Value<'js>) -> rquickjs::Result<Vec<String>> {
    let word = |v: &Value<'js>| -> rquickjs::Result<String> {
        if let Some(s) = v.as_string() {
            return s.to_string();
        }
        if v.is_number() || v.is_big_int() {
            let n =
                values::to_count(ctx, v, u32::MAX as u64, "a system call number").or_throw(ctx)?;
            return Ok(n.to_string());
        }
        Err(throw(
            ctx,
            format!(
                "syscall.catch(what): a system call is named by a string or a number, got {}",
                values::describe(ctx, v)
            ),
        ))
    };
    match what.as_array() {
        Some(list) => {
            if list.len() > MAX_WORDS {
                return Err(throw(
                    ctx,
                    format!("syscall.catch([...]): at most {MAX_WORDS} names"),
                ));
            }
            list.iter::<Value>().map(|v| word(&v?)).collect()
        }
        None => Ok(vec![word(what)?]),
    }
}

fn mode_text(mode: Option<(CatchMode, Option<String>)>) -> String {
    match mode {
        None => "no process".into(),
        Some((CatchMode::Off, _)) => "nothing caught".into(),
        Some((CatchMode::Seccomp, why)) => format!(
            "seccomp: scry's filter stops only the caught calls{}",
            why.map(|w| format!(" ({w})")).unwrap_or_default()
        ),
        Some((CatchMode::Ptrace, why)) => format!(
            "ptrace: every system call stops twice ({})",
            why.unwrap_or_else(|| "attached process".into())
        ),
    }
}

//! JS: `spawn`, `attach`, `core`, `remote`, `gcore`, `detach`, `kill`, `output`, `status`,
//! `handle_signal`, `process.list`, `process.select`.

use super::events::stop_to_js;
use super::*;

/// The natives this file defines, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    t.def("spawn", spawn)?; // spawn(path, ...args, {env, cwd, stdin, stop})
    t.def("respawn", respawn)?; // spawn(): the latest spawn again
    t.def("attach", attach)?; // attach(pid)
    t.def("core_open", core_open)?; // core(path, program)
    t.def("remote_open", remote_open)?; // remote(addr, {program})
    t.def("gcore", gcore)?; // gcore(path, {overwrite, timeout})
    t.def("detach", detach)?; // detach()
    t.def("kill", kill)?; // kill()
    t.def("output", output)?; // output()
    t.def("status", status)?; // status()
    t.def("signal_mode", signal_mode)?; // handle_signal(sig, 'stop' | 'pass')
    t.def("processes", list)?; // process.list()
    t.def("process_select", select)?; // process.select(pid)
    Ok(())
}

fn spawn<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    program: String,
    args: Vec<String>,
    opts: Opt<Value<'js>>,
) -> R<'js> {
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
                        <rquickjs::convert::Coerced<String> as rquickjs::FromJs>::from_js(&ctx, v)?
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
        if let Ok(stop) = o.get::<_, String>("stop") {
            spec.at_loader = Some(match stop.as_str() {
                "loader" => true,
                "entry" => false,
                other => {
                    return Err(throw(
                        &ctx,
                        format!("spawn(..., {{stop}}): 'entry' or 'loader', not '{other}'"),
                    ))
                }
            });
        }
    }
    let info = h.session_mut(&ctx)?.spawn(spec).or_throw(&ctx)?;
    *h.last_stop.borrow_mut() = Some(info.clone());
    stop_to_js(&ctx, h, &info)
}

fn respawn<'js>(h: &Host, ctx: Ctx<'js>) -> R<'js> {
    let info = h.session_mut(&ctx)?.spawn_again().or_throw(&ctx)?;
    *h.last_stop.borrow_mut() = Some(info.clone());
    stop_to_js(&ctx, h, &info)
}

fn attach<'js>(h: &Host, ctx: Ctx<'js>, pid: Value<'js>) -> R<'js> {
    let pid = values::to_count(&ctx, &pid, i32::MAX as u64, "attach(pid)").or_throw(&ctx)?;
    let info = h.session_mut(&ctx)?.attach(pid as i32).or_throw(&ctx)?;
    *h.last_stop.borrow_mut() = Some(info.clone());
    stop_to_js(&ctx, h, &info)
}

fn core_open<'js>(h: &Host, ctx: Ctx<'js>, path: String, program: Opt<String>) -> R<'js> {
    let info = h
        .session_mut(&ctx)?
        .open_core(std::path::Path::new(&path), program.0.as_deref())
        .or_throw(&ctx)?;
    *h.last_stop.borrow_mut() = Some(info.clone());
    stop_to_js(&ctx, h, &info)
}

fn remote_open<'js>(h: &Host, ctx: Ctx<'js>, addr: String, program: Opt<String>) -> R<'js> {
    let info = {
        let mut session = h.session_mut(&ctx)?;
        crate::remote::open(
            &mut session,
            &addr,
            program.0.as_deref(),
            &Default::default(),
        )
        .or_throw(&ctx)?
    };
    *h.last_stop.borrow_mut() = Some(info.clone());
    stop_to_js(&ctx, h, &info)
}

fn gcore<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    path: Opt<Value<'js>>,
    overwrite: Opt<Value<'js>>,
    timeout: Opt<Value<'js>>,
) -> R<'js> {
    let given = |v: Opt<Value<'js>>| v.0.filter(|v| !v.is_undefined() && !v.is_null());
    let started = Instant::now();
    let mut session = h.session_mut(&ctx)?;
    let limit = timeout_given(&ctx, timeout.0, "gcore: ")?.unwrap_or(session.config.timeout);
    let opts = crate::session::GcoreOptions {
        overwrite: given(overwrite).and_then(|v| v.as_bool()).unwrap_or(false),
        deadline: started + limit,
    };
    let path: Option<String> = given(path).and_then(|v| v.as_string()?.to_string().ok());
    let written = session.gcore(path.as_deref().map(std::path::Path::new), opts);
    drop(session);
    // Writing a large process takes a while; it is not the script's time.
    finish_run(h, started);
    let w = written.or_throw(&ctx)?;
    let o = Object::new(ctx.clone())?;
    o.put("path", w.path.display().to_string())?;
    o.put("size", w.size as f64)?;
    o.put("threads", w.threads as f64)?;
    if !w.skipped.is_empty() {
        o.put("skipped_threads", w.skipped)?;
    }
    if w.short > 0 {
        o.put("unreadable_mappings", w.short as f64)?;
    }
    Ok(o.into_value())
}

fn detach<'js>(h: &Host, ctx: Ctx<'js>) -> R<'js> {
    let info = h.session_mut(&ctx)?.detach().or_throw(&ctx)?;
    stop_to_js(&ctx, h, &info)
}

fn kill<'js>(h: &Host, ctx: Ctx<'js>) -> R<'js> {
    let info = h.session_mut(&ctx)?.kill().or_throw(&ctx)?;
    stop_to_js(&ctx, h, &info)
}

fn output<'js>(h: &Host, ctx: Ctx<'js>) -> rquickjs::Result<String> {
    Ok(h.session_mut(&ctx)?.output())
}

fn status<'js>(h: &Host, ctx: Ctx<'js>) -> R<'js> {
    let stop = h.last_stop.borrow().clone();
    let (live, last, core, problems, stop) = {
        let mut session = h.session_mut(&ctx)?;
        let last = session
            .last_process()
            .map(|(pid, program, ended)| (pid, program.to_string(), ended.map(|e| e.into_owned())));
        // The last stop's line, while there is a process (or core) it describes.
        let stop = stop
            .filter(|_| session.is_live() || session.core_name().is_some())
            .map(|mut s| {
                session.describe(&mut s);
                s.line()
            });
        (
            session.is_live(),
            last,
            session.core_name(),
            if session.core_name().is_some() {
                session.core_problems()
            } else {
                session.target_problems()
            },
            stop,
        )
    };
    let o = Object::new(ctx.clone())?;
    o.put("live", live)?;
    if let Some(core) = core {
        o.put("core", core)?;
        o.put("problems", problems)?;
    } else if !problems.is_empty() {
        o.put("problems", problems)?;
    }
    match last {
        Some((pid, program, ended)) => {
            o.put("pid", pid)?;
            o.put("program", program)?;
            if let Some(how) = ended {
                o.put("ended", how)?;
            }
        }
        None => o.put("note", "no process yet: spawn(path) or attach(pid)")?,
    }
    if let Some(stop) = stop {
        o.put("stop", stop)?;
    }
    Ok(o.into_value())
}

fn signal_mode<'js>(h: &Host, ctx: Ctx<'js>, sig: String, mode: String) -> rquickjs::Result<()> {
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
    h.session_mut(&ctx)?.signal_mode(num, mode).or_throw(&ctx)
}

fn list<'js>(h: &Host, ctx: Ctx<'js>) -> R<'js> {
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
}

fn select<'js>(h: &Host, ctx: Ctx<'js>, pid: Value<'js>) -> rquickjs::Result<i32> {
    let pid =
        values::to_count(&ctx, &pid, i32::MAX as u64, "process.select(pid)").or_throw(&ctx)?;
    h.session_mut(&ctx)?
        .select_process(pid as i32)
        .or_throw(&ctx)?;
    Ok(pid as i32)
}

fn finish_run(host: &Host, started: Instant) {
    host.credit(started.elapsed());
}

//! Process control and runs: spawn/attach/detach/kill, steps and continues, stops, output, settings.

use super::*;
use crate::session::MAX_DEADLINE;

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
    if let Some(tid) = info.tid {
        o.put("tid", tid)?;
    }
    if let Some(id) = info.breakpoint_id {
        o.put("breakpoint_id", id)?;
    }
    if let Some(name) = &info.breakpoint_name {
        o.put("breakpoint_name", name.as_str())?;
    }
    if !info.breakpoint_ids.is_empty() {
        let ids = Array::new(ctx.clone())?;
        for id in &info.breakpoint_ids {
            ids.push(*id)?;
        }
        o.put("breakpoint_ids", ids)?;
    }
    if let Some(sig) = info.signal {
        o.put("signal", signals::signal_name(sig))?;
    }
    if let Some(addr) = info.fault_addr {
        o.put("fault_addr", u64_to_js(ctx, addr)?)?;
    }
    if let Some(code) = info.exit_code {
        o.put("code", code)?;
    }
    if let Some(src) = &info.source {
        o.put("source", src.as_str())?;
    }
    if let Some(p) = &info.program {
        o.put("program", p.as_str())?;
    }
    if let Some(l) = &info.library {
        o.put("kind", if l.loaded { "load" } else { "unload" })?;
        o.put("path", l.path.as_str())?;
        o.put("base", u64_to_js(ctx, l.base)?)?;
    }
    if let Some(w) = &info.watch {
        o.put("watchpoint_id", w.id)?;
        if let Some(name) = &w.name {
            o.put("watchpoint_name", name.as_str())?;
        }
        o.put("access_type", if w.is_write { "write" } else { "read" })?;
        o.put("addr", u64_to_js(ctx, w.addr)?)?;
        // Up to 8 bytes a number; a wider watch its bytes as hex (memory order), never a
        // number cut to 64 bits.
        let watched = |bytes: &[u8]| -> R<'js> {
            if bytes.len() <= 8 {
                u64_to_js(ctx, le_value(bytes))
            } else {
                values::to_hex(bytes).into_js(ctx)
            }
        };
        if w.is_write {
            o.put("old", watched(&w.old)?)?;
        }
        o.put("new", watched(&w.new)?)?;
        if w.racy {
            o.put("racy", true)?;
        }
        if let Some(at) = w.insn_addr {
            o.put("insn_addr", u64_to_js(ctx, at)?)?;
        }
        if let Some(text) = &w.insn_text {
            o.put("insn", text.as_str())?;
        }
    }
    if let Some(sys) = &info.syscall {
        super::syscalls::put_fields(ctx, &o, sys)?;
    }
    Ok(o.into_value())
}

/// A stop as a listener sees it: the fields, no symbol and no line (made on demand).
pub(super) fn event_to_js<'js>(ctx: &Ctx<'js>, info: &StopInfo) -> R<'js> {
    stop_to_js_fields(ctx, info)
}

fn finish_run(host: &Host, started: Instant) {
    host.credit(started.elapsed());
}

/// A described copy of the latest stop of a run (symbol, source, output count, culprit).
fn described_last_stop(ctx: &Ctx<'_>, host: &Host) -> rquickjs::Result<StopInfo> {
    let last = host.last_stop.borrow().clone();
    let mut info = last.ok_or_else(|| throw(ctx, "internal: no stop to describe"))?;
    host.session_mut(ctx)?.describe(&mut info);
    Ok(info)
}

/// Defines this part's native functions on `n`.
pub(super) fn install<'js>(
    n: &Object<'js>,
    ctx: &Ctx<'js>,
    host: &Rc<Host>,
) -> rquickjs::Result<()> {
    let h = host.clone();
    def!(n, ctx, "spawn", move |ctx: Ctx<'js>,
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
        let info = h
            .session_mut(&ctx)?
            .spawn(spec)
            .map_err(|e| throw(&ctx, e))?;
        *h.last_stop.borrow_mut() = Some(info.clone());
        stop_to_js(&ctx, &h, &info)
    });

    let h = host.clone();
    def!(n, ctx, "attach", move |ctx: Ctx<'js>,
                                 pid: Value<'js>|
          -> R<'js> {
        let pid = values::to_count(&ctx, &pid, i32::MAX as u64, "attach(pid)")
            .map_err(|e| throw(&ctx, e))?;
        let info = h
            .session_mut(&ctx)?
            .attach(pid as i32)
            .map_err(|e| throw(&ctx, e))?;
        *h.last_stop.borrow_mut() = Some(info.clone());
        stop_to_js(&ctx, &h, &info)
    });

    let h = host.clone();
    def!(n, ctx, "core_open", move |ctx: Ctx<'js>,
                                    path: String,
                                    program: Opt<String>|
          -> R<'js> {
        let info = h
            .session_mut(&ctx)?
            .open_core(std::path::Path::new(&path), program.0.as_deref())
            .map_err(|e| throw(&ctx, e))?;
        *h.last_stop.borrow_mut() = Some(info.clone());
        stop_to_js(&ctx, &h, &info)
    });

    let h = host.clone();
    def!(n, ctx, "gcore", move |ctx: Ctx<'js>,
                                path: Opt<Value<'js>>,
                                overwrite: Opt<Value<'js>>,
                                timeout: Opt<Value<'js>>|
          -> R<'js> {
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
        finish_run(&h, started);
        let w = written.map_err(|e| throw(&ctx, e))?;
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
    });

    let h = host.clone();
    def!(n, ctx, "detach", move |ctx: Ctx<'js>| -> R<'js> {
        let info = h.session_mut(&ctx)?.detach().map_err(|e| throw(&ctx, e))?;
        stop_to_js(&ctx, &h, &info)
    });

    let h = host.clone();
    def!(n, ctx, "kill", move |ctx: Ctx<'js>| -> R<'js> {
        let info = h.session_mut(&ctx)?.kill().map_err(|e| throw(&ctx, e))?;
        stop_to_js(&ctx, &h, &info)
    });

    let h = host.clone();
    def!(
        n,
        ctx,
        "last_stop_line",
        move |ctx: Ctx<'js>| -> rquickjs::Result<String> {
            let info = described_last_stop(&ctx, &h)?;
            Ok(info.line())
        }
    );

    // `counter.c:8`: the latest stop's source position, as its line shows it.
    let h = host.clone();
    def!(
        n,
        ctx,
        "last_stop_source",
        move |ctx: Ctx<'js>| -> rquickjs::Result<Option<String>> {
            let info = described_last_stop(&ctx, &h)?;
            Ok(info.source.clone())
        }
    );

    // The instruction that made the latest watchpoint stop's access.
    let h = host.clone();
    def!(n, ctx, "watch_culprit", move |ctx: Ctx<'js>| -> R<'js> {
        // Found once per stop and kept with it; no borrow is held while JS values are made.
        let taken = h.last_stop.borrow_mut().take();
        let mut info = taken.ok_or_else(|| throw(&ctx, "internal: no stop"))?;
        let found = h.session_mut(&ctx).map(|mut s| s.find_culprit(&mut info));
        let watch = info.watch.clone();
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
    });

    let h = host.clone();
    def!(n, ctx, "listening", move |ctx: Ctx<'js>,
                                    breakpoint: bool,
                                    watchpoint: bool,
                                    signal: bool,
                                    library: bool,
                                    syscall: bool|
          -> rquickjs::Result<()> {
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
    });

    let h = host.clone();
    def!(n, ctx, "thread_events", move |ctx: Ctx<'js>,
                                        on: bool|
          -> rquickjs::Result<()> {
        h.session_mut(&ctx)?.set_thread_events(on);
        Ok(())
    });

    let h = host.clone();
    def!(
        n,
        ctx,
        "output",
        move |ctx: Ctx<'js>| -> rquickjs::Result<String> { Ok(h.session_mut(&ctx)?.output()) }
    );

    let h = host.clone();
    def!(n, ctx, "status", move |ctx: Ctx<'js>| -> R<'js> {
        let stop = h.last_stop.borrow().clone();
        let (live, last, core, problems, stop) = {
            let mut session = h.session_mut(&ctx)?;
            let last = session
                .last_process()
                .map(|(pid, program, ended)| (pid, program.to_string(), ended.map(str::to_string)));
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
                session.core_problems(),
                stop,
            )
        };
        let o = Object::new(ctx.clone())?;
        o.put("live", live)?;
        if let Some(core) = core {
            o.put("core", core)?;
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
    });

    let h = host.clone();
    def!(n, ctx, "config_get", move |ctx: Ctx<'js>,
                                     key: String|
          -> R<'js> {
        let s = h.session_ref(&ctx)?;
        let c = &s.config;
        Ok(match key.as_str() {
            "timeout" => Value::new_number(ctx.clone(), c.timeout.as_secs_f64()),
            "script_timeout" => Value::new_number(ctx.clone(), c.script_timeout.as_secs_f64()),
            "output_limit" => Value::new_number(ctx.clone(), c.output_limit as f64),
            "aslr" => Value::new_bool(ctx.clone(), c.aslr),
            "read_only" => Value::new_bool(ctx.clone(), c.read_only),
            "stop_at" => rquickjs::String::from_str(
                ctx.clone(),
                if c.stop_at_loader { "loader" } else { "entry" },
            )?
            .into_value(),
            "follow_fork" => {
                rquickjs::String::from_str(ctx.clone(), c.follow_fork.name())?.into_value()
            }
            "syscall_filter" => {
                rquickjs::String::from_str(ctx.clone(), c.syscall_filter.name())?.into_value()
            }
            "debug_dirs" | "solib_dirs" => {
                let list = if key == "debug_dirs" {
                    &c.debug_dirs
                } else {
                    &c.solib_dirs
                };
                let dirs = Array::new(ctx.clone())?;
                for d in list {
                    dirs.push(d.to_string_lossy().as_ref())?;
                }
                dirs.into_value()
            }
            "sysroot" => match &c.sysroot {
                Some(d) => d.to_string_lossy().as_ref().into_js(&ctx)?,
                None => Value::new_null(ctx.clone()),
            },
            _ => return Err(throw(&ctx, format!("no setting '{key}'"))),
        })
    });

    let h = host.clone();
    def!(n, ctx, "config_set", move |ctx: Ctx<'js>,
                                     key: String,
                                     v: Value<'js>|
          -> rquickjs::Result<()> {
        if key == "sysroot" {
            let dir = match v.as_string() {
                Some(s) => Some(std::path::PathBuf::from(s.to_string()?)),
                None if v.is_null() || v.is_undefined() => None,
                None => {
                    return Err(throw(
                        &ctx,
                        "config.sysroot must be a directory path or null",
                    ))
                }
            };
            let mut s = h.session_mut(&ctx)?;
            let dirs = s.config.solib_dirs.clone();
            return s
                .set_core_search(dir, dirs)
                .map_err(|e| throw(&ctx, format!("config.sysroot: {e}")));
        }
        if key == "debug_dirs" || key == "solib_dirs" {
            // Read the script's array (it may run the script's getters) before the session
            // is borrowed.
            let bad = || {
                throw(
                    &ctx,
                    format!("config.{key} must be an array of directory paths"),
                )
            };
            let list = v.as_array().ok_or_else(bad)?;
            let mut dirs = Vec::new();
            for item in list.iter::<Value>() {
                let item = item?;
                let path: String = item.as_string().ok_or_else(bad)?.to_string()?;
                dirs.push(std::path::PathBuf::from(path));
            }
            let mut s = h.session_mut(&ctx)?;
            let done = if key == "debug_dirs" {
                s.set_debug_dirs(dirs)
            } else {
                let root = s.config.sysroot.clone();
                s.set_core_search(root, dirs)
            };
            return done.map_err(|e| throw(&ctx, format!("config.{key}: {e}")));
        }
        let mut s = h.session_mut(&ctx)?;
        let positive = |what: &str| -> rquickjs::Result<f64> {
            v.as_number()
                .filter(|n| *n > 0.0 && n.is_finite())
                .ok_or_else(|| throw(&ctx, format!("config.{what} must be a positive number")))
        };
        let secs = |what: &str| -> rquickjs::Result<Duration> {
            v.as_number()
                .and_then(|n| crate::session::seconds(n, MAX_DEADLINE))
                .ok_or_else(|| {
                    throw(
                        &ctx,
                        format!("config.{what} must be a positive number of seconds"),
                    )
                })
        };
        match key.as_str() {
            "timeout" => s.config.timeout = secs("timeout")?,
            "script_timeout" => s.config.script_timeout = secs("script_timeout")?,
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
            "stop_at" => {
                s.config.stop_at_loader = match v.as_string().map(|t| t.to_string()) {
                    Some(Ok(t)) if t == "loader" => true,
                    Some(Ok(t)) if t == "entry" => false,
                    _ => return Err(throw(&ctx, "config.stop_at must be 'entry' or 'loader'")),
                }
            }
            "follow_fork" => {
                s.config.follow_fork = match v.as_string().map(|t| t.to_string()) {
                    Some(Ok(t)) => match crate::session::FollowFork::parse(&t) {
                        Some(f) => f,
                        None => {
                            return Err(throw(
                                &ctx,
                                "config.follow_fork must be 'parent', 'child' or 'both'",
                            ))
                        }
                    },
                    _ => {
                        return Err(throw(
                            &ctx,
                            "config.follow_fork must be 'parent', 'child' or 'both'",
                        ))
                    }
                }
            }
            "syscall_filter" => {
                let bad = || {
                    throw(
                        &ctx,
                        "config.syscall_filter must be 'auto', 'seccomp' or 'ptrace'",
                    )
                };
                let text = v.as_string().ok_or_else(bad)?.to_string()?;
                s.set_syscall_filter(crate::session::SyscallFilter::parse(&text).ok_or_else(bad)?);
            }
            _ => return Err(throw(&ctx, format!("no setting '{key}'"))),
        }
        Ok(())
    });

    let h = host.clone();
    def!(n, ctx, "signal_mode", move |ctx: Ctx<'js>,
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
        h.session_mut(&ctx)?
            .signal_mode(num, mode)
            .map_err(|e| throw(&ctx, e))
    });

    let h = host.clone();
    def!(
        n,
        ctx,
        "suppress_signal",
        move |ctx: Ctx<'js>| -> rquickjs::Result<()> {
            h.session_mut(&ctx)?
                .suppress_signal()
                .map_err(|e| throw(&ctx, e))
        }
    );
    Ok(())
}

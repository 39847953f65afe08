//! JS: `config.<setting>` read and assigned.

use super::*;
use crate::session::MAX_DEADLINE;

/// The natives this file defines, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    t.def("config_get", get)?; // config.<setting>
    t.def("config_set", set)?; // config.<setting> = v
    Ok(())
}

fn get<'js>(h: &Host, ctx: Ctx<'js>, key: String) -> R<'js> {
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
        "max_processes" => Value::new_number(ctx.clone(), c.max_processes as f64),
        "schedule" => rquickjs::String::from_str(
            ctx.clone(),
            if c.schedule_all { "all" } else { "selected" },
        )?
        .into_value(),
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
}

fn set<'js>(h: &Host, ctx: Ctx<'js>, key: String, v: Value<'js>) -> rquickjs::Result<()> {
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
        "script_timeout" => {
            // In force at once, for the rest of this chunk too: an agent that raises it
            // before a long read means that read (the chunk kept the old 5 s, and its error
            // then named the new limit as the time it ran).
            let new = secs("script_timeout")?;
            h.rebudget(s.config.script_timeout, new);
            s.config.script_timeout = new;
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
        "max_processes" => {
            s.config.max_processes = v
                .as_number()
                .filter(|n| n.fract() == 0.0 && (1.0..=1e6).contains(n))
                .ok_or_else(|| {
                    throw(
                        &ctx,
                        "config.max_processes must be a whole number from 1 to 1000000",
                    )
                })? as usize
        }
        "schedule" => {
            s.config.schedule_all = match v.as_string().map(|t| t.to_string()) {
                Some(Ok(t)) if t == "all" => true,
                Some(Ok(t)) if t == "selected" => false,
                _ => return Err(throw(&ctx, "config.schedule must be 'all' or 'selected'")),
            }
        }
        _ => return Err(throw(&ctx, format!("no setting '{key}'"))),
    }
    Ok(())
}

//! The three tools: `scry_start`, `scry_eval`, `scry_stop`. A tool that fails (a bad argument,
//! a spawn refused, a chunk that throws) answers with `isError: true` and the reason as text,
//! so the model sees it; only an unknown tool is a JSON-RPC error.

use serde_json::{json, Map, Value};

use super::{RpcError, Server, INVALID_PARAMS};
use crate::daemon::{paths, wire};
use crate::launch::{self, Target};

const DEFAULT_NAME: &str = "default";

const START_ABOUT: &str = "\
Start a scry debugging session. Either spawn `program` with `args` (it stops at its entry point, \
before any of its code ran; the dynamic loader has mapped its libraries, so breakpoints on \
library functions work), attach to the running process `pid` (every thread stops), or open \
the core file `core` (of `program`, when given) to inspect a crash that already happened \
(read-only: its first stop is the crash; nothing runs). Returns \
the first stop line and the session's name. Sessions are named (`name`, default 'default') and \
several may run at once; starting a name whose process is still live is an error. A session \
lives until scry_stop or the end of this server: a spawned program is then killed, an attached \
one detached and left running. `view` (e.g. 0 or '127.0.0.1:8080') also serves a live page of \
the session for a person to watch; its URL is in the result and returned by view().";

const EVAL_ABOUT: &str = "\
Evaluate a chunk of JavaScript in a scry session against the stopped target. Returns everything \
the chunk printed, then its last value (terse text: objects as key<TAB>value lines, arrays of \
objects as a header line and tab-separated rows, addresses in hex); isError is true when the \
chunk threw (the text starts with 'error: ') and the session survives it. State persists \
between calls: breakpoints, watchpoints, listeners, `ctx`, the stopped process. cont() and \
step(n) run the target and return a stop line such as 'breakpoint 1 at 0x401136 add' or \
'exited with code 3'; every run has a deadline (config.timeout, 10 s) and ends with reason \
'timeout' when it passes. Listeners (addEventListener('breakpoint', e => ...)) return \
'continue' to keep the run going or 'stop' to end it, so one call can pass thousands of events. \
The target's own output is returned by output(). A long response is cut; send ':more' as the \
code for the rest. Reference (also help() and help('topic')):\n\n";

const STOP_ABOUT: &str = "\
End a scry session: a spawned program is killed, an attached one detached (breakpoint bytes \
restored) and left running. Returns what happened to the process.";

/// `tools/list`'s tools, with the API reference in scry_eval's description.
pub(super) fn definitions() -> Value {
    let name = json!({
        "type": "string",
        "description": "The session's name (default 'default')."
    });
    json!([
        {
            "name": "scry_start",
            "description": START_ABOUT,
            "inputSchema": {
                "type": "object",
                "properties": {
                    "program": {"type": "string", "description": "Program to spawn (PATH is searched)."},
                    "args": {"type": "array", "items": {"type": "string"}, "description": "Its arguments."},
                    "pid": {"type": "integer", "description": "A running process to attach to instead."},
                    "view": {"type": ["string", "integer"], "description": "Serve a live page of the session on [ADDR:]PORT (127.0.0.1 unless ADDR is given; 0 picks a free port)."},
                    "core": {"type": "string", "description": "A core file to open instead (program: the program that dumped it)."},
                    "remote": {"type": "string", "description": "HOST:PORT of a GDB-remote stub (gdbserver, QEMU -g) whose process to debug instead (program: a local copy of it)."},
                    "name": name,
                },
            },
        },
        {
            "name": "scry_eval",
            "description": format!("{EVAL_ABOUT}{}", crate::script::api::help(None)),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "code": {"type": "string", "description": "JavaScript (or a :command such as :more)."},
                    "name": name,
                },
                "required": ["code"],
            },
        },
        {
            "name": "scry_stop",
            "description": STOP_ABOUT,
            "inputSchema": {
                "type": "object",
                "properties": {"name": name},
            },
        },
    ])
}

/// A tool result holding one text.
fn text(text: impl Into<String>, is_error: bool) -> Value {
    json!({
        "content": [{"type": "text", "text": text.into()}],
        "isError": is_error,
    })
}

/// `tools/call`: the tool's result, or a JSON-RPC error for an unknown tool.
pub(super) fn call(
    server: &mut Server,
    tool: &str,
    args: &Map<String, Value>,
) -> Result<Value, RpcError> {
    let outcome = match tool {
        "scry_start" => start(server, args),
        "scry_eval" => eval(server, args),
        "scry_stop" => stop(server, args),
        other => {
            return Err((
                INVALID_PARAMS,
                format!("unknown tool '{other}': scry_start, scry_eval or scry_stop"),
            ))
        }
    };
    Ok(match outcome {
        Ok(result) => result,
        Err(message) => text(message, true),
    })
}

fn string_arg<'a>(args: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!("error: {key} must be a string, not {other}")),
    }
}

fn session_name(args: &Map<String, Value>) -> Result<String, String> {
    let name = string_arg(args, "name")?.unwrap_or(DEFAULT_NAME);
    paths::check_name(name).map_err(|e| format!("error: {e}"))?;
    Ok(name.to_string())
}

fn start(server: &mut Server, args: &Map<String, Value>) -> Result<Value, String> {
    let name = session_name(args)?;
    let program = string_arg(args, "program")?;
    let pid = match args.get("pid") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_i64()
                .filter(|p| *p > 0 && *p <= i64::from(i32::MAX))
                .ok_or(format!("error: pid must be a process id, not {v}"))? as i32,
        ),
    };
    let core = string_arg(args, "core")?;
    let target = if let Some(addr) = string_arg(args, "remote")? {
        if core.is_some() || pid.is_some() || args.get("args").is_some_and(|a| !a.is_null()) {
            return Err(
                "error: remote takes only program (a local copy): no core, pid or args".into(),
            );
        }
        Target::Remote {
            addr: addr.to_string(),
            program: program.map(str::to_string),
            args: Vec::new(),
            attach: None,
        }
    } else {
        match (program, pid) {
            (_, Some(_)) if core.is_some() => {
                return Err("error: give core or pid, not both".into())
            }
            (program, None) if core.is_some() => {
                if args.get("args").is_some_and(|a| !a.is_null()) {
                    return Err("error: a core takes no args: nothing runs".into());
                }
                Target::Core {
                    path: core.unwrap_or_default().into(),
                    program: program.map(str::to_string),
                }
            }
            (Some(_), Some(_)) => return Err("error: give program or pid, not both".into()),
            (None, None) => {
                return Err(
                    "error: give program (to spawn), pid (to attach) or core (a core file to open)"
                        .into(),
                );
            }
            (None, Some(pid)) => Target::Attach(pid),
            (Some(program), None) => {
                let list = match args.get("args") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(items)) => items
                        .iter()
                        .map(|v| match v {
                            Value::String(s) => Ok(s.clone()),
                            Value::Number(n) => Ok(n.to_string()),
                            other => Err(format!("error: args must be strings, not {other}")),
                        })
                        .collect::<Result<_, _>>()?,
                    Some(other) => {
                        return Err(format!("error: args must be an array, not {other}"))
                    }
                };
                Target::Spawn {
                    program: program.to_string(),
                    args: list,
                }
            }
        }
    };
    if let Some(old) = server.sessions.get(&name) {
        if old.engine().with_session(|s| s.is_live()) {
            return Err(format!(
                "error: session '{name}' has a live process; scry_stop it first or use another name"
            ));
        }
    }
    // A session whose process ended gives way to the new one.
    if let Some(mut old) = server.sessions.remove(&name) {
        launch::release(&mut old);
    }
    let view = match args.get("view") {
        None | Some(Value::Null) => server.view.clone(),
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(other) => return Err(format!("error: view must be [ADDR:]PORT, not {other}")),
    };
    let opened = launch::open(server.config.clone(), &target, view.as_deref())
        .map_err(|e| format!("error: {e}"))?;
    server.sessions.insert(name.clone(), opened.repl);
    let mut answer = format!("{}\nsession '{name}'", opened.first_stop);
    if let Some(url) = &opened.view_url {
        if let Some(warning) = &opened.view_warning {
            eprintln!("scry: {warning}");
            answer.push_str(&format!("\n{warning}"));
        }
        eprintln!("scry: session '{name}': view at {url}");
        answer.push_str(&format!("\nview {url}"));
    }
    Ok(text(answer, false))
}

fn eval(server: &mut Server, args: &Map<String, Value>) -> Result<Value, String> {
    let name = session_name(args)?;
    let code = string_arg(args, "code")?.ok_or("error: code is required")?;
    let repl = server
        .sessions
        .get_mut(&name)
        .ok_or_else(|| format!("error: no session '{name}'; start one with scry_start"))?;
    match repl.respond(&wire::normalize_chunk(code)) {
        Some((body, ok)) => Ok(text(body, !ok)),
        // `:quit` ends the session like scry_stop.
        None => stop(server, args),
    }
}

fn stop(server: &mut Server, args: &Map<String, Value>) -> Result<Value, String> {
    let name = session_name(args)?;
    let mut repl = server
        .sessions
        .remove(&name)
        .ok_or_else(|| format!("error: no session '{name}'"))?;
    let released = launch::release(&mut repl);
    Ok(text(format!("{released}\nsession '{name}' ended"), false))
}

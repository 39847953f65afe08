//! Turning a thrown JS value into the one-line `error: ...` a user reads, plus the frames of
//! the user's own code (never scry's prelude).

use rquickjs::{Ctx, Function, Value};

use super::printer::{Printer, PRINT_TIMEOUT};

/// The name scry's own errors carry: they print as `error: <message>`.
const SCRY_ERROR: &str = "ScryError";
const MAX_FRAMES: usize = 5;

pub(super) struct Limits {
    pub script_timeout_secs: f64,
    pub memory_limit_mib: usize,
}

pub(super) fn format_exception<'js>(
    ctx: &Ctx<'js>,
    thrown: &Value<'js>,
    user_file: &str,
    limits: &Limits,
    one_line: bool,
) -> String {
    if thrown
        .as_string()
        .and_then(|s| s.to_string().ok())
        .as_deref()
        == Some(PRINT_TIMEOUT)
    {
        return format!(
            "error: script stopped after running {}s (config.script_timeout) while its result was printed; the session is intact",
            limits.script_timeout_secs
        );
    }
    let Some(obj) = thrown.as_object().filter(|_| thrown.is_error()) else {
        let text = Printer::new(ctx)
            .render(thrown)
            .unwrap_or_else(|_| "?".into());
        let shown = if thrown.is_string() {
            format!("'{text}'")
        } else {
            text
        };
        return format!("error: uncaught {shown}");
    };
    let name: String = obj.get("name").unwrap_or_else(|_| "Error".into());
    let message: String = obj.get("message").unwrap_or_default();
    let stack: String = obj.get("stack").unwrap_or_default();
    let mut head = match (name.as_str(), message.as_str()) {
        ("InternalError", "interrupted") if crate::session::signal_pending() => {
            "error: interrupted by a signal to scry; the session is intact".to_string()
        }
        ("InternalError", "interrupted") => format!(
            "error: script stopped after running {}s (config.script_timeout); the session is intact",
            limits.script_timeout_secs
        ),
        ("InternalError", "out of memory") => format!(
            "error: script ran out of memory (limit {} MiB) and was stopped; the session is intact",
            limits.memory_limit_mib
        ),
        ("InternalError", "stack overflow") | ("RangeError", "Maximum call stack size exceeded") => {
            "error: InternalError: stack overflow (recursion too deep)".to_string()
        }
        (SCRY_ERROR, _) => format!("error: {message}"),
        ("ReferenceError", m) if m.ends_with(" is not defined") => {
            let missing = m.trim_end_matches(" is not defined");
            match suggest_global(ctx, missing) {
                Some(s) => format!("error: ReferenceError: {m}; did you mean {s}?"),
                None => format!("error: ReferenceError: {m}"),
            }
        }
        ("TypeError", m) if m.contains("BigInt") => format!(
            "error: TypeError: {m} (64-bit values above 2^53 are BigInt: mix them with BigInt(x), or Number(x) when exact; memory(a).u64n()/i64n() always give a BigInt)"
        ),
        _ => format!("error: {name}: {message}"),
    };
    let frames: Vec<&str> = stack
        .lines()
        .filter(|l| l.contains(user_file))
        .take(MAX_FRAMES)
        .collect();
    // A one-line chunk's only frame ("at <eval> (<input>:1:1)") tells nothing new.
    if one_line && frames.len() <= 1 {
        return head;
    }
    for frame in frames {
        head.push('\n');
        head.push_str("    ");
        head.push_str(frame.trim());
    }
    head
}

/// The call that does what gdb's command `word` does (`info`: `state.locals(), ...`).
pub(super) fn suggest_gdb_word(ctx: &Ctx<'_>, word: &str) -> Option<String> {
    let f: Function = ctx.globals().get("__gdbWord").ok()?;
    let v: Value = f.call((word,)).ok()?;
    v.as_string()?.to_string().ok()
}

fn suggest_global(ctx: &Ctx<'_>, name: &str) -> Option<String> {
    let f: Function = ctx.globals().get("__suggestGlobal").ok()?;
    let v: Value = f.call((name,)).ok()?;
    v.as_string()?.to_string().ok()
}

/// A thrown or rejected value in a few words: `Error: boom`, `42`, `'text'`.
pub(super) fn describe_thrown<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> String {
    if let Some(obj) = v.as_object().filter(|_| v.is_error()) {
        let name: String = obj.get("name").unwrap_or_else(|_| "Error".into());
        let message: String = obj.get("message").unwrap_or_default();
        let text = format!("{name}: {message}");
        return super::values::clip_message(&text).into_owned();
    }
    let text = Printer::new(ctx).render(v).unwrap_or_else(|_| "?".into());
    let text = super::values::clip_message(&text).into_owned();
    if v.is_string() {
        format!("'{text}'")
    } else {
        text
    }
}

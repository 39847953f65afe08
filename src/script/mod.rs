//! The script layer: the only place that knows rquickjs. One runtime and context per session;
//! chunks are evaluated as global code, their completion value printed in the terse format.

pub mod api;
mod errors;
mod feed;
pub(crate) mod format;
mod host;
mod native;
pub(crate) mod orient;
mod printer;
mod promises;
mod record;
mod response;
pub(crate) mod rewrite;
mod thrown;
pub(crate) mod values;

use std::rc::Rc;
use std::time::Instant;

use rquickjs::context::EvalOptions;
use rquickjs::{Context, Ctx, Function, Persistent, Runtime, Value};

use crate::session::Session;
use host::Host;

/// The public API: one function's body, split by topic over `prelude/` (see its base.js).
const PRELUDE: &str = concat!(
    include_str!("prelude/base.js"),
    include_str!("prelude/machine.js"),
    include_str!("prelude/values.js"),
    include_str!("prelude/state.js"),
    include_str!("prelude/events.js"),
    include_str!("prelude/runs.js"),
    include_str!("prelude/points.js"),
    include_str!("prelude/time.js"),
);
/// `dom` and `view()`, built on the same native object after the prelude.
const DOM_PRELUDE: &str = include_str!("dom.js");
/// `printers` (the registry), then scry's own printers, built on the same native object
/// after the prelude.
const PRINTERS_PRELUDE: &[&str] = &[
    include_str!("printers.js"),
    include_str!("printers_libstdcxx.js"),
    include_str!("printers_libcxx.js"),
    include_str!("printers_rust.js"),
];
const PRELUDE_FILE: &str = "<scry>";
pub(crate) const MEMORY_LIMIT_MIB: usize = 256;
/// QuickJS's own recursion guard; well inside the main thread's 8 MiB stack.
const STACK_LIMIT: usize = 2 * 1024 * 1024;

/// The outcome of one chunk: everything it printed, and whether it succeeded.
pub struct ChunkResult {
    pub text: String,
    pub ok: bool,
    /// Bytes `print` produced beyond the in-memory hard cap.
    pub dropped: u64,
    /// Where the chunk's value (a `cont()`'s stop line) begins in `text`, when it printed
    /// one: a response cut for size keeps it after the cut note.
    pub value_at: Option<usize>,
}

pub struct Engine {
    // Field order is drop order: values held across chunks, then the context, then the
    // runtime that owns them.
    /// The prelude's `chunkEnd()`: resets the listener depth after every chunk.
    chunk_end: Persistent<Function<'static>>,
    /// Rejections without a handler during the chunk (emptied after every chunk).
    unhandled: Rc<promises::Unhandled>,
    context: Context,
    runtime: Runtime,
    host: Rc<Host>,
}

impl Engine {
    pub fn new(session: Session) -> anyhow::Result<Engine> {
        let runtime = Runtime::new()?;
        runtime.set_memory_limit(MEMORY_LIMIT_MIB * 1024 * 1024);
        runtime.set_max_stack_size(STACK_LIMIT);
        let host = Host::new(session);
        let deadline = host.js_deadline.clone();
        runtime.set_interrupt_handler(Some(Box::new(move || {
            deadline.get().is_some_and(|d| Instant::now() > d) || crate::session::signal_pending()
        })));
        let unhandled = promises::Unhandled::install(&runtime);
        let context = Context::full(&runtime)?;
        let chunk_end = context.with(|ctx| -> anyhow::Result<_> {
            let native = native::install(&ctx, &host).map_err(|e| js_error(&ctx, e))?;
            let mut opts = EvalOptions::default();
            opts.global = true;
            opts.strict = true;
            opts.filename = Some(PRELUDE_FILE.into());
            let init: Function = ctx
                .eval_with_options(PRELUDE, opts)
                .map_err(|e| js_error(&ctx, e))?;
            let chunk_end: Function = init
                .call((native.clone(),))
                .map_err(|e| js_error(&ctx, e))?;
            let mut opts = EvalOptions::default();
            opts.global = true;
            opts.strict = true;
            opts.filename = Some(PRELUDE_FILE.into());
            let dom: Function = ctx
                .eval_with_options(DOM_PRELUDE, opts)
                .map_err(|e| js_error(&ctx, e))?;
            dom.call::<_, ()>((native.clone(),))
                .map_err(|e| js_error(&ctx, e))?;
            for file in PRINTERS_PRELUDE {
                let mut opts = EvalOptions::default();
                opts.global = true;
                opts.strict = true;
                opts.filename = Some(PRELUDE_FILE.into());
                let printers: Function = ctx
                    .eval_with_options(*file, opts)
                    .map_err(|e| js_error(&ctx, e))?;
                printers
                    .call::<_, ()>((native.clone(),))
                    .map_err(|e| js_error(&ctx, e))?;
            }
            Ok(Persistent::save(&ctx, chunk_end))
        })?;
        Ok(Engine {
            chunk_end,
            unhandled,
            context,
            runtime,
            host,
        })
    }

    /// Keeps `stop` as the latest stop (what `:status` and `status().stop` report): the first
    /// stop of a session opened before the engine existed (spawn, attach, core).
    pub fn book_stop(&self, stop: &crate::session::StopInfo) {
        if stop.kind != crate::session::StopKind::Here {
            *self.host.last_stop.borrow_mut() = Some(stop.clone());
        }
    }

    /// The orientation (see `orient`): after `first_stop`'s line when given, else where the
    /// target is now; or what happened to the last process.
    pub fn orientation(&self, first_stop: Option<&str>) -> String {
        let last = self.host.last_stop.borrow().clone();
        let mut session = self.host.session.borrow_mut();
        let mut out = String::new();
        if let Some(line) = first_stop {
            out.push_str(line);
            out.push('\n');
        }
        match session.overview() {
            Some(o) => {
                // The last stop, while the selected thread is where it left it.
                let selected = session.selected_tid().ok();
                let stop = last
                    .filter(|s| first_stop.is_none() && s.tid == selected && s.pc == Some(o.pc))
                    .map(|mut s| {
                        session.describe(&mut s);
                        s.line()
                    });
                let at = match (&stop, first_stop) {
                    (_, Some(_)) => orient::At::Omitted,
                    (Some(line), None) => orient::At::Stop(line),
                    (None, None) => orient::At::Pc,
                };
                out.push_str(&orient::describe(&o, at))
            }
            None => match session.last_process() {
                Some((pid, program, ended)) => out.push_str(&format!(
                    "no live process: {program} (pid {pid}) {}; spawn(path) or attach(pid) starts one",
                    ended.as_deref().unwrap_or("ended")
                )),
                None => out.push_str("no process yet: spawn(path) or attach(pid)"),
            },
        }
        out.push('\n');
        out.push_str(if session.core_name().is_some() {
            orient::CORE_HINT
        } else {
            orient::HINT
        });
        out
    }

    /// Shows the session in the live view `view` from now on (its URL is what `view()`
    /// returns).
    /// `stop_line` is the session's stop so far (the first stop of a spawn or attach).
    pub fn attach_view(&self, view: crate::view::View, stop_line: &str) {
        self.host.attach_view(view);
        self.host.note_stop(stop_line);
        self.host
            .publish_chunk("", "<meta>", "", true, Instant::now());
    }

    pub fn view_url(&self) -> Option<String> {
        self.host.view_url()
    }

    pub fn with_session<T>(&self, f: impl FnOnce(&mut Session) -> T) -> T {
        f(&mut self.host.session.borrow_mut())
    }

    /// Evaluates one chunk. `file` names it in stack traces (`<input>` or a script path).
    ///
    /// A panic inside (a bug in scry: the session never panics on purpose) is caught here and
    /// answered as `error: internal: ...`, so one bad chunk cannot take down a session daemon
    /// or an MCP server with every other session in it.
    pub fn eval(&self, source: &str, file: &str) -> ChunkResult {
        let started = Instant::now();
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.eval_chunk(source, file)
        }));
        let outcome = run.unwrap_or_else(|payload| {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            let line = format!(
                "error: internal: scry failed inside this chunk ({what}); the session goes on, but \
                 the target may not be where scry thinks: check it with status() and state"
            );
            self.host.print(&values::clip_message(&line));
            false
        });
        self.after_chunk();
        let response = self.host.response.take();
        self.host
            .publish_chunk(source, file, &response.text, outcome, started);
        ChunkResult {
            text: response.text,
            ok: outcome,
            dropped: response.dropped,
            value_at: response.value_at,
        }
    }

    fn eval_chunk(&self, source: &str, file: &str) -> bool {
        if let Some(refusal) = gdb_delete(source) {
            self.host.print(&refusal);
            return false;
        }
        let one_line = source.trim().lines().count() <= 1;
        let source = rewrite::rewrite_chunk(source);
        let budget = self.host.session.borrow().config.script_timeout;
        self.host.js_deadline.set(Some(Instant::now() + budget));
        *self.host.response.borrow_mut() = Default::default();
        self.context.with(|ctx| {
            let mut opts = EvalOptions::default();
            opts.global = true;
            opts.strict = false;
            opts.backtrace_barrier = true;
            opts.filename = Some(file.into());
            let completion = ctx.eval_with_options::<Value, _>(source.as_bytes(), opts);
            // Promise jobs run before the response ends; a promise completion value is
            // printed as what it settles to.
            let completion = completion.and_then(|v| match v.as_promise() {
                Some(p) => match p.finish::<Value>() {
                    Err(rquickjs::Error::WouldBlock) => Err(native::throw(
                        &ctx,
                        "the chunk's value is a promise still pending, and nothing is left to \
                         settle it (scry runs no event loop between chunks: await only what the \
                         chunk itself resolves)",
                    )),
                    other => other,
                },
                None => {
                    while ctx.execute_pending_job() {}
                    Ok(v)
                }
            });
            let printed = completion.and_then(|v| match v.is_undefined() {
                true => Ok(None),
                false => printer::Printer::new(&ctx)
                    .with_deadline(self.host.js_deadline.get())
                    .render(&v)
                    .map(Some),
            });
            let mut failure = match printed {
                Ok(text) => {
                    if let Some(text) = text {
                        let at = self.host.response.borrow().text.len();
                        self.host.print(&text);
                        self.host.response.borrow_mut().value_at = Some(at);
                    }
                    None
                }
                Err(e) => Some(gdb_hint(
                    &ctx,
                    &source,
                    self.describe_error(&ctx, e, file, one_line),
                )),
            };
            if let Some((reason, count)) = self.unhandled.take(&ctx) {
                if failure.is_none() {
                    let what = errors::describe_thrown(&ctx, &reason);
                    let more = match count {
                        1 => String::new(),
                        n => format!(" (and {} more)", n - 1),
                    };
                    failure = Some(format!(
                        "error: a promise was rejected and nothing handled it{more}: {what}"
                    ));
                }
            }
            // From here on only scry's own code runs: the budget no longer applies.
            self.host.js_deadline.set(None);
            let cut_listener = self.reset_listeners(&ctx);
            match failure {
                None => true,
                Some(mut line) => {
                    if let Some(where_) = cut_listener {
                        line = with_listener_context(line, &where_);
                    }
                    self.host.print(&line);
                    false
                }
            }
        })
    }

    /// The prelude's listener depth back to zero; if an interrupt cut a listener short, its
    /// type and where the target stopped (`breakpoint`, `breakpoint 1 at 0x... add`).
    fn reset_listeners(&self, ctx: &Ctx<'_>) -> Option<(String, String)> {
        let chunk_end = self.chunk_end.clone().restore(ctx).ok()?;
        let cut: Option<String> = chunk_end.call(()).ok()?;
        let cut = cut?;
        let stop = self
            .host
            .last_stop
            .borrow()
            .clone()
            .map(|mut info| {
                self.host.session.borrow_mut().describe(&mut info);
                info.line()
            })
            .unwrap_or_else(|| "unknown".into());
        Some((cut, stop))
    }

    /// What every chunk leaves behind, whatever way it ended: no JS deadline and no deadline
    /// timer armed (a run cleans up its own breakpoints, see `crate::runner`).
    fn after_chunk(&self) {
        self.host.js_deadline.set(None);
        self.unhandled.clear();
        if let Ok(mut session) = self.host.session.try_borrow_mut() {
            session.disarm();
        }
        self.runtime.run_gc();
    }

    fn describe_error(
        &self,
        ctx: &Ctx<'_>,
        err: rquickjs::Error,
        file: &str,
        one_line: bool,
    ) -> String {
        let limits = errors::Limits {
            script_timeout_secs: self
                .host
                .session
                .borrow()
                .config
                .script_timeout
                .as_secs_f64(),
            memory_limit_mib: MEMORY_LIMIT_MIB,
        };
        match err {
            rquickjs::Error::Exception => {
                let thrown = ctx.catch();
                errors::format_exception(ctx, &thrown, file, &limits, one_line)
            }
            other => format!("error: {other}"),
        }
    }

    /// True when `source` is a prefix of valid code that needs more lines (TTY continuation).
    /// The source is parsed, not run, as the body of `new Function`; QuickJS wraps that body
    /// between two lines of its own, so a syntax error located past the body's last line
    /// means the parser ran out of input.
    pub fn is_incomplete(&self, source: &str) -> bool {
        let source = rewrite::rewrite_continue(source);
        let body_lines = source.trim_end_matches('\n').lines().count().max(1);
        self.context.with(|ctx| {
            let probe: Function = match ctx.eval(
                "(src) => { try { new Function(src); return ''; } catch (e) { \
                   if (!(e instanceof SyntaxError)) return ''; \
                   const m = /:(\\d+):\\d+/.exec(String(e.stack)); \
                   return String(e.message) + '|' + (m ? m[1] : '0'); } }",
            ) {
                Ok(f) => f,
                Err(_) => return false,
            };
            let report: String = probe.call((source.as_str(),)).unwrap_or_default();
            let Some((message, line)) = report.rsplit_once('|') else {
                return false;
            };
            let line: usize = line.parse().unwrap_or(0);
            let open_template = source.matches('`').count() % 2 == 1;
            message.contains("unexpected end of comment")
                || (message.contains("unexpected end of string") && open_template)
                || line > body_lines + 2
        })
    }
}

/// `error: ...` of a chunk an interrupt ended inside a listener, with the listener and the
/// stop it was handling (the same words as for a listener that throws).
fn with_listener_context(line: String, (kind, stop): &(String, String)) -> String {
    let (first, rest) = line.split_once('\n').unwrap_or((&line, ""));
    let mut out = format!("{first} [in {kind} listener; target stopped: {stop}]");
    if !rest.is_empty() {
        out.push('\n');
        out.push_str(rest);
    }
    out
}

fn js_error(ctx: &Ctx<'_>, e: rquickjs::Error) -> anyhow::Error {
    if let rquickjs::Error::Exception = e {
        let thrown = ctx.catch();
        let text = errors::format_exception(
            ctx,
            &thrown,
            PRELUDE_FILE,
            &errors::Limits {
                script_timeout_secs: 0.0,
                memory_limit_mib: MEMORY_LIMIT_MIB,
            },
            false,
        );
        return anyhow::anyhow!("prelude failed: {text}");
    }
    anyhow::anyhow!("{e}")
}

/// A chunk that is a gdb command (`p x`, `info locals`, `b work`, `x/4x $sp`) fails to parse
/// as JavaScript: its syntax error says which call does it here.
fn gdb_hint(ctx: &Ctx<'_>, source: &str, error: String) -> String {
    if !error.starts_with("error: SyntaxError") {
        return error;
    }
    let text = source.trim_start();
    let word: String = text
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    let next = text[word.len()..].chars().next();
    if word.is_empty() || !matches!(next, Some(' ' | '/' | '\t')) {
        return error;
    }
    let Some(call) = errors::suggest_gdb_word(ctx, &word) else {
        return error;
    };
    let (first, rest) = error.split_once('\n').unwrap_or((&error, ""));
    let mut out = format!("{first} (scry reads JavaScript: gdb's `{word}` is {call} here)");
    if !rest.is_empty() {
        out.push('\n');
        out.push_str(rest);
    }
    out
}

/// `delete 1`, gdb's removal of breakpoint 1, is valid JavaScript (the delete operator on
/// a number, `true`): an answer `true` would read as done. A chunk that is only that is
/// refused, saying the call that removes a breakpoint.
fn gdb_delete(source: &str) -> Option<String> {
    let rest = source.trim().trim_end_matches(';').strip_prefix("delete")?;
    let ids = rest.trim_start();
    let spaced = rest.len() > ids.len();
    let numbers = !ids.is_empty()
        && ids
            .split_whitespace()
            .all(|w| w.chars().all(|c| c.is_ascii_digit()));
    (spaced && numbers).then(|| {
        let first = ids.split_whitespace().next().unwrap_or("1");
        format!(
            "error: `delete {ids}` is gdb's; in JavaScript it deletes nothing (the delete operator on a number is true): breakpoint.remove({first}) removes breakpoint {first}"
        )
    })
}

//! The script layer: the only place that knows rquickjs. One runtime and context per session;
//! chunks are evaluated as global code, their completion value printed in the terse format.

pub mod api;
mod errors;
pub mod format;
mod host;
mod native;
mod printer;
pub mod rewrite;
pub mod values;

use std::rc::Rc;
use std::time::Instant;

use rquickjs::context::EvalOptions;
use rquickjs::{Context, Ctx, Function, Runtime, Value};

use crate::session::Session;
use host::Host;

const PRELUDE: &str = include_str!("prelude.js");
const PRELUDE_FILE: &str = "<scry>";
pub const MEMORY_LIMIT_MIB: usize = 256;
/// QuickJS's own recursion guard; well inside the main thread's 8 MiB stack.
const STACK_LIMIT: usize = 2 * 1024 * 1024;

/// The outcome of one chunk: everything it printed, and whether it succeeded.
pub struct ChunkResult {
    pub text: String,
    pub ok: bool,
    /// Bytes `print` produced beyond the in-memory hard cap.
    pub dropped: u64,
}

pub struct Engine {
    // Field order is drop order: the context before the runtime that owns it.
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
        let context = Context::full(&runtime)?;
        context.with(|ctx| -> anyhow::Result<()> {
            let native = native::install(&ctx, &host).map_err(|e| js_error(&ctx, e))?;
            let mut opts = EvalOptions::default();
            opts.global = true;
            opts.strict = true;
            opts.filename = Some(PRELUDE_FILE.into());
            let init: Function = ctx
                .eval_with_options(PRELUDE, opts)
                .map_err(|e| js_error(&ctx, e))?;
            init.call::<_, ()>((native,))
                .map_err(|e| js_error(&ctx, e))?;
            Ok(())
        })?;
        Ok(Engine {
            context,
            runtime,
            host,
        })
    }

    pub fn with_session<T>(&self, f: impl FnOnce(&mut Session) -> T) -> T {
        f(&mut self.host.session.borrow_mut())
    }

    /// Evaluates one chunk. `file` names it in stack traces (`<input>` or a script path).
    pub fn eval(&self, source: &str, file: &str) -> ChunkResult {
        let one_line = source.trim().lines().count() <= 1;
        let source = rewrite::rewrite_continue(source);
        let budget = self.host.session.borrow().config.script_timeout;
        self.host.js_deadline.set(Some(Instant::now() + budget));
        *self.host.response.borrow_mut() = Default::default();
        let ok = self.context.with(|ctx| {
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
                    Err(rquickjs::Error::WouldBlock) => Ok(rquickjs::String::from_str(
                        ctx.clone(),
                        "[a pending promise: nothing left to settle it]",
                    )?
                    .into_value()),
                    other => other,
                },
                None => {
                    while ctx.execute_pending_job() {}
                    Ok(v)
                }
            });
            match completion {
                Ok(v) => {
                    if !v.is_undefined() {
                        match printer::Printer::new(&ctx).render(&v) {
                            Ok(text) => self.host.print(&text),
                            Err(e) => {
                                let line = self.describe_error(&ctx, e, file, one_line);
                                self.host.print(&line);
                                return false;
                            }
                        }
                    }
                    true
                }
                Err(e) => {
                    let line = self.describe_error(&ctx, e, file, one_line);
                    self.host.print(&line);
                    false
                }
            }
        });
        self.host.js_deadline.set(None);
        // A run interrupted mid-flight (an exception inside a listener) must not leave the
        // deadline timer firing.
        self.host.session.borrow_mut().disarm();
        self.runtime.run_gc();
        let response = std::mem::take(&mut *self.host.response.borrow_mut());
        ChunkResult {
            text: response.text,
            ok,
            dropped: response.dropped,
        }
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

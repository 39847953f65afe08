//! The native half of the JS API: a hidden object of functions the prelude builds the public
//! API from. Each function is a thin conversion between JS values and a session call.

use std::rc::Rc;
use std::time::{Duration, Instant};

use rquickjs::prelude::{Opt, Rest};
use rquickjs::{Array, Ctx, Function, IntoJs, Object, Value};

use super::host::Host;
use super::record::{Push, Put};
use super::values::{self, u64_to_js};
use super::{api, printer};
use crate::session::stop::le_value;
use crate::session::vocabulary::{regs, signals, REGISTER_NAMES};
use crate::session::watchpoints::WatchKind;
use crate::session::{BreakpointRef, Session, SignalMode, SpawnSpec, StopInfo};
use crate::symbols::{Insn, RuntimeAddr, SymKind};

/// `def!(n, ctx, "name", closure)`: sets a native function on the object `n`.
macro_rules! def {
    ($n:expr, $ctx:expr, $name:literal, $f:expr) => {
        $n.put($name, Function::new($ctx.clone(), $f)?)?;
    };
}

mod dom;
mod fpu;
mod handle;
mod mem_kind;
mod modules;
mod points;
mod pretty;
mod process;
mod runs;
mod state;
mod syscalls;
mod typed;

type R<'js> = rquickjs::Result<Value<'js>>;

pub(super) use super::thrown::{throw, ERROR_CTOR};

/// The longest symbol expression looked up: far beyond any real (even mangled C++) name, and
/// short enough that a lookup and its "did you mean" stay quick.
pub(super) const MAX_EXPR: usize = 64 * 1024;

fn address<'js>(ctx: &Ctx<'js>, host: &Host, v: &Value<'js>) -> rquickjs::Result<u64> {
    if let Some(s) = v.as_string() {
        let text = s.to_string()?;
        if text.len() > MAX_EXPR {
            let head: String = text.chars().take(40).collect();
            return Err(throw(
                ctx,
                format!(
                    "bad address '{head}…': a symbol expression of {} bytes is too long (at most {MAX_EXPR})",
                    text.len()
                ),
            ));
        }
        return host
            .session_mut(ctx)?
            .resolve(&text)
            .map_err(|e| throw(ctx, e));
    }
    values::to_address(ctx, v).map_err(|e| throw(ctx, e))
}

/// A `{timeout}` a call was given, in seconds, or `None` when not given; `what` names the
/// call in the error (`gcore: timeout must be ...`).
fn timeout_given<'js>(
    ctx: &Ctx<'js>,
    v: Option<Value<'js>>,
    what: &str,
) -> rquickjs::Result<Option<Duration>> {
    let Some(v) = v.filter(|v| !v.is_undefined() && !v.is_null()) else {
        return Ok(None);
    };
    v.as_number()
        .and_then(|secs| crate::session::seconds(secs, crate::session::MAX_DEADLINE))
        .map(Some)
        .ok_or_else(|| {
            throw(
                ctx,
                format!(
                    "{what}timeout must be a positive number of seconds, got {}",
                    values::describe(ctx, &v)
                ),
            )
        })
}

fn undefined<'js>(ctx: &Ctx<'js>) -> Value<'js> {
    Value::new_undefined(ctx.clone())
}

/// Defines every native function on a fresh object.
pub(super) fn install<'js>(ctx: &Ctx<'js>, host: &Rc<Host>) -> rquickjs::Result<Object<'js>> {
    // Before any user code runs: the constructor scry's own errors are made with.
    let error_ctor: Value = ctx.globals().get("Error")?;
    ctx.globals()
        .prop(ERROR_CTOR, rquickjs::object::Property::from(error_ctor))?;
    let n = Object::new(ctx.clone())?;
    let h = host.clone();
    def!(n, ctx, "print", move |ctx: Ctx<'js>,
                                args: Rest<Value<'js>>|
          -> rquickjs::Result<()> {
        let text = printer::render_print_args(&ctx, &args.0, h.js_deadline.get())?;
        h.print(&text);
        Ok(())
    });

    // What a value prints as: built-in results' toString.
    let h = host.clone();
    def!(n, ctx, "text", move |ctx: Ctx<'js>,
                               v: Value<'js>|
          -> rquickjs::Result<String> {
        printer::Printer::new(&ctx)
            .with_deadline(h.js_deadline.get())
            .render(&v)
    });

    def!(n, ctx, "global_names", move || -> Vec<&'static str> {
        api::global_names()
    });

    def!(
        n,
        ctx,
        "help",
        move |topic: Opt<Value<'js>>| -> rquickjs::Result<String> {
            let topic: Option<String> = match topic.0.filter(|v| !v.is_undefined()) {
                Some(v) => Some(v.get()?),
                None => None,
            };
            Ok(api::help(topic.as_deref()))
        }
    );
    process::install(&n, ctx, host)?;
    runs::install(&n, ctx, host)?;
    state::install(&n, ctx, host)?;
    points::install(&n, ctx, host)?;
    modules::install(&n, ctx, host)?;
    typed::install(&n, ctx, host)?;
    pretty::install(&n, ctx, host)?;
    fpu::install(&n, ctx, host)?;
    dom::install(&n, ctx, host)?;
    syscalls::install(&n, ctx, host)?;
    Ok(n)
}

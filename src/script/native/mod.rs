//! The native half of the JS API: a hidden object of functions the prelude builds the public
//! API from. Each function is a thin conversion between JS values and a session call.
//!
//! One file per JS global or namespace, named after it (`breakpoint.set` is `bp_set` in
//! `breakpoint.rs`, `state.memory(a).u8()` is `mem_read` in `state/memory.rs`), each opening
//! with the table of what it defines: the name the prelude calls, then the `fn` below it.
//! A `fn` is named after the JS method it serves, without the native's prefix.

use std::rc::Rc;
use std::time::{Duration, Instant};

use rquickjs::function::{FromParams, IntoJsFunc, ParamRequirement, Params};
use rquickjs::prelude::{Opt, Rest};
use rquickjs::{Array, Ctx, Function, IntoJs, Object, Value};

use super::host::Host;
use super::record::{Push, Put};
use super::values::{self, u64_to_js};
use crate::session::stop::le_value;
use crate::session::vocabulary::{regs, signals, REGISTER_NAMES};
use crate::session::{BreakpointRef, Session, SignalMode, SpawnSpec, StopInfo};
use crate::symbols::{Insn, RuntimeAddr, SymKind};

mod breakpoint;
mod config;
mod dom;
mod events;
mod handle;
mod mem_kind;
mod print;
mod printers;
mod process;
mod recording;
mod run;
mod state;
mod symbols;
mod syscall;
mod thread;
mod tracepoint;
mod value;
mod watchpoint;

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
        return host.session_mut(ctx)?.resolve(&text).or_throw(ctx);
    }
    values::to_address(ctx, v).or_throw(ctx)
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

/// `.or_throw(&ctx)?`: a session's (or any) error as the JS exception scripts catch. Every
/// native ends in one, so it is one word, and a native reads as the session call it wraps.
pub(super) trait OrThrow<T> {
    fn or_throw(self, ctx: &Ctx<'_>) -> rquickjs::Result<T>;
}

impl<T, E: std::fmt::Display + 'static> OrThrow<T> for Result<T, E> {
    fn or_throw(self, ctx: &Ctx<'_>) -> rquickjs::Result<T> {
        self.map_err(|e| throw(ctx, e))
    }
}

/// Where one file's natives are defined. `def` hands each native the host as its first
/// argument, so a native is a plain `fn` (nameable in a table) rather than a closure that
/// captured its own clone of the host.
pub(super) struct Natives<'a, 'js> {
    obj: &'a Object<'js>,
    ctx: &'a Ctx<'js>,
    host: &'a Rc<Host>,
}

impl<'js> Natives<'_, 'js> {
    fn def<P, F>(&self, name: &str, f: F) -> rquickjs::Result<()>
    where
        WithHost<F>: IntoJsFunc<'js, P> + 'js,
    {
        let f = Function::new(self.ctx.clone(), WithHost(self.host.clone(), f))?;
        self.obj.put(name, f)
    }
}

/// A native `fn(&Host, args...)` as a JS function of `args...`: what rquickjs does for a
/// closure, with the host passed in front.
struct WithHost<F>(Rc<Host>, F);

macro_rules! with_host {
    ($($t:ident),*) => {
        impl<'js, Ret, Fun $(, $t)*> IntoJsFunc<'js, ($($t,)*)> for WithHost<Fun>
        where
            Fun: Fn(&Host $(, $t)*) -> Ret + 'js,
            ($($t,)*): FromParams<'js> + 'js,
            Ret: IntoJs<'js> + 'js,
        {
            fn param_requirements() -> ParamRequirement {
                <($($t,)*)>::param_requirements()
            }

            #[allow(non_snake_case)]
            fn call(&self, params: Params<'_, 'js>) -> rquickjs::Result<Value<'js>> {
                let ctx = params.ctx().clone();
                let ($($t,)*) = <($($t,)*)>::from_params(&mut params.access())?;
                (self.1)(&self.0 $(, $t)*).into_js(&ctx)
            }
        }
    };
}

with_host!();
with_host!(A);
with_host!(A, B);
with_host!(A, B, C);
with_host!(A, B, C, D);
with_host!(A, B, C, D, E);
with_host!(A, B, C, D, E, F2);

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
    let t = Natives { obj: &n, ctx, host };
    print::install(&t)?;
    process::install(&t)?;
    run::install(&t)?;
    recording::install(&t)?;
    events::install(&t)?;
    state::install(&t)?;
    thread::install(&t)?;
    breakpoint::install(&t)?;
    watchpoint::install(&t)?;
    tracepoint::install(&t)?;
    syscall::install(&t)?;
    symbols::install(&t)?;
    config::install(&t)?;
    value::install(&t)?;
    printers::install(&t)?;
    dom::install(&t)?;
    Ok(n)
}

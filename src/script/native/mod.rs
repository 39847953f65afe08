//! The native half of the JS API: a hidden object of functions the prelude builds the public
//! API from. Each function is a thin conversion between JS values and a session call.

use std::rc::Rc;
use std::time::{Duration, Instant};

use rquickjs::prelude::{Opt, Rest};
use rquickjs::{Array, Ctx, Exception, Function, IntoJs, Object, Value};

use super::host::Host;
use super::values::{self, u64_to_js};
use super::{api, printer};
use crate::inferior::Stop;
use crate::os::regs::{self, REGISTER_NAMES};
use crate::os::signals;
use crate::session::stop::le_value;
use crate::session::watchpoints::WatchKind;
use crate::session::{BreakpointRef, Session, SignalMode, SpawnSpec, StopInfo};
use crate::symbols::{Insn, RuntimeAddr, SymKind};

/// `def!(n, ctx, "name", closure)`: sets a native function on the object `n`.
macro_rules! def {
    ($n:expr, $ctx:expr, $name:literal, $f:expr) => {
        $n.set($name, Function::new($ctx.clone(), $f)?)?;
    };
}

mod points;
mod process;
mod state;

type R<'js> = rquickjs::Result<Value<'js>>;

/// Throws a `ScryError`: scry's own errors print as `error: <message>`, without a JS class.
pub fn throw(ctx: &Ctx<'_>, msg: impl std::fmt::Display) -> rquickjs::Error {
    match Exception::from_message(ctx.clone(), &msg.to_string()) {
        Ok(e) => {
            let _ = e.as_object().set("name", "ScryError");
            ctx.throw(e.into_value())
        }
        Err(e) => e,
    }
}

fn address<'js>(ctx: &Ctx<'js>, host: &Host, v: &Value<'js>) -> rquickjs::Result<u64> {
    if let Some(s) = v.as_string() {
        let text = s.to_string()?;
        return host
            .session
            .borrow_mut()
            .resolve(&text)
            .map_err(|e| throw(ctx, e));
    }
    values::to_address(ctx, v).map_err(|e| throw(ctx, e))
}

fn undefined<'js>(ctx: &Ctx<'js>) -> Value<'js> {
    Value::new_undefined(ctx.clone())
}

/// Defines every native function on a fresh object.
pub fn install<'js>(ctx: &Ctx<'js>, host: &Rc<Host>) -> rquickjs::Result<Object<'js>> {
    let n = Object::new(ctx.clone())?;
    let h = host.clone();
    def!(n, ctx, "print", move |ctx: Ctx<'js>,
                                args: Rest<Value<'js>>|
          -> rquickjs::Result<()> {
        let text = printer::render_print_args(&ctx, &args.0)?;
        h.print(&text);
        Ok(())
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
    state::install(&n, ctx, host)?;
    points::install(&n, ctx, host)?;
    Ok(n)
}

//! JS: `print(...)`, `help(topic)`, what a built-in result's `toString()` says, and the global
//! names "did you mean" offers.

use super::*;
use crate::script::{api, printer};

/// The natives this file defines, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    t.def("print", print)?; // print(...)
    t.def("text", text)?; // String(result)
    t.def("global_names", global_names)?; // "did you mean" for a global
    t.def("help", help)?; // help(topic)
    Ok(())
}

fn print<'js>(h: &Host, ctx: Ctx<'js>, args: Rest<Value<'js>>) -> rquickjs::Result<()> {
    let text = printer::render_print_args(&ctx, &args.0, h.js_deadline.get())?;
    h.print(&text);
    Ok(())
}

/// What a value prints as: built-in results' toString.
fn text<'js>(h: &Host, ctx: Ctx<'js>, v: Value<'js>) -> rquickjs::Result<String> {
    printer::Printer::new(&ctx)
        .with_deadline(h.js_deadline.get())
        .render(&v)
}

fn global_names(_: &Host) -> Vec<&'static str> {
    api::global_names()
}

fn help<'js>(_: &Host, topic: Opt<Value<'js>>) -> rquickjs::Result<String> {
    let topic: Option<String> = match topic.0.filter(|v| !v.is_undefined()) {
        Some(v) => Some(v.get()?),
        None => None,
    };
    Ok(api::help(topic.as_deref()))
}

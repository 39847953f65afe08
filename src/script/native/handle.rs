//! The native handle of a typed value (a `TypedValue`: the image whose DWARF types it, and
//! where its bytes are), as the JS class the prelude wraps in a Proxy. Shared by the typed
//! value natives and the printers' natives.

use rquickjs::class::{JsClass, Readable, Trace, Tracer};
use rquickjs::Constructor;
use rquickjs::{Class, JsLifetime};

use super::*;
use crate::session::TypedValue;

/// The native half of a typed value.
pub(super) struct Handle(pub TypedValue);

impl<'js> Trace<'js> for Handle {
    fn trace<'a>(&self, _tracer: Tracer<'a, 'js>) {}
}

// SAFETY: `Handle` holds no JS values, so it is the same type at every lifetime.
unsafe impl<'js> JsLifetime<'js> for Handle {
    type Changed<'to> = Handle;
}

impl<'js> JsClass<'js> for Handle {
    const NAME: &'static str = "TypedValue";
    type Mutable = Readable;

    fn constructor(_ctx: &Ctx<'js>) -> rquickjs::Result<Option<Constructor<'js>>> {
        Ok(None)
    }
}

pub(super) type H<'js> = Class<'js, Handle>;

pub(super) fn handle<'js>(ctx: &Ctx<'js>, v: TypedValue) -> R<'js> {
    Ok(Class::instance(ctx.clone(), Handle(v))?.into_value())
}

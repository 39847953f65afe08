//! scry's own errors as JavaScript exceptions (`error: <message>`, no JS class name).

use rquickjs::{Constructor, Ctx, Object};

use super::record::Put;
use super::values;
use crate::session::SessionError;

/// The global (read-only, non-configurable, defined before any user code) holding the
/// `Error` constructor scry's errors are made with: a script cannot replace it.
pub(super) const ERROR_CTOR: &str = "__scryErrorCtor";

/// Throws a `ScryError`: scry's own errors print as `error: <message>`, without a JS class.
/// The error is constructed and named by definition, never by assignment, so no setter a
/// script defined runs while a native function may hold the session. Long messages are cut
/// (a 100 MB symbol name is not echoed back).
///
/// A session's "no value here" (`<optimized out>`: the value, or the part of it asked for,
/// has none at this pc) is marked `noValue: true`, so printers print such a part as it says
/// itself instead of calling the container invalid, and scripts may test it the same way.
pub(super) fn throw(ctx: &Ctx<'_>, msg: impl std::fmt::Display + 'static) -> rquickjs::Error {
    let no_value = matches!(
        (&msg as &dyn std::any::Any).downcast_ref::<SessionError>(),
        Some(SessionError::NoValue(_))
    );
    let text = msg.to_string();
    let text = values::clip_message(&text);
    let made = (|| -> rquickjs::Result<Object<'_>> {
        let ctor: Constructor = ctx.globals().get(ERROR_CTOR)?;
        let e: Object = ctor.construct((text.as_ref(),))?;
        e.put("name", "ScryError")?;
        if no_value {
            e.put("noValue", true)?;
        }
        Ok(e)
    })();
    match made {
        Ok(e) => ctx.throw(e.into_value()),
        Err(e) => e,
    }
}

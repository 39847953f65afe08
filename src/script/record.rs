//! Result objects built without running the user's code.
//!
//! `o.pid = 1` (rquickjs's `Object::set`, `Array::set`) is an assignment: it walks the
//! prototype chain and calls any setter a script put on `Object.prototype` or
//! `Array.prototype`, and scry often builds results while it holds the session. A setter that
//! touches `state` would then re-enter the session. Every field scry writes is therefore
//! *defined* as an own property (JS_DefineProperty), which never consults the prototype chain.
//! `clippy.toml` forbids `Object::set` and `Array::set` so new code cannot slip back.

use rquickjs::object::Property;
use rquickjs::{Array, IntoAtom, IntoJs, Object};

/// Defining own properties on scry's result objects.
pub(super) trait Put<'js> {
    /// An own, enumerable, writable, configurable property: what `o.key = v` would make on a
    /// plain object, minus the setters.
    fn put<K: IntoAtom<'js>, V: IntoJs<'js>>(&self, key: K, v: V) -> rquickjs::Result<()>;
}

impl<'js> Put<'js> for Object<'js> {
    fn put<K: IntoAtom<'js>, V: IntoJs<'js>>(&self, key: K, v: V) -> rquickjs::Result<()> {
        self.prop(
            key,
            Property::from(v).writable().enumerable().configurable(),
        )
    }
}

/// Appending to an array without `Array.prototype` setters (stays a fast array: the index
/// defined is always the current length).
pub(super) trait Push<'js> {
    fn push<V: IntoJs<'js>>(&self, v: V) -> rquickjs::Result<()>;
}

impl<'js> Push<'js> for Array<'js> {
    fn push<V: IntoJs<'js>>(&self, v: V) -> rquickjs::Result<()> {
        let index = u32::try_from(self.len()).unwrap_or(u32::MAX);
        self.as_object().put(index, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_defined_not_assigned() {
        let rt = rquickjs::Runtime::new().unwrap();
        let context = rquickjs::Context::full(&rt).unwrap();
        context.with(|ctx| {
            ctx.eval::<(), _>(
                "globalThis.hits = 0; \
                 for (const k of ['pid', '0']) { \
                   Object.defineProperty(Object.prototype, k, {set() { hits++ }, get() { return 'x' }, configurable: true}); \
                   Object.defineProperty(Array.prototype, k, {set() { hits++ }, get() { return 'x' }, configurable: true}); }",
            )
            .unwrap();
            let o = Object::new(ctx.clone()).unwrap();
            o.put("pid", 7).unwrap();
            let a = Array::new(ctx.clone()).unwrap();
            a.push(1).unwrap();
            a.push(2).unwrap();
            ctx.globals().put("o", o).unwrap();
            ctx.globals().put("a", a).unwrap();
            let seen: String = ctx
                .eval("`${hits} ${o.pid} ${a[0]} ${a.length} ${Object.keys(o)}`")
                .unwrap();
            assert_eq!(seen, "0 7 1 2 pid");
        });
    }
}

//! JS: what `printers` (printers.js and the library printers) read values with, and
//! `Pretty` implemented by calling those JavaScript printers through the functions they leave
//! on a fixed global. Which type names a printer claims is cached by name until the printers
//! change, so a value no printer claims costs no call into JavaScript.

use std::sync::Arc;

use rquickjs::Class;

use super::handle::{handle, Handle, H};
use super::*;
use crate::session::TypedValue;
use crate::symbols::dwarf::path::Path;
use crate::symbols::dwarf::pretty::{Child, Pretty, PrintError, Printed, Shape};
use crate::symbols::dwarf::{Type, Value as DwarfValue};
use crate::symbols::ModuleFile;

/// The natives this file defines, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    t.def("printers_changed", changed)?; // printers.add / printers.remove
    t.def("val_printable", printable)?; // what a printer is asked
    t.def("val_param_at", param_at)?; // a template parameter value at an address
    t.def("val_param_size", param_size)?; // its size
    t.def("val_param_align", param_align)?; // its alignment
    t.def("val_as", as_type)?; // v's type at another address
    t.def("val_dyn", dyn_type)?; // a trait object's concrete type
    t.def("val_read", read)?; // one number of memory, read only
    t.def("val_bytes", bytes)?; // bytes of memory, read only
    t.def("val_literal", literal)?; // text of memory, quoted
    t.def("val_chars", chars)?; // text of memory, whole
    t.def("symbol_peek", symbol_peek)?; // the symbol at an address, known modules only
    Ok(())
}

/// A printer was added or removed: which types are claimed is asked again.
fn changed(h: &Host) {
    h.pretty_claims.borrow_mut().clear();
}

/// What a printer is asked for: the object itself (a reference followed) and the
/// qualified name of its type; undefined for a value no printer can claim.
fn printable<'js>(h: &Host, ctx: Ctx<'js>, v: H<'js>) -> R<'js> {
    let tv = v.borrow().0.clone();
    let Some((name, obj)) = h.session_ref(&ctx)?.value_printable(&tv) else {
        return Ok(undefined(&ctx));
    };
    let a = Array::new(ctx.clone())?;
    a.push(name)?;
    a.push(handle(&ctx, obj)?)?;
    Ok(a.into_value())
}

/// What printers read containers with: a value of a template parameter's type at an
/// address, and that type's size.
fn param_at<'js>(h: &Host, ctx: Ctx<'js>, v: H<'js>, i: f64, addr: Value<'js>) -> R<'js> {
    let addr = values::to_address(&ctx, &addr).or_throw(&ctx)?;
    let tv = v.borrow().0.clone();
    let p = h
        .session_ref(&ctx)?
        .value_param_at(&tv, i.max(0.0) as usize, addr)
        .or_throw(&ctx)?;
    handle(&ctx, p)
}

fn param_size<'js>(h: &Host, ctx: Ctx<'js>, v: H<'js>, i: f64) -> R<'js> {
    let tv = v.borrow().0.clone();
    let size = h
        .session_ref(&ctx)?
        .value_param_size(&tv, i.max(0.0) as usize)
        .or_throw(&ctx)?;
    u64_to_js(&ctx, size)
}

/// And its alignment: where a node of a list, tree or hash table keeps the value.
fn param_align<'js>(h: &Host, ctx: Ctx<'js>, v: H<'js>, i: f64) -> R<'js> {
    let tv = v.borrow().0.clone();
    let align = h
        .session_ref(&ctx)?
        .value_param_align(&tv, i.max(0.0) as usize)
        .or_throw(&ctx)?;
    u64_to_js(&ctx, align)
}

/// A value of `v`'s type at another address (the next node of a tree).
fn as_type<'js>(_: &Host, ctx: Ctx<'js>, v: H<'js>, addr: Value<'js>) -> R<'js> {
    let addr = values::to_address(&ctx, &addr).or_throw(&ctx)?;
    let tv = v.borrow().0.clone();
    handle(
        &ctx,
        TypedValue {
            file: tv.file.clone(),
            value: crate::symbols::dwarf::Value::at(tv.value.ty, addr),
        },
    )
}

/// A Rust trait object's concrete type: `[name, value at data]` from its vtable's address
/// (the value undefined when DWARF gives the name only); undefined for no vtable there.
fn dyn_type<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    v: H<'js>,
    vtable: Value<'js>,
    data: Value<'js>,
) -> R<'js> {
    let vtable = values::to_address(&ctx, &vtable).or_throw(&ctx)?;
    let data = values::to_address(&ctx, &data).or_throw(&ctx)?;
    let tv = v.borrow().0.clone();
    let Some((name, value)) = h.session_ref(&ctx)?.value_dyn(&tv, vtable, data) else {
        return Ok(undefined(&ctx));
    };
    let a = Array::new(ctx.clone())?;
    a.push(name)?;
    match value {
        Some(value) => a.push(handle(&ctx, value)?)?,
        None => a.push(undefined(&ctx))?,
    }
    Ok(a.into_value())
}

/// One number of memory (`u64`, `i32`, ...), read without a session write.
fn read<'js>(h: &Host, ctx: Ctx<'js>, at: Value<'js>, k: String) -> R<'js> {
    let k = super::mem_kind::kind(&ctx, &k)?;
    let addr = values::to_address(&ctx, &at).or_throw(&ctx)?;
    let bytes = h
        .session_ref(&ctx)?
        .peek_memory(addr, k.size())
        .or_throw(&ctx)?;
    k.decode(&ctx, &bytes)
}

/// Bytes of memory as an array of numbers (a hash table's control bytes).
fn bytes<'js>(h: &Host, ctx: Ctx<'js>, at: Value<'js>, len: Value<'js>) -> R<'js> {
    let addr = values::to_address(&ctx, &at).or_throw(&ctx)?;
    let len = values::to_count(&ctx, &len, 1 << 20, "bytes(n)").or_throw(&ctx)?;
    let bytes = h
        .session_ref(&ctx)?
        .peek_memory(addr, len as usize)
        .or_throw(&ctx)?;
    Ok(rquickjs::TypedArray::<u8>::new(ctx.clone(), bytes)?.into_value())
}

/// `count` code units of `unit` bytes at `addr` as scry quotes text, at most `max`
/// characters shown (a `…` says there were more).
fn literal<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    at: Value<'js>,
    count: f64,
    unit: f64,
    max: f64,
    wide: Opt<bool>,
) -> rquickjs::Result<String> {
    let addr = values::to_address(&ctx, &at).or_throw(&ctx)?;
    let unit = code_unit(unit);
    let max = (max.max(0.0) as usize).min(1 << 16);
    let count = count.max(0.0) as u64;
    let shown = count.min(max as u64 * 4 / unit as u64 + 4) as usize;
    let bytes = h
        .session_ref(&ctx)?
        .peek_memory(addr, shown * unit)
        .or_throw(&ctx)?;
    let mut text =
        crate::symbols::dwarf::for_printers::quoted(&bytes, unit, max, wide.0.unwrap_or(false));
    if (shown as u64) < count && !text.ends_with('…') {
        text.push('…');
    }
    Ok(text)
}

/// `count` code units of `unit` bytes at `addr`, the text itself, whole: what a string is
/// as plain data (`s.value`, `s == '...'`). Past the plain-data bound it is refused, never cut.
fn chars<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    at: Value<'js>,
    count: f64,
    unit: f64,
) -> rquickjs::Result<String> {
    let addr = values::to_address(&ctx, &at).or_throw(&ctx)?;
    let unit = code_unit(unit);
    let max = crate::symbols::dwarf::MAX_PLAIN_TEXT;
    let bytes = count.max(0.0) * unit as f64;
    if bytes > max as f64 {
        return Err(throw(
            &ctx,
            format!(
                "a string of {bytes} bytes is more than plain data takes whole ({} MiB); \
                 read parts with state.memory(addr).bytes(n) or .str(max)",
                max >> 20
            ),
        ));
    }
    let bytes = h
        .session_ref(&ctx)?
        .peek_memory(addr, bytes as usize)
        .or_throw(&ctx)?;
    Ok(match unit {
        1 => String::from_utf8_lossy(&bytes).into_owned(),
        2 => String::from_utf16_lossy(
            &bytes
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect::<Vec<_>>(),
        ),
        _ => bytes
            .chunks_exact(4)
            .map(|c| {
                char::from_u32(u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .unwrap_or(char::REPLACEMENT_CHARACTER)
            })
            .collect(),
    })
}

/// A code unit's size in bytes as the printers give it (1, 2 or 4; anything else is 1).
fn code_unit(unit: f64) -> usize {
    match unit as usize {
        u @ (1 | 2 | 4) => u,
        _ => 1,
    }
}

/// The symbol at an address from the modules known now (a std::function's target).
fn symbol_peek<'js>(h: &Host, ctx: Ctx<'js>, at: Value<'js>) -> R<'js> {
    let addr = values::to_address(&ctx, &at).or_throw(&ctx)?;
    match h.session_ref(&ctx)?.symbolize_known(addr) {
        Some(s) => Ok(rquickjs::String::from_str(ctx.clone(), &s)?.into_value()),
        None => Ok(Value::new_null(ctx.clone())),
    }
}

/// The global (fixed at start, before user code) holding `{claims, print}`.
pub(super) const PRETTY_GLOBAL: &str = "__scryPrinters";

/// The JavaScript printers for values of one module's DWARF.
pub(super) struct JsPretty<'a, 'js> {
    ctx: Ctx<'js>,
    host: &'a Host,
    file: Arc<ModuleFile>,
    /// A printer was stopped by the chunk's time budget or a signal to scry: what it was
    /// printing has no answer, and the call that asked must fail (see `check`).
    interrupted: std::cell::Cell<bool>,
}

impl<'a, 'js> JsPretty<'a, 'js> {
    pub(super) fn new(ctx: &Ctx<'js>, host: &'a Host, v: &TypedValue) -> JsPretty<'a, 'js> {
        JsPretty {
            ctx: ctx.clone(),
            host,
            file: v.file.clone(),
            interrupted: std::cell::Cell::new(false),
        }
    }

    /// Fails as the engine's interruption does when a printer was interrupted while this
    /// call's value was printed. Without it the printer's failure was the value: `.value`
    /// answered the string "printer error: interrupted" and the chunk ended `ok`.
    pub(super) fn check(&self) -> rquickjs::Result<()> {
        if !self.interrupted.get() {
            return Ok(());
        }
        let e = rquickjs::Exception::from_message(self.ctx.clone(), "interrupted")?;
        e.as_object().put("name", "InternalError")?;
        Err(self.ctx.throw(e.into_value()))
    }

    /// The budget the interrupt handler enforces has run out, or a signal asks scry to stop.
    fn out_of_time(&self) -> bool {
        self.host
            .js_deadline
            .get()
            .is_some_and(|d| std::time::Instant::now() > d)
            || crate::session::signal_pending()
    }

    fn hook(&self, name: &str) -> Option<Function<'js>> {
        let o: Object = self.ctx.globals().get(PRETTY_GLOBAL).ok()?;
        o.get(name).ok()
    }

    /// The pending exception's message (and clears it, so it cannot leak into the next
    /// native call's result).
    fn caught(&self) -> String {
        let e = self.ctx.catch();
        if let Some(o) = e.as_object() {
            if let Ok(m) = o.get::<_, String>("message") {
                return m;
            }
        }
        e.as_string()
            .and_then(|s| s.to_string().ok())
            .unwrap_or_else(|| "interrupted".into())
    }

    /// Whether a printer claims the type named `name` (cached by name).
    pub(super) fn claims_name(&self, name: &str) -> bool {
        if let Some(known) = self.host.pretty_claims.borrow().get(name) {
            return known;
        }
        let Some(claims) = self.hook("claims") else {
            return false;
        };
        let known = match claims.call::<_, bool>((name,)) {
            Ok(b) => b,
            Err(_) => {
                self.caught();
                false
            }
        };
        self.host.pretty_claims.borrow_mut().insert(name, known);
        known
    }

    fn child(&self, v: &Value<'js>) -> Child {
        if let Ok(h) = Class::<Handle>::from_value(v) {
            let tv = &h.borrow().0;
            // A value of another module's DWARF cannot be rendered with this one's types.
            if Arc::ptr_eq(&tv.file, &self.file) {
                return Child::Value(tv.value.clone());
            }
            return Child::Text("<value of another module>".into());
        }
        if let Some(b) = v.as_bool() {
            return Child::Bool(b);
        }
        if let Some(n) = v.as_number() {
            return Child::Number(n);
        }
        Child::Text(
            v.as_string()
                .and_then(|s| s.to_string().ok())
                .unwrap_or_default(),
        )
    }
}

impl Pretty for JsPretty<'_, '_> {
    fn claims(&self, _ty: &Type, name: &str) -> bool {
        self.claims_name(name)
    }

    fn print(&self, v: &DwarfValue, want: usize, text: bool) -> Result<Printed, PrintError> {
        let print = self.hook("print").ok_or(PrintError::NotInstalled)?;
        let tv = TypedValue {
            file: self.file.clone(),
            value: v.clone(),
        };
        let h = Class::instance(self.ctx.clone(), Handle(tv))
            .map_err(|e| PrintError::Engine(e.to_string()))?;
        let r: Value = match print.call((h, want as f64, text)) {
            Ok(r) => r,
            Err(_) => {
                let why = self.caught();
                if self.out_of_time() {
                    self.interrupted.set(true);
                }
                return Err(PrintError::Failed(why));
            }
        };
        // A string is the printer's failure, said whole by printers.js; text is all that
        // crosses from JavaScript, and a part with no value there kept its `<…>` form.
        if let Some(s) = r.as_string() {
            let said = s.to_string().unwrap_or_default();
            return Err(match said.starts_with('<') {
                true => PrintError::Missing(said),
                false => PrintError::Said(said),
            });
        }
        let a = Array::from_value(r).map_err(|_| PrintError::Failed("bad result".into()))?;
        let summary: String = a.get(0).unwrap_or_default();
        let shape = match a.get::<String>(1).unwrap_or_default().as_str() {
            "list" => Shape::List,
            "map" => Shape::Map,
            "pointer" => Shape::Pointer,
            "value" => Shape::Value,
            _ => Shape::Summary,
        };
        let mut items = Vec::new();
        if let Ok(list) = a.get::<Array>(2) {
            for pair in list.iter::<Array>().take(want.max(1)) {
                let Ok(pair) = pair else { continue };
                let key: Value = pair
                    .get(0)
                    .unwrap_or_else(|_| Value::new_null(self.ctx.clone()));
                let value: Value = pair
                    .get(1)
                    .unwrap_or_else(|_| Value::new_null(self.ctx.clone()));
                let key = (!key.is_null() && !key.is_undefined()).then(|| self.child(&key));
                items.push((key, self.child(&value)));
            }
        }
        let more = a
            .get::<Option<f64>>(3)
            .ok()
            .flatten()
            .filter(|n| n.is_finite() && *n >= 0.0)
            .map(|n| n as u64);
        let truncated = a.get::<bool>(4).unwrap_or(false);
        let text = a.get::<Option<String>>(5).ok().flatten();
        let run = a.get::<Option<Array>>(6).ok().flatten().and_then(|r| {
            let first = self.child(&r.get::<Value>(0).ok()?);
            let n = r
                .get::<f64>(1)
                .ok()
                .filter(|n| n.is_finite() && *n >= 0.0)?;
            match first {
                Child::Value(v) => Some((v, n as u64)),
                _ => None,
            }
        });
        let empty = a.get::<bool>(7).unwrap_or(false);
        let ordered = a.get::<bool>(8).unwrap_or(false);
        Ok(Printed {
            ordered,
            text,
            run,
            empty,
            summary,
            shape,
            items,
            more,
            truncated,
        })
    }
}

/// A part with no value here, named by the part of the path it is (`h: <optimized out>` for
/// `nb[h]`, `nx: <optimized out>` for `nx->val`): the error said only `<optimized out>`.
fn gone_named(ctx: &Ctx<'_>, part: &Path, e: crate::session::SessionError) -> rquickjs::Error {
    match e {
        crate::session::SessionError::NoValue(msg) if msg.starts_with('<') => throw(
            ctx,
            crate::session::SessionError::NoValue(format!("{part}: {msg}")),
        ),
        e => throw(ctx, e),
    }
}

/// A value path (`shop.stock["nuts"]`, `sp->x`, `v[2]`, `*opt`) walked with the printers:
/// each step a printer claims (an element, a key, what a smart pointer holds) goes through
/// it, every other step through the value's layout.
pub(super) fn walk_path<'js>(
    ctx: &Ctx<'js>,
    host: &Host,
    p: &Path,
    frame: usize,
) -> rquickjs::Result<TypedValue> {
    let fail = |e: crate::session::SessionError| throw(ctx, e);
    match p {
        Path::Name(_) | Path::InFile { .. } | Path::Number(_) | Path::Text(_) => {
            host.session_mut(ctx)?.path_root(p, frame).map_err(fail)
        }
        Path::Member(base, name) => {
            let v = walk_path(ctx, host, base, frame)?;
            let arg = name.as_str().into_js(ctx)?;
            if let Some(x) = printed_step(ctx, &v, "member", arg)? {
                return Ok(x);
            }
            host.session_ref(ctx)?
                .value_member(&v, name)
                .map_err(|e| gone_named(ctx, base, e))
        }
        Path::Index(base, index) => {
            let v = walk_path(ctx, host, base, frame)?;
            let (op, arg, i) = match index.as_ref() {
                Path::Number(i) => ("index", values::i64_to_js(ctx, *i)?, Some(*i)),
                Path::Text(key) => ("key", key.as_str().into_js(ctx)?, None),
                other => {
                    let iv = walk_path(ctx, host, other, frame)?;
                    let i = host
                        .session_ref(ctx)?
                        .value_index_number(&iv)
                        .map_err(|e| gone_named(ctx, other, e))?;
                    ("index", values::i64_to_js(ctx, i)?, Some(i))
                }
            };
            if let Some(x) = printed_step(ctx, &v, op, arg)? {
                return Ok(x);
            }
            let Some(i) = i else {
                let name = host.session_ref(ctx)?.value_type_name(&v);
                return Err(throw(
                    ctx,
                    format!("{name} has no keys: [\"...\"] is for maps a printer reads"),
                ));
            };
            host.session_ref(ctx)?
                .value_index(&v, i)
                .map_err(|e| gone_named(ctx, base, e))
        }
        Path::Deref(inner) => {
            let v = walk_path(ctx, host, inner, frame)?;
            let none = Value::new_undefined(ctx.clone());
            if let Some(x) = printed_step(ctx, &v, "deref", none)? {
                return Ok(x);
            }
            host.session_ref(ctx)?
                .value_deref(&v)
                .map_err(|e| gone_named(ctx, inner, e))
        }
        Path::AddressOf(inner) => {
            let v = walk_path(ctx, host, inner, frame)?;
            host.session_ref(ctx)?.value_address_of(&v).map_err(fail)
        }
        Path::Cast(ty, inner) => match inner.as_ref() {
            Path::Number(a) => host.session_ref(ctx)?.number_cast(*a, ty).map_err(fail),
            other => {
                let v = walk_path(ctx, host, other, frame)?;
                host.session_ref(ctx)?.value_cast(&v, ty).map_err(fail)
            }
        },
    }
}

/// One path step through the printer of `v`'s type (printers.js `step`): `None` when no
/// printer claims it or the step is the layout's (a member the type itself has).
fn printed_step<'js>(
    ctx: &Ctx<'js>,
    v: &TypedValue,
    op: &str,
    arg: Value<'js>,
) -> rquickjs::Result<Option<TypedValue>> {
    let Ok(o) = ctx.globals().get::<_, Object>(PRETTY_GLOBAL) else {
        return Ok(None);
    };
    let step: Function = o.get("step")?;
    let h = Class::instance(ctx.clone(), Handle(v.clone()))?;
    let r: Value = step.call((h, op, arg))?;
    if r.is_undefined() || r.is_null() {
        return Ok(None);
    }
    let h = Class::<Handle>::from_value(&r)?;
    let tv = h.borrow().0.clone();
    Ok(Some(tv))
}

//! JS: `dom` (dom.js) and `view()`: thin conversions to the live view's script-area model.
//! Every call only changes the model; the view publishes it (see `script::feed`).

use super::*;
use crate::view::canvas::PixelFormat;
use crate::view::dom::Key;

/// Bytes a JS string carries one per character (Latin-1): how pixel bytes cross from JS,
/// where a typed array's memory is out of safe reach.
fn latin1_bytes(ctx: &Ctx<'_>, s: &str) -> rquickjs::Result<Vec<u8>> {
    s.chars()
        .map(|c| u8::try_from(u32::from(c)))
        .collect::<Result<Vec<u8>, _>>()
        .map_err(|_| throw(ctx, "internal: pixel bytes out of range"))
}

/// Where `putImageData` writes and how its bytes are laid out.
struct Placement {
    dx: u32,
    dy: u32,
    w: Option<u32>,
    h: Option<u32>,
    format: PixelFormat,
}

impl Placement {
    fn from_js<'js>(ctx: &Ctx<'js>, o: &Object<'js>) -> rquickjs::Result<Placement> {
        let get = |key: &str| -> rquickjs::Result<Option<u32>> {
            let v: Value = o.get(key)?;
            if v.is_undefined() || v.is_null() {
                return Ok(None);
            }
            match v.as_number() {
                Some(n) if n.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&n) => {
                    Ok(Some(n as u32))
                }
                _ => Err(throw(
                    ctx,
                    format!(
                        "putImageData: {key} must be a whole number of pixels, got {}",
                        values::describe(ctx, &v)
                    ),
                )),
            }
        };
        let format: Option<String> = o.get("format")?;
        Ok(Placement {
            dx: get("dx")?.unwrap_or(0),
            dy: get("dy")?.unwrap_or(0),
            w: get("w")?,
            h: get("h")?,
            format: format_of(ctx, format)?,
        })
    }
}

fn format_of(ctx: &Ctx<'_>, name: Option<String>) -> rquickjs::Result<PixelFormat> {
    match name {
        None => Ok(PixelFormat::Rgba),
        Some(n) => PixelFormat::parse(&n).ok_or_else(|| {
            throw(
                ctx,
                format!(
                    "putImageData: format '{n}' is not one of {}",
                    PixelFormat::NAMES
                ),
            )
        }),
    }
}

/// The natives this file defines, by the names dom.js calls them.
pub(super) fn install<'js>(t: &Natives<'_, 'js>) -> rquickjs::Result<()> {
    // Every model call has the same shape: borrow, do, turn a refusal into a ScryError.
    macro_rules! model {
        ($name:literal, |$ctx:ident, $dom:ident $(, $arg:ident : $t:ty)*| -> $ret:ty $body:block) => {{
            t.def($name, |h: &Host, $ctx: Ctx<'js> $(, $arg: $t)*| -> rquickjs::Result<$ret> {
                let $dom = &mut *h.dom.borrow_mut();
                let out: Result<$ret, String> = $body;
                out.or_throw(&$ctx)
            })?;
        }};
    }

    model!("dom_id", |ctx, dom, id: String| -> Key { dom.by_id(&id) });
    model!("dom_create", |ctx, dom, tag: String| -> Key {
        dom.create(&tag)
    });
    model!("dom_canvas", |ctx,
                          dom,
                          id: String,
                          w: f64,
                          h: f64|
     -> Key {
        let side = |v: f64| (v.fract() == 0.0 && (0.0..=1e6).contains(&v)).then_some(v as u32);
        match (side(w), side(h)) {
            (Some(w), Some(h)) => dom.canvas(&id, w, h),
            _ => Err(format!(
                "dom.canvas(id, w, h): w and h must be whole numbers, got {w} and {h}"
            )),
        }
    });
    model!("dom_clear", |ctx, dom| -> () {
        dom.clear();
        Ok(())
    });
    model!("dom_count", |ctx, dom| -> usize { Ok(dom.len()) });
    model!("dom_tag", |ctx, dom, k: Key| -> String {
        dom.tag(k).map(str::to_string)
    });
    model!("dom_get_id", |ctx, dom, k: Key| -> Option<String> {
        dom.id(k)
    });
    model!("dom_text", |ctx, dom, k: Key| -> String { dom.text(k) });
    model!("dom_set_text", |ctx, dom, k: Key, text: String| -> bool {
        dom.set_text(k, &text)
    });
    model!("dom_html", |ctx, dom, k: Key| -> String {
        dom.inner_html(k)
    });
    model!("dom_outer", |ctx, dom, k: Key| -> String {
        dom.outer_html(k)
    });
    model!("dom_set_html", |ctx, dom, k: Key, html: String| -> bool {
        dom.set_html(k, &html)
    });
    model!("dom_attr", |ctx,
                        dom,
                        k: Key,
                        name: String|
     -> Option<String> { dom.attr(k, &name) });
    model!("dom_set_attr", |ctx,
                            dom,
                            k: Key,
                            name: String,
                            value: String|
     -> () {
        dom.set_attr(k, &name, &value)
    });
    model!("dom_remove_attr", |ctx, dom, k: Key, name: String| -> () {
        dom.remove_attr(k, &name)
    });
    model!("dom_style", |ctx, dom, k: Key, prop: String| -> String {
        dom.style(k, &prop)
    });
    model!("dom_set_style", |ctx,
                             dom,
                             k: Key,
                             prop: String,
                             value: String|
     -> () {
        dom.set_style(k, &prop, &value)
    });
    model!("dom_append", |ctx, dom, parent: Key, child: Key| -> () {
        dom.append(parent, child)
    });
    model!("dom_remove", |ctx, dom, k: Key| -> () { dom.remove(k) });
    model!("dom_children", |ctx, dom, k: Key| -> Vec<Key> {
        dom.children(k)
    });
    model!("dom_parent", |ctx, dom, k: Key| -> Option<Key> {
        dom.parent(k)
            .map(|p| p.filter(|p| *p != crate::view::dom::ROOT))
    });
    model!("dom_size", |ctx, dom, k: Key| -> Vec<u32> {
        dom.canvas_size(k).map(|(w, h)| vec![w, h])
    });

    t.def("dom_put", put)?; // ctx2d.putImageData(data, dx, dy)
    t.def("dom_put_memory", put_memory)?; // ctx2d.putImageData(addr, ...)
    t.def("view_url", view_url)?; // view()
    Ok(())
}

/// putImageData from bytes (a Latin-1 string, one character per byte). `at` is
/// `{dx, dy, w, h, format}`.
fn put<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    k: Key,
    bytes: String,
    at: Object<'js>,
) -> rquickjs::Result<()> {
    let src = latin1_bytes(&ctx, &bytes)?;
    let p = Placement::from_js(&ctx, &at)?;
    h.dom
        .borrow_mut()
        .put_pixels(k, &src, p.dx, p.dy, p.w, p.h, p.format)
        .or_throw(&ctx)
}

/// putImageData straight from target memory: the bytes never enter JavaScript.
fn put_memory<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    k: Key,
    addr: Value<'js>,
    at: Object<'js>,
) -> rquickjs::Result<()> {
    let addr = address(&ctx, h, &addr)?;
    let p = Placement::from_js(&ctx, &at)?;
    let size = h.dom.borrow().canvas_size(k).or_throw(&ctx)?;
    let (w, hh) =
        crate::view::canvas::region(size, p.dx, p.dy, p.w, p.h, p.format, None).or_throw(&ctx)?;
    let len = w as usize * hh as usize * p.format.bytes_per_pixel();
    let src = h
        .session_mut(&ctx)?
        .read_memory(addr, len)
        .map_err(|e| throw(&ctx, format!("putImageData: {e}")))?;
    h.dom
        .borrow_mut()
        .put_pixels(k, &src, p.dx, p.dy, Some(w), Some(hh), p.format)
        .or_throw(&ctx)
}

fn view_url(h: &Host) -> Option<String> {
    h.view_url()
}

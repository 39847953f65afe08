//! The script area of the page as scripts change it: a small tree of elements kept on the
//! engine's thread. Changes only touch this model and mark elements dirty; the publisher takes
//! the dirty ones at most ~30 times a second, so a listener writing at every step costs a
//! hash lookup and a string copy, and the page gets the last state of each element.
//!
//! Ids are unique keys: `by_id` finds or creates. Removing an element (or replacing its
//! content with text or markup) deletes it and everything under it from the model, so a loop
//! that creates and removes elements never grows it.

use std::collections::HashMap;
use std::sync::Arc;

use super::canvas::{Canvas, PixelFormat};
use super::sanitize;

/// At most this many elements at once.
pub(crate) const MAX_ELEMENTS: usize = 10_000;
/// Bytes of text or markup one element may hold.
pub(crate) const MAX_CONTENT: usize = 256 * 1024;
/// Attributes and style properties per element.
pub(crate) const MAX_ATTRS: usize = 64;
/// Bytes of one attribute value.
pub(crate) const MAX_ATTR_VALUE: usize = 16 * 1024;
/// Pixels of all canvases together (4 bytes each).
pub(crate) const MAX_CANVAS_PIXELS: u64 = 4 * 1024 * 1024;
/// Tree depth.
const MAX_DEPTH: usize = 64;

pub(crate) type Key = u32;

/// What an element holds: child elements, plain text, or sanitized markup.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    Kids(Vec<Key>),
    Text(String),
    Html(String),
}

#[derive(Debug, Clone)]
pub struct Element {
    pub key: Key,
    pub tag: &'static str,
    pub svg: bool,
    pub id: Option<String>,
    /// Attributes other than `id` and `style`, in the order first set.
    pub attrs: Vec<(String, String)>,
    pub style: Vec<(String, String)>,
    pub content: Content,
    pub canvas: Option<Canvas>,
    /// `None` while detached (made by `create`, not appended yet); [`ROOT`] at the top.
    pub parent: Option<Key>,
    dirty: bool,
}

/// The parent key of top-level elements: the page's script area.
pub(crate) const ROOT: Key = 0;

/// What changed since the last [`DomModel::take_changes`].
#[derive(Debug, Default)]
pub struct Changes {
    pub elements: Vec<Arc<Element>>,
    pub removed: Vec<Key>,
    /// The script area's children, when they changed.
    pub root: Option<Vec<Key>>,
}

#[derive(Default)]
pub(crate) struct DomModel {
    /// Changes are recorded only while a view shows them.
    tracking: bool,
    elements: HashMap<Key, Element>,
    ids: HashMap<String, Key>,
    root: Vec<Key>,
    next_key: Key,
    dirty: Vec<Key>,
    removed: Vec<Key>,
    root_dirty: bool,
    canvas_pixels: u64,
}

pub(crate) type Result<T> = std::result::Result<T, String>;

impl DomModel {
    /// Starts recording changes for a view: everything there is counts as changed.
    pub(crate) fn track(&mut self) {
        self.tracking = true;
        self.dirty = self.elements.keys().copied().collect();
        for el in self.elements.values_mut() {
            el.dirty = true;
        }
        self.root_dirty = true;
    }

    /// Whether anything changed since the last `take_changes`.
    pub(crate) fn is_dirty(&self) -> bool {
        !self.dirty.is_empty() || !self.removed.is_empty() || self.root_dirty
    }

    pub(crate) fn len(&self) -> usize {
        self.elements.len()
    }

    fn get(&self, k: Key) -> Result<&Element> {
        self.elements
            .get(&k)
            .ok_or_else(|| "dom: this element was removed".to_string())
    }

    /// The element, marked changed.
    fn touch(&mut self, k: Key) -> Result<&mut Element> {
        let el = self
            .elements
            .get_mut(&k)
            .ok_or_else(|| "dom: this element was removed".to_string())?;
        if self.tracking && !el.dirty {
            el.dirty = true;
            self.dirty.push(k);
        }
        Ok(el)
    }

    fn new_element(&mut self, tag: &'static str, svg: bool) -> Result<Key> {
        if self.elements.len() >= MAX_ELEMENTS {
            return Err(format!(
                "dom: at most {MAX_ELEMENTS} elements (remove some, or dom.clear())"
            ));
        }
        self.next_key = self.next_key.wrapping_add(1).max(1);
        while self.elements.contains_key(&self.next_key) {
            self.next_key = self.next_key.wrapping_add(1).max(1);
        }
        let k = self.next_key;
        self.elements.insert(
            k,
            Element {
                key: k,
                tag,
                svg,
                id: None,
                attrs: Vec::new(),
                style: Vec::new(),
                content: Content::Kids(Vec::new()),
                canvas: None,
                parent: None,
                dirty: self.tracking,
            },
        );
        if self.tracking {
            self.dirty.push(k);
        }
        Ok(k)
    }

    /// The element with this id; a new `<div>` at the end of the script area when none has it.
    pub(crate) fn by_id(&mut self, id: &str) -> Result<Key> {
        if let Some(k) = self.ids.get(id) {
            return Ok(*k);
        }
        check_id(id)?;
        let k = self.new_element("div", false)?;
        self.set_id(k, id)?;
        self.attach(ROOT, k)?;
        Ok(k)
    }

    /// The element with this id, if any (the tests look elements up by id).
    #[cfg(test)]
    pub(crate) fn find(&self, id: &str) -> Option<Key> {
        self.ids.get(id).copied()
    }

    /// A detached element (append it somewhere to show it).
    pub(crate) fn create(&mut self, tag: &str) -> Result<Key> {
        let (tag, svg) = sanitize::allowed_tag(tag).ok_or_else(|| {
            format!("dom: no element '{tag}' (allowed: HTML text and layout elements, table parts, img, canvas, svg shapes)")
        })?;
        let k = self.new_element(tag, svg)?;
        if tag == "canvas" {
            self.make_canvas(k, 300, 150)?;
        }
        Ok(k)
    }

    /// The canvas with this id, created at the end of the script area or resized as asked (a
    /// resize clears it, as in a browser).
    pub(crate) fn canvas(&mut self, id: &str, w: u32, h: u32) -> Result<Key> {
        match self.ids.get(id).copied() {
            Some(k) => {
                let el = self.get(k)?;
                let (tag, size) = (el.tag, el.canvas.as_ref().map(|c| (c.width, c.height)));
                match size {
                    None => Err(format!("dom: '{id}' is a {tag}, not a canvas")),
                    Some(size) if size == (w, h) => Ok(k),
                    Some(_) => {
                        self.make_canvas(k, w, h)?;
                        Ok(k)
                    }
                }
            }
            None => {
                check_id(id)?;
                let k = self.new_element("canvas", false)?;
                if let Err(e) = self.make_canvas(k, w, h) {
                    self.delete(k);
                    return Err(e);
                }
                self.set_id(k, id)?;
                self.attach(ROOT, k)?;
                Ok(k)
            }
        }
    }

    fn make_canvas(&mut self, k: Key, w: u32, h: u32) -> Result<()> {
        let old = self.get(k)?.canvas.as_ref().map_or(0, |c| c.pixels());
        let new = Canvas::check_size(w, h)?;
        if self.canvas_pixels - old + new > MAX_CANVAS_PIXELS {
            return Err(format!(
                "dom: canvases hold at most {MAX_CANVAS_PIXELS} pixels together ({} in use)",
                self.canvas_pixels - old
            ));
        }
        self.canvas_pixels = self.canvas_pixels - old + new;
        let el = self.touch(k)?;
        el.canvas = Some(Canvas::new(w, h));
        set_pair(&mut el.attrs, "width", w.to_string());
        set_pair(&mut el.attrs, "height", h.to_string());
        Ok(())
    }

    /// Writes pixels into a canvas (see [`Canvas::put`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn put_pixels(
        &mut self,
        k: Key,
        src: &[u8],
        dx: u32,
        dy: u32,
        w: Option<u32>,
        h: Option<u32>,
        format: PixelFormat,
    ) -> Result<()> {
        let el = self.touch(k)?;
        let canvas = el
            .canvas
            .as_mut()
            .ok_or_else(|| format!("dom: putImageData needs a canvas, not a {}", el.tag))?;
        canvas.put(src, dx, dy, w, h, format)
    }

    /// The size of a canvas.
    pub(crate) fn canvas_size(&self, k: Key) -> Result<(u32, u32)> {
        let el = self.get(k)?;
        el.canvas
            .as_ref()
            .map(|c| (c.width, c.height))
            .ok_or_else(|| format!("dom: a {} is not a canvas", el.tag))
    }

    pub(crate) fn tag(&self, k: Key) -> Result<&'static str> {
        Ok(self.get(k)?.tag)
    }

    pub(crate) fn id(&self, k: Key) -> Result<Option<String>> {
        Ok(self.get(k)?.id.clone())
    }

    pub(crate) fn set_id(&mut self, k: Key, id: &str) -> Result<()> {
        if id.is_empty() {
            let old = self.touch(k)?.id.take();
            if let Some(old) = old {
                self.ids.remove(&old);
            }
            return Ok(());
        }
        check_id(id)?;
        match self.ids.get(id) {
            Some(other) if *other == k => return Ok(()),
            Some(_) => return Err(format!("dom: another element has id '{id}'")),
            None => {}
        }
        let old = self.touch(k)?.id.replace(id.to_string());
        if let Some(old) = old {
            self.ids.remove(&old);
        }
        self.ids.insert(id.to_string(), k);
        Ok(())
    }

    /// Its text: its own, or that of its markup or its children.
    pub(crate) fn text(&self, k: Key) -> Result<String> {
        let mut out = String::new();
        self.text_into(k, &mut out, 0)?;
        Ok(out)
    }

    fn text_into(&self, k: Key, out: &mut String, depth: usize) -> Result<()> {
        match &self.get(k)?.content {
            Content::Text(t) => out.push_str(t),
            Content::Html(h) => out.push_str(&sanitize::text_of_html(h)),
            Content::Kids(kids) if depth < MAX_DEPTH => {
                for kid in kids {
                    self.text_into(*kid, out, depth + 1)?;
                }
            }
            Content::Kids(_) => {}
        }
        Ok(())
    }

    /// Replaces the content with text. Child elements are deleted; returns whether there
    /// were any (ids may then name nothing).
    pub(crate) fn set_text(&mut self, k: Key, text: &str) -> Result<bool> {
        check_content(text)?;
        if let Content::Text(t) = &self.get(k)?.content {
            if t == text {
                return Ok(false);
            }
        }
        let dropped = self.drop_kids(k);
        match &mut self.touch(k)?.content {
            // The common case, a text rewritten at every step: the buffer is reused.
            Content::Text(t) => text.clone_into(t),
            content => *content = Content::Text(text.to_string()),
        }
        Ok(dropped)
    }

    /// Replaces the content with sanitized markup. Child elements are deleted; returns whether
    /// there were any.
    pub(crate) fn set_html(&mut self, k: Key, html: &str) -> Result<bool> {
        check_content(html)?;
        if self.get(k)?.tag == "canvas" {
            return Err("dom: a canvas holds pixels, not markup".into());
        }
        let clean = sanitize::sanitize_html(html);
        if let Content::Html(h) = &self.get(k)?.content {
            if *h == clean {
                return Ok(false);
            }
        }
        let dropped = self.drop_kids(k);
        self.touch(k)?.content = Content::Html(clean);
        Ok(dropped)
    }

    /// Its content as markup.
    pub(crate) fn inner_html(&self, k: Key) -> Result<String> {
        let mut out = String::new();
        self.inner_into(k, &mut out, 0)?;
        Ok(out)
    }

    fn inner_into(&self, k: Key, out: &mut String, depth: usize) -> Result<()> {
        match &self.get(k)?.content {
            Content::Text(t) => sanitize::escape_text(t, out),
            Content::Html(h) => out.push_str(h),
            Content::Kids(kids) if depth < MAX_DEPTH => {
                for kid in kids {
                    self.outer_into(*kid, out, depth + 1)?;
                }
            }
            Content::Kids(_) => {}
        }
        Ok(())
    }

    /// The element itself as markup, `<div id="x">...</div>`.
    pub(crate) fn outer_html(&self, k: Key) -> Result<String> {
        let mut out = String::new();
        self.outer_into(k, &mut out, 0)?;
        Ok(out)
    }

    fn outer_into(&self, k: Key, out: &mut String, depth: usize) -> Result<()> {
        let el = self.get(k)?;
        out.push('<');
        out.push_str(el.tag);
        if let Some(id) = &el.id {
            out.push_str(" id=\"");
            sanitize::escape_attr(id, out);
            out.push('"');
        }
        for (name, value) in &el.attrs {
            out.push_str(&format!(" {name}=\""));
            sanitize::escape_attr(value, out);
            out.push('"');
        }
        if !el.style.is_empty() {
            out.push_str(" style=\"");
            sanitize::escape_attr(&sanitize::style_text(&el.style), out);
            out.push('"');
        }
        out.push('>');
        if !matches!(el.tag, "br" | "hr" | "img" | "wbr" | "col") {
            self.inner_into(k, out, depth)?;
            out.push_str(&format!("</{}>", el.tag));
        }
        Ok(())
    }

    pub(crate) fn attr(&self, k: Key, name: &str) -> Result<Option<String>> {
        let el = self.get(k)?;
        let lower = name.to_ascii_lowercase();
        Ok(match lower.as_str() {
            "id" => el.id.clone(),
            "style" => (!el.style.is_empty()).then(|| sanitize::style_text(&el.style)),
            _ => el
                .attrs
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone()),
        })
    }

    pub(crate) fn set_attr(&mut self, k: Key, name: &str, value: &str) -> Result<()> {
        let el = self.get(k)?;
        let (tag, svg) = (el.tag, el.svg);
        let canon = sanitize::allowed_attr(tag, svg, name).ok_or_else(|| {
            if name.to_ascii_lowercase().starts_with("on") {
                format!("dom: event handler attributes ('{name}') are not allowed: the page is view-only")
            } else {
                format!("dom: attribute '{name}' is not allowed on <{tag}>")
            }
        })?;
        if value.len() > MAX_ATTR_VALUE {
            return Err(format!(
                "dom: attribute values hold at most {MAX_ATTR_VALUE} bytes"
            ));
        }
        match canon.as_str() {
            "id" => return self.set_id(k, value),
            "style" => {
                let style = sanitize::parse_style(value);
                self.touch(k)?.style = style;
                return Ok(());
            }
            "width" | "height" if tag == "canvas" => {
                let n: u32 = value
                    .trim()
                    .parse()
                    .map_err(|_| format!("dom: canvas {canon} must be a whole number"))?;
                let (w, h) = self.canvas_size(k)?;
                let (w, h) = if canon == "width" { (n, h) } else { (w, n) };
                return self.make_canvas(k, w, h);
            }
            _ => {}
        }
        if let Some(why) = sanitize::attr_value_problem(tag, &canon, value) {
            return Err(format!("dom: {canon} of <{tag}>: {why}"));
        }
        let el = self.get(k)?;
        if let Some((_, v)) = el.attrs.iter().find(|(n, _)| *n == canon) {
            if v == value {
                return Ok(());
            }
        } else if el.attrs.len() >= MAX_ATTRS {
            return Err(format!("dom: at most {MAX_ATTRS} attributes per element"));
        }
        set_pair(&mut self.touch(k)?.attrs, &canon, value.to_string());
        Ok(())
    }

    pub(crate) fn remove_attr(&mut self, k: Key, name: &str) -> Result<()> {
        match name.to_ascii_lowercase().as_str() {
            "id" => self.set_id(k, ""),
            "style" => {
                self.touch(k)?.style.clear();
                Ok(())
            }
            _ => {
                let present = self
                    .get(k)?
                    .attrs
                    .iter()
                    .any(|(n, _)| n.eq_ignore_ascii_case(name));
                if present {
                    self.touch(k)?
                        .attrs
                        .retain(|(n, _)| !n.eq_ignore_ascii_case(name));
                }
                Ok(())
            }
        }
    }

    /// A style property (`color`, `background-color`, `--x`); an empty value removes it.
    pub(crate) fn set_style(&mut self, k: Key, prop: &str, value: &str) -> Result<()> {
        if !sanitize::css_property_ok(prop) {
            return Err(format!(
                "dom: style property '{prop}' is not a CSS property name"
            ));
        }
        let value = value.trim();
        if let Some(why) = sanitize::css_value_problem(value) {
            return Err(format!("dom: style {prop}: {why} are not allowed"));
        }
        let el = self.get(k)?;
        let current = el.style.iter().find(|(n, _)| n == prop).map(|(_, v)| v);
        if current.map(String::as_str) == Some(value) || (current.is_none() && value.is_empty()) {
            return Ok(());
        }
        if current.is_none() && el.style.len() >= MAX_ATTRS {
            return Err(format!(
                "dom: at most {MAX_ATTRS} style properties per element"
            ));
        }
        let el = self.touch(k)?;
        if value.is_empty() {
            el.style.retain(|(n, _)| n != prop);
        } else {
            set_pair(&mut el.style, prop, value.to_string());
        }
        Ok(())
    }

    pub(crate) fn style(&self, k: Key, prop: &str) -> Result<String> {
        Ok(self
            .get(k)?
            .style
            .iter()
            .find(|(n, _)| n == prop)
            .map(|(_, v)| v.clone())
            .unwrap_or_default())
    }

    /// Moves `child` to the end of `parent`'s children. A parent holding text or markup gives
    /// it up for children.
    pub(crate) fn append(&mut self, parent: Key, child: Key) -> Result<()> {
        self.get(child)?;
        let p = self.get(parent)?;
        if matches!(p.tag, "canvas" | "br" | "hr" | "img" | "wbr" | "col") {
            return Err(format!("dom: a <{}> cannot hold elements", p.tag));
        }
        // No cycles: the child must not be the parent or above it.
        let mut at = Some(parent);
        let mut depth = 0;
        while let Some(a) = at.filter(|a| *a != ROOT) {
            if a == child {
                return Err("dom: an element cannot go inside itself".into());
            }
            depth += 1;
            at = self.elements.get(&a).and_then(|e| e.parent);
        }
        if depth >= MAX_DEPTH {
            return Err(format!("dom: elements nest at most {MAX_DEPTH} deep"));
        }
        self.detach(child);
        if !matches!(self.get(parent)?.content, Content::Kids(_)) {
            self.touch(parent)?.content = Content::Kids(Vec::new());
        }
        self.attach(parent, child)
    }

    fn attach(&mut self, parent: Key, child: Key) -> Result<()> {
        if parent == ROOT {
            self.root.push(child);
            self.root_dirty = self.tracking;
        } else if let Content::Kids(kids) = &mut self.touch(parent)?.content {
            kids.push(child);
        }
        self.touch(child)?.parent = Some(parent);
        Ok(())
    }

    /// Takes an element out of its parent (it stays in the model, detached).
    fn detach(&mut self, k: Key) {
        let Some(parent) = self.elements.get(&k).and_then(|e| e.parent) else {
            return;
        };
        if parent == ROOT {
            self.root.retain(|x| *x != k);
            self.root_dirty = self.tracking;
        } else if let Ok(p) = self.touch(parent) {
            if let Content::Kids(kids) = &mut p.content {
                kids.retain(|x| *x != k);
            }
        }
        if let Ok(el) = self.touch(k) {
            el.parent = None;
        }
    }

    /// Removes the element and everything inside it.
    pub(crate) fn remove(&mut self, k: Key) -> Result<()> {
        self.get(k)?;
        self.detach(k);
        self.delete(k);
        Ok(())
    }

    /// Deletes every element.
    pub(crate) fn clear(&mut self) {
        for k in std::mem::take(&mut self.root) {
            self.delete(k);
        }
        let rest: Vec<Key> = self.elements.keys().copied().collect();
        for k in rest {
            self.delete(k);
        }
        self.root_dirty = self.tracking;
    }

    fn drop_kids(&mut self, k: Key) -> bool {
        let kids = match self.elements.get(&k).map(|e| &e.content) {
            Some(Content::Kids(kids)) if !kids.is_empty() => kids.clone(),
            _ => return false,
        };
        for kid in kids {
            self.delete(kid);
        }
        true
    }

    /// Deletes a subtree from the model (iteratively: depth is bounded anyway).
    fn delete(&mut self, k: Key) {
        let mut stack = vec![k];
        while let Some(k) = stack.pop() {
            let Some(el) = self.elements.remove(&k) else {
                continue;
            };
            if let Some(id) = &el.id {
                self.ids.remove(id);
            }
            if let Some(c) = &el.canvas {
                self.canvas_pixels -= c.pixels();
            }
            if let Content::Kids(kids) = el.content {
                stack.extend(kids);
            }
            if el.dirty {
                self.dirty.retain(|d| *d != k);
            }
            if self.tracking {
                self.removed.push(k);
            }
        }
    }

    pub(crate) fn children(&self, k: Key) -> Result<Vec<Key>> {
        Ok(match &self.get(k)?.content {
            Content::Kids(kids) => kids.clone(),
            _ => Vec::new(),
        })
    }

    pub(crate) fn parent(&self, k: Key) -> Result<Option<Key>> {
        Ok(self.get(k)?.parent)
    }

    /// Everything that changed since the last call, as shared copies for the publisher.
    pub(crate) fn take_changes(&mut self) -> Changes {
        let mut changes = Changes {
            removed: std::mem::take(&mut self.removed),
            ..Default::default()
        };
        for k in std::mem::take(&mut self.dirty) {
            if let Some(el) = self.elements.get_mut(&k) {
                el.dirty = false;
                changes.elements.push(Arc::new(el.clone()));
                if let Some(c) = &mut el.canvas {
                    c.dirty = None;
                }
            }
        }
        if std::mem::take(&mut self.root_dirty) {
            changes.root = Some(self.root.clone());
        }
        changes
    }
}

fn set_pair(pairs: &mut Vec<(String, String)>, name: &str, value: String) {
    match pairs.iter_mut().find(|(n, _)| n == name) {
        Some(pair) => pair.1 = value,
        None => pairs.push((name.to_string(), value)),
    }
}

fn check_id(id: &str) -> Result<()> {
    if id.is_empty() || id.len() > 256 || id.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "dom: an id is 1 to 256 characters without spaces, got {:?}",
            id.chars().take(40).collect::<String>()
        ));
    }
    Ok(())
}

fn check_content(s: &str) -> Result<()> {
    if s.len() > MAX_CONTENT {
        return Err(format!(
            "dom: an element holds at most {MAX_CONTENT} bytes of text or markup, got {}",
            s.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
#[path = "dom_tests.rs"]
mod tests;

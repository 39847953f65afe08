//! Walks a JS value into a [`Node`] for the terse format. Bounded: depth, items per array and
//! fields per object are capped, and so is the whole walk (values visited, bytes of text, and
//! the chunk's script budget), so printing a huge, shared or cyclic structure stays small and
//! quick. An object met again inside itself prints as `[Circular]`.

use std::cell::{Cell, RefCell};
use std::time::Instant;

use rquickjs::convert::Coerced;
use rquickjs::function::Args;
use rquickjs::{Ctx, FromJs, Object, Value};

use super::format::{self, Node};

const MAX_DEPTH: usize = 4;
const MAX_ITEMS: usize = 1000;
const MAX_FIELDS: usize = 200;
/// Values one print may visit, and bytes of text (strings, keys) it may collect. Together
/// with the caps above: `a = []; for (...) a.push(a)` printed 1000^4 nodes before.
pub(super) const MAX_NODES: usize = 200_000;
pub(super) const MAX_TEXT: usize = super::response::RESPONSE_HARD_CAP;
/// The clock is read every this many values.
const CLOCK_EVERY: usize = 256;

/// The hidden global that holds the prelude's LINE symbol: objects carrying that key (a string
/// or a method) render as their own line.
pub(super) const LINE_KEY_GLOBAL: &str = "__scryLine";
/// The hidden global that holds the prelude's MORE symbol: a listing carrying it was cut
/// before it reached JS, by that many rows.
pub(super) const MORE_KEY_GLOBAL: &str = "__scryMore";
/// The hidden global that holds the prelude's BUILTIN symbol, which scry's result objects
/// inherit: they print as records (every address key in hex).
pub(super) const BUILTIN_KEY_GLOBAL: &str = "__scryBuiltin";

pub(super) struct Printer<'js> {
    ctx: Ctx<'js>,
    line_key: Option<Value<'js>>,
    more_key: Option<Value<'js>>,
    builtin_key: Option<Value<'js>>,
    /// Values visited and text collected so far.
    nodes: Cell<usize>,
    text: Cell<usize>,
    /// Set once a limit was reached: every later value prints as `…`.
    cut: Cell<Option<&'static str>>,
    /// The objects being printed, outermost first (for `[Circular]`).
    ancestors: RefCell<Vec<Value<'js>>>,
    /// The chunk's script deadline: printing is script time.
    deadline: Option<Instant>,
}

impl<'js> Printer<'js> {
    pub(super) fn new(ctx: &Ctx<'js>) -> Self {
        let line_key = ctx
            .globals()
            .get::<_, Value>(LINE_KEY_GLOBAL)
            .ok()
            .filter(|v| v.is_symbol());
        let symbol = |name: &str| {
            ctx.globals()
                .get::<_, Value>(name)
                .ok()
                .filter(|v| v.is_symbol())
        };
        Printer {
            ctx: ctx.clone(),
            line_key,
            more_key: symbol(MORE_KEY_GLOBAL),
            builtin_key: symbol(BUILTIN_KEY_GLOBAL),
            nodes: Cell::new(0),
            text: Cell::new(0),
            cut: Cell::new(None),
            ancestors: RefCell::new(Vec::new()),
            deadline: None,
        }
    }

    /// Printing past `deadline` is the script running out of its budget.
    pub(super) fn with_deadline(mut self, deadline: Option<Instant>) -> Self {
        self.deadline = deadline;
        self
    }

    /// The text of a value at the top of a response.
    pub(super) fn render(&self, v: &Value<'js>) -> rquickjs::Result<String> {
        let mut text = format::top_level(&self.node(v, 0)?);
        self.note_cut(&mut text);
        Ok(text)
    }

    /// Says so at the end of `text` when a limit cut the printing short.
    fn note_cut(&self, text: &mut String) {
        if let Some(what) = self.cut.get() {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!(
                "[scry: printing stopped at {what}; `…` marks what was left out: print a part of it]"
            ));
        }
    }

    /// Books one value and `bytes` of its text; false once a limit is reached (then the value
    /// is left out). Past the deadline the print fails like a runaway script.
    fn book(&self, bytes: usize) -> rquickjs::Result<bool> {
        if self.cut.get().is_some() {
            return Ok(false);
        }
        let n = self.nodes.get() + usize::from(bytes == 0);
        self.nodes.set(n);
        if n.is_multiple_of(CLOCK_EVERY) && self.deadline.is_some_and(|d| Instant::now() > d) {
            return Err(self
                .ctx
                .throw(rquickjs::String::from_str(self.ctx.clone(), PRINT_TIMEOUT)?.into_value()));
        }
        let text = self.text.get() + bytes;
        self.text.set(text);
        if n > MAX_NODES {
            self.cut.set(Some("200000 values"));
        } else if text > MAX_TEXT {
            self.cut.set(Some("8 MiB of text"));
        }
        Ok(self.cut.get().is_none())
    }

    fn custom_line(&self, obj: &Object<'js>) -> rquickjs::Result<Option<String>> {
        let Some(key) = &self.line_key else {
            return Ok(None);
        };
        let Some(sym) = key.as_symbol() else {
            return Ok(None);
        };
        let v: Value = obj.get(sym.clone())?;
        if let Some(s) = v.as_string() {
            return Ok(Some(s.to_string()?));
        }
        if let Some(f) = v.as_function() {
            let mut args = Args::new(self.ctx.clone(), 0);
            args.this(obj.clone())?;
            let out: Value = f.call_arg(args)?;
            return Ok(Some(
                out.as_string()
                    .map(|s| s.to_string())
                    .transpose()?
                    .unwrap_or_default(),
            ));
        }
        Ok(None)
    }

    pub(super) fn node(&self, v: &Value<'js>, depth: usize) -> rquickjs::Result<Node> {
        if !self.book(0)? {
            return Ok(Node::Elided);
        }
        if v.is_undefined() {
            return Ok(Node::Undefined);
        }
        if v.is_null() {
            return Ok(Node::Null);
        }
        if let Some(b) = v.as_bool() {
            return Ok(Node::Bool(b));
        }
        if let Some(n) = v.as_number() {
            return Ok(Node::Number(n));
        }
        if v.is_big_int() {
            let text = Coerced::<String>::from_js(&self.ctx, v.clone())?.0;
            return Ok(Node::BigInt(text));
        }
        if let Some(s) = v.as_string() {
            let mut text = s.to_string()?;
            let room = MAX_TEXT.saturating_sub(self.text.get());
            if !self.book(text.len())? {
                // The part that fits, so one long string still shows its start.
                let mut cut = room.min(text.len());
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
                text.push('…');
            }
            return Ok(Node::Str(text));
        }
        if v.is_symbol() {
            return Ok(Node::Str(
                v.as_symbol()
                    .and_then(|s| s.description().ok())
                    .and_then(|d| d.as_string().and_then(|s| s.to_string().ok()))
                    .map(|d| format!("Symbol({d})"))
                    .unwrap_or_else(|| "Symbol()".into()),
            ));
        }
        if let Some(f) = v.as_function() {
            let name: String = f.get("name").unwrap_or_default();
            return Ok(Node::Function(if name.is_empty() {
                "anonymous".into()
            } else {
                name
            }));
        }
        let Some(obj) = v.as_object() else {
            return Ok(Node::Str(String::new()));
        };
        if let Some(line) = self.custom_line(obj)? {
            return Ok(Node::Line(line));
        }
        if v.is_error() {
            let name: String = obj.get("name").unwrap_or_else(|_| "Error".into());
            let message: String = obj.get("message").unwrap_or_default();
            return Ok(Node::Str(format!("{name}: {message}")));
        }
        if depth >= MAX_DEPTH {
            return Ok(Node::Elided);
        }
        if self.ancestors.borrow().contains(v) {
            return Ok(Node::Line("[Circular]".into()));
        }
        self.ancestors.borrow_mut().push(v.clone());
        let node = self.container(v, obj, depth);
        self.ancestors.borrow_mut().pop();
        node
    }

    /// Whether `obj` is one of scry's results (it inherits the BUILTIN key).
    fn is_record(&self, obj: &Object<'js>) -> bool {
        self.builtin_key
            .as_ref()
            .and_then(|k| k.as_symbol())
            .is_some_and(|k| obj.get::<_, bool>(k.clone()).unwrap_or(false))
    }

    /// An array or a plain object, one level down.
    fn container(&self, v: &Value<'js>, obj: &Object<'js>, depth: usize) -> rquickjs::Result<Node> {
        // Bytes (`memory(a).u8array(n)`) print as the numbers they hold, like an array.
        if let Ok(bytes) = rquickjs::TypedArray::<u8>::from_value(v.clone()) {
            let len = bytes.len();
            let mut items = Vec::with_capacity(len.min(MAX_ITEMS));
            for i in 0..len.min(MAX_ITEMS) {
                items.push(self.node(&obj.get::<_, Value>(i as u32)?, depth + 1)?);
            }
            return Ok(Node::Array(items, len.saturating_sub(MAX_ITEMS)));
        }
        if let Some(array) = v.as_array() {
            let len = array.len();
            let mut items = Vec::with_capacity(len.min(MAX_ITEMS));
            for i in 0..len.min(MAX_ITEMS) {
                items.push(self.node(&array.get::<Value>(i)?, depth + 1)?);
            }
            let mut more = len.saturating_sub(MAX_ITEMS);
            // Built-in listings that were cut before they reached JS say how much is missing.
            if let Some(key) = self.more_key.as_ref().and_then(|k| k.as_symbol()) {
                if let Ok(extra) = obj.get::<_, f64>(key.clone()) {
                    more += extra as usize;
                }
            }
            return Ok(Node::Array(items, more));
        }
        let mut fields = Vec::new();
        for key in obj.keys::<String>() {
            let key = key?;
            if !self.book(key.len() + 1)? {
                break;
            }
            if fields.len() >= MAX_FIELDS {
                fields.push(("…".to_string(), Node::Elided));
                break;
            }
            let value: Value = obj.get(key.as_str())?;
            fields.push((key, self.node(&value, depth + 1)?));
        }
        Ok(match self.is_record(obj) {
            true => Node::Record(fields),
            false => Node::Object(fields),
        })
    }
}

/// `print(a, b)`: arguments rendered and joined by a space. Numbers print as JS prints them
/// (the hex annotation is for completion values only: a script formats its own output).
pub(super) fn render_print_args<'js>(
    ctx: &Ctx<'js>,
    args: &[Value<'js>],
    deadline: Option<Instant>,
) -> rquickjs::Result<String> {
    let printer = Printer::new(ctx).with_deadline(deadline);
    let mut parts = Vec::with_capacity(args.len());
    for a in args {
        let node = printer.node(a, 0)?;
        parts.push(match node {
            Node::Number(_) | Node::BigInt(_) => format::inline(&node, false),
            other => format::top_level(&other),
        });
    }
    let mut text = parts.join(" ");
    printer.note_cut(&mut text);
    Ok(text)
}

/// What a print that ran past the script budget throws (errors.rs words it for the user).
pub(super) const PRINT_TIMEOUT: &str = "scry: printing ran past the script budget";

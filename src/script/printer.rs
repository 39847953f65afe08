//! Walks a JS value into a [`Node`] for the terse format. Bounded: depth, items per array and
//! fields per object are capped, so printing a huge or cyclic structure stays small.

use rquickjs::convert::Coerced;
use rquickjs::function::Args;
use rquickjs::{Ctx, FromJs, Object, Value};

use super::format::{self, Node};

const MAX_DEPTH: usize = 4;
const MAX_ITEMS: usize = 1000;
const MAX_FIELDS: usize = 200;

/// The hidden global that holds `Symbol.for('scry.line')`: objects carrying that key (a string
/// or a method) render as their own line.
pub const LINE_KEY_GLOBAL: &str = "__scryLine";

pub struct Printer<'js> {
    ctx: Ctx<'js>,
    line_key: Option<Value<'js>>,
}

impl<'js> Printer<'js> {
    pub fn new(ctx: &Ctx<'js>) -> Self {
        let line_key = ctx
            .globals()
            .get::<_, Value>(LINE_KEY_GLOBAL)
            .ok()
            .filter(|v| v.is_symbol());
        Printer {
            ctx: ctx.clone(),
            line_key,
        }
    }

    /// The text of a value at the top of a response.
    pub fn render(&self, v: &Value<'js>) -> rquickjs::Result<String> {
        Ok(format::top_level(&self.node(v, 0)?))
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

    pub fn node(&self, v: &Value<'js>, depth: usize) -> rquickjs::Result<Node> {
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
            return Ok(Node::Str(s.to_string()?));
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
        if let Some(array) = v.as_array() {
            let len = array.len();
            let mut items = Vec::with_capacity(len.min(MAX_ITEMS));
            for i in 0..len.min(MAX_ITEMS) {
                items.push(self.node(&array.get::<Value>(i)?, depth + 1)?);
            }
            let mut more = len.saturating_sub(MAX_ITEMS);
            // Built-in listings that were cut before they reached JS say how much is missing.
            if let Ok(extra) = obj.get::<_, f64>("more") {
                if !obj
                    .keys::<String>()
                    .any(|k| k.as_deref().ok() == Some("more"))
                {
                    more += extra as usize;
                }
            }
            return Ok(Node::Array(items, more));
        }
        let mut fields = Vec::new();
        for key in obj.keys::<String>() {
            let key = key?;
            if fields.len() >= MAX_FIELDS {
                fields.push(("…".to_string(), Node::Elided));
                break;
            }
            let value: Value = obj.get(key.as_str())?;
            fields.push((key, self.node(&value, depth + 1)?));
        }
        Ok(Node::Object(fields))
    }
}

/// `print(a, b)`: arguments rendered and joined by a space. Numbers print as JS prints them
/// (the hex annotation is for completion values only: a script formats its own output).
pub fn render_print_args<'js>(ctx: &Ctx<'js>, args: &[Value<'js>]) -> rquickjs::Result<String> {
    let printer = Printer::new(ctx);
    let mut parts = Vec::with_capacity(args.len());
    for a in args {
        let node = printer.node(a, 0)?;
        parts.push(match node {
            Node::Number(_) | Node::BigInt(_) => format::inline(&node, false),
            other => format::top_level(&other),
        });
    }
    Ok(parts.join(" "))
}

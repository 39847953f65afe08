//! What a script may put into the page. `innerHTML` is parsed here and written out again from
//! an allowlist of tags and attributes, with every text and attribute value escaped, so the
//! browser parses exactly the tree this module emitted: no scripts, no event handlers, no
//! `javascript:` URLs, no styles that load anything. The page's Content-Security-Policy
//! forbids inline scripts as well; this is the first wall, that one the second.

/// HTML elements a script may create or write (lowercase).
const HTML_TAGS: &[&str] = &[
    "a",
    "abbr",
    "article",
    "aside",
    "b",
    "bdi",
    "bdo",
    "blockquote",
    "br",
    "canvas",
    "caption",
    "cite",
    "code",
    "col",
    "colgroup",
    "dd",
    "del",
    "details",
    "dfn",
    "div",
    "dl",
    "dt",
    "em",
    "figcaption",
    "figure",
    "footer",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "i",
    "img",
    "ins",
    "kbd",
    "label",
    "li",
    "main",
    "mark",
    "meter",
    "nav",
    "ol",
    "p",
    "pre",
    "progress",
    "q",
    "s",
    "samp",
    "section",
    "small",
    "span",
    "strong",
    "sub",
    "summary",
    "sup",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "time",
    "tr",
    "u",
    "ul",
    "var",
    "wbr",
];

/// SVG elements, in their canonical (case-sensitive) spelling. Nothing that references other
/// documents (`use`, `image`, `a`, `foreignObject`) or animates attributes (`set`, `animate`).
const SVG_TAGS: &[&str] = &[
    "svg",
    "g",
    "path",
    "rect",
    "circle",
    "ellipse",
    "line",
    "polyline",
    "polygon",
    "text",
    "tspan",
    "defs",
    "linearGradient",
    "radialGradient",
    "stop",
    "clipPath",
];

/// Elements that never end up in the output and whose content goes with them: raw-text
/// elements (a browser does not parse their content as markup) and containers of active
/// content.
const DROPPED_WITH_CONTENT: &[&str] = &[
    "script",
    "style",
    "iframe",
    "noembed",
    "noframes",
    "noscript",
    "xmp",
    "plaintext",
    "textarea",
    "title",
    "template",
    "object",
    "select",
];

const VOID_TAGS: &[&str] = &["br", "col", "hr", "img", "wbr"];

const GLOBAL_ATTRS: &[&str] = &[
    "id", "class", "title", "style", "lang", "dir", "role", "hidden",
];

/// Attributes of HTML elements beyond the global ones.
const HTML_ATTRS: &[(&str, &[&str])] = &[
    ("a", &["href"]),
    ("img", &["src", "alt", "width", "height"]),
    ("canvas", &["width", "height"]),
    ("td", &["colspan", "rowspan", "align"]),
    ("th", &["colspan", "rowspan", "align", "scope"]),
    ("col", &["span"]),
    ("colgroup", &["span"]),
    ("ol", &["start", "reversed"]),
    ("li", &["value"]),
    ("progress", &["value", "max"]),
    ("meter", &["value", "min", "max", "low", "high", "optimum"]),
    ("details", &["open"]),
    ("time", &["datetime"]),
];

/// Attributes of SVG elements (canonical spelling): geometry and presentation only.
const SVG_ATTRS: &[&str] = &[
    "viewBox",
    "preserveAspectRatio",
    "xmlns",
    "width",
    "height",
    "x",
    "y",
    "x1",
    "y1",
    "x2",
    "y2",
    "cx",
    "cy",
    "r",
    "rx",
    "ry",
    "d",
    "points",
    "dx",
    "dy",
    "fill",
    "fill-opacity",
    "fill-rule",
    "stroke",
    "stroke-width",
    "stroke-opacity",
    "stroke-linecap",
    "stroke-linejoin",
    "stroke-dasharray",
    "opacity",
    "transform",
    "font-size",
    "font-family",
    "font-weight",
    "text-anchor",
    "dominant-baseline",
    "offset",
    "stop-color",
    "stop-opacity",
    "gradientUnits",
    "gradientTransform",
    "clip-path",
    "clip-rule",
    "pathLength",
    "vector-effect",
    "visibility",
    "display",
];

/// The canonical spelling of an element a script may use, and whether it is SVG.
pub(crate) fn allowed_tag(name: &str) -> Option<(&'static str, bool)> {
    if let Some(t) = HTML_TAGS.iter().find(|t| t.eq_ignore_ascii_case(name)) {
        return Some((t, false));
    }
    SVG_TAGS
        .iter()
        .find(|t| t.eq_ignore_ascii_case(name))
        .map(|t| (*t, true))
}

/// The canonical spelling of an attribute allowed on `tag`, if it is allowed. `aria-*` is
/// allowed everywhere; event handlers (`on*`) never are.
pub(crate) fn allowed_attr(tag: &str, svg: bool, name: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    if lower.starts_with("on") {
        return None;
    }
    if let Some(rest) = lower.strip_prefix("aria-") {
        let ok = !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
        return ok.then_some(lower);
    }
    if let Some(a) = GLOBAL_ATTRS.iter().find(|a| **a == lower) {
        return Some(a.to_string());
    }
    if svg {
        return SVG_ATTRS
            .iter()
            .find(|a| a.eq_ignore_ascii_case(name))
            .map(|a| a.to_string());
    }
    HTML_ATTRS
        .iter()
        .find(|(t, _)| *t == tag)
        .and_then(|(_, attrs)| attrs.iter().find(|a| **a == lower))
        .map(|a| a.to_string())
}

/// Why a value cannot go into attribute `name` of `tag`, or `None` when it can.
pub(crate) fn attr_value_problem(tag: &str, name: &str, value: &str) -> Option<&'static str> {
    match name {
        "href" => (!safe_url(value, false)).then_some("only http:, https: and #anchor links"),
        "src" if tag == "img" => (!safe_url(value, true))
            .then_some("only http:, https: and data:image/ (png, gif, jpeg, webp) sources"),
        "style" => None, // filtered declaration by declaration
        _ if value_loads_something(value) => Some("url() other than url(#id)"),
        _ => None,
    }
}

/// Whether a URL is a plain web link (or, for images, an inline raster image). Checked after
/// entity decoding, ignoring the control characters and white space browsers ignore.
fn safe_url(value: &str, image: bool) -> bool {
    let cleaned: String = value
        .chars()
        .filter(|c| !c.is_ascii_whitespace() && !c.is_control())
        .collect::<String>()
        .to_ascii_lowercase();
    if cleaned.starts_with("http://") || cleaned.starts_with("https://") {
        return true;
    }
    if !image && cleaned.starts_with('#') {
        return true;
    }
    image
        && ["png", "gif", "jpeg", "webp"]
            .iter()
            .any(|t| cleaned.starts_with(&format!("data:image/{t};")))
}

/// A `url(...)` that is not a reference into the page (`url(#grad)`).
fn value_loads_something(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    let mut rest = lower.as_str();
    while let Some(at) = rest.find("url(") {
        let after = rest[at + 4..].trim_start_matches([' ', '"', '\'']);
        if !after.starts_with('#') {
            return true;
        }
        rest = &rest[at + 4..];
    }
    false
}

/// Whether a CSS property name is plain (`color`, `background-color`, `--my-var`).
pub(crate) fn css_property_ok(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Why a CSS value is refused, or `None`. Nothing that loads a resource, runs script in old
/// engines, or hides characters behind CSS escapes.
pub(crate) fn css_value_problem(value: &str) -> Option<&'static str> {
    let lower = value.to_ascii_lowercase();
    if value.len() > 4096 {
        return Some("longer than 4096 bytes");
    }
    if value_loads_something(value) || lower.contains("image-set(") {
        return Some("url() other than url(#id)");
    }
    for bad in [
        "expression",
        "javascript:",
        "@import",
        "behavior",
        "-moz-binding",
    ] {
        if lower.contains(bad) {
            return Some("script or import");
        }
    }
    if value.contains(['\\', '<', '>', '{', '}', ';']) || value.chars().any(|c| c.is_control()) {
        return Some("escapes, braces, ';' or control characters");
    }
    None
}

/// A `style` attribute's declarations that pass, in order.
pub(crate) fn parse_style(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for decl in text.split(';') {
        let Some((name, value)) = decl.split_once(':') else {
            continue;
        };
        let name = name.trim().to_ascii_lowercase();
        let value = value.trim();
        let quoted = value.contains(['"', '\'']);
        if css_property_ok(&name) && !quoted && css_value_problem(value).is_none() {
            out.push((name, value.to_string()));
        }
    }
    out
}

pub(crate) fn style_text(style: &[(String, String)]) -> String {
    style
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect::<Vec<_>>()
        .join("; ")
}

pub(crate) fn escape_text(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
}

pub(crate) fn escape_attr(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
}

const NAMED_ENTITIES: &[(&str, char)] = &[
    ("amp", '&'),
    ("lt", '<'),
    ("gt", '>'),
    ("quot", '"'),
    ("apos", '\''),
    ("nbsp", '\u{a0}'),
    ("copy", '©'),
    ("reg", '®'),
    ("deg", '°'),
    ("plusmn", '±'),
    ("micro", 'µ'),
    ("middot", '·'),
    ("times", '×'),
    ("divide", '÷'),
    ("hellip", '…'),
    ("ndash", '–'),
    ("mdash", '—'),
    ("laquo", '«'),
    ("raquo", '»'),
    ("bull", '•'),
    ("larr", '←'),
    ("rarr", '→'),
    ("uarr", '↑'),
    ("darr", '↓'),
];

/// Decodes character references (`&lt;`, `&#60;`, `&#x3c;`); an unknown one stays as written.
pub(crate) fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let end = rest[1..]
            .char_indices()
            .take(12)
            .find(|(_, c)| !c.is_ascii_alphanumeric() && *c != '#')
            .map(|(i, c)| (i + 1, c));
        let (name_end, has_semi) = match end {
            Some((i, ';')) => (i, true),
            Some((i, _)) => (i, false),
            None if rest.len() <= 13 => (rest.len(), false),
            None => (1, false),
        };
        let name = &rest[1..name_end];
        let decoded = if let Some(num) = name.strip_prefix('#') {
            let value = match num.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok(),
                None => num.parse::<u32>().ok(),
            };
            value.map(|v| match char::from_u32(v) {
                Some(c) if v != 0 => c,
                _ => '\u{fffd}',
            })
        } else {
            NAMED_ENTITIES
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, c)| *c)
        };
        match decoded {
            Some(c) if !name.is_empty() => {
                out.push(c);
                rest = &rest[name_end + usize::from(has_semi)..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// One piece of markup.
enum Token<'a> {
    Text(&'a str),
    Start {
        name: &'a str,
        attrs: Vec<(&'a str, Option<&'a str>)>,
        /// Written `<x/>`: the end of an SVG element (HTML ignores it).
        self_closing: bool,
    },
    End(&'a str),
}

/// A forgiving tokenizer in the spirit of HTML5's: comments, doctypes and processing
/// instructions vanish; a `<` that starts no tag is text; an unterminated tag at the end is
/// dropped. The content of raw-text elements is skipped by the caller.
struct Tokenizer<'a> {
    src: &'a str,
    pos: usize,
}

impl<'a> Tokenizer<'a> {
    fn next(&mut self) -> Option<Token<'a>> {
        let s = self.src;
        if self.pos >= s.len() {
            return None;
        }
        let rest = &s[self.pos..];
        if !rest.starts_with('<') {
            let len = rest.find('<').unwrap_or(rest.len());
            self.pos += len;
            return Some(Token::Text(&rest[..len]));
        }
        let b = rest.as_bytes();
        if let Some(comment) = rest.strip_prefix("<!--") {
            self.pos += comment.find("-->").map_or(rest.len(), |i| i + 7);
            return Some(Token::Text(""));
        }
        if b.len() > 1 && (b[1] == b'!' || b[1] == b'?') {
            self.pos += rest.find('>').map_or(rest.len(), |i| i + 1);
            return Some(Token::Text(""));
        }
        let closing = b.len() > 1 && b[1] == b'/';
        let name_at = if closing { 2 } else { 1 };
        if !b.get(name_at).is_some_and(|c| c.is_ascii_alphabetic()) {
            if closing {
                // `</` not followed by a letter is a bogus comment in HTML5.
                self.pos += rest.find('>').map_or(rest.len(), |i| i + 1);
                return Some(Token::Text(""));
            }
            self.pos += 1;
            return Some(Token::Text("<"));
        }
        let name_len = rest[name_at..]
            .find(|c: char| c.is_ascii_whitespace() || c == '/' || c == '>')
            .unwrap_or(rest.len() - name_at);
        let name = &rest[name_at..name_at + name_len];
        let mut i = name_at + name_len;
        let mut attrs = Vec::new();
        let mut self_closing = false;
        loop {
            while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b'/') {
                self_closing = b[i] == b'/';
                i += 1;
            }
            if i >= b.len() {
                // Unterminated at the end of the input: a browser drops it too.
                self.pos = s.len();
                return Some(Token::Text(""));
            }
            if b[i] == b'>' {
                i += 1;
                break;
            }
            self_closing = false;
            let start = i;
            i += 1; // a name may begin with any character but those ending it
            while i < b.len() && !b[i].is_ascii_whitespace() && !matches!(b[i], b'/' | b'>' | b'=')
            {
                i += 1;
            }
            let attr = &rest[start..i];
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            if i < b.len() && b[i] == b'=' {
                i += 1;
                while i < b.len() && b[i].is_ascii_whitespace() {
                    i += 1;
                }
                let value = if i < b.len() && (b[i] == b'"' || b[i] == b'\'') {
                    let q = b[i] as char;
                    let from = i + 1;
                    let to = rest[from..].find(q).map_or(rest.len(), |e| from + e);
                    i = (to + 1).min(rest.len());
                    &rest[from..to]
                } else {
                    let from = i;
                    while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'>' {
                        i += 1;
                    }
                    &rest[from..i]
                };
                attrs.push((attr, Some(value)));
            } else {
                attrs.push((attr, None));
            }
        }
        self.pos += i;
        Some(if closing {
            Token::End(name)
        } else {
            Token::Start {
                name,
                attrs,
                self_closing,
            }
        })
    }

    /// Skips to just after `</name ...>` (case-insensitive), or to the end. Linear: the
    /// scan never looks at a byte twice.
    fn skip_raw(&mut self, name: &str) {
        let b = self.src.as_bytes();
        let n = name.len();
        let mut i = self.pos;
        while let Some(at) = self.src[i..].find("</") {
            let start = i + at + 2;
            if b.len() >= start + n && b[start..start + n].eq_ignore_ascii_case(name.as_bytes()) {
                self.pos = self.src[start..]
                    .find('>')
                    .map_or(self.src.len(), |e| start + e + 1);
                return;
            }
            i = start;
        }
        self.pos = self.src.len();
    }
}

/// How deep sanitized markup may nest; deeper elements are flattened into their parent.
const MAX_DEPTH: usize = 64;

/// The allowed part of `html`, written out anew. Text is kept (escaped); disallowed elements
/// vanish but their content stays, except for the ones dropped with their content.
pub(crate) fn sanitize_html(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut open: Vec<&'static str> = Vec::new();
    let mut tokens = Tokenizer { src: html, pos: 0 };
    while let Some(token) = tokens.next() {
        match token {
            Token::Text(t) => escape_text(&decode_entities(t), &mut out),
            Token::Start {
                name,
                attrs,
                self_closing,
            } => {
                if DROPPED_WITH_CONTENT
                    .iter()
                    .any(|d| d.eq_ignore_ascii_case(name))
                {
                    tokens.skip_raw(name);
                    continue;
                }
                let Some((tag, svg)) = allowed_tag(name) else {
                    continue;
                };
                if open.len() >= MAX_DEPTH {
                    continue;
                }
                write_start(tag, svg, &attrs, &mut out);
                if svg && self_closing {
                    out.push_str(&format!("</{tag}>"));
                } else if !VOID_TAGS.contains(&tag) {
                    open.push(tag);
                }
            }
            Token::End(name) => {
                let Some(at) = open.iter().rposition(|t| t.eq_ignore_ascii_case(name)) else {
                    continue;
                };
                while open.len() > at {
                    let t = open.pop().unwrap_or_default();
                    out.push_str(&format!("</{t}>"));
                }
            }
        }
    }
    while let Some(t) = open.pop() {
        out.push_str(&format!("</{t}>"));
    }
    out
}

fn write_start(tag: &str, svg: bool, attrs: &[(&str, Option<&str>)], out: &mut String) {
    out.push('<');
    out.push_str(tag);
    let mut seen: Vec<String> = Vec::new();
    for (name, value) in attrs {
        let Some(canon) = allowed_attr(tag, svg, name) else {
            continue;
        };
        if seen.contains(&canon) {
            continue; // the first of duplicates wins, as in a browser
        }
        let value = decode_entities(value.unwrap_or(""));
        let value = if canon == "style" {
            let style = style_text(&parse_style(&value));
            if style.is_empty() {
                continue;
            }
            style
        } else {
            if attr_value_problem(tag, &canon, &value).is_some() {
                continue;
            }
            value
        };
        out.push(' ');
        out.push_str(&canon);
        out.push_str("=\"");
        escape_attr(&value, out);
        out.push('"');
        seen.push(canon);
    }
    out.push('>');
}

/// The text a browser would show for sanitized markup (its `textContent`).
pub(crate) fn text_of_html(html: &str) -> String {
    let mut out = String::new();
    let mut tokens = Tokenizer { src: html, pos: 0 };
    while let Some(token) = tokens.next() {
        if let Token::Text(t) = token {
            out.push_str(&decode_entities(t));
        }
    }
    out
}

#[cfg(test)]
#[path = "sanitize_tests.rs"]
mod tests;

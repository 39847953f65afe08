//! The terse text format, over a tree the JS walker builds (pure, so it is unit-tested).
//! Objects print as `key<TAB>value` lines, arrays of objects as a header line plus
//! tab-separated rows, built-in objects as their own one-line rendering.

/// A JS value reduced to what the format needs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    BigInt(String),
    Str(String),
    Function(String),
    /// A built-in object with its own rendering (a stop, an instruction, a register set).
    Line(String),
    /// A script's own object: only unmistakable address keys print in hex.
    Object(Vec<(String, Node)>),
    /// One of scry's result objects (a stop, a breakpoint row, `state.stack`...): every
    /// address key prints in hex, `start` and `end` included.
    Record(Vec<(String, Node)>),
    /// Items, and how many more the source had that were not walked.
    Array(Vec<Node>, usize),
    /// Depth or cycle limit reached.
    Elided,
}

/// Keys whose integer values print in hex: in scry's own records every address key; in a
/// script's objects only the unmistakable ones (a user's `start` or `end` is as likely a count
/// as an address).
pub(crate) fn is_hex_key(key: &str, record: bool) -> bool {
    const RECORD_ONLY: &[&str] = &[
        "start",
        "end",
        "top",
        "base",
        "usable_base",
        "entry",
        "target",
        // A breakpoint's sites.
        "locations",
    ];
    is_address_key(key) || (record && RECORD_ONLY.contains(&key))
}

/// Keys that name an address or a register wherever they appear.
pub(crate) fn is_address_key(key: &str) -> bool {
    const KEYS: &[&str] = &[
        "addr",
        "address",
        "pc",
        "sp",
        "fp",
        "fault_addr",
        "insn_addr",
        // Register values are shown in hex, as debuggers do.
        "rax",
        "rbx",
        "rcx",
        "rdx",
        "rsi",
        "rdi",
        "rbp",
        "rsp",
        "r8",
        "r9",
        "r10",
        "r11",
        "r12",
        "r13",
        "r14",
        "r15",
        "rip",
        "eflags",
        "fs_base",
        "gs_base",
    ];
    KEYS.contains(&key)
}

fn number_text(n: f64) -> String {
    if n.is_finite() && n.fract() == 0.0 && n.abs() < 1e21 {
        format!("{}", n as i128)
    } else if n.is_nan() {
        "NaN".into()
    } else if n.is_infinite() {
        if n > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        }
    } else if (1e-7..1e21).contains(&n.abs()) {
        format!("{n}")
    } else {
        // JavaScript's own spelling past those bounds: `5e-324`, `1e+21` (Rust's Display
        // writes every digit: a denormal was 330 characters of zeros).
        let e = format!("{n:e}");
        match e.split_once('e') {
            Some((m, x)) if !x.starts_with('-') => format!("{m}e+{x}"),
            _ => e,
        }
    }
}

fn hex_of_number(n: f64) -> Option<String> {
    if n.is_finite() && n.fract() == 0.0 && n.abs() <= 9.007_199_254_740_992e15 {
        let i = n as i64;
        Some(if i < 0 {
            format!("-{:#x}", -i)
        } else {
            format!("{i:#x}")
        })
    } else {
        None
    }
}

fn hex_of_bigint(digits: &str) -> Option<String> {
    let v: i128 = digits.parse().ok()?;
    Some(if v < 0 {
        format!("-{:#x}", -v)
    } else {
        format!("{v:#x}")
    })
}

/// A value as one table cell or one inline item: no tabs or newlines inside.
pub(crate) fn inline(node: &Node, hex: bool) -> String {
    match node {
        Node::Undefined => "undefined".into(),
        Node::Null => "null".into(),
        Node::Bool(b) => b.to_string(),
        Node::Number(n) => match (hex, hex_of_number(*n)) {
            (true, Some(h)) => h,
            _ => number_text(*n),
        },
        Node::BigInt(d) => match (hex, hex_of_bigint(d)) {
            (true, Some(h)) => h,
            _ => format!("{d}n"),
        },
        Node::Str(s) => escape(s),
        Node::Function(name) => format!("[function {name}]"),
        // A built-in line inside a row or an inline object: its tabs as spaces, which read
        // better than `\t` (an instruction is `0x401136 <add+0x4>\tmov ...` on its own).
        Node::Line(l) => escape(&l.replace('\t', " ")),
        Node::Object(fields) | Node::Record(fields) => {
            let record = matches!(node, Node::Record(_));
            let parts: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("{k}: {}", nested(v, is_hex_key(k, record))))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Node::Array(items, more) => {
            let mut parts: Vec<String> = items.iter().map(|v| nested(v, hex)).collect();
            if *more > 0 {
                parts.push(format!("... {more} more"));
            }
            format!("[{}]", parts.join(", "))
        }
        Node::Elided => "…".into(),
    }
}

/// Inside an inline object strings are quoted, so `{a: '1'}` and `{a: 1}` differ.
fn nested(node: &Node, hex: bool) -> String {
    match node {
        Node::Str(s) => format!("'{}'", escape(s)),
        other => inline(other, hex),
    }
}

fn escape(s: &str) -> String {
    if !s.contains(['\t', '\n', '\r']) {
        return s.to_string();
    }
    s.replace('\\', "\\\\")
        .replace('\t', "\\t")
        .replace('\n', "\\n")
        .replace('\r', "\\r")
}

/// A value at the top of a response (the completion value or a `print` argument).
pub(crate) fn top_level(node: &Node) -> String {
    match node {
        Node::Str(s) => s.clone(),
        Node::Line(l) => l.clone(),
        Node::Number(n) => match hex_of_number(*n) {
            Some(h) if n.abs() >= 65536.0 => format!("{} ({h})", number_text(*n)),
            _ => number_text(*n),
        },
        Node::BigInt(d) => match hex_of_bigint(d) {
            Some(h) => format!("{d}n ({h})"),
            None => format!("{d}n"),
        },
        Node::Object(fields) | Node::Record(fields) => {
            let record = matches!(node, Node::Record(_));
            let lines: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("{k}\t{}", inline(v, is_hex_key(k, record))))
                .collect();
            lines.join("\n")
        }
        Node::Array(items, more) => {
            let mut out = array_text(items);
            if *more > 0 {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&format!("[... {more} more]"));
            }
            out
        }
        other => inline(other, false),
    }
}

/// An object's fields, and whether it is one of scry's records.
fn fields_of(node: &Node) -> Option<(&[(String, Node)], bool)> {
    match node {
        Node::Object(f) => Some((f, false)),
        Node::Record(f) => Some((f, true)),
        _ => None,
    }
}

fn array_text(items: &[Node]) -> String {
    let all_objects = !items.is_empty() && items.iter().all(|n| fields_of(n).is_some());
    if !all_objects {
        let lines: Vec<String> = items
            .iter()
            .map(|n| match n {
                Node::Line(l) => l.clone(),
                Node::Str(s) => escape(s),
                other => inline(other, false),
            })
            .collect();
        return lines.join("\n");
    }
    // Header: the union of keys, in order of first appearance.
    let mut header: Vec<&str> = Vec::new();
    for item in items {
        if let Some((fields, _)) = fields_of(item) {
            for (k, _) in fields {
                if !header.contains(&k.as_str()) {
                    header.push(k);
                }
            }
        }
    }
    let mut out = header.join("\t");
    for item in items {
        if let Some((fields, record)) = fields_of(item) {
            let row: Vec<String> = header
                .iter()
                .map(|h| {
                    fields
                        .iter()
                        .find(|(k, _)| k == h)
                        .map(|(k, v)| match v {
                            // An empty cell says "none" more quietly than `null`.
                            Node::Undefined | Node::Null => String::new(),
                            other => inline(other, is_hex_key(k, record)),
                        })
                        .unwrap_or_default()
                })
                .collect();
            out.push('\n');
            out.push_str(&row.join("\t"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(fields: &[(&str, Node)]) -> Node {
        Node::Object(
            fields
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn scalars() {
        assert_eq!(top_level(&Node::Number(42.0)), "42");
        assert_eq!(top_level(&Node::Number(4198710.0)), "4198710 (0x401136)");
        assert_eq!(top_level(&Node::Number(1.5)), "1.5");
        // As JavaScript spells them: no 330 characters of zeros for a denormal.
        assert_eq!(top_level(&Node::Number(5e-324)), "5e-324");
        assert_eq!(top_level(&Node::Number(1.5e-10)), "1.5e-10");
        assert_eq!(top_level(&Node::Number(0.000001)), "0.000001");
        assert_eq!(top_level(&Node::Number(1e300)), "1e+300");
        assert_eq!(
            top_level(&Node::BigInt("18446744073709551615".into())),
            "18446744073709551615n (0xffffffffffffffff)"
        );
        assert_eq!(top_level(&Node::Str("a\tb".into())), "a\tb");
        assert_eq!(top_level(&Node::Null), "null");
    }

    #[test]
    fn objects_are_key_tab_value_with_hex_addresses() {
        let o = obj(&[
            ("pc", Node::Number(4198710.0)),
            ("count", Node::Number(3.0)),
            ("name", Node::Str("x".into())),
        ]);
        assert_eq!(top_level(&o), "pc\t0x401136\ncount\t3\nname\tx");
    }

    #[test]
    fn arrays_of_objects_are_tables() {
        let rows = Node::Array(
            vec![
                obj(&[("id", Node::Number(1.0)), ("addr", Node::Number(16.0))]),
                obj(&[
                    ("id", Node::Number(2.0)),
                    ("name", Node::Str("loop".into())),
                ]),
            ],
            0,
        );
        assert_eq!(top_level(&rows), "id\taddr\tname\n1\t0x10\t\n2\t\tloop");
        let more = Node::Array(vec![Node::Number(1.0)], 5);
        assert_eq!(top_level(&more), "1\n[... 5 more]");
    }

    #[test]
    fn only_records_print_every_address_key_in_hex() {
        let fields = vec![
            ("start".to_string(), Node::Number(70000.0)),
            ("pc".to_string(), Node::Number(4198710.0)),
        ];
        assert_eq!(
            top_level(&Node::Object(fields.clone())),
            "start\t70000\npc\t0x401136"
        );
        assert_eq!(
            top_level(&Node::Record(fields)),
            "start\t0x11170\npc\t0x401136"
        );
        let row = Node::Array(vec![Node::Line("0x1 <f>\tnop".into())], 0);
        assert_eq!(inline(&row, false), "[0x1 <f> nop]");
    }

    #[test]
    fn nested_values_are_inline() {
        let o = obj(&[
            (
                "a",
                obj(&[("b", Node::Str("x".into())), ("sp", Node::Number(255.0))]),
            ),
            ("l", Node::Array(vec![Node::Number(1.0)], 2)),
        ]);
        assert_eq!(top_level(&o), "a\t{b: 'x', sp: 0xff}\nl\t[1, ... 2 more]");
    }
}

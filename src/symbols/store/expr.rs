//! The syntax of address expressions a user types: `main`, `main+0x10`, `libc:puts`,
//! `libc.so.6:puts+4`, `0x401136`, `4198710`, `libc.so.6:0x29d90` (a file address in that
//! module). Parsing only; `SymbolStore::resolve` gives the pieces meaning.

use crate::symbols::error::SymbolError;

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Base<'a> {
    /// A plain number: already a runtime address.
    Addr(u64),
    /// A name, optionally restricted to modules matching `module`.
    Symbol {
        module: Option<&'a str>,
        name: &'a str,
    },
    /// `module:0x...`: a link-time address inside that module.
    ModuleAddr { module: &'a str, addr: u64 },
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Expr<'a> {
    pub base: Base<'a>,
    /// Added to (or, when negative, subtracted from) the base.
    pub offset: i128,
}

pub(crate) fn parse(text: &str) -> Result<Expr<'_>, SymbolError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(SymbolError::BadExpr("empty address expression".into()));
    }
    let (base_text, offset) = split_offset(text)?;
    let base = match parse_number(base_text) {
        Some(n) => Base::Addr(n),
        None => match split_module(base_text) {
            Some((module, rest)) => {
                if module.is_empty() || rest.is_empty() {
                    return Err(SymbolError::BadExpr(format!(
                        "bad address expression '{text}'"
                    )));
                }
                match parse_number(rest) {
                    Some(addr) => Base::ModuleAddr { module, addr },
                    None => Base::Symbol {
                        module: Some(module),
                        name: rest,
                    },
                }
            }
            None => Base::Symbol {
                module: None,
                name: base_text,
            },
        },
    };
    Ok(Expr { base, offset })
}

/// `0x`-prefixed hex or plain decimal. Bare hex without `0x` is not accepted: `add` or
/// `dead` could be a symbol.
pub(crate) fn parse_number(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        return u64::from_str_radix(hex, 16).ok();
    }
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Splits a trailing `+N` / `-N`. Only when what follows the operator is a number, so names
/// containing `-` or `+` (`ld-linux-x86-64.so.2:f`, `operator+`) are left whole.
fn split_offset(text: &str) -> Result<(&str, i128), SymbolError> {
    let Some(pos) = text.rfind(['+', '-']) else {
        return Ok((text, 0));
    };
    let (lhs, rhs) = (text[..pos].trim_end(), &text[pos + 1..]);
    let Some(n) = parse_number(rhs) else {
        if rhs.trim().is_empty() && !lhs.is_empty() && !lhs.ends_with("operator") {
            return Err(SymbolError::BadExpr(format!(
                "missing offset after '{}'",
                &text[pos..]
            )));
        }
        return Ok((text, 0));
    };
    if lhs.is_empty() {
        return Err(SymbolError::BadExpr(format!(
            "missing base before '{text}'"
        )));
    }
    let n = i128::from(n);
    Ok((lhs, if text.as_bytes()[pos] == b'-' { -n } else { n }))
}

/// Finds a lone `:` (a `::` is a path separator inside C++ and Rust names), or a `!` as
/// stop lines write it (`libdisk.so!publish`; not the `!` of `operator!` or `operator!=`).
fn split_module(text: &str) -> Option<(&str, &str)> {
    if let Some(pos) = text.find('!') {
        let (lhs, rhs) = (&text[..pos], &text[pos + 1..]);
        if !lhs.is_empty() && !lhs.contains("operator") && !rhs.starts_with('=') {
            return Some((lhs.trim(), rhs.trim()));
        }
    }
    let b = text.as_bytes();
    let pos = (0..b.len())
        .find(|&i| b[i] == b':' && (i == 0 || b[i - 1] != b':') && b.get(i + 1) != Some(&b':'))?;
    Some((text[..pos].trim(), text[pos + 1..].trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym<'a>(module: Option<&'a str>, name: &'a str, offset: i128) -> Expr<'a> {
        Expr {
            base: Base::Symbol { module, name },
            offset,
        }
    }

    #[test]
    fn parses_forms() {
        assert_eq!(parse("main").unwrap(), sym(None, "main", 0));
        assert_eq!(parse(" main+0x10 ").unwrap(), sym(None, "main", 16));
        assert_eq!(parse("main+16").unwrap(), sym(None, "main", 16));
        assert_eq!(parse("main + 16").unwrap(), sym(None, "main", 16));
        assert_eq!(parse("main-2").unwrap(), sym(None, "main", -2));
        assert_eq!(parse("libc:puts").unwrap(), sym(Some("libc"), "puts", 0));
        assert_eq!(
            parse("libc.so.6:puts+0x4").unwrap(),
            sym(Some("libc.so.6"), "puts", 4)
        );
        assert_eq!(
            parse("ld-linux-x86-64.so.2:_dl_debug_state").unwrap(),
            sym(Some("ld-linux-x86-64.so.2"), "_dl_debug_state", 0)
        );
        assert_eq!(parse("ns::Foo::bar").unwrap(), sym(None, "ns::Foo::bar", 0));
        assert_eq!(
            parse("libdisk.so!publish+0x4").unwrap(),
            sym(Some("libdisk.so"), "publish", 4)
        );
        assert_eq!(parse("operator!").unwrap(), sym(None, "operator!", 0));
        assert_eq!(
            parse("ns::X::operator!=").unwrap(),
            sym(None, "ns::X::operator!=", 0)
        );
        assert_eq!(
            parse("app:ns::Foo::bar+1").unwrap(),
            sym(Some("app"), "ns::Foo::bar", 1)
        );
        assert_eq!(
            parse("0x401136").unwrap(),
            Expr {
                base: Base::Addr(0x401136),
                offset: 0
            }
        );
        assert_eq!(
            parse("4198710").unwrap(),
            Expr {
                base: Base::Addr(4198710),
                offset: 0
            }
        );
        assert_eq!(
            parse("0x1000+8").unwrap(),
            Expr {
                base: Base::Addr(0x1000),
                offset: 8
            }
        );
        assert_eq!(
            parse("libc.so.6:0x29d90").unwrap(),
            Expr {
                base: Base::ModuleAddr {
                    module: "libc.so.6",
                    addr: 0x29d90
                },
                offset: 0
            }
        );
        assert_eq!(parse("X::operator+").unwrap(), sym(None, "X::operator+", 0));
    }

    #[test]
    fn rejects_malformed() {
        for bad in ["", "  ", "main+", "+4", ":puts", "libc:", "0xzz+1x"] {
            let r = parse(bad);
            assert!(
                matches!(
                    r,
                    Err(SymbolError::BadExpr(_))
                        | Ok(Expr {
                            base: Base::Symbol { .. },
                            ..
                        })
                ),
                "{bad:?} -> {r:?}"
            );
        }
        assert!(parse("main+").is_err());
        assert!(parse("+4").is_err());
        assert!(parse(":puts").is_err());
        assert!(parse("libc:").is_err());
        assert_eq!(parse_number("0x"), None);
        assert_eq!(parse_number("0xffffffffffffffffff"), None, "overflow");
        assert_eq!(parse_number("12a"), None);
    }
}

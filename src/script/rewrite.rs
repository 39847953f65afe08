//! `continue` is a JavaScript keyword, so `continue()` cannot be a function call. Scripts may
//! still write it: this pass turns each `continue(` outside strings and comments into
//! `cont    (`, padded to the same width so error columns stay true.

/// Rewrites `continue(` calls; everything else is left byte for byte.
pub fn rewrite_continue(src: &str) -> String {
    if !src.contains("continue") {
        return src.to_string();
    }
    let bytes = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let mut last = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < bytes.len() && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                    i += 1;
                }
                i += 2;
            }
            q @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < bytes.len() && bytes[i] != q {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'c' if src[i..].starts_with("continue") => {
                let before_ok = i == 0 || !is_ident(bytes[i - 1]) && bytes[i - 1] != b'.';
                let after = i + "continue".len();
                let mut j = after;
                while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
                    j += 1;
                }
                let after_ok = after >= bytes.len() || !is_ident(bytes[after]);
                if before_ok && after_ok && bytes.get(j) == Some(&b'(') {
                    out.push_str(&src[last..i]);
                    out.push_str("cont    ");
                    last = after;
                }
                i = after;
            }
            _ => i += 1,
        }
    }
    out.push_str(&src[last.min(src.len())..]);
    out
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

#[cfg(test)]
mod tests {
    use super::rewrite_continue;

    #[test]
    fn rewrites_calls_only() {
        assert_eq!(rewrite_continue("continue()"), "cont    ()");
        assert_eq!(
            rewrite_continue("let s = continue({timeout: 1})"),
            "let s = cont    ({timeout: 1})"
        );
        assert_eq!(
            rewrite_continue("for(;;){ continue; }"),
            "for(;;){ continue; }"
        );
        assert_eq!(
            rewrite_continue("'continue()' // continue()"),
            "'continue()' // continue()"
        );
        assert_eq!(rewrite_continue("x.continue()"), "x.continue()");
        assert_eq!(rewrite_continue("discontinue()"), "discontinue()");
        assert_eq!(
            rewrite_continue("`a${1}` + continue ()"),
            "`a${1}` + cont     ()"
        );
    }
}

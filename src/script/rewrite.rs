//! Two passes over a chunk's source before it runs, each keeping every column so error
//! positions stay true:
//! - `continue` is a JavaScript keyword, so `continue()` cannot be a function call. Scripts may
//!   still write it: each `continue(` outside strings and comments becomes `cont    (`.
//! - Each chunk runs as global code, where a top-level `const x` or `let x` would make the
//!   same declaration in any later chunk a SyntaxError ("redeclaration of 'x'"): agents write
//!   `const out = ...` in chunk after chunk. Top-level `const`/`let` declarations become `var`
//!   (`const` as `var  `), so a later chunk may declare the name again and earlier chunks'
//!   values stay reachable. Declarations inside blocks, functions and loop heads keep their
//!   own scope, closures over them included.

/// Both passes: what a chunk runs as.
pub(crate) fn rewrite_chunk(src: &str) -> String {
    rewrite_declarations(&rewrite_continue(src))
}

/// Rewrites `continue(` calls; everything else is left byte for byte.
pub(crate) fn rewrite_continue(src: &str) -> String {
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

/// Turns top-level `const`/`let` declarations into `var` ones (see the module doc).
pub(crate) fn rewrite_declarations(src: &str) -> String {
    if !src.contains("const") && !src.contains("let") {
        return src.to_string();
    }
    let mut scan = Scan {
        b: src.as_bytes(),
        i: 0,
        at: Vec::new(),
    };
    scan.code(true);
    if scan.at.is_empty() {
        return src.to_string();
    }
    let mut out = String::with_capacity(src.len());
    let mut last = 0;
    for (pos, len) in scan.at {
        out.push_str(&src[last..pos]);
        out.push_str(if len == 5 { "var  " } else { "var" });
        last = pos + len;
    }
    out.push_str(&src[last..]);
    out
}

/// A scanner that knows just enough JavaScript to tell code at the top level from strings,
/// comments, template literals, regular expressions and nested brackets.
struct Scan<'a> {
    b: &'a [u8],
    i: usize,
    /// Top-level declarations found: (offset, length of the keyword).
    at: Vec<(usize, usize)>,
}

impl Scan<'_> {
    /// Scans code until the end, or (when not `top`) until the `}` that closes a template
    /// literal's `${`, which it consumes.
    fn code(&mut self, top: bool) {
        let mut depth = 0usize;
        // The last significant byte, and whether a line ended since (a statement may start).
        let mut prev: Option<u8> = None;
        let mut newline = false;
        let mut word_before: &[u8] = b"";
        while self.i < self.b.len() {
            let c = self.b[self.i];
            match c {
                b'\n' => {
                    newline = true;
                    self.i += 1;
                    continue;
                }
                b' ' | b'\t' | b'\r' => {
                    self.i += 1;
                    continue;
                }
                b'/' if self.b.get(self.i + 1) == Some(&b'/') => {
                    while self.i < self.b.len() && self.b[self.i] != b'\n' {
                        self.i += 1;
                    }
                    continue;
                }
                b'/' if self.b.get(self.i + 1) == Some(&b'*') => {
                    self.i += 2;
                    while self.i + 1 < self.b.len()
                        && !(self.b[self.i] == b'*' && self.b[self.i + 1] == b'/')
                    {
                        if self.b[self.i] == b'\n' {
                            newline = true;
                        }
                        self.i += 1;
                    }
                    self.i += 2;
                    continue;
                }
                b'/' if regex_may_follow(prev, word_before) => self.regex(),
                b'\'' | b'"' => self.string(c),
                b'`' => self.template(),
                b'{' | b'(' | b'[' => {
                    depth += 1;
                    self.i += 1;
                }
                b'}' if depth == 0 && !top => {
                    self.i += 1;
                    return;
                }
                b'}' | b')' | b']' => {
                    depth = depth.saturating_sub(1);
                    self.i += 1;
                }
                c if is_ident(c) => {
                    let start = self.i;
                    while self.i < self.b.len() && is_ident(self.b[self.i]) {
                        self.i += 1;
                    }
                    let word = &self.b[start..self.i];
                    let statement_start =
                        prev.is_none() || matches!(prev, Some(b';' | b'}')) || newline;
                    let after_dot = prev == Some(b'.');
                    if top
                        && depth == 0
                        && statement_start
                        && !after_dot
                        && (word == b"const" || word == b"let")
                        && self.binding_follows()
                    {
                        self.at.push((start, word.len()));
                    }
                    word_before = word;
                    prev = Some(word[word.len() - 1]);
                    newline = false;
                    continue;
                }
                _ => self.i += 1,
            }
            prev = Some(c);
            word_before = b"";
            newline = false;
        }
    }

    /// After `const`/`let`: a name or a destructuring pattern, so `let` is the keyword (not a
    /// variable called `let`).
    fn binding_follows(&self) -> bool {
        let mut j = self.i;
        if j >= self.b.len() || !matches!(self.b[j], b' ' | b'\t' | b'\n' | b'\r' | b'[' | b'{') {
            return false;
        }
        while j < self.b.len() && matches!(self.b[j], b' ' | b'\t' | b'\n' | b'\r') {
            j += 1;
        }
        j < self.b.len()
            && (is_ident(self.b[j]) && !self.b[j].is_ascii_digit()
                || matches!(self.b[j], b'[' | b'{'))
    }

    fn string(&mut self, q: u8) {
        self.i += 1;
        while self.i < self.b.len() && self.b[self.i] != q && self.b[self.i] != b'\n' {
            if self.b[self.i] == b'\\' {
                self.i += 1;
            }
            self.i += 1;
        }
        self.i += 1;
    }

    fn template(&mut self) {
        self.i += 1;
        while self.i < self.b.len() && self.b[self.i] != b'`' {
            match self.b[self.i] {
                b'\\' => self.i += 2,
                b'$' if self.b.get(self.i + 1) == Some(&b'{') => {
                    self.i += 2;
                    self.code(false);
                }
                _ => self.i += 1,
            }
        }
        self.i += 1;
    }

    fn regex(&mut self) {
        self.i += 1;
        let mut class = false;
        while self.i < self.b.len() && self.b[self.i] != b'\n' {
            match self.b[self.i] {
                b'\\' => self.i += 1,
                b'[' => class = true,
                b']' => class = false,
                b'/' if !class => break,
                _ => {}
            }
            self.i += 1;
        }
        self.i += 1;
    }
}

/// Whether a `/` after `prev` (the last significant byte; `word`, the identifier or keyword
/// it ends, if any) begins a regular expression rather than a division.
fn regex_may_follow(prev: Option<u8>, word: &[u8]) -> bool {
    match prev {
        None => true,
        Some(c) if is_ident(c) => matches!(
            word,
            b"return"
                | b"typeof"
                | b"case"
                | b"do"
                | b"else"
                | b"in"
                | b"of"
                | b"new"
                | b"delete"
                | b"void"
                | b"throw"
                | b"instanceof"
                | b"yield"
                | b"await"
        ),
        Some(b')' | b']' | b'}') => false,
        Some(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::{rewrite_continue, rewrite_declarations};

    #[test]
    fn top_level_declarations_become_var() {
        let r = rewrite_declarations;
        assert_eq!(r("const out = 1"), "var   out = 1");
        assert_eq!(
            r("let a = 1; const {b, c} = o\nlet [d] = e"),
            "var a = 1; var   {b, c} = o\nvar [d] = e"
        );
        // Nested scopes keep theirs: blocks, functions, loop heads, closures.
        for keep in [
            "{ const x = 1 }",
            "for (const x of xs) f(x)",
            "function f() { let y = 2; return y }",
            "xs.map(x => { const y = x; return y })",
            "if (a) { let z = 1 }",
        ] {
            assert_eq!(r(keep), keep);
        }
        // Not declarations: strings, comments, templates, members, regexes, `let` as a name.
        for keep in [
            "'const x = 1'",
            "// const x = 1",
            "/* let y */ 1",
            "`${ (() => { const q = 1; return q })() } const w`",
            "o.const = 1",
            "x = /[}]/.test(s); y",
            "let = 5",
            "const1 = 2",
        ] {
            assert_eq!(r(keep), keep);
        }
        // After a regex, a template or a block the scan is still at the top level.
        assert_eq!(r("/}/.test(s)\nconst a = 1"), "/}/.test(s)\nvar   a = 1");
        assert_eq!(r("`${{}}`; let b = 2"), "`${{}}`; var b = 2");
        assert_eq!(
            r("if (x) { y() } const c = 3"),
            "if (x) { y() } var   c = 3"
        );
        assert_eq!(r("a = b / c; const d = 1"), "a = b / c; var   d = 1");
    }

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

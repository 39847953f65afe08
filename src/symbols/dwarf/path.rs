//! The C-like value paths scripts write: `r->target->port`, `nodes[1].name`, `*p`, `&x`,
//! `matrix[2][3]`, `list[n->key]`, `values::COUNTER`, `'other.c'::counter`. Parsing only; the
//! session gives the names meaning. No arithmetic, casts or calls: a path names an object.

/// Nesting and length bounds: a path is typed by a person or a model, not generated.
const MAX_LEN: usize = 1024;
const MAX_DEPTH: usize = 32;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Path {
    /// A variable: local, parameter, global or static (`a`, `ns::b`).
    Name(String),
    /// A global or static of one source file, as gdb spells it: `'other.c'::counter`.
    InFile { file: String, name: String },
    /// An integer literal (only as an index).
    Number(i64),
    /// A quoted string (only as an index: a map's key, `stock["nuts"]`).
    Text(String),
    /// `x.m` and `x->m` (a pointer is followed either way).
    Member(Box<Path>, String),
    /// `x[i]`
    Index(Box<Path>, Box<Path>),
    /// `*x`
    Deref(Box<Path>),
    /// `&x`
    AddressOf(Box<Path>),
    /// `(T)x`: `x` read as type `T` (a pointer type takes `x`'s value as the address).
    Cast(String, Box<Path>),
}

/// Why a text is no path: what was wrong, and where (columns count from 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathError {
    /// gdb's `$rdi` in a path: a register, read through `state.registers`.
    Register {
        name: String,
    },
    TooLong,
    TooDeep,
    /// Text left after a whole path (`a + b`): the character and the path, to point at it.
    Unexpected {
        found: char,
        column: usize,
        path: String,
    },
    Expected {
        what: Expected,
        column: usize,
    },
    /// A name was due where something else stands (`a[+]`).
    NoName {
        column: usize,
        found: char,
    },
    /// The path ends where a name was due (`*`).
    NoNameAtEnd,
    /// `'file.c'` not followed by `::name`.
    NoScope {
        file: String,
        column: usize,
    },
    EmptyCast {
        column: usize,
    },
    EmptyFile {
        column: usize,
    },
    UnclosedQuote {
        column: usize,
    },
    UnclosedString {
        column: usize,
    },
    BadNumber(String),
}

/// What a path needed at a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    MemberName,
    CloseBracket,
    CloseParen,
    NameAfterScope,
}

impl std::fmt::Display for Expected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Expected::MemberName => "a member name",
            Expected::CloseBracket => "']'",
            Expected::CloseParen => "')'",
            Expected::NameAfterScope => "a name after '::'",
        })
    }
}

/// A path as it is written (`nb[h]`, `n->next.val`, `*p`), to name a part of it in an error.
impl std::fmt::Display for Path {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Path::Name(n) => write!(f, "{n}"),
            Path::InFile { file, name } => write!(f, "'{file}'::{name}"),
            Path::Number(n) => write!(f, "{n}"),
            Path::Text(t) => write!(f, "{t:?}"),
            Path::Member(base, m) => write!(f, "{base}.{m}"),
            Path::Index(base, i) => write!(f, "{base}[{i}]"),
            Path::Deref(inner) => write!(f, "*{inner}"),
            Path::AddressOf(inner) => write!(f, "&{inner}"),
            Path::Cast(ty, inner) => write!(f, "({ty}){inner}"),
        }
    }
}

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PathError::TooLong => write!(f, "value path longer than {MAX_LEN} bytes"),
            PathError::TooDeep => write!(f, "value path nested too deeply"),
            PathError::Unexpected {
                found,
                column,
                path,
            } => {
                write!(
                    f,
                    "unexpected '{found}' at column {column} of '{path}' (paths use names, ., ->, [i], * and &)"
                )?;
                // `v.size()`, `opt.value().host`: a method call, which gdb makes in the
                // program and scry does not; the spellings that answer the same.
                let before = path.get(..column.saturating_sub(1)).unwrap_or("");
                let called = *found == '(' && before.ends_with(|c: char| c.is_alphanumeric() || c == '_');
                if called {
                    write!(
                        f,
                        "; a path calls no methods: a container's count is its .length in JS (state.var('v').length), an element v[i] or m[\"key\"], what an optional or smart pointer holds *p or p.member (it lends its members)"
                    )?;
                }
                Ok(())
            }
            PathError::Expected { what, column } => write!(f, "expected {what} at column {column}"),
            PathError::NoName { column, found } => {
                write!(f, "expected a name at column {column}, found '{found}'")
            }
            PathError::NoNameAtEnd => write!(f, "expected a name at the end of the path"),
            PathError::NoScope { file, column } => write!(
                f,
                "expected '::' after '{file}' at column {column} ('file.c'::name)"
            ),
            PathError::EmptyCast { column } => write!(f, "empty type in a cast at column {column}"),
            PathError::EmptyFile { column } => write!(f, "empty file name at column {column}"),
            PathError::UnclosedQuote { column } => write!(f, "unclosed quote at column {column}"),
            PathError::UnclosedString { column } => write!(f, "unclosed string at column {column}"),
            PathError::BadNumber(text) => write!(f, "bad number '{text}'"),
            PathError::Register { name } => write!(
                f,
                "'${name}' is a register, which a path has none of: read it with state.registers.{name} (what it points at: state.typed(state.registers.{name}, 'T'))"
            ),
        }
    }
}

impl std::error::Error for PathError {}

pub fn parse(text: &str) -> Result<Path, PathError> {
    // gdb's `$rdi`: registers are no part of a path, and the error says where they are.
    parse_path(text).map_err(|e| match register_in(text) {
        Some(name) => PathError::Register { name },
        None => e,
    })
}

/// The register a path names gdb's way (`$rdi`), if it does.
fn register_in(text: &str) -> Option<String> {
    let at = text.find('$')?;
    let name: String = text[at + 1..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    (!name.is_empty()).then_some(name)
}

fn parse_path(text: &str) -> Result<Path, PathError> {
    if text.len() > MAX_LEN {
        return Err(PathError::TooLong);
    }
    let mut p = Parser {
        s: text.as_bytes(),
        at: 0,
        depth: 0,
    };
    let path = p.unary()?;
    p.space();
    if p.at < p.s.len() {
        return Err(PathError::Unexpected {
            found: p.rest_char(),
            column: p.at + 1,
            path: text.to_string(),
        });
    }
    Ok(path)
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
    depth: usize,
}

impl Parser<'_> {
    fn space(&mut self) {
        while self.s.get(self.at).is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn rest_char(&self) -> char {
        std::str::from_utf8(&self.s[self.at..])
            .ok()
            .and_then(|r| r.chars().next())
            .unwrap_or('?')
    }

    fn eat(&mut self, tok: &str) -> bool {
        self.space();
        if self.s[self.at..].starts_with(tok.as_bytes()) {
            self.at += tok.len();
            true
        } else {
            false
        }
    }

    fn deeper(&mut self) -> Result<(), PathError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(PathError::TooDeep);
        }
        Ok(())
    }

    fn expected(&self, what: Expected) -> PathError {
        PathError::Expected {
            what,
            column: self.at + 1,
        }
    }

    fn unary(&mut self) -> Result<Path, PathError> {
        self.deeper()?;
        let out = if self.eat("*") {
            Path::Deref(Box::new(self.unary()?))
        } else if self.eat("&") {
            Path::AddressOf(Box::new(self.unary()?))
        } else {
            self.postfix()?
        };
        self.depth -= 1;
        Ok(out)
    }

    fn postfix(&mut self) -> Result<Path, PathError> {
        let mut cur = self.primary()?;
        loop {
            if self.eat("->") || self.eat(".") {
                // A tuple's field by position (Rust `pair.1`): the member rustc names `__1`.
                let name = match self.digits() {
                    Some(n) => format!("__{n}"),
                    None => self
                        .ident()
                        .ok_or_else(|| self.expected(Expected::MemberName))?,
                };
                cur = Path::Member(Box::new(cur), name);
            } else if self.eat("[") {
                self.deeper()?;
                let index = match self.literal_key() {
                    Some(key) => key,
                    None => self.unary()?,
                };
                self.depth -= 1;
                if !self.eat("]") {
                    return Err(self.expected(Expected::CloseBracket));
                }
                cur = Path::Index(Box::new(cur), Box::new(index));
            } else {
                return Ok(cur);
            }
        }
    }

    fn primary(&mut self) -> Result<Path, PathError> {
        if let Some(cast) = self.cast()? {
            return Ok(cast);
        }
        if self.eat("(") {
            self.deeper()?;
            let inner = self.unary()?;
            self.depth -= 1;
            if !self.eat(")") {
                return Err(self.expected(Expected::CloseParen));
            }
            return Ok(inner);
        }
        self.space();
        if let Some(n) = self.number()? {
            return Ok(Path::Number(n));
        }
        if self.s.get(self.at) == Some(&b'"') {
            return self.text();
        }
        if self.s.get(self.at) == Some(&b'\'') {
            return self.in_file();
        }
        let name = self.ident().ok_or_else(|| match self.s.get(self.at) {
            None => PathError::NoNameAtEnd,
            Some(_) => PathError::NoName {
                column: self.at + 1,
                found: self.rest_char(),
            },
        })?;
        let name = self.with_template_args(name);
        Ok(Path::Name(self.qualified(name)?))
    }

    /// `name<args>` when `::` follows the arguments (`Ring<int, 4>::instances`, a static
    /// member of a class template), spelled as GCC and clang name the class (one space
    /// after each comma, none inside the brackets); else `name` as it was, the `<` left.
    fn with_template_args(&mut self, mut name: String) -> String {
        if self.s.get(self.at) != Some(&b'<') {
            return name;
        }
        let mut depth = 0usize;
        let mut end = None;
        for (i, &b) in self.s.iter().enumerate().skip(self.at) {
            match b {
                b'<' | b'(' => depth += 1,
                b'>' | b')' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = Some(i + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end.filter(|&e| self.s[e..].starts_with(b"::")) else {
            return name;
        };
        let args = String::from_utf8_lossy(&self.s[self.at..end]);
        let words: Vec<&str> = args.split_whitespace().collect();
        let mut spelled = words.join(" ");
        for (from, to) in [
            (" ,", ","),
            (",", ", "),
            ("<  ", "<"),
            ("< ", "<"),
            (" >", ">"),
            ("  ", " "),
        ] {
            spelled = spelled.replace(from, to);
        }
        name.push_str(&spelled);
        self.at = end;
        name
    }

    /// `(T)x`: parentheses followed by the start of another operand (a name, a number,
    /// `*`, `&`, `(` or a quote) hold a type, as in C; `(x).m` and `(*p)[2]` stay groups.
    fn cast(&mut self) -> Result<Option<Path>, PathError> {
        self.space();
        if self.s.get(self.at) != Some(&b'(') {
            return Ok(None);
        }
        // The matching `)`, with `<>` and `[]` inside (template arguments, array sizes).
        let mut depth = 0usize;
        let mut close = None;
        for (i, &b) in self.s.iter().enumerate().skip(self.at) {
            match b {
                b'(' | b'<' | b'[' => depth += 1,
                b')' | b'>' | b']' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 && b == b')' {
                        close = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else {
            return Ok(None);
        };
        let mut after = close + 1;
        while self.s.get(after).is_some_and(|b| b.is_ascii_whitespace()) {
            after += 1;
        }
        let operand = self.s.get(after).is_some_and(|&b| {
            b == b'_'
                || b == b'*'
                || b == b'&'
                || b == b'('
                || b == b'\''
                || b.is_ascii_alphanumeric()
        });
        if !operand {
            return Ok(None);
        }
        let ty = String::from_utf8_lossy(&self.s[self.at + 1..close])
            .trim()
            .to_string();
        if ty.is_empty() {
            return Err(PathError::EmptyCast {
                column: self.at + 1,
            });
        }
        self.at = close + 1;
        self.deeper()?;
        let inner = self.unary()?;
        self.depth -= 1;
        Ok(Some(Path::Cast(ty, Box::new(inner))))
    }

    /// The rest of a qualified name (`ns::name`, `crate::module::STATIC`) after its first part.
    fn qualified(&mut self, mut name: String) -> Result<String, PathError> {
        while self.s[self.at..].starts_with(b"::") {
            self.at += 2;
            let part = self
                .ident()
                .ok_or_else(|| self.expected(Expected::NameAfterScope))?;
            name.push_str("::");
            name.push_str(&part);
            name = self.with_template_args(name);
        }
        Ok(name)
    }

    /// `'file.c'::name`: the quoted file, then a (qualified) name.
    fn in_file(&mut self) -> Result<Path, PathError> {
        let open = self.at;
        let len = self.s[open + 1..]
            .iter()
            .position(|&b| b == b'\'')
            .ok_or(PathError::UnclosedQuote { column: open + 1 })?;
        let file = String::from_utf8_lossy(&self.s[open + 1..open + 1 + len]).into_owned();
        if file.trim().is_empty() {
            return Err(PathError::EmptyFile { column: open + 1 });
        }
        self.at = open + len + 2;
        // gdb's quoting of a whole C++ name that has spaces or parentheses in it:
        // `'(anonymous namespace)::counter'`, then members and indexes as after any name.
        if !self.s[self.at..].starts_with(b"::") && file.contains("::") {
            return Ok(Path::Name(file.trim().to_string()));
        }
        if !self.s[self.at..].starts_with(b"::") {
            return Err(PathError::NoScope {
                file,
                column: self.at + 1,
            });
        }
        self.at += 2;
        let first = self
            .ident()
            .ok_or_else(|| self.expected(Expected::NameAfterScope))?;
        let name = self.qualified(first)?;
        Ok(Path::InFile { file, name })
    }

    fn ident(&mut self) -> Option<String> {
        self.space();
        let start = self.at;
        while self
            .s
            .get(self.at)
            .is_some_and(|&b| b == b'_' || b == b'$' || b.is_ascii_alphanumeric())
        {
            self.at += 1;
        }
        if self.at == start || self.s[start].is_ascii_digit() {
            self.at = start;
            return None;
        }
        // gdb's `m@entry`: a parameter's value at the function's entry.
        const ENTRY: &[u8] = b"@entry";
        if self.s[self.at..].starts_with(ENTRY)
            && !self
                .s
                .get(self.at + ENTRY.len())
                .is_some_and(|&b| b == b'_' || b.is_ascii_alphanumeric())
        {
            self.at += ENTRY.len();
        }
        Some(String::from_utf8_lossy(&self.s[start..self.at]).into_owned())
    }

    /// `"text"`, with `\"` and `\\` escaped.
    /// A key written as JavaScript and C++ write literals, alone in brackets: `'red'` (a
    /// string in single quotes, which a path otherwise reads as gdb's `'file.c'::name`),
    /// `'z'` (a `char` key, compared by its character), `true` and `false` (1 and 0). The
    /// position is left as it was when the brackets hold anything else.
    fn literal_key(&mut self) -> Option<Path> {
        self.space();
        let start = self.at;
        let closes_here = |p: &mut Self| {
            p.space();
            p.s.get(p.at) == Some(&b']')
        };
        if self.s.get(start) == Some(&b'\'') {
            let end = start + 1 + self.s[start + 1..].iter().position(|&b| b == b'\'')?;
            let text = String::from_utf8_lossy(&self.s[start + 1..end]).into_owned();
            self.at = end + 1;
            if closes_here(self) {
                return Some(Path::Text(text));
            }
        } else {
            for (word, n) in [("true", 1), ("false", 0)] {
                let after = self.s.get(start + word.len());
                if self.s[start..].starts_with(word.as_bytes())
                    && !after.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
                {
                    self.at = start + word.len();
                    if closes_here(self) {
                        return Some(Path::Number(n));
                    }
                }
            }
        }
        self.at = start;
        None
    }

    fn text(&mut self) -> Result<Path, PathError> {
        let open = self.at;
        let mut out = Vec::new();
        let mut i = open + 1;
        loop {
            match self.s.get(i) {
                None => return Err(PathError::UnclosedString { column: open + 1 }),
                Some(b'"') => break,
                Some(b'\\') if matches!(self.s.get(i + 1), Some(b'"' | b'\\')) => {
                    out.push(self.s[i + 1]);
                    i += 2;
                }
                Some(&b) => {
                    out.push(b);
                    i += 1;
                }
            }
        }
        self.at = i + 1;
        Ok(Path::Text(String::from_utf8_lossy(&out).into_owned()))
    }

    /// A run of decimal digits right here (a tuple field's position).
    fn digits(&mut self) -> Option<String> {
        self.space();
        let start = self.at;
        while self.s.get(self.at).is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        (self.at > start).then(|| String::from_utf8_lossy(&self.s[start..self.at]).into_owned())
    }

    fn number(&mut self) -> Result<Option<i64>, PathError> {
        let start = self.at;
        let neg = self.s.get(self.at) == Some(&b'-');
        if neg {
            self.at += 1;
        }
        if !self.s.get(self.at).is_some_and(|b| b.is_ascii_digit()) {
            self.at = start;
            return Ok(None);
        }
        let digits_start = self.at;
        while self
            .s
            .get(self.at)
            .is_some_and(|b| b.is_ascii_alphanumeric())
        {
            self.at += 1;
        }
        let text = std::str::from_utf8(&self.s[digits_start..self.at]).unwrap_or("");
        let value = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
            Some(hex) => i64::from_str_radix(hex, 16),
            None => text.parse(),
        }
        .map_err(|_| PathError::BadNumber(text.to_string()))?;
        Ok(Some(if neg { -value } else { value }))
    }
}

#[cfg(test)]
#[path = "path_tests.rs"]
mod tests;

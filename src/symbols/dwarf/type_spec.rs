//! A type as a user writes it (`struct foo *`, `PyASCIIObject *`, `unsigned char [16]`,
//! `geo::Ring<int, 4>`), found in the DWARF by name: what `state.typed(addr, type)` and
//! casts in value paths (`(struct foo *)p`) read values as.

use super::tree::InfoTree;
use super::types::{Kind, TypeId};

/// Pointer levels and array dimensions a spec may add at most.
const MAX_DECLARATORS: usize = 8;

/// A parsed spec: the named type, then `*`s and `[n]`s in the order written.
#[derive(Debug, PartialEq, Eq)]
struct Spec<'a> {
    /// `struct`, `union`, `enum` or `class` when written.
    keyword: Option<&'a str>,
    name: &'a str,
    pointers: usize,
    /// Array dimensions after the pointers (`char *[4]`: four pointers).
    dims: Vec<u64>,
}

/// `rest` without a trailing `const` or `volatile` that follows a `*` or a blank (`char
/// *const`, `int const`), else `None`.
fn qualifier_stripped(rest: &str) -> Option<&str> {
    ["const", "volatile"].iter().find_map(|q| {
        let r = rest.strip_suffix(q)?;
        r.ends_with(|c: char| c == '*' || c.is_whitespace())
            .then_some(r)
    })
}

/// Why a text names no type: what is wrong with it, and the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TypeSpecError {
    BadArraySize { size: String, spec: String },
    TooManyDimensions { spec: String },
    TooManyPointers { spec: String },
    NoName { spec: String },
}

impl std::fmt::Display for TypeSpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TypeSpecError::BadArraySize { size, spec } => {
                write!(f, "bad array size '{size}' in type '{spec}'")
            }
            TypeSpecError::TooManyDimensions { spec } => {
                write!(f, "type '{spec}' has too many dimensions")
            }
            TypeSpecError::TooManyPointers { spec } => {
                write!(f, "type '{spec}' has too many pointer levels")
            }
            TypeSpecError::NoName { spec } => write!(f, "no type name in '{spec}'"),
        }
    }
}

impl std::error::Error for TypeSpecError {}

fn parse(text: &str) -> Result<Spec<'_>, TypeSpecError> {
    let mut rest = text.trim();
    let mut dims = Vec::new();
    while let Some(open) = rest.strip_suffix(']').and_then(|r| r.rfind('[')) {
        let n = rest[open + 1..rest.len() - 1].trim();
        let n: u64 = n.parse().map_err(|_| TypeSpecError::BadArraySize {
            size: n.to_string(),
            spec: text.to_string(),
        })?;
        dims.insert(0, n);
        rest = rest[..open].trim_end();
        if dims.len() > MAX_DECLARATORS {
            return Err(TypeSpecError::TooManyDimensions {
                spec: text.to_string(),
            });
        }
    }
    let mut pointers = 0;
    loop {
        rest = rest.trim_end();
        if let Some(r) = rest.strip_suffix('*') {
            pointers += 1;
            rest = r;
        } else if let Some(r) = qualifier_stripped(rest) {
            rest = r;
        } else {
            break;
        }
        if pointers > MAX_DECLARATORS {
            return Err(TypeSpecError::TooManyPointers {
                spec: text.to_string(),
            });
        }
    }
    let mut rest = rest.trim();
    for q in ["const ", "volatile "] {
        rest = rest.strip_prefix(q).unwrap_or(rest).trim_start();
    }
    let mut keyword = None;
    for k in ["struct ", "union ", "enum ", "class "] {
        if let Some(r) = rest.strip_prefix(k) {
            keyword = Some(k.trim_end());
            rest = r.trim_start();
        }
    }
    if rest.is_empty() || matches!(rest, "struct" | "union" | "enum" | "class") {
        return Err(TypeSpecError::NoName {
            spec: text.to_string(),
        });
    }
    Ok(Spec {
        keyword,
        name: rest,
        pointers,
        dims,
    })
}

impl InfoTree {
    /// The type `text` names in this DWARF; `Ok(None)` when it names none here (`void *`
    /// is a pointer to no type: `Ok(Some(..))`). An error is a spec that is no type.
    pub(crate) fn type_by_spec(&self, text: &str) -> Result<Option<Option<TypeId>>, TypeSpecError> {
        let spec = parse(text)?;
        let base = if spec.name == "void" {
            None
        } else {
            let wanted = |id: TypeId| {
                let Some(t) = self.type_of(id) else {
                    return false;
                };
                match (spec.keyword, &t.kind) {
                    (None, _) => true,
                    (Some("enum"), Kind::Enum { .. }) => true,
                    (Some("enum"), _) => false,
                    (Some(_), Kind::Aggregate { .. }) => true,
                    _ => false,
                }
            };
            let found = self
                .types_named(spec.name)
                .into_iter()
                .map(TypeId)
                .find(|&id| wanted(id));
            match found {
                Some(id) => Some(id),
                None => return Ok(None),
            }
        };
        let mut ty = base;
        for _ in 0..spec.pointers {
            ty = Some(self.synthetic_pointer(ty));
        }
        if !spec.dims.is_empty() {
            let counts = spec.dims.iter().map(|&d| Some(d)).collect();
            ty = Some(self.synthetic_array(ty, counts));
        }
        Ok(Some(ty))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_read_as_c_writes_them() {
        let s = parse("struct foo *").unwrap();
        assert_eq!((s.keyword, s.name, s.pointers), (Some("struct"), "foo", 1));
        let s = parse("const char **").unwrap();
        assert_eq!((s.name, s.pointers), ("char", 2));
        let s = parse("unsigned char [16]").unwrap();
        assert_eq!((s.name, s.pointers, s.dims), ("unsigned char", 0, vec![16]));
        let s = parse("geo::Ring<int, 4> *const").unwrap();
        assert_eq!((s.name, s.pointers), ("geo::Ring<int, 4>", 1));
        let s = parse("int [2][3]").unwrap();
        assert_eq!(s.dims, vec![2, 3]);
        assert!(parse("").is_err());
        assert_eq!(
            parse("int [x]").unwrap_err().to_string(),
            "bad array size 'x' in type 'int [x]'"
        );
        assert!(matches!(
            parse("struct *"),
            Err(TypeSpecError::NoName { .. })
        ));
    }
}

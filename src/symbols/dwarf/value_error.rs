//! Why a typed value, or the part of one asked for, cannot be read: its bytes are not there
//! (unreadable memory, no place at this pc), its type allows no such step (no member of
//! that name, not a pointer, an index past the end), or a Rust layout is not as expected.
//! Type names are spelled when the error is made: the message says what the user wrote.

use super::location::Gone;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ValueError {
    /// No place here (`<optimized out>`, `<unavailable: …>`): said as a variable without
    /// one is, so it prints the same in a value or as one.
    Gone(Gone),
    Unreadable {
        addr: u64,
        size: u64,
    },
    NoSize {
        ty: String,
    },
    /// Over `MAX_VALUE_BYTES`: read piece by piece instead.
    TooLarge {
        ty: String,
        size: u64,
    },
    VoidMember {
        name: String,
    },
    /// `members` are the names there are (none: the type has no members at all).
    NoMember {
        ty: String,
        name: String,
        members: Vec<String>,
    },
    /// Two base classes both have the member (`second` is the one a `$base` would read).
    AmbiguousMember {
        name: String,
        first: String,
        second: String,
    },
    DerefVoid,
    DerefVoidPointer,
    NotDereferenceable {
        ty: String,
    },
    /// A pointer type whose value is no address.
    NotAPointer,
    Null {
        ty: String,
    },
    IndexVoid,
    NotIndexable {
        ty: String,
    },
    /// Past an array's bounds; `count` unknown for `T[]`.
    OutOfBounds {
        index: i64,
        ty: String,
        count: Option<u64>,
    },
    /// Past a Rust slice's, `Vec`'s or `str`'s length.
    PastLength {
        index: i64,
        len: u64,
    },
    NoElementSize,
    NoPointeeSize,
    NotInMemory,
    /// A Rust sequence's length is no integer.
    NotANumber,
    /// The length of a Rust sequence is known and its data pointer is not (-O2).
    ElementsGone {
        len: u64,
    },
    /// A Rust `Vec` without the field (`len`, `buf`) its layout has.
    NoField(&'static str),
    /// A Rust sequence whose fields cannot be a live one (a length past any memory, a data
    /// pointer misaligned for its elements): a stale or corrupt value.
    ImpossibleSequence {
        len: u64,
        ptr: u64,
    },
    NoDataPointer,
}

impl ValueError {
    /// The error where the value would be printed: a missing place as it says itself
    /// (`<optimized out>`), anything else in angle brackets.
    pub(crate) fn bracketed(&self) -> String {
        match self {
            ValueError::Gone(g) => g.text(),
            e => format!("<{e}>"),
        }
    }
}

impl std::fmt::Display for ValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ValueError::Gone(g) => f.write_str(&g.text()),
            ValueError::Unreadable { addr, size } => {
                write!(f, "cannot read {size} bytes at {addr:#x}")
            }
            ValueError::NoSize { ty } => write!(f, "{ty} has no known size"),
            ValueError::TooLarge { ty, size } => write!(
                f,
                "{ty} is {size} bytes; read its members or elements instead"
            ),
            ValueError::VoidMember { name } => write!(f, "void has no member '{name}'"),
            ValueError::NoMember { ty, members, .. } if members.is_empty() => {
                write!(f, "{ty} has no members")
            }
            ValueError::NoMember { ty, name, members } => write!(
                f,
                "{ty} has no member '{name}'; members: {}",
                members.join(" ")
            ),
            ValueError::AmbiguousMember {
                name,
                first,
                second,
            } => write!(
                f,
                "member '{name}' is ambiguous: both base {first} and base {second} have one (read it through one: v.$base('{second}'))"
            ),
            ValueError::DerefVoid => write!(f, "cannot dereference a void value"),
            ValueError::DerefVoidPointer => write!(f, "cannot dereference a void pointer"),
            ValueError::NotDereferenceable { ty } => {
                write!(f, "cannot dereference {ty}: not a pointer")
            }
            ValueError::NotAPointer => write!(f, "not a pointer"),
            ValueError::Null { ty } => write!(f, "{ty} is NULL"),
            ValueError::IndexVoid => write!(f, "cannot index a void value"),
            ValueError::NotIndexable { ty } => {
                write!(f, "cannot index {ty}: not an array, pointer or slice")
            }
            ValueError::OutOfBounds { index, ty, count } => {
                write!(f, "index {index} is out of bounds of {ty} (")?;
                match count {
                    Some(c) => write!(f, "{c} elements)"),
                    None => write!(f, "? elements)"),
                }
            }
            ValueError::PastLength { index, len } => {
                write!(f, "index {index} is out of bounds (length {len})")
            }
            ValueError::NoElementSize => write!(f, "the element type has no size"),
            ValueError::NoPointeeSize => {
                write!(f, "cannot index a pointer to a type without a size")
            }
            ValueError::NotInMemory => write!(
                f,
                "cannot take the address of a value that is not in memory"
            ),
            ValueError::NotANumber => write!(f, "not a number"),
            ValueError::ElementsGone { len } => {
                write!(f, "optimized out: length {len}, the elements' address")
            }
            ValueError::NoField(name) => write!(f, "no {name}"),
            ValueError::ImpossibleSequence { len, ptr } => write!(
                f,
                "invalid: {len} elements at {ptr:#x} cannot be (a stale or corrupt value)"
            ),
            ValueError::NoDataPointer => write!(f, "no data pointer"),
        }
    }
}

impl std::error::Error for ValueError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_as_before() {
        let e = ValueError::NoMember {
            ty: "struct node".into(),
            name: "nxt".into(),
            members: vec!["key".into(), "next".into()],
        };
        assert_eq!(
            e.to_string(),
            "struct node has no member 'nxt'; members: key next"
        );
        let e = ValueError::NoMember {
            ty: "struct empty".into(),
            name: "x".into(),
            members: vec![],
        };
        assert_eq!(e.to_string(), "struct empty has no members");
        let e = ValueError::OutOfBounds {
            index: 9,
            ty: "int [4]".into(),
            count: Some(4),
        };
        assert_eq!(
            e.to_string(),
            "index 9 is out of bounds of int [4] (4 elements)"
        );
        let e = ValueError::OutOfBounds {
            index: -1,
            ty: "char []".into(),
            count: None,
        };
        assert_eq!(
            e.to_string(),
            "index -1 is out of bounds of char [] (? elements)"
        );
        assert_eq!(
            ValueError::Unreadable {
                addr: 0x10,
                size: 4
            }
            .to_string(),
            "cannot read 4 bytes at 0x10"
        );
    }

    #[test]
    fn only_a_missing_place_prints_without_brackets() {
        assert_eq!(
            ValueError::Gone(Gone::OptimizedOut).bracketed(),
            "<optimized out>"
        );
        assert_eq!(
            ValueError::Null { ty: "int *".into() }.bracketed(),
            "<int * is NULL>"
        );
    }
}

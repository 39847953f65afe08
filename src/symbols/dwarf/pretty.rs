//! Printers: a value whose type a printer claims (a `std::vector`, a Rust `HashMap`) prints
//! as what it holds (`vector(5) [7, -3, 12, 40, 5]`) instead of its layout. The printers
//! themselves live with the front end (scry's are JavaScript, extensible by scripts); this
//! module is the boundary: the renderer asks the `Target`'s `Pretty` whether a type is
//! claimed and, if so, for the value's summary and children, which it renders like any
//! other value, nested printers included. The renderer stays pure: it never knows what a
//! printer is written in.

use super::types::Type;
use super::value::Value;

/// What a printed value shows after its summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Only the summary (`unique_ptr(null)`).
    Summary,
    /// `summary [a, b, …]`.
    List,
    /// `summary {k: v, …}`.
    Map,
    /// `summary -> v` (what a smart pointer points at).
    Pointer,
    /// `summary(v)` (the one value a wrapper holds: `optional(42)`).
    Value,
}

/// A child of a printed value: a typed value (rendered, printers included) or text the
/// printer made.
#[derive(Clone, Debug, PartialEq)]
pub enum Child {
    Value(Value),
    Text(String),
    /// A flag the printer computed (a `vector<bool>`'s bit): `true`, and a boolean as data.
    Bool(bool),
    /// A number the printer computed: its JavaScript text, and a number as data.
    Number(f64),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Printed {
    pub summary: String,
    pub shape: Shape,
    /// Children in order, with their keys for a map.
    pub items: Vec<(Option<Child>, Child)>,
    /// Children not produced (the printer was asked for fewer), when it knows how many.
    pub more: Option<u64>,
    /// Children remain but the printer does not know how many.
    pub truncated: bool,
    /// What a text-like value (a `std::string`) is as plain data: its characters.
    pub text: Option<String>,
    /// For plain data (asked with `text`): the children are this many values laid out one
    /// after another from the first (a vector's storage), read without the printer; `items`
    /// is then empty.
    pub run: Option<(Value, u64)>,
    /// It holds nothing (an empty optional, a null or expired smart pointer): as plain data,
    /// null, never its summary's words (`"nullopt"` could be a string it held).
    pub empty: bool,
    /// Its entries are in an order of their own (a `std::map`, a `BTreeMap`): as plain data
    /// an object only where JavaScript keeps that order.
    pub ordered: bool,
}

/// Why a printer gave no answer for a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrintError {
    NotInstalled,
    /// The printer threw, or answered with something that is no answer.
    Failed(String),
    /// The printer's own account of why it cannot print the value (`invalid: …`), whole.
    Said(String),
    /// A part the printer read has no value here, said as such a value says itself
    /// (`<optimized out>`): the container is not corrupt, so it prints as it is.
    Missing(String),
    /// The front end could not hand the value to its printers: the engine's words.
    Engine(String),
}

impl PrintError {
    /// The error where the value would be printed.
    pub(crate) fn bracketed(&self) -> String {
        match self {
            PrintError::Missing(s) => s.clone(),
            e => format!("<{e}>"),
        }
    }
}

impl std::fmt::Display for PrintError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrintError::NotInstalled => write!(f, "printers are not installed"),
            PrintError::Failed(why) => write!(f, "printer error: {why}"),
            PrintError::Said(s) | PrintError::Missing(s) | PrintError::Engine(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for PrintError {}

/// The front end's printers, as the renderer sees them.
pub trait Pretty {
    /// Whether a printer claims values of `ty` (named `name`, qualified with its
    /// namespaces and template arguments).
    fn claims(&self, ty: &Type, name: &str) -> bool;
    /// The value printed, at most `want` children produced; with `text`, a text-like
    /// value's characters too, whole (`Printed::text`, for plain data). An error is the
    /// printer's own failure (`<printer error: …>`) or the container's (`<invalid: …>`),
    /// said whole.
    fn print(&self, v: &Value, want: usize, text: bool) -> Result<Printed, PrintError>;
}

#[cfg(test)]
mod tests {
    use super::PrintError;

    #[test]
    fn only_a_missing_part_prints_without_brackets() {
        assert_eq!(
            PrintError::Failed("bad result".into()).bracketed(),
            "<printer error: bad result>"
        );
        assert_eq!(
            PrintError::Missing("<optimized out>".into()).bracketed(),
            "<optimized out>"
        );
    }
}

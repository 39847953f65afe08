//! Errors from resolving user-written address expressions.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SymbolError {
    /// No module defines the name; `suggestions` are near misses for "did you mean".
    Unknown {
        name: String,
        suggestions: Vec<String>,
    },
    /// The expression itself is malformed (bad number, unknown module, overflow).
    BadExpr(String),
}

impl fmt::Display for SymbolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SymbolError::Unknown { name, suggestions } => {
                write!(f, "unknown symbol '{name}'")?;
                if !suggestions.is_empty() {
                    write!(f, " (did you mean {}?)", suggestions.join(", "))?;
                }
                Ok(())
            }
            SymbolError::BadExpr(msg) => write!(f, "{msg}"),
        }
    }
}

impl std::error::Error for SymbolError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages() {
        let e = SymbolError::Unknown {
            name: "mian".into(),
            suggestions: vec!["main".into()],
        };
        assert_eq!(e.to_string(), "unknown symbol 'mian' (did you mean main?)");
        let e = SymbolError::Unknown {
            name: "x".into(),
            suggestions: vec![],
        };
        assert_eq!(e.to_string(), "unknown symbol 'x'");
        let e = SymbolError::Unknown {
            name: "fo".into(),
            suggestions: vec!["foo".into(), "f".into()],
        };
        assert_eq!(e.to_string(), "unknown symbol 'fo' (did you mean foo, f?)");
    }
}

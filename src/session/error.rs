use std::fmt;

use crate::os::OsError;
use crate::symbols::dwarf::value_error::ValueError;
use crate::symbols::SymbolError;

/// Every failure a session call can report; each renders as one line.
#[derive(Debug)]
pub enum SessionError {
    /// No live process; carries how the last one ended, if one did.
    NoProcess(Option<String>),
    Os(OsError),
    Symbol(SymbolError),
    Invalid(String),
    /// No loaded module has this source file: a library loaded later may (a breakpoint on it
    /// waits).
    NotLoaded {
        file: String,
    },
    /// The value, or the part of it asked for, has none here (`<optimized out>`,
    /// `<unavailable: why>`): no error in the program or the request. Scripts see it as an
    /// error with `noValue: true`, so printers print the part as it says itself.
    NoValue(String),
}

impl SessionError {
    /// A symbol or source line no loaded module has: it may come with a library loaded later.
    pub fn is_not_loaded(&self) -> bool {
        matches!(
            self,
            SessionError::Symbol(SymbolError::Unknown { .. })
                | SessionError::NotLoaded { .. }
                | SessionError::NoProcess(_)
        )
    }
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::NoProcess(Some(how)) => write!(f, "no live process ({how})"),
            SessionError::NoProcess(None) => {
                write!(
                    f,
                    "no live process (start one with spawn(path) or attach(pid))"
                )
            }
            SessionError::Os(e) => write!(f, "{e}"),
            SessionError::Symbol(e) => write!(f, "{e}"),
            SessionError::Invalid(msg) | SessionError::NoValue(msg) => write!(f, "{msg}"),
            SessionError::NotLoaded { file } => write!(
                f,
                "no loaded module has code from {file} (is it built with -g, or in a library not loaded yet?)"
            ),
        }
    }
}

impl std::error::Error for SessionError {}

impl From<ValueError> for SessionError {
    fn from(e: ValueError) -> Self {
        match e {
            ValueError::Gone(gone) => SessionError::NoValue(gone.text()),
            // A sequence whose elements' address the optimizer dropped has no value here
            // either: said as the value says it.
            e @ ValueError::ElementsGone { .. } => SessionError::NoValue(format!("<{e}>")),
            e => SessionError::Invalid(e.to_string()),
        }
    }
}

impl From<OsError> for SessionError {
    fn from(e: OsError) -> Self {
        SessionError::Os(e)
    }
}

impl From<SymbolError> for SessionError {
    fn from(e: SymbolError) -> Self {
        SessionError::Symbol(e)
    }
}

/// A bug on hostile DWARF costs this answer, not the session.
pub(super) fn guarded<T>(f: impl FnOnce() -> T) -> super::Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .map_err(|_| SessionError::Invalid("reading this value failed (malformed DWARF?)".into()))
}

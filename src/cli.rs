//! Command-line errors in scry's words: an unknown option names itself and every known one,
//! instead of clap's generic text (and instead of being taken for a program name).

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// `--timeout SECS, -p/--pid PID, ...`: the options `cmd` knows.
pub(crate) fn known_options(cmd: &clap::Command) -> String {
    let mut names: Vec<String> = cmd
        .get_arguments()
        .filter(|a| !a.is_positional() && !a.is_hide_set())
        .map(|a| {
            let mut name = match (a.get_short(), a.get_long()) {
                (Some(s), Some(l)) => format!("-{s}/--{l}"),
                (Some(s), None) => format!("-{s}"),
                (None, Some(l)) => format!("--{l}"),
                (None, None) => a.get_id().to_string(),
            };
            if a.get_action().takes_values() {
                if let Some(value) = a.get_value_names().and_then(|v| v.first()) {
                    name.push(' ');
                    name.push_str(value);
                }
            }
            name
        })
        .collect();
    names.push("-h/--help".into());
    if cmd.get_version().is_some() {
        names.push("-V/--version".into());
    }
    names.dedup();
    names.join(", ")
}

/// What to print for a failed parse, and the exit status: an unknown option becomes one line
/// naming it and the known ones; other errors keep clap's text.
pub fn parse_failure(cmd: &clap::Command, e: &clap::Error) -> (String, u8) {
    if e.kind() == ErrorKind::UnknownArgument {
        if let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) {
            return (
                format!(
                    "scry: unknown option '{arg}'; options: {} (a program whose name starts with '-' goes after '--')\n",
                    known_options(cmd)
                ),
                2,
            );
        }
    }
    let code = if e.use_stderr() { 2 } else { 0 };
    (e.render().to_string(), code)
}

use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use scry::entry::{Opened, Target, TargetOptions};

/// A Linux x86-64 debugger scripted in JavaScript, for LLM agents and their harnesses.
///
/// Reads JavaScript on stdin. Piped: chunks end at a line `;;` (or end of input) and each
/// response ends with a line `;; ok` or `;; error`. On a terminal: a prompt. Run `help()`
/// inside for the API.
///
/// `scry session start|eval|list|stop ...` keeps a session alive between shell commands;
/// `scry mcp` serves the Model Context Protocol on stdio. (A program named `session` or `mcp`
/// is spawned with `scry -- session`.)
#[derive(Parser, Debug)]
#[command(
    name = "scry",
    version,
    about,
    long_about = None,
    after_help = "Piped: end each chunk with a line `;;`; each response ends with `;; ok` or `;; error`.\n\
                  Also: `scry session start|eval|list|stop` (sessions across shell calls), `scry mcp` (MCP on stdio).\n\
                  Inside: help() lists the JavaScript API."
)]
struct Cli {
    /// Attach to this running process instead of spawning one.
    /// (With --remote: a process of the stub's machine, and PROGRAM its local copy.)
    #[arg(short = 'p', long = "pid", value_name = "PID")]
    pid: Option<i32>,

    /// Open this core file (of PROGRAM, when given) instead of running anything.
    #[arg(long = "core", value_name = "CORE", conflicts_with = "pid")]
    core: Option<std::path::PathBuf>,

    /// Evaluate a script file before reading stdin (repeatable; each gets a framed response).
    #[arg(short = 'x', long = "script", value_name = "FILE")]
    scripts: Vec<String>,

    #[command(flatten)]
    options: TargetOptions,

    /// The chunk terminator and status-line prefix of the pipe protocol.
    #[arg(long, value_name = "STR", default_value = ";;")]
    marker: String,

    /// Use the pipe protocol even when stdin is a terminal.
    #[arg(long)]
    batch: bool,

    /// Program to spawn, stopped at its entry point, and its arguments.
    #[arg(value_name = "PROGRAM", trailing_var_arg = true)]
    program: Vec<String>,
}

/// `scry --core CORE PROGRAM -x a.js`: nothing runs under `--core`, so words after the
/// program are scry's own options (as gdb takes `gdb prog core -x a.gdb`), not the program's
/// arguments; the command line is read again with them first.
fn options_after_core_program(cli: Cli) -> Result<Cli, clap::Error> {
    let tail = cli.program.len().saturating_sub(1);
    if cli.core.is_none() || tail == 0 || !cli.program[1].starts_with('-') {
        return Ok(cli);
    }
    let words: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let (head, options) = words.split_at(words.len() - tail);
    let again: Vec<&std::ffi::OsString> =
        head[..1].iter().chain(options).chain(&head[1..]).collect();
    Cli::try_parse_from(again)
}

/// Large blocks on huge pages: see `os::alloc`.
#[global_allocator]
static ALLOC: scry::entry::HugeBlocks = scry::entry::HugeBlocks;

fn main() -> ExitCode {
    scry::entry::protect_self();
    // scry's binary started again to let system calls through for programs it let go.
    if let Some(code) = scry::entry::keeper_main() {
        return ExitCode::from(code as u8);
    }
    let first = std::env::args_os().nth(1);
    if first.as_deref() == Some("session".as_ref()) || first.as_deref() == Some("mcp".as_ref()) {
        let words: Vec<String> = std::env::args_os()
            .skip(2)
            .map(|w| w.to_string_lossy().into_owned())
            .collect();
        return if first.as_deref() == Some("mcp".as_ref()) {
            scry::entry::mcp_main(&words)
        } else {
            scry::entry::daemon_main(&words)
        };
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let (text, code) = scry::entry::parse_failure(&Cli::command(), &e);
            if code == 0 {
                print!("{text}");
            } else {
                eprint!("{text}");
            }
            return ExitCode::from(code);
        }
    };
    let cli = match options_after_core_program(cli) {
        Ok(cli) => cli,
        Err(e) => {
            let (text, code) = scry::entry::parse_failure(&Cli::command(), &e);
            eprint!("{text}");
            return ExitCode::from(code);
        }
    };
    if cli.marker.is_empty() || cli.marker.contains('\n') {
        eprintln!("scry: --marker must be a non-empty single line");
        return ExitCode::from(2);
    }
    let config = match cli.options.config() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("scry: {e}");
            return ExitCode::from(2);
        }
    };
    // Bound before the target starts, so a taken port starts nothing.
    let view = match cli.options.view.as_deref().map(scry::entry::View::open) {
        Some(Ok(view)) => Some(view),
        Some(Err(e)) => {
            eprintln!("scry: {e}");
            return ExitCode::from(2);
        }
        None => None,
    };
    let interactive = scry::entry::stdin_is_terminal() && !cli.batch;
    // Before anything large is allocated: the guardian is a forked process that lives as
    // long as scry, and every page scry writes after the fork is copied for it (forked after
    // loading a large program's symbols, it cost a tenth of the time to the first stop).
    scry::entry::install_signal_handling(interactive);
    let target = match Target::from_command_line(
        cli.core.as_ref(),
        cli.pid,
        cli.options.remote.as_deref(),
        &cli.program,
    ) {
        Ok(target) => target,
        Err(e) => {
            eprintln!("scry: {e}");
            return ExitCode::from(2);
        }
    };
    let opened = match scry::entry::start(config, target.as_ref(), view, &cli.marker) {
        Ok(opened) => opened,
        Err(e) => {
            eprintln!("scry: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(url) = &opened.view_url {
        if let Some(warning) = &opened.view_warning {
            eprintln!("scry: {warning}");
        }
        eprintln!("scry: view at {url}");
    }
    let Opened {
        mut repl,
        first_line,
        ..
    } = opened;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut quit = false;
    for script in &cli.scripts {
        match repl.run_file(script, &mut out) {
            Ok(true) => {}
            Ok(false) => {
                quit = true;
                break;
            }
            Err(e) => eprintln!("scry: {e}"),
        }
    }
    let stdin = std::io::BufReader::new(scry::entry::Stdin);
    let result = if quit || scry::entry::termination().is_some() {
        Ok(())
    } else if interactive {
        if let Some(line) = &first_line {
            let orientation = repl.engine().orientation(Some(line));
            println!("{}", scry::entry::for_terminal(&orientation));
        }
        repl.run_tty(stdin, &mut out)
    } else {
        repl.run_pipe(stdin, &mut out)
    };
    repl.finish_for_exit();
    if let Some(sig) = scry::entry::termination() {
        eprintln!("scry: ended by signal {sig}; the target was released");
        return ExitCode::from(128 + sig as u8);
    }
    match result {
        // Like a shell script, a session with a failed chunk does not exit 0 (harnesses read
        // the status lines anyway; this is for `scry -x check.js < /dev/null && ...`).
        Ok(()) if repl.any_failed() && !interactive => ExitCode::from(1),
        Ok(()) => ExitCode::SUCCESS,
        // A closed stdout (the harness went away) is the end of the session, not a crash.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("scry: {e}");
            ExitCode::from(1)
        }
    }
}

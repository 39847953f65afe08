use std::process::ExitCode;

use clap::Parser;
use scry::repl::Repl;
use scry::script::Engine;
use scry::session::{Config, Session, SpawnSpec};

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
#[command(name = "scry", version, about, long_about = None)]
struct Cli {
    /// Attach to this running process instead of spawning one.
    #[arg(
        short = 'p',
        long = "pid",
        value_name = "PID",
        conflicts_with = "program"
    )]
    pid: Option<i32>,

    /// Evaluate a script file before reading stdin (repeatable; each gets a framed response).
    #[arg(short = 'x', long = "script", value_name = "FILE")]
    scripts: Vec<String>,

    /// Seconds a cont() or step() may run before every thread is interrupted.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    timeout: f64,

    /// Seconds of JavaScript execution a chunk may use.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    script_timeout: f64,

    /// Bytes of one response before it is cut (the rest is kept for `:more`).
    #[arg(long, value_name = "BYTES", default_value_t = 32768)]
    output_limit: usize,

    /// Keep address-space randomisation on for spawned programs (off by default, so
    /// addresses are the same on every run).
    #[arg(long)]
    aslr: bool,

    /// Refuse memory and register writes and signal suppression (inspection only).
    #[arg(long)]
    read_only: bool,

    /// The chunk terminator and status-line prefix of the pipe protocol.
    #[arg(long, value_name = "STR", default_value = ";;")]
    marker: String,

    /// Use the pipe protocol even when stdin is a terminal.
    #[arg(long)]
    batch: bool,

    /// Program to spawn, stopped at its entry point, and its arguments.
    #[arg(
        value_name = "PROGRAM",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    program: Vec<String>,
}

fn main() -> ExitCode {
    let first = std::env::args_os().nth(1);
    if first.as_deref() == Some("session".as_ref()) || first.as_deref() == Some("mcp".as_ref()) {
        let words: Vec<String> = std::env::args_os()
            .skip(2)
            .map(|w| w.to_string_lossy().into_owned())
            .collect();
        return if first.as_deref() == Some("mcp".as_ref()) {
            scry::mcp::main(&words)
        } else {
            scry::daemon::main(&words)
        };
    }
    let cli = Cli::parse();
    let positive = |v: f64, what: &str| {
        if v > 0.0 && v.is_finite() {
            Ok(std::time::Duration::from_secs_f64(v))
        } else {
            Err(format!(
                "scry: --{what} must be a positive number of seconds"
            ))
        }
    };
    let (timeout, script_timeout) = match (
        positive(cli.timeout, "timeout"),
        positive(cli.script_timeout, "script-timeout"),
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if cli.marker.is_empty() || cli.marker.contains('\n') {
        eprintln!("scry: --marker must be a non-empty single line");
        return ExitCode::from(2);
    }
    let config = Config {
        timeout,
        script_timeout,
        output_limit: cli.output_limit.max(256),
        aslr: cli.aslr,
        read_only: cli.read_only,
        ..Config::default()
    };
    let mut session = Session::new(config);
    let first_stop = if let Some(pid) = cli.pid {
        session.attach(pid)
    } else if let Some((program, args)) = cli.program.split_first() {
        session.spawn(SpawnSpec {
            program: program.clone(),
            args: args.to_vec(),
            ..Default::default()
        })
    } else {
        Ok(Default::default())
    };
    let first_stop = match first_stop {
        Ok(stop) => stop,
        Err(e) => {
            eprintln!("scry: {e}");
            return ExitCode::from(2);
        }
    };
    let engine = match Engine::new(session) {
        Ok(engine) => engine,
        Err(e) => {
            eprintln!("scry: {e:#}");
            return ExitCode::from(2);
        }
    };
    let mut repl = Repl::new(engine, &cli.marker);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for script in &cli.scripts {
        if let Err(e) = repl.run_file(script, &mut out) {
            eprintln!("scry: {e}");
        }
    }
    let interactive = scry::repl::stdin_is_terminal() && !cli.batch;
    scry::session::install_signal_handling(interactive);
    let stdin = std::io::BufReader::new(scry::repl::Stdin);
    let result = if interactive {
        if first_stop.reason.is_some() {
            println!("{}", first_stop.line());
        }
        repl.run_tty(stdin, &mut out)
    } else {
        repl.run_pipe(stdin, &mut out)
    };
    repl.finish();
    if let Some(sig) = scry::session::termination() {
        eprintln!("scry: ended by signal {sig}; the target was released");
        return ExitCode::from(128 + sig as u8);
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A closed stdout (the harness went away) is the end of the session, not a crash.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("scry: {e}");
            ExitCode::from(1)
        }
    }
}

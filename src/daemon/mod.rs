//! Named sessions: a scry session that outlives the command that started it.
//!
//! `scry session start NAME ...` re-executes scry as a background daemon (`scry session
//! __serve NAME ...`) that owns the target and a JavaScript engine on its main thread and
//! listens on a Unix socket in a per-user directory; `scry session eval NAME` sends one chunk
//! and prints its response. The daemon answers chunks one at a time, in arrival order, through
//! the same [`Repl::respond`] as the pipe protocol, so a response is byte-for-byte what stdin
//! mode prints for that chunk.
//!
//! Threads: the main thread owns ptrace and JavaScript; an accept thread and one thread per
//! connection only read and write sockets and hand requests to the main thread over a channel.

mod client;
pub(crate) mod paths;
mod serve;
pub(crate) mod wire;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, CommandFactory, Parser, Subcommand};

use crate::launch::{positive_secs, Target, TargetOptions};

/// `scry session ...`: named sessions that outlive the shell command that started them.
#[derive(Parser, Debug)]
#[command(name = "scry session")]
struct SessionCli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Start a background session NAME on a program (or -p PID); prints the first stop.
    Start(StartArgs),
    /// Evaluate one chunk (stdin to end of input, -e CODE or -f FILE) and print its response.
    /// Exit status: 0 ok, 1 error, 2 no such session (or it froze, or --deadline passed).
    Eval(EvalArgs),
    /// List the sessions of this user: name, daemon pid, target pid, program, state, idle time.
    List,
    /// End a session: a spawned target is killed, an attached one detached and left running.
    Stop {
        /// The session's name.
        name: String,

        /// Give up (exit status 2) after this many seconds.
        #[arg(long, value_name = "SECS")]
        deadline: Option<f64>,
    },
    /// The daemon itself (started by `start`).
    #[command(name = "__serve", hide = true)]
    Serve(StartArgs),
}

#[derive(Args, Debug, Clone)]
struct StartArgs {
    /// The session's name: letters, digits, `.`, `_` and `-`.
    name: String,

    /// Attach to this running process instead of spawning one.
    /// (With --remote: a process of the stub's machine, and PROGRAM its local copy.)
    #[arg(short = 'p', long = "pid", value_name = "PID")]
    pid: Option<i32>,

    /// Open this core file (of PROGRAM, when given) instead of running anything.
    #[arg(long = "core", value_name = "CORE", conflicts_with = "pid")]
    core: Option<PathBuf>,

    #[command(flatten)]
    options: TargetOptions,

    /// Seconds without an eval after which the session ends by itself (releasing its target).
    #[arg(long, value_name = "SECS", default_value_t = 1800.0)]
    idle_timeout: f64,

    /// Program to spawn, stopped at its entry point, and its arguments.
    #[arg(
        value_name = "PROGRAM",
        trailing_var_arg = true,
        required_unless_present_any = ["pid", "core", "remote"]
    )]
    program: Vec<String>,
}

impl StartArgs {
    fn target(&self) -> Result<Target, String> {
        // clap requires one of them; an empty spawn fails with the spawn's own message.
        Ok(Target::from_command_line(
            self.core.as_ref(),
            self.pid,
            self.options.remote.as_deref(),
            &self.program,
        )?
        .unwrap_or(Target::Spawn {
            program: String::new(),
            args: Vec::new(),
        }))
    }
}

#[derive(Args, Debug)]
struct EvalArgs {
    /// The session's name.
    name: String,

    /// The chunk to evaluate (instead of reading stdin).
    #[arg(
        short = 'e',
        long = "eval",
        value_name = "CODE",
        conflicts_with = "file"
    )]
    code: Option<String>,

    /// A file holding the chunk to evaluate.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    file: Option<String>,

    /// Give up (exit status 2) after this many seconds, even while the session works. Without
    /// it, eval waits as long as the session shows it is alive (a frozen one: 10 s).
    #[arg(long, value_name = "SECS")]
    deadline: Option<f64>,
}

/// `--deadline SECS`, checked like every other duration.
fn deadline(v: Option<f64>) -> Result<Option<Duration>, ExitCode> {
    v.map(|secs| positive_secs(secs, "deadline", crate::session::MAX_IDLE))
        .transpose()
        .map_err(|e| {
            eprintln!("scry: {e}");
            ExitCode::from(2)
        })
}

/// `scry session ARGS...` (`args` are the words after `session`).
pub fn main(args: &[String]) -> ExitCode {
    let cli = match SessionCli::try_parse_from(
        std::iter::once("scry session".to_string()).chain(args.iter().cloned()),
    ) {
        Ok(cli) => cli,
        Err(e) => {
            // An unknown option belongs to the subcommand it was given to.
            let top = SessionCli::command();
            let cmd = args
                .first()
                .and_then(|sub| top.find_subcommand(sub))
                .cloned()
                .unwrap_or_else(|| top.clone());
            let (text, code) = crate::cli::parse_failure(&cmd, &e);
            if code == 0 {
                print!("{text}");
            } else {
                eprint!("{text}");
            }
            return ExitCode::from(code);
        }
    };
    match cli.command {
        Command::Start(start) => {
            // The daemon gets the same words, so it parses exactly what was checked here.
            let words = &args[1..];
            client::start(&start.name, words)
        }
        Command::Eval(eval) => match deadline(eval.deadline) {
            Ok(limit) => client::eval(&eval.name, eval.code, eval.file, limit),
            Err(code) => code,
        },
        Command::List => client::list(),
        Command::Stop { name, deadline: d } => match deadline(d) {
            Ok(limit) => client::stop(&name, limit),
            Err(code) => code,
        },
        Command::Serve(start) => serve::serve(&start),
    }
}

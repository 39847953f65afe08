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

use crate::repl::Repl;
use crate::script::Engine;
use crate::session::Origin;
use crate::session::{check_debug_dirs, Config, FollowFork, Session, SpawnSpec, MAX_DEADLINE};

/// The settings of a debugging session that the plain command line, `scry session start` and
/// `scry mcp` share.
#[derive(Args, Debug, Clone)]
pub struct TargetOptions {
    /// Seconds a cont() or step() may run before every thread is interrupted.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub timeout: f64,

    /// Seconds of JavaScript execution a chunk may use.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    pub script_timeout: f64,

    /// Bytes of one response before it is cut (the rest is kept for `:more`).
    #[arg(long, value_name = "BYTES", default_value_t = 32768)]
    pub output_limit: usize,

    /// Keep address-space randomisation on for spawned programs.
    #[arg(long)]
    pub aslr: bool,

    /// Refuse memory and register writes and signal suppression (inspection only).
    #[arg(long)]
    pub read_only: bool,

    /// Also look for separate debug files here (repeatable; searched before /usr/lib/debug).
    #[arg(long = "debug-dir", value_name = "DIR")]
    pub debug_dirs: Vec<PathBuf>,
    /// Serve a live page of the session on [ADDR:]PORT (127.0.0.1 unless ADDR is given; port
    /// 0 picks a free one). The URL, with its token, is printed on stderr and returned by view().
    #[arg(long, value_name = "[ADDR:]PORT")]
    pub view: Option<String>,

    /// Where a spawned program first stops: `entry` (its entry point, start-up libraries
    /// mapped and their constructors run) or `loader` (the dynamic loader's first
    /// instruction, before any of that).
    #[arg(long = "stop-at", value_name = "WHERE", default_value = "entry", value_parser = ["entry", "loader"])]
    pub stop_at: String,

    /// At a fork, follow the `parent` (the child runs untraced) or the `child` (the parent is
    /// let go), or keep `both` (the child is held until `process.select()`).
    #[arg(long = "follow-fork", value_name = "WHICH", default_value = "parent", value_parser = ["parent", "child", "both"])]
    pub follow_fork: String,

    /// For a core: look for its mapped files under this copy of the machine it came from.
    #[arg(long, value_name = "DIR")]
    pub sysroot: Option<PathBuf>,

    /// For a core: a folder of copies of its libraries, found by name or build id (repeatable).
    #[arg(long = "solib-dir", value_name = "DIR")]
    pub solib_dirs: Vec<PathBuf>,
}

impl TargetOptions {
    /// The session configuration, or the message for a bad value.
    pub fn config(&self) -> Result<Config, String> {
        Ok(Config {
            timeout: positive_secs(self.timeout, "timeout", MAX_DEADLINE)?,
            script_timeout: positive_secs(self.script_timeout, "script-timeout", MAX_DEADLINE)?,
            output_limit: self.output_limit.max(256),
            aslr: self.aslr,
            read_only: self.read_only,
            debug_dirs: check_debug_dirs(&self.debug_dirs)
                .map(|()| self.debug_dirs.clone())
                .map_err(|e| format!("--debug-dir {e}"))?,
            stop_at_loader: self.stop_at == "loader",
            follow_fork: FollowFork::parse(&self.follow_fork).unwrap_or_default(),
            sysroot: match &self.sysroot {
                Some(dir) => {
                    check_debug_dirs(std::slice::from_ref(dir))
                        .map_err(|e| format!("--sysroot {e}"))?;
                    Some(dir.clone())
                }
                None => None,
            },
            solib_dirs: check_debug_dirs(&self.solib_dirs)
                .map(|()| self.solib_dirs.clone())
                .map_err(|e| format!("--solib-dir {e}"))?,
            ..Config::default()
        })
    }
}

/// A positive, finite number of seconds from option `--what`, clamped to `max`.
pub(crate) fn positive_secs(v: f64, what: &str, max: Duration) -> Result<Duration, String> {
    crate::session::seconds(v, max)
        .ok_or_else(|| format!("--{what} must be a positive number of seconds"))
}

/// What a session debugs.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    Spawn {
        program: String,
        args: Vec<String>,
    },
    Attach(i32),
    /// A core file, and the program that dumped it when named.
    Core {
        path: PathBuf,
        program: Option<String>,
    },
}

/// A session that was started.
pub(crate) struct Opened {
    /// Answers its chunks.
    pub repl: Repl,
    /// The first stop's line and the orientation below it.
    pub first_stop: String,
    /// The live view's URL, when `--view` asked for one.
    pub view_url: Option<String>,
    /// What to tell the user about a view reachable beyond this machine.
    pub view_warning: Option<String>,
}

/// Starts a session on `target`, with a live view on `view` (`[ADDR:]PORT`) if given. The view
/// is bound first, so a taken port starts nothing.
pub(crate) fn open(config: Config, target: &Target, view: Option<&str>) -> Result<Opened, String> {
    let view = view.map(crate::view::View::open).transpose()?;
    let mut session = Session::new(config);
    let stop = match target {
        Target::Spawn { program, args } => session.spawn(SpawnSpec {
            program: program.clone(),
            args: args.clone(),
            ..Default::default()
        }),
        Target::Attach(pid) => session.attach(*pid),
        Target::Core { path, program } => session.open_core(path, program.as_deref()),
    }
    .map_err(|e| e.to_string())?;
    let engine = Engine::new(session).map_err(|e| format!("{e:#}"))?;
    engine.book_stop(&stop);
    let line = stop.line();
    let (mut view_url, mut view_warning) = (None, None);
    if let Some(view) = view {
        view_url = Some(view.url().to_string());
        view_warning = view.warning().map(str::to_string);
        engine.attach_view(view, &line);
    }
    let first_stop = engine.orientation(Some(&line));
    Ok(Opened {
        repl: Repl::new(engine, ";;"),
        first_stop,
        view_url,
        view_warning,
    })
}

/// Ends a session's hold on its target the way its origin asks (a spawned process is killed,
/// an attached one detached and left running) and says what happened, as a stop line.
pub(crate) fn release(repl: &mut Repl) -> String {
    repl.engine().with_session(|s| {
        if let Some(core) = s.core_name() {
            s.release();
            return format!("closed the core file {core}");
        }
        if !s.is_live() {
            s.release();
            return "no live process".to_string();
        }
        let stop = match s.origin() {
            Some(Origin::Attached) => s.detach(),
            _ => s.kill(),
        };
        s.release();
        match stop {
            Ok(stop) => stop.line(),
            Err(e) => format!("error: {e}"),
        }
    })
}

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
    #[arg(
        short = 'p',
        long = "pid",
        value_name = "PID",
        conflicts_with = "program"
    )]
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
        required_unless_present_any = ["pid", "core"]
    )]
    program: Vec<String>,
}

impl StartArgs {
    fn target(&self) -> Result<Target, String> {
        if let Some(path) = &self.core {
            return Ok(Target::Core {
                path: path.clone(),
                program: core_program(&self.program)?,
            });
        }
        Ok(match (self.pid, self.program.split_first()) {
            (Some(pid), _) => Target::Attach(pid),
            (None, Some((program, args))) => Target::Spawn {
                program: program.clone(),
                args: args.to_vec(),
            },
            // clap requires one of them.
            (None, None) => Target::Spawn {
                program: String::new(),
                args: Vec::new(),
            },
        })
    }
}

/// The program of `--core CORE [PROGRAM]`: a program, but no arguments (nothing runs).
pub fn core_program(words: &[String]) -> Result<Option<String>, String> {
    match words {
        [] | [_] => Ok(words.first().cloned()),
        [program, ..] => Err(format!(
            "--core takes the program that dumped the core ({program}), not its arguments: nothing runs"
        )),
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

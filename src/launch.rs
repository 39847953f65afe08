//! Starting a session the way every front door does (the plain command line, `scry session
//! start`, `scry mcp`): the options they share, what to debug, the session + engine + REPL
//! built from them, and letting the target go at the end. One place, so the three cannot
//! drift (they did: the command line had its own copy of `open`).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::remote;
use crate::repl::Repl;
use crate::script::Engine;
use crate::session::{
    check_debug_dirs, Config, FollowFork, Origin, Session, SpawnSpec, StopInfo, StopKind,
    MAX_DEADLINE,
};
use crate::view::View;

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

    /// With fork children kept (`--follow-fork both`): `all` (a cont() runs every process and
    /// the first stop of any stops them all) or `selected` (only the selected one runs).
    #[arg(long, value_name = "WHICH", default_value = "all", value_parser = ["all", "selected"])]
    pub schedule: String,

    /// Debug the process of a GDB-remote stub (gdbserver, QEMU's gdbstub) listening at
    /// HOST:PORT; PROGRAM, when given, is a local copy of its program for the symbols. A
    /// stub without a process (gdbserver --multi) runs PROGRAM with the ARGS after it.
    #[arg(long, value_name = "HOST:PORT")]
    pub remote: Option<String>,

    /// For a core or a remote target: look for its mapped files under this copy of the
    /// machine it runs on.
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
            schedule_all: self.schedule == "all",
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
pub enum Target {
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
    /// The process of a GDB-remote stub at `addr`, and a local copy of its program.
    Remote {
        addr: String,
        program: Option<String>,
        /// The program's arguments, for a stub that has no process yet and runs PROGRAM
        /// (`gdbserver --multi`).
        args: Vec<String>,
        /// A process of the stub's machine for such a stub to attach to (`-p PID`).
        attach: Option<i32>,
    },
}

/// A session that was started.
pub struct Opened {
    /// Answers its chunks.
    pub repl: Repl,
    /// The first stop's line and the orientation below it (`open` fills it in; `start`
    /// leaves it empty: the orientation reads the stack and locals, a tenth of a second on
    /// a C++ program, which a pipe session that never shows it must not pay).
    pub first_stop: String,
    /// The first stop's line, when a target was opened (the plain command line may start
    /// with none).
    pub first_line: Option<String>,
    /// The live view's URL, when one was asked for.
    pub view_url: Option<String>,
    /// What to tell the user about a view reachable beyond this machine.
    pub view_warning: Option<String>,
}

/// Starts a session on `target`, with a live view on `view` (`[ADDR:]PORT`) if given. The view
/// is bound first, so a taken port starts nothing.
pub(crate) fn open(config: Config, target: &Target, view: Option<&str>) -> Result<Opened, String> {
    let view = view.map(View::open).transpose()?;
    let mut opened = start(config, Some(target), view, ";;")?;
    opened.first_stop = opened
        .repl
        .engine()
        .orientation(opened.first_line.as_deref());
    Ok(opened)
}

/// Starts a session on `target` (or on nothing yet), its live view already bound, answering
/// chunks that end at `marker` lines.
pub fn start(
    config: Config,
    target: Option<&Target>,
    view: Option<View>,
    marker: &str,
) -> Result<Opened, String> {
    let mut session = Session::new(config);
    let stop = match target {
        Some(Target::Spawn { program, args }) => session.spawn(SpawnSpec {
            program: program.clone(),
            args: args.clone(),
            ..Default::default()
        }),
        Some(Target::Attach(pid)) => session.attach(*pid),
        Some(Target::Core { path, program }) => session.open_core(path, program.as_deref()),
        Some(Target::Remote {
            addr,
            program,
            args,
            attach,
        }) => remote::open(
            &mut session,
            addr,
            program.as_deref(),
            &remote::Start {
                args: args.clone(),
                attach: *attach,
            },
        ),
        None => Ok(StopInfo::new(StopKind::Here)),
    }
    .map_err(|e| e.to_string())?;
    let engine = Engine::new(session).map_err(|e| format!("{e:#}"))?;
    engine.book_stop(&stop);
    let started = target.is_some();
    let line = if started { stop.line() } else { String::new() };
    let (mut view_url, mut view_warning) = (None, None);
    if let Some(view) = view {
        view_url = Some(view.url().to_string());
        view_warning = view.warning().map(str::to_string);
        engine.attach_view(view, &line);
    }
    Ok(Opened {
        repl: Repl::new(engine, marker),
        first_stop: String::new(),
        first_line: started.then_some(line),
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

/// The program of `--core CORE [PROGRAM]`: a program, but no arguments (nothing runs).
pub(crate) fn core_program(words: &[String]) -> Result<Option<String>, String> {
    match words {
        [] | [_] => Ok(words.first().cloned()),
        [program, ..] => Err(format!(
            "--core takes the program that dumped the core ({program}), not its arguments: nothing runs"
        )),
    }
}

impl Target {
    /// What the command line names: `--core CORE [PROGRAM]`, `-p PID`, or `PROGRAM ARGS...`;
    /// `None` when it names nothing.
    pub fn from_command_line(
        core: Option<&PathBuf>,
        pid: Option<i32>,
        remote: Option<&str>,
        program: &[String],
    ) -> Result<Option<Target>, String> {
        if let Some(addr) = remote {
            if core.is_some() {
                return Err("--remote debugs the stub's process: no --core with it".into());
            }
            let (program, args) = match program.split_first() {
                Some((p, args)) => (Some(p.clone()), args.to_vec()),
                None => (None, Vec::new()),
            };
            if pid.is_some() && !args.is_empty() {
                return Err(
                    "--remote with -p attaches the stub to a running process: PROGRAM takes no arguments then".into(),
                );
            }
            return Ok(Some(Target::Remote {
                addr: addr.to_string(),
                program,
                args,
                attach: pid,
            }));
        }
        if let Some(path) = core {
            return Ok(Some(Target::Core {
                path: path.clone(),
                program: core_program(program)?,
            }));
        }
        Ok(match (pid, program.split_first()) {
            (Some(_), Some((program, _))) => {
                return Err(format!(
                    "-p PID attaches to a running process: no PROGRAM ({program}) with it (with --remote, PROGRAM is the local copy of the process's program)"
                ))
            }
            (Some(pid), None) => Some(Target::Attach(pid)),
            (None, Some((program, args))) => Some(Target::Spawn {
                program: program.clone(),
                args: args.to_vec(),
            }),
            (None, None) => None,
        })
    }
}

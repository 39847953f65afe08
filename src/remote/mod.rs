//! The GDB-remote backend: a client of the GDB remote serial protocol, so a program run by
//! gdbserver (on another machine, in a container), QEMU's gdbstub or lldb-server is
//! debugged through the same [`Target`] trait as a local one, and every JS call works the
//! same over a socket.
//!
//! What it is not: a second stepping engine or stop policy. It resumes, stops, reads and
//! writes as the protocol allows and reports raw [`Stop`]s; the session and the runner do
//! the rest, as for the ptrace backend. It is all-stop only (the stub stops every thread at
//! a stop); of a fork it keeps one process, the parent or a fork child (`forks`).
//!
//! Round trips are the cost of a remote stop, so: registers come in one `g` per thread per
//! stop (cached until the next resume), memory in aligned blocks cached until the next
//! resume or write, and the thread list is asked for only when someone needs it.

mod conn;
mod forks;
mod handlers;
mod memory;
mod modules;
mod packet;
mod pass;
mod reply;
mod run;
mod signals;
mod syscalls;
mod target;
mod tdesc;

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::inferior::{Origin, Stop, WatchSlot};
use crate::os::{OsError, Tid};
use crate::session::target::Target;
use crate::session::{Session, StopInfo};

use conn::Conn;
use memory::MemoryCache;
use reply::ThreadId;
use tdesc::Layout;

/// How long connecting and the first exchange may take.
const CONNECT_WAIT: Duration = Duration::from_secs(5);
/// Debug registers an x86 stub shares between hardware breakpoints and watchpoints.
const HW_SLOTS: usize = 4;

/// What the stub said it can do (`qSupported`).
#[derive(Debug, Default, Clone)]
struct Features {
    packet_size: usize,
    no_ack: bool,
    multiprocess: bool,
    target_xml: bool,
    exec_file: bool,
    auxv: bool,
    siginfo: bool,
    vcont: bool,
    catch_syscalls: bool,
    /// lldb-server's `native-signals+`: signals on the wire are Linux's numbers.
    native_signals: bool,
    /// `QPassSignals`: signals the stub hands to the program itself, with no stop reply.
    pass_signals: bool,
    /// `fork-events+`: the stub holds a fork child for scry to clean and let go (else it
    /// lets it go with scry's breakpoints in it). Exec and vfork events are asked for and
    /// taken as they come (`exec:`, `vfork:`), whichever the stub offers.
    fork_events: bool,
}

impl Features {
    fn parse(reply: &[u8]) -> Features {
        let mut f = Features {
            packet_size: 4096,
            ..Default::default()
        };
        for item in reply.split(|&b| b == b';') {
            match item {
                b"QStartNoAckMode+" => f.no_ack = true,
                b"multiprocess+" => f.multiprocess = true,
                b"qXfer:features:read+" => f.target_xml = true,
                b"qXfer:exec-file:read+" => f.exec_file = true,
                b"qXfer:auxv:read+" => f.auxv = true,
                b"qXfer:siginfo:read+" => f.siginfo = true,
                b"QCatchSyscalls+" => f.catch_syscalls = true,
                b"native-signals+" => f.native_signals = true,
                b"QPassSignals+" => f.pass_signals = true,
                b"fork-events+" => f.fork_events = true,
                _ => {
                    if let Some(size) = item.strip_prefix(b"PacketSize=") {
                        // Bounded: a hostile stub's huge size would make huge requests.
                        f.packet_size =
                            packet::number(size).map_or(4096, |s| s.clamp(256, 1 << 20) as usize);
                    }
                }
            }
        }
        f
    }
}

/// A breakpoint the stub holds for scry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Site {
    hardware: bool,
}

/// A process run by a GDB-remote stub.
pub(crate) struct Remote {
    conn: RefCell<Conn>,
    features: Features,
    layout: Layout,
    /// The general registers `layout` lacks.
    unknown: Vec<&'static str>,
    pid: Tid,
    origin: Origin,
    /// Threads as last listed; `None` once a resume may have changed them.
    threads: RefCell<Option<Vec<Tid>>>,
    selected: Tid,
    /// The thread the stub's `g`/`m` packets read (`Hg`).
    reading: RefCell<Option<Tid>>,
    /// Each thread's pc as its last stop reply sent it (until the next resume).
    expedited_pc: RefCell<HashMap<Tid, u64>>,
    /// Each thread's `g` reply since the last resume.
    registers: RefCell<HashMap<Tid, Vec<Option<u8>>>>,
    memory: MemoryCache,
    sites: BTreeMap<u64, Site>,
    /// Sites taken out lately (see `run::MAX_LIFTED`): a hit of one that another thread made
    /// before it went is still on its way in a stop reply.
    lifted: Vec<u64>,
    /// Steps are by lines: a signal the program handles runs its handler through (see
    /// `handlers`).
    run_handlers: bool,
    watches: [Option<WatchSlot>; HW_SLOTS],
    rendezvous: Option<u64>,
    /// Signals to deliver at the next resume, by thread.
    pending: HashMap<Tid, i32>,
    read_only: bool,
    deadline: Option<Instant>,
    /// How the process ended, once it did.
    ended: Option<Stop>,
    /// `D` let it go: it runs on without scry.
    detached: bool,
    exe: Option<PathBuf>,
    sysroot: Option<PathBuf>,
    program: Option<PathBuf>,
    /// `vFile:setfs` was sent: file requests see the process's mount namespace.
    file_namespace_set: std::cell::Cell<bool>,
    /// The local file chosen for each path the target maps (build ids compared once).
    local_files: RefCell<HashMap<String, PathBuf>>,
    warnings: Vec<String>,
    /// Thread listeners were told they hear nothing here (see `set_report_threads`).
    told_threads: bool,
    /// The modules were made without the stub's files (see `modules`): QEMU's user mode,
    /// whose stub does not stop several threads together. Warned once (`fileless_warned`).
    fileless: std::cell::Cell<bool>,
    fileless_warned: bool,
    /// The thread whose breakpoint hit was reported last, and where: it steps off first.
    parked: Option<(Tid, u64)>,
    /// The same when the site is a hardware one and the thread's registers are as the hit
    /// left them (its RF set: see `pass`).
    rf_fresh: Option<(Tid, u64)>,
    /// Whether a continue from a hardware site's hit passes it on this stub (`pass`); not
    /// known until the first hit's test.
    rf_passes: Option<bool>,
    /// The system calls caught (see `syscalls`).
    catch: syscalls::RemoteCatch,
    /// The signals last given to `QPassSignals` (wire numbers, ascending).
    passing: Option<Vec<u8>>,
    /// Which process a fork leaves under control, and what it did (see `forks`).
    forks: forks::Forks,
}

/// What to connect to and how to stop first.
pub(crate) struct Connect<'a> {
    pub(crate) addr: &'a str,
    /// Stop at the loader's first instruction rather than the program's entry point (a
    /// process the stub started).
    pub(crate) at_loader: bool,
    pub(crate) read_only: bool,
    pub(crate) sysroot: Option<PathBuf>,
    /// A local copy of the program (its symbols and debug info).
    pub(crate) program: Option<PathBuf>,
    /// What a stub without a process is to do (`gdbserver --multi`).
    pub(crate) start: &'a Start,
}

/// What a stub without a process (extended mode) starts with: PROGRAM run with `args`
/// (`vRun`), or the process `attach` of its machine (`vAttach`).
#[derive(Debug, Default, Clone)]
pub(crate) struct Start {
    pub(crate) args: Vec<String>,
    pub(crate) attach: Option<i32>,
}

/// Connects to the stub at `addr` and gives its process to `session` (whose settings say
/// where to stop first, whether it may write, and where the target's files are); `program`
/// is a local copy of the program.
pub(crate) fn open(
    session: &mut Session,
    addr: &str,
    program: Option<&str>,
    start: &Start,
) -> crate::session::Result<StopInfo> {
    // Refused before connecting: connecting runs a started program to its entry point.
    session.ensure_no_target()?;
    let config = &session.config;
    let how = Connect {
        addr,
        at_loader: config.stop_at_loader,
        read_only: config.read_only,
        sysroot: config.sysroot.clone(),
        program: program.map(PathBuf::from),
        start,
    };
    let (process, stop) = connect(&how)?;
    session.adopt(process, stop)
}

/// Has a stub without a process, in extended mode (`gdbserver --multi`), attach to the
/// process `pid` of its machine (`vAttach`): the stop reply of the attach.
fn attach_process(conn: &mut Conn, addr: &str, pid: i32) -> Result<Vec<u8>, OsError> {
    let reply = conn.request(format!("vAttach;{pid:x}").as_bytes())?;
    if reply::Reply::parse(&reply).is_none() {
        return Err(OsError::Remote(format!(
            "the stub at {addr} could not attach to process {pid} ({})",
            conn::preview(&reply)
        )));
    }
    Ok(reply)
}

/// Has a stub without a process, in extended mode (`gdbserver --multi`), run `program` with
/// `args` on its machine (`vRun`; the path as given, as the target machine resolves it):
/// the stop reply of its first instruction.
fn run_program(
    conn: &mut Conn,
    addr: &str,
    program: &std::path::Path,
    args: &[String],
) -> Result<Vec<u8>, OsError> {
    let mut ask = format!(
        "vRun;{}",
        packet::hex(program.as_os_str().as_encoded_bytes())
    );
    for arg in args {
        ask.push(';');
        ask.push_str(&packet::hex(arg.as_bytes()));
    }
    let reply = conn.request(ask.as_bytes())?;
    if reply::Reply::parse(&reply).is_none() {
        return Err(OsError::Remote(format!(
            "the stub at {addr} could not run {} ({})",
            program.display(),
            conn::preview(&reply)
        )));
    }
    Ok(reply)
}

/// Connects to a stub and takes its process: the target and its first stop.
pub(crate) fn connect(how: &Connect) -> Result<(Box<dyn Target>, Stop), OsError> {
    let mut conn = Conn::connect(how.addr, CONNECT_WAIT)?;
    let supported = conn.request(
        b"qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+;no-resumed+;fork-events+;vfork-events+;exec-events+;xmlRegisters=i386",
    )?;
    let mut features = Features::parse(&supported);
    if features.no_ack && conn.request(b"QStartNoAckMode")? == b"OK" {
        conn.stop_acks();
    }
    features.vcont = conn.request(b"vCont?")?.starts_with(b"vCont;");
    // gdbserver reads its register description only once the stop is asked for: `?` first
    // (asking for target.xml before it aborts gdbserver 13).
    let mut first = conn.request(b"?")?;
    let has_process = matches!(
        reply::Reply::parse(&first),
        Some(reply::Reply::Stopped { .. })
    );
    if has_process && (!how.start.args.is_empty() || how.start.attach.is_some()) {
        let what = if how.start.attach.is_some() {
            "-p PID"
        } else {
            "arguments"
        };
        return Err(OsError::Remote(format!(
            "the stub at {} has its process already: {what} are for a stub without one (gdbserver --multi)",
            how.addr
        )));
    }
    if !has_process {
        // Extended mode first, whether there is a program to run or not: a stub left in it
        // stays up for the next client (gdbserver --multi ends with a plain one).
        let extended = conn.request_ok(b"!");
        let refused = |e: OsError| {
            OsError::Remote(format!(
                "the stub at {} has no process and no extended mode to start one ({e}): start it with a program (gdbserver :PORT PROGRAM) or --attach PID",
                how.addr
            ))
        };
        if let Some(pid) = how.start.attach {
            extended.map_err(refused)?;
            first = attach_process(&mut conn, how.addr, pid)?;
        } else if let Some(program) = &how.program {
            extended.map_err(refused)?;
            first = run_program(&mut conn, how.addr, program, &how.start.args)?;
        }
    }
    let stop = match reply::Reply::parse(&first) {
        Some(reply::Reply::Stopped { thread, .. }) => thread,
        Some(reply::Reply::Exited { .. } | reply::Reply::Killed { .. }) => {
            return Err(OsError::Remote(format!(
                "the stub at {} has no live process (its program ended: {}); give PROGRAM to run it there (gdbserver --multi)",
                how.addr,
                conn::preview(&first)
            )))
        }
        _ => {
            return Err(OsError::Remote(format!(
                "the stub at {} reported no stopped process ({}); start it with a program (gdbserver :PORT PROGRAM) or --attach PID",
                how.addr,
                conn::preview(&first)
            )))
        }
    };
    let mut remote = Remote {
        conn: RefCell::new(conn),
        layout: Layout::default(),
        unknown: Vec::new(),
        pid: 0,
        origin: Origin::Attached,
        threads: RefCell::new(None),
        selected: 0,
        reading: RefCell::new(None),
        expedited_pc: RefCell::new(HashMap::new()),
        registers: RefCell::new(HashMap::new()),
        memory: MemoryCache::new(features.packet_size),
        sites: BTreeMap::new(),
        lifted: Vec::new(),
        run_handlers: false,
        watches: [None; HW_SLOTS],
        rendezvous: None,
        pending: HashMap::new(),
        read_only: how.read_only,
        deadline: None,
        ended: None,
        detached: false,
        exe: None,
        sysroot: how.sysroot.clone(),
        program: how.program.clone(),
        local_files: RefCell::new(HashMap::new()),
        file_namespace_set: std::cell::Cell::new(false),
        warnings: Vec::new(),
        told_threads: false,
        fileless: Default::default(),
        fileless_warned: false,
        parked: None,
        rf_fresh: None,
        rf_passes: None,
        catch: Default::default(),
        passing: None,
        forks: Default::default(),
        features,
    };
    remote.layout = remote.read_layout()?;
    remote.unknown = remote.layout.lacking();
    let threads = remote.list_threads()?;
    let first_thread = stop
        .filter(|t| t.tid > 0)
        .or_else(|| threads.first().copied())
        .ok_or_else(|| OsError::Remote("the stub lists no thread".into()))?;
    remote.pid = first_thread
        .pid
        .filter(|&p| p > 0)
        .unwrap_or(first_thread.tid) as Tid;
    remote.selected = first_thread.tid as Tid;
    *remote.threads.borrow_mut() = Some(threads.iter().map(|t| t.tid as Tid).collect());
    let attached = remote
        .request(format!("qAttached:{:x}", remote.pid).as_bytes())
        .unwrap_or_default();
    remote.origin = if attached == b"0" {
        Origin::Spawned
    } else {
        Origin::Attached
    };
    // Without exec-file (QEMU's gdbstub) the local copy stands for the program's path.
    remote.exe = remote.read_exe_path().or_else(|| remote.program.clone());
    let stop = match remote.origin {
        Origin::Attached => Stop::Attached {
            tid: remote.selected,
        },
        Origin::Spawned if how.at_loader => Stop::Loader {
            tid: remote.selected,
        },
        Origin::Spawned => remote.run_to_entry()?,
    };
    Ok((Box::new(remote), stop))
}

impl Remote {
    fn request(&self, payload: &[u8]) -> Result<Vec<u8>, OsError> {
        self.conn.borrow_mut().request(payload)
    }

    fn request_ok(&self, payload: &[u8]) -> Result<(), OsError> {
        self.conn.borrow_mut().request_ok(payload)
    }

    /// A thread id as the stub writes them.
    fn thread_id(&self, tid: Tid) -> String {
        if self.features.multiprocess {
            format!("p{:x}.{:x}", self.pid, tid)
        } else {
            format!("{tid:x}")
        }
    }

    /// Reads a whole `qXfer` object (`object`, `annex`) in pieces of the packet size.
    fn xfer(&self, object: &str, annex: &str) -> Result<Vec<u8>, OsError> {
        const MAX_OBJECT: usize = 16 << 20;
        let chunk = self.features.packet_size.saturating_sub(16).max(64);
        let mut out = Vec::new();
        loop {
            let ask = format!("qXfer:{object}:read:{annex}:{:x},{chunk:x}", out.len());
            let reply = self.request(ask.as_bytes())?;
            match reply.split_first() {
                Some((b'm', data)) if !data.is_empty() => out.extend_from_slice(data),
                Some((b'm', _)) => return Ok(out),
                Some((b'l', data)) => {
                    out.extend_from_slice(data);
                    return Ok(out);
                }
                _ => return Err(conn::refusal(ask.as_bytes(), &reply)),
            }
            if out.len() > MAX_OBJECT {
                return Err(OsError::Remote(format!(
                    "the stub's {object} {annex} is over {} MiB",
                    MAX_OBJECT >> 20
                )));
            }
        }
    }

    fn read_layout(&self) -> Result<Layout, OsError> {
        if !self.features.target_xml {
            return Ok(Layout::fallback());
        }
        let main = self.xfer("features", "target.xml")?;
        let main = String::from_utf8_lossy(&main).into_owned();
        let mut include = |name: &str| {
            self.xfer("features", name)
                .ok()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
        };
        Layout::parse(&main, &mut include)
            .map_err(|why| OsError::Remote(format!("the stub's target description: {why}")))
    }

    /// Every thread of the process (`qfThreadInfo`, `qsThreadInfo`...).
    fn list_threads(&self) -> Result<Vec<ThreadId>, OsError> {
        const MAX_THREADS: usize = 100_000;
        let mut out = Vec::new();
        let mut ask: &[u8] = b"qfThreadInfo";
        loop {
            let reply = self.request(ask)?;
            match reply.split_first() {
                Some((b'm', list)) => {
                    for id in list.split(|&b| b == b',') {
                        let id = ThreadId::parse(id).ok_or_else(|| {
                            OsError::Remote(format!(
                                "the stub listed a malformed thread id {}",
                                conn::preview(id)
                            ))
                        })?;
                        out.push(id);
                    }
                }
                Some((b'l', _)) | None => break,
                _ => return Err(conn::refusal(ask, &reply)),
            }
            if out.len() > MAX_THREADS {
                return Err(OsError::Remote(format!(
                    "the stub lists over {MAX_THREADS} threads"
                )));
            }
            ask = b"qsThreadInfo";
        }
        // Other processes of a multi-process stub are not this target's.
        if self.pid != 0 {
            out.retain(|t| t.pid.is_none_or(|p| p == i64::from(self.pid)));
        }
        Ok(out)
    }

    fn read_exe_path(&self) -> Option<PathBuf> {
        if !self.features.exec_file {
            return None;
        }
        let annex = if self.features.multiprocess {
            format!("{:x}", self.pid)
        } else {
            String::new()
        };
        let path = self.xfer("exec-file", &annex).ok()?;
        (!path.is_empty()).then(|| PathBuf::from(String::from_utf8_lossy(&path).into_owned()))
    }

    /// The auxiliary vector's value for `key`.
    fn auxv(&self, key: u64) -> Option<u64> {
        if !self.features.auxv {
            return None;
        }
        let bytes = self.xfer("auxv", "").ok()?;
        bytes.chunks_exact(16).find_map(|pair| {
            let k = u64::from_le_bytes(pair[..8].try_into().ok()?);
            let v = u64::from_le_bytes(pair[8..].try_into().ok()?);
            (k == key).then_some(v)
        })
    }

    /// Forgets what a resume may change: registers, memory, the thread list.
    fn forget_state(&self) {
        self.registers.borrow_mut().clear();
        self.expedited_pc.borrow_mut().clear();
        self.memory.clear();
        *self.threads.borrow_mut() = None;
    }

    /// How this stub numbers signals on the wire.
    fn numbering(&self) -> signals::Numbering {
        if self.features.native_signals {
            signals::Numbering::Native
        } else {
            signals::Numbering::Gdb
        }
    }

    /// `tid`'s `g` reply, read once per stop.
    fn register_blob(&self, tid: Tid) -> Result<Vec<Option<u8>>, OsError> {
        if let Some(blob) = self.registers.borrow().get(&tid) {
            return Ok(blob.clone());
        }
        self.select_for_reading(tid)?;
        let reply = self.request(b"g")?;
        let blob = packet::unhex(&reply)
            .filter(|_| !reply.starts_with(b"E"))
            .ok_or_else(|| {
                OsError::Remote(format!(
                    "the stub sent no registers for thread {tid} ({})",
                    conn::preview(&reply)
                ))
            })?;
        self.registers.borrow_mut().insert(tid, blob.clone());
        Ok(blob)
    }

    /// Points `g`, `G`, `p`, `P` and `m` at `tid` (`Hg`), unless they already are.
    fn select_for_reading(&self, tid: Tid) -> Result<(), OsError> {
        if *self.reading.borrow() == Some(tid) {
            return Ok(());
        }
        self.request_ok(format!("Hg{}", self.thread_id(tid)).as_bytes())
            .map_err(|e| match self.conn.borrow().check() {
                // The connection itself failed: that is the error, not the thread.
                Err(_) => e,
                Ok(()) => {
                    OsError::ThreadUnavailable(format!("no thread {tid} in the stub's process"))
                }
            })?;
        *self.reading.borrow_mut() = Some(tid);
        Ok(())
    }

    fn check_writable(&self, what: &str) -> Result<(), OsError> {
        if self.read_only {
            return Err(OsError::ReadOnly(format!(
                "read-only session: cannot {what}"
            )));
        }
        if self.ended.is_some() || self.detached {
            return Err(OsError::Remote(format!(
                "the remote process is no longer under control: cannot {what}"
            )));
        }
        self.conn.borrow().check()
    }
}

//! Tracepoints: what the program does at a site, collected without stopping it.
//!
//! The fast way is a probe inside the program (`x86::probe`): a jump at the site into a
//! trampoline that copies what the tracepoint collects into a ring shared with scry, which
//! reads the ring while the program runs (at each of a continue's ticks) and at every stop.
//! Where a jump is not safe (the bytes it would cover are a branch target, cannot be moved,
//! the backend has no probes), the tracepoint is a breakpoint of scry's that collects the
//! same things at each hit and lets the thread go at once (`mode: 'trap'`), said at `set`.
//!
//! What this is not: a filter or a listener. Records go to whoever asks
//! ([`Session::take_trace_records`]); conditions are the script's, run on each record.

use std::collections::VecDeque;
use std::rc::Rc;

use super::*;
use crate::os::shared::SharedMem;
use crate::x86::probe::{self, Item, Source};

/// Records in a ring (a power of two): at the default tick of 5 ms, room for 3M records/s
/// before a waiting probe waits.
const SLOTS: u64 = 16_384;
/// How long a continue runs between reads of the rings.
pub(crate) const TICK: Duration = Duration::from_millis(5);
/// At most this many records wait in scry between reads by the script; more are dropped and
/// counted lost (a listener far slower than the program, in `full: 'drop'` mode).
const QUEUE_MAX: usize = 1 << 20;
/// A record's size is at most this (collected registers and memory).
const RECORD_MAX: u32 = 64 * 1024;

/// What a tracepoint collects, as the script names it.
#[derive(Debug, Clone)]
pub(crate) enum Want {
    /// `'rdi'`, `'xmm0'`, `'all'`.
    Reg(String),
    /// `{mem: 'rsi+8', len: 16}`, `{mem: 'rdi', str: 64}`: `len` bytes at the address.
    Mem { at: String, len: u32, string: bool },
}

/// How a tracepoint runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TraceMode {
    /// A probe in the program: it never stops.
    Jump,
    /// A breakpoint of scry's that collects and lets go.
    Trap,
}

impl TraceMode {
    pub(crate) fn name(self) -> &'static str {
        match self {
            TraceMode::Jump => "jump",
            TraceMode::Trap => "trap",
        }
    }
}

/// A collected register's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum RegValue {
    U64(u64),
    Xmm([u8; 16]),
}

/// Memory a record holds: `len` asked at `addr`, what was read (fewer bytes where the
/// address range became unreadable), or why nothing was.
#[derive(Debug, Clone)]
pub(crate) struct MemCopy {
    pub expr: Rc<str>,
    pub addr: u64,
    pub bytes: Vec<u8>,
    pub error: Option<String>,
    /// Asked as a string (`str:`): the bytes end at the first NUL.
    pub string: bool,
}

/// One hit of a tracepoint, as collected.
#[derive(Debug, Clone)]
pub(crate) struct TraceRecord {
    pub id: u32,
    pub tid: Tid,
    /// CLOCK_MONOTONIC, ns.
    pub time: u64,
    pub pc: u64,
    pub regs: Vec<(Rc<str>, RegValue)>,
    pub mem: Vec<MemCopy>,
}

/// Where each collected thing sits in a record.
#[derive(Debug, Clone)]
struct Layout {
    regs: Vec<(Rc<str>, Source, u32)>,
    mems: Vec<MemSlot>,
    /// log2 of the record's size.
    shift: u32,
}

#[derive(Debug, Clone)]
struct MemSlot {
    expr: Rc<str>,
    src: Source,
    disp: i64,
    len: u32,
    at: u32,
    string: bool,
}

/// A probe put into the program.
struct Installed {
    shared: SharedMem,
    ring_addr: u64,
    ring_len: u64,
    code: u64,
    code_len: u64,
    site: u64,
    /// Where the moved instructions run: (in the trampoline, original address).
    moved: Vec<(u64, u64)>,
    /// Where the trampoline starts to restore the program's registers.
    restore: u64,
    /// The next record scry reads.
    tail: u64,
    /// Records reserved and never committed (the thread died inside the probe).
    abandoned: u64,
}

pub(crate) struct Tracepoint {
    pub id: u32,
    pub spec: String,
    pub addr: u64,
    pub mode: TraceMode,
    /// Why the tracepoint is a trap, not a probe.
    pub why_trap: Option<String>,
    layout: Layout,
    wait: bool,
    probe: Option<Installed>,
    /// Trap mode: hits counted by scry.
    trap_hits: u64,
    /// Records handed to the script, and records lost in scry's queue.
    pub delivered: u64,
    queue_lost: u64,
}

impl Tracepoint {
    pub(crate) fn hits(&self) -> u64 {
        // A probe counts its own hits; scry counts a trap's, and a probe's hits stepped
        // through by the user (which run the program's instruction, not the probe).
        self.trap_hits
            + self
                .probe
                .as_ref()
                .map_or(0, |p| p.shared.load(probe::HITS))
    }

    pub(crate) fn lost(&self) -> u64 {
        self.queue_lost
            + self
                .probe
                .as_ref()
                .map_or(0, |p| p.shared.load(probe::LOST) + p.abandoned)
    }
}

/// Every tracepoint, and the records read from them not yet taken by the script.
#[derive(Default)]
pub(crate) struct Tracing {
    list: Vec<Tracepoint>,
    next_id: u32,
    queue: VecDeque<TraceRecord>,
    /// Someone takes the records (a `trace` listener): probes write them. Else they count.
    listening: bool,
    clock: Option<Clock>,
}

/// Turns time stamp counter readings into CLOCK_MONOTONIC: a reference pair taken at the
/// first tracepoint, the rate from it to the latest pair (the longer the span, the better).
#[derive(Clone, Copy)]
struct Clock {
    tsc0: u64,
    mono0: u64,
    ns_per_tick: f64,
}

impl Clock {
    fn start() -> Clock {
        let (tsc0, mono0) = crate::os::shared::tsc_and_monotonic();
        std::thread::sleep(Duration::from_millis(2));
        let mut c = Clock {
            tsc0,
            mono0,
            ns_per_tick: 1.0,
        };
        c.refine();
        c
    }

    fn refine(&mut self) {
        let (tsc, mono) = crate::os::shared::tsc_and_monotonic();
        if tsc > self.tsc0 && mono > self.mono0 {
            self.ns_per_tick = (mono - self.mono0) as f64 / (tsc - self.tsc0) as f64;
        }
    }

    fn time(&self, tsc: u64) -> u64 {
        let d = tsc as i128 - self.tsc0 as i128;
        (self.mono0 as i128 + (d as f64 * self.ns_per_tick) as i128).max(0) as u64
    }
}

/// The register a collected name means.
fn source_of(name: &str) -> Option<Source> {
    use iced_x86::Register as R;
    Some(match name {
        "rax" => Source::Gpr(R::RAX),
        "rbx" => Source::Gpr(R::RBX),
        "rcx" => Source::Gpr(R::RCX),
        "rdx" => Source::Gpr(R::RDX),
        "rsi" => Source::Gpr(R::RSI),
        "rdi" => Source::Gpr(R::RDI),
        "rbp" => Source::Gpr(R::RBP),
        "r8" => Source::Gpr(R::R8),
        "r9" => Source::Gpr(R::R9),
        "r10" => Source::Gpr(R::R10),
        "r11" => Source::Gpr(R::R11),
        "r12" => Source::Gpr(R::R12),
        "r13" => Source::Gpr(R::R13),
        "r14" => Source::Gpr(R::R14),
        "r15" => Source::Gpr(R::R15),
        "rsp" | "sp" => Source::Rsp,
        "rip" | "pc" => Source::Rip,
        "eflags" | "rflags" => Source::Rflags,
        x if x.starts_with("xmm") => {
            let n: u8 = x[3..].parse().ok().filter(|n| *n < 16)?;
            Source::Xmm(n)
        }
        _ => return None,
    })
}

/// `pushfq`, the first thing a trampoline does after skipping the red zone, and the trap
/// flag it would save while single-stepped.
const PUSHFQ: u8 = 0x9c;
const TRAP_FLAG: u64 = 1 << 8;

/// The registers `'all'` collects.
const ALL: [&str; 18] = [
    "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13",
    "r14", "r15", "rip", "eflags",
];

/// `'rsi'`, `'rsp+8'`, `'rdi-16'`, `'0x404040'`: a base and an offset.
fn address_of(text: &str) -> std::result::Result<(Source, i64), String> {
    let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let split = t[1..].find(['+', '-']).map(|i| i + 1);
    let (base, off) = match split {
        Some(i) => (&t[..i], &t[i..]),
        None => (t.as_str(), ""),
    };
    let number = |s: &str| -> Option<i64> {
        let (neg, s) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s.strip_prefix('+').unwrap_or(s)),
        };
        let v = match s.strip_prefix("0x") {
            Some(h) => i64::from_str_radix(h, 16).ok()?,
            None => s.parse().ok()?,
        };
        Some(if neg { -v } else { v })
    };
    let disp = if off.is_empty() {
        0
    } else {
        number(off).ok_or_else(|| format!("'{text}': the offset must be a number"))?
    };
    let src = match source_of(base) {
        Some(Source::Xmm(_)) => return Err(format!("'{text}': an xmm register is no address")),
        Some(s) => s,
        None => match number(base) {
            Some(a) if a >= 0 => Source::Abs(a as u64),
            _ => {
                return Err(format!(
                    "'{text}' is no address: a register (rdi, rsp+8) or a number"
                ))
            }
        },
    };
    Ok((src, disp))
}

impl Layout {
    fn of(wants: &[Want]) -> std::result::Result<Layout, String> {
        let mut at = probe::RECORD_ITEMS;
        let mut regs: Vec<(Rc<str>, Source, u32)> = Vec::new();
        let mut mems = Vec::new();
        let mut add_reg = |name: &str, at: &mut u32| -> std::result::Result<(), String> {
            if regs.iter().any(|(n, _, _)| &**n == name) {
                return Ok(());
            }
            let src = source_of(name).ok_or_else(|| {
                format!("'{name}' is no register to collect (rax..r15, rip, rsp, eflags, xmm0..xmm15, 'all')")
            })?;
            regs.push((name.into(), src, *at));
            *at += if matches!(src, Source::Xmm(_)) { 16 } else { 8 };
            Ok(())
        };
        for w in wants {
            match w {
                Want::Reg(name) if name == "all" => {
                    for r in ALL {
                        add_reg(r, &mut at)?;
                    }
                }
                Want::Reg(name) => add_reg(name, &mut at)?,
                Want::Mem {
                    at: expr,
                    len,
                    string,
                } => {
                    if *len == 0 || *len > 4096 {
                        return Err(format!("'{expr}': a length from 1 to 4096 bytes"));
                    }
                    let (src, disp) = address_of(expr)?;
                    mems.push(MemSlot {
                        expr: expr.as_str().into(),
                        src,
                        disp,
                        len: *len,
                        at,
                        string: *string,
                    });
                    at += 16 + len.div_ceil(8) * 8;
                }
            }
        }
        if at > RECORD_MAX {
            return Err(format!("a record of {at} bytes: at most {RECORD_MAX}"));
        }
        let shift = at.next_power_of_two().max(64).trailing_zeros();
        Ok(Layout { regs, mems, shift })
    }

    fn items(&self) -> Vec<Item> {
        let regs = self
            .regs
            .iter()
            .map(|(_, src, at)| Item::Reg { src: *src, at: *at });
        let mems = self.mems.iter().map(|m| Item::Mem {
            src: m.src,
            disp: m.disp,
            len: m.len,
            at: m.at,
        });
        regs.chain(mems).collect()
    }

    /// A record read from a ring.
    fn decode(&self, id: u32, pc: u64, raw: &[u8], clock: &Clock) -> TraceRecord {
        let u64_at = |at: u32| -> u64 {
            let at = at as usize;
            raw.get(at..at + 8)
                .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
        };
        let tid = u64_at(probe::RECORD_TID) as u32 as Tid;
        let time = clock.time(u64_at(probe::RECORD_TSC));
        let regs = self
            .regs
            .iter()
            .map(|(name, src, at)| {
                let v = match src {
                    Source::Xmm(_) => {
                        let mut x = [0u8; 16];
                        let a = *at as usize;
                        if let Some(b) = raw.get(a..a + 16) {
                            x.copy_from_slice(b);
                        }
                        RegValue::Xmm(x)
                    }
                    _ => RegValue::U64(u64_at(*at)),
                };
                (name.clone(), v)
            })
            .collect();
        let mem = self
            .mems
            .iter()
            .map(|m| {
                let got = u64_at(m.at) as i64;
                let addr = u64_at(m.at + 8);
                let start = m.at as usize + 16;
                let (bytes, error) = if got < 0 {
                    (Vec::new(), Some(errno_text(-got)))
                } else {
                    let n = (got as usize).min(m.len as usize);
                    (raw.get(start..start + n).unwrap_or_default().to_vec(), None)
                };
                MemCopy {
                    expr: m.expr.clone(),
                    addr,
                    bytes: cut_string(bytes, m.string),
                    error,
                    string: m.string,
                }
            })
            .collect();
        TraceRecord {
            id,
            tid,
            time,
            pc,
            regs,
            mem,
        }
    }
}

fn errno_text(errno: i64) -> String {
    if errno == libc::EFAULT as i64 {
        "unreadable".into()
    } else {
        format!(
            "unreadable ({})",
            nix::errno::Errno::from_raw(errno as i32).desc()
        )
    }
}

/// A string's bytes up to its NUL.
fn cut_string(mut bytes: Vec<u8>, string: bool) -> Vec<u8> {
    if string {
        if let Some(n) = bytes.iter().position(|b| *b == 0) {
            bytes.truncate(n);
        }
    }
    bytes
}

impl Session {
    /// `tracepoint.set(where, {collect, full})`: a probe at `spec`'s address (a function's
    /// first instruction, a `file:line`, an address), else a trap that collects the same.
    /// The id, the mode, and a note when it is a trap (why).
    pub(crate) fn tracepoint_set(
        &mut self,
        spec: &str,
        collect: &[Want],
        wait: bool,
    ) -> Result<(u32, TraceMode, Option<String>)> {
        self.check_writable("set a tracepoint")?;
        let layout = Layout::of(collect).map_err(SessionError::Invalid)?;
        let addr = self.resolve(spec)?;
        self.check_code_address(addr)?;
        if self.tracing.list.iter().any(|t| t.addr == addr) {
            return Err(SessionError::Invalid(format!(
                "a tracepoint is already at {addr:#x} ({spec}): collect more in one tracepoint"
            )));
        }
        self.stop_every_thread()?;
        self.tracing.next_id += 1;
        let id = self.tracing.next_id;
        let mut tp = Tracepoint {
            id,
            spec: spec.to_string(),
            addr,
            mode: TraceMode::Jump,
            why_trap: None,
            layout,
            wait,
            probe: None,
            trap_hits: 0,
            delivered: 0,
            queue_lost: 0,
        };
        match self.install_probe(&tp) {
            Ok(installed) => tp.probe = Some(installed),
            Err(why) => {
                let t = self.targets.live()?;
                t.insert_site(addr)?;
                t.set_quiet_site(addr, true);
                tp.mode = TraceMode::Trap;
                tp.why_trap = Some(why);
            }
        }
        let note = tp.why_trap.as_ref().map(|why| {
            format!("tracepoint {id} at {addr:#x} is a trap (each hit stops the thread for a moment): {why}")
        });
        let mode = tp.mode;
        self.tracing.list.push(tp);
        self.sync_trace_flags();
        Ok((id, mode, note))
    }

    /// Puts a probe for `tp` into the program: the reason it cannot be one is the error.
    fn install_probe(&mut self, tp: &Tracepoint) -> std::result::Result<Installed, String> {
        let addr = tp.addr;
        let mut code = [0u8; 32];
        let n = {
            let t = self.targets.live().map_err(|e| e.to_string())?;
            t.read_memory_partial(addr, &mut code)
        };
        // The function around the site, to know no branch lands inside the jump.
        let func = self
            .symbols
            .symbol_at(RuntimeAddr(addr))
            .filter(|(_, sym, _)| sym.size > 0 && sym.kind == crate::symbols::SymKind::Func)
            .map(|(_, sym, off)| (addr - off, sym.size, sym.display_name().into_owned()));
        let mut func_bytes = Vec::new();
        let mut cold_bytes = Vec::new();
        if let Some((start, size, name)) = &func {
            func_bytes = self
                .read_memory_partial(*start, (*size).min(1 << 20) as usize)
                .map_err(|e| e.to_string())?;
            if let Some(cold) = self.symbols.lookup(&format!("{name}.cold")) {
                let (m, sym, _) = cold;
                let at = m.bias.to_runtime(sym.addr).0;
                let size = sym.size.min(1 << 20) as usize;
                if let Ok(bytes) = self.read_memory_partial(at, size) {
                    cold_bytes.push((at, bytes));
                }
            }
        }
        let f = func.as_ref().map(|(start, _, _)| probe::Function {
            start: *start,
            code: &func_bytes,
        });
        let parts: Vec<probe::Function> = cold_bytes
            .iter()
            .map(|(at, b)| probe::Function {
                start: *at,
                code: b,
            })
            .collect();
        let cover = probe::cover(&code[..n], addr, f.as_ref(), &parts)?;
        let items = tp.layout.items();
        let slot = 1u64 << tp.layout.shift;
        let ring_len = probe::DATA + SLOTS * slot;
        if self.tracing.clock.is_none() {
            self.tracing.clock = Some(Clock::start());
        }
        let t = self.targets.live().map_err(|e| e.to_string())?;
        let host = t
            .probes()
            .ok_or("this target cannot hold probes (a remote stub)")?;
        let pid = host.pid();
        let (ring_addr, shared) = host.map_ring(ring_len).map_err(|e| e.to_string())?;
        let mut undo = Undo {
            ring: Some((ring_addr, ring_len)),
            code: None,
        };
        let made = (|| {
            let probe_of = |cover| probe::Probe {
                site: addr,
                pid: pid as u32,
                ring: probe::Ring {
                    header: ring_addr,
                    slots: SLOTS,
                    slot_shift: tp.layout.shift,
                },
                items: &items,
                wait: tp.wait,
                cover,
            };
            // The code's size first (placed anywhere), then for real where it goes.
            let len = probe::trampoline(addr, &probe_of(&cover))?.code.len() as u64;
            let code = host.alloc_near(addr, len).map_err(|e| e.to_string())?;
            undo.code = Some((code, len.div_ceil(4096) * 4096));
            let tramp = probe::trampoline(code, &probe_of(&cover))?;
            host.write_code(code, &tramp.code)
                .map_err(|e| e.to_string())?;
            let jump = probe::jump(addr, code).ok_or("the trampoline is out of a jump's reach")?;
            host.patch_jump(addr, &jump, cover.len)
                .map_err(|e| e.to_string())?;
            Ok(Installed {
                shared,
                ring_addr,
                ring_len,
                code,
                code_len: len.div_ceil(4096) * 4096,
                site: addr,
                moved: tramp.moved,
                restore: tramp.restore,
                tail: 0,
                abandoned: 0,
            })
        })();
        if made.is_err() {
            if let Some((a, l)) = undo.code {
                let _ = host.unmap(a, l);
            }
            if let Some((a, l)) = undo.ring {
                let _ = host.unmap(a, l);
            }
        }
        made
    }

    /// `tracepoint.remove(id)`: the site's bytes back as they were. A note when the
    /// trampoline stays mapped (a thread is inside it).
    pub(crate) fn tracepoint_remove(&mut self, id: u32) -> Result<Option<String>> {
        let Some(i) = self.tracing.list.iter().position(|t| t.id == id) else {
            return Err(SessionError::Invalid(format!(
                "no tracepoint {id} (tracepoint.list() shows them)"
            )));
        };
        self.stop_every_thread()?;
        // Nobody inside a trampoline: it can go with the jump.
        self.leave_probes()?;
        self.drain_traces(true);
        let tp = self.tracing.list.remove(i);
        self.take_out(tp)
    }

    /// Takes a tracepoint out of the program: the jump, then the trampoline and the ring
    /// when no thread is inside the trampoline.
    fn take_out(&mut self, tp: Tracepoint) -> Result<Option<String>> {
        let Ok(t) = self.targets.live() else {
            return Ok(None);
        };
        let Some(p) = tp.probe else {
            t.set_quiet_site(tp.addr, false);
            if !self.points.breakpoints.is_user_site(tp.addr) {
                t.remove_site(tp.addr)?;
            }
            return Ok(None);
        };
        // A thread waiting for room must not wait for a reader that is going.
        p.shared.store(probe::FLAGS, probe::FLAG_COUNT_ONLY);
        let Some(host) = t.probes() else {
            return Ok(None);
        };
        host.unpatch_jump(p.site)?;
        if host.pc_inside(p.code..p.code + p.code_len) {
            return Ok(Some(format!(
                "tracepoint {}'s trampoline at {:#x} stays mapped: a thread is inside it",
                tp.id, p.code
            )));
        }
        let _ = host.unmap(p.code, p.code_len);
        let _ = host.unmap(p.ring_addr, p.ring_len);
        Ok(None)
    }

    /// Takes every tracepoint out (detach, kill, the end of the session): notes for what
    /// stays.
    pub(super) fn remove_all_tracepoints(&mut self) -> Vec<String> {
        let _ = self.stop_every_thread();
        let _ = self.leave_probes();
        self.drain_traces(true);
        let mut notes = Vec::new();
        for tp in std::mem::take(&mut self.tracing.list) {
            if let Ok(Some(note)) = self.take_out(tp) {
                notes.push(note);
            }
        }
        notes
    }

    /// The process is gone or replaced: its probes with it (their counts stay readable
    /// until then; a new image has none of them).
    pub(super) fn forget_tracepoints(&mut self) -> Option<String> {
        if self.tracing.list.is_empty() {
            return None;
        }
        let ids: Vec<String> = self.tracing.list.iter().map(|t| t.id.to_string()).collect();
        self.tracing.list.clear();
        self.tracing.queue.clear();
        Some(format!(
            "exec replaced the program: tracepoints {} are gone with its code (set them again)",
            ids.join(", ")
        ))
    }

    /// A library went away with its code: its tracepoints go too, said in the next stop's
    /// notes. Their trampolines and rings stay mapped (a page or two each): other threads
    /// may be running, so nothing shows that none is inside.
    pub(super) fn forget_tracepoints_in(&mut self, start: u64, end: u64) {
        let (gone, kept): (Vec<Tracepoint>, Vec<Tracepoint>) =
            std::mem::take(&mut self.tracing.list)
                .into_iter()
                .partition(|t| (start..end).contains(&t.addr));
        self.tracing.list = kept;
        for tp in gone {
            let Ok(t) = self.targets.live() else { break };
            match &tp.probe {
                Some(p) => {
                    p.shared.store(probe::FLAGS, probe::FLAG_COUNT_ONLY);
                    if let Some(host) = t.probes() {
                        host.forget_jump(p.site);
                    }
                }
                None => {
                    t.set_quiet_site(tp.addr, false);
                    t.forget_site(tp.addr);
                }
            }
            self.carried_notes.push(format!(
                "tracepoint {} ({}) went with its library's code after {} hits (set it again once loaded)",
                tp.id,
                tp.spec,
                tp.hits()
            ));
        }
    }

    /// Whether any probe is in the program (a continue then ticks to read the rings).
    pub(crate) fn has_probes(&self) -> bool {
        self.tracing.list.iter().any(|t| t.probe.is_some())
    }

    /// Whether `addr` is a probe's site (a single step there runs the program's own
    /// instruction: the session counts and collects the hit itself).
    pub(super) fn probe_at(&self, addr: u64) -> bool {
        self.tracing
            .list
            .iter()
            .any(|t| t.probe.is_some() && t.addr == addr)
    }

    /// Whether `addr` is a trap tracepoint's site.
    pub(super) fn trap_tracepoint_at(&self, addr: u64) -> bool {
        self.tracing
            .list
            .iter()
            .any(|t| t.mode == TraceMode::Trap && t.addr == addr)
    }

    /// A hit scry sees (a trap's, or a step through a probe's site): collects what the
    /// tracepoint asks from the stopped thread, at the site.
    pub(super) fn trap_hit(&mut self, tid: Tid, addr: u64) {
        let Some(i) = self.tracing.list.iter().position(|t| t.addr == addr) else {
            return;
        };
        self.tracing.list[i].trap_hits += 1;
        if !self.tracing.listening {
            return;
        }
        let layout = self.tracing.list[i].layout.clone();
        let id = self.tracing.list[i].id;
        // Vector registers through the backend (a stub's too); none read, none shown.
        let fp = layout
            .regs
            .iter()
            .any(|(_, s, _)| matches!(s, Source::Xmm(_)))
            .then(|| self.fp_regs(Some(tid)).ok())
            .flatten();
        let Ok(t) = self.targets.live() else { return };
        let Ok(regs) = t.regs(tid) else {
            return;
        };
        let value = |src: Source| -> u64 {
            use iced_x86::Register as R;
            match src {
                Source::Rsp => regs.rsp,
                Source::Rip => addr,
                Source::Rflags => regs.eflags,
                Source::Abs(a) => a,
                Source::Xmm(_) => 0,
                Source::Gpr(r) => match r {
                    R::RAX => regs.rax,
                    R::RBX => regs.rbx,
                    R::RCX => regs.rcx,
                    R::RDX => regs.rdx,
                    R::RSI => regs.rsi,
                    R::RDI => regs.rdi,
                    R::RBP => regs.rbp,
                    R::R8 => regs.r8,
                    R::R9 => regs.r9,
                    R::R10 => regs.r10,
                    R::R11 => regs.r11,
                    R::R12 => regs.r12,
                    R::R13 => regs.r13,
                    R::R14 => regs.r14,
                    R::R15 => regs.r15,
                    _ => 0,
                },
            }
        };
        let regs_out = layout
            .regs
            .iter()
            .filter_map(|(name, src, _)| {
                let v = match src {
                    Source::Xmm(n) => RegValue::Xmm(fp.as_ref()?.xmm(*n as usize)?),
                    s => RegValue::U64(value(*s)),
                };
                Some((name.clone(), v))
            })
            .collect();
        let mem = layout
            .mems
            .iter()
            .map(|m| {
                let at = value(m.src).wrapping_add(m.disp as u64);
                let mut buf = vec![0u8; m.len as usize];
                let n = t.read_memory_partial(at, &mut buf);
                buf.truncate(n);
                MemCopy {
                    expr: m.expr.clone(),
                    addr: at,
                    error: (n == 0).then(|| "unreadable".to_string()),
                    bytes: cut_string(buf, m.string),
                    string: m.string,
                }
            })
            .collect();
        let (_, mono) = crate::os::shared::tsc_and_monotonic();
        let record = TraceRecord {
            id,
            tid,
            time: mono,
            pc: addr,
            regs: regs_out,
            mem,
        };
        self.queue_record(i, record);
    }

    fn queue_record(&mut self, i: usize, record: TraceRecord) {
        if self.tracing.queue.len() >= QUEUE_MAX {
            self.tracing.list[i].queue_lost += 1;
        } else {
            self.tracing.queue.push_back(record);
        }
    }

    /// Reads every committed record out of the rings into the queue. `stopped`: every
    /// thread is stopped, so a record reserved and not committed by a thread that is not
    /// inside a trampoline never will be (its thread died there): skipped, counted lost.
    pub(crate) fn drain_traces(&mut self, stopped: bool) {
        let Some(clock) = self.tracing.clock.as_mut() else {
            return;
        };
        clock.refine();
        let clock = *clock;
        for i in 0..self.tracing.list.len() {
            let mut inside: Option<bool> = None;
            let tp = &mut self.tracing.list[i];
            let Some(p) = tp.probe.as_mut() else { continue };
            let slot = 1u64 << tp.layout.shift;
            let mut raw = vec![0u8; slot as usize];
            let mut records = Vec::new();
            // Up to what was reserved when the read began: the program keeps writing while
            // scry reads, and a read that chased it would hold its records from the
            // listeners until the program stopped writing.
            let head = p.shared.load(probe::HEAD);
            loop {
                if head <= p.tail {
                    break;
                }
                let off = probe::DATA + (p.tail & (SLOTS - 1)) * slot;
                let seq = p.shared.load(off);
                if seq != p.tail + 1 {
                    if !stopped {
                        break;
                    }
                    // Uncommitted with everything stopped: a thread inside the probe
                    // commits it later; otherwise nobody ever will.
                    let code = p.code..p.code + p.code_len;
                    let busy = *inside.get_or_insert_with(|| {
                        self.targets
                            .live
                            .as_mut()
                            .and_then(|t| t.process.probes())
                            .is_some_and(|h| h.pc_inside(code))
                    });
                    if busy {
                        break;
                    }
                    p.abandoned += 1;
                } else {
                    p.shared.copy(off, &mut raw);
                    records.push(tp.layout.decode(tp.id, tp.addr, &raw, &clock));
                }
                p.tail += 1;
                p.shared.store(probe::TAIL, p.tail);
            }
            for r in records {
                self.queue_record(i, r);
            }
        }
    }

    /// Records waiting for the script, at most `max`, oldest first; each counts as
    /// delivered.
    pub(crate) fn take_trace_records(&mut self, max: usize) -> Vec<TraceRecord> {
        let n = max.min(self.tracing.queue.len());
        let out: Vec<TraceRecord> = self.tracing.queue.drain(..n).collect();
        for r in &out {
            if let Some(t) = self.tracing.list.iter_mut().find(|t| t.id == r.id) {
                t.delivered += 1;
            }
        }
        out
    }

    /// Whether the script takes records (a `trace` listener): probes write them only then.
    pub(crate) fn set_trace_listening(&mut self, on: bool) {
        self.tracing.listening = on;
        self.sync_trace_flags();
    }

    fn sync_trace_flags(&mut self) {
        let flags = if self.tracing.listening {
            0
        } else {
            probe::FLAG_COUNT_ONLY
        };
        for t in &self.tracing.list {
            if let Some(p) = &t.probe {
                p.shared.store(probe::FLAGS, flags);
            }
        }
    }

    /// The stop a trace listener asked for: every thread stopped where it is now.
    pub(crate) fn trace_stop(&mut self, id: u32) -> Result<StopInfo> {
        self.stop_every_thread()?;
        self.leave_probes()?;
        Ok(StopInfo {
            tid: self.selected_tid().ok(),
            pc: self.pc().ok(),
            ..StopInfo::new(StopKind::Trace { id })
        })
    }

    /// The original address of a moved instruction the trampoline runs at `pc`; the first
    /// one's only with `first` (its original address is the jump's: resumed there, the
    /// thread would run the probe again and count its hit twice).
    fn original_of(&self, pc: u64, first: bool) -> Option<u64> {
        self.tracing.list.iter().find_map(|t| {
            let p = t.probe.as_ref()?;
            let skip = usize::from(!first);
            p.moved
                .iter()
                .skip(skip)
                .find(|(at, _)| *at == pc)
                .map(|(_, orig)| *orig)
        })
    }

    /// A thread stopped at one of a trampoline's moved instructions (a fault in it, a
    /// watchpoint or a step after one) is the program at that instruction's own address:
    /// its rip is set there, so the stop, `state` and unwinding show the program (resumed in
    /// the covered bytes, it runs the original instructions; see `inferior::probes`). True
    /// when it was moved. `first`: also from the first moved instruction (a stop reported
    /// there: a fault, which did not run it).
    pub(super) fn put_back_in_program(&mut self, tid: Tid, first: bool) -> Result<bool> {
        if !self.has_probes() {
            return Ok(false);
        }
        let t = self.targets.live()?;
        let Ok(mut regs) = t.regs(tid) else {
            return Ok(false);
        };
        let Some(orig) = self.original_of(regs.rip, first) else {
            return Ok(false);
        };
        regs.rip = orig;
        // Never the trap flag: a single step through the probe can leave it looking like
        // the program's own (the program's own flags are the ones the probe saved).
        regs.eflags &= !TRAP_FLAG;
        self.targets.live()?.set_regs_read_back(tid, &regs)?;
        Ok(true)
    }

    /// A thread at a trampoline's `restore` gets the program's registers from the frame the
    /// probe saved, as the pops and popfq would give them, and goes to the first moved
    /// instruction: never single-stepped, popfq would leave the trap flag the program's own.
    fn restore_from_frame(&mut self, tid: Tid, pc: u64) -> Result<bool> {
        let Some(first) = self.tracing.list.iter().find_map(|t| {
            let p = t.probe.as_ref()?;
            (p.restore == pc).then(|| p.moved.first().map(|m| m.0))?
        }) else {
            return Ok(false);
        };
        let t = self.targets.live()?;
        let mut regs = t.regs(tid)?;
        let mut frame = vec![0u8; probe::FRAME_LEN];
        if t.read_memory_partial(regs.rsp, &mut frame) != frame.len() {
            return Ok(false);
        }
        let Some(probe::SavedFrame {
            regs: saved,
            flags,
            rsp,
        }) = probe::saved_frame(&frame, regs.rsp)
        else {
            return Ok(false);
        };
        use iced_x86::Register as R;
        for (reg, v) in saved {
            let slot = match reg {
                R::RAX => &mut regs.rax,
                R::RBX => &mut regs.rbx,
                R::RCX => &mut regs.rcx,
                R::RDX => &mut regs.rdx,
                R::RSI => &mut regs.rsi,
                R::RDI => &mut regs.rdi,
                R::RBP => &mut regs.rbp,
                R::R8 => &mut regs.r8,
                R::R9 => &mut regs.r9,
                R::R10 => &mut regs.r10,
                R::R11 => &mut regs.r11,
                R::R12 => &mut regs.r12,
                R::R13 => &mut regs.r13,
                R::R14 => &mut regs.r14,
                R::R15 => &mut regs.r15,
                _ => continue,
            };
            *slot = v;
        }
        regs.eflags = flags & !TRAP_FLAG;
        regs.rsp = rsp;
        regs.rip = first;
        t.set_regs_read_back(tid, &regs)?;
        Ok(true)
    }

    /// Every thread stopped inside a trampoline is stepped out of it, back into the
    /// program's code, so a stop shows (and unwinds) the program, never a probe. A thread
    /// waiting there for room gets it: the rings are read between steps.
    pub(super) fn leave_probes(&mut self) -> Result<()> {
        let codes: Vec<std::ops::Range<u64>> = self
            .tracing
            .list
            .iter()
            .filter_map(|t| t.probe.as_ref().map(|p| p.code..p.code + p.code_len))
            .collect();
        if codes.is_empty() {
            return Ok(());
        }
        let inside = |pc: u64| codes.iter().any(|c| c.contains(&pc));
        let t = self.targets.live()?;
        let selected = t.selected();
        for tid in t.thread_ids() {
            let mut stepped_any = false;
            for _ in 0..100_000 {
                let t = self.targets.live()?;
                let Some(pc) = t.regs(tid).ok().map(|r| r.rip).filter(|pc| inside(*pc)) else {
                    break;
                };
                if self.put_back_in_program(tid, false)? {
                    break;
                }
                if self.restore_from_frame(tid, pc)? {
                    // At its moved instructions now: the next turn steps them.
                    continue;
                }
                let t = self.targets.live()?;
                let mut op = [0u8];
                t.read_memory_partial(pc, &mut op);
                t.select(tid);
                let deadline = Instant::now() + Duration::from_secs(1);
                let stepped = t.step(deadline, &|_| false);
                t.select(selected);
                stepped?;
                stepped_any = true;
                if op[0] == PUSHFQ {
                    // Single-stepped, pushfq saves the trap flag the step set, and the
                    // probe's popfq would put it back: the thread would trap once it runs.
                    let sp = t.regs(tid)?.rsp;
                    let mut flags = [0u8; 8];
                    if t.read_memory_partial(sp, &mut flags) == 8 {
                        let v = u64::from_le_bytes(flags) & !TRAP_FLAG;
                        t.write_memory(sp, &v.to_le_bytes())?;
                    }
                }
                self.drain_traces(false);
            }
            // The probe's popfq, single-stepped, leaves the trap flag the steps set: the
            // program never runs with it (its own flags had none: it was in the probe).
            let t = self.targets.live()?;
            if stepped_any {
                if let Ok(mut regs) = t.regs(tid) {
                    if regs.eflags & TRAP_FLAG != 0 {
                        regs.eflags &= !TRAP_FLAG;
                        t.set_regs_read_back(tid, &regs)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// `tracepoint.list()` rows.
    pub(crate) fn tracepoints(&self) -> &[Tracepoint] {
        &self.tracing.list
    }
}

/// What to unmap when putting a probe in fails half way.
struct Undo {
    ring: Option<(u64, u64)>,
    code: Option<(u64, u64)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_a_register_and_an_offset() {
        use iced_x86::Register as R;
        assert_eq!(address_of("rsi").unwrap(), (Source::Gpr(R::RSI), 0));
        assert_eq!(address_of("rsp+8").unwrap(), (Source::Rsp, 8));
        assert_eq!(
            address_of("rdi - 0x10").unwrap(),
            (Source::Gpr(R::RDI), -16)
        );
        assert_eq!(address_of("0x404040").unwrap(), (Source::Abs(0x404040), 0));
        assert!(address_of("xmm0").is_err());
        assert!(address_of("foo+8").is_err());
    }

    #[test]
    fn a_layout_places_registers_then_memory() {
        let l = Layout::of(&[
            Want::Reg("rdi".into()),
            Want::Mem {
                at: "rsi".into(),
                len: 10,
                string: true,
            },
        ])
        .unwrap();
        assert_eq!(l.regs[0].2, probe::RECORD_ITEMS);
        assert_eq!(l.mems[0].at, probe::RECORD_ITEMS + 8);
        // 24 + 8 + 16 + 16 = 64
        assert_eq!(l.shift, 6);
        assert!(Layout::of(&[Want::Reg("fs".into())]).is_err());
    }
}

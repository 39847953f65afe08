//! What a tracepoint collects and how its records read: the layout of a record in the
//! ring, the records themselves, the clock that dates them, and the reading of the rings
//! (and of a trap's hit) into the queue the script takes from.

use std::rc::Rc;

use super::*;
use crate::x86::probe::{Item, Source};

/// What a tracepoint collects, as the script names it.
#[derive(Debug, Clone)]
pub(crate) enum Want {
    /// `'rdi'`, `'xmm0'`, `'all'`.
    Reg(String),
    /// `{mem: 'rsi+8', len: 16}`, `{mem: 'rdi', str: 64}`: `len` bytes at the address.
    Mem { at: String, len: u32, string: bool },
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
pub(super) struct Layout {
    pub(super) regs: Vec<(Rc<str>, Source, u32)>,
    pub(super) mems: Vec<MemSlot>,
    /// log2 of the record's size.
    pub(super) shift: u32,
}

#[derive(Debug, Clone)]
pub(super) struct MemSlot {
    expr: Rc<str>,
    src: Source,
    disp: i64,
    len: u32,
    at: u32,
    string: bool,
}

/// Turns time stamp counter readings into CLOCK_MONOTONIC: a reference pair taken at the
/// first tracepoint, the rate from it to the latest pair (the longer the span, the better).
#[derive(Clone, Copy)]
pub(super) struct Clock {
    tsc0: u64,
    mono0: u64,
    ns_per_tick: f64,
}

impl Clock {
    pub(super) fn start() -> Clock {
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

    pub(super) fn refine(&mut self) {
        let (tsc, mono) = crate::os::shared::tsc_and_monotonic();
        if tsc > self.tsc0 && mono > self.mono0 {
            self.ns_per_tick = (mono - self.mono0) as f64 / (tsc - self.tsc0) as f64;
        }
    }

    pub(super) fn time(&self, tsc: u64) -> u64 {
        let d = tsc as i128 - self.tsc0 as i128;
        (self.mono0 as i128 + (d as f64 * self.ns_per_tick) as i128).max(0) as u64
    }
}

/// A tracepoint's `{if}` the probe can test itself (`e => e.registers.rdi > 100`, see the
/// prelude): the register by name, the comparison (`==`, `!=`, `<`, `<=`, `>`, `>=`) and
/// the constant. `None` for a register a probe condition cannot read (an xmm one).
pub(crate) fn probe_cond(reg: &str, op: &str, value: u64) -> Option<probe::Cond> {
    use probe::CondOp;
    let src = source_of(reg).filter(|s| !matches!(s, Source::Xmm(_) | Source::Abs(_)))?;
    let op = match op {
        "==" | "===" => CondOp::Eq,
        "!=" | "!==" => CondOp::Ne,
        "<" => CondOp::Lt,
        "<=" => CondOp::Le,
        ">" => CondOp::Gt,
        ">=" => CondOp::Ge,
        _ => return None,
    };
    Some(probe::Cond { src, op, value })
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

/// The field of `regs` holding general register `r` (not rsp: a probe keeps the program's
/// stack pointer apart).
pub(super) fn gpr_mut(regs: &mut RawRegs, r: iced_x86::Register) -> Option<&mut u64> {
    use iced_x86::Register as R;
    Some(match r {
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
        _ => return None,
    })
}

/// The registers `'all'` collects.
const ALL: [&str; 18] = [
    "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13",
    "r14", "r15", "rip", "eflags",
];

/// `'rsi'`, `'rsp+8'`, `'rdi-16'`, `'0x404040'`: a base and an offset.
fn address_of(text: &str) -> std::result::Result<(Source, i64), String> {
    let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if t.is_empty() || !t.is_ascii() {
        return Err(format!(
            "'{text}' is no address: a register (rdi, rsp+8) or a number"
        ));
    }
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
    pub(super) fn of(wants: &[Want]) -> std::result::Result<Layout, String> {
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

    pub(super) fn items(&self) -> Vec<Item> {
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
    /// A hit scry sees (a trap's, or a step through a probe's site): collects what the
    /// tracepoint asks from the stopped thread, at the site.
    pub(in crate::session) fn trap_hit(&mut self, tid: Tid, addr: u64) {
        let at = |t: &super::Tracepoint| self.placed_here(t) && t.addr == addr;
        let Some(i) = self.tracing.list.iter().position(at) else {
            return;
        };
        self.tracing.list[i].counted += 1;
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
        let Ok(mut regs) = t.regs(tid) else {
            return;
        };
        let mut value = |src: Source| -> u64 {
            match src {
                Source::Rsp => regs.rsp,
                Source::Rip => addr,
                Source::Rflags => regs.eflags,
                Source::Abs(a) => a,
                Source::Xmm(_) => 0,
                Source::Gpr(r) => gpr_mut(&mut regs, r).map_or(0, |v| *v),
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
            // The header is the program's memory too: a wild write there must not make scry
            // read forever.
            let head = p.shared.load(probe::HEAD).min(p.tail + p.slots);
            loop {
                if head <= p.tail {
                    break;
                }
                let off = probe::DATA + (p.tail & (p.slots - 1)) * slot;
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
            if self.tracing.namespaced {
                self.give_scry_tids(&mut records);
            }
            for r in records {
                self.queue_record(i, r);
            }
        }
    }

    /// A program in a pid namespace of its own records its threads by their ids there: each
    /// becomes the id scry (and `thread.list()`) knows it by. One not found stays as it is.
    fn give_scry_tids(&mut self, records: &mut [TraceRecord]) {
        if records
            .iter()
            .any(|r| !self.tracing.tid_map.contains_key(&r.tid))
        {
            if let Some(host) = self.targets.live.as_mut().and_then(|t| t.process.probes()) {
                self.tracing.tid_map.extend(host.namespace_ids());
            }
        }
        for r in records {
            if let Some(t) = self.tracing.tid_map.get(&r.tid) {
                r.tid = *t;
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

    pub(super) fn sync_trace_flags(&mut self) {
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

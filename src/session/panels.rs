//! What the live view's default page shows at a stop, read without disturbing the session:
//! nothing here is remembered for `prev`, and nothing waits for the program's output.

use super::*;
use crate::view::panels::{
    DisasmRow, FrameLine, Panels, PointLine, Register, SourcePanel, StackGauge, ThreadLine,
};

/// Instructions shown before and from pc.
const DISASM_BEFORE: usize = 6;
const DISASM_AFTER: usize = 12;
/// Decode from the function's start only when it is this close before pc.
const DISASM_REACH: u64 = 4096;
const MAX_FRAMES: usize = 24;
const MAX_THREADS: usize = 64;
const SOURCE_CONTEXT: u32 = 6;

const FLAG_BITS: [(char, u32); 9] = [
    ('c', 0),
    ('p', 2),
    ('a', 4),
    ('z', 6),
    ('s', 7),
    ('t', 8),
    ('i', 9),
    ('d', 10),
    ('o', 11),
];

impl Session {
    /// A stop line for the view while a run goes on: symbol and source line, but no wait for
    /// output and no culprit search (those are for the stop a response returns).
    pub fn light_stop_line(&mut self, info: &StopInfo) -> String {
        let mut info = info.clone();
        if info.pc.is_none() && self.is_live() {
            info.pc = self.peek_regs().map(|r| r.rip);
        }
        self.place_stop(&mut info);
        info.line()
    }

    /// `exited with code 0`, `killed by SIGKILL`, ...: why there is no live process.
    pub fn no_process_reason(&self) -> String {
        self.targets
            .ended
            .clone()
            .unwrap_or_else(|| "no process".into())
    }

    /// Everything the default page shows, for the stop described by `stop_line`.
    pub fn view_panels(&mut self, stop_line: &str) -> Panels {
        let mut p = Panels {
            program: self.program().unwrap_or_default().to_string(),
            pid: self.pid(),
            live: self.is_live(),
            stop: stop_line.to_string(),
            points: self.point_lines(),
            ..Default::default()
        };
        if !p.live {
            p.note = Some(self.targets.no_process().to_string());
            return p;
        }
        // Reading registers notes them for `prev`; the view is not a script reading them.
        let noted = self.at_stop.snapshot.noted_regs();
        self.fill_live(&mut p);
        self.at_stop.snapshot.set_noted_regs(noted);
        p
    }

    /// The selected thread's registers, not noted for `prev`.
    fn peek_regs(&mut self) -> Option<RawRegs> {
        let inferior = self.targets.live().ok()?;
        let tid = inferior.selected();
        inferior.regs(tid).ok()
    }

    fn fill_live(&mut self, p: &mut Panels) {
        let Some(regs) = self.peek_regs() else {
            return;
        };
        p.tid = self.selected_tid().ok();
        p.registers = regs::REGISTER_NAMES
            .iter()
            .enumerate()
            .map(|(i, name)| Register {
                name,
                value: regs::get_register(&regs, i),
                changed: false,
            })
            .collect();
        p.flags = FLAG_BITS
            .iter()
            .map(|(f, bit)| format!("{f}={}", (regs.eflags >> bit) & 1))
            .collect::<Vec<_>>()
            .join(" ");
        p.disasm = self.disasm_around(regs.rip);
        p.source = self.source_lines(SOURCE_CONTEXT).ok().map(|s| SourcePanel {
            path: s.path,
            line: s.line,
            rows: s.rows,
        });
        match self.unwind(MAX_FRAMES, false) {
            Ok((rows, stopped)) => {
                p.frames = rows
                    .into_iter()
                    .map(|r| FrameLine {
                        frame: r.frame,
                        pc: r.pc,
                        symbol: r.symbol.unwrap_or_else(|| "??".into()),
                        location: match (&r.file, r.line) {
                            (Some(f), Some(n)) => {
                                format!("{}:{n}", super::stop::short_file(f))
                            }
                            _ => String::new(),
                        },
                        inlined: r.inlined,
                    })
                    .collect();
                p.frames_note = stopped.map(|why| format!("(unwinding stopped: {why})"));
            }
            Err(e) => p.frames_note = Some(format!("(no stack: {e})")),
        }
        p.stack = self.stack().ok().map(|s| StackGauge {
            sp: regs.rsp,
            top: s.top,
            usable_base: s.usable_base,
            kind: s.kind.to_string(),
        });
        if let Ok(rows) = self.thread_list() {
            p.threads = rows
                .into_iter()
                .take(MAX_THREADS)
                .map(|t| ThreadLine {
                    tid: t.tid,
                    name: t.name,
                    state: t.state,
                    pc: t.pc,
                    symbol: t.symbol.unwrap_or_default(),
                    selected: t.selected,
                })
                .collect();
        }
    }

    /// A few instructions before pc (decoded from the function's start, so their boundaries
    /// are right) and more from pc.
    fn disasm_around(&mut self, pc: u64) -> Vec<DisasmRow> {
        let start = self
            .symbols
            .symbol_at(RuntimeAddr(pc))
            .map(|(_, _, off)| pc - off)
            .filter(|s| pc - s <= DISASM_REACH);
        let mut insns = Vec::new();
        let mut at = None;
        if let Some(start) = start {
            let count = (pc - start) as usize + DISASM_AFTER;
            if let Ok(all) = self.disasm(start, count) {
                if let Some(i) = all.iter().position(|x| x.addr == pc) {
                    let from = i.saturating_sub(DISASM_BEFORE);
                    insns = all
                        .into_iter()
                        .skip(from)
                        .take(i - from + DISASM_AFTER)
                        .collect();
                    at = Some(i - from);
                }
            }
        }
        if at.is_none() {
            insns = self.disasm(pc, DISASM_AFTER).unwrap_or_default();
            at = Some(0);
        }
        let armed: Vec<u64> = self.points.breakpoints.armed_addresses();
        insns
            .into_iter()
            .enumerate()
            .map(|(i, insn)| DisasmRow {
                symbol: self.symbolize(insn.addr),
                current: Some(i) == at,
                breakpoint: armed.contains(&insn.addr),
                addr: insn.addr,
                text: insn.text,
            })
            .collect()
    }

    fn point_lines(&self) -> Vec<PointLine> {
        let mut out: Vec<PointLine> = self
            .points
            .breakpoints
            .list()
            .iter()
            .map(|b| PointLine {
                kind: "breakpoint",
                id: b.id,
                name: b.name.clone().unwrap_or_default(),
                addr: b.addr,
                what: b.spec.clone(),
                hits: b.hits,
                pending: !b.armed,
            })
            .collect();
        out.extend(self.points.watchpoints.list().iter().map(|w| PointLine {
            kind: "watchpoint",
            id: w.id,
            name: w.name.clone().unwrap_or_default(),
            addr: w.addr,
            what: format!("{} {} {}", w.spec, w.kind.as_str(), w.len),
            hits: w.hits,
            pending: !w.armed,
        }));
        out
    }
}

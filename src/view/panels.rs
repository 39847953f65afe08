//! What the default page shows, as plain data the session fills in at a stop, and its JSON
//! for the page. 64-bit values travel as hex strings: JavaScript numbers would round them.

use serde_json::{json, Value};

/// The session at one stop.
#[derive(Debug, Clone, Default)]
pub struct Panels {
    pub program: String,
    pub pid: Option<i32>,
    pub live: bool,
    /// The last stop line, as a response shows it.
    pub stop: String,
    /// Counts the stops the session went through: registers are marked changed against the
    /// previous one.
    pub stop_seq: u64,
    pub tid: Option<i32>,
    pub registers: Vec<Register>,
    pub flags: String,
    pub disasm: Vec<DisasmRow>,
    pub source: Option<SourcePanel>,
    pub frames: Vec<FrameLine>,
    /// Why the unwind ended early, when it did.
    pub frames_note: Option<String>,
    pub stack: Option<StackGauge>,
    pub threads: Vec<ThreadLine>,
    pub points: Vec<PointLine>,
    /// What could not be shown and why (`no live process (exited with code 0)`).
    pub note: Option<String>,
}

/// Register values at a stop, for marking what the next stop changed.
#[derive(Debug, Clone, Default)]
pub struct Baseline {
    pub pid: Option<i32>,
    pub tid: Option<i32>,
    pub stop_seq: u64,
    pub registers: Vec<(&'static str, u64)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Register {
    pub name: &'static str,
    pub value: u64,
    /// Different from the last state the page was sent.
    pub changed: bool,
}

#[derive(Debug, Clone)]
pub struct DisasmRow {
    pub addr: u64,
    /// `main+0x4`, when a symbol covers it.
    pub symbol: Option<String>,
    pub text: String,
    pub current: bool,
    pub breakpoint: bool,
}

#[derive(Debug, Clone)]
pub struct SourcePanel {
    pub path: String,
    pub line: u32,
    pub rows: Vec<(u32, String)>,
}

#[derive(Debug, Clone)]
pub struct FrameLine {
    pub frame: usize,
    pub pc: u64,
    pub symbol: String,
    /// `loop.c:15`
    pub location: String,
    pub inlined: bool,
}

/// How much of the stack holding sp is in use.
#[derive(Debug, Clone)]
pub struct StackGauge {
    pub sp: u64,
    pub top: u64,
    pub usable_base: u64,
    pub kind: String,
}

#[derive(Debug, Clone)]
pub struct ThreadLine {
    pub tid: i32,
    pub name: String,
    pub state: String,
    pub pc: u64,
    pub symbol: String,
    pub selected: bool,
}

/// A breakpoint or watchpoint.
#[derive(Debug, Clone)]
pub struct PointLine {
    pub kind: &'static str,
    pub id: u32,
    pub name: String,
    pub addr: u64,
    /// What it is on: the symbol, or `w 8 bytes`.
    pub what: String,
    pub hits: u64,
    pub pending: bool,
}

/// A chunk the agent sent and scry's answer.
#[derive(Debug, Clone)]
pub struct ChunkRecord {
    pub seq: u64,
    /// `<input>` or the script file.
    pub file: String,
    pub code: String,
    pub answer: String,
    pub ok: bool,
    /// Wall-clock time it started, `HH:MM:SS` UTC.
    pub at: String,
    pub millis: u64,
}

/// Whether the target is running right now, in one line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Status {
    pub running: bool,
    /// `running: cont()`, `stopped`, `no process`, `session ended`.
    pub label: String,
}

pub(crate) fn hex(v: u64) -> String {
    format!("{v:#x}")
}

impl Panels {
    /// Marks the registers that differ from `before` (their values at the previous stop),
    /// when both are of the same thread.
    pub fn mark_changes(&mut self, before: Option<&Baseline>) {
        let Some(before) = before.filter(|b| b.tid == self.tid && b.pid == self.pid) else {
            return;
        };
        for r in &mut self.registers {
            if let Some((_, old)) = before.registers.iter().find(|(n, _)| *n == r.name) {
                r.changed = *old != r.value;
            }
        }
    }

    /// The registers as they are now, to compare the next stop against.
    pub fn baseline(&self) -> Baseline {
        Baseline {
            pid: self.pid,
            tid: self.tid,
            stop_seq: self.stop_seq,
            registers: self.registers.iter().map(|r| (r.name, r.value)).collect(),
        }
    }

    pub fn to_json(&self) -> Value {
        json!({
            "program": self.program,
            "pid": self.pid,
            "live": self.live,
            "stop": self.stop,
            "tid": self.tid,
            "registers": self.registers.iter().map(|r| json!([r.name, hex(r.value), r.changed])).collect::<Vec<_>>(),
            "flags": self.flags,
            "disasm": self.disasm.iter().map(|d| json!({
                "addr": hex(d.addr), "symbol": d.symbol, "text": d.text,
                "current": d.current, "breakpoint": d.breakpoint,
            })).collect::<Vec<_>>(),
            "source": self.source.as_ref().map(|s| json!({
                "path": s.path, "line": s.line,
                "rows": s.rows.iter().map(|(n, t)| json!([n, t])).collect::<Vec<_>>(),
            })),
            "frames": self.frames.iter().map(|f| json!({
                "frame": f.frame, "pc": hex(f.pc), "symbol": f.symbol,
                "location": f.location, "inlined": f.inlined,
            })).collect::<Vec<_>>(),
            "frames_note": self.frames_note,
            "stack": self.stack.as_ref().map(|s| json!({
                "sp": hex(s.sp), "top": hex(s.top), "usable_base": hex(s.usable_base),
                "kind": s.kind,
                "used": s.top.saturating_sub(s.sp),
                "size": s.top.saturating_sub(s.usable_base),
            })),
            "threads": self.threads.iter().map(|t| json!({
                "tid": t.tid, "name": t.name, "state": t.state, "pc": hex(t.pc),
                "symbol": t.symbol, "selected": t.selected,
            })).collect::<Vec<_>>(),
            "points": self.points.iter().map(|p| json!({
                "kind": p.kind, "id": p.id, "name": p.name, "addr": hex(p.addr),
                "what": p.what, "hits": p.hits, "pending": p.pending,
            })).collect::<Vec<_>>(),
            "note": self.note,
        })
    }
}

impl ChunkRecord {
    pub fn to_json(&self) -> Value {
        json!({
            "seq": self.seq, "file": self.file, "code": self.code, "answer": self.answer,
            "ok": self.ok, "at": self.at, "ms": self.millis,
        })
    }
}

impl Status {
    pub fn to_json(&self) -> Value {
        json!({"running": self.running, "label": self.label})
    }
}

/// `HH:MM:SS` (UTC) of the current time, for the chunk log.
pub(crate) fn clock() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let day = secs % 86_400;
    format!("{:02}:{:02}:{:02}", day / 3600, day % 3600 / 60, day % 60)
}

/// At most `max` bytes of `text` (cut at a character boundary) with a note of what was cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}\n[... {} more bytes]", &text[..cut], text.len() - cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_marked_within_one_thread() {
        let reg = |v| Register {
            name: "rax",
            value: v,
            changed: false,
        };
        let before = Panels {
            tid: Some(1),
            registers: vec![reg(1)],
            ..Default::default()
        };
        let mut now = Panels {
            tid: Some(1),
            registers: vec![reg(2)],
            ..Default::default()
        };
        now.mark_changes(Some(&before.baseline()));
        assert!(now.registers[0].changed);
        let json = now.to_json();
        assert_eq!(json["registers"][0], json!(["rax", "0x2", true]));
        let mut other = Panels {
            tid: Some(2),
            registers: vec![reg(2)],
            ..Default::default()
        };
        other.mark_changes(Some(&before.baseline()));
        assert!(!other.registers[0].changed);
        assert_eq!(clip("héllo", 2), "h\n[... 5 more bytes]");
        assert_eq!(clock().len(), 8);
    }
}

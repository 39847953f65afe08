//! Laps of a loop inside the line being stepped, run at full speed. A `next()` over a loop on
//! one line would single-step every instruction of every turn (a 40,000-turn loop is 320,000
//! steps, seconds). Once the stepper comes back to an instruction it already ran with nothing
//! about the step changed in between (same line, frame, row), the instructions it ran form a
//! cycle it has decided, instruction by instruction, to go on through; every turn will decide
//! the same. So the run puts a breakpoint of its own on each way out of that set (a branch
//! target or fall-through outside it) and continues: the program runs the remaining turns at
//! full speed and stops where the single-stepper would first have looked at something new.
//! There the stepper goes on and the lap keeps what it ran: a path the loop takes only on
//! some turns (an `if` in the loop) joins the cycle the first time it is taken, until the
//! only ways out are the loop's own (a 20,000-turn loop with an `if`: 7 s -> ms).
//!
//! Not taken where the set has a way out that cannot be known from the bytes (an indirect
//! jump, a return, a system call, an undecodable byte), or holds a user's breakpoint (the
//! single-stepper would pass it without a stop; a continue would stop there).

use std::collections::HashMap;

use crate::symbols::Insn;

/// Ways out of one cycle, at most: beyond that the cycle is no simple loop.
const MAX_EXITS: usize = 16;
/// Instructions of one cycle, at most.
const MAX_CYCLE: usize = 4096;

/// The instructions run since the step last changed what it steps.
#[derive(Default)]
pub(super) struct Lap {
    /// Each instruction run, with when it was first run (the cycle closing at a pc is what
    /// ran from that pc's first run on; what ran before it led into the loop).
    ran: HashMap<u64, (usize, Insn)>,
    /// The lowest stack pointer seen at those instructions: a way out reached with the stack
    /// lower is a call made from the loop passing by, not the loop leaving.
    min_sp: u64,
    /// A way out cannot be known: no laps until the step changes.
    opaque: bool,
}

impl Lap {
    /// Starts over: the step now steps something else (another line, row or frame).
    pub(super) fn reset(&mut self) {
        self.ran.clear();
        self.min_sp = u64::MAX;
        self.opaque = false;
    }

    /// Notes the instruction just run (at `insn.addr`, with the stack at `sp` before it).
    pub(super) fn ran(&mut self, insn: &Insn, sp: u64) {
        if self.opaque {
            return;
        }
        if self.ran.len() >= MAX_CYCLE || successors(insn).is_none() {
            self.opaque = true;
            return;
        }
        self.min_sp = self.min_sp.min(sp);
        let order = self.ran.len();
        self.ran
            .entry(insn.addr)
            .or_insert_with(|| (order, insn.clone()));
    }

    /// Whether `pc` was run before in this lap: the stepper is going round.
    pub(super) fn closes_at(&self, pc: u64) -> bool {
        !self.opaque && self.ran.contains_key(&pc)
    }

    /// The ways out of the cycle closing at `pc`, when all are known and few; `is_user_site`
    /// says where the user has a breakpoint (such a cycle is not run at full speed).
    pub(super) fn exits(&self, pc: u64, is_user_site: &dyn Fn(u64) -> bool) -> Option<Vec<u64>> {
        let from = self.ran.get(&pc)?.0;
        let cycle = |a: &u64| self.ran.get(a).is_some_and(|(order, _)| *order >= from);
        let mut exits = Vec::new();
        for (_, insn) in self.ran.values().filter(|(order, _)| *order >= from) {
            if is_user_site(insn.addr) {
                return None;
            }
            for next in successors(insn)? {
                if !cycle(&next) && !exits.contains(&next) {
                    exits.push(next);
                }
            }
        }
        (!exits.is_empty() && exits.len() <= MAX_EXITS).then_some(exits)
    }

    /// The cycle cannot be run at full speed: no more tries until the step changes.
    pub(super) fn give_up(&mut self) {
        self.opaque = true;
    }

    pub(super) fn min_sp(&self) -> u64 {
        self.min_sp
    }
}

/// Where control goes after `insn` in this frame, when the bytes say: the fall-through and
/// a direct branch's target (a call returns to its fall-through; its callee runs at full
/// speed either way). `None` for a way out that is not in the bytes.
fn successors(insn: &Insn) -> Option<Vec<u64>> {
    // The operation itself, past prefixes (`bnd jmp`, `notrack jmp`, `rep stosq`).
    let m = insn.mnemonic.rsplit(' ').next().unwrap_or("");
    let next = insn.addr + insn.len as u64;
    let direct = || {
        insn.operands
            .first()
            .filter(|o| o.starts_with("0x"))
            .and(insn.target)
    };
    if m.starts_with("ret")
        || m.starts_with("iret")
        || m.starts_with("int")
        || matches!(m, "syscall" | "sysenter" | "ud2" | "hlt" | "(bad)")
        || m.starts_with("xbegin")
    {
        return None;
    }
    if m == "call" {
        return Some(vec![next]);
    }
    if m == "jmp" {
        return direct().map(|t| vec![t]);
    }
    if m.starts_with('j') || m.starts_with("loop") {
        return direct().map(|t| vec![t, next]);
    }
    Some(vec![next])
}

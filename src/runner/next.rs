//! `next()`: steps to the next source line of the function being stepped, running over calls.

use std::time::Instant;

use super::laps::Lap;
use super::{finish_run, EndAs, Front, Run, RunEnd, RunError, RunResult, Stepped};
use crate::session::{Reason, Session, SessionError, StopInfo};

/// The line being stepped.
#[derive(Clone, PartialEq, Eq)]
enum Stepping {
    Line(String),
    /// Past "line 0" code: equal to no real line.
    LineZero,
}

impl Stepping {
    fn is(&self, line: &str) -> bool {
        matches!(self, Stepping::Line(l) if l == line)
    }
}

/// Steps to the next source line of this function, running over calls (each call runs to its
/// return address at full speed). Ends early, like `cont()`, at other stops; ends in the caller
/// if the function returns.
///
/// The line is the one of the frame being stepped, outermost first: with calls inlined into
/// it, the line that makes the call (gdb's `next` steps over an inlined call as over any other,
/// and stops where the next one begins, showing the line that makes it).
pub(crate) fn next<F: Front>(front: &F, into: bool, deadline: Instant) -> RunResult<RunEnd> {
    let first = front.call(|s| s.line_frames())?;
    let Some((level, start)) = first.stepped() else {
        return next_from_no_line(front, into, deadline);
    };
    let stepper = Stepper {
        level,
        start: Stepping::Line(start.to_string()),
        start_fn: first.functions[level].clone(),
        sp0: front.call(|s| s.regs().map(|r| r.rsp))?,
        row: front.call(|s| s.pc().map(|pc| s.step_range(pc, first.hidden)))?,
        lap: Lap::default(),
        into,
    };
    let mut run = Run::begin(front, deadline)?;
    let ended = stepper.go(&mut run);
    finish_run(run, ended)
}

/// `next()` in a function without line information (a callback's caller in a stripped
/// library): gdb's "single stepping until exit": the function runs to its return, and in a
/// caller with lines the step goes on to that line's end there. It was an error.
fn next_from_no_line<F: Front>(front: &F, into: bool, deadline: Instant) -> RunResult<RunEnd> {
    let name = front
        .call(|s| s.pc().map(|pc| s.symbolize(pc)))?
        .map_or_else(
            || "this function".to_string(),
            |n| n.split('+').next().unwrap_or(&n).to_string(),
        );
    let out = super::finish::finish(front, deadline).map_err(|e| match e {
        RunError::Session(SessionError::Invalid(why)) => RunError::Session(SessionError::Invalid(
            format!("next(): no line information here, and it cannot run to a return: {why}; use step()"),
        )),
        e => e,
    })?;
    if out.stop.reason() != Reason::Finish {
        return Ok(out);
    }
    let note = format!("next(): no line information in {name}; ran it to its return");
    let has_line = front.call(|s| s.line_frames())?.stepped().is_some();
    front.session(|s| s.carry_note(note))?;
    if !has_line {
        return Ok(out);
    }
    next(front, into, deadline)
}

/// Where a `next()` is: the frame and line it steps.
struct Stepper {
    /// Which of pc's frames (0 the outermost) is stepped.
    level: usize,
    start: Stepping,
    start_fn: Option<String>,
    /// The stack pointer of the stepped frame: a `ret` that leaves it higher returned.
    sp0: u64,
    /// The addresses of the line-table row the step is in (gdb's step range): inside it the
    /// step goes on without looking where it is (an inlined call beginning mid-row, between
    /// rows, is no new line).
    row: Option<(u64, u64)>,
    /// The instructions run since what is stepped last changed (see `laps`).
    lap: Lap,
    /// gdb's `step`: a call to a function with source lines is entered, and the step ends
    /// at its first line (past its prologue); other calls are run over.
    into: bool,
}

/// What one instruction of an into-step did.
enum Advanced {
    Stepped(Stepped),
    /// Entered a call to a function with lines and ran to its body: the step ends here.
    Entered(Box<StopInfo>),
}

/// What a step steps: while it stays the same, the stepper decides alike at the same pc.
type StepKey = (usize, Stepping, Option<String>, Option<(u64, u64)>, u64);

impl Stepper {
    fn key(&self) -> StepKey {
        let start = self.start.clone();
        (self.level, start, self.start_fn.clone(), self.row, self.sp0)
    }

    /// Whether the step still steps what `key` says (compared in place: this is asked before
    /// every instruction, and a key is only made anew when it changed).
    fn still(&self, key: &StepKey) -> bool {
        let (level, start, start_fn, row, sp0) = key;
        *level == self.level
            && *start == self.start
            && *start_fn == self.start_fn
            && *row == self.row
            && *sp0 == self.sp0
    }

    fn go<F: Front>(mut self, run: &mut Run<'_, F>) -> RunResult<(StopInfo, EndAs)> {
        let mut key = None;
        // At a loop's way out after laps at full speed: this pc is looked at, not stepped.
        let mut look_first = false;
        loop {
            // Where the instruction about to run is, and the stack before it (one look).
            let (pc, sp) = run.front.call(|s| s.regs().map(|r| (r.rip, r.rsp)))?;
            if !look_first {
                // Going round a loop the step decided to go on through: the rest of its
                // turns at full speed.
                if !key.as_ref().is_some_and(|k| self.still(k)) {
                    self.lap.reset();
                    key = Some(self.key());
                }
                if self.lap.closes_at(pc) {
                    let lap = &self.lap;
                    match run
                        .front
                        .session(|s| lap.exits(pc, &|a| s.is_user_site(a)))?
                    {
                        Some(exits) => {
                            if let Some(stop) = self.run_laps(run, &exits)? {
                                return Ok((stop, EndAs::Plain));
                            }
                            // At a way out: what the lap ran stays in it (decided alike), so
                            // a path the loop takes only on some turns joins the cycle.
                            look_first = true;
                            continue;
                        }
                        None => self.lap.give_up(),
                    }
                }
            }
            let insn = if look_first {
                look_first = false;
                None
            } else {
                match self.advance(run)? {
                    Advanced::Stepped(Stepped::On(insn)) => {
                        self.lap.ran(&insn, sp);
                        Some(insn)
                    }
                    Advanced::Stepped(Stepped::Ended(stop)) => return Ok((*stop, EndAs::Plain)),
                    Advanced::Entered(stop) => return Ok((*stop, EndAs::Step(None))),
                }
            };
            let returned = insn.as_ref().is_some_and(|i| i.mnemonic.starts_with("ret"));
            if returned && run.sp()? > self.sp0 {
                // Out of a signal handler, into the trampoline that ends it: through the
                // rt_sigreturn to the code the signal interrupted (the trampoline has no
                // line, and nothing past it is its caller), which the step then treats as
                // a caller returned into, as gdb's does: in the middle of a line of libc's
                // `poll` it runs on out to the user's next line, not stopping in `poll`.
                let from_signal = run.front.call(|s| s.pc().map(|pc| s.at_sigreturn(pc)))?;
                if from_signal {
                    for _ in 0..2 {
                        let mut stop = run.line_step()?;
                        if stop.reason() != Reason::Step && !run.keep_going(&mut stop)? {
                            return Ok((stop, EndAs::Plain));
                        }
                    }
                }
                if let Some(end) = self.returned_into_caller(run, from_signal)? {
                    return Ok(end);
                }
                continue;
            }
            let pc = run.front.call(|s| s.pc())?;
            if self.row.is_some_and(|(start, end)| start <= pc && pc < end) {
                continue;
            }
            let f = run.front.call(|s| s.line_frames())?;
            let at =
                |what: fn(&Session, u64) -> bool| run.front.call(|s| s.pc().map(|pc| what(s, pc)));
            if f.lines.len() <= self.level || f.functions[self.level] != self.start_fn {
                // Out of the inlined call being stepped: its caller's code. A stop where
                // inlined calls begin shows the line making them, as gdb hides them there.
                if at(Session::at_statement)? {
                    let hidden = (f.entries > 0).then_some(f.entries);
                    return Ok((run.latest(), EndAs::Step(hidden)));
                }
                continue;
            }
            // "Line 0" code (rustc's jumps and drops between a loop's parts) has no line: the
            // step goes on through it, as gdb's does, instead of stopping there under the line
            // before it; past it, the next statement of any line ends the step (a loop's head
            // shows its line again on every turn).
            if f.zero {
                self.start = Stepping::LineZero;
                continue;
            }
            let here = f.lines[self.level].clone();
            let deeper = f.lines.len() - 1 - self.level;
            // Calls that begin here by gdb's rule (block_starting_point_at) and hide the frame
            // being stepped too: a jump to a later part of the inlined call being stepped (GCC
            // splits calls in parts, a later one reached by a jump from outside). gdb hides
            // them, and its frame is then not the one it steps (its "stepped into inlined
            // function" wants that frame): the usual rule decides, a statement row of another
            // line ends the step, shown at the outermost hidden call's site.
            if f.entries > deeper {
                let innermost = f.lines.last().cloned().flatten();
                if innermost.is_some_and(|l| !self.start.is(&l)) && at(Session::at_statement)? {
                    return Ok((run.latest(), EndAs::Step(Some(f.entries))));
                }
                // Not stopping, gdb steps the frame it is in from here on (set_step_info with
                // line 0): the outermost hidden call's caller, on no line yet.
                self.level = f.lines.len() - 1 - f.entries;
                self.start = Stepping::LineZero;
                self.start_fn = f.functions[self.level].clone();
                self.row = run.front.call(|s| Ok(s.step_range(pc, 0)))?;
                continue;
            }
            let Some(here) = here else { continue };
            if self.start.is(&here) {
                continue;
            }
            if deeper == 0 {
                // A jump into the middle of another line's row (the shared exit of a function
                // with destructors, a loop's back edge): gdb takes that line as the one being
                // stepped and runs the rest of it.
                if !at(Session::at_row_start)? {
                    self.start = Stepping::Line(here);
                    self.row = run.front.call(|s| Ok(s.step_range(pc, 0)))?;
                    continue;
                }
                // A new line counts where its row is a statement boundary, as in gdb: -O2
                // code interleaves lines, and a row that is no statement is scheduling (its
                // row becomes the step range, the line stepped stays).
                if at(Session::at_statement)? {
                    return Ok((run.latest(), EndAs::Step(None)));
                }
                self.row = run.front.call(|s| Ok(s.step_range(pc, 0)))?;
                continue;
            }
            // The first instruction of a call inlined on a new line: stop, in this frame.
            if deeper > 0 && f.entries >= deeper {
                return Ok((run.latest(), EndAs::Step(Some(deeper))));
            }
        }
    }

    /// The step returned into a caller, or, `from_signal`, through a signal's trampoline into
    /// the code the signal interrupted: the end of the step, or `None` to go on stepping the
    /// caller's line from here. In interrupted code a line begins where gdb's does, rows of
    /// one line merged: glibc's `poll` is interrupted after its `syscall`, where the third
    /// of three rows of line 29 begins, the middle of the line (gdb runs on out of `poll`);
    /// `pthread_kill` after its `syscall`, where a new line begins (gdb stops there).
    fn returned_into_caller<F: Front>(
        &mut self,
        run: &mut Run<'_, F>,
        from_signal: bool,
    ) -> RunResult<Option<(StopInfo, EndAs)>> {
        // Returned into the caller. In the middle of one of its lines (after the call),
        // the step goes on to that line's end, as gdb's does; at a line's start, or with
        // no line known there, it ends here.
        let back = run.front.call(|s| s.line_frames())?;
        // Calls inlined into the caller that begin at the return address: the caller
        // stops there, on the line that makes them (gdb hides inlined calls at their
        // start and shows their call site).
        if back.entries > 0 && back.entries < back.lines.len() {
            return Ok(Some((run.latest(), EndAs::Step(Some(back.entries)))));
        }
        // gdb's rule, the line being stepped becomes the caller's: at the start of a
        // row of another line, a statement row ends the step and a row that is no
        // statement (-O2 scheduling) leaves no line (so the caller's next statement row
        // ends it, even one of the line the call was on); in the middle of a row, its
        // line, so the rest of that line runs.
        let Some(line) = back.lines.last().cloned().flatten() else {
            return Ok(Some((run.latest(), EndAs::Step(None))));
        };
        let starts: fn(&Session, u64) -> bool = match from_signal {
            true => Session::begins_line,
            false => Session::at_row_start,
        };
        let row_start = run.front.call(|s| s.pc().map(|pc| starts(s, pc)))?;
        self.start = if row_start && !self.start.is(&line) {
            let statement = run.front.call(|s| s.pc().map(|pc| s.at_statement(pc)))?;
            if statement {
                return Ok(Some((run.latest(), EndAs::Step(None))));
            }
            Stepping::LineZero
        } else {
            Stepping::Line(line)
        };
        self.level = back.lines.len() - 1;
        self.row = run.front.call(|s| s.pc().map(|pc| s.step_range(pc, 0)))?;
        self.start_fn = back.functions[self.level].clone();
        self.sp0 = run.sp()?;
        Ok(None)
    }

    /// One instruction: a call over as a whole, except, stepping into, a call to a function
    /// with source lines, which is entered and run to its body.
    fn advance<F: Front>(&mut self, run: &mut Run<'_, F>) -> RunResult<Advanced> {
        if !self.into {
            return Ok(Advanced::Stepped(run.step_over()?));
        }
        let insn = run.next_insn()?;
        if insn.mnemonic != "call" {
            return Ok(Advanced::Stepped(run.step_over_insn(insn)?));
        }
        let ret = insn.addr + insn.len as u64;
        let mut stop = run.line_step()?;
        if stop.reason() != Reason::Step && !run.keep_going(&mut stop)? {
            return Ok(Advanced::Stepped(Stepped::Ended(Box::new(stop))));
        }
        // In the callee, at its first instruction. With lines (its own module's DWARF), the
        // step ends at its body; without (a PLT stub, a library without debug info), the
        // call runs to its return at full speed and the step goes on.
        match run
            .front
            .call(|s| s.pc().map(|pc| s.body_of_function_at(pc)))?
        {
            Some(body) => {
                if let Some(stop) = run.run_to(body)? {
                    return Ok(Advanced::Stepped(Stepped::Ended(Box::new(stop))));
                }
                Ok(Advanced::Entered(Box::new(run.latest())))
            }
            None => {
                let plt = run.front.call(|s| s.pc().map(|pc| s.plt_target(pc)))?;
                if let Some(entry) = plt {
                    return self.through_plt(run, entry, ret, insn);
                }
                match run.over_call(ret)? {
                    Some(stop) => Ok(Advanced::Stepped(Stepped::Ended(Box::new(stop)))),
                    None => Ok(Advanced::Stepped(Stepped::On(insn))),
                }
            }
        }
    }

    /// Stepping into a call through a PLT stub: on to the function it leads to, `entry`
    /// (through the loader's resolver on the first call), and to its body, as gdb's `step`
    /// goes through the stub; or over the call when it returns to `ret` without arriving
    /// there (an IFUNC resolved elsewhere). It ran over the call, as into a function
    /// without lines.
    fn through_plt<F: Front>(
        &mut self,
        run: &mut Run<'_, F>,
        entry: u64,
        ret: u64,
        insn: crate::symbols::Insn,
    ) -> RunResult<Advanced> {
        let tid = run.front.call(|s| s.selected_tid())?;
        // At the stub, the return address just pushed: the function's entry sees this stack.
        let sp_stub = run.sp()?;
        run.temp_site(entry)?;
        run.temp_site(ret)?;
        let arrived: RunResult<Result<(), Option<StopInfo>>> = (|| loop {
            let mut stop = run.cont()?;
            if stop.reason() == Reason::Breakpoint && stop.tid == Some(tid) {
                let sp = run.sp()?;
                if stop.pc == Some(entry) && sp == sp_stub {
                    return Ok(Ok(()));
                }
                if stop.pc == Some(ret) && sp > sp_stub {
                    return Ok(Err(None));
                }
            }
            if stop.reason() == Reason::Breakpoint && stop.breakpoint_id().is_none() {
                continue;
            }
            if !run.keep_going(&mut stop)? {
                return Ok(Err(Some(stop)));
            }
        })();
        run.drop_temp_site(entry);
        run.drop_temp_site(ret);
        match arrived? {
            Ok(()) => {
                let body = run
                    .front
                    .call(|s| s.pc().map(|pc| s.body_of_function_at(pc)))?;
                if let Some(body) = body {
                    if let Some(stop) = run.run_to(body)? {
                        return Ok(Advanced::Stepped(Stepped::Ended(Box::new(stop))));
                    }
                }
                Ok(Advanced::Entered(Box::new(run.latest())))
            }
            Err(None) => Ok(Advanced::Stepped(Stepped::On(insn))),
            Err(Some(stop)) => Ok(Advanced::Stepped(Stepped::Ended(Box::new(stop)))),
        }
    }

    /// Runs the loop's remaining turns at full speed, to the first of its ways out `exits`
    /// reached in this frame: `None` there, or the stop that ended the run.
    fn run_laps<F: Front>(
        &mut self,
        run: &mut Run<'_, F>,
        exits: &[u64],
    ) -> RunResult<Option<StopInfo>> {
        let min_sp = self.lap.min_sp();
        let tid = run.front.call(|s| s.selected_tid())?;
        let mut placed = Vec::new();
        let outcome = (|| {
            for &addr in exits {
                run.temp_site(addr)?;
                placed.push(addr);
            }
            loop {
                let mut stop = run.cont()?;
                let at_exit = stop.pc.is_some_and(|pc| exits.contains(&pc));
                if stop.reason() == Reason::Breakpoint && at_exit {
                    // Another thread running the same code passes the way out as it likes.
                    if stop.tid == Some(tid) && run.sp()? >= min_sp {
                        return Ok(None);
                    }
                    // A call made from the loop, or another thread, passing by a way out.
                    if stop.breakpoint_id().is_none() {
                        continue;
                    }
                }
                if !run.keep_going(&mut stop)? {
                    return Ok(Some(stop));
                }
            }
        })();
        for addr in placed {
            run.drop_temp_site(addr);
        }
        outcome
    }
}

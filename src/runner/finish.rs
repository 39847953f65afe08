//! `finish()`: runs until the current function returns to its caller.

use std::time::Instant;

use super::{finish_run, Caught, EndAs, Front, Run, RunEnd, RunError, RunResult, Stepped};
use crate::session::{Reason, SessionError};

/// Runs the selected thread's function to its return, recursion-safe: the return must leave
/// the stack higher than it is now (a deeper call of the same function returning to the same
/// address goes on). Other stops end it early, as in `cont()`.
pub(crate) fn finish<F: Front>(front: &F, deadline: Instant) -> RunResult<RunEnd> {
    let (frames, _) = front.call(|s| s.unwind(2, true))?;
    if frames.first().is_some_and(|f| f.inlined) {
        return finish_inlined(front, deadline);
    }
    // The caller is the row after the current physical frame (calls inlined into the current
    // function are rows of their own with the same pc), past any frame a tail call erased (it
    // never resumes: the return goes to the caller that called it).
    let own = frames
        .iter()
        .position(|f| !f.inlined)
        .unwrap_or(frames.len());
    let caller = frames
        .iter()
        .skip(own + 1)
        .find(|f| !f.tail_call)
        .ok_or_else(|| {
            RunError::Session(SessionError::Invalid(
                "finish(): no caller frame to return to (state.unwind() shows the stack)".into(),
            ))
        })?;
    let ret = caller.pc;
    let (sp0, fn_pc) = front.call(|s| s.regs().map(|r| (r.rsp, r.rip)))?;
    let tid = front.call(|s| s.selected_tid())?;
    let mut run = Run::begin(front, deadline)?;
    let ended = (|| {
        run.temp_site(ret)?;
        // A C++ exception the function lets out never returns to `ret`: the finish ends in
        // the handler of the caller (or an outer frame) that catches it, and says so.
        for c in run.catch_sites()? {
            run.temp_site(c)?;
        }
        loop {
            let mut stop = run.cont()?;
            if stop.reason() == Reason::Breakpoint && stop.pc == Some(ret) {
                // Another thread returning there (from the same function, on a stack that
                // may well be higher) is not this call returning.
                if stop.tid == Some(tid) && run.sp()? > sp0 {
                    return Ok((stop, EndAs::Finish(fn_pc)));
                }
                if stop.breakpoint_id().is_none() {
                    // A deeper call, or another thread, returning there.
                    continue;
                }
            }
            // The caller's frame is at least a return address above where the finish began.
            match run.caught(&stop, tid, sp0.wrapping_add(8))? {
                Caught::Handler => {
                    run.front.session(|s| {
                        s.carry_note(
                            "finish(): the function did not return: an exception (or a Rust panic) it let out is caught here"
                                .into(),
                        )
                    })?;
                    return Ok((run.latest(), EndAs::Step(None)));
                }
                Caught::Ended(stop) => return Ok((*stop, EndAs::Plain)),
                Caught::Deeper if stop.breakpoint_id().is_none() => continue,
                Caught::Deeper | Caught::No => {}
            }
            if !run.keep_going(&mut stop)? {
                return Ok((stop, EndAs::Plain));
            }
        }
    })();
    finish_run(run, ended)
}

/// `reverse_finish()`: back along the recording to the call of the selected thread's
/// function (the caller's call instruction, about to run), stopping early where a backwards
/// `cont()` would.
pub(crate) fn reverse_finish<F: Front>(front: &F, deadline: Instant) -> RunResult<RunEnd> {
    let (frames, _) = front.call(|s| s.unwind(2, false))?;
    let own = frames
        .iter()
        .position(|f| !f.inlined)
        .unwrap_or(frames.len());
    // At the call, the stack pointer is the caller's as it is after the return.
    let caller_sp = frames
        .iter()
        .skip(own + 1)
        .find(|f| !f.inlined)
        .map(|f| f.sp)
        .ok_or_else(|| {
            RunError::Session(SessionError::Invalid(
                "reverse_finish(): no caller frame (state.unwind() shows the stack)".into(),
            ))
        })?;
    front.call(|s| {
        let tid = s.selected_tid()?;
        s.set_reverse(true)?;
        s.set_reverse_until(tid, caller_sp);
        Ok(())
    })?;
    let ended = (|| {
        let run = Run::begin(front, deadline)?;
        let ended = (|| loop {
            let mut stop = run.cont()?;
            if stop.reason() == Reason::Step || !run.keep_going(&mut stop)? {
                return Ok((stop, EndAs::Plain));
            }
        })();
        finish_run(run, ended)
    })();
    front.call(|s| s.set_reverse(false))?;
    ended
}

/// `finish()` in a call inlined into its caller: no return to wait for, so the thread steps
/// (over calls, as `next()` does) until its pc leaves the inlined call, as gdb's `finish`
/// does from an inlined frame; it shows the caller's line and no value. A return of the
/// function holding the inlined code ends it too.
fn finish_inlined<F: Front>(front: &F, deadline: Instant) -> RunResult<RunEnd> {
    let first = front.call(|s| s.line_frames())?;
    let Some(level) = (first.lines.len() - 1)
        .checked_sub(first.hidden)
        .filter(|l| *l > 0)
    else {
        return Err(RunError::Session(SessionError::Invalid(
            "finish(): no inlined call to leave at pc".into(),
        )));
    };
    let callee = first.functions[level].clone();
    let sp0 = front.call(|s| s.regs().map(|r| r.rsp))?;
    let mut run = Run::begin(front, deadline)?;
    let ended = (|| loop {
        let insn = match run.step_over()? {
            Stepped::On(insn) => insn,
            Stepped::Ended(stop) => return Ok((*stop, EndAs::Plain)),
        };
        if insn.mnemonic.starts_with("ret") && run.sp()? > sp0 {
            return Ok((run.latest(), EndAs::FinishInlined(None)));
        }
        let f = run.front.call(|s| s.line_frames())?;
        if f.lines.len() <= level || f.functions[level] != callee {
            // Out of it. Another inlined call beginning right here is not entered yet: the
            // stop is the caller's, on its line.
            let deeper = f.lines.len().saturating_sub(level);
            let hide = (deeper > 0 && f.entries >= deeper).then_some(deeper);
            return Ok((run.latest(), EndAs::FinishInlined(hide)));
        }
    })();
    finish_run(run, ended)
}

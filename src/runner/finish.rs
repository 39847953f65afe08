//! `finish()`: runs until the current function returns to its caller.

use std::time::Instant;

use super::{finish_run, EndAs, Front, Run, RunEnd, RunError, RunResult};
use crate::session::{Reason, SessionError};

/// Runs the selected thread's function to its return, recursion-safe: the return must leave
/// the stack higher than it is now (a deeper call of the same function returning to the same
/// address goes on). Other stops end it early, as in `cont()`.
pub(crate) fn finish<F: Front>(front: &F, deadline: Instant) -> RunResult<RunEnd> {
    let (frames, _) = front.call(|s| s.unwind(2, true))?;
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
    let mut run = Run::begin(front, deadline)?;
    let ended = (|| {
        run.temp_site(ret)?;
        loop {
            let stop = run.cont()?;
            if stop.reason() == Reason::Breakpoint && stop.pc == Some(ret) {
                if run.sp()? > sp0 {
                    return Ok((stop, EndAs::Finish(fn_pc)));
                }
                if stop.breakpoint_id.is_none() {
                    // A deeper call returning there.
                    continue;
                }
            }
            if !run.keep_going(&stop)? {
                return Ok((stop, EndAs::Plain));
            }
        }
    })();
    finish_run(run, ended)
}

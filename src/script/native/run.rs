//! JS: `cont()`, `step(n)`, `finish()`, `next()`, run as the Rust run loop does them
//! ([`crate::runner`]), with this layer as its front end: each event a listener may decide on
//! becomes a JS event object handed to the prelude's dispatcher, whose verdict goes back.

use std::cell::{Cell, RefCell};

use super::events::{event_bit, event_to_js, stop_to_js};
use super::*;
use crate::runner::{self, Event, Front, RunEnd, RunError, RunResult, Verdict};
use crate::session::StopKind;

/// The natives this file defines, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    t.def("run_cont", cont)?; // cont({timeout})
    t.def("run_step", step)?; // step(n, {timeout})
    t.def("run_finish", finish)?; // finish({timeout})
    t.def("run_next", next)?; // next({timeout})
    t.def("run_reverse_finish", reverse_finish)?; // reverse_finish({timeout})
    Ok(())
}

fn cont<'js>(h: &Host, ctx: Ctx<'js>, hook: Function<'js>, timeout: Opt<Value<'js>>) -> R<'js> {
    drive(&ctx, h, timeout, hook, |f, d| runner::cont(f, d))
}

fn step<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    hook: Function<'js>,
    count: f64,
    timeout: Opt<Value<'js>>,
) -> R<'js> {
    drive(&ctx, h, timeout, hook, |f, d| {
        runner::step(f, count as u64, d)
    })
}

fn finish<'js>(h: &Host, ctx: Ctx<'js>, hook: Function<'js>, timeout: Opt<Value<'js>>) -> R<'js> {
    drive(&ctx, h, timeout, hook, |f, d| runner::finish(f, d))
}

fn reverse_finish<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    hook: Function<'js>,
    timeout: Opt<Value<'js>>,
) -> R<'js> {
    drive(&ctx, h, timeout, hook, |f, d| runner::reverse_finish(f, d))
}

fn next<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    hook: Function<'js>,
    timeout: Opt<Value<'js>>,
    into: Opt<bool>,
) -> R<'js> {
    let into = into.0.unwrap_or(false);
    drive(&ctx, h, timeout, hook, |f, d| runner::next(f, into, d))
}

/// The script layer as a run's front end.
struct ScriptFront<'a, 'js> {
    ctx: &'a Ctx<'js>,
    host: &'a Host,
    /// The prelude's dispatcher: `(type, event) => 'stop' | 'continue' | undefined`.
    hook: Function<'js>,
    /// The JS error that ended the run (a listener threw, the budget ran out).
    failed: RefCell<Option<rquickjs::Error>>,
    /// Since when the run has been scry's and the target's time, not the script's: all of a
    /// run but its listeners counts against the run's deadline, not the script budget (a
    /// long `next()` is the run's business).
    since: Cell<Instant>,
}

impl ScriptFront<'_, '_> {
    fn fail(&self, e: rquickjs::Error) -> RunError {
        *self.failed.borrow_mut() = Some(e);
        RunError::Front
    }

    /// Moves the script's deadline by the run's time since the last mark.
    fn credit_run(&self) {
        let now = Instant::now();
        self.host.credit(now - self.since.get());
        self.since.set(now);
    }
}

impl Front for ScriptFront<'_, '_> {
    fn session<R>(&self, f: impl FnOnce(&mut Session) -> R) -> RunResult<R> {
        match self.host.session_mut(self.ctx) {
            Ok(mut s) => Ok(f(&mut s)),
            Err(e) => Err(self.fail(e)),
        }
    }

    fn listens(&self, event: Event) -> bool {
        self.host.listened.get() & event_bit(event) != 0
    }

    fn event(&self, event: Event, stop: &mut StopInfo) -> RunResult<Verdict> {
        self.credit_run();
        self.host.fired_breakpoint.set(None);
        let called = (|| -> rquickjs::Result<Option<String>> {
            let ev = event_to_js(self.ctx, stop)?;
            let verdict: Value = self.hook.call((event.name(), ev))?;
            Ok(verdict.as_string().and_then(|s| s.to_string().ok()))
        })();
        self.since.set(Instant::now());
        if let Some(id) = self.host.fired_breakpoint.take() {
            if let Ok(session) = self.host.session.try_borrow() {
                session.relabel_breakpoint_stop(stop, id);
            }
            *self.host.last_stop.borrow_mut() = Some(stop.clone());
        }
        match called {
            Ok(Some(v)) if v == "stop" => Ok(Verdict::Stop),
            Ok(Some(v)) if v == "continue" => Ok(Verdict::Continue),
            Ok(_) => Ok(Verdict::Unsaid),
            Err(e) => Err(self.fail(e)),
        }
    }

    fn trace(&self, records: Vec<crate::session::TraceRecord>) -> RunResult<Option<u32>> {
        self.credit_run();
        // The prelude gives back the id of a tracepoint whose listener asked for a stop.
        let called = (|| -> rquickjs::Result<Option<u32>> {
            let batch = super::tracepoint::records_to_js(self.ctx, &records)?;
            let asked: Value = self.hook.call(("trace", batch))?;
            Ok(asked.as_number().map(|n| n as u32))
        })();
        self.since.set(Instant::now());
        called.map_err(|e| self.fail(e))
    }

    fn leg(&self, stop: &StopInfo) {
        self.host.tick_at(stop);
        *self.host.last_stop.borrow_mut() = Some(stop.clone());
    }

    fn stepping(&self, done: u64, asked: u64) {
        if self.host.feed.borrow().is_none() {
            return;
        }
        let (Ok(mut session), Ok(mut dom)) = (
            self.host.session.try_borrow_mut(),
            self.host.dom.try_borrow_mut(),
        ) else {
            return;
        };
        self.host.tick(&mut session, &mut dom, |s| {
            let info = StopInfo {
                tid: s.selected_tid().ok(),
                steps: Some((done, asked)),
                ..StopInfo::new(StopKind::Here)
            };
            s.light_stop_line(&info)
        });
    }

    fn latest(&self) -> Option<StopInfo> {
        self.host.last_stop.borrow().clone()
    }
}

/// The deadline of a run: `timeout` seconds (the setting when not given) from now.
fn deadline_of<'js>(
    ctx: &Ctx<'js>,
    host: &Host,
    timeout: Opt<Value<'js>>,
) -> rquickjs::Result<Instant> {
    if crate::session::signal_pending() {
        return Err(throw(ctx, "interrupted by a signal to scry"));
    }
    let limit = match timeout_given(ctx, timeout.0, "")? {
        Some(limit) => limit,
        None => host.session_ref(ctx)?.config.timeout,
    };
    Ok(Instant::now() + limit)
}

/// How a value in a stop line prints: short, through the printers.
const STOP_LINE: crate::symbols::dwarf::Limits = crate::symbols::dwarf::Limits {
    depth: 2,
    elements: 8,
    chars: 64,
    total: 200,
    pointees: true,
};

/// A watch hit's old and new sides through the printers (`"short" -> "a longer text"` for a
/// `std::string`, not its fields). The old side is printed from the bytes before the write
/// alone: a printer that reads beyond them would show today's memory as the past, so such a
/// side keeps the session's text, whose pointers are addresses.
fn print_watch_hit<'js>(
    ctx: &Ctx<'js>,
    host: &Host,
    w: &mut crate::session::stop::WatchReport,
) -> rquickjs::Result<()> {
    if w.scope_ended.is_some() {
        return Ok(());
    }
    let session = host.session_ref(ctx)?;
    let print = |bytes: &[u8], shown: &mut Option<crate::session::stop::Shown>, was: bool| {
        let Some(v) = session.watch_hit_value(w.id, w.addr, bytes) else {
            return;
        };
        let printers = super::printers::JsPretty::new(ctx, host, &v);
        let text = if was {
            session
                .as_memory_was(w.addr, bytes, |s| {
                    s.value_text(&v, &STOP_LINE, Some(&printers))
                })
                .and_then(|r| r.ok())
        } else {
            session.value_text(&v, &STOP_LINE, Some(&printers)).ok()
        };
        if let (Some(text), Some(shown)) = (text, shown.as_mut()) {
            shown.text = Some(text);
        }
    };
    // A concurrent hit's "old" is what memory holds now.
    let old_was = w.is_write && !w.concurrent;
    let (old, new) = (w.old.clone(), w.new.clone());
    let (mut old_shown, mut new_shown) = (w.old_shown.take(), w.new_shown.take());
    if w.is_write {
        print(&old, &mut old_shown, old_was);
    }
    print(&new, &mut new_shown, false);
    (w.old_shown, w.new_shown) = (old_shown, new_shown);
    Ok(())
}

/// Runs `run` with this layer as its front end and returns its end as a JS stop.
fn drive<'js>(
    ctx: &Ctx<'js>,
    host: &Host,
    timeout: Opt<Value<'js>>,
    hook: Function<'js>,
    run: impl FnOnce(&ScriptFront<'_, 'js>, Instant) -> RunResult<RunEnd>,
) -> R<'js> {
    let deadline = deadline_of(ctx, host, timeout)?;
    let front = ScriptFront {
        ctx,
        host,
        hook,
        failed: RefCell::new(None),
        since: Cell::new(Instant::now()),
    };
    host.publish_running();
    let ran = run(&front, deadline);
    front.credit_run();
    let end = match ran {
        Ok(end) => end,
        Err(RunError::Session(e)) => return Err(throw(ctx, e)),
        Err(RunError::Front) => {
            let failed = front.failed.borrow_mut().take();
            return Err(failed.unwrap_or_else(|| throw(ctx, "internal: the run failed")));
        }
    };
    let RunEnd {
        mut stop,
        returned_aggregate,
    } = end;
    if let Some(v) = &returned_aggregate {
        let session = host.session_ref(ctx)?;
        let printers = super::printers::JsPretty::new(ctx, host, v);
        let text = session.value_text(v, &STOP_LINE, Some(&printers)).ok();
        if let StopKind::Finish(r) = &mut stop.kind {
            r.text = text;
        }
    }
    if let StopKind::Watchpoint(w) = &mut stop.kind {
        print_watch_hit(ctx, host, w)?;
    }
    let v = stop_to_js(ctx, host, &stop)?;
    if let Some(o) = v.as_object() {
        if let Some(agg) = returned_aggregate {
            o.put("returned", super::handle::handle(ctx, agg)?)?;
        } else if let StopKind::Finish(r) = &stop.kind {
            if let Some(f) = r.float {
                o.put("returned", crate::script::values::float_to_js(ctx, f))?;
            } else if let Some(rax) = r.rax {
                // What rax held is the value only where the type is read from rax.
                if r.unread.is_none() && !r.nocall {
                    o.put("returned", u64_to_js(ctx, rax)?)?;
                }
                o.put("rax", u64_to_js(ctx, rax)?)?;
            }
        }
    }
    Ok(v)
}

//! What native functions share: the session, the response being built, and the JS budget.

use std::cell::{Cell, Ref, RefCell, RefMut};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use rquickjs::Ctx;

use super::feed::{ChunkShown, Feed};
pub(super) use super::response::Response;
use crate::session::Session;
use crate::session::StopInfo;
use crate::view::dom::DomModel;
use crate::view::View;

/// Type names looked up at most before the cache starts over.
const MAX_CLAIMS_CACHED: usize = 4096;

/// Which type names the JS printers claim, by name: a value no printer claims costs no call
/// into JavaScript. Emptied whenever a printer is added or removed.
#[derive(Default)]
pub(super) struct ClaimCache(HashMap<String, bool>);

impl ClaimCache {
    pub(super) fn get(&self, name: &str) -> Option<bool> {
        self.0.get(name).copied()
    }

    pub(super) fn insert(&mut self, name: &str, claimed: bool) {
        if self.0.len() >= MAX_CLAIMS_CACHED {
            self.0.clear();
        }
        self.0.insert(name.to_string(), claimed);
    }

    pub(super) fn clear(&mut self) {
        self.0.clear();
    }
}

pub(super) struct Host {
    pub session: RefCell<Session>,
    pub response: RefCell<Response>,
    /// When the running chunk's JS budget ends; read by the interrupt handler.
    pub js_deadline: Rc<Cell<Option<Instant>>>,
    /// Which listener types have listeners (see `native::events::event_bit`).
    pub listened: Cell<u16>,
    /// The latest stop of a run, booked but not yet described: its line is made only if
    /// the script ends up returning or printing it.
    pub last_stop: RefCell<Option<crate::session::StopInfo>>,
    /// Of several breakpoints at one address, the one whose terms stopped the hit being
    /// dispatched (set by the prelude, read back by the run's front).
    pub fired_breakpoint: Cell<Option<u32>>,
    /// The script area of the live view, as `dom` changes it (kept even without a view).
    pub dom: RefCell<DomModel>,
    /// The live view, when one is open.
    pub feed: RefCell<Option<Feed>>,
    pub pretty_claims: RefCell<ClaimCache>,
}

impl Host {
    pub(super) fn new(session: Session) -> Rc<Host> {
        Rc::new(Host {
            session: RefCell::new(session),
            response: RefCell::new(Response::default()),
            js_deadline: Rc::new(Cell::new(None)),
            listened: Cell::new(0),
            last_stop: RefCell::new(None),
            fired_breakpoint: Cell::new(None),
            dom: RefCell::new(DomModel::default()),
            feed: RefCell::new(None),
            pretty_claims: RefCell::new(ClaimCache::default()),
        })
    }

    /// The running chunk's budget changed from `old` to `new`: its deadline moves by the
    /// difference (what it has already run still counts).
    pub(super) fn rebudget(&self, old: Duration, new: Duration) {
        if let Some(d) = self.js_deadline.get() {
            let moved = match new.checked_sub(old) {
                Some(more) => d + more,
                None => d.checked_sub(old - new).unwrap_or(d),
            };
            self.js_deadline.set(Some(moved));
        }
    }

    /// Time the target spent running is not the script's: move the JS deadline by it.
    pub(super) fn credit(&self, waited: Duration) {
        if let Some(d) = self.js_deadline.get() {
            self.js_deadline.set(Some(d + waited));
        }
    }

    /// The session for a native function. Native functions never call into JavaScript while
    /// they hold it (results are built from copies, with own-property definitions), but a
    /// script hook scry cannot avoid running (an `Error.prepareStackTrace` while an error is
    /// made, say) may still try to re-enter: that is a clear error, never a panic.
    pub(super) fn session_mut(&self, ctx: &Ctx<'_>) -> rquickjs::Result<RefMut<'_, Session>> {
        self.session.try_borrow_mut().map_err(|_| reentered(ctx))
    }

    pub(super) fn session_ref(&self, ctx: &Ctx<'_>) -> rquickjs::Result<Ref<'_, Session>> {
        self.session.try_borrow().map_err(|_| reentered(ctx))
    }

    pub(super) fn print(&self, line: &str) {
        self.response.borrow_mut().push_line(line);
    }
}

fn reentered(ctx: &Ctx<'_>) -> rquickjs::Error {
    super::thrown::throw(
        ctx,
        "scry is busy answering another call: a hook it triggered (a setter, getter or \
         Error.prepareStackTrace) cannot use the debugger",
    )
}

/// The live view, through the host's cells: each borrows what it needs and never waits for
/// a caller that holds one (a skipped publication is only a later one).
impl Host {
    /// Shows this session in `view` from now on.
    pub(super) fn attach_view(&self, view: View) {
        let feed = Feed::open(
            view,
            &mut self.session.borrow_mut(),
            &mut self.dom.borrow_mut(),
        );
        *self.feed.borrow_mut() = Some(feed);
    }

    pub(super) fn view_url(&self) -> Option<String> {
        self.feed.borrow().as_ref().map(|f| f.url().to_string())
    }

    /// Remembers the stop a response returns, for the page's stop line.
    pub(super) fn note_stop(&self, line: &str) {
        if let Some(feed) = self.feed.borrow_mut().as_mut() {
            feed.note_stop(line);
        }
    }

    /// A run starts: the page says so at once.
    pub(super) fn publish_running(&self) {
        if let (Some(feed), Ok(session)) =
            (self.feed.borrow_mut().as_mut(), self.session.try_borrow())
        {
            feed.publish_running(&session);
        }
    }

    /// During a run, at a stop: publishes if one is due (see `Feed::tick`).
    pub(super) fn tick(
        &self,
        session: &mut Session,
        dom: &mut DomModel,
        stop: impl FnOnce(&mut Session) -> String,
    ) {
        if let Some(feed) = self.feed.borrow_mut().as_mut() {
            feed.tick(session, dom, stop);
        }
    }

    /// The tick for a leg of a run whose stop is `info`.
    pub(super) fn tick_at(&self, info: &StopInfo) {
        if self.feed.borrow().is_none() {
            return;
        }
        let (Ok(mut session), Ok(mut dom)) =
            (self.session.try_borrow_mut(), self.dom.try_borrow_mut())
        else {
            return;
        };
        self.tick(&mut session, &mut dom, |s| s.light_stop_line(info));
    }

    /// The end of a chunk: everything, now.
    pub(super) fn publish_chunk(
        &self,
        code: &str,
        file: &str,
        answer: &str,
        ok: bool,
        started: Instant,
    ) {
        let mut feed = self.feed.borrow_mut();
        let Some(feed) = feed.as_mut() else {
            return;
        };
        let (Ok(mut session), Ok(mut dom)) =
            (self.session.try_borrow_mut(), self.dom.try_borrow_mut())
        else {
            return;
        };
        let chunk = ChunkShown {
            code,
            file,
            answer,
            ok,
            started,
        };
        feed.publish_chunk(&mut session, &mut dom, chunk);
    }
}

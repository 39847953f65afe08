//! What native functions share: the session, the response being built, and the JS budget.

use std::cell::{Cell, Ref, RefCell, RefMut};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use rquickjs::Ctx;

use super::feed::Feed;
use crate::session::Session;
use crate::view::dom::DomModel;

/// The text of one response while a chunk runs. Past `hard_cap` bytes nothing more is kept,
/// only counted: a `print` loop cannot exhaust scry's memory.
#[derive(Default)]
pub struct Response {
    pub text: String,
    pub dropped: u64,
}

pub const RESPONSE_HARD_CAP: usize = 8 * 1024 * 1024;

impl Response {
    pub fn push_line(&mut self, line: &str) {
        let room = RESPONSE_HARD_CAP.saturating_sub(self.text.len());
        if line.len() < room {
            self.text.push_str(line);
            self.text.push('\n');
        } else {
            let mut cut = room;
            while cut > 0 && !line.is_char_boundary(cut) {
                cut -= 1;
            }
            self.text.push_str(&line[..cut]);
            self.dropped += (line.len() - cut + 1) as u64;
        }
    }
}

/// Type names looked up at most before the cache starts over.
const MAX_CLAIMS_CACHED: usize = 4096;

/// Which type names the JS printers claim, by name: a value no printer claims costs no call
/// into JavaScript. Emptied whenever a printer is added or removed.
#[derive(Default)]
pub struct ClaimCache(HashMap<String, bool>);

impl ClaimCache {
    pub fn get(&self, name: &str) -> Option<bool> {
        self.0.get(name).copied()
    }

    pub fn insert(&mut self, name: &str, claimed: bool) {
        if self.0.len() >= MAX_CLAIMS_CACHED {
            self.0.clear();
        }
        self.0.insert(name.to_string(), claimed);
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }
}

pub struct Host {
    pub session: RefCell<Session>,
    pub response: RefCell<Response>,
    /// When the running chunk's JS budget ends; read by the interrupt handler.
    pub js_deadline: Rc<Cell<Option<Instant>>>,
    /// Which listener types have listeners (see `native::runs::event_bit`).
    pub listened: Cell<u16>,
    /// The latest stop of a run, booked but not yet described: its line is made only if
    /// the script ends up returning or printing it.
    pub last_stop: RefCell<Option<crate::session::StopInfo>>,
    /// The script area of the live view, as `dom` changes it (kept even without a view).
    pub dom: RefCell<DomModel>,
    /// The live view, when one is open.
    pub feed: RefCell<Option<Feed>>,
    pub pretty_claims: RefCell<ClaimCache>,
}

impl Host {
    pub fn new(session: Session) -> Rc<Host> {
        Rc::new(Host {
            session: RefCell::new(session),
            response: RefCell::new(Response::default()),
            js_deadline: Rc::new(Cell::new(None)),
            listened: Cell::new(0),
            last_stop: RefCell::new(None),
            dom: RefCell::new(DomModel::default()),
            feed: RefCell::new(None),
            pretty_claims: RefCell::new(ClaimCache::default()),
        })
    }

    /// Time the target spent running is not the script's: move the JS deadline by it.
    pub fn credit(&self, waited: Duration) {
        if let Some(d) = self.js_deadline.get() {
            self.js_deadline.set(Some(d + waited));
        }
    }

    /// The session for a native function. Native functions never call into JavaScript while
    /// they hold it (results are built from copies, with own-property definitions), but a
    /// script hook scry cannot avoid running (an `Error.prepareStackTrace` while an error is
    /// made, say) may still try to re-enter: that is a clear error, never a panic.
    pub fn session_mut(&self, ctx: &Ctx<'_>) -> rquickjs::Result<RefMut<'_, Session>> {
        self.session.try_borrow_mut().map_err(|_| reentered(ctx))
    }

    pub fn session_ref(&self, ctx: &Ctx<'_>) -> rquickjs::Result<Ref<'_, Session>> {
        self.session.try_borrow().map_err(|_| reentered(ctx))
    }

    pub fn print(&self, line: &str) {
        self.response.borrow_mut().push_line(line);
    }
}

fn reentered(ctx: &Ctx<'_>) -> rquickjs::Error {
    super::native::throw(
        ctx,
        "scry is busy answering another call: a hook it triggered (a setter, getter or \
         Error.prepareStackTrace) cannot use the debugger",
    )
}

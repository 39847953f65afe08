//! The engine's side of the live view: what it publishes and when. At the end of every chunk
//! everything (the stop, the panels, the chunk and its answer, the `dom` changes); during a
//! run at most every [`MIN_INTERVAL`](crate::view::board::MIN_INTERVAL): the `dom` changes
//! always, the panels only while a browser watches (they cost a register read, an unwind and
//! a disassembly).

use std::sync::Arc;
use std::time::Instant;

use super::host::Host;
use crate::session::{Session, StopInfo};
use crate::view::dom::DomModel;
use crate::view::panels::{clip, clock, ChunkRecord, Status};
use crate::view::{Publication, Publisher, View};

/// What the page shows of one chunk: its code and its answer, cut to these sizes.
const CHUNK_CODE_SHOWN: usize = 4096;
const CHUNK_ANSWER_SHOWN: usize = 8192;

pub struct Feed {
    view: View,
    publisher: Publisher,
    /// The last stop a response returned (or a run reached), as its line.
    stop_line: String,
    /// Counts stops, so the page marks what changed since the previous one.
    stop_seq: u64,
}

impl Feed {
    pub fn url(&self) -> &str {
        self.view.url()
    }
}

fn status_of(session: &Session, running: bool) -> Status {
    let label = if running {
        "running".to_string()
    } else if session.is_live() {
        "stopped".to_string()
    } else {
        session.no_process_reason()
    };
    Status { running, label }
}

impl Host {
    /// Shows this session in `view` from now on.
    pub fn attach_view(&self, view: View) {
        let shared = view.shared();
        self.session
            .borrow_mut()
            .set_output_tee(Some(Arc::new(move |bytes: &[u8]| {
                shared.push_output(bytes)
            })));
        self.dom.borrow_mut().track();
        let publisher = view.publisher();
        *self.feed.borrow_mut() = Some(Feed {
            view,
            publisher,
            stop_line: String::new(),
            stop_seq: 0,
        });
    }

    pub fn view_url(&self) -> Option<String> {
        self.feed.borrow().as_ref().map(|f| f.url().to_string())
    }

    /// Remembers the stop a response returns, for the page's stop line.
    pub fn note_stop(&self, line: &str) {
        if let Some(feed) = self.feed.borrow_mut().as_mut() {
            line.clone_into(&mut feed.stop_line);
            feed.stop_seq += 1;
        }
    }

    /// A run starts: the page says so at once.
    pub fn publish_running(&self) {
        if let (Some(feed), Ok(session)) =
            (self.feed.borrow_mut().as_mut(), self.session.try_borrow())
        {
            let status = status_of(&session, true);
            feed.publisher.publish(Publication {
                status: Some(status),
                ..Default::default()
            });
        }
    }

    /// During a run, at a stop: publishes if one is due. `stop` makes the stop line (only
    /// called when the panels are published).
    pub fn tick(
        &self,
        session: &mut Session,
        dom: &mut DomModel,
        stop: impl FnOnce(&mut Session) -> String,
    ) {
        let mut feed = self.feed.borrow_mut();
        let Some(feed) = feed.as_mut() else {
            return;
        };
        if !feed.publisher.due() {
            return;
        }
        let watched = feed.publisher.watchers() > 0;
        if !watched && !dom.is_dirty() {
            return;
        }
        let panels = watched.then(|| {
            feed.stop_line = stop(session);
            feed.stop_seq += 1;
            let mut panels = session.view_panels(&feed.stop_line);
            panels.stop_seq = feed.stop_seq;
            panels
        });
        feed.publisher.publish(Publication {
            status: Some(status_of(session, true)),
            panels,
            dom: dom.is_dirty().then(|| dom.take_changes()),
            chunk: None,
        });
    }

    /// The tick for a leg of a run whose stop is `info`.
    pub fn tick_at(&self, info: &StopInfo) {
        if self.feed.borrow().is_none() {
            return;
        }
        // Never while a caller holds either: a skipped tick is only a later update.
        let (Ok(mut session), Ok(mut dom)) =
            (self.session.try_borrow_mut(), self.dom.try_borrow_mut())
        else {
            return;
        };
        self.tick(&mut session, &mut dom, |s| s.light_stop_line(info));
    }

    /// The end of a chunk: everything, now.
    pub fn publish_chunk(&self, code: &str, file: &str, answer: &str, ok: bool, started: Instant) {
        let mut feed = self.feed.borrow_mut();
        let Some(feed) = feed.as_mut() else {
            return;
        };
        let (Ok(mut session), Ok(mut dom)) =
            (self.session.try_borrow_mut(), self.dom.try_borrow_mut())
        else {
            return;
        };
        let chunk = ChunkRecord {
            seq: 0,
            file: file.to_string(),
            code: clip(code, CHUNK_CODE_SHOWN),
            answer: clip(answer, CHUNK_ANSWER_SHOWN),
            ok,
            at: clock(),
            millis: started.elapsed().as_millis() as u64,
        };
        let mut panels = session.view_panels(&feed.stop_line);
        panels.stop_seq = feed.stop_seq;
        feed.publisher.publish(Publication {
            status: Some(status_of(&session, false)),
            panels: Some(panels),
            chunk: (file != "<meta>").then_some(chunk),
            dom: dom.is_dirty().then(|| dom.take_changes()),
        });
    }
}

//! The engine's side of the live view: what it publishes and when. At the end of every chunk
//! everything (the stop, the panels, the chunk and its answer, the `dom` changes); during a
//! run at most every [`MIN_INTERVAL`](crate::view::board::MIN_INTERVAL): the `dom` changes
//! always, the panels only while a browser watches (they cost a register read, an unwind and
//! a disassembly).

use std::sync::Arc;
use std::time::Instant;

use crate::session::Session;
use crate::view::dom::DomModel;
use crate::view::panels::{clip, clock, ChunkRecord, Status};
use crate::view::{Publication, Publisher, View};

/// What the page shows of one chunk: its code and its answer, cut to these sizes.
const CHUNK_CODE_SHOWN: usize = 4096;
const CHUNK_ANSWER_SHOWN: usize = 8192;

pub(super) struct Feed {
    view: View,
    publisher: Publisher,
    /// The last stop a response returned (or a run reached), as its line.
    stop_line: String,
    /// Counts stops, so the page marks what changed since the previous one.
    stop_seq: u64,
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

impl Feed {
    /// The live view `view`, fed from now on (the session's output goes to it too).
    pub(super) fn open(view: View, session: &mut Session, dom: &mut DomModel) -> Feed {
        let shared = view.shared();
        session.set_output_tee(Some(Arc::new(move |bytes: &[u8]| {
            shared.push_output(bytes)
        })));
        dom.track();
        let publisher = view.publisher();
        Feed {
            view,
            publisher,
            stop_line: String::new(),
            stop_seq: 0,
        }
    }

    pub(super) fn url(&self) -> &str {
        self.view.url()
    }

    /// Remembers the stop a response returns, for the page's stop line.
    pub(super) fn note_stop(&mut self, line: &str) {
        line.clone_into(&mut self.stop_line);
        self.stop_seq += 1;
    }

    /// A run starts: the page says so at once.
    pub(super) fn publish_running(&mut self, session: &Session) {
        self.publisher.publish(Publication {
            status: Some(status_of(session, true)),
            ..Default::default()
        });
    }

    /// During a run, at a stop: publishes if one is due. `stop` makes the stop line (only
    /// called when the panels are published).
    pub(super) fn tick(
        &mut self,
        session: &mut Session,
        dom: &mut DomModel,
        stop: impl FnOnce(&mut Session) -> String,
    ) {
        if !self.publisher.due() {
            return;
        }
        let watched = self.publisher.watchers() > 0;
        if !watched && !dom.is_dirty() {
            return;
        }
        let panels = watched.then(|| {
            self.stop_line = stop(session);
            self.stop_seq += 1;
            let mut panels = session.view_panels(&self.stop_line);
            panels.stop_seq = self.stop_seq;
            panels
        });
        self.publisher.publish(Publication {
            status: Some(status_of(session, true)),
            panels,
            dom: dom.is_dirty().then(|| dom.take_changes()),
            chunk: None,
        });
    }

    /// The end of a chunk: everything, now.
    pub(super) fn publish_chunk(
        &mut self,
        session: &mut Session,
        dom: &mut DomModel,
        chunk: ChunkShown<'_>,
    ) {
        let record = ChunkRecord {
            seq: 0,
            file: chunk.file.to_string(),
            code: clip(chunk.code, CHUNK_CODE_SHOWN),
            answer: clip(chunk.answer, CHUNK_ANSWER_SHOWN),
            ok: chunk.ok,
            at: clock(),
            millis: chunk.started.elapsed().as_millis() as u64,
        };
        let mut panels = session.view_panels(&self.stop_line);
        panels.stop_seq = self.stop_seq;
        self.publisher.publish(Publication {
            status: Some(status_of(session, false)),
            panels: Some(panels),
            chunk: (chunk.file != "<meta>").then_some(record),
            dom: dom.is_dirty().then(|| dom.take_changes()),
        });
    }
}

/// A chunk as the page shows it: its code, file, answer, outcome and start.
pub(super) struct ChunkShown<'a> {
    pub code: &'a str,
    pub file: &'a str,
    pub answer: &'a str,
    pub ok: bool,
    pub started: Instant,
}

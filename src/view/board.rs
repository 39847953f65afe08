//! The board: the last published state of the session, shared between the engine's thread
//! (which writes it through a [`Publisher`]) and the server's threads (which read what changed
//! for each browser). Every write is a few pointer copies under the lock; reading a client's
//! changes copies `Arc`s; nobody holds the lock while touching a socket, so the ptrace thread
//! never waits for a browser.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::dom::{Changes, Element, Key};
use super::panels::{Baseline, ChunkRecord, Panels, Status};

/// The engine publishes at most this often during a run (the end of a chunk always
/// publishes), and a browser is sent at most one update per interval: ~30 a second.
pub(crate) const MIN_INTERVAL: Duration = Duration::from_millis(33);
/// Chunks the page can scroll back through.
pub(crate) const MAX_CHUNKS: usize = 200;
/// Bytes of the program's output the page keeps.
pub(crate) const OUTPUT_TAIL: usize = 64 * 1024;

#[derive(Default)]
struct Board {
    generation: u64,
    closed: bool,
    status: (u64, Arc<Status>),
    panels: (u64, Option<Arc<Panels>>),
    chunks: VecDeque<Arc<ChunkRecord>>,
    output_total: u64,
    output: VecDeque<u8>,
    root: (u64, Arc<Vec<Key>>),
    /// Each element with the generation that published it and the one before (for canvases:
    /// a page that has that one needs only the region written since).
    elements: HashMap<Key, Published>,
}

struct Published {
    stamp: u64,
    previous: u64,
    element: Arc<Element>,
}

#[derive(Default)]
pub struct Shared {
    board: Mutex<Board>,
    changed: Condvar,
    watchers: AtomicUsize,
}

fn lock(m: &Mutex<Board>) -> MutexGuard<'_, Board> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    /// Appends the program's output (from the capture threads, as it arrives).
    pub fn push_output(&self, bytes: &[u8]) {
        let mut b = lock(&self.board);
        b.output.extend(bytes);
        let excess = b.output.len().saturating_sub(OUTPUT_TAIL);
        b.output.drain(..excess);
        b.output_total += bytes.len() as u64;
        b.generation += 1;
        drop(b);
        self.changed.notify_all();
    }

    /// The session is over: streams end.
    pub fn close(&self, last: Status) {
        let mut b = lock(&self.board);
        b.generation += 1;
        b.status = (b.generation, Arc::new(last));
        b.closed = true;
        drop(b);
        self.changed.notify_all();
    }

    pub fn is_closed(&self) -> bool {
        lock(&self.board).closed
    }

    /// Browsers connected to the event stream right now.
    pub fn watchers(&self) -> usize {
        self.watchers.load(Ordering::Relaxed)
    }

    /// Counts a stream for as long as the guard lives.
    pub fn watch(self: &Arc<Self>) -> WatchGuard {
        self.watchers.fetch_add(1, Ordering::Relaxed);
        WatchGuard(self.clone())
    }

    /// What changed for a page since `cursor`, waiting up to `wait` for something to. `None`
    /// when the board is closed and the page has everything.
    pub fn changes(&self, cursor: &mut Cursor, wait: Duration) -> Option<Update> {
        let mut b = lock(&self.board);
        let deadline = Instant::now() + wait;
        while cursor.started && b.generation == cursor.generation && !b.closed {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Some(Update::default());
            }
            b = self
                .changed
                .wait_timeout(b, left)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        if b.closed && cursor.started && b.generation == cursor.generation {
            return None;
        }
        Some(cursor.collect(&b))
    }
}

pub struct WatchGuard(Arc<Shared>);

impl Drop for WatchGuard {
    fn drop(&mut self) {
        self.0.watchers.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What one page has been sent so far.
#[derive(Default)]
pub struct Cursor {
    generation: u64,
    status: u64,
    panels: u64,
    chunk: u64,
    output_total: u64,
    root: u64,
    elements: HashMap<Key, u64>,
    started: bool,
}

/// How an element's canvas pixels go to a page.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pixels {
    None,
    Region,
    All,
}

/// What a page needs to catch up.
#[derive(Default)]
pub struct Update {
    pub status: Option<Arc<Status>>,
    pub panels: Option<Arc<Panels>>,
    pub chunks: Vec<Arc<ChunkRecord>>,
    /// Output bytes, and whether they replace what the page shows (it fell behind the tail).
    pub output: Option<(bool, Vec<u8>)>,
    pub root: Option<Arc<Vec<Key>>>,
    pub elements: Vec<(Arc<Element>, Pixels)>,
    pub removed: Vec<Key>,
    /// The first update of a stream: everything, replacing what the page had.
    pub reset: bool,
    pub closed: bool,
}

impl Update {
    pub fn is_empty(&self) -> bool {
        self.status.is_none()
            && self.panels.is_none()
            && self.chunks.is_empty()
            && self.output.is_none()
            && self.root.is_none()
            && self.elements.is_empty()
            && self.removed.is_empty()
            && !self.closed
    }
}

impl Cursor {
    fn collect(&mut self, b: &Board) -> Update {
        let mut u = Update {
            reset: !self.started,
            closed: b.closed,
            ..Default::default()
        };
        self.started = true;
        self.generation = b.generation;
        if b.status.0 > self.status || u.reset {
            u.status = Some(b.status.1.clone());
            self.status = b.status.0;
        }
        if b.panels.0 > self.panels || u.reset {
            u.panels = b.panels.1.clone();
            self.panels = b.panels.0;
        }
        u.chunks = b
            .chunks
            .iter()
            .filter(|c| c.seq > self.chunk)
            .cloned()
            .collect();
        if let Some(last) = b.chunks.back() {
            self.chunk = self.chunk.max(last.seq);
        }
        if b.output_total > self.output_total || (u.reset && !b.output.is_empty()) {
            let new = (b.output_total - self.output_total) as usize;
            let reset = u.reset || new > b.output.len();
            let take = if reset { b.output.len() } else { new };
            let start = b.output.len() - take;
            u.output = Some((reset, b.output.range(start..).copied().collect()));
            self.output_total = b.output_total;
        }
        if b.root.0 > self.root || u.reset {
            u.root = Some(b.root.1.clone());
            self.root = b.root.0;
        }
        for (k, p) in &b.elements {
            let seen = self.elements.get(k).copied();
            if seen.is_some_and(|s| s >= p.stamp) {
                continue;
            }
            let pixels = match (&p.element.canvas, seen) {
                (None, _) => Pixels::None,
                (Some(c), Some(s)) if s == p.previous && c.dirty.is_none() => Pixels::None,
                (Some(_), Some(s)) if s == p.previous => Pixels::Region,
                (Some(_), _) => Pixels::All,
            };
            u.elements.push((p.element.clone(), pixels));
            self.elements.insert(*k, p.stamp);
        }
        // What the page has that the board no longer does (a count would miss one element
        // removed and another made in the same interval).
        self.elements.retain(|k, _| {
            let live = b.elements.contains_key(k);
            if !live {
                u.removed.push(*k);
            }
            live
        });
        u
    }
}

/// What the engine publishes at once.
#[derive(Default)]
pub struct Publication {
    pub status: Option<Status>,
    pub panels: Option<Panels>,
    pub chunk: Option<ChunkRecord>,
    pub dom: Option<Changes>,
}

/// The engine's side of the board.
pub struct Publisher {
    shared: Arc<Shared>,
    last: Option<Instant>,
    /// Registers at the latest stop published, and at the one before it.
    current: Option<Baseline>,
    previous: Option<Baseline>,
    last_status: Option<Status>,
    next_chunk: u64,
}

impl Publisher {
    pub fn new(shared: Arc<Shared>) -> Publisher {
        Publisher {
            shared,
            last: None,
            current: None,
            previous: None,
            last_status: None,
            next_chunk: 1,
        }
    }

    pub fn watchers(&self) -> usize {
        self.shared.watchers()
    }

    /// Whether a publish during a run is due (at most one per [`MIN_INTERVAL`]).
    pub fn due(&self) -> bool {
        self.last.is_none_or(|t| t.elapsed() >= MIN_INTERVAL)
    }

    pub fn publish(&mut self, p: Publication) {
        self.last = Some(Instant::now());
        let panels = p.panels.map(|mut panels| {
            if self
                .current
                .as_ref()
                .is_some_and(|c| c.stop_seq != panels.stop_seq)
            {
                self.previous = self.current.take();
            }
            panels.mark_changes(self.previous.as_ref());
            if !panels.registers.is_empty() {
                self.current = Some(panels.baseline());
            }
            Arc::new(panels)
        });
        let status = p.status.filter(|s| self.last_status.as_ref() != Some(s));
        if status.is_none() && panels.is_none() && p.chunk.is_none() && p.dom.is_none() {
            return;
        }
        if let Some(s) = &status {
            self.last_status = Some(s.clone());
        }
        let chunk = p.chunk.map(|mut c| {
            c.seq = self.next_chunk;
            self.next_chunk += 1;
            Arc::new(c)
        });
        let mut b = lock(&self.shared.board);
        b.generation += 1;
        let g = b.generation;
        if let Some(s) = status {
            b.status = (g, Arc::new(s));
        }
        if let Some(panels) = &panels {
            b.panels = (g, Some(panels.clone()));
        }
        if let Some(c) = chunk {
            b.chunks.push_back(c);
            if b.chunks.len() > MAX_CHUNKS {
                b.chunks.pop_front();
            }
        }
        if let Some(dom) = p.dom {
            for k in dom.removed {
                b.elements.remove(&k);
            }
            for element in dom.elements {
                let previous = b.elements.get(&element.key).map_or(0, |p| p.stamp);
                b.elements.insert(
                    element.key,
                    Published {
                        stamp: g,
                        previous,
                        element,
                    },
                );
            }
            if let Some(root) = dom.root {
                b.root = (g, Arc::new(root));
            }
        }
        drop(b);
        self.shared.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::dom::DomModel;

    fn update(shared: &Shared, cursor: &mut Cursor) -> Update {
        shared
            .changes(cursor, Duration::from_millis(1))
            .expect("open")
    }

    #[test]
    fn a_page_gets_everything_then_only_changes() {
        let shared = Arc::new(Shared::default());
        let mut publisher = Publisher::new(shared.clone());
        let mut dom = DomModel::default();
        dom.track();
        let pc = dom.by_id("pc").unwrap();
        let canvas = dom.canvas("fb", 4, 4).unwrap();
        dom.set_text(pc, "0x1").unwrap();
        publisher.publish(Publication {
            status: Some(Status {
                running: false,
                label: "stopped".into(),
            }),
            dom: Some(dom.take_changes()),
            ..Default::default()
        });
        shared.push_output(b"hello\n");
        let mut cursor = Cursor::default();
        let first = update(&shared, &mut cursor);
        assert!(first.reset);
        assert_eq!(first.elements.len(), 2);
        assert!(first
            .elements
            .iter()
            .any(|(e, px)| e.key == canvas && *px == Pixels::All));
        assert_eq!(first.output, Some((true, b"hello\n".to_vec())));
        assert_eq!(first.root.as_deref(), Some(&vec![pc, canvas]));

        // Nothing new: an empty (keep-alive) update after the wait.
        assert!(update(&shared, &mut cursor).is_empty());

        dom.put_pixels(
            canvas,
            &[9; 4],
            1,
            1,
            Some(1),
            Some(1),
            crate::view::canvas::PixelFormat::Rgba,
        )
        .unwrap();
        dom.remove(pc).unwrap();
        publisher.publish(Publication {
            dom: Some(dom.take_changes()),
            ..Default::default()
        });
        shared.push_output(b"more");
        let next = update(&shared, &mut cursor);
        assert_eq!(next.removed, vec![pc]);
        assert_eq!(next.elements.len(), 1);
        assert!(!next.elements.iter().any(|(e, _)| e.key == pc));
        assert_eq!(next.elements[0].1, Pixels::Region);
        assert_eq!(next.output, Some((false, b"more".to_vec())));

        // A page that joins late gets the current state at once.
        let mut late = Cursor::default();
        let all = update(&shared, &mut late);
        assert_eq!(all.elements.len(), 1);
        assert_eq!(all.elements[0].1, Pixels::All);
        assert_eq!(all.status.unwrap().label, "stopped");

        shared.close(Status::default());
        assert!(update(&shared, &mut cursor).closed);
        assert!(shared
            .changes(&mut cursor, Duration::from_millis(1))
            .is_none());
    }

    #[test]
    fn a_removal_and_a_creation_in_one_interval_both_arrive() {
        let shared = Arc::new(Shared::default());
        let mut publisher = Publisher::new(shared.clone());
        let mut dom = DomModel::default();
        dom.track();
        let a = dom.by_id("a").unwrap();
        publisher.publish(Publication {
            dom: Some(dom.take_changes()),
            ..Default::default()
        });
        let mut cursor = Cursor::default();
        update(&shared, &mut cursor);
        dom.remove(a).unwrap();
        let b = dom.by_id("b").unwrap();
        publisher.publish(Publication {
            dom: Some(dom.take_changes()),
            ..Default::default()
        });
        let u = update(&shared, &mut cursor);
        assert_eq!(u.removed, vec![a]);
        assert_eq!(u.elements.len(), 1);
        assert_eq!(u.elements[0].0.key, b);
    }

    #[test]
    fn chunks_are_numbered_and_bounded() {
        let shared = Arc::new(Shared::default());
        let mut publisher = Publisher::new(shared.clone());
        for i in 0..MAX_CHUNKS + 5 {
            publisher.publish(Publication {
                chunk: Some(ChunkRecord {
                    seq: 0,
                    file: "<input>".into(),
                    code: format!("{i}"),
                    answer: String::new(),
                    ok: true,
                    at: String::new(),
                    millis: 0,
                }),
                ..Default::default()
            });
        }
        let mut cursor = Cursor::default();
        let u = update(&shared, &mut cursor);
        assert_eq!(u.chunks.len(), MAX_CHUNKS);
        assert_eq!(u.chunks.last().unwrap().seq, MAX_CHUNKS as u64 + 5);
    }
}

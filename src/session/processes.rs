//! More than one process under control (`config.follow_fork = 'both'`): fork children are
//! held (stopped, cleaned) while the selected process runs; `process.select(pid)` swaps
//! which one `state`, `cont()`, breakpoints and watchpoints are about. Selecting goes
//! through the same steps as a spawn, attach or exec (symbols read, breakpoints and
//! watchpoints armed from the session's lists, the loader followed), so breakpoints apply
//! to every process without anything kept in step while one waits.

use super::targets::join_pids;
use super::*;

/// One row of `process.list()`.
#[derive(Debug, Clone)]
pub struct ProcessRow {
    pub pid: Tid,
    pub program: String,
    /// `selected`, `held`, or how the process ended (`exited with code 0`, `killed by ...`,
    /// `gone` for a held one killed from outside).
    pub state: String,
    pub threads: usize,
}

/// What the tree did since the last stop was shown: children kept, processes ended. Shown
/// as the next stop's notes, a line each while few, one line for many (a server that forks
/// hundreds of workers must not flood its stop).
#[derive(Default)]
pub(super) struct TreeNotes {
    forks: Vec<(Tid, Tid)>,
    /// Children let go untraced: (child, parent, why).
    let_go: Vec<(Tid, Tid, String)>,
    ends: Vec<(Tid, String)>,
}

/// Up to this many children or ends get a note each.
const NOTES_EACH: usize = 4;

impl TreeNotes {
    pub(super) fn forked(&mut self, child: Tid, parent: Tid) {
        self.forks.push((child, parent));
    }

    pub(super) fn let_go(&mut self, child: Tid, parent: Tid, why: String) {
        self.let_go.push((child, parent, why));
    }

    pub(super) fn ended(&mut self, pid: Tid, end: &str) {
        self.ends.push((pid, end.to_string()));
    }

    /// The notes, emptying the record. `tree`: held processes run with `cont()`.
    pub(super) fn take(&mut self, tree: bool) -> Vec<String> {
        let mut notes = Vec::new();
        // One note per parent: a server's workers are one line.
        let parents = grouped(
            std::mem::take(&mut self.forks)
                .into_iter()
                .map(|(child, parent)| (parent, child)),
        );
        let what = if tree {
            "kept (they run with cont())"
        } else {
            "held"
        };
        for (parent, children) in parents {
            notes.push(match children.as_slice() {
                [child] => format!(
                    "fork child {child} of {parent} {}: process.select({child}) debugs it",
                    if tree {
                        "kept (it runs with cont())"
                    } else {
                        "held"
                    }
                ),
                _ => format!(
                    "{} fork children of {parent} {what}: {} (process.select(pid) debugs one)",
                    children.len(),
                    short_pids(&children)
                ),
            });
        }
        // One note per parent and reason.
        let let_go = grouped(
            std::mem::take(&mut self.let_go)
                .into_iter()
                .map(|(child, parent, why)| ((parent, why), child)),
        );
        for ((parent, why), children) in let_go {
            notes.push(match children.as_slice() {
                [child] => format!("fork child {child} of {parent} let go untraced: {why}"),
                _ => format!(
                    "{} fork children of {parent} let go untraced: {why}: {}",
                    children.len(),
                    short_pids(&children)
                ),
            });
        }
        let ends = std::mem::take(&mut self.ends);
        if ends.len() <= NOTES_EACH {
            for (pid, end) in ends {
                notes.push(format!("process {pid} {end}"));
            }
        } else {
            // Grouped by how they ended, in the order first seen.
            let groups = grouped(ends.into_iter().map(|(pid, end)| (end, pid)));
            // As many exit codes as processes must not flood the line either.
            let mut parts: Vec<String> = groups
                .iter()
                .take(NOTES_EACH)
                .map(|(end, pids)| format!("{} {end}: {}", pids.len(), short_pids(pids)))
                .collect();
            if groups.len() > NOTES_EACH {
                let rest = &groups[NOTES_EACH..];
                let count: usize = rest.iter().map(|g| g.1.len()).sum();
                parts.push(format!(
                    "{count} more in {} other ends (process.list() shows each)",
                    rest.len()
                ));
            }
            notes.push(format!("processes ended: {}", parts.join("; ")));
        }
        notes
    }
}

/// The values by key, keys in the order first seen (notes list what came first first).
fn grouped<K: PartialEq, V>(items: impl IntoIterator<Item = (K, V)>) -> Vec<(K, Vec<V>)> {
    let mut groups: Vec<(K, Vec<V>)> = Vec::new();
    for (key, value) in items {
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(value),
            None => groups.push((key, vec![value])),
        }
    }
    groups
}

/// Pids for a note: the first few and how many more.
fn short_pids(pids: &[Tid]) -> String {
    const SHOWN: usize = 8;
    if pids.len() <= SHOWN {
        join_pids(pids)
    } else {
        format!(
            "{}, ... {} more",
            join_pids(&pids[..SHOWN]),
            pids.len() - SHOWN
        )
    }
}

impl Session {
    /// Takes the fork children the inferior held since the last stop.
    pub(super) fn collect_forked(&mut self) {
        let Some(t) = &mut self.targets.live else {
            return;
        };
        let parent = t.process.pid();
        let (program, exe_base) = (t.program.clone(), t.exe_base);
        for (child, why) in t.process.take_let_go() {
            self.tree.notes.let_go(child, parent, why);
        }
        for child in t.process.take_forked() {
            let pid = child.pid();
            self.tree.notes.forked(pid, parent);
            self.targets.kept_children = true;
            // A fork child's address space is a copy of its parent's.
            self.targets.held.push(Live {
                exe_base,
                ..Live::new(child, program.clone())
            });
        }
    }

    /// A note for the stop at which the selected process ended while others are held.
    pub(super) fn held_note(&self) -> Option<String> {
        let held = self.targets.held_pids();
        (!held.is_empty()).then(|| {
            if self.config.schedule_all {
                format!(
                    "processes remain: {} (cont() runs them, process.select({}) debugs one)",
                    short_pids(&held),
                    held[0]
                )
            } else {
                format!(
                    "held processes remain: {} (process.select({}) debugs one)",
                    short_pids(&held),
                    held[0]
                )
            }
        })
    }

    pub fn process_list(&mut self) -> Vec<ProcessRow> {
        let mut rows = Vec::new();
        match &self.targets.live {
            Some(t) if !t.process.is_dead() => rows.push(ProcessRow {
                pid: t.process.pid(),
                program: t.program.clone(),
                state: "selected".into(),
                threads: t.process.thread_count(),
            }),
            _ => {
                if let Some((pid, program)) = &self.targets.last_process {
                    if self.targets.core.is_none() {
                        rows.push(ProcessRow {
                            pid: *pid,
                            program: program.clone(),
                            state: self.targets.ended.clone().unwrap_or_else(|| "ended".into()),
                            threads: 0,
                        });
                    }
                }
            }
        }
        for t in &self.targets.held {
            let there = t.process.still_there();
            // A non-stop tree run's other processes run on while a listener looks at one.
            let running = if self.tree.running.is_some() {
                "running"
            } else if self.config.schedule_all {
                "stopped"
            } else {
                "held"
            };
            rows.push(ProcessRow {
                pid: t.process.pid(),
                program: t.program.clone(),
                state: if there { running } else { "gone" }.into(),
                threads: if there { t.process.thread_count() } else { 0 },
            });
        }
        for (pid, program, end) in &self.targets.ended_in_run {
            rows.push(ProcessRow {
                pid: *pid,
                program: program.clone(),
                state: end.clone(),
                threads: 0,
            });
        }
        rows
    }

    /// Makes the held process `pid` the one debugged; the selected one (if live) is held.
    pub fn select_process(&mut self, pid: Tid) -> Result<()> {
        if let Some(refusal) = self.targets.core_refusal("select a process") {
            return Err(refusal);
        }
        if self
            .targets
            .live
            .as_ref()
            .is_some_and(|t| !t.process.is_dead() && t.process.pid() == pid)
        {
            return Ok(());
        }
        let Some(index) = self
            .targets
            .held
            .iter()
            .position(|t| t.process.pid() == pid)
        else {
            let mut known: Vec<Tid> = self.targets.held_pids();
            if let Some(t) = self.targets.live.as_ref().filter(|t| !t.process.is_dead()) {
                known.insert(0, t.process.pid());
            }
            let ended = self
                .targets
                .ended_in_run
                .iter()
                .find(|e| e.0 == pid)
                .map(|e| e.2.clone())
                .or_else(|| {
                    let last = self.targets.last_process.as_ref()?;
                    (last.0 == pid && !self.targets.is_live())
                        .then(|| self.targets.ended.clone())
                        .flatten()
                });
            let what = match ended {
                Some(end) => format!("process {pid} {end}"),
                None => format!("no process {pid}"),
            };
            return Err(SessionError::Invalid(if known.is_empty() {
                format!("{what}: no process is under control")
            } else {
                format!("{what}; processes: {}", join_pids(&known))
            }));
        };
        if !self.targets.held[index].process.still_there() {
            let gone = self.targets.held.remove(index);
            drop(gone);
            return Err(SessionError::Invalid(format!(
                "process {pid} is gone (killed from outside scry while it was held)"
            )));
        }
        self.select_held(index)
    }

    /// Selects the held process at `index` (one that ended in a run of the whole tree too:
    /// its end is the stop that selects it).
    pub(super) fn select_held(&mut self, index: usize) -> Result<()> {
        // The held processes are stopped before one is selected (see `tree_nonstop`).
        self.settle_tree()?;
        if let Some(t) = self.targets.live.as_ref().filter(|t| !t.process.is_dead()) {
            self.points.watchpoints.stash_values(t.process.pid());
            let notes = self.lift_tracepoints();
            self.at_stop.carried_notes.extend(notes);
        }
        let incoming = self.targets.held.remove(index);
        if let Some(mut current) = self.targets.live.take() {
            if !current.process.is_dead() {
                let pass = self.pass_fn();
                if let Err(e) = current.process.hold(&pass) {
                    // Nothing changed: the selected process stays selected.
                    self.targets.live = Some(current);
                    self.targets.held.insert(index, incoming);
                    self.rearm_keeping_hits();
                    return Err(e.into());
                }
                self.targets.held.push(current);
            } else if current.process.has_queued() {
                self.note_queued_end(current);
            }
        }
        self.forget_process();
        self.targets.last_process = Some((incoming.process.pid(), incoming.program.clone()));
        self.targets.live = Some(incoming);
        if let Some(t) = &mut self.targets.live {
            t.process.set_report_threads(self.signals.thread_events);
        }
        self.targets.ended = None;
        self.at_stop.snapshot = Default::default();
        self.at_stop.last_signal = None;
        self.at_stop.stepped_from = None;
        self.symbols = self.symbols.renewed();
        self.loader.forget_changes();
        if self.targets.is_live() {
            self.refresh_symbols();
            self.rearm_keeping_hits();
            self.points
                .watchpoints
                .restore_values(self.targets.live()?.pid());
            self.follow_loader();
        }
        Ok(())
    }

    /// Arms the session's breakpoints and watchpoints in the selected process, keeping their
    /// hit counts: they count hits in every process.
    pub(super) fn rearm_keeping_hits(&mut self) {
        let bp_hits: Vec<(u64, Vec<(Tid, u64)>)> = self
            .points
            .breakpoints
            .list()
            .iter()
            .map(|b| (b.hits, b.by_process.clone()))
            .collect();
        let wp_hits: Vec<u64> = self
            .points
            .watchpoints
            .list()
            .iter()
            .map(|w| w.hits)
            .collect();
        self.rearm();
        for (b, (hits, by_process)) in self.points.breakpoints.list_mut().iter_mut().zip(bp_hits) {
            b.hits = hits;
            b.by_process = by_process;
        }
        for (w, hits) in self.points.watchpoints.list_mut().iter_mut().zip(wp_hits) {
            w.hits = hits;
        }
    }

    /// Lets every held process go the way the session ends: `kill` kills them, otherwise
    /// each goes as its origin asks (a spawned program's children are killed, an attached
    /// one's detached and left running, their code as on disk).
    pub(super) fn release_held(&mut self, kill: bool) {
        // Detaching needs each process stopped (see `tree_nonstop`).
        let _ = self.settle_tree();
        for mut t in std::mem::take(&mut self.targets.held) {
            t.process.set_read_only(false);
            let _ = if kill || t.process.origin() == Origin::Spawned {
                t.process.kill().map(|_| ())
            } else {
                t.process.detach().map(drop)
            };
        }
    }

    /// Detaches every held process (for `detach()`), all or nothing per process: one that
    /// cannot be let go stays held and its error is returned.
    /// Returns what each keeps of scry's for life (see `Inferior::detach`).
    pub(super) fn detach_held(&mut self) -> Result<Vec<String>> {
        let mut first_error = None;
        let mut kept = Vec::new();
        for mut t in std::mem::take(&mut self.targets.held) {
            match t.process.detach() {
                Ok(note) => kept.extend(note),
                Err(e) => {
                    first_error.get_or_insert(e);
                    self.targets.held.push(t);
                }
            }
        }
        match first_error {
            Some(e) => Err(e.into()),
            None => Ok(kept),
        }
    }

    pub fn has_held(&self) -> bool {
        !self.targets.held.is_empty()
    }
}

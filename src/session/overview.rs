//! The first look at a target: what an agent needs before its first real question (the
//! program, where it stopped, its threads and modules, whether there is debug info).

use super::*;

/// A live target at a glance.
#[derive(Debug, Clone)]
pub struct Overview {
    pub pid: Tid,
    pub program: String,
    /// The core file, when the session reads one instead of a process.
    pub core: Option<String>,
    pub pc: u64,
    pub symbol: Option<String>,
    pub source: Option<String>,
    pub threads: usize,
    /// Module names, the executable first.
    pub modules: Vec<String>,
    /// The modules with DWARF (line tables, variables), their own or a debug file's.
    pub with_debug_info: Vec<String>,
}

impl Session {
    /// The live target at a glance; `None` without a live process. Opens each module's
    /// DWARF (for whether there is any), so it is asked for at start and on `:status`, not
    /// at every stop.
    pub fn overview(&mut self) -> Option<Overview> {
        if !self.is_live() && self.targets.core.is_none() {
            return None;
        }
        let pid = self.pid()?;
        let program = self.program()?.to_string();
        let pc = self.pc().ok()?;
        let threads = self.thread_ids().map(|t| t.len()).unwrap_or(1);
        let symbol = self.symbolize(pc);
        let source = self.stop_position(pc);
        let mut modules = Vec::new();
        let mut with_debug_info = Vec::new();
        for m in self.symbols.modules() {
            if modules.contains(&m.name) {
                continue;
            }
            modules.push(m.name.clone());
            if m.file.has_dwarf() {
                with_debug_info.push(m.name.clone());
            }
        }
        Some(Overview {
            pid,
            program,
            core: self.core_name(),
            pc,
            symbol,
            source,
            threads,
            modules,
            with_debug_info,
        })
    }
}

//! Where the user's breakpoints are in a held process that runs another image than the
//! selected one: a fork child that exec'd another program, its parent once the child is
//! selected, one program loaded at another address. A tree run inserts the selected
//! process's breakpoint addresses only into processes of the same image (a fork child's
//! address space is a copy of its parent's); any other gets its own, resolved from the
//! breakpoints' specs in its own symbols, never copied (an int3 at another program's address
//! changes this one's code). Before, such a process ran without breakpoints and its calls
//! were silently missed. Kept per image until the breakpoints change.

use super::lookup::names_a_function;
use super::*;

/// The breakpoint addresses of images other than the selected one's, by image.
#[derive(Default)]
pub(super) struct ImageSites {
    entries: Vec<ImageEntry>,
}

struct ImageEntry {
    program: String,
    exe_base: Option<u64>,
    /// The breakpoints (by id) the sites were resolved for: another set resolves again.
    ids: Vec<u32>,
    sites: Vec<u64>,
}

/// Images kept: a tree runs a handful of programs; a bound keeps a pathological one small.
const KEPT: usize = 16;

impl ImageSites {
    fn find(&self, program: &str, exe_base: Option<u64>, ids: &[u32]) -> Option<&[u64]> {
        self.entries
            .iter()
            .find(|e| e.program == program && e.exe_base == exe_base && e.ids == ids)
            .map(|e| e.sites.as_slice())
    }

    fn keep(&mut self, entry: ImageEntry) {
        self.entries
            .retain(|e| !(e.program == entry.program && e.exe_base == entry.exe_base));
        if self.entries.len() >= KEPT {
            self.entries.remove(0);
        }
        self.entries.push(entry);
    }
}

impl Session {
    /// The addresses of the user's breakpoints in held process `i`, which runs another
    /// image than the selected process.
    pub(super) fn held_image_sites(&mut self, i: usize) -> Vec<u64> {
        let ids: Vec<u32> = self
            .points
            .breakpoints
            .list()
            .iter()
            .map(|b| b.id)
            .collect();
        let h = &self.targets.held[i];
        if let Some(sites) = self.tree.sites.find(&h.program, h.exe_base, &ids) {
            return sites.to_vec();
        }
        let sites = self.resolve_in_held(i);
        let h = &self.targets.held[i];
        self.tree.sites.keep(ImageEntry {
            program: h.program.clone(),
            exe_base: h.exe_base,
            ids,
            sites: sites.clone(),
        });
        sites
    }

    /// Resolves every breakpoint named by function or source line in held process `i`, looked
    /// through as if it were selected (its maps, its files, its code checked), nothing
    /// inserted and the selection left as it was. A breakpoint at an address or an offset
    /// (`0x401136`, `main+4`) is the selected program's place and is not looked for here.
    fn resolve_in_held(&mut self, i: usize) -> Vec<u64> {
        let store = self.symbols.renewed();
        let selected_symbols = std::mem::replace(&mut self.symbols, store);
        let refreshed = (self.loader.maps_read_at, self.loader.ran_since_maps);
        let held = self.targets.held.remove(i);
        let selected = self.targets.live.replace(held);
        self.refresh_symbols();
        let mut sites = Vec::new();
        for b in 0..self.points.breakpoints.list().len() {
            let spec = self.points.breakpoints.list()[b].spec.clone();
            if !names_a_function(&spec) && source_line_expr(&spec).is_none() {
                continue;
            }
            let Ok(addr) = self.resolve_breakpoint(&spec) else {
                continue;
            };
            if self.check_code_address(addr).is_ok() {
                sites.push(addr);
                sites.extend(self.more_sites(&spec, addr));
            }
        }
        let held = std::mem::replace(&mut self.targets.live, selected);
        if let Some(held) = held {
            self.targets.held.insert(i, held);
        }
        self.symbols = selected_symbols;
        (self.loader.maps_read_at, self.loader.ran_since_maps) = refreshed;
        sites
    }
}

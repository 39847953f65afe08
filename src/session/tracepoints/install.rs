//! Putting a probe into the program: the ring it writes (a memfd both map), the trampoline
//! (`x86::probe`) in a page found within a jump's reach, and the jump at the site. All or
//! nothing: what was mapped is taken away again when a later step fails.

use super::*;

impl Session {
    /// Puts a probe for `tp` into the program: the reason it cannot be one is the error.
    pub(super) fn install_probe(
        &mut self,
        tp: &Tracepoint,
    ) -> std::result::Result<Installed, String> {
        let addr = tp.addr;
        let mut code = [0u8; 32];
        let n = {
            let t = self.targets.live().map_err(|e| e.to_string())?;
            t.read_memory_partial(addr, &mut code)
        };
        // The function around the site, to know no branch lands inside the jump.
        let func = self
            .symbols
            .symbol_at(RuntimeAddr(addr))
            .filter(|(_, sym, _)| sym.size > 0 && sym.kind == crate::symbols::SymKind::Func)
            .map(|(_, sym, off)| (addr - off, sym.size, sym.display_name().into_owned()));
        let mut func_bytes = Vec::new();
        let mut cold_bytes = Vec::new();
        if let Some((start, size, name)) = &func {
            func_bytes = self
                .read_memory_partial(*start, (*size).min(1 << 20) as usize)
                .map_err(|e| e.to_string())?;
            if let Some(cold) = self.symbols.lookup(&format!("{name}.cold")) {
                let (m, sym, _) = cold;
                let at = m.bias.to_runtime(sym.addr).0;
                let size = sym.size.min(1 << 20) as usize;
                if let Ok(bytes) = self.read_memory_partial(at, size) {
                    cold_bytes.push((at, bytes));
                }
            }
        }
        let f = func.as_ref().map(|(start, _, _)| probe::Function {
            start: *start,
            code: &func_bytes,
        });
        let parts: Vec<probe::Function> = cold_bytes
            .iter()
            .map(|(at, b)| probe::Function {
                start: *at,
                code: b,
            })
            .collect();
        let cover = probe::cover(&code[..n], addr, f.as_ref(), &parts)?;
        let items = tp.layout.items();
        let slot = 1u64 << tp.layout.shift;
        // A power of two, from 64 to SLOTS.
        let fit = (RING_BYTES / slot).clamp(64, SLOTS);
        let slots = 1u64 << (63 - fit.leading_zeros());
        let ring_len = probe::DATA + slots * slot;
        if self.tracing.clock.is_none() {
            self.tracing.clock = Some(Clock::start());
        }
        let t = self.targets.live().map_err(|e| e.to_string())?;
        let host = t
            .probes()
            .ok_or("this target cannot hold probes (a remote stub)")?;
        if host.foreign_seccomp() {
            return Err("the program runs under a seccomp filter of its own, which could refuse (or kill it for) the system calls a probe makes".into());
        }
        // The probe calls process_vm_readv on itself by the pid it has where it runs.
        let pid = crate::os::procfs::id_in_namespace(host.pid(), host.pid()).unwrap_or(host.pid());
        let namespaced = pid != host.pid();
        let (ring_addr, shared) = host.map_ring(ring_len).map_err(|e| e.to_string())?;
        let mut undo = Undo {
            ring: Some((ring_addr, ring_len)),
            code: None,
        };
        self.tracing.namespaced |= namespaced;
        let made = (|| {
            let probe_of = |cover| probe::Probe {
                site: addr,
                pid: pid as u32,
                ring: probe::Ring {
                    header: ring_addr,
                    slots,
                    slot_shift: tp.layout.shift,
                },
                items: &items,
                wait: tp.wait,
                cover,
                cond: tp.cond,
            };
            // The code's size first (placed anywhere), then for real where it goes.
            let len = probe::trampoline(addr, &probe_of(&cover))?.code.len() as u64;
            let code = host.alloc_near(addr, len).map_err(|e| e.to_string())?;
            undo.code = Some((code, len.div_ceil(4096) * 4096));
            let tramp = probe::trampoline(code, &probe_of(&cover))?;
            host.write_code(code, &tramp.code)
                .map_err(|e| e.to_string())?;
            let jump = probe::jump(addr, code).ok_or("the trampoline is out of a jump's reach")?;
            host.patch_jump(addr, &jump, cover.len)
                .map_err(|e| e.to_string())?;
            Ok(Installed {
                shared,
                ring_addr,
                ring_len,
                code,
                code_len: len.div_ceil(4096) * 4096,
                slots,
                moved: tramp.moved,
                restore: tramp.restore,
                tail: 0,
                abandoned: 0,
            })
        })();
        if made.is_err() {
            if let Some((a, l)) = undo.code {
                let _ = host.unmap(a, l);
            }
            if let Some((a, l)) = undo.ring {
                let _ = host.unmap(a, l);
            }
        }
        made
    }
}

/// What to unmap when putting a probe in fails half way.
struct Undo {
    ring: Option<(u64, u64)>,
    code: Option<(u64, u64)>,
}

//! One frame as location expressions see it: its registers (callee-saved ones from the
//! unwinder), its CFA, the process's memory and, for `DW_OP_entry_value`, the call site that
//! called it. A frame is a physical frame or one of the frames tail calls erased between a
//! physical frame and its caller (`SymbolStore::tail_calls`): entry values pass through
//! those as gdb's do, each erased frame's jump being the call site of the frame inside it.
//! Also the rows of a frame's variables as the session hands them out.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use super::inspection::Inspection;
use super::typed_value::TypedValue;
use super::*;
use crate::os::fpregs::FpRegs;
use crate::symbols::dwarf::callsite::{single_register, Callee, Passed};
use crate::symbols::dwarf::location::{self as loc, FrameAccess};
use crate::symbols::dwarf::reader::DwarfReader as Reader;
use crate::symbols::dwarf::tree::UnitHandle;
use crate::symbols::dwarf::{DwarfInfo, FrameVar};
use crate::symbols::store::TailCall;
use crate::symbols::{FileAddr, LoadedModule, ModuleFile};

/// Entry values are looked up through at most this many callers (erased frames count): a
/// recursion passing `n - 1` down chains one call site per level, and gdb follows it to
/// the first caller that passed a constant.
pub(super) const MAX_ENTRY_DEPTH: usize = 64;

/// DWARF numbers of the registers the x86-64 psABI makes a function preserve: rbx, rbp,
/// r12-r15 (rsp is the CFA's business).
const CALLEE_SAVED: [u16; 6] = [3, 6, 12, 13, 14, 15];
const RSP: u16 = 7;

/// One frame as location expressions see it.
#[derive(Clone, Copy)]
pub(super) struct FrameView<'a> {
    /// The process, its symbols and the thread pointer.
    pub ins: Inspection<'a>,
    pub frames: &'a [unwind::Frame],
    /// The physical frame.
    pub index: usize,
    /// 0: the physical frame itself; `t` ≥ 1: the `t`-th frame tail calls erased between it
    /// and its caller, counted outwards.
    pub tail: usize,
    pub bias: u64,
    /// The module whose TLS block `DW_OP_form_tls_address` means; the block is found only
    /// when a variable needs it.
    pub tls_module: Option<&'a LoadedModule>,
    /// pc is the first instruction of the function (registers still hold the arguments).
    pub at_entry: bool,
    pub depth: usize,
    /// The selected thread's floating-point and vector registers, for frames at or above the
    /// innermost signal frame: optimized code keeps every `double` in an xmm register.
    pub fpu: Option<&'a FpRegs>,
    /// Arguments already recovered from call sites while reading this stack.
    pub memo: Option<&'a EntryMemo>,
}

/// What callers passed, as found while reading one stack: every row of an unwind asks for
/// its callers' call sites, and a recursion passing `n - 1` down would follow the same chain
/// again for each row (quadratic in the depth).
#[derive(Default)]
pub(super) struct EntryMemo(RefCell<HashMap<(usize, usize, Passed), Option<u64>>>);

impl<'a> FrameView<'a> {
    /// A view with no frame behind it: only what needs no register (a fixed address, a
    /// thread-local) can be read through it.
    pub(super) fn frameless(ins: Inspection<'a>, module: &'a LoadedModule) -> FrameView<'a> {
        FrameView {
            ins,
            frames: &[],
            index: 0,
            tail: 0,
            bias: module.bias.0,
            tls_module: Some(module),
            at_entry: false,
            depth: 0,
            fpu: None,
            memo: None,
        }
    }

    /// A register of an erased frame, at its tail-jumping instruction. The function had put
    /// back its caller's callee-saved registers before jumping and the functions below
    /// preserve them, so they are the physical caller's (as the unwinder recovered them);
    /// rsp pointed at the return address the physical frame will return through. Every
    /// other register was its callee's to overwrite: unknown.
    fn erased_register(&self, reg: u16) -> Option<Vec<u8>> {
        let caller = self.frames.get(self.index + 1)?;
        if reg == RSP {
            return Some(caller.sp.wrapping_sub(8).to_le_bytes().to_vec());
        }
        if !CALLEE_SAVED.contains(&reg) {
            return None;
        }
        self.frames
            .get(..=self.index + 1)?
            .iter()
            .rev()
            .find_map(|f| f.regs.get(reg))
            .map(|v| v.to_le_bytes().to_vec())
    }

    /// Where the function of the physical frame begins, in runtime addresses.
    fn function_entry(&self) -> Option<u64> {
        let frame = self.frames.get(self.index)?;
        let (_, _, off) = self.ins.store.symbol_at(RuntimeAddr(frame.lookup_pc()))?;
        frame.lookup_pc().checked_sub(off)
    }

    /// The argument `which` as the caller passed it: from the call site of the frame a tail
    /// call erased just outside this one, else from the caller's call site to this function.
    fn passed_by_caller(&self, which: Passed) -> Option<u64> {
        let key = (self.index, self.tail, which);
        if let Some(known) = self.memo.and_then(|m| m.0.borrow().get(&key).copied()) {
            return known;
        }
        let found = self.passed_by_caller_uncached(which);
        // A miss deeper in a chain may be the depth limit's: only a whole search's is kept.
        if let Some(memo) = self.memo.filter(|_| found.is_some() || self.depth == 0) {
            memo.0.borrow_mut().insert(key, found);
        }
        found
    }

    fn passed_by_caller_uncached(&self, which: Passed) -> Option<u64> {
        if self.depth >= MAX_ENTRY_DEPTH {
            return None;
        }
        let erased = tail_frames(self.ins.store, self.frames, self.index);
        if let Some(outer) = erased.get(self.tail) {
            let after = outer.lookup != outer.pc;
            return self.call_site_entry(
                outer.pc.0,
                outer.lookup.0,
                after,
                which,
                self.index,
                self.tail + 1,
                None,
            );
        }
        let callee = if erased.is_empty() {
            Some(self.function_entry()?)
        } else {
            None
        };
        let caller = self.frames.get(self.index + 1)?;
        self.call_site_entry(
            caller.pc,
            caller.pc.saturating_sub(1),
            true,
            which,
            self.index + 1,
            0,
            callee,
        )
    }

    /// The argument `which` (in a register, or for a formal parameter) as the frame at
    /// (`index`, `tail`) passed it to the frame inside it: the call site at `site_pc`
    /// (`after`: a return address; else the jump itself) of the function holding `lookup`,
    /// evaluated in that frame. With `callee`, the call site must be proven to have called
    /// the function beginning there.
    #[allow(clippy::too_many_arguments)]
    fn call_site_entry(
        &self,
        site_pc: u64,
        lookup: u64,
        after: bool,
        which: Passed,
        index: usize,
        tail: usize,
        callee: Option<u64>,
    ) -> Option<u64> {
        let module = self.ins.store.module_at(RuntimeAddr(lookup))?;
        let dwarf = module.file.dwarf()?;
        let lookup_file = module.bias.to_file(RuntimeAddr(lookup)).0;
        let site_file = module.bias.to_file(RuntimeAddr(site_pc)).0;
        let chain = dwarf.scopes_at(FileAddr(lookup_file))?;
        let site = dwarf
            .tree
            .call_site_at(&chain.unit, chain.function, site_file, after)?;
        let view = FrameView {
            index,
            tail,
            bias: module.bias.0,
            at_entry: false,
            depth: self.depth + 1,
            tls_module: Some(module),
            ..*self
        };
        if let Some(callee) = callee {
            if !view.site_calls(module, dwarf, &chain.unit, site, callee) {
                return None;
            }
        }
        let value = dwarf.tree.call_site_param(&chain.unit, site, which)?;
        // A value the caller keeps in its frame (`DW_OP_fbreg -64`: an array it passed)
        // needs the caller's frame base.
        let frame_base = chain
            .unit
            .entry_at(chain.function)
            .and_then(|f| loc::frame_base(&chain.unit, &f, &view, lookup_file));
        loc::evaluate_value(&value, &chain.unit, &view, frame_base)
    }

    /// Whether call site `site` (of `module`, evaluated in this view: the caller's frame)
    /// called the function beginning at runtime address `callee`: the function it names
    /// (by its address, or by name in the callee's module for one only declared here: a
    /// call through the PLT), or the address its `DW_AT_call_target` computes. A call
    /// through a pointer DWARF says nothing of proves nothing.
    fn site_calls(
        &self,
        module: &LoadedModule,
        dwarf: &DwarfInfo,
        unit: &UnitHandle,
        site: usize,
        callee: u64,
    ) -> bool {
        match dwarf.tree.call_site_callee(unit, site) {
            Callee::Function(die) => {
                let symbols = module.file.symbols();
                let entry_of = |name: &str| symbols.lookup_name_exact(name).map(|s| s.addr);
                if let Some(a) = dwarf.function_entry(die, &entry_of) {
                    return module.bias.to_runtime(FileAddr(a)).0 == callee;
                }
                let (Some(name), Some(there)) = (
                    dwarf.declared_name(die),
                    self.ins.store.module_at(RuntimeAddr(callee)),
                ) else {
                    return false;
                };
                there
                    .file
                    .symbols()
                    .lookup_name_exact(&name)
                    .is_some_and(|s| there.bias.to_runtime(s.addr).0 == callee)
            }
            Callee::Computed(expr) => loc::evaluate_value(&expr, unit, self, None) == Some(callee),
            Callee::Unknown => false,
        }
    }
}

impl FrameAccess for FrameView<'_> {
    /// A register in this frame. One the unwinder could not recover (a caller-saved
    /// register in a caller) has the value of the nearest inner frame that knows it, as in
    /// gdb: a location list that places a variable there at this pc says the compiler kept
    /// it there across the call (GCC's interprocedural register allocation does).
    fn register(&self, reg: u16) -> Option<Vec<u8>> {
        if self.tail > 0 {
            return self.erased_register(reg);
        }
        let inner = self.frames.get(..=self.index)?;
        if let Some(bytes) = vector_register(self.fpu, reg) {
            // No ABI preserves the vector registers across a call and CFI never says where
            // they were saved, so a caller sees the thread's current ones (gdb's rule too),
            // except beyond a signal frame, whose interrupted code had registers of its own.
            let crossed_signal = inner
                .iter()
                .skip(1)
                .any(|f| matches!(f.source, FrameSource::SignalFrame));
            return (!crossed_signal).then_some(bytes);
        }
        inner
            .iter()
            .rev()
            .find_map(|f| f.regs.get(reg))
            .map(|v| v.to_le_bytes().to_vec())
    }

    fn cfa(&self) -> Option<u64> {
        // The CFA of a frame is the stack pointer of its caller just after the call returned;
        // an erased frame shares the physical frame's (the return address is the same).
        self.frames.get(self.index + 1).map(|f| f.sp)
    }

    fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        self.ins.read(addr, buf)
    }

    fn tls(&self, offset: u64) -> Option<u64> {
        let block = self.ins.tls_block(self.tls_module?)?;
        Some(block.wrapping_add(offset))
    }

    /// gdb's rule: the value comes from the call site of the frame just outside, which must
    /// be proven to have called this function. Outside a physical frame that is the first
    /// erased frame, whose jump is the call (proven when the erased frames were); outside the
    /// last erased frame, the physical caller's call, which called the outermost erased
    /// function. With no erased frames the caller's call must name this very function: a
    /// call that went elsewhere reached it through tail calls this path cannot prove, and
    /// its values were for another function.
    fn entry_value(&self, expr: &gimli::Expression<Reader>, unit: &UnitHandle) -> Option<u64> {
        let reg = single_register(expr, unit)?;
        if self.at_entry && self.tail == 0 {
            return self.register(reg).map(|b| le(&b));
        }
        self.passed_by_caller(Passed::InRegister(reg))
    }

    fn parameter_ref(&self, param: usize, _unit: &UnitHandle) -> Option<u64> {
        self.passed_by_caller(Passed::Parameter(param))
    }

    fn bias(&self) -> u64 {
        self.bias
    }
}

/// The bytes of DWARF register `reg` when it is one of the x86-64 psABI's vector or x87
/// registers: 17-32 xmm0-15, 33-40 st0-7 (80-bit), 64 mxcsr.
fn vector_register(fpu: Option<&FpRegs>, reg: u16) -> Option<Vec<u8>> {
    let fpu = fpu?;
    match reg {
        17..=32 => fpu.xmm(usize::from(reg - 17)).map(|b| b.to_vec()),
        33..=40 => fpu.st(usize::from(reg - 33)).map(|b| b.to_vec()),
        64 => Some(fpu.mxcsr().to_le_bytes().to_vec()),
        _ => None,
    }
}

fn le(bytes: &[u8]) -> u64 {
    let mut raw = [0u8; 8];
    let n = bytes.len().min(8);
    raw[..n].copy_from_slice(&bytes[..n]);
    u64::from_le_bytes(raw)
}

/// One variable of a frame.
pub struct FrameVarRow {
    pub name: String,
    pub param: bool,
    pub value: TypedValue,
    /// A parameter's value at the function's entry (`name@entry`), where it is known.
    pub entry: Option<TypedValue>,
}

impl FrameVarRow {
    /// A frame variable of a function in `file`, as a row.
    pub(super) fn of(v: FrameVar, file: &Arc<ModuleFile>) -> FrameVarRow {
        FrameVarRow {
            name: v.name,
            param: v.param,
            value: TypedValue {
                file: file.clone(),
                value: v.value,
            },
            entry: v.entry.map(|value| TypedValue {
                file: file.clone(),
                value,
            }),
        }
    }
}

/// A parameter of an unwind row, with its value at the function's entry where known.
#[derive(Clone)]
pub struct FrameParam {
    pub name: String,
    pub value: TypedValue,
    pub entry: Option<TypedValue>,
}

/// The frames tail calls erased between physical frame `physical` and its caller, innermost
/// first (see `SymbolStore::tail_calls`).
pub(super) fn tail_frames(
    store: &SymbolStore,
    frames: &[unwind::Frame],
    physical: usize,
) -> Vec<TailCall> {
    let (Some(callee), Some(caller)) = (frames.get(physical), frames.get(physical + 1)) else {
        return Vec::new();
    };
    // Only a return address leads to the caller's call site.
    if !matches!(caller.source, FrameSource::Cfi | FrameSource::FramePointer) {
        return Vec::new();
    }
    store.tail_calls(RuntimeAddr(callee.lookup_pc()), RuntimeAddr(caller.pc))
}

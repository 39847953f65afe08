//! The stack walk: the registers of frame 0, a way to read memory and the process's code in;
//! the list of frames out. Uses CFI (`.eh_frame`, `.debug_frame`) where it
//! covers a pc, recognizes the signal return trampoline, and falls back to the frame-pointer
//! chain where there is no CFI. Every step is bounded and every stop has a reason.

use std::cell::OnceCell;
use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::path::Path;

use super::cfi::{self, CfiError, CfiStep, CfiTables};
use super::regs::{read_u64, Loc, MemReader, UnwindRegs, RA, RBP, RSP};
use super::CodeMap;
use crate::symbols::addr::RuntimeAddr;
use crate::symbols::elf::ElfImage;

/// How a frame's registers were found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameSource {
    /// Frame 0: the registers given.
    Regs,
    /// From the callee's call frame information.
    Cfi,
    /// From the callee's saved frame pointer (no CFI covered the callee).
    FramePointer,
    /// From the `ucontext_t` a signal handler's frame holds: this frame was interrupted by a
    /// signal, so its pc is the exact instruction (not a return address) and every general
    /// register is known.
    SignalFrame,
}

#[derive(Clone, Debug)]
pub struct Frame {
    pub index: usize,
    pub pc: u64,
    /// The stack pointer while executing in this frame (the callee's CFA).
    pub sp: u64,
    /// Register values valid in this frame: callee-saved ones, rsp and rip; caller-saved
    /// registers are `None` except in frame 0 and in frames interrupted by a signal.
    pub regs: UnwindRegs,
    pub source: FrameSource,
}

impl Frame {
    /// The address to symbolize this frame by. A caller's pc is a return address, which for
    /// a call to a noreturn function is already past the calling function's end, so one
    /// byte back is looked up instead; frame 0 and interrupted frames are exact.
    pub fn lookup_pc(&self) -> u64 {
        match self.source {
            FrameSource::Regs | FrameSource::SignalFrame => self.pc,
            FrameSource::Cfi | FrameSource::FramePointer => self.pc.saturating_sub(1),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct UnwindLimits {
    pub max_frames: usize,
}

impl Default for UnwindLimits {
    fn default() -> Self {
        UnwindLimits { max_frames: 256 }
    }
}

/// glibc's `__restore_rt` (and musl's and Go's restorers): `mov rax, 15; syscall`, the
/// rt_sigreturn system call a signal handler returns into.
const SIGRETURN: [u8; 9] = [0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05];
/// Offset of `uc_mcontext.gregs` in `ucontext_t`: uc_flags (8), uc_link (8), uc_stack (24).
const UC_GREGS: u64 = 40;
/// DWARF register for each `gregs` slot REG_R8..REG_RIP (sys/ucontext.h order).
const GREGS_TO_DWARF: [u16; 17] = [8, 9, 10, 11, 12, 13, 14, 15, 5, 4, 6, 3, 1, 0, 2, 7, 16];
/// Frames walked at most whatever the caller asks: each costs memory reads and a frame.
const HARD_MAX_FRAMES: usize = 100_000;
/// A vDSO is a page or two; anything claiming more is not read.
const MAX_VDSO: usize = 1 << 20;
/// A frame-pointer link further than this above sp is not believed.
const MAX_FRAME_SIZE: u64 = 256 << 20;

/// Functions at the bottom of every stack: when unwinding stops in one of them, the stack
/// was walked to its end.
const OUTERMOST: [&str; 6] = [
    "_start", "__start", "clone", "__clone", "clone3", "__clone3",
];

/// Walks the stack from `frame0`. Returns the frames, innermost first, and why the walk
/// stopped early (`None` when it reached the outermost frame).
pub fn unwind(
    map: &dyn CodeMap,
    frame0: &UnwindRegs,
    read_mem: &dyn Fn(u64, &mut [u8]) -> bool,
    limits: &UnwindLimits,
) -> (Vec<Frame>, Option<String>) {
    let mut frames = Vec::new();
    if limits.max_frames == 0 {
        return (frames, Some("frame limit is 0".into()));
    }
    let Some(pc) = frame0.rip() else {
        return (frames, Some("pc of frame 0 unknown".into()));
    };
    let Some(sp) = frame0.rsp() else {
        return (frames, Some("sp of frame 0 unknown".into()));
    };
    frames.push(Frame {
        index: 0,
        pc,
        sp,
        regs: frame0.clone(),
        source: FrameSource::Regs,
    });
    let mut seen: HashSet<(u64, u64)> = HashSet::from([(pc, sp)]);
    let max_frames = limits.max_frames.min(HARD_MAX_FRAMES);
    let vdso = Vdso {
        range: map.vdso_range().map(|(s, e)| (s.0, e.0)),
        mem: read_mem,
        image: OnceCell::new(),
    };

    loop {
        let Some(cur) = frames.last().cloned() else {
            return (frames, Some("no frame".into()));
        };
        if frames.len() >= max_frames {
            return (
                frames,
                Some(format!("stopped at the frame limit ({max_frames})")),
            );
        }
        let (regs, source) = match step(map, &vdso, &cur, read_mem) {
            Step::Caller(regs, source) => (*regs, source),
            Step::Outermost => return (frames, None),
            Step::Stop(reason) => match clone_parent_caller(map, &cur, read_mem) {
                Some(regs) => (regs, FrameSource::Cfi),
                None => {
                    let end = in_outermost_function(map, cur.lookup_pc());
                    return (frames, (!end).then_some(reason));
                }
            },
        };
        let Some(pc) = regs.rip() else {
            return (
                frames,
                Some(format!("return address of frame {} unreadable", cur.index)),
            );
        };
        if pc == 0 {
            return (frames, None);
        }
        let Some(sp) = regs.rsp() else {
            return (
                frames,
                Some(format!("stack pointer of frame {} unknown", cur.index + 1)),
            );
        };
        // A signal handler may run on an alternate stack, so the interrupted frame may be
        // anywhere; elsewhere the stack must grow towards higher addresses.
        if source != FrameSource::SignalFrame && sp <= cur.sp {
            return (
                frames,
                Some(format!(
                    "stack did not grow ({:#x} -> {sp:#x}): stopped",
                    cur.sp
                )),
            );
        }
        if !seen.insert((pc, sp)) {
            return (
                frames,
                Some(format!("frame {pc:#x} (sp {sp:#x}) repeats: stopped")),
            );
        }
        let index = frames.len();
        frames.push(Frame {
            index,
            pc,
            sp,
            regs,
            source,
        });
    }
}

enum Step {
    Caller(Box<UnwindRegs>, FrameSource),
    Outermost,
    Stop(String),
}

/// The vDSO image and its unwind tables, read from memory on first need during one walk.
struct Vdso<'a> {
    range: Option<(u64, u64)>,
    mem: MemReader<'a>,
    image: OnceCell<Option<(ElfImage, CfiTables)>>,
}

impl Vdso<'_> {
    /// The image, its tables and its load address when `addr` is inside the vDSO.
    fn get(&self, addr: u64) -> Option<(&ElfImage, &CfiTables, u64)> {
        let (start, end) = self.range?;
        if !(start..end).contains(&addr) {
            return None;
        }
        let image = self.image.get_or_init(|| {
            let len = usize::try_from(end - start).ok()?;
            if len > MAX_VDSO {
                return None;
            }
            let mut bytes = vec![0u8; len];
            (self.mem)(start, &mut bytes).then_some(())?;
            let image = ElfImage::parse(bytes, Path::new("[vdso]")).ok()?;
            let tables = CfiTables::discover(&image);
            Some((image, tables))
        });
        image.as_ref().map(|(image, tables)| (image, tables, start))
    }
}

/// One frame up from `cur`.
fn step(map: &dyn CodeMap, vdso: &Vdso<'_>, cur: &Frame, mem: MemReader<'_>) -> Step {
    if is_sigreturn(map, cur.pc, mem) {
        return signal_frame(cur, mem);
    }
    let lookup = cur.lookup_pc();
    let (tables, bias) = match map.code_at(RuntimeAddr(lookup)) {
        Some(code) => (code.tables, code.bias.0),
        None => match vdso.get(lookup) {
            Some((_, tables, start)) => (tables, start),
            None => {
                return Step::Stop(format!(
                    "no unwind info for {:#x}: not in any loaded module: stopped",
                    cur.pc
                ))
            }
        },
    };
    let file_pc = lookup.wrapping_sub(bias);
    // Last line of defence against a parser bug on hostile tables: a panic inside the CFI
    // code ends this walk with a reason instead of taking the debugger down.
    let guarded = |tables: &CfiTables| {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            cfi::step(tables, bias, file_pc, &cur.regs, mem)
        }))
    };
    let mut result = guarded(tables);
    if let Ok(Err(CfiError::NoInfo)) = result {
        // The image's own tables do not cover pc: a separate debug file's `.debug_frame` may.
        if let Some(separate) = map.separate_cfi(RuntimeAddr(lookup)) {
            result = guarded(separate);
        }
    }
    let Ok(result) = result else {
        return Step::Stop(format!(
            "unwind info for {:#x} ({}) could not be parsed: stopped",
            cur.pc,
            describe(map, lookup)
        ));
    };
    match result {
        Ok(CfiStep::Caller(regs)) => Step::Caller(regs, FrameSource::Cfi),
        Ok(CfiStep::Outermost) => Step::Outermost,
        Err(CfiError::Failed(why)) => Step::Stop(format!(
            "unwind info for {:#x} ({}) unusable: {why}: stopped",
            cur.pc,
            describe(map, lookup)
        )),
        Err(CfiError::NoInfo) => match frame_pointer(cur, mem) {
            Some(regs) => Step::Caller(Box::new(regs), FrameSource::FramePointer),
            None => Step::Stop(format!(
                "no unwind info for {:#x} ({}) and no usable frame pointer: stopped",
                cur.pc,
                describe(map, lookup)
            )),
        },
    }
}

fn describe(map: &dyn CodeMap, addr: u64) -> String {
    let in_vdso = map
        .vdso_range()
        .is_some_and(|(s, e)| (s.0..e.0).contains(&addr));
    let code = map.code_at(RuntimeAddr(addr));
    let module = match &code {
        Some(c) => c.name,
        None if in_vdso => "[vdso]",
        None => "?",
    };
    match map.function_at(RuntimeAddr(addr)) {
        Some((s, _)) => format!("{} in {module}", s.display_name()),
        None => module.to_string(),
    }
}

/// The caller of a thread stopped inside glibc's `clone`/`clone3` as the parent (at its
/// system call, a thread being made): glibc's tables cover the child's side (whose return
/// address is undefined: the bottom of its stack) and the instructions before the call,
/// not the parent's way back from it, where the walk ended silently at `#0 clone3`, as
/// though the thread had no callers. The parent's side touches no stack before its `ret`,
/// so the return address is at rsp; taken only for frame 0 and only when it points into
/// loaded code. The callee-saved registers are as they were.
fn clone_parent_caller(map: &dyn CodeMap, cur: &Frame, mem: MemReader<'_>) -> Option<UnwindRegs> {
    if cur.index != 0 {
        return None;
    }
    let (s, _) = map.function_at(RuntimeAddr(cur.pc))?;
    if !matches!(&*s.name, "clone" | "__clone" | "clone3" | "__clone3") {
        return None;
    }
    let sp = cur.regs.rsp()?;
    let ra = read_u64(mem, sp)?;
    map.code_at(RuntimeAddr(ra))?;
    let mut regs = UnwindRegs::default();
    for n in [3u16, 6, 12, 13, 14, 15] {
        if let Some(v) = cur.regs.get(n) {
            regs.set_at(n, v, cur.regs.loc(n));
        }
    }
    regs.set_at(RA, ra, Loc::At(sp));
    regs.set(RSP, sp.wrapping_add(8));
    Some(regs)
}

fn in_outermost_function(map: &dyn CodeMap, addr: u64) -> bool {
    let Some((s, _)) = map.function_at(RuntimeAddr(addr)) else {
        return false;
    };
    let entry = map
        .code_at(RuntimeAddr(addr))
        .is_some_and(|c| c.is_exe && s.addr == c.image.entry);
    OUTERMOST.contains(&&*s.name) || entry
}

/// True when `pc` is at the rt_sigreturn trampoline (or at its `syscall`). The bytes come
/// from the module's file when there is one, so a breakpoint planted there does not hide it.
fn is_sigreturn(map: &dyn CodeMap, pc: u64, mem: MemReader<'_>) -> bool {
    let at = |addr: u64| -> bool {
        if let Some(c) = map.code_at(RuntimeAddr(addr)) {
            if let Some(bytes) = c.image.file_bytes(c.bias.to_file(RuntimeAddr(addr)), 9) {
                return bytes == SIGRETURN;
            }
        }
        let mut buf = [0u8; 9];
        mem(addr, &mut buf) && buf == SIGRETURN
    };
    at(pc) || pc.checked_sub(7).is_some_and(at)
}

/// The frame a signal interrupted, from the `ucontext_t` at the trampoline's stack pointer.
/// The kernel's rt_sigframe is `{ char *pretcode; ucontext_t uc; siginfo_t info; }`; the
/// handler's `ret` popped pretcode, leaving sp at `uc`.
fn signal_frame(cur: &Frame, mem: MemReader<'_>) -> Step {
    let Some(base) = cur.regs.rsp().and_then(|sp| sp.checked_add(UC_GREGS)) else {
        return Step::Stop("signal frame without a stack pointer: stopped".into());
    };
    let mut buf = [0u8; 8 * 17];
    if !mem(base, &mut buf) {
        return Step::Stop(format!("signal context at {base:#x} unreadable: stopped"));
    }
    let mut regs = UnwindRegs::default();
    for (i, (chunk, &reg)) in buf.chunks_exact(8).zip(GREGS_TO_DWARF.iter()).enumerate() {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        // sigreturn loads the interrupted frame's registers from this very slot.
        regs.set_at(reg, u64::from_le_bytes(word), Loc::At(base + 8 * i as u64));
    }
    Step::Caller(Box::new(regs), FrameSource::SignalFrame)
}

/// The caller by the frame-pointer convention: `[rbp]` is the caller's rbp and `[rbp+8]` the
/// return address. Only when rbp looks like a link in this stack.
fn frame_pointer(cur: &Frame, mem: MemReader<'_>) -> Option<UnwindRegs> {
    let rbp = cur.regs.rbp()?;
    if rbp % 8 != 0 || rbp < cur.sp || rbp - cur.sp > MAX_FRAME_SIZE {
        return None;
    }
    let saved_rbp = read_u64(mem, rbp)?;
    let ret = read_u64(mem, rbp.checked_add(8)?)?;
    let mut regs = UnwindRegs::default();
    regs.set_at(RA, ret, Loc::At(rbp + 8));
    regs.set(RSP, rbp.checked_add(16)?);
    regs.set_at(RBP, saved_rbp, Loc::At(rbp));
    Some(regs)
}

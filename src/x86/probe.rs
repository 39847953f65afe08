//! A probe inside the target: the machine code of a tracepoint's trampoline (whether the
//! bytes a jump to it would cover can be moved there is `probe_cover`'s).
//!
//! At the probed instruction a 5-byte `jmp rel32` goes to the trampoline, which saves every
//! register and the flags, counts the hit, reserves a record in a ring shared with scry
//! (atomic, any number of threads), fills it with what the tracepoint collects, commits it,
//! restores everything, runs the instructions the jump covered (moved, their rip-relative
//! operands and branches re-encoded for the new address) and jumps back after them.
//! Memory is copied with `process_vm_readv` on the process itself, which fails on a bad
//! address with an error code instead of a fault: a bad pointer never crashes the program,
//! the record says it was unreadable.
//!
//! Pure: bytes and addresses in, code out. What is *not* here: finding room for the
//! trampoline near the site, writing it, or reading the ring (the backend and the session).

use iced_x86::{Code, Encoder, Instruction, MemoryOperand, Register};

use super::displace::is_near_branch as near;
pub(crate) use super::probe_cover::{cover, jump, Cover, Function};

/// The ring's header, shared with scry (offsets in bytes; each counter on its own cache line).
pub(crate) const HEAD: u64 = 0;
pub(crate) const TAIL: u64 = 64;
pub(crate) const HITS: u64 = 128;
pub(crate) const LOST: u64 = 192;
pub(crate) const FLAGS: u64 = 256;
/// Hits a probe's condition turned away (no record written).
pub(crate) const FILTERED: u64 = 320;
/// Records start one page in.
pub(crate) const DATA: u64 = 4096;
/// `FLAGS` bits: count hits only, write no record (nobody listens, or the probe is being
/// taken out: a thread waiting for room must not wait for a reader that is gone).
pub(crate) const FLAG_COUNT_ONLY: u64 = 1;

/// A record's fixed head: the sequence word (ticket + 1, written last), the thread id, the
/// time stamp counter at the hit. What the tracepoint collects follows.
pub(crate) const RECORD_SEQ: u32 = 0;
pub(crate) const RECORD_TID: u32 = 8;
pub(crate) const RECORD_TSC: u32 = 16;
pub(crate) const RECORD_ITEMS: u32 = 24;

/// Where a collected value comes from: a register as it was at the site, or a constant
/// address (for memory only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    Gpr(Register),
    Rsp,
    Rip,
    Rflags,
    Xmm(u8),
    Abs(u64),
}

/// One thing a record holds, at byte `at` of the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Item {
    /// 8 bytes (16 for an xmm register).
    Reg { src: Source, at: u32 },
    /// `len` bytes from `src + disp`, after the call's result (8 bytes: how many were
    /// copied, or -errno) and the address they were read at (8 bytes).
    Mem {
        src: Source,
        disp: i64,
        len: u32,
        at: u32,
    },
}

/// A condition the probe tests before it reserves a record: a register as it was at the
/// site, compared as an unsigned 64-bit number with a constant (how JavaScript compares the
/// register's exact value with a non-negative integer). A hit it turns away counts in
/// `FILTERED` and writes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cond {
    pub src: Source,
    pub op: CondOp,
    pub value: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CondOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CondOp {
    /// The branch taken when the condition is false (unsigned compares).
    fn unless(self) -> Code {
        match self {
            CondOp::Eq => Code::Jne_rel32_64,
            CondOp::Ne => Code::Je_rel32_64,
            CondOp::Lt => Code::Jae_rel32_64,
            CondOp::Le => Code::Ja_rel32_64,
            CondOp::Gt => Code::Jbe_rel32_64,
            CondOp::Ge => Code::Jb_rel32_64,
        }
    }
}

/// The shared ring, as the target sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ring {
    /// The header's address in the target.
    pub header: u64,
    /// Records in the ring (a power of two).
    pub slots: u64,
    /// log2 of a record's size.
    pub slot_shift: u32,
}

/// What a probe's trampoline does.
pub(crate) struct Probe<'a> {
    pub site: u64,
    /// The process id, for `process_vm_readv` on itself.
    pub pid: u32,
    pub ring: Ring,
    pub items: &'a [Item],
    /// A full ring: wait for scry to make room (else drop the record and count it lost).
    pub wait: bool,
    pub cover: &'a Cover,
    /// Records only for hits where this holds (see [`Cond`]).
    pub cond: Option<Cond>,
}

/// The system calls the trampoline makes.
const SYS_SCHED_YIELD: u32 = 24;
const SYS_GETTID: u32 = 186;
const SYS_PROCESS_VM_READV: u32 = 310;
/// Turns of `pause` before a waiting probe yields its CPU (scry may need it to drain).
const SPINS: u32 = 256;
/// Yields a probe waits for room before it gives the record up as lost: scry reads the
/// rings every 5 ms while the program runs, so only a scry that is gone (killed, the
/// program let go of) leaves a probe waiting this long (some seconds).
const YIELDS: u32 = 1 << 22;

/// Bytes below the saved registers for the iovecs of `process_vm_readv`.
const SCRATCH: i64 = 64;
/// The x86-64 red zone, which the interrupted code may be using below its rsp.
const RED_ZONE: i64 = 128;
/// Pushed after the red zone, first to last (so the last is at the lowest address).
const SAVED: [Register; 15] = [
    Register::RAX,
    Register::RCX,
    Register::RDX,
    Register::RBX,
    Register::RBP,
    Register::RSI,
    Register::RDI,
    Register::R8,
    Register::R9,
    Register::R10,
    Register::R11,
    Register::R12,
    Register::R13,
    Register::R14,
    Register::R15,
];

/// Where a saved register is, from rsp once the scratch area is reserved.
fn saved_at(reg: Register) -> Option<i64> {
    let i = SAVED.iter().position(|r| *r == reg)?;
    Some(SCRATCH + 8 * (SAVED.len() - 1 - i) as i64)
}
const SAVED_FLAGS: i64 = SCRATCH + 8 * SAVED.len() as i64;
/// The site's rsp, from rsp once the scratch area is reserved.
const SITE_RSP: i64 = SAVED_FLAGS + 8 + RED_ZONE;

/// A trampoline's code, and where each moved instruction runs in it: (address in the
/// trampoline, the original instruction's address), the jump back last (to the address
/// after the covered bytes). A thread stopped at one of these is, registers and all, the
/// program at the original address.
pub(crate) struct Trampoline {
    pub code: Vec<u8>,
    pub moved: Vec<(u64, u64)>,
    /// Where the registers start to be restored: a thread stopped here has the program's
    /// registers in the frame at its rsp (see [`saved_frame`]).
    pub restore: u64,
}

/// Bytes from rsp, at a trampoline's `restore`, that hold the program's registers.
pub(crate) const FRAME_LEN: usize = SITE_RSP as usize - RED_ZONE as usize;

/// The program's registers as a trampoline saved them.
pub(crate) struct SavedFrame {
    /// Each general register but rsp.
    pub regs: Vec<(Register, u64)>,
    pub flags: u64,
    pub rsp: u64,
}

/// The registers a trampoline saved, read from `frame` (`FRAME_LEN` bytes at rsp when the
/// thread is at `restore`; `frame_at` is that rsp).
pub(crate) fn saved_frame(frame: &[u8], frame_at: u64) -> Option<SavedFrame> {
    let word = |off: i64| -> Option<u64> {
        let at = usize::try_from(off).ok()?;
        Some(u64::from_le_bytes(frame.get(at..at + 8)?.try_into().ok()?))
    };
    let regs = SAVED
        .iter()
        .map(|r| Some((*r, word(saved_at(*r)?)?)))
        .collect::<Option<Vec<_>>>()?;
    Some(SavedFrame {
        regs,
        flags: word(SAVED_FLAGS)?,
        rsp: frame_at + SITE_RSP as u64,
    })
}

/// The trampoline's code, to be placed at `at`.
pub(crate) fn trampoline(at: u64, p: &Probe<'_>) -> Result<Trampoline, String> {
    use Register::*;
    let mut a = Asm::default();
    let hdr = |off: u64| MemoryOperand::with_base_displ(RBX, off as i64);
    let rec = |off: u32| MemoryOperand::with_base_displ(R12, off as i64);
    let stack = |off: i64| MemoryOperand::with_base_displ(RSP, off);
    let (out, reserve, retry, room, no_room) =
        (a.label(), a.label(), a.label(), a.label(), a.label());

    a.i(Instruction::with2(Code::Lea_r64_m, RSP, stack(-RED_ZONE)));
    a.i(Ok(Instruction::with(Code::Pushfq)));
    for r in SAVED {
        a.i(Instruction::with1(Code::Push_r64, r));
    }
    a.i(Instruction::with2(Code::Sub_rm64_imm8, RSP, SCRATCH as i32));
    a.i(Instruction::with2(Code::Mov_r64_imm64, RBX, p.ring.header));
    a.i(Instruction::with1(Code::Inc_rm64, hdr(HITS)).map(locked));
    a.i(Instruction::with2(
        Code::Test_rm8_imm8,
        hdr(FLAGS),
        FLAG_COUNT_ONLY as u32,
    ));
    a.br(Code::Jne_rel32_64, out);
    let filtered = p.cond.map(|_| a.label());
    if let (Some(c), Some(filtered)) = (p.cond, filtered) {
        if matches!(c.src, Source::Xmm(_) | Source::Abs(_)) {
            return Err("a probe's condition compares a general register".into());
        }
        a.load(RAX, c.src, p.site)?;
        a.i(Instruction::with2(Code::Mov_r64_imm64, RCX, c.value));
        a.i(Instruction::with2(Code::Cmp_r64_rm64, RAX, RCX));
        a.br(c.op.unless(), filtered);
    }
    if p.wait {
        a.i(Instruction::with2(Code::Mov_r32_imm32, EDX, SPINS));
        a.i(Instruction::with2(Code::Mov_r32_imm32, R8D, YIELDS));
    }
    // Reserve a ticket: head moves on by one if the ring has room.
    a.at(reserve);
    a.i(Instruction::with2(Code::Mov_r64_rm64, RAX, hdr(HEAD)));
    a.at(retry);
    a.i(Instruction::with2(Code::Mov_r64_rm64, RCX, RAX));
    a.i(Instruction::with2(Code::Sub_r64_rm64, RCX, hdr(TAIL)));
    a.i(Instruction::with2(
        Code::Cmp_rm64_imm32,
        RCX,
        p.ring.slots as i32,
    ));
    a.br(Code::Jb_rel32_64, room);
    // A head read before scry moved the tail past it: read it again.
    a.i(Instruction::with2(Code::Test_rm64_r64, RCX, RCX));
    a.br(Code::Js_rel32_64, reserve);
    a.at(no_room);
    let lost = a.label();
    if p.wait {
        // Full: wait for scry, unless scry asked for counting only meanwhile, or scry has
        // not made room for a long while (it is gone: the program must not hang on it).
        a.i(Instruction::with2(
            Code::Test_rm8_imm8,
            hdr(FLAGS),
            FLAG_COUNT_ONLY as u32,
        ));
        a.br(Code::Jne_rel32_64, lost);
        a.i(Ok(Instruction::with(Code::Pause)));
        a.i(Instruction::with1(Code::Dec_rm32, EDX));
        a.br(Code::Jne_rel32_64, reserve);
        a.i(Instruction::with1(Code::Dec_rm32, R8D));
        a.br(Code::Je_rel32_64, lost);
        a.i(Instruction::with2(
            Code::Mov_r32_imm32,
            EAX,
            SYS_SCHED_YIELD,
        ));
        a.i(Ok(Instruction::with(Code::Syscall)));
        a.i(Instruction::with2(Code::Mov_r32_imm32, EDX, SPINS));
        a.br(Code::Jmp_rel32_64, reserve);
    }
    a.at(lost);
    a.i(Instruction::with1(Code::Inc_rm64, hdr(LOST)).map(locked));
    a.br(Code::Jmp_rel32_64, out);
    if let Some(filtered) = filtered {
        a.at(filtered);
        a.i(Instruction::with1(Code::Inc_rm64, hdr(FILTERED)).map(locked));
        a.br(Code::Jmp_rel32_64, out);
    }
    a.at(room);
    a.i(Instruction::with2(
        Code::Lea_r64_m,
        RCX,
        MemoryOperand::with_base_displ(RAX, 1),
    ));
    a.i(Instruction::with2(Code::Cmpxchg_rm64_r64, hdr(HEAD), RCX).map(locked));
    a.br(Code::Jne_rel32_64, retry);
    // r13: the ticket; r12: its record.
    a.i(Instruction::with2(Code::Mov_r64_rm64, R13, RAX));
    a.i(Instruction::with2(Code::Mov_r64_rm64, R12, RAX));
    a.i(Instruction::with2(
        Code::And_rm64_imm32,
        R12,
        (p.ring.slots - 1) as i32,
    ));
    a.i(Instruction::with2(
        Code::Shl_rm64_imm8,
        R12,
        p.ring.slot_shift,
    ));
    a.i(Instruction::with2(
        Code::Lea_r64_m,
        R12,
        MemoryOperand::with_base_index_scale_displ_size(RBX, R12, 1, DATA as i64, 8),
    ));
    a.i(Instruction::with2(Code::Mov_r32_imm32, EAX, SYS_GETTID));
    a.i(Ok(Instruction::with(Code::Syscall)));
    a.i(Instruction::with2(Code::Mov_rm32_r32, rec(RECORD_TID), EAX));
    a.i(Ok(Instruction::with(Code::Rdtsc)));
    a.i(Instruction::with2(Code::Shl_rm64_imm8, RDX, 32u32));
    a.i(Instruction::with2(Code::Or_r64_rm64, RAX, RDX));
    a.i(Instruction::with2(Code::Mov_rm64_r64, rec(RECORD_TSC), RAX));
    for item in p.items {
        match *item {
            Item::Reg {
                src: Source::Xmm(n),
                at,
            } => {
                let x = xmm(n)?;
                a.i(Instruction::with2(Code::Movdqu_xmmm128_xmm, rec(at), x));
            }
            Item::Reg { src, at } => {
                a.load(RAX, src, p.site)?;
                a.i(Instruction::with2(Code::Mov_rm64_r64, rec(at), RAX));
            }
            Item::Mem { src, disp, len, at } => a.copy(src, disp, len, at, p)?,
        }
    }
    // Commit: the sequence word last (x86 stores are seen in order).
    a.i(Instruction::with2(
        Code::Lea_r64_m,
        RAX,
        MemoryOperand::with_base_displ(R13, 1),
    ));
    a.i(Instruction::with2(Code::Mov_rm64_r64, rec(RECORD_SEQ), RAX));
    a.at(out);
    a.i(Instruction::with2(Code::Add_rm64_imm8, RSP, SCRATCH as i32));
    for r in SAVED.iter().rev() {
        a.i(Instruction::with1(Code::Pop_r64, *r));
    }
    a.i(Ok(Instruction::with(Code::Popfq)));
    a.i(Instruction::with2(Code::Lea_r64_m, RSP, stack(RED_ZONE)));
    for insn in &p.cover.insns {
        let mut moved = *insn;
        if near(&moved) {
            moved.as_near_branch();
        }
        a.items.push(Part::Moved(moved, insn.ip()));
    }
    if !p.cover.ends_in_jump {
        let back = p.site + p.cover.len as u64;
        let jump = Instruction::with_branch(Code::Jmp_rel32_64, back);
        match jump {
            Ok(j) => a.items.push(Part::Moved(j, back)),
            Err(e) => a.i(Err(e)),
        }
    }
    a.assemble(at, out)
}

fn locked(mut insn: Instruction) -> Instruction {
    insn.set_has_lock_prefix(true);
    insn
}

fn xmm(n: u8) -> Result<Register, String> {
    if n > 15 {
        return Err(format!("xmm{n}: only xmm0-xmm15 can be collected"));
    }
    Register::try_from(Register::XMM0 as usize + n as usize).map_err(|_| format!("xmm{n}"))
}

/// A label's number.
#[derive(Clone, Copy)]
struct Label(usize);

enum Part {
    Insn(Instruction),
    /// A branch (rel32 form) to a label.
    Branch(Code, Label),
    /// A covered instruction, re-encoded where it now runs, and where it was.
    Moved(Instruction, u64),
    Here(Label),
}

#[derive(Default)]
struct Asm {
    items: Vec<Part>,
    labels: usize,
    error: Option<String>,
}

impl Asm {
    fn label(&mut self) -> Label {
        self.labels += 1;
        Label(self.labels - 1)
    }

    fn at(&mut self, l: Label) {
        self.items.push(Part::Here(l));
    }

    fn i(&mut self, insn: Result<Instruction, iced_x86::IcedError>) {
        match insn {
            Ok(i) => self.items.push(Part::Insn(i)),
            Err(e) => {
                self.error.get_or_insert(e.to_string());
            }
        }
    }

    fn br(&mut self, code: Code, to: Label) {
        self.items.push(Part::Branch(code, to));
    }

    /// `dst` = the value `src` had at the site.
    fn load(&mut self, dst: Register, src: Source, site: u64) -> Result<(), String> {
        let stack = |off: i64| MemoryOperand::with_base_displ(Register::RSP, off);
        match src {
            Source::Gpr(r) => {
                let off = saved_at(r).ok_or_else(|| format!("{r:?} cannot be collected"))?;
                self.i(Instruction::with2(Code::Mov_r64_rm64, dst, stack(off)));
            }
            Source::Rsp => self.i(Instruction::with2(Code::Lea_r64_m, dst, stack(SITE_RSP))),
            Source::Rflags => self.i(Instruction::with2(
                Code::Mov_r64_rm64,
                dst,
                stack(SAVED_FLAGS),
            )),
            Source::Rip => self.i(Instruction::with2(Code::Mov_r64_imm64, dst, site)),
            Source::Abs(addr) => self.i(Instruction::with2(Code::Mov_r64_imm64, dst, addr)),
            Source::Xmm(_) => return Err("an xmm register is no address".into()),
        }
        Ok(())
    }

    /// Copies `len` bytes at `src + disp` into the record at `at + 16`, the call's result at
    /// `at` and the address at `at + 8`. The remote range is split at its first page boundary, so a string that ends
    /// before an unmapped page is still read up to it (the call never splits one iovec).
    fn copy(
        &mut self,
        src: Source,
        disp: i64,
        len: u32,
        at: u32,
        p: &Probe<'_>,
    ) -> Result<(), String> {
        use Register::*;
        let stack = |off: i64| MemoryOperand::with_base_displ(RSP, off);
        let len = len as i32;
        self.load(R14, src, p.site)?;
        if disp != 0 {
            let d = i32::try_from(disp).map_err(|_| format!("offset {disp} is too large"))?;
            self.i(Instruction::with2(
                Code::Lea_r64_m,
                R14,
                MemoryOperand::with_base_displ(R14, d as i64),
            ));
        }
        self.i(Instruction::with2(
            Code::Mov_rm64_r64,
            MemoryOperand::with_base_displ(R12, at as i64 + 8),
            R14,
        ));
        // local iovec at [rsp]: the record's bytes.
        self.i(Instruction::with2(
            Code::Lea_r64_m,
            RAX,
            MemoryOperand::with_base_displ(R12, at as i64 + 16),
        ));
        self.i(Instruction::with2(Code::Mov_rm64_r64, stack(0), RAX));
        self.i(Instruction::with2(Code::Mov_rm64_imm32, stack(8), len));
        // rcx = min(len, bytes to the page's end)
        let fits = self.label();
        self.i(Instruction::with2(Code::Mov_r32_rm32, EAX, R14D));
        self.i(Instruction::with2(Code::And_rm32_imm32, EAX, 4095u32));
        self.i(Instruction::with2(Code::Mov_r32_imm32, ECX, 4096u32));
        self.i(Instruction::with2(Code::Sub_r64_rm64, RCX, RAX));
        self.i(Instruction::with2(Code::Cmp_rm64_imm32, RCX, len));
        self.br(Code::Jbe_rel32_64, fits);
        self.i(Instruction::with2(Code::Mov_r32_imm32, ECX, len as u32));
        self.at(fits);
        // remote iovecs at [rsp+16] and [rsp+32]
        self.i(Instruction::with2(Code::Mov_rm64_r64, stack(16), R14));
        self.i(Instruction::with2(Code::Mov_rm64_r64, stack(24), RCX));
        self.i(Instruction::with2(
            Code::Lea_r64_m,
            RAX,
            MemoryOperand::with_base_index_scale_displ_size(R14, RCX, 1, 0, 0),
        ));
        self.i(Instruction::with2(Code::Mov_rm64_r64, stack(32), RAX));
        self.i(Instruction::with2(Code::Mov_r32_imm32, EAX, len as u32));
        self.i(Instruction::with2(Code::Sub_r64_rm64, RAX, RCX));
        self.i(Instruction::with2(Code::Mov_rm64_r64, stack(40), RAX));
        self.i(Instruction::with2(Code::Mov_r32_imm32, EDI, p.pid));
        self.i(Instruction::with2(Code::Mov_r64_rm64, RSI, RSP));
        self.i(Instruction::with2(Code::Mov_r32_imm32, EDX, 1u32));
        self.i(Instruction::with2(Code::Lea_r64_m, R10, stack(16)));
        self.i(Instruction::with2(Code::Mov_r32_imm32, R8D, 2u32));
        self.i(Instruction::with2(Code::Xor_r32_rm32, R9D, R9D));
        self.i(Instruction::with2(
            Code::Mov_r32_imm32,
            EAX,
            SYS_PROCESS_VM_READV,
        ));
        self.i(Ok(Instruction::with(Code::Syscall)));
        self.i(Instruction::with2(
            Code::Mov_rm64_r64,
            MemoryOperand::with_base_displ(R12, at as i64),
            RAX,
        ));
        Ok(())
    }

    /// Two passes: the first places every label (each part's size does not depend on where
    /// labels are, branches being rel32), the second encodes.
    fn assemble(self, at: u64, restore: Label) -> Result<Trampoline, String> {
        if let Some(e) = self.error {
            return Err(format!("probe code: {e}"));
        }
        let mut places = vec![0u64; self.labels];
        for pass in 0..2 {
            let mut enc = Encoder::new(64);
            let mut ip = at;
            let mut moved = Vec::new();
            for part in &self.items {
                if let Part::Moved(_, from) = part {
                    moved.push((ip, *from));
                }
                let encoded = match part {
                    Part::Here(l) => {
                        places[l.0] = ip;
                        continue;
                    }
                    Part::Insn(i) => enc.encode(i, ip).map_err(|e| format!("probe code: {e}")),
                    Part::Moved(i, _) => enc
                        .encode(i, ip)
                        .map_err(|e| format!("the covered {i} cannot run at {ip:#x}: {e}")),
                    Part::Branch(code, l) => {
                        let to = if pass == 0 { ip } else { places[l.0] };
                        Instruction::with_branch(*code, to)
                            .and_then(|i| enc.encode(&i, ip))
                            .map_err(|e| format!("probe code: {e}"))
                    }
                };
                ip += encoded? as u64;
            }
            if pass == 1 {
                return Ok(Trampoline {
                    code: enc.take_buffer(),
                    moved,
                    restore: places[restore.0],
                });
            }
        }
        unreachable!("two passes")
    }
}

#[cfg(test)]
#[path = "probe_tests.rs"]
mod tests;

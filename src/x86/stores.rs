//! What one instruction is about to write, decoded before it runs: the memory it stores to
//! (addresses computed with the registers as they are now) and whether it changes the
//! floating-point or vector state. A recorder reads the old bytes there, lets the
//! instruction run, and reads the new ones.
//!
//! Under single-stepping a `rep`-prefixed string instruction runs one iteration per step
//! (the CPU traps after each), so its store is one element wide. `xsave` and its kin store
//! as much as the enabled state components take, which only the kernel's area size says: the
//! caller passes it.

use iced_x86::{
    Code, Decoder, DecoderOptions, Instruction, InstructionInfoFactory, Mnemonic, OpAccess,
    Register,
};

/// What an instruction stores.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Stores {
    /// `(address, length)` of every memory store, in the order decoded.
    pub memory: Vec<(u64, u32)>,
    /// It writes an x87, MMX, SSE, AVX or mask register, or MXCSR.
    pub vector: bool,
    /// It is a system call (`syscall`): what the kernel writes is the call's, not the
    /// instruction's.
    pub syscall: bool,
}

/// Why an instruction's stores cannot be told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unknowable {
    /// The bytes do not decode.
    Undecodable,
    /// A memory operand's address needs a register the caller could not give.
    Address(&'static str),
    /// A 32-bit system call (`int 0x80`, `sysenter`), whose writes are not known.
    Kernel,
}

impl std::fmt::Display for Unknowable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unknowable::Undecodable => write!(f, "the instruction does not decode"),
            Unknowable::Address(what) => write!(f, "its store address needs {what}"),
            Unknowable::Kernel => write!(f, "a 32-bit system call, whose writes are not known"),
        }
    }
}

/// A decoder kept between instructions (its tables are allocated once).
pub(crate) struct StoreDecoder {
    factory: InstructionInfoFactory,
    /// Bytes `xsave` and its kin store: the size of the thread's XSAVE area.
    xsave_size: u32,
}

impl StoreDecoder {
    pub(crate) fn new(xsave_size: u32) -> Self {
        StoreDecoder {
            factory: InstructionInfoFactory::new(),
            xsave_size: xsave_size.max(512),
        }
    }

    /// Decodes the instruction at the start of `bytes` (at `ip`).
    pub(crate) fn decode(bytes: &[u8], ip: u64) -> Option<Instruction> {
        let insn = Decoder::with_ip(64, bytes, ip, DecoderOptions::NONE).decode();
        (!insn.is_invalid()).then_some(insn)
    }

    /// The stores of `insn` (decoded from `bytes`) with registers as `reg` gives them now
    /// (segment registers give their base: `fs`/`gs` the thread's, the others 0).
    pub(crate) fn stores(
        &mut self,
        insn: &Instruction,
        bytes: &[u8],
        reg: &dyn Fn(Register) -> Option<u64>,
    ) -> Result<Stores, Unknowable> {
        if insn.is_invalid() {
            return Err(Unknowable::Undecodable);
        }
        let info = self.factory.info(insn);
        // The 32-bit entries into the kernel take another table of calls: not followed.
        if insn.mnemonic() == Mnemonic::Sysenter
            || (insn.mnemonic() == Mnemonic::Int && insn.immediate8() == 0x80)
        {
            return Err(Unknowable::Kernel);
        }
        let mut out = Stores {
            syscall: insn.mnemonic() == Mnemonic::Syscall,
            ..Stores::default()
        };
        let save = save_area(insn.code());
        for mem in info.used_memory() {
            let writes = matches!(
                mem.access(),
                OpAccess::Write
                    | OpAccess::CondWrite
                    | OpAccess::ReadWrite
                    | OpAccess::ReadCondWrite
            );
            if !writes {
                continue;
            }
            let at = mem
                .virtual_address(0, |r, _, _| reg(r))
                .ok_or(Unknowable::Address("a register not read"))?;
            let len = match save {
                Some(Save::Fx) => 512,
                Some(Save::X) => self.xsave_size,
                // A rep-prefixed string instruction's operand has no size of its own (it
                // covers rcx elements); one step stores one element.
                None => match mem.memory_size().size() {
                    0 if insn.has_rep_prefix() || insn.has_repne_prefix() => {
                        insn.memory_size().size() as u32
                    }
                    n => n as u32,
                },
            };
            if len == 0 {
                return Err(Unknowable::Address("a store of no known size"));
            }
            out.memory.push((at, len));
        }
        // Scatter stores (vpscatter*): one element per index, which `used_memory` lists
        // with the index register's lanes; the loop above took them all.
        // Reading a vector register counts too: comparisons and conversions set MXCSR's
        // sticky exception flags without writing any register an operand names.
        out.vector = info
            .used_registers()
            .iter()
            .any(|u| u.access() != OpAccess::None && is_vector(u.register()))
            || writes_fp_implicitly(insn, bytes);
        Ok(out)
    }
}

/// A `rep`-prefixed string instruction run whole: its store's range, if it stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RepRun {
    /// `(address, length)` of every element it will store, or `None` (cmps, scas, lods).
    pub stores: Option<(u64, u64)>,
}

/// What `insn` does run whole, when it is a `rep` string instruction with 64-bit addresses
/// and `rcx` elements to go: the range its stores cover (forward, or backward with the
/// direction flag set).
pub(crate) fn rep_run(
    insn: &Instruction,
    reg: &dyn Fn(Register) -> Option<u64>,
    eflags: u64,
) -> Option<RepRun> {
    if !(insn.has_rep_prefix() || insn.has_repne_prefix()) || !insn.is_string_instruction() {
        return None;
    }
    if insn.memory_size().size() == 0 || insn.op_count() == 0 {
        return None;
    }
    // 32-bit addressing (a 0x67 prefix) counts in ecx and wraps: left to single steps.
    use iced_x86::OpKind as K;
    let narrow = (0..insn.op_count()).any(|i| {
        matches!(
            insn.op_kind(i),
            K::MemorySegSI
                | K::MemorySegESI
                | K::MemoryESDI
                | K::MemoryESEDI
                | K::MemorySegDI
                | K::MemorySegEDI
        )
    });
    if narrow {
        return None;
    }
    let stores = matches!(
        insn.mnemonic(),
        Mnemonic::Stosb
            | Mnemonic::Stosw
            | Mnemonic::Stosd
            | Mnemonic::Stosq
            | Mnemonic::Movsb
            | Mnemonic::Movsw
            | Mnemonic::Movsd
            | Mnemonic::Movsq
    );
    if !stores {
        return Some(RepRun { stores: None });
    }
    let size = insn.memory_size().size() as u64;
    let count = reg(Register::RCX)?;
    let rdi = reg(Register::RDI)?;
    let backward = eflags & (1 << 10) != 0;
    let len = count.checked_mul(size)?;
    let start = if backward {
        rdi.checked_sub(len.checked_sub(size)?)?
    } else {
        rdi
    };
    Some(RepRun {
        stores: Some((start, len)),
    })
}

enum Save {
    Fx,
    X,
}

fn save_area(code: Code) -> Option<Save> {
    use Code as C;
    match code {
        C::Fxsave_m512byte | C::Fxsave64_m512byte => Some(Save::Fx),
        C::Xsave_mem
        | C::Xsave64_mem
        | C::Xsavec_mem
        | C::Xsavec64_mem
        | C::Xsaveopt_mem
        | C::Xsaveopt64_mem
        | C::Xsaves_mem
        | C::Xsaves64_mem => Some(Save::X),
        _ => None,
    }
}

fn is_vector(r: Register) -> bool {
    r.is_xmm() || r.is_ymm() || r.is_zmm() || r.is_k() || r.is_st() || r.is_mm() || r.is_tmm()
}

/// x87 and state-restoring instructions change what no operand names (the x87 stack top,
/// status and control words, MXCSR, a whole restored area).
fn writes_fp_implicitly(insn: &Instruction, bytes: &[u8]) -> bool {
    use Mnemonic as M;
    let m = insn.mnemonic();
    matches!(
        m,
        M::Ldmxcsr
            | M::Vldmxcsr
            | M::Fxrstor
            | M::Fxrstor64
            | M::Xrstor
            | M::Xrstor64
            | M::Xrstors
            | M::Xrstors64
            | M::Emms
            | M::Vzeroupper
            | M::Vzeroall
            | M::Fninit
            | M::Fldcw
            | M::Fnclex
            | M::Fldenv
            | M::Frstor
            | M::Fnsave
            | M::Fnstenv
    ) || is_x87(bytes)
}

/// Every x87 instruction's opcode is one byte D8-DF, after any legacy prefixes and REX.
fn is_x87(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .find(|b| {
            !matches!(
                b,
                0x66 | 0x67 | 0xf2 | 0xf3 | 0x2e | 0x36 | 0x3e | 0x26 | 0x64 | 0x65 | 0xf0 | 0x40
                    ..=0x4f
            )
        })
        .is_some_and(|b| (0xd8..=0xdf).contains(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regs(r: Register) -> Option<u64> {
        Some(match r {
            Register::RSP => 0x7000,
            Register::RDI => 0x5000,
            Register::FS => 0x9000_0000,
            _ if r.is_segment_register() => 0,
            _ => 0x10,
        })
    }

    fn stores_of(bytes: &[u8]) -> Stores {
        let insn = StoreDecoder::decode(bytes, 0x1000).unwrap();
        StoreDecoder::new(1024).stores(&insn, bytes, &regs).unwrap()
    }

    #[test]
    fn a_push_and_a_call_store_below_the_stack_pointer() {
        assert_eq!(stores_of(&[0x50]).memory, vec![(0x6ff8, 8)]); // push rax
        assert_eq!(stores_of(&[0xe8, 0, 0, 0, 0]).memory, vec![(0x6ff8, 8)]); // call
        assert!(stores_of(&[0x58]).memory.is_empty()); // pop rax: a read
    }

    #[test]
    fn stores_through_registers_and_the_thread_pointer() {
        // mov qword ptr [rdi+8], rsi
        assert_eq!(
            stores_of(&[0x48, 0x89, 0x77, 0x08]).memory,
            vec![(0x5008, 8)]
        );
        // mov dword ptr fs:[0x10], eax (64 89 04 25 10 00 00 00)
        assert_eq!(
            stores_of(&[0x64, 0x89, 0x04, 0x25, 0x10, 0, 0, 0]).memory,
            vec![(0x9000_0010, 4)]
        );
        // rep stosb: one byte per step
        assert_eq!(stores_of(&[0xf3, 0xaa]).memory, vec![(0x5000, 1)]);
    }

    #[test]
    fn vector_and_save_area_stores() {
        // movaps xmm0, xmm1: no memory, a vector register
        let s = stores_of(&[0x0f, 0x28, 0xc1]);
        assert!(s.memory.is_empty() && s.vector);
        // xsave [rdi] (0f ae 27): the whole area
        assert_eq!(stores_of(&[0x0f, 0xae, 0x27]).memory, vec![(0x5000, 1024)]);
        // fxsave [rdi] (0f ae 07): 512 bytes
        assert_eq!(stores_of(&[0x0f, 0xae, 0x07]).memory, vec![(0x5000, 512)]);
        // fld1 (d9 e8): x87 state
        assert!(stores_of(&[0xd9, 0xe8]).vector);
        // syscall
        assert!(stores_of(&[0x0f, 0x05]).syscall);
        // add eax, 1: neither
        let s = stores_of(&[0x83, 0xc0, 0x01]);
        assert!(s.memory.is_empty() && !s.vector && !s.syscall);
    }
}

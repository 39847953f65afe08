//! Call frame information: finding the FDE that covers an address in `.eh_frame` (through
//! `.eh_frame_hdr`'s sorted table when there is one) or `.debug_frame`, and evaluating its
//! row into the caller's registers. Addresses in the tables are file addresses; register
//! values are runtime values.

use std::sync::{Arc, OnceLock};

use gimli::{
    BaseAddresses, CfaRule, DebugFrame, EhFrame, EhFrameOffset, EndianSlice, Evaluation,
    EvaluationResult, FrameDescriptionEntry, LittleEndian, Register, RegisterRule, UnwindContext,
    UnwindSection, Value,
};

use super::eh_hdr::{parse_hdr, HdrTable};
use super::regs::{read_u64, Loc, MemReader, UnwindRegs, NREGS, RA, RSP};
use crate::symbols::elf::sections::{eh_frame_phdr, read_sections, SectionInfo};
use crate::symbols::elf::{ElfImage, SharedBytes};

type Slice<'a> = EndianSlice<'a, LittleEndian>;

/// Operations one DWARF expression may execute, and times it may stop to ask for a value.
const MAX_EXPR_OPS: u32 = 1000;
const MAX_EXPR_RESUMES: usize = 64;
/// FDEs indexed per section at most; more than any real binary has.
const MAX_INDEXED_FDES: usize = 4_000_000;

/// Callee-saved by the SysV x86-64 ABI: rbx, rbp, r12-r15. Without an explicit rule they
/// keep their value across a call; every other register is unknown in the caller.
const CALLEE_SAVED: [u16; 6] = [3, 6, 12, 13, 14, 15];

/// One table: where its bytes are and the link-time address of its first byte.
#[derive(Clone)]
struct Sect {
    addr: u64,
    data: SharedBytes,
    offset: usize,
    size: usize,
}

impl Sect {
    fn bytes(&self) -> &[u8] {
        self.offset
            .checked_add(self.size)
            .and_then(|end| (*self.data).as_ref().get(self.offset..end))
            .unwrap_or(&[])
    }
}

impl std::fmt::Debug for Sect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sect({:#x}, {} bytes)", self.addr, self.size)
    }
}

/// One FDE's code range and where it starts in its section.
#[derive(Clone, Copy, Debug)]
struct Span {
    start: u64,
    end: u64,
    offset: usize,
}

/// Where an image's unwind tables are, found once per file by whoever holds the image; the
/// sorted FDE indexes are built on first need (a section without a usable binary-search
/// table).
#[derive(Debug, Default)]
pub struct CfiTables {
    eh_frame: Option<Sect>,
    eh_frame_hdr: Option<Sect>,
    /// The binary-search table of `.eh_frame_hdr`, when it has a searchable one; its entries
    /// are read from `eh_frame_hdr`'s bytes.
    hdr_table: Option<HdrTable>,
    debug_frame: Option<Sect>,
    text: Option<u64>,
    got: Option<u64>,
    eh_index: OnceLock<Vec<Span>>,
    debug_index: OnceLock<Vec<Span>>,
}

impl CfiTables {
    /// Locates the tables of `image`. Cheap: reads section headers, parses no FDE.
    pub fn discover(image: &ElfImage) -> CfiTables {
        let shared = image.shared_bytes();
        let data = image.data();
        let secs = read_sections(data);
        let find = |name: &str| {
            secs.iter()
                .find(|s| s.name == name && !s.compressed && s.size > 0)
                .map(|s| Sect {
                    addr: s.addr,
                    data: shared.clone(),
                    offset: s.offset,
                    size: s.size,
                })
        };
        let mut out = CfiTables {
            eh_frame: find(".eh_frame"),
            eh_frame_hdr: find(".eh_frame_hdr"),
            debug_frame: debug_frame(&shared, &secs),
            text: find(".text").map(|s| s.addr),
            got: find(".got").map(|s| s.addr),
            ..CfiTables::default()
        };
        if out.eh_frame_hdr.is_none() {
            // Section headers stripped: the program header still locates the table, and the
            // table's header locates .eh_frame (running to the end of its segment, which is
            // fine: the section ends with a zero terminator).
            if let Some((addr, offset, size)) = eh_frame_phdr(data) {
                out.eh_frame_hdr = Some(Sect {
                    addr,
                    data: shared.clone(),
                    offset,
                    size,
                });
            }
        }
        let hdr = out
            .eh_frame_hdr
            .as_ref()
            .and_then(|h| parse_hdr(h.bytes(), h.addr, 0));
        if out.eh_frame.is_none() {
            out.eh_frame = hdr
                .as_ref()
                .and_then(|(eh_frame_addr, _)| eh_frame_at(image, *eh_frame_addr));
        }
        out.hdr_table = hdr.and_then(|(_, table)| table);
        out
    }

    /// The `.debug_frame` of a separate debug file, the only unwind table such a file has
    /// (`.eh_frame` stays in the stripped file). `None` when it has none.
    pub fn from_debug_file(file: SharedBytes) -> Option<CfiTables> {
        let secs = read_sections((*file).as_ref());
        let debug_frame = debug_frame(&file, &secs)?;
        Some(CfiTables {
            text: secs.iter().find(|s| s.name == ".text").map(|s| s.addr),
            debug_frame: Some(debug_frame),
            ..CfiTables::default()
        })
    }

    fn bases(&self) -> BaseAddresses {
        let mut b = BaseAddresses::default();
        if let Some(s) = &self.eh_frame_hdr {
            b = b.set_eh_frame_hdr(s.addr);
        }
        if let Some(s) = &self.eh_frame {
            b = b.set_eh_frame(s.addr);
        }
        if let Some(t) = self.text {
            b = b.set_text(t);
        }
        if let Some(g) = self.got {
            b = b.set_got(g);
        }
        b
    }
}

/// `.eh_frame` at `addr`, running to the end of the file part of its segment.
fn eh_frame_at(image: &ElfImage, addr: u64) -> Option<Sect> {
    let seg = image
        .load_segments
        .iter()
        .find(|s| s.vaddr.0 <= addr && addr < s.vaddr.0.saturating_add(s.filesz.min(s.memsz)))?;
    let delta = addr - seg.vaddr.0;
    let offset = usize::try_from(seg.offset.checked_add(delta)?).ok()?;
    let size = usize::try_from(seg.filesz.min(seg.memsz) - delta).ok()?;
    image.data().get(offset..offset.checked_add(size)?)?;
    Some(Sect {
        addr,
        data: image.shared_bytes(),
        offset,
        size,
    })
}

/// `.debug_frame` among `secs` of the file `data`, inflated when compressed.
fn debug_frame(data: &SharedBytes, secs: &[SectionInfo]) -> Option<Sect> {
    let sec = secs
        .iter()
        .find(|s| s.name == ".debug_frame" && s.size > 0)?;
    if !sec.compressed {
        return Some(Sect {
            addr: sec.addr,
            data: data.clone(),
            offset: sec.offset,
            size: sec.size,
        });
    }
    let inflated = sec.contents((**data).as_ref())?.into_owned();
    let size = inflated.len();
    Some(Sect {
        addr: sec.addr,
        data: Arc::new(inflated),
        offset: 0,
        size,
    })
}

/// What the CFI says about the frame at one address.
pub(super) enum CfiStep {
    /// The caller's registers (rsp = CFA, rip = the return address).
    Caller(Box<UnwindRegs>),
    /// The return address column is undefined: this is the outermost frame.
    Outermost,
}

pub(super) enum CfiError {
    /// No FDE covers the address.
    NoInfo,
    /// An FDE covers it but its rules could not be evaluated.
    Failed(String),
}

/// Unwinds one frame with one image's tables (see `CfiTables`). `file_pc` is the lookup
/// address (already adjusted for return addresses) in the image's link-time space; `bias`
/// relocates DW_OP_addr operands.
pub(super) fn step(
    cfi: &CfiTables,
    bias: u64,
    file_pc: u64,
    regs: &UnwindRegs,
    mem: MemReader<'_>,
) -> Result<CfiStep, CfiError> {
    let bases = cfi.bases();
    let env = Env { regs, mem, bias };

    if let Some(eh) = &cfi.eh_frame {
        let section = EhFrame::new(eh.bytes(), LittleEndian);
        if let Some(fde) = eh_frame_fde(cfi, &section, &bases, file_pc) {
            return evaluate(&section, &bases, &fde, file_pc, &env);
        }
    }
    if let Some(df) = &cfi.debug_frame {
        let mut section = DebugFrame::new(df.bytes(), LittleEndian);
        section.set_address_size(8);
        let index = cfi
            .debug_index
            .get_or_init(|| build_index(&section, &bases));
        if let Some(fde) = indexed_fde(index, &section, &bases, file_pc) {
            return evaluate(&section, &bases, &fde, file_pc, &env);
        }
    }
    Err(CfiError::NoInfo)
}

fn eh_frame_fde<'d>(
    cfi: &'d CfiTables,
    section: &EhFrame<Slice<'d>>,
    bases: &BaseAddresses,
    pc: u64,
) -> Option<FrameDescriptionEntry<Slice<'d>>> {
    if let (Some(table), Some(eh), Some(hdr)) = (&cfi.hdr_table, &cfi.eh_frame, &cfi.eh_frame_hdr) {
        let data = hdr.bytes();
        // The table is authoritative when its answer can be read; a damaged one falls back
        // to reading the section itself.
        let fde = table
            .search(data, pc)
            .and_then(|addr| usize::try_from(addr.checked_sub(eh.addr)?).ok())
            .map(|off| {
                section.fde_from_offset(bases, EhFrameOffset(off), EhFrame::cie_from_offset)
            });
        match fde {
            Some(Ok(fde)) => return fde.contains(pc).then_some(fde),
            None if table.count == 0 || table.entry(data, 0).is_some_and(|e| pc < e.0) => {
                return None
            }
            _ => {}
        }
    }
    let index = cfi.eh_index.get_or_init(|| build_index(section, bases));
    indexed_fde(index, section, bases, pc)
}

/// Every FDE of a section, sorted by start address. Stops at the first malformed entry,
/// keeping what came before it.
fn build_index<'d, S>(section: &S, bases: &BaseAddresses) -> Vec<Span>
where
    S: UnwindSection<Slice<'d>>,
{
    let mut spans = Vec::new();
    let mut entries = section.entries(bases);
    while spans.len() < MAX_INDEXED_FDES {
        match entries.next() {
            Ok(Some(gimli::CieOrFde::Fde(partial))) => {
                let Ok(fde) = partial.parse(S::cie_from_offset) else {
                    continue;
                };
                if fde.len() > 0 {
                    spans.push(Span {
                        start: fde.initial_address(),
                        end: fde.end_address(),
                        offset: fde.offset(),
                    });
                }
            }
            Ok(Some(gimli::CieOrFde::Cie(_))) => {}
            Ok(None) | Err(_) => break,
        }
    }
    spans.sort_by_key(|s| (s.start, s.end));
    spans
}

fn indexed_fde<'d, S>(
    index: &[Span],
    section: &S,
    bases: &BaseAddresses,
    pc: u64,
) -> Option<FrameDescriptionEntry<Slice<'d>>>
where
    S: UnwindSection<Slice<'d>>,
{
    let i = index.partition_point(|s| s.start <= pc).checked_sub(1)?;
    let span = index[i];
    if pc >= span.end {
        return None;
    }
    let fde = section
        .fde_from_offset(bases, S::Offset::from(span.offset), S::cie_from_offset)
        .ok()?;
    fde.contains(pc).then_some(fde)
}

/// The callee frame's state an expression may ask about.
struct Env<'a> {
    regs: &'a UnwindRegs,
    mem: MemReader<'a>,
    bias: u64,
}

fn evaluate<'d, S>(
    section: &S,
    bases: &BaseAddresses,
    fde: &FrameDescriptionEntry<Slice<'d>>,
    pc: u64,
    env: &Env<'_>,
) -> Result<CfiStep, CfiError>
where
    S: UnwindSection<Slice<'d>>,
{
    let failed = |what: &str, e: gimli::Error| CfiError::Failed(format!("{what}: {e}"));
    let mut ctx = UnwindContext::new();
    let row = fde
        .unwind_info_for_address(section, bases, &mut ctx, pc)
        .map_err(|e| failed("bad CFI program", e))?;
    let encoding = fde.cie().encoding();

    let cfa = match row.cfa() {
        CfaRule::RegisterAndOffset { register, offset } => {
            let base = env
                .regs
                .get(register.0)
                .ok_or_else(|| CfiError::Failed(format!("CFA register {} unknown", register.0)))?;
            base.checked_add_signed(*offset)
                .ok_or_else(|| CfiError::Failed("CFA overflows".into()))?
        }
        CfaRule::Expression(e) => {
            let expr = e.get(section).map_err(|e| failed("CFA expression", e))?;
            eval_expr(Evaluation::new(expr.0, encoding), None, env)
                .map_err(|m| CfiError::Failed(format!("CFA expression: {m}")))?
        }
    };

    let ra_column = fde.cie().return_address_register();
    let rule_of = |reg: Register| -> RegisterRule<usize> {
        row.register(reg).unwrap_or_else(|| {
            if CALLEE_SAVED.contains(&reg.0) {
                RegisterRule::SameValue
            } else {
                RegisterRule::Undefined
            }
        })
    };
    let apply = |rule: RegisterRule<usize>| -> Option<u64> {
        match rule {
            RegisterRule::Undefined | RegisterRule::Architectural => None,
            RegisterRule::SameValue => None,
            RegisterRule::Offset(n) => read_u64(env.mem, cfa.checked_add_signed(n)?),
            RegisterRule::ValOffset(n) => cfa.checked_add_signed(n),
            RegisterRule::Register(r) => env.regs.get(r.0),
            RegisterRule::Expression(e) => {
                let expr = e.get(section).ok()?;
                let addr = eval_expr(Evaluation::new(expr.0, encoding), Some(cfa), env).ok()?;
                read_u64(env.mem, addr)
            }
            RegisterRule::ValExpression(e) => {
                let expr = e.get(section).ok()?;
                eval_expr(Evaluation::new(expr.0, encoding), Some(cfa), env).ok()
            }
            RegisterRule::Constant(c) => Some(c),
            // A rule gimli adds later: nothing known about it.
            #[allow(unreachable_patterns)]
            _ => None,
        }
    };

    let ra_rule = rule_of(ra_column);
    if matches!(ra_rule, RegisterRule::Undefined) {
        return Ok(CfiStep::Outermost);
    }
    // Where the caller's value lives: the slot a rule reads it from, or wherever the
    // callee's own value is when it is left as it was.
    let loc_of = |n: u16, rule: &RegisterRule<usize>| -> Loc {
        match rule {
            RegisterRule::SameValue => env.regs.loc(n),
            RegisterRule::Register(r) => env.regs.loc(r.0),
            RegisterRule::Offset(o) => cfa.checked_add_signed(*o).map_or(Loc::Unknown, Loc::At),
            RegisterRule::Expression(e) => e
                .get(section)
                .ok()
                .and_then(|expr| eval_expr(Evaluation::new(expr.0, encoding), Some(cfa), env).ok())
                .map_or(Loc::Unknown, Loc::At),
            _ => Loc::Unknown,
        }
    };
    let mut caller = UnwindRegs::default();
    for n in 0..NREGS as u16 {
        if n == RA {
            continue;
        }
        let rule = rule_of(Register(n));
        let value = match rule {
            RegisterRule::SameValue => env.regs.get(n),
            // The caller's stack pointer is the CFA unless a rule says otherwise.
            RegisterRule::Undefined if n == RSP => Some(cfa),
            ref rule => apply(rule.clone()),
        };
        caller.vals[usize::from(n)] = value;
        if value.is_some() {
            caller.locs[usize::from(n)] = loc_of(n, &rule);
        }
    }
    let ra_from = if ra_column.0 == RA { RA } else { ra_column.0 };
    caller.vals[usize::from(RA)] = match ra_rule {
        // An unusual return-address column: its rule yields the caller's pc all the same.
        RegisterRule::SameValue if ra_column.0 != RA => env.regs.get(ra_column.0),
        ref rule => apply(rule.clone()),
    };
    if caller.vals[usize::from(RA)].is_some() {
        caller.locs[usize::from(RA)] = loc_of(ra_from, &ra_rule);
    }
    Ok(CfiStep::Caller(Box::new(caller)))
}

/// Why a CFI expression gave no value.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ExprError {
    Gimli(gimli::Error),
    TooManyRequests,
    /// A read wider than a register (`DW_OP_deref_size` over 8).
    ReadSize(u8),
    Unreadable(u64),
    UnknownRegister(u16),
    /// Something gimli asks that a CFI expression has no business asking (a TLS address, a
    /// typed base): gimli's own words for it.
    Unsupported(String),
    NoValue,
    Pieces,
}

impl std::fmt::Display for ExprError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExprError::Gimli(e) => write!(f, "{e}"),
            ExprError::TooManyRequests => write!(f, "expression asks for too many values"),
            ExprError::ReadSize(size) => write!(f, "memory read of {size} bytes"),
            ExprError::Unreadable(addr) => write!(f, "cannot read memory at {addr:#x}"),
            ExprError::UnknownRegister(reg) => write!(f, "register {reg} unknown"),
            ExprError::Unsupported(what) => write!(f, "unsupported request {what}"),
            ExprError::NoValue => write!(f, "expression does not give a value"),
            ExprError::Pieces => write!(f, "expression gives pieces"),
        }
    }
}

impl std::error::Error for ExprError {}

impl From<gimli::Error> for ExprError {
    fn from(e: gimli::Error) -> Self {
        ExprError::Gimli(e)
    }
}

/// Runs a CFI expression to completion. `cfa`, when given, is pushed first (the rule for a
/// register expression); the result is the value left on top of the stack.
fn eval_expr(
    mut eval: Evaluation<Slice<'_>>,
    cfa: Option<u64>,
    env: &Env<'_>,
) -> Result<u64, ExprError> {
    if let Some(cfa) = cfa {
        eval.set_initial_value(cfa);
    }
    eval.set_max_iterations(MAX_EXPR_OPS);
    let mut state = eval.evaluate()?;
    let mut resumes = 0usize;
    loop {
        resumes += 1;
        if resumes > MAX_EXPR_RESUMES {
            return Err(ExprError::TooManyRequests);
        }
        state = match state {
            EvaluationResult::Complete => break,
            EvaluationResult::RequiresMemory {
                address,
                size,
                space: None,
                ..
            } => {
                let width = usize::from(size);
                if width == 0 || width > 8 {
                    return Err(ExprError::ReadSize(size));
                }
                let mut buf = [0u8; 8];
                if !(env.mem)(address, &mut buf[..width]) {
                    return Err(ExprError::Unreadable(address));
                }
                eval.resume_with_memory(Value::Generic(u64::from_le_bytes(buf)))
            }
            EvaluationResult::RequiresRegister {
                register,
                base_type,
            } if base_type.0 == 0 => {
                let v = env
                    .regs
                    .get(register.0)
                    .ok_or(ExprError::UnknownRegister(register.0))?;
                eval.resume_with_register(Value::Generic(v))
            }
            EvaluationResult::RequiresRelocatedAddress(a) => {
                eval.resume_with_relocated_address(a.wrapping_add(env.bias))
            }
            other => return Err(ExprError::Unsupported(format!("{other:?}"))),
        }?;
    }
    let pieces = eval.result();
    match pieces.as_slice() {
        [piece] if piece.size_in_bits.is_none() => match &piece.location {
            gimli::Location::Address { address } => Ok(*address),
            gimli::Location::Value { value } => Ok(value.to_u64(u64::MAX)?),
            _ => Err(ExprError::NoValue),
        },
        _ => Err(ExprError::Pieces),
    }
}

//! Where a variable's bytes are at a pc: DWARF location expressions and location lists
//! (`.debug_loc`, `.debug_loclists`) evaluated against one frame. Registers, memory, the
//! frame base, the CFA, TLS and entry values come from the caller through `FrameAccess`, so
//! this stays pure. The result is an address, bytes that exist only in the debugger (a
//! register's content, `DW_OP_stack_value`, `DW_OP_implicit_value`, pieces put together), or
//! the honest reason there is no value.

use gimli::{
    AttributeValue, Evaluation, EvaluationResult, Expression, Location, Reader as _, Value,
    ValueType,
};

use super::tree::{Die, Reader, UnitHandle};

/// Expression steps at most (DWARF has loops).
const MAX_STEPS: u32 = 10_000;
/// Bytes of a value assembled from pieces at most.
const MAX_COMPOSED: u64 = 4096;

/// What one frame offers an expression.
pub(crate) trait FrameAccess {
    /// A register by DWARF number, as little-endian bytes (8 for general registers, 16 for
    /// xmm registers); `None` where this frame cannot know it.
    fn register(&self, reg: u16) -> Option<Vec<u8>>;
    /// The canonical frame address of this frame.
    fn cfa(&self) -> Option<u64>;
    /// Reads target memory; false if any byte is unreadable.
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool;
    /// The address of `offset` in this module's thread-local block (selected thread).
    fn tls(&self, offset: u64) -> Option<u64>;
    /// What `DW_OP_entry_value(expr)` yields: the value `expr` had when the function was
    /// entered, when the caller's call site tells (or pc is still at the entry).
    fn entry_value(&self, expr: &Expression<Reader>, unit: &UnitHandle) -> Option<u64>;
    /// What `DW_OP_GNU_parameter_ref(param)` yields: the value the caller's call site passed
    /// for the formal parameter `param` (a DIE), how GCC describes an argument of a clone
    /// (`f.isra.0`) that no longer receives it. `None` where no call site tells.
    fn parameter_ref(&self, _param: usize, _unit: &UnitHandle) -> Option<u64> {
        None
    }
    /// The module's load bias (link-time addresses in expressions are relocated by it).
    fn bias(&self) -> u64;
}

/// Why a variable has no value here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Gone {
    /// The compiler kept no location for it at this pc.
    OptimizedOut,
    /// The prologue has not stored it yet (a stop at a function's first bytes).
    NotYetStored,
    /// Something the evaluation needed is unknown in this frame (a register a caller did
    /// not save, an unsupported operation): said in words.
    Unavailable(String),
    /// A pointer to an object that has no address (`DW_OP_implicit_pointer`: the object
    /// lives in registers): no value of its own, but `*p` is the object, `offset` bytes in.
    Synthetic { target: Box<Place>, offset: i64 },
}

impl Gone {
    pub fn text(&self) -> String {
        match self {
            Gone::OptimizedOut => "<optimized out>".into(),
            Gone::NotYetStored => "<not yet stored: at function entry>".into(),
            Gone::Unavailable(why) => format!("<unavailable: {why}>"),
            Gone::Synthetic { .. } => "<synthetic pointer>".into(),
        }
    }
}

/// Where a value's bytes are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    Memory(u64),
    /// Bytes that exist only here; byte ranges in `unknown` were optimized out.
    Bytes {
        bytes: Vec<u8>,
        unknown: Vec<(u64, u64)>,
        /// Where the bytes were copied from, when they are a copy of memory (an aggregate
        /// read at once before printing): the value still has that address.
        origin: Option<u64>,
    },
    Gone(Gone),
}

impl Place {
    pub fn bytes(bytes: Vec<u8>) -> Place {
        Place::Bytes {
            bytes,
            unknown: Vec::new(),
            origin: None,
        }
    }

    /// A copy of the `bytes` at `addr`.
    pub fn copied(addr: u64, bytes: Vec<u8>) -> Place {
        Place::Bytes {
            bytes,
            unknown: Vec::new(),
            origin: Some(addr),
        }
    }
}

/// The object and byte offset an expression that is a lone `DW_OP_implicit_pointer` names
/// (a `.debug_info` offset), else `None`.
pub(crate) fn implicit_pointer(
    expr: &Expression<Reader>,
    unit: &UnitHandle,
) -> Option<(usize, i64)> {
    let mut ops = expr.clone().operations(unit.unit.encoding());
    match ops.next().ok()?? {
        gimli::Operation::ImplicitPointer { value, byte_offset } => {
            ops.next().ok()?.is_none().then_some((value.0, byte_offset))
        }
        _ => None,
    }
}

/// A location attribute's description at `pc` (a link-time address): the expression that
/// applies, or why none does.
pub(crate) fn select(
    unit: &UnitHandle,
    die: &Die,
    at: gimli::DwAt,
    pc: u64,
) -> Result<Expression<Reader>, Gone> {
    let Some(value) = die.attr_value(at) else {
        return Err(Gone::OptimizedOut);
    };
    if let AttributeValue::Exprloc(expr) = value {
        return Ok(expr);
    }
    let Ok(Some(mut list)) = unit.unit_ref().attr_locations(value) else {
        return Err(Gone::Unavailable("unreadable location list".into()));
    };
    let mut seen = 0;
    while let Ok(Some(entry)) = list.next() {
        seen += 1;
        if entry.range.begin <= pc && pc < entry.range.end {
            return Ok(entry.data);
        }
        if seen > 100_000 {
            break;
        }
    }
    Err(Gone::OptimizedOut)
}

/// Evaluates a location expression. `size` is the size of the object described (for
/// register locations and pieces); `frame_base` is the function's `DW_AT_frame_base`, when
/// evaluated.
pub(crate) fn evaluate(
    expr: &Expression<Reader>,
    unit: &UnitHandle,
    frame: &dyn FrameAccess,
    frame_base: Option<u64>,
    size: u64,
) -> Place {
    match run(expr, unit, frame, frame_base, None) {
        Ok(pieces) => assemble(pieces, frame, size),
        Err(gone) => Place::Gone(gone),
    }
}

/// Evaluates a DWARF expression that computes a value (a call site's `DW_AT_call_value`, an
/// entry value's register); `None` when it needs what this frame does not know.
pub(crate) fn evaluate_value(
    expr: &Expression<Reader>,
    unit: &UnitHandle,
    frame: &dyn FrameAccess,
    frame_base: Option<u64>,
) -> Option<u64> {
    let pieces = match run(expr, unit, frame, frame_base, None) {
        Ok(p) => p,
        // A typed result (`DW_OP_const_type <double> 2.25`, a double argument's call-site
        // value) is no address, which is what an expression without DW_OP_stack_value ends
        // in: evaluated again as the value it is.
        Err(_) => {
            let mut bytes = expr.0.bytes().to_vec();
            bytes.push(gimli::DW_OP_stack_value.0);
            let len = bytes.len();
            let valued = Expression(super::reader::DwarfReader::new(
                std::sync::Arc::new(bytes),
                0,
                len,
            ));
            run(&valued, unit, frame, frame_base, None).ok()?
        }
    };
    let [piece] = pieces.as_slice() else {
        return None;
    };
    match &piece.location {
        // A float's value is its bits (gimli's `to_u64` refuses floats: a double argument's
        // call-site value, `DW_OP_const_type <double> 2.25`, was no value at all).
        Location::Value {
            value: Value::F64(f),
        } => Some(f.to_bits()),
        Location::Value {
            value: Value::F32(f),
        } => Some(u64::from(f.to_bits())),
        Location::Value { value } => value.to_u64(u64::MAX).ok(),
        Location::Address { address } => Some(*address),
        Location::Register { register } => {
            let bytes = frame.register(register.0)?;
            Some(le_u64(&bytes))
        }
        _ => None,
    }
}

/// The frame base of a function (`DW_AT_frame_base`): an address, or the content of the
/// register the expression names.
pub(crate) fn frame_base(
    unit: &UnitHandle,
    function: &Die,
    frame: &dyn FrameAccess,
    pc: u64,
) -> Option<u64> {
    let expr = select(unit, function, gimli::DW_AT_frame_base, pc).ok()?;
    match evaluate(&expr, unit, frame, None, 8) {
        Place::Memory(a) => Some(a),
        Place::Bytes { bytes, unknown, .. } if unknown.is_empty() => Some(le_u64(&bytes)),
        _ => None,
    }
}

fn le_u64(bytes: &[u8]) -> u64 {
    let mut raw = [0u8; 8];
    let n = bytes.len().min(8);
    raw[..n].copy_from_slice(&bytes[..n]);
    u64::from_le_bytes(raw)
}

type Pieces = Vec<gimli::Piece<Reader>>;

fn run(
    expr: &Expression<Reader>,
    unit: &UnitHandle,
    frame: &dyn FrameAccess,
    frame_base: Option<u64>,
    object: Option<u64>,
) -> Result<Pieces, Gone> {
    let bad = |e: gimli::Error| Gone::Unavailable(format!("bad location expression ({e})"));
    let mut eval: Evaluation<Reader> = expr.clone().evaluation(unit.encoding());
    eval.set_max_iterations(MAX_STEPS);
    if let Some(o) = object {
        eval.set_object_address(o);
    }
    let mut state = eval.evaluate().map_err(bad)?;
    loop {
        state = match state {
            EvaluationResult::Complete => return Ok(eval.result()),
            EvaluationResult::RequiresMemory {
                address,
                size,
                base_type,
                ..
            } => {
                let mut buf = vec![0u8; usize::from(size).min(8)];
                if !frame.read(address, &mut buf) {
                    return Err(Gone::Unavailable(format!(
                        "cannot read memory at {address:#x}"
                    )));
                }
                let value = typed(unit, base_type, le_u64(&buf))?;
                eval.resume_with_memory(value).map_err(bad)?
            }
            EvaluationResult::RequiresRegister {
                register,
                base_type,
            } => {
                let Some(bytes) = frame.register(register.0) else {
                    return Err(missing_register(register.0));
                };
                let value = typed(unit, base_type, le_u64(&bytes))?;
                eval.resume_with_register(value).map_err(bad)?
            }
            EvaluationResult::RequiresFrameBase => match frame_base {
                Some(fb) => eval.resume_with_frame_base(fb).map_err(bad)?,
                None => {
                    return Err(Gone::Unavailable(
                        "the function's frame base is unknown here".into(),
                    ))
                }
            },
            EvaluationResult::RequiresTls(offset) => match frame.tls(offset) {
                Some(a) => eval.resume_with_tls(a).map_err(bad)?,
                None => {
                    return Err(Gone::Unavailable(
                        "this thread's TLS block is unknown".into(),
                    ))
                }
            },
            EvaluationResult::RequiresCallFrameCfa => match frame.cfa() {
                Some(cfa) => eval.resume_with_call_frame_cfa(cfa).map_err(bad)?,
                None => return Err(Gone::Unavailable("the frame's CFA is unknown here".into())),
            },
            EvaluationResult::RequiresEntryValue(inner) => {
                // The value a register had on entry: gone unless the caller's call site or
                // the stop itself (still at the entry) tells.
                match frame.entry_value(&inner, unit) {
                    Some(v) => eval
                        .resume_with_entry_value(Value::Generic(v))
                        .map_err(bad)?,
                    None => return Err(Gone::OptimizedOut),
                }
            }
            // Address 0 is how a linker leaves a static it discarded (unused, or folded).
            EvaluationResult::RequiresRelocatedAddress(0) => return Err(Gone::OptimizedOut),
            EvaluationResult::RequiresRelocatedAddress(a) => eval
                .resume_with_relocated_address(a.wrapping_add(frame.bias()))
                .map_err(bad)?,
            EvaluationResult::RequiresIndexedAddress { index, relocate } => {
                let a = unit.unit_ref().address(index).map_err(bad)?;
                let a = if relocate {
                    a.wrapping_add(frame.bias())
                } else {
                    a
                };
                eval.resume_with_indexed_address(a).map_err(bad)?
            }
            EvaluationResult::RequiresBaseType(off) => {
                let vt = base_type(unit, off).ok_or_else(|| {
                    Gone::Unavailable("a location uses an unknown base type".into())
                })?;
                eval.resume_with_base_type(vt).map_err(bad)?
            }
            EvaluationResult::RequiresParameterRef(off) => {
                match frame.parameter_ref(unit.global(off), unit) {
                    Some(v) => eval.resume_with_parameter_ref(v).map_err(bad)?,
                    None => return Err(Gone::OptimizedOut),
                }
            }
            EvaluationResult::RequiresAtLocation(_)
            | EvaluationResult::RequiresWasmLocal { .. }
            | EvaluationResult::RequiresWasmGlobal { .. }
            | EvaluationResult::RequiresWasmStack { .. } => {
                return Err(Gone::Unavailable(
                    "a location operation scry does not evaluate".into(),
                ))
            }
        };
    }
}

/// Why a register's value is not there: a general register a caller did not save is gone
/// (as in any debugger); others are registers this frame cannot show.
fn missing_register(reg: u16) -> Gone {
    if reg <= 16 {
        Gone::OptimizedOut
    } else {
        Gone::Unavailable(format!(
            "DWARF register {reg} is not readable in this frame"
        ))
    }
}

fn base_type(unit: &UnitHandle, off: gimli::UnitOffset<usize>) -> Option<ValueType> {
    if off.0 == 0 {
        return Some(ValueType::Generic);
    }
    let die = unit.unit.entry(off).ok()?;
    let size = unit.udata(&die, gimli::DW_AT_byte_size)?;
    let enc = match die.attr_value(gimli::DW_AT_encoding)? {
        AttributeValue::Encoding(e) => e,
        _ => return None,
    };
    ValueType::from_encoding(enc, size)
}

/// Register or memory bytes as a value of the base type: a float type takes the bits as
/// they are (gimli's `from_u64` converts the integer's value instead, so xmm0 holding 1.0
/// would become 4607182418800017408.0).
fn typed(unit: &UnitHandle, base: gimli::UnitOffset<usize>, bits: u64) -> Result<Value, Gone> {
    let vt = base_type(unit, base)
        .ok_or_else(|| Gone::Unavailable("a location uses an unknown base type".into()))?;
    match vt {
        ValueType::F32 => Ok(Value::F32(f32::from_bits(bits as u32))),
        ValueType::F64 => Ok(Value::F64(f64::from_bits(bits))),
        _ => Value::from_u64(vt, bits)
            .map_err(|_| Gone::Unavailable("a typed value out of range".into())),
    }
}

/// The bytes of a `Location::Value`, little-endian, as wide as its type.
fn value_bytes(v: &Value) -> Vec<u8> {
    match *v {
        Value::Generic(x) | Value::U64(x) => x.to_le_bytes().to_vec(),
        Value::I64(x) => x.to_le_bytes().to_vec(),
        Value::I8(x) => x.to_le_bytes().to_vec(),
        Value::U8(x) => x.to_le_bytes().to_vec(),
        Value::I16(x) => x.to_le_bytes().to_vec(),
        Value::U16(x) => x.to_le_bytes().to_vec(),
        Value::I32(x) => x.to_le_bytes().to_vec(),
        Value::U32(x) => x.to_le_bytes().to_vec(),
        Value::F32(x) => x.to_le_bytes().to_vec(),
        Value::F64(x) => x.to_le_bytes().to_vec(),
    }
}

/// Turns the pieces into a place: one memory piece stays an address (read lazily); anything
/// else becomes the bytes read now.
fn assemble(pieces: Pieces, frame: &dyn FrameAccess, size: u64) -> Place {
    if let [one] = pieces.as_slice() {
        if one.size_in_bits.is_none() && one.bit_offset.is_none() {
            return match &one.location {
                Location::Empty => Place::Gone(Gone::OptimizedOut),
                Location::Address { address } => Place::Memory(*address),
                Location::Register { register } => match frame.register(register.0) {
                    Some(mut bytes) => {
                        // A value wider than the register (LLVM sometimes names one register
                        // for a 16-byte `&str`): the bytes past it are not known.
                        let size = size.max(1) as usize;
                        let have = bytes.len();
                        bytes.resize(size, 0);
                        let unknown = if have < size {
                            vec![(have as u64, size as u64)]
                        } else {
                            Vec::new()
                        };
                        Place::Bytes {
                            bytes,
                            unknown,
                            origin: None,
                        }
                    }
                    None => Place::Gone(missing_register(register.0)),
                },
                // A value (`DW_OP_stack_value`) is one 8-byte stack entry and an implicit value
                // has its own length: bytes of the type past them are not known, never zeros.
                Location::Value { value } => {
                    let mut bytes = value_bytes(value);
                    bytes.resize(size.clamp(1, 8) as usize, 0);
                    short_of(bytes, size)
                }
                Location::Bytes { value } => {
                    let bytes = value.to_slice().map(|s| s.to_vec()).unwrap_or_default();
                    short_of(bytes, size)
                }
                Location::ImplicitPointer { .. } => Place::Gone(Gone::Unavailable(
                    "a pointer to an object that exists only in registers".into(),
                )),
            };
        }
    }
    compose(pieces, frame, size)
}

/// `bytes` as a place for a value of `size` bytes: the bytes past the end unknown.
fn short_of(mut bytes: Vec<u8>, size: u64) -> Place {
    let have = bytes.len() as u64;
    if size <= have {
        return Place::bytes(bytes);
    }
    if have == 0 {
        return Place::Gone(Gone::OptimizedOut);
    }
    bytes.resize(size.min(MAX_COMPOSED) as usize, 0);
    Place::Bytes {
        bytes,
        unknown: vec![(have, size)],
        origin: None,
    }
}

/// `DW_OP_piece`s: each piece's bits copied to its place in the object, in order.
fn compose(pieces: Pieces, frame: &dyn FrameAccess, size: u64) -> Place {
    let total_bits: u64 = pieces
        .iter()
        .map(|p| p.size_in_bits.unwrap_or(size * 8))
        .sum();
    let total = total_bits.div_ceil(8).max(size).min(MAX_COMPOSED);
    let mut bytes = vec![0u8; total as usize];
    let mut unknown = Vec::new();
    let mut at_bit = 0u64;
    for p in &pieces {
        let bits = p.size_in_bits.unwrap_or(size * 8);
        let from_bit = p.bit_offset.unwrap_or(0);
        let need = (from_bit + bits).div_ceil(8).min(MAX_COMPOSED) as usize;
        let source: Option<Vec<u8>> = match &p.location {
            Location::Empty => None,
            Location::Address { address } => {
                let mut buf = vec![0u8; need];
                frame.read(*address, &mut buf).then_some(buf)
            }
            Location::Register { register } => frame.register(register.0),
            Location::Value { value } => Some(value_bytes(value)),
            Location::Bytes { value } => value.to_slice().ok().map(|s| s.to_vec()),
            Location::ImplicitPointer { .. } => None,
        };
        match source {
            Some(src) => copy_bits(&src, from_bit, &mut bytes, at_bit, bits),
            None => unknown.push((at_bit / 8, (at_bit + bits).div_ceil(8))),
        }
        at_bit += bits;
        if at_bit >= MAX_COMPOSED * 8 {
            break;
        }
    }
    // Pieces that end before the object does leave its tail unknown (a struct of which only
    // the first member is described at this pc): never zeros.
    if at_bit < total * 8 {
        unknown.push((at_bit / 8, total));
    }
    if !unknown.is_empty() && unknown.iter().map(|(a, b)| b - a).sum::<u64>() >= total {
        return Place::Gone(Gone::OptimizedOut);
    }
    Place::Bytes {
        bytes,
        unknown,
        origin: None,
    }
}

fn copy_bits(src: &[u8], src_bit: u64, dst: &mut [u8], dst_bit: u64, bits: u64) {
    for i in 0..bits {
        let s = src_bit + i;
        let d = dst_bit + i;
        let Some(byte) = src.get((s / 8) as usize) else {
            return;
        };
        let bit = (byte >> (s % 8)) & 1;
        if let Some(out) = dst.get_mut((d / 8) as usize) {
            if bit == 1 {
                *out |= 1 << (d % 8);
            } else {
                *out &= !(1 << (d % 8));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_are_copied_across_bytes() {
        let src = [0b1010_1100u8, 0b0000_0001];
        let mut dst = [0u8; 2];
        copy_bits(&src, 2, &mut dst, 4, 7);
        // Bits 2..9 of src are 1,1,0,1,0,1,1: placed at bits 4..11 of dst.
        assert_eq!(dst, [0b1011_0000, 0b0000_0110]);
    }

    /// Registers rax (0) and rdx (1) of a frame, and nothing else.
    struct Regs;

    impl FrameAccess for Regs {
        fn register(&self, reg: u16) -> Option<Vec<u8>> {
            (reg < 2).then(|| {
                (0x1111_1111_1111_1111u64 * (u64::from(reg) + 1))
                    .to_le_bytes()
                    .to_vec()
            })
        }
        fn cfa(&self) -> Option<u64> {
            None
        }
        fn read(&self, _addr: u64, _buf: &mut [u8]) -> bool {
            false
        }
        fn tls(&self, _offset: u64) -> Option<u64> {
            None
        }
        fn entry_value(&self, _expr: &Expression<Reader>, _unit: &UnitHandle) -> Option<u64> {
            None
        }
        fn bias(&self) -> u64 {
            0
        }
    }

    fn piece(register: u16, bytes: u64) -> gimli::Piece<Reader> {
        gimli::Piece {
            size_in_bits: Some(bytes * 8),
            bit_offset: None,
            location: Location::Register {
                register: gimli::Register(register),
            },
        }
    }

    #[test]
    fn bytes_no_piece_describes_are_unknown_never_zeros() {
        // A 24-byte struct of which the pieces describe the first 16 bytes only.
        let place = compose(vec![piece(0, 8), piece(1, 8)], &Regs, 24);
        let Place::Bytes { bytes, unknown, .. } = &place else {
            panic!("{place:?}");
        };
        assert_eq!(&bytes[..8], &0x1111_1111_1111_1111u64.to_le_bytes());
        assert_eq!(unknown, &vec![(16, 24)]);
        // A stack value of a 16-byte type: its second half is not known.
        let v = short_of(vec![1, 2, 3, 4, 5, 6, 7, 8], 16);
        assert!(matches!(v, Place::Bytes { ref unknown, .. } if unknown == &vec![(8, 16)]));
    }

    #[test]
    fn gone_says_why() {
        assert_eq!(Gone::OptimizedOut.text(), "<optimized out>");
        assert_eq!(
            Gone::NotYetStored.text(),
            "<not yet stored: at function entry>"
        );
    }
}

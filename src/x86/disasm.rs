//! x86-64 disassembly of a byte buffer in Intel syntax, with branch targets and rip-relative
//! data named through a caller-supplied resolver (so this works on file bytes as well as on
//! live memory).

use iced_x86::{
    Decoder, DecoderError, DecoderOptions, FlowControl, Formatter, Instruction, IntelFormatter,
    MemorySizeOptions, OpKind,
};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Insn {
    pub addr: u64,
    pub len: usize,
    pub bytes: Vec<u8>,
    /// With any prefixes, e.g. `mov`, `rep stosq`, `lock cmpxchg`; `(bad)` if undecodable.
    pub mnemonic: String,
    /// Each operand as formatted, e.g. `["qword ptr [rbp-0x8]", "rdi"]`.
    pub operands: Vec<String>,
    /// The whole line, e.g. `call 0x401126 <add>`, `lea rdi, [rip+0xe9e]  # 0x402004 <msg>`.
    pub text: String,
    /// Where a direct branch goes, or the address a rip-relative operand names.
    pub target: Option<u64>,
}

/// Decodes up to `max` instructions from `bytes`, the first at address `ip`. An undecodable
/// byte yields a one-byte `(bad)` entry and decoding resumes after it, the way objdump does,
/// so a data island does not hide the code after it. An instruction cut off by the end of the
/// buffer is left out rather than reported as bad.
pub fn disassemble(
    bytes: &[u8],
    ip: u64,
    max: usize,
    resolver: &dyn Fn(u64) -> Option<String>,
) -> Vec<Insn> {
    let mut decoder = Decoder::with_ip(64, bytes, ip, DecoderOptions::NONE);
    let mut fmt = formatter();
    let mut instr = Instruction::default();
    let mut out = Vec::new();

    while out.len() < max && decoder.can_decode() {
        let pos = decoder.position();
        let addr = ip.wrapping_add(pos as u64);
        decoder.decode_out(&mut instr);
        if instr.is_invalid() {
            if decoder.last_error() == DecoderError::NoMoreBytes {
                break;
            }
            out.push(bad(addr, bytes[pos]));
            // Both calls stay in range: `pos` was a decodable position, so pos+1 <= len.
            if decoder.set_position(pos + 1).is_err() {
                break;
            }
            decoder.set_ip(addr.wrapping_add(1));
            continue;
        }
        out.push(render(
            &mut fmt,
            &instr,
            &bytes[pos..pos + instr.len()],
            resolver,
        ));
    }
    out
}

fn formatter() -> IntelFormatter {
    let mut fmt = IntelFormatter::new();
    let o = fmt.options_mut();
    // Match the look of gdb and objdump: 0x-prefixed lowercase hex, no `short`/`near`.
    o.set_hex_prefix("0x");
    o.set_hex_suffix("");
    o.set_uppercase_hex(false);
    o.set_leading_zeros(false);
    o.set_branch_leading_zeros(false);
    o.set_show_branch_size(false);
    // Terse, no information lost: `mov [rbp-0x4],edi` (the register gives the size; an
    // explicit `dword ptr` appears only where nothing else does, e.g. with an immediate), and
    // rip-relative operands keep the absolute target as a `# 0x... <sym>` comment.
    o.set_space_after_operand_separator(false);
    o.set_rip_relative_addresses(true);
    o.set_memory_size_options(MemorySizeOptions::Minimal);
    fmt
}

fn bad(addr: u64, byte: u8) -> Insn {
    Insn {
        addr,
        len: 1,
        bytes: vec![byte],
        mnemonic: "(bad)".into(),
        operands: Vec::new(),
        text: "(bad)".into(),
        target: None,
    }
}

fn render(
    fmt: &mut IntelFormatter,
    instr: &Instruction,
    bytes: &[u8],
    resolver: &dyn Fn(u64) -> Option<String>,
) -> Insn {
    // iced's minimal sizes leave out `dword ptr` when the opcode implies it (`nop [rax]`),
    // but a reader cannot see the opcode: with no register operand to say it, say the size.
    let sized = (0..instr.op_count()).all(|i| instr.op_kind(i) != OpKind::Register)
        && (0..instr.op_count()).any(|i| instr.op_kind(i) == OpKind::Memory);
    fmt.options_mut().set_memory_size_options(if sized {
        MemorySizeOptions::Always
    } else {
        MemorySizeOptions::Minimal
    });
    let mut mnemonic = String::new();
    fmt.format_mnemonic(instr, &mut mnemonic);
    let mut operands: Vec<String> = (0..fmt.operand_count(instr))
        .map(|i| {
            let mut s = String::new();
            // Only fails for an out-of-range index, which the range above rules out.
            let _ = fmt.format_operand(instr, &mut s, i);
            s
        })
        .collect();
    let mut text = String::new();
    fmt.format(instr, &mut text);

    // The operand that names the target carries its name as the text does, so a script
    // reading `operands` sees `0x401030 <malloc@plt>` too.
    let mut target = None;
    if is_direct_branch(instr) {
        target = Some(instr.near_branch_target());
        if let Some(name) = resolver(instr.near_branch_target()) {
            text.push_str(&format!(" <{name}>"));
            if let Some(op) = operands.first_mut() {
                op.push_str(&format!(" <{name}>"));
            }
        }
    } else if instr.is_ip_rel_memory_operand() {
        // rip-relative operands are printed as displacements; the absolute address (and what
        // lives there: a global, a GOT slot) is what a reader actually wants.
        let at = instr.ip_rel_memory_address();
        target = Some(at);
        text.push_str(&format!("  # {at:#x}"));
        let name = resolver(at);
        if let Some(name) = &name {
            text.push_str(&format!(" <{name}>"));
        }
        let memory = (0..instr.op_count()).position(|i| instr.op_kind(i) == OpKind::Memory);
        if let Some(op) = memory.and_then(|i| operands.get_mut(i)) {
            op.push_str(&format!(" # {at:#x}"));
            if let Some(name) = &name {
                op.push_str(&format!(" <{name}>"));
            }
        }
    }

    Insn {
        addr: instr.ip(),
        len: instr.len(),
        bytes: bytes.to_vec(),
        mnemonic,
        operands,
        text,
        target,
    }
}

/// The length of the instruction at the start of `bytes` (at address `ip`) when the one
/// after it is the next to run (no branch, call, return, interrupt or system call); `None`
/// otherwise or when the bytes do not decode.
pub(crate) fn falls_through(bytes: &[u8], ip: u64) -> Option<usize> {
    let mut decoder = Decoder::with_ip(64, bytes, ip, DecoderOptions::NONE);
    let instr = decoder.decode();
    (!instr.is_invalid() && instr.flow_control() == FlowControl::Next).then(|| instr.len())
}

fn is_direct_branch(instr: &Instruction) -> bool {
    matches!(
        instr.flow_control(),
        FlowControl::Call | FlowControl::UnconditionalBranch | FlowControl::ConditionalBranch
    ) && matches!(
        instr.op0_kind(),
        OpKind::NearBranch16 | OpKind::NearBranch32 | OpKind::NearBranch64
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_syms(_: u64) -> Option<String> {
        None
    }

    #[test]
    fn only_straight_line_instructions_fall_through() {
        // push rbp; mov rbp,rsp; endbr64
        assert_eq!(falls_through(&[0x55], 0x1000), Some(1));
        assert_eq!(falls_through(&[0x48, 0x89, 0xe5], 0x1000), Some(3));
        assert_eq!(falls_through(&[0xf3, 0x0f, 0x1e, 0xfa], 0x1000), Some(4));
        // jmp, je, call, ret, syscall, int3, and a cut-off instruction
        for bytes in [
            &[0xeb, 0xfe][..],
            &[0x74, 0x02],
            &[0xe8, 0, 0, 0, 0],
            &[0xc3],
            &[0x0f, 0x05],
            &[0xcc],
            &[0x48, 0x89],
        ] {
            assert_eq!(falls_through(bytes, 0x1000), None, "{bytes:x?}");
        }
    }

    #[test]
    fn prologue() {
        let insns = disassemble(&[0x55, 0x48, 0x89, 0xe5, 0xc3], 0x401000, 10, &no_syms);
        let texts: Vec<&str> = insns.iter().map(|i| i.text.as_str()).collect();
        assert_eq!(texts, ["push rbp", "mov rbp,rsp", "ret"]);
        assert_eq!(insns[1].addr, 0x401001);
        assert_eq!(insns[1].len, 3);
        assert_eq!(insns[1].bytes, [0x48, 0x89, 0xe5]);
        assert_eq!(insns[1].mnemonic, "mov");
        assert_eq!(insns[1].operands, ["rbp", "rsp"]);
    }

    #[test]
    fn call_target_is_named() {
        // call rel32: target = next ip (0x401005) + 0x121.
        let bytes = [0xe8, 0x21, 0x01, 0x00, 0x00];
        let resolve = |a: u64| (a == 0x401126).then(|| "add".to_string());
        let insns = disassemble(&bytes, 0x401000, 10, &resolve);
        assert_eq!(insns.len(), 1);
        assert_eq!(insns[0].text, "call 0x401126 <add>");
        assert_eq!(insns[0].mnemonic, "call");
        assert_eq!(
            insns[0].operands,
            ["0x401126 <add>"],
            "the operand names it as the text"
        );
        assert_eq!(insns[0].target, Some(0x401126));

        // jne rel8 backwards, unnamed.
        let insns = disassemble(&[0x75, 0xfe], 0x1000, 10, &no_syms);
        assert_eq!(insns[0].text, "jne 0x1000");
    }

    #[test]
    fn rip_relative_gets_absolute_address() {
        // mov eax, dword ptr [rip+0x2ed6] at 0x401130 (6 bytes): target 0x40400c.
        let bytes = [0x8b, 0x05, 0xd6, 0x2e, 0x00, 0x00];
        let resolve = |a: u64| (a == 0x40400c).then(|| "counter".to_string());
        let insns = disassemble(&bytes, 0x401130, 1, &resolve);
        assert_eq!(insns[0].text, "mov eax,[rip+0x2ed6]  # 0x40400c <counter>");
    }

    #[test]
    fn bad_bytes_and_truncation() {
        // 0x06 (push es) is invalid in 64-bit mode; then nop; then a cut-off call.
        let insns = disassemble(&[0x06, 0x90, 0xe8, 0x00], 0x2000, 10, &no_syms);
        assert_eq!(insns.len(), 2);
        assert_eq!(insns[0].mnemonic, "(bad)");
        assert_eq!((insns[0].addr, insns[0].len), (0x2000, 1));
        assert_eq!(insns[1].text, "nop");
        assert_eq!(insns[1].addr, 0x2001);
    }

    #[test]
    fn respects_max_and_empty_input() {
        assert!(disassemble(&[], 0, 10, &no_syms).is_empty());
        assert_eq!(disassemble(&[0x90; 16], 0, 3, &no_syms).len(), 3);
        assert!(disassemble(&[0x90; 16], 0, 0, &no_syms).is_empty());
    }
}

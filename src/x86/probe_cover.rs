//! Whether a probe's jump can replace the instructions at a site: they must be movable
//! (re-encoded where the trampoline runs them), end inside their function, and no branch of
//! it may land inside the bytes the jump covers. Pure, as `probe` is.

use iced_x86::{Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic};

use super::displace::is_near_branch as near;

/// The jump written at the site: `e9` and a 32-bit displacement.
pub(crate) const JUMP_LEN: usize = 5;

/// The instructions a jump at the site covers, as they will run in the trampoline.
#[derive(Debug, Clone)]
pub(crate) struct Cover {
    pub len: usize,
    pub(super) insns: Vec<Instruction>,
    /// The last covered instruction jumps away unconditionally: nothing runs after it.
    pub(super) ends_in_jump: bool,
}

/// The function the site is in: where it starts and its bytes, to look for branches into
/// the covered bytes.
pub(crate) struct Function<'a> {
    pub start: u64,
    pub code: &'a [u8],
}

/// Whether a jump can replace the instructions at `site` (`code`: the original bytes, at
/// least 16 from the site, int3s hidden). The reason it cannot is the error.
pub(crate) fn cover(
    code: &[u8],
    site: u64,
    func: Option<&Function<'_>>,
    parts: &[Function<'_>],
) -> Result<Cover, String> {
    if let Some(f) = func {
        let left = (f.start + f.code.len() as u64).saturating_sub(site);
        if left < JUMP_LEN as u64 {
            let unit = if left == 1 { "byte" } else { "bytes" };
            return Err(format!(
                "the function has {left} {unit} from the site: a jump needs {JUMP_LEN}"
            ));
        }
    }
    let mut decoder = Decoder::with_ip(64, code, site, DecoderOptions::NONE);
    let mut insns = Vec::new();
    let mut len = 0;
    let mut ends_in_jump = false;
    while len < JUMP_LEN {
        if ends_in_jump {
            return Err("the jump would cover bytes after an unconditional jump".into());
        }
        let insn = decoder.decode();
        if insn.is_invalid() {
            return Err(format!("no valid instruction at {:#x}", insn.ip()));
        }
        movable(&insn)?;
        ends_in_jump = insn.flow_control() == FlowControl::UnconditionalBranch;
        len += insn.len();
        insns.push(insn);
    }
    let end = site + len as u64;
    match func {
        None if insns.len() > 1 => {
            return Err(format!(
                "the instruction is {} bytes, under the jump's 5, and the function's bounds are unknown (nothing shows no branch lands inside)",
                insns[0].len()
            ))
        }
        None => {}
        Some(f) => {
            let f_end = f.start + f.code.len() as u64;
            if site < f.start || end > f_end {
                return Err(format!(
                    "the jump would cover {len} bytes and the function ends {} bytes after the site",
                    f_end.saturating_sub(site)
                ));
            }
            branches_into(f, site, end, insns.len())?;
        }
    }
    // The function's other parts (a `.cold` block jumps back into the hot one).
    for part in parts {
        branches_into(part, site, end, 1)?;
    }
    Ok(Cover {
        len,
        insns,
        ends_in_jump,
    })
}

/// Whether an instruction runs the same at another address once re-encoded.
fn movable(insn: &Instruction) -> Result<(), String> {
    let what = |why: &str| {
        Err(format!(
            "{why} ({insn}) is among the bytes a jump would cover"
        ))
    };
    match insn.flow_control() {
        FlowControl::Next => {}
        FlowControl::ConditionalBranch | FlowControl::UnconditionalBranch
            if near(insn)
                && !matches!(
                    insn.mnemonic(),
                    Mnemonic::Loop
                        | Mnemonic::Loope
                        | Mnemonic::Loopne
                        | Mnemonic::Jrcxz
                        | Mnemonic::Jecxz
                        | Mnemonic::Xbegin
                ) => {}
        FlowControl::Call | FlowControl::IndirectCall => return what("a call"),
        FlowControl::Return => return what("a return"),
        FlowControl::IndirectBranch => return what("an indirect jump"),
        FlowControl::Interrupt => return what("an interrupt or system call"),
        _ => return what("an instruction that depends on its address"),
    }
    if matches!(
        insn.mnemonic(),
        Mnemonic::Syscall | Mnemonic::Sysenter | Mnemonic::Int | Mnemonic::Int3 | Mnemonic::Into
    ) {
        return what("a system call");
    }
    Ok(())
}

/// Refuses when a branch of the function lands strictly inside `(site, end)`: it would land
/// in the middle of the jump. When the function has indirect jumps (a switch's table), their
/// targets are unknown: only a single covered instruction, or the function's entry (where
/// nothing jumps past the first instruction), is then safe.
fn branches_into(f: &Function<'_>, site: u64, end: u64, covered: usize) -> Result<(), String> {
    let mut decoder = Decoder::with_ip(64, f.code, f.start, DecoderOptions::NONE);
    let mut indirect = false;
    while decoder.can_decode() {
        let insn = decoder.decode();
        if insn.is_invalid() {
            continue;
        }
        if insn.flow_control() == FlowControl::IndirectBranch {
            indirect = true;
        }
        if near(&insn) {
            let target = insn.near_branch_target();
            if target > site && target < end {
                return Err(format!(
                    "the instruction at {:#x} branches to {target:#x}, inside the bytes a jump would cover",
                    insn.ip()
                ));
            }
        }
    }
    if indirect && covered > 1 && site != f.start {
        return Err(
            "the function has indirect jumps whose targets are unknown, and the jump would cover several instructions"
                .into(),
        );
    }
    Ok(())
}

/// The 5 bytes at `site` that jump to `to`, if it is within reach of a 32-bit displacement.
pub(crate) fn jump(site: u64, to: u64) -> Option<[u8; JUMP_LEN]> {
    let rel = (to as i64).wrapping_sub(site as i64 + JUMP_LEN as i64);
    let rel = i32::try_from(rel).ok()?;
    let mut bytes = [0xe9, 0, 0, 0, 0];
    bytes[1..].copy_from_slice(&rel.to_le_bytes());
    Some(bytes)
}

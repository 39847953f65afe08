//! Tests of `probe` (kept apart so that the file holds only its code).

use super::*;
use iced_x86::{Decoder, DecoderOptions};

#[test]
fn a_prologue_is_covered_whole_instructions() {
    // push rbp; mov rbp,rsp; sub rsp,0x10
    let code = [0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10, 0xc3];
    let f = Function {
        start: 0x1000,
        code: &code,
    };
    let c = cover(&code, 0x1000, Some(&f), &[]).unwrap();
    assert_eq!(c.len, 8);
}

#[test]
fn a_branch_into_the_covered_bytes_refuses() {
    // 0x1000: push rbp; mov rbp,rsp; sub rsp,0x10; jmp 0x1001
    let code = [0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10, 0xeb, 0xf7];
    let f = Function {
        start: 0x1000,
        code: &code,
    };
    let e = cover(&code, 0x1000, Some(&f), &[]).unwrap_err();
    assert!(e.contains("branches to 0x1001"), "{e}");
}

#[test]
fn a_call_or_a_short_function_refuses() {
    // call rel32 at the site
    let code = [0xe8, 0, 0, 0, 0, 0xc3];
    let f = Function {
        start: 0x1000,
        code: &code,
    };
    assert!(cover(&code, 0x1000, Some(&f), &[])
        .unwrap_err()
        .contains("a call"));
    // xor eax,eax; ret: the function ends before 5 bytes
    let code = [0x31, 0xc0, 0xc3];
    let f = Function {
        start: 0x1000,
        code: &code,
    };
    assert!(cover(&code, 0x1000, Some(&f), &[]).is_err());
}

#[test]
fn the_jump_reaches_32_bits_only() {
    assert_eq!(jump(0x1000, 0x2000), Some([0xe9, 0xfb, 0x0f, 0, 0]));
    assert_eq!(jump(0x1000, 0x1_0000_1000), None);
}

#[test]
fn rip_relative_operands_keep_their_target() {
    // mov rax,[rip+0x100] at 0x1000 (7 bytes)
    let code = [0x48, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00, 0xc3];
    let f = Function {
        start: 0x1000,
        code: &code,
    };
    let c = cover(&code, 0x1000, Some(&f), &[]).unwrap();
    let items = [Item::Reg {
        src: Source::Gpr(Register::RDI),
        at: RECORD_ITEMS,
    }];
    let ring = Ring {
        header: 0x7000_0000,
        slots: 1024,
        slot_shift: 6,
    };
    let p = Probe {
        site: 0x1000,
        pid: 1,
        ring,
        items: &items,
        wait: true,
        cover: &c,
        cond: None,
    };
    let at = 0x10_0000;
    let t = trampoline(at, &p).unwrap();
    // The moved load, then the jump back to after it.
    assert_eq!(
        t.moved.iter().map(|m| m.1).collect::<Vec<_>>(),
        [0x1000, 0x1007]
    );
    let code = t.code;
    let insns: Vec<Instruction> = Decoder::with_ip(64, &code, at, DecoderOptions::NONE)
        .into_iter()
        .collect();
    let moved = insns
        .iter()
        .find(|i| i.is_ip_rel_memory_operand())
        .expect("the moved load");
    assert_eq!(moved.ip_rel_memory_address(), 0x1107);
    let last = insns.last().unwrap();
    assert_eq!(last.near_branch_target(), 0x1007);
}

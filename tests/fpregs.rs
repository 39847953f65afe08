//! Floating-point and vector registers: a double passed in xmm0 reads back as the program
//! printed it, and writing it changes what the function computes.

mod common;

use common::{fixture, Scry};

/// `key=<number>` from the program's output.
fn printed(out: &str, key: &str) -> String {
    let at = out
        .find(&format!("{key}="))
        .unwrap_or_else(|| panic!("{key} in {out}"))
        + key.len()
        + 1;
    out[at..].split_whitespace().next().unwrap().to_string()
}

/// Stopped at the first byte of `scale` (`scale+0`: before the prologue copies the argument
/// from xmm0 to the stack), so what xmm0 holds is what the function computes with.
fn at_scale() -> (Scry, String) {
    let mut scry = Scry::spawn(&fixture("fpregs"), &[]);
    scry.ok("breakpoint.set('scale+0')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1"));
    let out = scry.ok("output()");
    (scry, out)
}

#[test]
fn a_double_argument_reads_back_and_a_write_changes_the_result() {
    let (mut scry, out) = at_scale();
    let passed: f64 = printed(&out, "in").parse().unwrap();
    assert_eq!(passed, 1.25);
    let read: f64 = scry.ok("state.registers.xmm0.f64[0]").parse().unwrap();
    assert_eq!(read, passed);
    assert_eq!(
        scry.ok("state.registers.xmm0.hex"),
        format!("0x{:032x}", passed.to_bits() as u128)
    );
    assert_eq!(
        scry.ok("state.registers.xmm0"),
        format!("0x{:032x} f64 [1.25, 0]", passed.to_bits() as u128)
    );
    let mxcsr = printed(&out, "mxcsr");
    assert_eq!(scry.ok("hex(state.registers.mxcsr)"), mxcsr);

    // A lane write goes to the thread: the function doubles what it now finds.
    scry.ok("state.registers.xmm0.f64[0] = 3.5");
    assert_eq!(scry.ok("state.registers.xmm0.f64[0]"), "3.5");
    scry.ok("cont()");
    assert_eq!(printed(&scry.ok("output()"), "out"), "7");
}

#[test]
fn whole_registers_lanes_and_the_x87_stack() {
    let (mut scry, _) = at_scale();
    // A whole register from a hex string or a BigInt; lanes of every view agree.
    scry.ok(&format!(
        "state.registers.xmm3 = '0x{:016x}{:016x}'",
        2.0f64.to_bits(),
        0.5f64.to_bits()
    ));
    assert_eq!(scry.ok("state.registers.xmm3.f64.join(' ')"), "0.5 2");
    scry.ok("state.registers.xmm4 = 0x1_0000_0002n");
    assert_eq!(scry.ok("state.registers.xmm4.u32.join(' ')"), "2 1 0 0");
    scry.ok("state.registers.xmm4.f32[3] = -1.5");
    assert_eq!(scry.ok("state.registers.xmm4.f32[3]"), "-1.5");
    assert_eq!(
        scry.ok("state.registers.xmm4.u32[0]"),
        "2",
        "other lanes kept"
    );
    assert!(scry
        .err("state.registers.xmm4 = 2n ** 128n")
        .contains("does not fit in 128 bits"));
    assert!(scry
        .err("state.registers.xmm4 = -1")
        .contains("non-negative"));
    // A lane past the end is no lane: the view does not grow (strict code gets a TypeError).
    assert_eq!(
        scry.ok("const v = state.registers.xmm4; v.f64[2] = 1; v.f64.length"),
        "2"
    );
    assert!(scry
        .err("'use strict'; state.registers.xmm4.f64[2] = 1")
        .contains("TypeError"));
    // st registers hold 80-bit values; a write of a double reads back exactly.
    scry.ok("state.registers.st2 = -0.1");
    assert_eq!(scry.ok("state.registers.st2"), "-0.1");
    // The general listing stays the 27 general registers; state.fpu lists these.
    assert_eq!(scry.ok("state.registers").lines().count(), 27);
    let fpu = scry.ok("state.fpu");
    assert!(fpu.starts_with("mxcsr\t0x"), "{fpu}");
    assert!(
        fpu.contains("\nxmm3\t0x40000000000000003fe0000000000000\tf64 0.5 2"),
        "{fpu}"
    );
    assert!(fpu.contains("-0.1"), "{fpu}");
    assert!(scry.err("state.registers.xmm16").contains("no property"));

    let has_avx = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap()
        .contains(" avx ");
    if has_avx {
        let top = format!("0x{}{}", "1".repeat(32), "0".repeat(32));
        scry.ok(&format!("state.registers.ymm5 = '{top}'"));
        assert_eq!(scry.ok("state.registers.ymm5.hex"), top);
        assert_eq!(
            scry.ok("state.registers.xmm5.hex"),
            format!("0x{}", "0".repeat(32))
        );
        assert!(scry.ok("state.fpu").contains(&format!("\nymm5\t{top}")));
    } else {
        assert!(scry.err("state.registers.ymm0").contains("no AVX"));
    }
}

#[test]
fn read_only_sessions_refuse_register_writes() {
    let mut scry = Scry::start(&["--read-only", "--", fixture("fpregs").to_str().unwrap()]);
    scry.ok("breakpoint.set('scale+0'); cont()");
    assert_eq!(scry.ok("state.registers.xmm0.f64[0]"), "1.25");
    assert!(scry
        .err("state.registers.xmm0.f64[0] = 2")
        .contains("read-only"));
    assert!(scry.err("state.registers.mxcsr = 0").contains("read-only"));
}

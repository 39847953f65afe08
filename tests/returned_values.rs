//! `finish()` shows what a function returned as its type says, the way the x86-64 psABI
//! hands an aggregate back (fixtures/returned_aggregates.cpp, rust/returned_values.rs),
//! checked against the program's own account and against gdb's `Value returned`.

mod common;

use std::process::Command;

use common::Scry;

const CXX: &[(&str, &str)] = &[
    ("label", r#""root-14""#),
    ("maybe", "optional(4)"),
    ("mixed", "{id: 7, weight: 10.5}"),
    ("pair", "{x: 2.5, y: -2.5}"),
    ("big", "{a: 40, b: 41, c: 42}"),
    ("owned", "{n: 9}"),
    ("cplx", "{_M_value: 1.25 + -2.5i}"),
    ("cflt", "{_M_value: 0.5 + 4i}"),
    ("conv", "{a: 3.5, b: 4.5}"),
];

#[test]
fn finish_shows_a_returned_aggregate_as_its_type() {
    for opt in ["-O0", "-O2"] {
        let exe = common::fixture_from(
            &format!("returned_aggregates{opt}"),
            "g++",
            &["-g", opt, "-std=c++17"],
            &["returned_aggregates.cpp"],
        );
        let mut scry = Scry::spawn(&exe, &[]);
        for (f, _) in CXX {
            scry.ok(&format!("breakpoint.set('{f}')"));
        }
        for (f, want) in CXX {
            let stop = scry.ok("cont()");
            assert!(stop.contains(&format!(" {f}")), "{opt}: {stop}");
            let fin = scry.ok("finish()");
            assert!(
                fin.ends_with(&format!(" returned {want}")),
                "{opt} {f}: {fin}"
            );
        }
        // The value is typed: its members read as numbers.
        scry.ok("cont()");
        let truth = common::truth(&mut scry);
        assert_eq!(truth["label"], "root-14");
        assert_eq!(truth["owned"], "9");
        assert_eq!(truth["cplx"], "1.25,-2.5");
        assert_eq!(truth["cflt"], "0.5,4");
        assert_eq!(truth["conv"], "3.5,4.5");
    }
    let exe = common::fixture_from(
        "returned_aggregates-O0",
        "g++",
        &["-g", "-O0", "-std=c++17"],
        &["returned_aggregates.cpp"],
    );
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('mixed')");
    scry.ok("cont()");
    assert_eq!(scry.ok("finish().returned.weight * 2"), "21");

    // gdb says the same values.
    let mut args: Vec<String> = vec!["-batch".into(), "-nx".into()];
    for (f, _) in CXX {
        args.extend(["-ex".into(), format!("break {f}")]);
    }
    args.extend(["-ex".into(), "run".into()]);
    for _ in CXX {
        args.extend([
            "-ex".into(),
            "finish".into(),
            "-ex".into(),
            "continue".into(),
        ]);
    }
    let Ok(out) = Command::new("gdb").args(&args).arg(&exe).output() else {
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let gdb: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("Value returned is $"))
        .filter_map(|l| l.split_once(" = ").map(|(_, v)| v))
        .collect();
    assert_eq!(gdb.len(), CXX.len(), "{text}");
    assert_eq!(gdb[0], r#""root-14""#);
    assert!(gdb[1].ends_with("{[contained value] = 4}"), "{}", gdb[1]);
    for (i, (_, want)) in CXX.iter().enumerate().skip(2) {
        assert_eq!(gdb[i].replace(" = ", ": "), *want);
    }
}

/// rustc's own ABI: a pair of scalars comes back in a register each (`(i32, i32)` in eax
/// and edx, `&str` in rax and rdx, `(f32, f32)` in xmm0 and xmm1), a newtype as its scalar,
/// a small tuple as one integer. Where a type could come from an `extern "C"` function
/// that packs it otherwise (a struct of two u32) or rustc versions differ (12 bytes), no
/// value is guessed.
#[test]
fn a_rust_function_returns_by_rustc_abi_and_uncertain_aggregates_are_not_guessed() {
    let exe = common::rust_fixture("returned_values", "0");
    let mut scry = Scry::spawn(&exe, &[]);
    let cases = [
        ("name", r#""item-5""#),
        ("pair", ""),
        ("minmax", "(-9, 17)"),
        ("tail", "[20, 30]"),
        ("word", r#""beta""#),
        ("halves", "(4.5, 2.25)"),
        ("meters", "(42000)"),
        ("triple", "(6, 7, 306)"),
        ("wide", ""),
        ("c_pair", ""),
    ];
    for (f, _) in cases {
        scry.ok(&format!("breakpoint.set('returned_values::{f}')"));
    }
    for (f, want) in cases {
        scry.ok("cont()");
        let fin = scry.ok("ctx.fin = finish(); String(ctx.fin)");
        if want.is_empty() {
            // Not a value read from rax: the stop says rax is only rax.
            assert!(
                fin.contains(" is returned is not known for certain> (rax 0x"),
                "{f}: {fin}"
            );
            assert_eq!(
                scry.ok("[ctx.fin.returned, typeof ctx.fin.rax].join(' ')"),
                " number"
            );
        } else {
            assert!(fin.ends_with(&format!(" returned {want}")), "{f}: {fin}");
        }
    }
    scry.ok("cont()");
    let out = scry.ok("output()");
    assert!(out.contains("truth name=item-5 a=7 b=21"), "{out}");
    assert!(
        out.contains("lo=-9 hi=17 tail=[20, 30] word=beta h=4.5 q=2.25 m=42000 t=6,7,306"),
        "{out}"
    );
}

/// A scalar is read as its type says, not as rax: an `int` that returned -183 is -183, and
/// the value is a typed one (a number where numbers go).
#[test]
fn finish_reads_a_returned_scalar_as_its_type() {
    for opt in ["-O0", "-O2"] {
        let exe = common::fixture_with("returned_scalars", &["-g", opt]);
        let mut scry = Scry::spawn(&exe, &[]);
        let cases = [
            ("negative", "-183"),
            ("letter", "99 'c'"),
            ("odd", "true"),
            ("hue", "BLUE"),
            ("slot", "<table+0x8>"),
            ("shrink", "-4463"),
            // A float's digits, as gdb shows a float (it was 0.6666666865348816).
            ("third", "returned 0.6666667"),
        ];
        for (f, _) in cases {
            scry.ok(&format!("breakpoint.set('{f}')"));
        }
        for (f, want) in cases {
            let stop = scry.ok("cont()");
            assert!(stop.contains(&format!(" {f}")), "{opt}: {stop}");
            let fin = scry.ok(&format!("ctx.fin = ctx.{f} = finish()"));
            assert!(
                fin.contains(" returned ") && fin.contains(want),
                "{opt} {f}: {fin}"
            );
        }
        assert_eq!(scry.ok("ctx.shrink.returned + 1"), "-4462", "{opt}");
        assert_eq!(scry.ok("ctx.shrink.returned < 0"), "true", "{opt}");
        assert!(scry.ok("cont()").starts_with("exited with code 0"));
        assert!(scry
            .ok("output()")
            .contains("n=-183 c=c b=1 h=2 p=30 s=-4463 t=0.6666667"));
    }
}

/// `_Complex` results are read where the psABI returns them (xmm0, xmm0:xmm1, st0:st1), at
/// -O2 where rax holds something else (printf's count): `3 + -6i`, never `4.4e-323 + 0i`.
#[test]
fn complex_results_are_read_from_their_registers() {
    let exe = common::fixture_from(
        "complex_returns",
        "cc",
        &["-g", "-O2"],
        &["complex_returns.c"],
    );
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('rcf'); breakpoint.set('rcd'); breakpoint.set('rcl')");
    let mut got = Vec::new();
    for _ in 0..3 {
        scry.ok("cont()");
        let stop = scry.ok("finish()");
        let value = stop.split(" returned ").nth(1).unwrap_or(&stop).to_string();
        got.push(value);
    }
    scry.ok("cont()");
    let truth = common::truth(&mut scry);
    let want: Vec<String> = ["rcf", "rcd", "rcl"]
        .iter()
        .map(|f| truth[*f].replacen('+', " + ", 1))
        .collect();
    assert_eq!(got, want);
}

//! What a first-time user meets on programs written for no test: optimized floating point,
//! numbers far from 1, and the lines a stop reports. Ground truth is what each fixture
//! prints itself.

mod common;

use std::process::Command;

use common::{fixture_with, Scry};

/// The fixture's own output, run without a debugger.
fn run(binary: &std::path::Path) -> String {
    let out = Command::new(binary).output().expect("fixture runs");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// The value the fixture printed after `key` on the line starting with `key`.
fn printed(output: &str, key: &str) -> f64 {
    output
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .unwrap_or_else(|| panic!("no `{key}` in {output}"))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn a_double_kept_in_an_xmm_register_has_its_value_at_o2() {
    let bin = fixture_with("optfloat", &["-g", "-O2"]);
    let out = run(&bin);
    let mut scry = Scry::spawn(&bin, &[]);
    scry.ok("breakpoint.set('weigh'); cont()");
    // The parameter `scale` arrives in xmm0.
    assert_eq!(scry.ok("String(state.var('scale'))").trim(), "1.5");
    // Every instruction of weigh, `total` as the debugger reads it there: at -O2 it lives in
    // an xmm register (DWARF register 17+), never `<unavailable: ...>`.
    scry.ok("ctx.seen = []; ctx.sp = state.sp;
         addEventListener('step', e => {
           if (e.state.sp > ctx.sp) return 'stop';
           ctx.seen.push(String(e.state.var('total')));
         })");
    let stop = scry.ok("step(2000)");
    assert!(!stop.contains("2000 of 2000"), "{stop}");
    let seen = scry.ok("ctx.seen.join('\\n')");
    let mut values: Vec<f64> = Vec::new();
    for text in seen.lines() {
        assert!(!text.contains("unavailable"), "{seen}");
        if text == "<optimized out>" {
            continue;
        }
        let v: f64 = text
            .parse()
            .unwrap_or_else(|_| panic!("total {text} in {seen}"));
        if values.last() != Some(&v) {
            values.push(v);
        }
    }
    // 0, then each partial sum the fixture printed, in order.
    let mut want = vec![0.0];
    want.extend((0..4).map(|i| printed(&out, &format!("partial {i} "))));
    assert_eq!(values, want, "{seen}");
}

#[test]
fn doubles_far_from_one_print_short_and_read_back_exactly() {
    let bin = fixture_with("optfloat", &["-g", "-O0"]);
    let out = run(&bin);
    let line = out.lines().find(|l| l.starts_with("tiny ")).unwrap();
    let fields: Vec<&str> = line.split_whitespace().collect();
    let (tiny, huge): (f64, f64) = (fields[1].parse().unwrap(), fields[3].parse().unwrap());
    let mut scry = Scry::spawn(&bin, &[]);
    for (name, want) in [("tiny", tiny), ("huge", huge)] {
        let text = scry.ok(&format!("state.var('{name}')"));
        let text = text.trim();
        assert!(
            text.len() <= 24,
            "{name} printed as {} chars: {text}",
            text.len()
        );
        let got: f64 = text.parse().unwrap_or_else(|_| panic!("{name}: {text}"));
        assert_eq!(got.to_bits(), want.to_bits(), "{name}: {text}");
    }
    // Also inside a struct-like listing: the array of doubles keeps its short forms.
    let weights = scry.ok("state.var('weights')");
    assert_eq!(weights.trim(), "[0.5, 1.25, -3, 8]");
}

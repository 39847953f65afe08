//! C++ static data members in typed values, as gdb prints them: beside the other members in
//! declaration order, values from their definitions (another unit's too, a thread-local's
//! too) or their declaration's constant, `<optimized out>` for one never defined, a
//! singleton's static of its own type printed once; and read by path, by JS member and in
//! member listings. Built with DWARF 4 (statics are DW_TAG_member) and DWARF 5 (they are
//! DW_TAG_variable inside the class).

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::{fixture_from, gdb_prints, parse_num, truth, Scry};

/// The fixture's two units built with g++ at -O0 and `-gdwarf-<version>`.
fn build(version: u8) -> PathBuf {
    let flags = ["-O0".to_string(), format!("-gdwarf-{version}")];
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    fixture_from(
        &format!("static_members_dwarf{version}"),
        "g++",
        &flags,
        &["static_members.cpp", "static_members_other.cpp"],
    )
}

/// scry stopped in `use(&c)`, and the fixture's own `truth` line.
fn stopped(exe: &Path) -> (Scry, HashMap<String, String>) {
    let mut scry = Scry::spawn(exe, &[]);
    scry.ok("breakpoint.set('use')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1 at "));
    let truth = truth(&mut scry);
    (scry, truth)
}

/// gdb's spelling in scry's: `name: value`, and a static already printed as `<shown above>`.
fn as_scry(gdb: &str) -> String {
    gdb.replace(
        "<same as static member of an already seen type>",
        "<shown above>",
    )
    .replace(" = ", ": ")
}

const PRINTED: [&str; 7] = ["c", "cfg", "s", "u", "reg", "per", "d"];

fn prints_as_gdb_does(version: u8) {
    let exe = build(version);
    let (mut scry, t) = stopped(&exe);
    let ours: Vec<String> = PRINTED
        .iter()
        .map(|v| scry.ok(&format!("state.var('{v}')")))
        .collect();
    let shared = format!(
        "{{static instances: {}, static limit: 9, id: {}, w: 0.5}}",
        t["instances"], t["shared_id"]
    );
    assert_eq!(
        ours[0],
        format!(
            "{{static instances: {}, static limit: 9, id: 42, w: 1.5}}",
            t["instances"]
        )
    );
    assert_eq!(ours[1], format!("{{static shared: {shared}, level: 2}}"));
    // The singleton's `inst` is printed once; inside itself it is the one shown above.
    assert_eq!(
        ours[2],
        "{static inst: {static inst: <shown above>, x: 5}, x: 1}"
    );
    // Defined in the other unit; thread-local: both read from where they live.
    assert_eq!(
        ours[4],
        format!("{{slots: 4, static total: {}}}", t["total"])
    );
    assert_eq!(ours[5], format!("{{static hits: {}, x: 6}}", t["hits"]));
    assert_eq!(
        ours[6],
        format!(
            "{{<Counter>: {{static instances: {}, static limit: 9, id: 13, w: 2.5}}, extra: 21}}",
            t["instances"]
        )
    );
    // DWARF 4 declares a static nobody defined; GCC's DWARF 5 leaves it out (gdb agrees).
    if version == 4 {
        assert_eq!(ours[3], "{a: 8, static never: <optimized out>}");
    }
    if let Some(gdb) = gdb_prints(&exe, "use", &PRINTED) {
        let gdb: Vec<String> = gdb.iter().map(|v| as_scry(v)).collect();
        assert_eq!(ours, gdb);
    }
}

#[test]
fn static_members_print_as_gdb_prints_them_dwarf4() {
    prints_as_gdb_does(4);
}

#[test]
fn static_members_print_as_gdb_prints_them_dwarf5() {
    prints_as_gdb_does(5);
}

fn navigates(version: u8) {
    let exe = build(version);
    let (mut scry, t) = stopped(&exe);
    // Paths: through a pointer, on an object, a constant, a base class's, another unit's.
    assert_eq!(scry.ok("state.value('p->instances')"), t["instances"]);
    assert_eq!(scry.ok("state.value('c.limit')"), "9");
    assert_eq!(scry.ok("state.value('d.instances')"), t["instances"]);
    assert_eq!(scry.ok("state.value('reg.total')"), t["total"]);
    assert_eq!(scry.ok("state.value('per.hits')"), t["hits"]);
    assert_eq!(scry.ok("state.value('cfg.shared.id')"), t["shared_id"]);
    // By the qualified name, with no object at hand: a constant the class declares too (it
    // was "no variable 'Counter::limit'"), and one of a namespaced class.
    assert_eq!(scry.ok("state.value('Counter::limit')"), "9");
    assert_eq!(scry.ok("state.value('Counter::instances')"), t["instances"]);
    assert_eq!(scry.ok("state.value('ns::Cfg::shared.id')"), t["shared_id"]);
    // The address is the definition's, as the program sees it.
    for (path, key) in [
        ("c.instances", "instances_at"),
        ("cfg.shared", "shared_at"),
        ("s.inst", "inst_at"),
        ("reg.total", "total_at"),
        ("per.hits", "hits_at"),
    ] {
        let addr = scry.num(&format!("state.value('{path}').$addr"));
        assert_eq!(addr, parse_num(&t[key]), "{path}");
    }
    // JS members, listings and the no-member error list statics in declaration order.
    assert_eq!(scry.ok("+state.var('c').instances"), t["instances"]);
    assert_eq!(scry.ok("+state.var('p').limit"), "9");
    assert_eq!(
        scry.ok("Object.keys(state.var('c')).join(' ')"),
        "instances limit id w"
    );
    assert_eq!(
        scry.err("state.value('p->nope')"),
        "error: Counter has no member 'nope'; members: instances limit id w"
    );
    assert_eq!(
        scry.ok("JSON.stringify(state.var('cfg'))"),
        format!(
            "{{\"shared\":{{\"instances\":{},\"limit\":9,\"id\":{},\"w\":0.5}},\"level\":2}}",
            t["instances"], t["shared_id"]
        )
    );
    // A singleton is bounded as plain data too, and navigable as deep as asked.
    assert_eq!(
        scry.ok("JSON.stringify(state.var('s'))"),
        "{\"inst\":{\"inst\":\"shown above\",\"x\":5},\"x\":1}"
    );
    assert_eq!(scry.ok("+state.var('s').inst.inst.inst.inst.x"), "5");
    if version == 4 {
        assert_eq!(scry.ok("state.value('u.never')"), "<optimized out>");
        assert_eq!(scry.ok("Object.keys(state.var('u')).join(' ')"), "a never");
    }
    // Nothing was changed by reading: the program finishes as it would.
    scry.ok("breakpoint.remove(1)");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
}

#[test]
fn static_members_are_read_by_path_and_member_dwarf4() {
    navigates(4);
}

#[test]
fn static_members_are_read_by_path_and_member_dwarf5() {
    navigates(5);
}

/// A static member named as the code names it under `using namespace shop;`
/// (`Till::opened`) is found, as gdb finds it through the directive (it was "no variable");
/// a name two namespaces could complete is an error naming both, never one of them.
#[test]
fn a_static_member_named_under_using_namespace_is_found() {
    let exe = fixture_from(
        "using_namespace",
        "g++",
        &["-g", "-O0"],
        &["using_namespace.cpp"],
    );
    let src = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/using_namespace.cpp"),
    )
    .unwrap();
    let line = common::line_of(&src, "// report");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok(&format!(
        "breakpoint.set('using_namespace.cpp:{line}'); cont()"
    ));
    assert_eq!(scry.num("state.value('Till::opened')"), 3);
    assert_eq!(scry.num("state.value('shop::Till::opened')"), 3);
    // A template's static member as GCC spells it, and as clang and a user write it.
    for spelled in [
        "Box<std::pair<int, char> >::made",
        "Box<std::pair<int, char>>::made",
    ] {
        assert_eq!(
            scry.num(&format!("state.value('{spelled}')")),
            4,
            "{spelled}"
        );
    }
    let both = scry.err("state.value('Cfg::level')");
    assert!(
        both.contains("a::Cfg::level") && both.contains("b::Cfg::level"),
        "{both}"
    );
    scry.ok("cont()");
    assert_eq!(truth(&mut scry)["opened"], "3");
}

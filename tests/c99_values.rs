//! C99 values that are not plain scalars, printed as gdb prints them: `_Complex` numbers
//! (`1.5 + -2.25i`) and flexible array members (their address; a character array's string).

mod common;

use common::{fixture, gdb_prints, truth, Scry};

#[test]
fn complex_numbers_and_flexible_array_members_print_as_gdb_prints_them() {
    let exe = fixture("complexflex");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('handle')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1 at "));
    let t = truth(&mut scry);
    // The program's own creal/cimag, spelled `re + imi` as gdb does.
    let z = t["z"].replace('+', " + ");
    let zf = t["zf"].replace('+', " + ");
    assert_eq!(z, "1.5 + -2.25i");
    assert_eq!(scry.ok("state.value('r->z')"), z);
    assert_eq!(scry.ok("state.value('r->zf')"), zf);
    assert_eq!(
        scry.ok("state.value('*r')"),
        format!(
            "{{kind: 3, z: {z}, zf: {zf}, bad: {}, badf: {}}}",
            t["bad"], t["badf"]
        )
    );
    assert_eq!(scry.ok("state.var('r').deref().z.kind"), "complex");
    assert_eq!(
        scry.ok("JSON.stringify(state.var('r').deref().z)"),
        r#"{"real":1.5,"imag":-2.25}"#
    );
    // A flexible array member is where it is: the address the program printed.
    let data = &t["data"];
    assert_eq!(
        scry.ok("state.value('m->data')"),
        format!("{data} \"hello\"")
    );
    assert_eq!(scry.ok("state.value('*m')"), "{len: 5, data: \"hello\"}");
    let items = &t["items"];
    assert_eq!(scry.ok("state.value('v->items')"), *items);
    assert_eq!(
        scry.ok("state.value('*v')"),
        format!("{{n: 2, items: {items}}}")
    );
    assert_eq!(scry.ok("state.value('v->items[1]')"), "8");
    // NaNs keep their sign and mantissa bits, as the program computed them from the bits.
    assert_eq!(scry.ok("state.value('r->bad')"), t["bad"]);
    assert_eq!(scry.ok("state.value('r->badf')"), t["badf"]);
    // gdb on the same binary (its own process, so compare what does not move with ASLR off).
    if let Some(g) = gdb_prints(
        &exe,
        "handle",
        &["r->z", "r->zf", "v->items[1]", "r->bad", "r->badf"],
    ) {
        let want = [&z, &zf, "8", &t["bad"], &t["badf"]];
        assert_eq!(g, want.map(str::to_string).to_vec());
    }
}

//! Values that once read wrong with no warning: each fixture names its pitfall, and the test
//! checks scry's answer against what the program itself prints.

mod common;

use common::Scry;

#[test]
fn copy_relocated_library_globals_read_the_executables_copy() {
    let exe = common::fixture("copy_relocated");
    let mut scry = Scry::spawn(&exe, &["-a", "-b", "rest"]);
    scry.ok("breakpoint.set('parsed')");
    scry.ok("cont()");
    let truth = common::truth(&mut scry);
    assert_eq!(truth["optind"], "3");
    assert_eq!(scry.ok("Number(state.var('optind'))"), truth["optind"]);
    let name = scry.ok("String(state.var('__progname'))");
    assert!(
        name.ends_with(&format!("\"{}\"", truth["progname"])),
        "{name} vs {}",
        truth["progname"]
    );
    // The copy is where the executable's symbol says.
    let addr = scry.num("state.var('optind').$addr");
    assert_eq!(addr, scry.num("symbols('optind')[0].addr"));
}

//! The orientation an agent reads first (after `scry session start`, `scry_start`, at a
//! terminal, and on `:status`): what the program is, where it stopped, its threads, modules
//! and debug info, and one line of the API to start from. Two lines, so `help()` (3 KB) is
//! not the first call of every task.

use crate::session::Overview;

/// The one-line API hint.
pub(crate) const HINT: &str =
    "API: breakpoint.set('main'|'file.c:12'); cont(); step(n); next(); state.registers / \
.memory(a).u64() / .unwind() / .locals(); output(); help() or help('state')";

/// The hint for a core file: it can be read, not run.
pub(crate) const CORE_HINT: &str =
    "API (a core: read-only, nothing runs): state.registers / .memory(a).u64() / .unwind() / \
.locals(); thread.list() / thread.select(tid); modules(); help('core')";

/// How many module names the line shows before `...`.
const NAMES_SHOWN: usize = 4;

/// What the first line says about where the target is.
pub(crate) enum At<'a> {
    /// Nothing: the stop line printed above it says it.
    Omitted,
    /// `at 0x... main loop.c:12`: the selected thread's pc.
    Pc,
    /// The last stop's line (`signal SIGSEGV fault_addr=0x28 at 0x... process+0x28 pool.c:17
    /// thread 4811 [notes]`), while the selected thread is still where that stop left it:
    /// why it stopped (a core's signal and fault address, a breakpoint) is the first thing
    /// an agent asks, and in pipe mode nothing else shows the first stop.
    Stop(&'a str),
}

/// `./loop (pid 123): at 0x... main loop.c:12; 1 thread; 3 modules: ...; debug info: loop`
pub(crate) fn describe(o: &Overview, at: At<'_>) -> String {
    let mut line = match &o.core {
        Some(core) => format!("{} (core file {} of pid {})", o.program, core, o.pid),
        None => format!("{} (pid {})", o.program, o.pid),
    };
    match at {
        At::Pc => {
            line.push_str(&format!(": at {:#x}", o.pc));
            if let Some(sym) = &o.symbol {
                line.push_str(&format!(" {sym}"));
            }
            if let Some(src) = &o.source {
                line.push_str(&format!(" {src}"));
            }
            line.push(';');
        }
        At::Stop(stop) => line.push_str(&format!(": {stop};")),
        At::Omitted => line.push(':'),
    }
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    line.push_str(&format!(" {};", plural(o.threads, "thread")));
    let mut names = o
        .modules
        .iter()
        .take(NAMES_SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(" ");
    if o.modules.len() > NAMES_SHOWN {
        names.push_str(" ...");
    }
    line.push_str(&format!(" {}: {names};", plural(o.modules.len(), "module")));
    // What matters first is the program's own code; libraries may have debug files.
    let exe = o.modules.first();
    if exe.is_some_and(|e| !o.with_debug_info.contains(e)) {
        line.push_str(&format!(
            " no debug info in {} (no source lines or variables there: build with -g)",
            exe.map_or("", |e| e.as_str())
        ));
        if !o.with_debug_info.is_empty() {
            line.push(';');
        }
    }
    if !o.with_debug_info.is_empty() {
        line.push_str(&format!(" debug info: {}", o.with_debug_info.join(" ")));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_lines_say_what_comes_first() {
        let mut o = Overview {
            pid: 42,
            program: "./loop".into(),
            core: None,
            pc: 0x401136,
            symbol: Some("main+0x4".into()),
            source: Some("loop.c:12".into()),
            threads: 1,
            modules: vec!["loop".into(), "libc.so.6".into()],
            with_debug_info: vec!["loop".into()],
        };
        assert_eq!(
            describe(&o, At::Pc),
            "./loop (pid 42): at 0x401136 main+0x4 loop.c:12; 1 thread; 2 modules: loop libc.so.6; debug info: loop"
        );
        o.with_debug_info.clear();
        o.modules = (0..6).map(|i| format!("m{i}")).collect();
        o.threads = 3;
        assert_eq!(
            describe(&o, At::Omitted),
            "./loop (pid 42): 3 threads; 6 modules: m0 m1 m2 m3 ...; no debug info in m0 (no source lines or variables there: build with -g)"
        );
        o.with_debug_info = vec!["m1".into()];
        assert!(describe(&o, At::Omitted).ends_with("build with -g); debug info: m1"));
        assert!(HINT.len() < 160);
        assert!(CORE_HINT.len() < 160);
        assert!(describe(&o, At::Stop("signal SIGSEGV at 0x1 f [n]"))
            .starts_with("./loop (pid 42): signal SIGSEGV at 0x1 f [n]; 3 threads;"));
        o.core = Some("core.42".into());
        assert!(describe(&o, At::Omitted)
            .starts_with("./loop (core file core.42 of pid 42): 3 threads"));
    }
}

//! Hostile input files: a deterministic mutation run over the ELF loader, the symbol index,
//! DWARF lines and the CFI unwinder, and over core files (their headers, notes and segment
//! table, and truncations). Every case must end in an answer or an error, never a panic or a
//! hang. CI runs a bounded number of cases; `SCRY_FUZZ_CASES` runs more (`benches/fuzz_long`
//! runs 100,000 ELF cases and 20,000 core cases; a signal death ends the test process, which
//! fails it).

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::{Duration, Instant};

use common::{fixture, fixture_with, Scry};

/// One case taking longer than this is a hang (a healthy one takes a millisecond or two).
const CASE_BUDGET: Duration = Duration::from_secs(10);
use scry::corefile::{CoreImage, CoreProcess, FileSearch};
use scry::maps::parse_maps;
use scry::symbols::unwind::{unwind, UnwindLimits, UnwindRegs};
use scry::symbols::{ElfImage, FileAddr, ModuleFile, RuntimeAddr, SymbolStore};

/// xorshift64*: the same cases on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One way of breaking a file.
fn mutate(rng: &mut Rng, original: &[u8]) -> Vec<u8> {
    let mut bytes = original.to_vec();
    match rng.below(6) {
        // Truncate anywhere.
        0 => bytes.truncate(rng.below(bytes.len())),
        // Flip bytes in the headers (ELF header, program and section headers live early or late).
        1 => {
            for _ in 0..1 + rng.below(8) {
                let at = if rng.below(2) == 0 {
                    rng.below(256.min(bytes.len()))
                } else {
                    bytes.len() - 1 - rng.below(4096.min(bytes.len()))
                };
                bytes[at] ^= 1 << rng.below(8);
            }
        }
        // Random bytes anywhere.
        2 => {
            for _ in 0..1 + rng.below(64) {
                let at = rng.below(bytes.len());
                bytes[at] = rng.next() as u8;
            }
        }
        // Huge counts and offsets: overwrite a random 8-byte word with an extreme value.
        3 => {
            let at = rng.below(bytes.len().saturating_sub(8));
            let v: u64 = [u64::MAX, 0x7fff_ffff, 0x1_0000_0000, 0][rng.below(4)];
            bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
        // Zero a whole region (a section's contents gone).
        4 => {
            let at = rng.below(bytes.len());
            let len = rng.below(4096).min(bytes.len() - at);
            bytes[at..at + len].fill(0);
        }
        // Duplicate a region over another (cyclic-looking structures).
        _ => {
            let len = 1 + rng.below(512);
            let from = rng.below(bytes.len().saturating_sub(len));
            let to = rng.below(bytes.len().saturating_sub(len));
            let chunk = bytes[from..from + len].to_vec();
            bytes[to..to + len].copy_from_slice(&chunk);
        }
    }
    bytes
}

/// Everything scry does with a module, on a possibly broken file.
/// Returns whether the file still parsed (so the deeper layers were reached).
fn exercise(rng: &mut Rng, path: &Path, bytes: &[u8]) -> bool {
    let Ok(image) = ElfImage::parse(bytes.to_vec(), path) else {
        return false;
    };
    let module = ModuleFile::standalone(image);
    for _ in 0..8 {
        let addr = FileAddr(rng.next() % 0x20000);
        let _ = module.symbols().lookup_addr(addr);
        let _ = module.locations(addr);
        // Every variable in scope there and a global, typed and printed over junk memory.
        let junk = |a: u64, buf: &mut [u8]| {
            buf.iter_mut()
                .enumerate()
                .for_each(|(i, b)| *b = (a as usize).wrapping_add(i) as u8);
            !a.is_multiple_of(3)
        };
        if let Some(d) = module.dwarf() {
            let _ = d.describe(addr, "counter", &junk);
        }
    }
    let _ = module.symbols().lookup_name("main");
    let _ = module.symbols().nearest_names("mian", 3);
    // As a loaded module: write it out, map it at a fixed base, and unwind over junk memory.
    std::fs::write(path, bytes).unwrap();
    let base = 0x5555_5555_4000u64;
    let maps = parse_maps(&format!(
        "{base:x}-{:x} r-xp 00000000 00:00 7 {}\n7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0 [stack]\n",
        base + 0x40_0000,
        path.display()
    ));
    let mut store = SymbolStore::new();
    store.refresh(&maps, Some(path), &|m| {
        m.path.clone().unwrap_or_default().into()
    });
    let stack: Vec<u8> = (0..4096).map(|_| rng.next() as u8).collect();
    let stack_base = 0x7fff_ffff_e000u64;
    let read = |addr: u64, buf: &mut [u8]| {
        if addr >= stack_base
            && addr.saturating_add(buf.len() as u64) <= stack_base + stack.len() as u64
        {
            let at = (addr - stack_base) as usize;
            buf.copy_from_slice(&stack[at..at + buf.len()]);
            return true;
        }
        if addr >= base && addr.saturating_add(buf.len() as u64) <= base + bytes.len() as u64 {
            let at = (addr - base) as usize;
            buf.copy_from_slice(&bytes[at..at + buf.len()]);
            return true;
        }
        false
    };
    for _ in 0..4 {
        let mut regs = UnwindRegs::from_pc_sp(
            base + rng.next() % bytes.len().max(1) as u64,
            (stack_base + (rng.next() % 2048)) & !7,
        );
        regs.set(6, stack_base + (rng.next() % 4096));
        let (frames, _) = unwind(&store, &regs, &read, &UnwindLimits { max_frames: 64 });
        assert!(frames.len() <= 64);
        let _ = store.symbolize(RuntimeAddr(base + rng.next() % 0x10000));
    }
    true
}

#[test]
fn mutated_binaries_never_panic() {
    let cases: usize = std::env::var("SCRY_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500);
    let inputs = [
        fixture("loop"),
        fixture_with("chain", &["-g", "-O2", "-fomit-frame-pointer"]),
        fixture_with("loop", &["-g", "-O0", "-no-pie"]),
    ];
    let originals: Vec<Vec<u8>> = inputs.iter().map(|p| std::fs::read(p).unwrap()).collect();
    // Unbroken, the value reader answers: main's parameters and the global `counter`.
    let image = ElfImage::parse(originals[0].clone(), &inputs[0]).unwrap();
    let main = image.symbols.lookup_name("main").unwrap().addr;
    let module = ModuleFile::standalone(image);
    let seen = module
        .dwarf()
        .unwrap()
        .describe(FileAddr(main.0 + 8), "counter", &|_, _| false);
    assert!(
        seen.iter().any(|l| l.starts_with("argc: int = ")),
        "{seen:?}"
    );
    assert!(
        seen.iter().any(|l| l.starts_with("counter: int = ")),
        "{seen:?}"
    );
    let scratch = common::temp_path("mutant");
    let mut rng = Rng(0x5eed_cafe_f00d_d00d);
    let started = Instant::now();
    let mut panics = Vec::new();
    let mut parsed = 0;
    let mut slowest = (Duration::ZERO, 0);
    for case in 0..cases {
        let original = &originals[case % originals.len()];
        let mutant = mutate(&mut rng, original);
        let mut case_rng = Rng(rng.next() | 1);
        let began = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| {
            exercise(&mut case_rng, &scratch, &mutant)
        }));
        slowest = slowest.max((began.elapsed(), case));
        match result {
            Ok(true) => parsed += 1,
            Ok(false) => {}
            Err(_) => panics.push(case),
        }
    }
    let _ = std::fs::remove_file(&scratch);
    eprintln!(
        "malformed input: {cases} cases ({parsed} still parsed and were symbolized, line-looked-up and unwound) in {:.1?}, {} panics, slowest case {} in {:.1?}",
        started.elapsed(),
        panics.len(),
        slowest.1,
        slowest.0
    );
    assert!(
        slowest.0 < CASE_BUDGET,
        "case {} took {:?}: a hang",
        slowest.1,
        slowest.0
    );
    assert!(
        parsed > cases / 4,
        "the mutations should leave many files loadable: {parsed}"
    );
    assert!(panics.is_empty(), "cases that panicked: {panics:?}");
}

/// Everything scry does with a core file, on a possibly broken one. Returns whether it still
/// opened as a core.
fn exercise_core(rng: &mut Rng, bytes: Vec<u8>) -> bool {
    let Ok(image) = CoreImage::parse(Box::new(bytes)) else {
        return false;
    };
    let core = CoreProcess::from_image(Path::new("mutant.core"), image, &FileSearch::default());
    let _ = (core.pid(), core.crash(), core.problems(), core.exe_path());
    let maps = core.maps();
    for tid in core.thread_ids() {
        let Ok(regs) = core.regs(tid) else { continue };
        let _ = core.fp_area(tid);
        let mut buf = [0u8; 64];
        let _ = core.memory().read(regs.rsp, &mut buf);
        let _ = core.memory().read_partial(regs.rip, &mut buf);
    }
    let mut buf = vec![0u8; 4096];
    for _ in 0..8 {
        let addr = match maps.get(rng.below(maps.len().max(1))) {
            Some(m) => m.start.wrapping_add(rng.next() % m.len().max(1)),
            None => rng.next(),
        };
        let len = rng.below(buf.len()) + 1;
        let _ = core.memory().read(addr, &mut buf[..len]);
        let _ = core.memory().read_partial(addr, &mut buf[..len]);
    }
    true
}

#[test]
fn mutated_core_files_never_panic() {
    let cases: usize = std::env::var("SCRY_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(300, |n: usize| n / 5);
    // A real core: the crash fixture at its SIGSEGV, written by gcore().
    let path = common::temp_path("mutant-core");
    let mut scry = Scry::spawn(&fixture("crash"), &[]);
    scry.ok("cont()");
    scry.ok(&format!("gcore({:?})", path.to_str().unwrap()));
    drop(scry);
    let original = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    // The headers, notes and segment table live in the first pages; most mutations go there.
    let head = original.len().min(64 * 1024);
    let mut rng = Rng(0xc0de_d00d_5eed_0001);
    let started = Instant::now();
    let mut panics = Vec::new();
    let mut opened = 0;
    let mut slowest = (Duration::ZERO, 0);
    for case in 0..cases {
        let mut mutant = mutate(&mut rng, &original[..head]);
        if rng.below(4) != 0 {
            mutant.extend_from_slice(&original[head..]);
        }
        let mut case_rng = Rng(rng.next() | 1);
        let began = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| exercise_core(&mut case_rng, mutant)));
        slowest = slowest.max((began.elapsed(), case));
        match result {
            Ok(true) => opened += 1,
            Ok(false) => {}
            Err(_) => panics.push(case),
        }
    }
    eprintln!(
        "malformed cores: {cases} cases ({opened} still opened and were read: threads, registers, memory, mappings) in {:.1?}, {} panics, slowest case {} in {:.1?}",
        started.elapsed(),
        panics.len(),
        slowest.1,
        slowest.0
    );
    assert!(
        slowest.0 < CASE_BUDGET,
        "case {} took {:?}: a hang",
        slowest.1,
        slowest.0
    );
    assert!(
        opened > cases / 4,
        "the mutations should leave many cores readable: {opened}"
    );
    assert!(panics.is_empty(), "cases that panicked: {panics:?}");
}

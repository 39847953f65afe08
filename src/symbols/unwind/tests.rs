//! Tests of the unwinder on synthetic stacks, on this test process's own live stack (Rust,
//! C loaded with dlopen, libc's qsort, a real signal handler) and on a child process blocked
//! in a system call, read through /proc like a debugger reads a stopped thread.

use std::cell::RefCell;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use super::cfi::{self, CfiStep};
use super::*;
use crate::maps::{parse_maps, MapEntry, Perms};
use crate::symbols::addr::RuntimeAddr;
use crate::symbols::elf::sections::read_sections;
use crate::symbols::elf::ElfImage;
use crate::symbols::store::{ModuleFile, SymbolStore};
use crate::symbols::testutil::{compile, TempExe};

// ---------------------------------------------------------------------------------------
// Helpers

fn identity(m: &MapEntry) -> PathBuf {
    PathBuf::from(m.file_path().unwrap_or_default())
}

/// The modules of this very process, as a debugger attached to it would see them.
fn own_store() -> SymbolStore {
    let maps = parse_maps(&std::fs::read_to_string("/proc/self/maps").unwrap());
    let exe = std::fs::read_link("/proc/self/exe").unwrap();
    let mut store = SymbolStore::new();
    store.refresh(&maps, Some(&exe), &identity);
    store
}

/// Reads this process's memory the way a debugger reads a tracee's: through /proc.
fn own_mem(addr: u64, buf: &mut [u8]) -> bool {
    static MEM: OnceLock<File> = OnceLock::new();
    let f = MEM.get_or_init(|| File::open("/proc/self/mem").unwrap());
    f.read_exact_at(buf, addr).is_ok()
}

/// Captures the registers of the function it is expanded in, at that point, into an
/// `UnwindRegs` (rip, rsp, rbp, rbx, r12-r15). The block writes no register but the scratch
/// one it declares, so everything stored is one consistent machine state.
macro_rules! capture_regs {
    () => {{
        let mut raw = [0u64; 8];
        // SAFETY: stores eight words into `raw`, a local array of eight words; no other
        // memory, register or flag is touched.
        unsafe {
            std::arch::asm!(
                "lea {t}, [rip]",
                "mov [{p}], {t}",
                "mov [{p} + 8], rsp",
                "mov [{p} + 16], rbp",
                "mov [{p} + 24], rbx",
                "mov [{p} + 32], r12",
                "mov [{p} + 40], r13",
                "mov [{p} + 48], r14",
                "mov [{p} + 56], r15",
                p = in(reg) raw.as_mut_ptr(),
                t = out(reg) _,
                options(nostack, preserves_flags),
            );
        }
        let mut regs = UnwindRegs::default();
        for (reg, value) in [16u16, 7, 6, 3, 12, 13, 14, 15].into_iter().zip(raw) {
            regs.set(reg, value);
        }
        regs
    }};
}

/// Unwinds the live stack of its caller (frame 0 is this function, alive during the walk).
#[inline(never)]
fn unwind_here(store: &SymbolStore) -> (Vec<Frame>, Option<String>) {
    let regs = capture_regs!();
    let out = unwind(store, &regs, &own_mem, &UnwindLimits::default());
    std::hint::black_box(&out);
    out
}

fn names(store: &SymbolStore, frames: &[Frame]) -> Vec<String> {
    frames
        .iter()
        .map(|f| {
            store.symbol_at(RuntimeAddr(f.lookup_pc())).map_or_else(
                || format!("{:#x}", f.pc),
                |(_, s, _)| s.display_name().into_owned(),
            )
        })
        .collect()
}

/// Index of the first name at or after `from` that satisfies `pred`.
fn find_from(names: &[String], from: usize, pred: impl Fn(&str) -> bool) -> Option<usize> {
    names
        .iter()
        .skip(from)
        .position(|n| pred(n))
        .map(|i| i + from)
}

/// Asserts that names matching each of `wanted` (by suffix) appear in this order, and
/// returns their indices.
fn assert_in_order(names: &[String], wanted: &[&str]) -> Vec<usize> {
    let mut at = 0;
    let mut out = Vec::new();
    for w in wanted {
        match find_from(names, at, |n| n == *w || n.ends_with(&format!("::{w}"))) {
            Some(i) => {
                out.push(i);
                at = i + 1;
            }
            None => panic!("{w} not found (in order) in {names:#?}"),
        }
    }
    out
}

/// Memory made of a few byte ranges; everything else is unreadable.
#[derive(Default)]
struct FakeMem {
    regions: Vec<(u64, Vec<u8>)>,
}

impl FakeMem {
    fn put_u64(&mut self, addr: u64, value: u64) {
        for (base, bytes) in &mut self.regions {
            if addr >= *base && addr + 8 <= *base + bytes.len() as u64 {
                let off = (addr - *base) as usize;
                bytes[off..off + 8].copy_from_slice(&value.to_le_bytes());
                return;
            }
        }
        panic!("{addr:#x} outside the fake memory");
    }

    fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        for (base, bytes) in &self.regions {
            let off = addr.wrapping_sub(*base);
            if addr >= *base && off + buf.len() as u64 <= bytes.len() as u64 {
                buf.copy_from_slice(&bytes[off as usize..off as usize + buf.len()]);
                return true;
            }
        }
        false
    }
}

/// The maps lines a loader would produce for `image` loaded at `base`.
fn maps_for(image: &ElfImage, path: &Path, inode: u64, base: u64) -> Vec<MapEntry> {
    let base = if image.is_dyn { base } else { 0 };
    image
        .load_segments
        .iter()
        .map(|s| MapEntry {
            start: base + (s.vaddr.0 & !0xfff),
            end: (base + s.vaddr.0 + s.memsz + 0xfff) & !0xfff,
            perms: Perms {
                read: s.flags.read,
                write: s.flags.write,
                exec: s.flags.exec,
                shared: false,
            },
            offset: s.offset & !0xfff,
            dev: "08:01".into(),
            inode,
            path: Some(path.to_string_lossy().into_owned()),
        })
        .collect()
}

fn store_for(path: &Path, base: u64) -> (SymbolStore, Arc<ModuleFile>) {
    let image = ElfImage::load(path).unwrap();
    let maps = maps_for(&image, path, 77, base);
    let mut store = SymbolStore::new();
    store.refresh(&maps, Some(path), &identity);
    let file = store.modules()[0].file.clone();
    (store, file)
}

fn sym(image: &ElfImage, name: &str) -> u64 {
    image.symbols.lookup_name(name).unwrap().addr.0
}

const STACK: u64 = 0x7ffe_0000_0000;

// ---------------------------------------------------------------------------------------
// Synthetic stacks

const FP_PROGRAM: &str = r#"
#define NI __attribute__((noinline))
volatile int sink;
NI void f3(void) { sink = 3; }
NI void f2(void) { f3(); sink = 2; }
NI void f1(void) { f2(); sink = 1; }
int main(void) { f1(); return sink; }
"#;

#[test]
fn frame_pointer_chain_without_cfi() {
    let exe = compile(
        "unw-fp",
        FP_PROGRAM,
        false,
        &[
            "-O0",
            "-fno-omit-frame-pointer",
            "-fno-asynchronous-unwind-tables",
            "-fno-unwind-tables",
            "-no-pie",
            "-fno-pie",
        ],
    );
    let (store, img) = store_for(&exe, 0);
    let (f1, f2, f3) = (
        sym(&img.image, "f1"),
        sym(&img.image, "f2"),
        sym(&img.image, "f3"),
    );

    let s = STACK;
    let mut mem = FakeMem::default();
    mem.regions.push((s, vec![0u8; 0x200]));
    // f3's frame: rbp = s+0x10 -> [saved rbp = s+0x40][return into f2]
    mem.put_u64(s + 0x10, s + 0x40);
    mem.put_u64(s + 0x18, f2 + 9);
    mem.put_u64(s + 0x40, s + 0x80);
    mem.put_u64(s + 0x48, f1 + 9);
    // f1's caller: a zero return address ends the stack.
    mem.put_u64(s + 0x80, 0);
    mem.put_u64(s + 0x88, 0);
    let mut regs = UnwindRegs::default();
    regs.set(RA, f3 + 4);
    regs.set(RSP, s);
    regs.set(RBP, s + 0x10);
    let read = |a: u64, b: &mut [u8]| mem.read(a, b);
    let (frames, why) = unwind(&store, &regs, &read, &UnwindLimits::default());
    assert_eq!(why, None, "{frames:#?}");
    let got: Vec<(u64, u64, FrameSource)> = frames.iter().map(|f| (f.pc, f.sp, f.source)).collect();
    assert_eq!(
        got,
        vec![
            (f3 + 4, s, FrameSource::Regs),
            (f2 + 9, s + 0x20, FrameSource::FramePointer),
            (f1 + 9, s + 0x50, FrameSource::FramePointer),
        ]
    );
    assert_eq!(frames[2].regs.rbp(), Some(s + 0x80));
    assert_eq!(
        frames[1].regs.get(3),
        None,
        "rbx unknown after a frame-pointer step"
    );
    assert_eq!(names(&store, &frames), ["f3", "f2", "f1"]);

    // A chain that loops back: [s+0x80] points at f3's frame again. The caller's rbp is then
    // below its sp, which is not a frame pointer to follow.
    mem.put_u64(s + 0x80, s + 0x10);
    mem.put_u64(s + 0x88, f1 + 12);
    let read = |a: u64, b: &mut [u8]| mem.read(a, b);
    let (frames, why) = unwind(&store, &regs, &read, &UnwindLimits::default());
    assert_eq!(frames.len(), 4, "{frames:#?}");
    let why = why.expect("a loop is not the end of the stack");
    assert!(why.contains("no usable frame pointer"), "{why}");

    // rbp below sp or misaligned: no fallback at all.
    let mut bad = regs.clone();
    bad.set(RBP, s - 0x100);
    let (frames, why) = unwind(&store, &bad, &read, &UnwindLimits::default());
    assert_eq!(frames.len(), 1);
    assert!(why.unwrap().contains("no unwind info"));
    bad.set(RBP, s + 0x13);
    assert_eq!(
        unwind(&store, &bad, &read, &UnwindLimits::default())
            .0
            .len(),
        1
    );

    // The frame limit.
    let (frames, why) = unwind(&store, &regs, &read, &UnwindLimits { max_frames: 2 });
    assert_eq!(frames.len(), 2);
    assert!(why.unwrap().contains("frame limit"));
    // Nothing known about the pc: nothing to walk.
    let (frames, why) = unwind(
        &store,
        &UnwindRegs::default(),
        &read,
        &UnwindLimits::default(),
    );
    assert!(frames.is_empty() && why.is_some());
}

#[test]
fn cfi_with_rbp_below_sp_reports_a_stack_that_does_not_grow() {
    // -O0 code with CFI: after the prologue the CFA is rbp+16.
    let exe = compile(
        "unw-grow",
        FP_PROGRAM,
        false,
        &["-O0", "-no-pie", "-fno-pie"],
    );
    let (store, img) = store_for(&exe, 0);
    let f2 = img.symbols().lookup_name("f2").unwrap();
    let s = STACK;
    let mut mem = FakeMem::default();
    mem.regions.push((s, vec![0u8; 0x200]));
    mem.put_u64(s + 8, sym(&img.image, "f1") + 9);
    let mut regs = UnwindRegs::default();
    regs.set(RA, f2.addr.0 + f2.size - 2);
    regs.set(RSP, s + 0x100);
    regs.set(RBP, s);
    let read = |a: u64, b: &mut [u8]| mem.read(a, b);
    let (frames, why) = unwind(&store, &regs, &read, &UnwindLimits::default());
    assert_eq!(frames.len(), 1);
    assert!(why.unwrap().contains("did not grow"));
}

const PLT_PROGRAM: &str = r#"
#include <stdio.h>
int main(void) { puts("x"); return 0; }
"#;

/// ld describes .plt with a DW_CFA_def_cfa_expression that reads rip:
/// CFA = rsp + 8 + ((rip & 15) >= 11 ? 8 : 0).
#[test]
fn plt_cfa_expression() {
    let exe = compile("unw-plt", PLT_PROGRAM, false, &["-O2", "-pie", "-fpie"]);
    let base = 0x5555_5555_4000u64;
    let (store, img) = store_for(&exe, base);
    let secs = read_sections(img.image.data());
    let Some(plt) = secs.iter().find(|s| s.name == ".plt" && s.size >= 0x20) else {
        eprintln!("no classic .plt; skipped");
        return;
    };
    if secs.iter().any(|s| s.name == ".plt.sec") {
        eprintln!("IBT .plt layout; skipped");
        return;
    }
    let ret = base + sym(&img.image, "main") + 5;
    let s = STACK;
    for (off, cfa) in [(0x10u64, s + 8), (0x10 + 11, s + 16)] {
        let mut mem = FakeMem::default();
        mem.regions.push((s, vec![0u8; 0x100]));
        mem.put_u64(cfa - 8, ret);
        let read = |a: u64, b: &mut [u8]| mem.read(a, b);
        let regs = UnwindRegs::from_pc_sp(base + plt.addr + off, s);
        let (frames, _) = unwind(&store, &regs, &read, &UnwindLimits { max_frames: 2 });
        assert_eq!(frames.len(), 2, "{frames:#?}");
        assert_eq!((frames[1].pc, frames[1].sp), (ret, cfa), "pc .plt+{off:#x}");
        assert_eq!(frames[1].source, FrameSource::Cfi);
    }
}

/// The rt_sigreturn trampoline in this process's libc, if it can be found.
fn restore_rt(store: &SymbolStore) -> Option<(u64, Arc<ModuleFile>, u64)> {
    let libc = store
        .modules()
        .iter()
        .find(|m| m.name.starts_with("libc.so") || m.name.starts_with("libc-"))?;
    let img = &libc.file.image;
    let pattern = [0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05];
    for seg in img.load_segments.iter().filter(|s| s.flags.exec) {
        let code = img.file_bytes(seg.vaddr, seg.filesz as usize)?;
        if let Some(i) = code.windows(9).position(|w| w == pattern) {
            let file = seg.vaddr.0 + i as u64;
            return Some((libc.bias.0 + file, libc.file.clone(), libc.bias.0));
        }
    }
    None
}

/// Register values a fake `ucontext_t` holds, by gregs slot (REG_R8 .. REG_RIP).
fn fake_gregs(rip: u64, rsp: u64) -> [u64; 17] {
    let mut g = [0u64; 17];
    for (i, v) in g.iter_mut().enumerate() {
        *v = 0x1111_0000 + (i as u64) * 0x101;
    }
    g[15] = rsp;
    g[16] = rip;
    g
}

#[test]
fn synthetic_signal_frame_matches_glibc_cfi() {
    let store = own_store();
    let Some((trampoline, libc, bias)) = restore_rt(&store) else {
        eprintln!("no __restore_rt found; skipped");
        return;
    };
    let interrupted = sym_rt(&store, "frame_pointer_chain_without_cfi") + 3;
    let s = STACK;
    let gregs = fake_gregs(interrupted, s + 0x1000);
    let mut mem = FakeMem::default();
    mem.regions.push((s, vec![0u8; 0x2000]));
    for (i, v) in gregs.iter().enumerate() {
        mem.put_u64(s + 40 + 8 * i as u64, *v);
    }
    let read = |a: u64, b: &mut [u8]| mem.read(a, b);
    let frame0 = UnwindRegs::from_pc_sp(trampoline, s);
    let (frames, _) = unwind(&store, &frame0, &read, &UnwindLimits { max_frames: 2 });
    assert_eq!(frames.len(), 2);
    let f = &frames[1];
    assert_eq!(f.source, FrameSource::SignalFrame);
    assert_eq!((f.pc, f.sp), (interrupted, s + 0x1000));
    assert_eq!(f.lookup_pc(), interrupted, "an interrupted pc is exact");
    // gregs order: r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip.
    let dwarf = [8u16, 9, 10, 11, 12, 13, 14, 15, 5, 4, 6, 3, 1, 0, 2, 7, 16];
    for (slot, reg) in dwarf.iter().enumerate() {
        assert_eq!(
            f.regs.get(*reg),
            Some(gregs[slot]),
            "gregs[{slot}] -> r{reg}"
        );
    }

    // glibc describes __restore_rt with CFI expressions (DW_CFA_def_cfa_expression with a
    // deref, DW_CFA_expression per register): evaluating them must agree.
    let file_pc = trampoline - bias;
    match cfi::step(libc.cfi(), bias, file_pc, &frame0, &read) {
        Ok(CfiStep::Caller(regs)) => assert_eq!(*regs, f.regs),
        Ok(CfiStep::Outermost) => panic!("outermost"),
        Err(cfi::CfiError::NoInfo) => eprintln!("libc has no CFI for __restore_rt"),
        Err(cfi::CfiError::Failed(m)) => panic!("{m}"),
    }

    // A context that points back at the trampoline itself is a loop, not a stack.
    mem.put_u64(s + 40 + 8 * 15, s);
    mem.put_u64(s + 40 + 8 * 16, trampoline);
    let read = |a: u64, b: &mut [u8]| mem.read(a, b);
    let (frames, why) = unwind(&store, &frame0, &read, &UnwindLimits::default());
    assert_eq!(frames.len(), 1);
    assert!(why.unwrap().contains("repeats"));
    // An unreadable context stops with a reason.
    let nothing = |_: u64, _: &mut [u8]| false;
    let (frames, why) = unwind(&store, &frame0, &nothing, &UnwindLimits::default());
    assert_eq!(frames.len(), 1);
    assert!(why.unwrap().contains("unreadable"));
}

fn sym_rt(store: &SymbolStore, name: &str) -> u64 {
    store.resolve(name).unwrap().0
}

/// Frame 0 in the vDSO (no file, so no module): its CFI is read from memory.
#[test]
fn unwinds_out_of_the_vdso() {
    let store = own_store();
    let Some((start, end)) = store.vdso_range() else {
        eprintln!("no vDSO; skipped");
        return;
    };
    let mut bytes = vec![0u8; (end.0 - start.0) as usize];
    assert!(own_mem(start.0, &mut bytes));
    let vdso = ElfImage::parse(bytes, Path::new("[vdso]")).unwrap();
    let entry = [
        "__vdso_clock_gettime",
        "clock_gettime",
        "__vdso_gettimeofday",
    ]
    .iter()
    .find_map(|n| vdso.symbols.lookup_name(n))
    .expect("a vDSO function");
    let pc = start.0 + entry.addr.0;
    assert!(store.module_at(RuntimeAddr(pc)).is_none());

    let ret = sym_rt(&store, "unwinds_out_of_the_vdso") + 5;
    let s = STACK;
    let mut mem = FakeMem::default();
    mem.regions.push((s, vec![0u8; 0x100]));
    mem.put_u64(s, ret);
    let read = |a: u64, b: &mut [u8]| mem.read(a, b) || own_mem(a, b);
    let regs = UnwindRegs::from_pc_sp(pc, s);
    let (frames, why) = unwind(&store, &regs, &read, &UnwindLimits { max_frames: 2 });
    assert_eq!(frames.len(), 2, "{why:?}");
    assert_eq!((frames[1].pc, frames[1].sp), (ret, s + 8));
    assert_eq!(frames[1].source, FrameSource::Cfi);
}

/// The offsets the signal-frame code relies on, from this machine's headers.
#[test]
fn ucontext_layout_matches_headers() {
    let src = r#"
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <ucontext.h>
int main(void) {
    printf("%zu %zu %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d\n",
        offsetof(ucontext_t, uc_mcontext.gregs), sizeof(greg_t),
        REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
        REG_RDI, REG_RSI, REG_RBP, REG_RBX, REG_RDX, REG_RAX, REG_RCX, REG_RSP, REG_RIP);
    return 0;
}
"#;
    let exe = compile("unw-uc", src, false, &["-O0"]);
    let out = std::process::Command::new(&*exe).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "40 8 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16"
    );
}

// ---------------------------------------------------------------------------------------
// This process's own stack

#[inline(never)]
fn inner() -> (SymbolStore, Vec<Frame>, Option<String>) {
    let store = own_store();
    let (frames, why) = unwind_here(&store);
    std::hint::black_box((store, frames, why))
}

#[inline(never)]
fn middle() -> (SymbolStore, Vec<Frame>, Option<String>) {
    let r = inner();
    std::hint::black_box(r)
}

#[inline(never)]
fn outer() -> (SymbolStore, Vec<Frame>, Option<String>) {
    let r = middle();
    std::hint::black_box(r)
}

#[test]
fn unwinds_own_rust_stack_to_the_thread_start() {
    let (store, frames, why) = outer();
    let names = names(&store, &frames);
    assert_in_order(
        &names,
        &[
            "unwind_here",
            "inner",
            "middle",
            "outer",
            "unwinds_own_rust_stack_to_the_thread_start",
        ],
    );
    assert_eq!(why, None, "{names:#?}");
    assert!(frames[1..].iter().all(|f| f.source == FrameSource::Cfi));
    for w in frames.windows(2) {
        assert!(w[1].sp > w[0].sp);
    }
    // Callee-saved registers and rsp/rip are known in every caller frame; scratch ones not.
    for f in &frames[1..] {
        assert!(f.regs.rip().is_some() && f.regs.rsp().is_some());
        assert_eq!(f.regs.get(0), None, "rax is not preserved by calls");
    }

    // Source lines of the frames, with demangled Rust names.
    let inner_frame = &frames[names.iter().position(|n| n.ends_with("::inner")).unwrap()];
    let locs = store.locations(RuntimeAddr(inner_frame.lookup_pc()));
    let last = locs.last().expect("DWARF for the test binary");
    assert!(
        last.function
            .as_deref()
            .unwrap_or("")
            .ends_with("unwind::tests::inner"),
        "{locs:?}"
    );
    assert!(
        last.file
            .as_deref()
            .unwrap_or("")
            .ends_with("unwind/tests.rs"),
        "{locs:?}"
    );
    assert!(last.line.is_some());
}

// C code compiled -O2 -fomit-frame-pointer, loaded into this process, calling back into Rust.

const CHAIN_C: &str = r#"
typedef long (*cb_t)(long);
#define NI __attribute__((noinline))
volatile long g1 = 1, g2 = 2, g3 = 3, g4 = 4, g5 = 5, g6 = 6;
/* Six values live across each call: every callee-saved register gets used and saved. */
NI long chain_c(long x, cb_t cb) {
    long a = g1 + x, b = g2 ^ x, c = g3 * x, d = g4 - x, e = g5 + 3 * x, f = g6 | x;
    long r = cb(x);
    return r + a * b + c * d + e * f;
}
NI long chain_b(long x, cb_t cb) {
    long a = g1 * x, b = g2 + x, c = g3 ^ x, d = g4 + 5 * x, e = g5 - x, f = g6 & x;
    long r = chain_c(x + 1, cb);
    return r + a * b + c * d + e * f + 1;
}
NI long chain_a(long x, cb_t cb) {
    long a = g1 - x, b = g2 * x, c = g3 + x, d = g4 ^ x, e = g5 | x, f = g6 + 7 * x;
    long r = chain_b(x + 1, cb);
    return r + a * b + c * d + e * f + 2;
}
"#;

type ChainFn = extern "C" fn(i64, extern "C" fn(i64) -> i64) -> i64;

struct Walk {
    store: SymbolStore,
    frames: Vec<Frame>,
    why: Option<String>,
}

thread_local! {
    static WALK: RefCell<Option<Walk>> = const { RefCell::new(None) };
}

extern "C" fn chain_callback(x: i64) -> i64 {
    let store = own_store();
    let (frames, why) = unwind_here(&store);
    WALK.with(|w| *w.borrow_mut() = Some(Walk { store, frames, why }));
    x * 2
}

/// Loads a shared object into this process.
fn dlopen(path: &Path) -> *mut libc::c_void {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string; the library is a test fixture without constructors.
    let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    assert!(!handle.is_null(), "dlopen {}", path.display());
    handle
}

fn dlsym_chain(handle: *mut libc::c_void) -> ChainFn {
    // SAFETY: `chain_a` is defined by CHAIN_C with exactly the ChainFn signature.
    unsafe {
        let f = libc::dlsym(handle, c"chain_a".as_ptr());
        assert!(!f.is_null());
        std::mem::transmute::<*mut libc::c_void, ChainFn>(f)
    }
}

const R12: u64 = 0x1212_0000_0012;
const R13: u64 = 0x1313_0000_0013;
const R14: u64 = 0x1414_0000_0014;
const R15: u64 = 0x1515_0000_0015;

/// Calls `f(5, chain_callback)` with known values in r12-r15 (and whatever rbx and rbp
/// hold, recorded), so the frame of this function can be checked after the C code clobbered
/// all of them. Returns (rbx, rbp) at the call.
#[inline(never)]
fn call_chain(f: ChainFn) -> (u64, u64) {
    let mut saved = [0u64; 2];
    let cb: extern "C" fn(i64) -> i64 = chain_callback;
    // SAFETY: a plain C call of `f(5, cb)`; the stack is call-aligned at entry to the block
    // (no `nostack`), clobber_abi covers every register the callee may change, and r12-r15
    // are declared as written by the block.
    unsafe {
        std::arch::asm!(
            "mov [{p}], rbx",
            "mov [{p} + 8], rbp",
            "call {f}",
            p = in(reg) saved.as_mut_ptr(),
            f = in(reg) f,
            in("rdi") 5i64,
            in("rsi") cb,
            inout("r12") R12 => _,
            inout("r13") R13 => _,
            inout("r14") R14 => _,
            inout("r15") R15 => _,
            clobber_abi("C"),
        );
    }
    (saved[0], saved[1])
}

fn run_chain(tag: &str, flags: &[&str]) -> (TempExe, Walk, (u64, u64)) {
    let mut all = vec!["-shared", "-fPIC"];
    all.extend_from_slice(flags);
    let so = compile(tag, CHAIN_C, false, &all);
    let f = dlsym_chain(dlopen(&so));
    let saved = call_chain(f);
    let walk = WALK.with(|w| w.borrow_mut().take()).expect("callback ran");
    (so, walk, saved)
}

#[test]
fn unwinds_through_optimized_c_with_eh_frame() {
    let (_so, walk, (rbx, rbp)) = run_chain("unw-chain-eh", &["-O2", "-fomit-frame-pointer"]);
    let names = names(&walk.store, &walk.frames);
    let idx = assert_in_order(
        &names,
        &[
            "unwind_here",
            "chain_callback",
            "chain_c",
            "chain_b",
            "chain_a",
            "call_chain",
            "run_chain",
            "unwinds_through_optimized_c_with_eh_frame",
        ],
    );
    assert_eq!(walk.why, None, "{names:#?}");
    assert!(walk.frames[1..]
        .iter()
        .all(|f| f.source == FrameSource::Cfi));
    // The caller of chain_a gets back the callee-saved registers it had at the call, though
    // the three C functions and the Rust callback all saved and reused them.
    let f = &walk.frames[idx[5]];
    let got: Vec<Option<u64>> = [3u16, 6, 12, 13, 14, 15]
        .iter()
        .map(|&r| f.regs.get(r))
        .collect();
    assert_eq!(
        got,
        [
            Some(rbx),
            Some(rbp),
            Some(R12),
            Some(R13),
            Some(R14),
            Some(R15)
        ],
        "rbx rbp r12 r13 r14 r15 of call_chain's frame"
    );
}

#[test]
fn unwinds_through_c_with_only_debug_frame() {
    let flags = [
        "-O2",
        "-fomit-frame-pointer",
        "-g",
        "-fno-asynchronous-unwind-tables",
        "-fno-unwind-tables",
    ];
    let (so, walk, (rbx, rbp)) = run_chain("unw-chain-df", &flags);
    let secs = read_sections(&std::fs::read(&*so).unwrap());
    assert!(secs.iter().any(|s| s.name == ".debug_frame"));
    let names = names(&walk.store, &walk.frames);
    let idx = assert_in_order(
        &names,
        &[
            "chain_callback",
            "chain_c",
            "chain_b",
            "chain_a",
            "call_chain",
        ],
    );
    assert_eq!(walk.why, None, "{names:#?}");
    let f = &walk.frames[idx[4]];
    let got: Vec<Option<u64>> = [3u16, 6, 12, 13, 14, 15]
        .iter()
        .map(|&r| f.regs.get(r))
        .collect();
    assert_eq!(
        got,
        [
            Some(rbx),
            Some(rbp),
            Some(R12),
            Some(R13),
            Some(R14),
            Some(R15)
        ]
    );

    // With -g the same library answers source-line questions.
    let c_frame = &walk.frames[idx[1]];
    let locs = walk.store.locations(RuntimeAddr(c_frame.lookup_pc()));
    let last = locs.last().unwrap();
    assert_eq!(last.function.as_deref(), Some("chain_c"));
    assert!(
        last.file.as_deref().unwrap().ends_with("prog.c"),
        "{locs:?}"
    );
    let call_line = CHAIN_C
        .lines()
        .position(|l| l.contains("long r = cb(x);"))
        .unwrap()
        + 1;
    assert_eq!(last.line, Some(call_line as u32), "{locs:?}");
}

#[test]
fn frame_pointer_fallback_through_c_without_cfi() {
    let flags = [
        "-O2",
        "-fno-omit-frame-pointer",
        "-fno-asynchronous-unwind-tables",
        "-fno-unwind-tables",
    ];
    let (_so, walk, _) = run_chain("unw-chain-fp", &flags);
    let names = names(&walk.store, &walk.frames);
    let idx = assert_in_order(
        &names,
        &[
            "chain_callback",
            "chain_c",
            "chain_b",
            "chain_a",
            "call_chain",
            "run_chain",
        ],
    );
    let sources: Vec<FrameSource> = idx.iter().map(|&i| walk.frames[i].source).collect();
    assert_eq!(
        sources,
        [
            FrameSource::Cfi,
            FrameSource::Cfi,
            FrameSource::FramePointer,
            FrameSource::FramePointer,
            FrameSource::FramePointer,
            FrameSource::Cfi,
        ],
        "{names:#?}"
    );
}

// Through libc: qsort calling back into Rust.

extern "C" fn compare(a: *const libc::c_void, b: *const libc::c_void) -> libc::c_int {
    if WALK.with(|w| w.borrow().is_none()) {
        let store = own_store();
        let (frames, why) = unwind_here(&store);
        WALK.with(|w| *w.borrow_mut() = Some(Walk { store, frames, why }));
    }
    // SAFETY: qsort passes pointers to elements of the i64 array being sorted.
    let (a, b) = unsafe { (*(a as *const i64), *(b as *const i64)) };
    a.cmp(&b) as libc::c_int
}

#[inline(never)]
fn sort_with_libc(v: &mut [i64]) {
    // SAFETY: qsort over a valid, exclusively borrowed array of i64 with a matching
    // comparator.
    unsafe {
        libc::qsort(
            v.as_mut_ptr().cast(),
            v.len(),
            std::mem::size_of::<i64>(),
            Some(compare),
        );
    }
    std::hint::black_box(v);
}

#[test]
fn unwinds_through_libc_qsort() {
    WALK.with(|w| *w.borrow_mut() = None);
    let mut v: Vec<i64> = (0..64).rev().collect();
    sort_with_libc(&mut v);
    assert_eq!(v, (0..64).collect::<Vec<_>>());
    let walk = WALK.with(|w| w.borrow_mut().take()).unwrap();
    let names = names(&walk.store, &walk.frames);
    let idx = assert_in_order(
        &names,
        &["compare", "sort_with_libc", "unwinds_through_libc_qsort"],
    );
    assert!(idx[1] > idx[0] + 1, "libc frames between: {names:#?}");
    let between = &walk.frames[idx[0] + 1..idx[1]];
    assert!(between.iter().all(|f| walk
        .store
        .module_at(RuntimeAddr(f.pc))
        .is_some_and(|m| m.name.starts_with("libc"))));
    assert_eq!(walk.why, None, "{names:#?}");
}

// A real signal: raise() in a known Rust chain, unwound from inside the handler.

struct SigWalk {
    walk: Walk,
    /// gregs of the ucontext the kernel passed to the handler.
    gregs: [u64; 17],
}

static SIG_WALK: Mutex<Option<SigWalk>> = Mutex::new(None);

extern "C" fn on_signal(_sig: libc::c_int, _info: *mut libc::siginfo_t, uc: *mut libc::c_void) {
    let store = own_store();
    let (frames, why) = unwind_here(&store);
    let mut gregs = [0u64; 17];
    // SAFETY: the kernel passes a valid ucontext_t to an SA_SIGINFO handler.
    let uc = unsafe { &*(uc as *const libc::ucontext_t) };
    for (i, g) in gregs.iter_mut().enumerate() {
        *g = uc.uc_mcontext.gregs[i] as u64;
    }
    let walk = Walk { store, frames, why };
    *SIG_WALK.lock().unwrap() = Some(SigWalk { walk, gregs });
}

#[inline(never)]
fn sig_inner() {
    // SAFETY: raise() delivers the signal to this thread synchronously.
    unsafe {
        libc::raise(libc::SIGUSR2);
    }
    std::hint::black_box(());
}

#[inline(never)]
fn sig_outer() {
    sig_inner();
    std::hint::black_box(());
}

#[test]
fn unwinds_out_of_a_signal_handler() {
    // SAFETY: installs a handler for SIGUSR2, which nothing else in the test binary uses; the
    // handler runs only for the raise() below, synchronously on this thread.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut sa.sa_mask);
        assert_eq!(libc::sigaction(libc::SIGUSR2, &sa, std::ptr::null_mut()), 0);
    }
    sig_outer();
    let SigWalk { walk, gregs } = SIG_WALK.lock().unwrap().take().expect("handler ran");
    let names = names(&walk.store, &walk.frames);
    let idx = assert_in_order(
        &names,
        &[
            "unwind_here",
            "on_signal",
            "sig_inner",
            "sig_outer",
            "unwinds_out_of_a_signal_handler",
        ],
    );
    assert_eq!(walk.why, None, "{names:#?}");
    let sig: Vec<&Frame> = walk
        .frames
        .iter()
        .filter(|f| f.source == FrameSource::SignalFrame)
        .collect();
    assert_eq!(sig.len(), 1, "{:#?}", walk.frames);
    let f = sig[0];
    assert!(f.index > idx[1] && f.index <= idx[2]);
    // Every register of the interrupted frame is the one the kernel saved.
    let dwarf = [8u16, 9, 10, 11, 12, 13, 14, 15, 5, 4, 6, 3, 1, 0, 2, 7, 16];
    for (slot, reg) in dwarf.iter().enumerate() {
        assert_eq!(
            f.regs.get(*reg),
            Some(gregs[slot]),
            "gregs[{slot}] -> r{reg}"
        );
    }
    assert_eq!((f.pc, f.sp), (gregs[16], gregs[15]));
    // The frame just above is the trampoline, reached by a return from the handler.
    let trampoline = &walk.frames[f.index - 1];
    assert_eq!(trampoline.source, FrameSource::Cfi);
}

// ---------------------------------------------------------------------------------------
// A child process blocked in a system call, seen through /proc/PID/{syscall,maps,mem}: only
// pc and sp are known, as for any thread stopped inside the kernel.

const SLEEPER: &str = r#"
#include <string.h>
#include <time.h>
#include <unistd.h>
#define NI __attribute__((noinline))
volatile long g1 = 1, g2 = 2, g3 = 3;
NI long c3(long mode) {
    long a = g1 + mode, b = g2 * mode, c = g3 ^ mode;
    if (mode == 'w') {
        static char buf[65536];
        memset(buf, 'x', sizeof buf);
        for (;;) write(1, buf, sizeof buf);
    } else {
        struct timespec ts = {30, 0};
        nanosleep(&ts, 0);
    }
    return a * b + c;
}
NI long b3(long mode) { long a = g1 * mode, b = g2 + mode; return c3(mode) + a * b + 1; }
NI long a3(long mode) { long a = g1 - mode, b = g3 * mode; return b3(mode) + a * b + 2; }
int main(int argc, char **argv) { return (int)a3(argc > 1 ? argv[1][0] : 's'); }
"#;

fn walk_blocked_child(
    exe: &Path,
    arg: &str,
    syscalls: &[u64],
) -> (SymbolStore, Vec<Frame>, Option<String>) {
    let mut child = std::process::Command::new(exe)
        .arg(arg)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut found = None;
    for _ in 0..500 {
        let text = std::fs::read_to_string(format!("/proc/{pid}/syscall")).unwrap_or_default();
        let fields: Vec<&str> = text.split_whitespace().collect();
        let nr = fields.first().and_then(|n| n.parse::<u64>().ok());
        if fields.len() == 9 && nr.is_some_and(|n| syscalls.contains(&n)) {
            let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
            found = Some((hex(fields[8]), hex(fields[7])));
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let result = found.map(|(pc, sp)| {
        let maps = parse_maps(&std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap());
        let mut store = SymbolStore::new();
        store.refresh(&maps, Some(exe), &identity);
        let mem = File::open(format!("/proc/{pid}/mem")).unwrap();
        let read = |a: u64, b: &mut [u8]| mem.read_exact_at(b, a).is_ok();
        let (frames, why) = unwind(
            &store,
            &UnwindRegs::from_pc_sp(pc, sp),
            &read,
            &UnwindLimits::default(),
        );
        (store, frames, why)
    });
    let _ = child.kill();
    let _ = child.wait();
    result.expect("child never blocked in the expected system call")
}

#[test]
fn unwinds_a_child_blocked_in_nanosleep_and_write() {
    let exe = compile(
        "unw-sleeper",
        SLEEPER,
        false,
        &["-O2", "-fomit-frame-pointer"],
    );
    // nanosleep (35) or clock_nanosleep (230) / write (1).
    for (arg, nrs) in [("s", &[35u64, 230][..]), ("w", &[1u64][..])] {
        let (store, frames, why) = walk_blocked_child(&exe, arg, nrs);
        let names = names(&store, &frames);
        assert_in_order(&names, &["c3", "b3", "a3", "main", "_start"]);
        assert_eq!(why, None, "{names:#?}");
        assert!(
            store
                .module_at(RuntimeAddr(frames[0].pc))
                .is_some_and(|m| m.name.starts_with("libc")),
            "frame 0 in libc: {names:#?}"
        );
        assert_eq!(names.last().map(String::as_str), Some("_start"));
    }
}

// ---------------------------------------------------------------------------------------
// Hostile input: corrupted unwind tables and random memory never panic or hang.

#[test]
fn corrupt_cfi_and_random_memory_terminate() {
    fuzz_cfi("unw-fuzz-eh", &["-O2"], ".eh_frame", 200);
    fuzz_cfi(
        "unw-fuzz-df",
        &[
            "-O2",
            "-g",
            "-fno-asynchronous-unwind-tables",
            "-fno-unwind-tables",
        ],
        ".debug_frame",
        200,
    );
}

/// Flips bytes of the sections named `prefix*` in a compiled library and unwinds from its
/// functions over random memory, `rounds` times.
fn fuzz_cfi(tag: &str, flags: &[&str], prefix: &str, rounds: u64) {
    let mut all = vec!["-shared", "-fPIC"];
    all.extend_from_slice(flags);
    let so = compile(tag, CHAIN_C, false, &all);
    let bytes = std::fs::read(&*so).unwrap();
    let secs = read_sections(&bytes);
    let ranges: Vec<(usize, usize)> = secs
        .iter()
        .filter(|s| s.name.starts_with(prefix))
        .map(|s| (s.offset, s.size))
        .collect();
    assert!(!ranges.is_empty());
    let base = 0x7f00_0000_0000u64;
    let dir = so.parent().unwrap().to_path_buf();

    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let probe = ElfImage::load(&so).unwrap();
    let funcs: Vec<u64> = ["chain_a", "chain_b", "chain_c"]
        .iter()
        .map(|n| sym(&probe, n))
        .collect();
    for round in 0..rounds {
        let mut b = bytes.clone();
        for _ in 0..1 + round % 8 {
            let (off, size) = ranges[(next() as usize) % ranges.len()];
            let at = off + (next() as usize) % size;
            b[at] ^= (next() as u8) | 1;
        }
        let path = dir.join(format!("fuzz{round}.so"));
        std::fs::write(&path, &b).unwrap();
        let Ok(image) = ElfImage::load(&path) else {
            continue;
        };
        let maps = maps_for(&image, &path, 1000 + round, base);
        let mut store = SymbolStore::new();
        store.refresh(&maps, None, &identity);
        // Memory: random words, some of them pointing back into the stack or the code.
        let salt = next();
        let read = |addr: u64, buf: &mut [u8]| {
            if addr < 0x1000 {
                return false;
            }
            for (i, byte) in buf.iter_mut().enumerate() {
                let a = addr.wrapping_add(i as u64);
                let word = (a / 8).wrapping_mul(0x2545_f491_4f6c_dd1d) ^ salt;
                let v = match word % 4 {
                    0 => STACK + (word >> 8) % 0x1000,
                    1 => base + funcs[(word as usize >> 4) % 3] + (word >> 20) % 64,
                    _ => word,
                };
                *byte = v.to_le_bytes()[(a % 8) as usize];
            }
            true
        };
        for &f in &funcs {
            let mut regs = UnwindRegs::from_pc_sp(base + f + next() % 64, STACK + 0x100);
            for r in [0u16, 3, 6, 12, 13, 14, 15] {
                regs.set(r, STACK + next() % 0x2000);
            }
            let (frames, _) = unwind(&store, &regs, &read, &UnwindLimits { max_frames: 64 });
            assert!(!frames.is_empty() && frames.len() <= 64);
        }
        let _ = std::fs::remove_file(&path);
    }
}

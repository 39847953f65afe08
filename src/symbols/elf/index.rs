//! `SymbolIndex`: the symbols of one ELF file, searchable by address and by name.
//!
//! Address lookups go through a table of disjoint ranges computed once at build time, each
//! naming the best symbol covering it. Overlapping and aliased symbols (`malloc` and
//! `__libc_malloc` on the same bytes) are thereby resolved once, deterministically, and a
//! lookup is a single binary search.

use std::borrow::Cow;
use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeSet, BinaryHeap};
use std::sync::OnceLock;

use super::names::NameTable;
use super::symbol::{SymKind, Symbol};
use crate::symbols::addr::FileAddr;

/// How far past a zero-sized symbol an address may lie and still be attributed to it.
/// Such symbols are mostly entry points written in assembly (`_start`), which are short.
const ZERO_SIZE_REACH: u64 = 0x1000;

const MAX_ALIASES_SCANNED: usize = 64;

/// A stretch of addresses whose best covering symbol is `sym`.
#[derive(Clone, Copy, Debug)]
struct Cover {
    start: u64,
    end: u64,
    sym: u32,
}

pub struct SymbolIndex {
    /// In the order the symbol tables gave them, duplicates merged. Never sorted: moving
    /// a few hundred thousand symbols around cost more than everything else loading does.
    syms: Vec<Symbol>,
    /// Indexes into `syms`: address symbols by (addr, name), then TLS symbols the same way.
    order: Vec<u32>,
    /// How many leading entries of `order` are address symbols.
    n_addr: usize,
    covers: Vec<Cover>,
    /// Executable address ranges, sorted: zero-sized symbols only reach within one of these.
    exec: Vec<(u64, u64)>,
    names: OnceLock<NameTable>,
}

impl std::fmt::Debug for SymbolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SymbolIndex")
            .field("symbols", &self.syms.len())
            .field("tls", &(self.order.len() - self.n_addr))
            .finish()
    }
}

impl Default for SymbolIndex {
    fn default() -> Self {
        SymbolIndex::new(Vec::new(), Vec::new())
    }
}

/// Symbols that are more useful to show when several sit on the same address: a function
/// over data, a global over a local, the source's name over glibc's internal alias for it
/// (`__lll_lock_wait` over `__GI___lll_lock_wait`, as in a debug file's `.symtab`), `puts`
/// over `_IO_puts`.
fn naming_quality(s: &Symbol) -> (bool, bool, bool, Reverse<usize>) {
    (
        s.kind == SymKind::Func,
        s.global,
        !s.name.starts_with("__GI_"),
        Reverse(s.leading_underscores()),
    )
}

impl SymbolIndex {
    /// `exec` lists the file-address ranges of executable segments (start, end exclusive).
    pub fn new(symbols: Vec<Symbol>, exec: Vec<(FileAddr, FileAddr)>) -> SymbolIndex {
        // Index arithmetic below is in u32 to keep the cover table small; no real ELF has
        // four billion symbols, and a hostile one just gets truncated.
        let mut syms = symbols;
        syms.truncate(u32::MAX as usize);

        let mut keys = sorted_unique(&syms, |s| s.kind != SymKind::Tls);
        let n_addr = keys.len();
        keys.extend(sorted_unique(&syms, |s| s.kind == SymKind::Tls));
        drop_unlisted(&mut syms, &mut keys);

        let mut exec: Vec<(u64, u64)> = exec
            .into_iter()
            .filter(|r| r.0 .0 < r.1 .0)
            .map(|r| (r.0 .0, r.1 .0))
            .collect();
        exec.sort_unstable();

        let covers = build_covers(&syms, &keys[..n_addr]);
        SymbolIndex {
            syms,
            order: keys.into_iter().map(|k| k.sym).collect(),
            n_addr,
            covers,
            exec,
            names: OnceLock::new(),
        }
    }

    /// All symbols: address symbols in address order, then TLS symbols.
    pub fn iter(&self) -> impl Iterator<Item = &Symbol> + '_ {
        self.order.iter().map(|&i| &self.syms[i as usize])
    }

    pub fn len(&self) -> usize {
        self.syms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }

    /// Symbols whose raw or demangled name contains `needle` (case-sensitive).
    pub fn filter<'a>(&'a self, needle: &'a str) -> impl Iterator<Item = &'a Symbol> + 'a {
        self.iter().filter(move |s| s.matches(needle))
    }

    /// The symbol covering `addr` and the offset of `addr` into it.
    ///
    /// Sized symbols are matched by extent. An address beyond every sized symbol is
    /// attributed to a zero-sized symbol right before it (hand-written assembly rarely sets
    /// st_size), but only within the same executable segment and a short reach.
    pub fn lookup_addr(&self, addr: FileAddr) -> Option<(&Symbol, u64)> {
        let x = addr.0;
        if let Some(c) = self.cover_at(x) {
            let s = &self.syms[c.sym as usize];
            return Some((s, x - s.addr.0));
        }
        self.zero_size_before(x)
    }

    fn cover_at(&self, x: u64) -> Option<Cover> {
        let i = self.covers.partition_point(|c| c.start <= x);
        let c = *self.covers.get(i.checked_sub(1)?)?;
        (x < c.end).then_some(c)
    }

    fn zero_size_before(&self, x: u64) -> Option<(&Symbol, u64)> {
        let addr_order = &self.order[..self.n_addr];
        let addr_of = |i: u32| self.syms[i as usize].addr.0;
        let j = addr_order.partition_point(|&i| addr_of(i) <= x);
        let at = addr_of(*addr_order.get(j.checked_sub(1)?)?);
        if x - at > ZERO_SIZE_REACH {
            return None;
        }
        let seg = self.exec_range(at)?;
        if x >= seg.1 || self.cover_at(at).is_some() {
            // Out of the segment, or the unsized symbol is a label inside a sized one whose
            // end we are already past.
            return None;
        }
        // Everything at that address: if any has an extent, the address is past its end,
        // and we are in a gap between functions rather than inside an unsized one.
        // The scan is capped so a hostile file stacking thousands of names on one address
        // cannot make lookups slow; real files have a handful at most.
        let group = addr_order[..j]
            .iter()
            .rev()
            .map(|&i| &self.syms[i as usize])
            .take_while(|s| s.addr.0 == at);
        let mut best: Option<&Symbol> = None;
        for (n, s) in group.enumerate() {
            if n >= MAX_ALIASES_SCANNED {
                return None;
            }
            if s.size != 0 {
                return None;
            }
            if best.is_none_or(|b| naming_quality(s) > naming_quality(b)) {
                best = Some(s);
            }
        }
        best.map(|s| (s, x - at))
    }

    fn exec_range(&self, x: u64) -> Option<(u64, u64)> {
        let i = self.exec.partition_point(|r| r.0 <= x);
        let r = *self.exec.get(i.checked_sub(1)?)?;
        (x < r.1).then_some(r)
    }

    /// By exact raw name, else exact demangled name (`ns::Foo::bar(int)`,
    /// `std::rt::lang_start`), else demangled name without parameters or return type
    /// (`ns::Foo::bar`), else a trailing part of the path (`bar`, `Foo::bar`) if all symbols
    /// ending that way are at one address. Prefers a global function when several match.
    /// TLS symbols are found too; check `kind` before treating `addr` as an address.
    pub fn lookup_name(&self, name: &str) -> Option<&Symbol> {
        let k = self.name_table().find(&self.syms, name)?;
        self.syms.get(k as usize)
    }

    /// `lookup_name` without the path-suffix fallback: only names the user spelled out.
    pub fn lookup_name_exact(&self, name: &str) -> Option<&Symbol> {
        let k = self.name_table().find_exact(&self.syms, name)?;
        self.syms.get(k as usize)
    }

    /// By exact raw (linker) name only: no demangling, ever.
    pub fn lookup_name_raw(&self, name: &str) -> Option<&Symbol> {
        let k = self.name_table().find_raw(&self.syms, name)?;
        self.syms.get(k as usize)
    }

    /// Up to `k` names within a small edit distance of `name`, nearest first.
    pub fn nearest_names(&self, name: &str, k: usize) -> Vec<String> {
        self.nearest_scored(name, k)
            .into_iter()
            .map(|(_, n)| n)
            .collect()
    }

    /// Like `nearest_names` with the distances, so callers can merge several indexes.
    pub fn nearest_scored(&self, name: &str, k: usize) -> Vec<(usize, String)> {
        self.name_table().nearest(&self.syms, name, k)
    }

    /// What to show for `sym`: demangled, without a Rust hash.
    pub fn display_name(sym: &Symbol) -> Cow<'_, str> {
        sym.display_name()
    }

    fn name_table(&self) -> &NameTable {
        self.names.get_or_init(|| NameTable::new(&self.syms))
    }
}

/// A symbol's place in the address order, with what sorting and the cover table need
/// copied out of it: both then run over a compact array instead of jumping through tens of
/// megabytes of symbols.
#[derive(Clone, Copy, Debug)]
struct Key {
    addr: u64,
    size: u64,
    sym: u32,
}

/// The symbols `pick` selects, sorted by (addr, name), entries naming the same bytes the
/// same way merged into the best of them (what .symtab and .dynsym both listing an
/// exported function looks like). Names are compared only between symbols at one address,
/// and no symbol moves.
fn sorted_unique(syms: &[Symbol], pick: impl Fn(&Symbol) -> bool) -> Vec<Key> {
    // Sized for all: a filtered collect grows by doubling, copying the keys each time.
    let mut keys: Vec<Key> = Vec::with_capacity(syms.len());
    keys.extend((0..syms.len()).filter(|&i| pick(&syms[i])).map(|i| Key {
        addr: syms[i].addr.0,
        size: syms[i].size,
        sym: i as u32,
    }));
    sort_by_addr(&mut keys, |a: &Key, b: &Key| {
        a.addr.cmp(&b.addr).then_with(|| {
            let (a, b) = (&syms[a.sym as usize], &syms[b.sym as usize]);
            (&a.name, a.size, a.kind as u8, a.global)
                .cmp(&(&b.name, b.size, b.kind as u8, b.global))
                .then(a.version.cmp(&b.version))
        })
    });
    keys.dedup_by(|later, kept| {
        if later.addr != kept.addr {
            return false;
        }
        let (l, k) = (&syms[later.sym as usize], &syms[kept.sym as usize]);
        if l.name != k.name {
            return false;
        }
        let quality = |s: &Symbol| {
            (
                s.size != 0,
                s.global,
                s.kind == SymKind::Func,
                s.version.is_some(),
            )
        };
        if quality(l) > quality(k) {
            std::mem::swap(later, kept);
        }
        true
    });
    keys
}

/// Sorts `keys` by `cmp`, whose first criterion must be the address: a radix sort on the
/// address, then each run of keys at one address by `cmp`. Both are stable, so this is
/// exactly the stable sort by `cmp`. A comparison sort of a large C++ program's 300,000
/// keys took a fifth of its start-up even on two threads; the radix sort is a few
/// sequential passes over a compact array, and the runs (aliases) are short.
fn sort_by_addr(keys: &mut Vec<Key>, cmp: impl Fn(&Key, &Key) -> Ordering) {
    radix_sort_by_addr(keys);
    let mut i = 0;
    while i < keys.len() {
        let addr = keys[i].addr;
        let run = 1 + keys[i + 1..].iter().take_while(|k| k.addr == addr).count();
        if run > 1 {
            keys[i..i + run].sort_by(&cmp);
        }
        i += run;
    }
}

/// Bits of the address sorted per pass: eight passes cover 64 bits, and a pass where every
/// key has the same digit (the high bits of any real table) is skipped. A byte: with more
/// buckets, each pass writes to more places at once than the caches and TLB hold.
const RADIX_BITS: u32 = 8;
const RADIX_PASSES: u32 = u64::BITS.div_ceil(RADIX_BITS);

/// Stable least-significant-digit radix sort of `keys` by address.
fn radix_sort_by_addr(keys: &mut Vec<Key>) {
    let n = keys.len();
    if n < 2 {
        return;
    }
    let buckets = 1usize << RADIX_BITS;
    let digit = |addr: u64, pass: u32| ((addr >> (pass * RADIX_BITS)) as usize) & (buckets - 1);
    // Every pass's histogram from one read of the keys.
    let mut counts = vec![0usize; RADIX_PASSES as usize * buckets];
    for k in keys.iter() {
        for pass in 0..RADIX_PASSES {
            counts[pass as usize * buckets + digit(k.addr, pass)] += 1;
        }
    }
    let mut from = std::mem::take(keys);
    let mut to = vec![
        Key {
            addr: 0,
            size: 0,
            sym: 0
        };
        n
    ];
    for pass in 0..RADIX_PASSES {
        let count = &counts[pass as usize * buckets..][..buckets];
        if count.contains(&n) {
            continue;
        }
        let mut next = Vec::with_capacity(buckets);
        let mut at = 0;
        for &c in count {
            next.push(at);
            at += c;
        }
        for k in &from {
            let d = digit(k.addr, pass);
            to[next[d]] = *k;
            next[d] += 1;
        }
        std::mem::swap(&mut from, &mut to);
    }
    *keys = from;
}

/// Removes the symbols `keys` do not list (merged duplicates), keeping the rest in their
/// order and renumbering `keys`. One sequential pass, and none when nothing was merged.
fn drop_unlisted(syms: &mut Vec<Symbol>, keys: &mut [Key]) {
    if keys.len() == syms.len() {
        return;
    }
    let mut listed = vec![false; syms.len()];
    for k in keys.iter() {
        listed[k.sym as usize] = true;
    }
    let mut renumber = vec![u32::MAX; syms.len()];
    let mut next = 0u32;
    for (i, &keep) in listed.iter().enumerate() {
        if keep {
            renumber[i] = next;
            next += 1;
        }
    }
    let mut i = 0;
    syms.retain(|_| {
        i += 1;
        listed[i - 1]
    });
    for k in keys.iter_mut() {
        k.sym = renumber[k.sym as usize];
    }
}

/// Builds the cover table. Sized symbols are split into clusters of mutually overlapping
/// ones; a lone symbol covers exactly its own extent (the common case, decided without
/// touching its name), and only real clusters go through the sweep.
fn build_covers(syms: &[Symbol], keys: &[Key]) -> Vec<Cover> {
    let sized: Vec<Key> = keys.iter().copied().filter(|k| k.size != 0).collect();
    let end = |k: &Key| k.addr.saturating_add(k.size);
    let mut covers: Vec<Cover> = Vec::with_capacity(sized.len());
    let mut k = 0;
    while k < sized.len() {
        let first = sized[k];
        let mut reach = end(&first);
        let mut j = k + 1;
        while j < sized.len() && sized[j].addr < reach {
            reach = reach.max(end(&sized[j]));
            j += 1;
        }
        if j == k + 1 {
            covers.push(Cover {
                start: first.addr,
                end: reach,
                sym: first.sym,
            });
        } else {
            let cluster: Vec<u32> = sized[k..j].iter().map(|k| k.sym).collect();
            sweep(syms, &cluster, &mut covers);
        }
        k = j;
    }
    covers
}

/// Sweeps one cluster in address order keeping the set of symbols covering the current
/// point, and records which one is best on each stretch between start/end boundaries.
/// O(m log m) for a cluster of m symbols.
fn sweep(syms: &[Symbol], sized: &[u32], covers: &mut Vec<Cover>) {
    // Among symbols covering an address, prefer code, then the innermost (latest start),
    // then the most useful name; the name's order and then the index break any remaining
    // tie, making it deterministic.
    let rank = |i: u32| {
        let s = &syms[i as usize];
        (
            s.kind == SymKind::Func,
            s.addr.0,
            naming_quality(s),
            Reverse(&*s.name),
            Reverse(i),
        )
    };
    let mut active = BTreeSet::new();
    let mut ends: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    let mut next = 0usize;

    loop {
        let next_start = sized.get(next).map(|&i| syms[i as usize].addr.0);
        let next_end = ends.peek().map(|Reverse((e, _))| *e);
        let point = match (next_start, next_end) {
            (Some(s), Some(e)) => s.min(e),
            (Some(s), None) => s,
            (None, Some(e)) => e,
            (None, None) => break,
        };
        while let Some(&Reverse((e, i))) = ends.peek() {
            if e > point {
                break;
            }
            ends.pop();
            active.remove(&rank(i));
        }
        while let Some(&i) = sized.get(next) {
            let s = &syms[i as usize];
            if s.addr.0 != point {
                break;
            }
            active.insert(rank(i));
            ends.push(Reverse((s.end(), i)));
            next += 1;
        }
        let Some(&(_, _, _, _, Reverse(best))) = active.last() else {
            continue;
        };
        let after = sized.get(next).map(|&i| syms[i as usize].addr.0);
        let until = ends.peek().map(|Reverse((e, _))| *e);
        let end = match (after, until) {
            (Some(a), Some(u)) => a.min(u),
            (_, Some(u)) => u,
            // Unreachable: `active` is non-empty so `ends` is too. Stop rather than spin.
            (_, None) => break,
        };
        match covers.last_mut() {
            Some(last) if last.sym == best && last.end == point => last.end = end,
            _ => covers.push(Cover {
                start: point,
                end,
                sym: best,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(name: &str, addr: u64, size: u64, kind: SymKind, global: bool) -> Symbol {
        Symbol::new(name, FileAddr(addr), size, kind, global)
    }

    fn index(syms: Vec<Symbol>) -> SymbolIndex {
        SymbolIndex::new(syms, vec![(FileAddr(0x1000), FileAddr(0x9000))])
    }

    fn name_at(ix: &SymbolIndex, a: u64) -> Option<(String, u64)> {
        ix.lookup_addr(FileAddr(a))
            .map(|(s, off)| (s.name.to_string(), off))
    }

    #[test]
    fn demangled_lookup_before_and_after_the_table_agree() {
        let syms = || {
            vec![
                sym("_ZN2vb5chainEii", 0x1000, 0x10, SymKind::Func, true),
                sym("_ZN2vb4leafEi", 0x1100, 0x10, SymKind::Func, false),
                sym("_ZN2vb4leafEd", 0x1200, 0x10, SymKind::Func, true),
                sym("_ZN2vb6configE", 0x5000, 8, SymKind::Object, true),
                sym("_ZNK2ns3Foo3barEv", 0x1300, 0x10, SymKind::Func, true),
                sym(
                    "_ZN4core3fmt5write17h0123456789abcdefE",
                    0x1400,
                    0x10,
                    SymKind::Func,
                    true,
                ),
                sym("_ZN3std4swapEv", 0x1500, 0x10, SymKind::Func, true),
                sym("_ZSt4swapRiS_", 0x1600, 0x10, SymKind::Func, true),
                sym("leaf", 0x1700, 0x10, SymKind::Func, true),
            ]
        };
        let fresh = index(syms());
        let built = index(syms());
        let _ = built.nearest_names("anything", 1); // builds the demangled table
        for q in [
            "vb::leaf",
            "vb::config",
            "ns::Foo::bar",
            "core::fmt::write",
            "leaf",
            "vb::nothing",
            "Foo::bar",
            // Not plain paths: these build `fresh`'s table, so they come last.
            "vb::leaf(double)",
            "std::swap",
        ] {
            let a = fresh.lookup_name_exact(q).map(|s| s.addr);
            let b = built.lookup_name_exact(q).map(|s| s.addr);
            assert_eq!(a, b, "{q}");
        }
        assert_eq!(
            fresh.lookup_name_exact("vb::leaf").map(|s| s.addr),
            Some(FileAddr(0x1200)),
            "the global definition"
        );
        assert_eq!(fresh.lookup_name_exact("vb::nothing"), None);
    }

    #[test]
    fn finds_containing_symbol() {
        let ix = index(vec![
            sym("b", 0x1100, 0x20, SymKind::Func, true),
            sym("a", 0x1000, 0x40, SymKind::Func, true),
            sym("data", 0x5000, 8, SymKind::Object, false),
        ]);
        assert_eq!(name_at(&ix, 0x1000), Some(("a".into(), 0)));
        assert_eq!(name_at(&ix, 0x1003), Some(("a".into(), 3)));
        assert_eq!(name_at(&ix, 0x103f), Some(("a".into(), 0x3f)));
        assert_eq!(name_at(&ix, 0x1040), None, "gap between functions");
        assert_eq!(name_at(&ix, 0x111f), Some(("b".into(), 0x1f)));
        assert_eq!(name_at(&ix, 0x1120), None);
        assert_eq!(name_at(&ix, 0x5004), Some(("data".into(), 4)));
        assert_eq!(name_at(&ix, 0xfff), None);
    }

    #[test]
    fn prefers_func_global_and_plain_names_among_aliases() {
        let ix = index(vec![
            sym("_IO_puts", 0x2000, 0x100, SymKind::Func, true),
            sym("puts", 0x2000, 0x100, SymKind::Func, true),
            sym("local_alias", 0x2000, 0x100, SymKind::Func, false),
            sym("blob", 0x2000, 0x100, SymKind::Object, true),
        ]);
        assert_eq!(name_at(&ix, 0x2010), Some(("puts".into(), 0x10)));
    }

    #[test]
    fn nested_and_overlapping() {
        let ix = index(vec![
            sym("outer", 0x3000, 0x100, SymKind::Func, true),
            sym("inner", 0x3040, 0x10, SymKind::Func, false),
            sym("table", 0x3080, 0x10, SymKind::Object, true),
        ]);
        assert_eq!(name_at(&ix, 0x3010), Some(("outer".into(), 0x10)));
        assert_eq!(name_at(&ix, 0x3045), Some(("inner".into(), 5)));
        assert_eq!(name_at(&ix, 0x3050), Some(("outer".into(), 0x50)));
        assert_eq!(
            name_at(&ix, 0x3085),
            Some(("outer".into(), 0x85)),
            "code beats data"
        );
        assert_eq!(name_at(&ix, 0x30ff), Some(("outer".into(), 0xff)));
    }

    #[test]
    fn zero_size_symbols_reach_forward_within_exec() {
        let ix = index(vec![
            sym("_start", 0x1000, 0, SymKind::Func, true),
            sym("sized", 0x1100, 0x10, SymKind::Func, true),
            sym("label", 0x8ff0, 0, SymKind::Other, false),
            sym("data_marker", 0xa000, 0, SymKind::Other, true),
        ]);
        assert_eq!(name_at(&ix, 0x1000), Some(("_start".into(), 0)));
        assert_eq!(name_at(&ix, 0x1026), Some(("_start".into(), 0x26)));
        assert_eq!(name_at(&ix, 0x1110), None, "past a sized symbol");
        assert_eq!(name_at(&ix, 0x8ffc), Some(("label".into(), 0xc)));
        assert_eq!(name_at(&ix, 0x9004), None, "beyond the executable segment");
        let ix = index(vec![
            sym("f", 0x2000, 0x100, SymKind::Func, true),
            sym(".Linner", 0x2050, 0, SymKind::Other, false),
        ]);
        assert_eq!(name_at(&ix, 0x2060), Some(("f".into(), 0x60)));
        assert_eq!(
            name_at(&ix, 0x2110),
            None,
            "a label inside f does not own the gap after f"
        );
        assert_eq!(name_at(&ix, 0xa000), None, "not executable");
    }

    #[test]
    fn dedups_symtab_and_dynsym_copies() {
        let ix = index(vec![
            sym("f", 0x1000, 0x10, SymKind::Func, true),
            sym("f", 0x1000, 0x10, SymKind::Func, true),
            sym("f", 0x1000, 0, SymKind::Func, false),
        ]);
        assert_eq!(ix.len(), 1);
        let f = ix.lookup_name("f").unwrap();
        assert_eq!((f.size, f.global), (0x10, true));
    }

    #[test]
    fn tls_symbols_are_named_but_not_addressed() {
        let ix = index(vec![
            sym("tls_counter", 0x8, 4, SymKind::Tls, true),
            sym("func", 0x1000, 0x10, SymKind::Func, true),
        ]);
        assert_eq!(ix.lookup_name("tls_counter").unwrap().kind, SymKind::Tls);
        assert_eq!(name_at(&ix, 0x8), None);
        assert_eq!(ix.len(), 2);
    }

    #[test]
    fn demangled_name_lookups() {
        let ix = index(vec![
            sym(
                "_ZN4core3fmt5write17h0123456789abcdefE",
                0x1000,
                0x10,
                SymKind::Func,
                true,
            ),
            sym("_ZN2ns3Foo3barEi", 0x1100, 0x10, SymKind::Func, true),
            sym("_ZN2ns3Foo3barEd", 0x1200, 0x10, SymKind::Func, false),
            sym("main", 0x1300, 0x10, SymKind::Func, true),
        ]);
        let w = ix.lookup_name("core::fmt::write").unwrap();
        assert_eq!(w.addr, FileAddr(0x1000));
        assert_eq!(w.display_name(), "core::fmt::write");

        let b = ix.lookup_name("ns::Foo::bar(int)").unwrap();
        assert_eq!(b.addr, FileAddr(0x1100));
        assert_eq!(b.display_name(), "ns::Foo::bar(int)");
        let d = ix.lookup_name("ns::Foo::bar(double)").unwrap();
        assert_eq!(d.addr, FileAddr(0x1200));
        let bare = ix.lookup_name("ns::Foo::bar").unwrap();
        assert_eq!(bare.addr, FileAddr(0x1100), "the global overload wins");
        assert_eq!(
            ix.lookup_name("fmt::write").unwrap().addr,
            FileAddr(0x1000),
            "unique suffix"
        );
        assert_eq!(ix.lookup_name("write").unwrap().addr, FileAddr(0x1000));
        assert!(ix.lookup_name_exact("write").is_none());
        assert!(ix.lookup_name_exact("core::fmt::write").is_some());
        assert!(
            ix.lookup_name("bar").is_none(),
            "two overloads at different addresses"
        );
        assert!(
            ix.lookup_name("rite").is_none(),
            "suffixes stop at path separators"
        );
        assert_eq!(ix.nearest_names("bar", 3), vec!["ns::Foo::bar".to_string()]);
        assert_eq!(
            ix.lookup_name("_ZN2ns3Foo3barEi").unwrap().addr,
            FileAddr(0x1100)
        );
        assert!(ix.lookup_name("ns::Foo").is_none());

        assert_eq!(ix.filter("Foo").count(), 2);
        assert_eq!(ix.filter("ma").count(), 1);
    }

    #[test]
    fn suggests_near_names() {
        let ix = index(vec![
            sym("main", 0x1000, 0x10, SymKind::Func, true),
            sym("mainly", 0x1100, 0x10, SymKind::Func, true),
            sym("_ZN2ns3Foo3barEi", 0x1200, 0x10, SymKind::Func, true),
            sym("unrelated_name", 0x1300, 0x10, SymKind::Func, true),
        ]);
        assert_eq!(ix.nearest_names("mian", 3), vec!["main".to_string()]);
        assert_eq!(
            ix.nearest_names("ns::Foo::baz", 3),
            vec!["ns::Foo::bar".to_string()]
        );
        assert!(ix.nearest_names("zzzzzzzz", 3).is_empty());
    }

    #[test]
    fn version_suffix_in_query_is_ignored() {
        let ix = index(vec![sym("puts", 0x1000, 0x10, SymKind::Func, true)]);
        assert_eq!(
            ix.lookup_name("puts@GLIBC_2.2.5").unwrap().addr,
            FileAddr(0x1000)
        );
    }

    #[test]
    fn cover_table_matches_brute_force_on_random_overlaps() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        let kinds = [SymKind::Func, SymKind::Object, SymKind::Other];
        let syms: Vec<Symbol> = (0..400)
            .map(|i| {
                let name = format!("{}s{i}", "_".repeat(next(3) as usize));
                let kind = kinds[next(3) as usize];
                sym(&name, 0x1000 + next(0x2000), next(0x80), kind, next(2) == 0)
            })
            .collect();
        let ix = index(syms);
        let all: Vec<&Symbol> = ix.iter().collect();
        for x in 0x1000..0x3100u64 {
            let brute = all
                .iter()
                .enumerate()
                .filter(|(_, s)| s.contains(FileAddr(x)))
                .max_by_key(|(i, s)| {
                    let i = *i as u32;
                    (
                        s.kind == SymKind::Func,
                        s.addr.0,
                        naming_quality(s),
                        Reverse(i),
                    )
                })
                .map(|(_, s)| (s.name.to_string(), x - s.addr.0));
            let got = ix.lookup_addr(FileAddr(x));
            if let Some(b) = brute {
                assert_eq!(
                    got.map(|(s, o)| (s.name.to_string(), o)),
                    Some(b),
                    "at {x:#x}"
                );
            } else if let Some((s, _)) = got {
                assert_eq!(
                    s.size, 0,
                    "only the zero-size fallback may answer outside covers"
                );
            }
        }
    }

    #[test]
    fn many_symbols_deterministic_and_fast_enough() {
        let syms: Vec<Symbol> = (0..100_000u64)
            .map(|i| {
                sym(
                    &format!("f{i}"),
                    0x1000 + i * 0x20,
                    0x18,
                    SymKind::Func,
                    i % 3 != 0,
                )
            })
            .collect();
        let ix = index(syms);
        for i in (0..100_000u64).step_by(997) {
            let (s, off) = ix.lookup_addr(FileAddr(0x1000 + i * 0x20 + 5)).unwrap();
            assert_eq!(&*s.name, format!("f{i}"));
            assert_eq!(off, 5);
            assert!(ix.lookup_addr(FileAddr(0x1000 + i * 0x20 + 0x18)).is_none());
        }
        assert_eq!(
            ix.lookup_name("f77777").unwrap().addr,
            FileAddr(0x1000 + 77777 * 0x20)
        );
    }

    #[test]
    fn a_large_table_sorts_and_merges_the_same_as_a_small_one() {
        // Shuffled addresses with duplicates (one name at one address twice, the second
        // copy better: it has a size) and aliases (two names at one address).
        let n = 150_000u64;
        let shuffled = |i: u64| (i * 7919) % n;
        let mut syms = Vec::new();
        for i in 0..n {
            let a = shuffled(i);
            syms.push(sym(
                &format!("f{a}"),
                0x1000 + a * 0x10,
                0,
                SymKind::Func,
                true,
            ));
            if a % 5 == 0 {
                syms.push(sym(
                    &format!("f{a}"),
                    0x1000 + a * 0x10,
                    8,
                    SymKind::Func,
                    true,
                ));
            }
            if a % 7 == 0 {
                syms.push(sym(
                    &format!("alias{a}"),
                    0x1000 + a * 0x10,
                    8,
                    SymKind::Object,
                    false,
                ));
            }
        }
        let ix = index(syms);
        let listed: Vec<(u64, &str, u64)> =
            ix.iter().map(|s| (s.addr.0, &*s.name, s.size)).collect();
        assert_eq!(
            listed.len() as u64,
            n + n.div_ceil(7),
            "duplicates merged, aliases kept"
        );
        assert!(
            listed
                .windows(2)
                .all(|w| (w[0].0, w[0].1) < (w[1].0, w[1].1)),
            "address order"
        );
        for &(addr, name, size) in &listed {
            let a = (addr - 0x1000) / 0x10;
            if name.starts_with('f') && a % 5 == 0 {
                assert_eq!(size, 8, "{name}: the sized copy is kept");
            }
        }
        assert_eq!(
            ix.lookup_addr(FileAddr(0x1000 + 35 * 0x10 + 3))
                .unwrap()
                .0
                .name
                .as_ref(),
            "f35"
        );
    }

    #[test]
    fn the_address_sort_is_the_stable_sort() {
        // Addresses spread over every radix digit (high bits included, where a pass is
        // skipped only when all keys agree), with runs of equal addresses ordered by `size`
        // and exact ties (equal address and size) that must keep their order.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut keys: Vec<Key> = (0..20_000u32)
            .map(|i| {
                let r = next();
                let addr = match i % 3 {
                    0 => r,
                    1 => 0x40_0000 + (r % 512) * 16,
                    _ => 0x7f00_0000_0000 | (r & 0xfff_ffff),
                };
                Key {
                    addr,
                    size: next() % 4,
                    sym: i,
                }
            })
            .collect();
        let by = |a: &Key, b: &Key| a.addr.cmp(&b.addr).then(a.size.cmp(&b.size));
        let mut expected = keys.clone();
        expected.sort_by(by);
        sort_by_addr(&mut keys, by);
        let fields = |v: &[Key]| {
            v.iter()
                .map(|k| (k.addr, k.size, k.sym))
                .collect::<Vec<_>>()
        };
        assert_eq!(fields(&keys), fields(&expected));
        let mut one = vec![Key {
            addr: 5,
            size: 1,
            sym: 0,
        }];
        sort_by_addr(&mut one, by);
        assert_eq!(one[0].sym, 0);
    }
}

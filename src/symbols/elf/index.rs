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

    /// Every function `name` names (see `NameTable::find_every`), at most `limit`.
    pub fn functions_named(&self, name: &str, limit: usize) -> Vec<&Symbol> {
        self.name_table()
            .find_every(&self.syms, name, limit)
            .into_iter()
            .filter_map(|k| self.syms.get(k as usize))
            .collect()
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
#[path = "index_tests.rs"]
mod tests;

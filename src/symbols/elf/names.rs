//! Name-side lookups of a `SymbolIndex`: raw, demangled and bare-path keys. Built on first use,
//! the demangled keys only once a raw lookup misses: demangling every name of a large binary
//! costs several times more than loading its table, and C names never need it.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

use super::demangle;
use super::fuzzy;
use super::symbol::{SymKind, Symbol};

pub(crate) struct NameTable {
    /// How many leading symbols the table covers (indexes are u32).
    count: u32,
    /// (hash of the raw name, symbol index), sorted by (hash, preference): an exact lookup is
    /// a binary search on integers, and building it never compares strings (sorting a few
    /// hundred thousand C++ names by their long common prefixes took a second; this takes
    /// milliseconds). Equal names are adjacent, the best one first. Built only after
    /// `SCANS_BEFORE_TABLE` raw lookups: the first few are linear scans, which cost a
    /// fraction of building it (a session that stops at `main` asks three or four names).
    raw: OnceLock<Vec<(u64, u32)>>,
    scans: AtomicU32,
    /// Built on the first miss in `raw`: C names never need it.
    demangled: OnceLock<Demangled>,
}

struct Demangled {
    /// Demangled display names (`ns::Foo::bar(int)`, `core::fmt::write`), sorted by
    /// (name, preference).
    full: Vec<FullName>,
    /// Demangled names without parameters or return type, only where that differs from
    /// the display name (`ns::Foo::bar`).
    bare: Vec<(Box<str>, u32)>,
}

/// A demangled display name, with where its bare path lies in it: found once when the table
/// is built, not again by every suffix look-up and suggestion that reads the table.
struct FullName {
    name: Box<str>,
    path: (u32, u32),
    sym: u32,
}

impl FullName {
    fn new(name: String, sym: u32) -> FullName {
        let path = demangle::strip_signature(&name);
        let start = path.as_ptr() as usize - name.as_ptr() as usize;
        FullName {
            path: (start as u32, (start + path.len()) as u32),
            name: name.into_boxed_str(),
            sym,
        }
    }

    fn path(&self) -> &str {
        &self.name[self.path.0 as usize..self.path.1 as usize]
    }
}

/// Lower is better when one name has several definitions: a global function is almost
/// always what the user means; then the function itself before GCC's copies of it, and any
/// copy before a `.cold` part split off one (`take(Inv&, int, int) [clone .cold]` is named
/// `take` too once its signature is stripped, and GCC places `.text.unlikely` below `.text`:
/// by address alone a breakpoint on `take` went into code only a throw runs); then
/// anything that is code; then things visible outside their object file; then ones with a
/// known extent. The address makes the order total.
fn preference(s: &Symbol) -> (bool, u8, bool, bool, bool, bool, u64) {
    let func = s.kind == SymKind::Func;
    (
        !(func && s.global),
        if func { copy_rank(&s.name) } else { 0 },
        !func,
        !s.global,
        s.kind == SymKind::Tls,
        s.size == 0,
        s.addr.0,
    )
}

/// 0 for a function's own code, 1 for a copy GCC made of it (`f.isra.0`, `f.constprop.1`,
/// `f.part.0`: a raw name with a suffix after a dot), 2 for a part split off into
/// `.text.unlikely` (`f.cold`, `f.part.0.cold`).
/// Only GCC's own words count: a Rust legacy name spells `::` inside `<...>` as `..`
/// (`_ZN59_$LT$graph..Rect$u20$as$u20$graph..Shape$GT$4area17h...E`), which made every
/// trait method a "copy" and left `area` without a breakpoint.
fn copy_rank(raw: &str) -> u8 {
    const COPIES: [&str; 5] = ["constprop", "isra", "part", "lto_priv", "localalias"];
    let mut rank = 0;
    for part in raw.split('.').skip(1) {
        if part == "cold" {
            return 2;
        }
        if COPIES.contains(&part) {
            rank = 1;
        }
    }
    rank
}

/// FNV-1a over the name's bytes: fast, and good enough to spread symbol names (a collision
/// costs one string comparison).
fn name_hash(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in name.as_bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Raw-name lookups answered by a linear scan before the hash table is built.
const SCANS_BEFORE_TABLE: u32 = 8;

impl NameTable {
    pub(crate) fn new(syms: &[Symbol]) -> NameTable {
        NameTable {
            count: u32::try_from(syms.len()).unwrap_or(u32::MAX),
            raw: OnceLock::new(),
            scans: AtomicU32::new(0),
            demangled: OnceLock::new(),
        }
    }

    fn raw_table(&self, syms: &[Symbol]) -> &[(u64, u32)] {
        self.raw.get_or_init(|| build_raw(syms, self.count))
    }

    /// The symbols the table covers.
    fn covered<'a>(&self, syms: &'a [Symbol]) -> &'a [Symbol] {
        &syms[..(self.count as usize).min(syms.len())]
    }
}

/// `<graph::Circle as graph::Shape>::area` as the path a user writes for the method,
/// `graph::Circle::area` (the implementing type, then the method); `None` for any other.
fn impl_alias(path: &str) -> Option<String> {
    let (ty, after) = path.strip_prefix('<')?.split_once(" as ")?;
    let (_, method) = after.split_once(">::")?;
    Some(format!("{ty}::{method}"))
}

/// `ns::Box<3>::size` without its template or generic arguments, `ns::Box::size`; `None`
/// when it has none.
fn without_template_args(path: &str) -> Option<String> {
    if !path.contains('<') {
        return None;
    }
    let mut out = String::with_capacity(path.len());
    let mut depth = 0usize;
    for c in path.chars() {
        match c {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    Some(out)
}

/// Whether the bare path `path` ends in the path `query` at a `::` (`ns::Foo::bar` ends in
/// `Foo::bar` and `bar`, not in `oo::bar`).
fn is_path_suffix(path: &str, query: &str) -> bool {
    !query.is_empty()
        && !query.starts_with(':')
        && path
            .strip_suffix(query)
            .is_some_and(|head| head.ends_with("::"))
}

/// The demangled names of `syms`, the first of which is symbol `first`.
fn demangle_all(syms: &[Symbol], first: u32) -> Vec<FullName> {
    syms.iter()
        .zip(first..)
        .filter_map(|(s, i)| Some(FullName::new(demangle::demangle(&s.name)?, i)))
        .collect()
}

/// The sorted (hash, index) table over the first `count` symbols.
fn build_raw(syms: &[Symbol], count: u32) -> Vec<(u64, u32)> {
    let mut raw: Vec<(u64, u32)> = (0..count)
        .map(|i| (name_hash(&syms[i as usize].name), i))
        .collect();
    raw.sort_unstable_by(|&(ha, a), &(hb, b)| {
        ha.cmp(&hb).then_with(|| {
            let (sa, sb) = (&syms[a as usize], &syms[b as usize]);
            sa.name
                .cmp(&sb.name)
                .then_with(|| preference(sa).cmp(&preference(sb)))
                .then(a.cmp(&b))
        })
    });
    raw
}

impl NameTable {
    fn demangled(&self, syms: &[Symbol]) -> &Demangled {
        self.demangled.get_or_init(|| {
            let covered = self.covered(syms);
            // Demangling is nearly all of the cost (microseconds a name, for a large C++
            // program's templates): the two halves of the table on two threads.
            let half = covered.len() / 2;
            let (mut full, rest) = std::thread::scope(|scope| {
                let second = std::thread::Builder::new()
                    .name("scry-demangle".into())
                    .spawn_scoped(scope, || demangle_all(&covered[half..], half as u32));
                let first = demangle_all(&covered[..half], 0);
                let second = match second.map(|t| t.join()) {
                    Ok(Ok(second)) => second,
                    // No thread to be had: the second half on this one.
                    _ => demangle_all(&covered[half..], half as u32),
                };
                (first, second)
            });
            full.extend(rest);
            let mut bare: Vec<(Box<str>, u32)> = full
                .iter()
                .filter(|f| f.path() != &*f.name)
                .map(|f| (Box::from(f.path()), f.sym))
                .collect();
            let pref = |i: u32| preference(&syms[i as usize]);
            full.sort_by(|a, b| {
                a.name
                    .cmp(&b.name)
                    .then_with(|| pref(a.sym).cmp(&pref(b.sym)))
            });
            bare.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| pref(a.1).cmp(&pref(b.1))));
            Demangled { full, bare }
        })
    }

    /// Exact raw name, then exact demangled name, then the bare demangled path, then an
    /// unambiguous path suffix. Each list is pre-sorted by preference within a name, so the
    /// first hit is the best one.
    pub(crate) fn find(&self, syms: &[Symbol], query: &str) -> Option<u32> {
        self.find_exact(syms, query)
            .or_else(|| self.unique_suffix(syms, query))
    }

    /// `find` without the path-suffix tier.
    pub(crate) fn find_exact(&self, syms: &[Symbol], query: &str) -> Option<u32> {
        let first_raw = |q: &str| self.find_raw(syms, q);
        if let Some(k) = first_raw(query) {
            return Some(k);
        }
        let demangled = match (self.demangled.get(), demangle::path_needles(query)) {
            (None, Some(needles)) => self.scan_demangled(syms, query, &needles),
            _ => {
                let d = self.demangled(syms);
                let i = d.full.partition_point(|e| &*e.name < query);
                let in_full = d.full.get(i).filter(|e| &*e.name == query).map(|e| e.sym);
                in_full.or_else(|| {
                    let i = d.bare.partition_point(|e| &*e.0 < query);
                    d.bare.get(i).filter(|e| &*e.0 == query).map(|e| e.1)
                })
            }
        };
        if let Some(k) = demangled {
            return Some(k);
        }
        // `puts@GLIBC_2.2.5` as copied from `nm` output: versions are not part of our names.
        // `puts@plt` is a name of its own (a PLT entry), never the function it calls.
        match query.split_once('@') {
            Some((base, ver)) if !base.is_empty() && ver != "plt" => first_raw(base),
            _ => None,
        }
    }

    /// Every function `query` names, where a breakpoint on it stops (gdb's locations of
    /// `break NAME`): each whose raw name, demangled name or bare path is `query` (two
    /// `static` functions of one name, C++ overloads, a Rust generic's instances, a scope's
    /// closures), else each whose path ends in it at a `::` (`price` for `Widget::price`
    /// and `Gadget::price`). A function's own code only (not a GCC copy or a `.cold`
    /// part), one symbol per address, in address order, at most `limit`.
    pub(crate) fn find_every(&self, syms: &[Symbol], query: &str, limit: usize) -> Vec<u32> {
        let mut exact = self.raw_named(syms, query);
        let mut ends: Vec<u32> = Vec::new();
        match (self.demangled.get(), demangle::path_needles(query)) {
            (None, Some(needles)) => {
                for (i, _, d) in self.spelling(syms, &needles) {
                    let bare = demangle::strip_signature(&d);
                    if d == query || bare == query {
                        exact.push(i);
                    } else if is_path_suffix(bare, query) {
                        ends.push(i);
                    }
                }
            }
            _ => {
                let d = self.demangled(syms);
                let i = d.full.partition_point(|e| &*e.name < query);
                exact.extend(
                    d.full[i..]
                        .iter()
                        .take_while(|e| &*e.name == query)
                        .map(|e| e.sym),
                );
                let i = d.bare.partition_point(|e| &*e.0 < query);
                exact.extend(
                    d.bare[i..]
                        .iter()
                        .take_while(|e| &*e.0 == query)
                        .map(|e| e.1),
                );
                if exact.is_empty() {
                    ends.extend(self.suffix_matches(syms, query));
                }
            }
        }
        // A trait method by the path a user writes for it (`Circle::area` for
        // `<graph::Circle as graph::Shape>::area`), and a template's or generic type's
        // method without its arguments (`Box::size` for every `Box<N>::size`), once
        // nothing else matched, as gdb's `break Box::size` does.
        if exact.is_empty() && ends.is_empty() && query.contains("::") && !query.contains('<') {
            let d = self.demangled(syms);
            let matches = |path: &str| path == query || is_path_suffix(path, query);
            for e in &d.full {
                let path = e.path();
                let alias = impl_alias(path);
                let plain = without_template_args(alias.as_deref().unwrap_or(path));
                if alias.as_deref().is_some_and(matches) || plain.as_deref().is_some_and(matches) {
                    ends.push(e.sym);
                }
            }
        }
        let chosen = if exact.is_empty() { ends } else { exact };
        let mut by_addr: Vec<u32> = chosen
            .into_iter()
            .filter(|&k| {
                let s = &syms[k as usize];
                s.kind == SymKind::Func && copy_rank(&s.name) == 0
            })
            .collect();
        by_addr.sort_by_key(|&k| (syms[k as usize].addr.0, preference(&syms[k as usize]), k));
        by_addr.dedup_by_key(|k| syms[*k as usize].addr.0);
        by_addr.truncate(limit);
        by_addr
    }

    /// The best symbol whose raw (linker) name is exactly `query`.
    pub(crate) fn find_raw(&self, syms: &[Symbol], query: &str) -> Option<u32> {
        self.raw_named(syms, query).first().copied()
    }

    /// Every symbol whose raw (linker) name is exactly `query`, the best `preference` first
    /// (then symbol order): a scan until the hash table pays for itself, then the table,
    /// which keeps that order among equal names.
    fn raw_named(&self, syms: &[Symbol], query: &str) -> Vec<u32> {
        if self.raw.get().is_none()
            && self.scans.fetch_add(1, Ordering::Relaxed) < SCANS_BEFORE_TABLE
        {
            let mut found: Vec<u32> = self
                .covered(syms)
                .iter()
                .enumerate()
                .filter(|(_, s)| &*s.name == query)
                .map(|(i, _)| i as u32)
                .collect();
            found.sort_by_key(|&i| (preference(&syms[i as usize]), i));
            return found;
        }
        let raw = self.raw_table(syms);
        let h = name_hash(query);
        let i = raw.partition_point(|&(k, _)| k < h);
        raw[i..]
            .iter()
            .take_while(|&&(k, _)| k == h)
            .map(|&(_, idx)| idx)
            .filter(|&idx| &*syms[idx as usize].name == query)
            .collect()
    }

    /// The demangled tier of `find_exact` for a plain path before the demangled table
    /// exists: only symbols spelling every component of the path are demangled (building the
    /// table demangles every name: a quarter of a second for a large C++ program, paid by its
    /// first stop at `ns::fn`). Same answer as the table: an exact display name beats a bare
    /// path, then `preference`, then symbol order.
    fn scan_demangled(&self, syms: &[Symbol], query: &str, needles: &[Vec<String>]) -> Option<u32> {
        let mut best: Option<(bool, u32)> = None;
        for (i, s, d) in self.spelling(syms, needles) {
            let bare_only = if d == query {
                false
            } else if demangle::strip_signature(&d) == query {
                true
            } else {
                continue;
            };
            let better = best.is_none_or(|(b_bare, b)| {
                (bare_only, preference(s)) < (b_bare, preference(&syms[b as usize]))
            });
            if better {
                best = Some((bare_only, i));
            }
        }
        best.map(|(_, i)| i)
    }

    /// `marker_fn` or `Foo::bar` for `mycrate::tests::marker_fn` / `ns::Foo::bar`: accepted
    /// only when every symbol ending in that path is at one address, so a common name like
    /// `new` never silently picks one of hundreds. Linear, but only reached on a miss.
    fn unique_suffix(&self, syms: &[Symbol], query: &str) -> Option<u32> {
        if self.demangled.get().is_none() {
            if let Some(needles) = demangle::path_needles(query) {
                return self.scan_unique_suffix(syms, query, &needles);
            }
        }
        let mut best: Option<u32> = None;
        for k in self.suffix_matches(syms, query) {
            match best {
                Some(b) if syms[b as usize].addr != syms[k as usize].addr => return None,
                Some(b) if preference(&syms[b as usize]) <= preference(&syms[k as usize]) => {}
                _ => best = Some(k),
            }
        }
        best
    }

    /// The symbols whose raw names spell every component of a path (see
    /// `demangle::spells_path`), with their index and demangled name: the only ones a look-up
    /// by that path demangles before the demangled table exists.
    fn spelling<'a>(
        &'a self,
        syms: &'a [Symbol],
        needles: &'a [Vec<String>],
    ) -> impl Iterator<Item = (u32, &'a Symbol, String)> + 'a {
        self.covered(syms)
            .iter()
            .enumerate()
            .filter(|(_, s)| demangle::spells_path(&s.name, needles))
            .filter_map(|(i, s)| Some((i as u32, s, demangle::demangle(&s.name)?)))
    }

    /// `unique_suffix` before the demangled table exists, for a plain path: every component
    /// of `query` is spelled in the raw name of any symbol whose path ends in it (see
    /// `path_needles`), so only those are demangled. Same answer as the table: `None` when
    /// the matches are at different addresses, else the best `preference`, then the first
    /// display name, then symbol order.
    fn scan_unique_suffix(
        &self,
        syms: &[Symbol],
        query: &str,
        needles: &[Vec<String>],
    ) -> Option<u32> {
        let mut best: Option<(u32, String)> = None;
        for (i, s, d) in self.spelling(syms, needles) {
            if !is_path_suffix(demangle::strip_signature(&d), query) {
                continue;
            }
            match &best {
                Some((b, _)) if syms[*b as usize].addr != s.addr => return None,
                Some((b, b_name))
                    if (preference(&syms[*b as usize]), b_name.as_str())
                        <= (preference(s), d.as_str()) => {}
                _ => best = Some((i, d)),
            }
        }
        best.map(|(i, _)| i)
    }

    /// Symbols whose demangled path (without parameters) ends in `::query`.
    fn suffix_matches<'a>(
        &'a self,
        syms: &'a [Symbol],
        query: &'a str,
    ) -> impl Iterator<Item = u32> + 'a {
        let d = self.demangled(syms);
        d.full
            .iter()
            .filter(move |e| is_path_suffix(e.path(), query))
            .map(|e| e.sym)
    }

    /// Names close to `query`, as `(distance, name)`, nearest first. Offers what a user could
    /// type: raw names for C, bare demangled paths for Rust and C++.
    pub(crate) fn nearest(&self, syms: &[Symbol], query: &str, k: usize) -> Vec<(usize, String)> {
        let max = fuzzy::max_distance(query);
        let mut found = Vec::new();
        let mut consider = |name: &str| {
            if let Some(d) = fuzzy::bounded_distance(query, name, max) {
                found.push((d, name.to_string()));
            }
        };
        let mut last: Option<&str> = None;
        for &(_, i) in self.raw_table(syms) {
            let name = &*syms[i as usize].name;
            // Raw names of demangled symbols are noise nobody types (`_ZN2ns3Foo3barEi`).
            if last == Some(name) || demangle::looks_mangled(name) {
                continue;
            }
            last = Some(name);
            consider(name);
        }
        for name in &self.demangled(syms).full {
            consider(name.path());
        }
        // A bare function name that several paths end in (`new`) is best answered with them.
        for i in self.suffix_matches(syms, query).take(k) {
            let name = syms[i as usize].display_name();
            found.push((0, demangle::strip_signature(&name).to_string()));
        }
        fuzzy::best_k(found, k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::addr::FileAddr;

    fn syms() -> Vec<Symbol> {
        let f = |raw: &str, addr: u64, global: bool| {
            Symbol::new(raw, FileAddr(addr), 8, SymKind::Func, global)
        };
        vec![
            f("_ZN2ns3Foo3barEi", 0x100, true),
            f("_ZN2ns3Baz3barEv", 0x200, true),
            f("_ZN2vb4leafEv", 0x300, true),
            // One function under two names: a local alias and the global one.
            f("_ZN1a5twiceEv", 0x400, false),
            f("_ZN1b5twiceEv", 0x400, true),
            f("_Z5aloneIiEvT_", 0x500, true),
            f("main", 0x600, true),
        ]
    }

    /// The suffix tier answers the same before the demangled table exists (demangling only
    /// the symbols that spell the query) as from the table.
    #[test]
    fn suffix_scan_agrees_with_the_table() {
        let syms = syms();
        let name_of = |k: Option<u32>| k.map(|k| syms[k as usize].display_name().into_owned());
        for (query, expected) in [
            ("bar", None),
            ("Foo::bar", Some("ns::Foo::bar(int)")),
            ("leaf", Some("vb::leaf()")),
            ("twice", Some("b::twice()")),
            ("oo::bar", None),
            ("nothing", None),
            ("main", None),
        ] {
            let scanned = NameTable::new(&syms);
            let by_scan = scanned.unique_suffix(&syms, query);
            assert!(scanned.demangled.get().is_none(), "{query}: table built");
            let tabled = NameTable::new(&syms);
            tabled.demangled(&syms);
            let by_table = tabled.unique_suffix(&syms, query);
            assert_eq!(by_scan, by_table, "{query}");
            assert_eq!(name_of(by_scan).as_deref(), expected, "{query}");
        }
    }

    #[test]
    fn full_names_know_their_bare_path() {
        let f = FullName::new("void alone<int>(int)".into(), 0);
        assert_eq!(f.path(), "alone<int>");
        let f = FullName::new("ns::Foo::bar(int) const".into(), 1);
        assert_eq!(f.path(), "ns::Foo::bar");
        let f = FullName::new("core::fmt::write".into(), 2);
        assert_eq!(f.path(), "core::fmt::write");
    }
}

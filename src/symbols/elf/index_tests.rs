//! Tests of `index` (kept apart so that the file holds only its code).

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
    let listed: Vec<(u64, &str, u64)> = ix.iter().map(|s| (s.addr.0, &*s.name, s.size)).collect();
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

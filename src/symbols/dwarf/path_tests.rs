//! Tests of the path parser (`path.rs`).

use super::*;

fn name(s: &str) -> Box<Path> {
    Box::new(Path::Name(s.into()))
}

#[test]
fn literal_keys_in_brackets() {
    let key = |k: Path| Path::Index(name("m"), Box::new(k));
    assert_eq!(parse("m['red']").unwrap(), key(Path::Text("red".into())));
    assert_eq!(parse("m[ 'z' ]").unwrap(), key(Path::Text("z".into())));
    assert_eq!(parse("m[true]").unwrap(), key(Path::Number(1)));
    assert_eq!(parse("m[false]").unwrap(), key(Path::Number(0)));
    // Still gdb's file quoting and names beginning with the words.
    assert_eq!(
        parse("m['f.c'::i]").unwrap(),
        key(Path::InFile {
            file: "f.c".into(),
            name: "i".into()
        })
    );
    assert_eq!(
        parse("m[trueish]").unwrap(),
        key(Path::Name("trueish".into()))
    );
}

#[test]
fn parses_member_chains_indices_and_unary_operators() {
    assert_eq!(
        parse("r->target->port").unwrap(),
        Path::Member(
            Box::new(Path::Member(name("r"), "target".into())),
            "port".into()
        )
    );
    assert_eq!(
        parse(" matrix[2][0x3] ").unwrap(),
        Path::Index(
            Box::new(Path::Index(name("matrix"), Box::new(Path::Number(2)))),
            Box::new(Path::Number(3))
        )
    );
    assert_eq!(
        parse("*nodes[1].next").unwrap(),
        Path::Deref(Box::new(Path::Member(
            Box::new(Path::Index(name("nodes"), Box::new(Path::Number(1)))),
            "next".into()
        )))
    );
    assert_eq!(parse("&(x)").unwrap(), Path::AddressOf(name("x")));
    assert_eq!(
        parse("values::COUNTER.v").unwrap(),
        Path::Member(name("values::COUNTER"), "v".into())
    );
    assert_eq!(
        parse("'other.c'::counter.v").unwrap(),
        Path::Member(
            Box::new(Path::InFile {
                file: "other.c".into(),
                name: "counter".into()
            }),
            "v".into()
        )
    );
    assert_eq!(
        parse("&'src/a b.c'::ns::x").unwrap(),
        Path::AddressOf(Box::new(Path::InFile {
            file: "src/a b.c".into(),
            name: "ns::x".into()
        }))
    );
    assert_eq!(
        parse("'(anonymous namespace)::counter'.hits").unwrap(),
        Path::Member(name("(anonymous namespace)::counter"), "hits".into())
    );
    // A class template's static member, spelled as the compilers name the class.
    for spelled in [
        "Ring<int, 4>::instances",
        "Ring<int,4>::instances",
        "Ring< int ,4 >::instances",
    ] {
        assert_eq!(
            parse(spelled).unwrap(),
            *name("Ring<int, 4>::instances"),
            "{spelled}"
        );
    }
    assert_eq!(
        parse("ns::Box<std::pair<int, char>>::made.n").unwrap(),
        Path::Member(name("ns::Box<std::pair<int, char>>::made"), "n".into())
    );
    assert!(parse("a<b").is_err());
    assert_eq!(
        parse("a[b->c]").unwrap(),
        Path::Index(name("a"), Box::new(Path::Member(name("b"), "c".into())))
    );
}

#[test]
fn rejects_what_is_not_a_path() {
    for bad in [
        "", "a +", "a.", "a[1", "(a", "1a", "a b", "f()", "a->", "::x", "'a.c'", "'a.c'::",
        "'a.c::x", "''::x", "'a.c':x", "x::'a.c'",
    ] {
        assert!(parse(bad).is_err(), "{bad:?} parsed");
    }
    assert!(parse(&"*".repeat(100)).is_err());
    assert!(parse(&"x".repeat(2000)).is_err());
    let e = parse("a + b").unwrap_err();
    assert!(
        matches!(
            e,
            PathError::Unexpected {
                found: '+',
                column: 3,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "unexpected '+' at column 3 of 'a + b' (paths use names, ., ->, [i], * and &)"
    );
    // A method call is named as such, with the spellings that answer it.
    let call = parse("idx[\"alpha\"].size()").unwrap_err().to_string();
    assert!(
        call.starts_with("unexpected '(' at column 18")
            && call.contains("a path calls no methods")
            && call.contains(".length"),
        "{call}"
    );
    assert_eq!(
        parse("a[1").unwrap_err().to_string(),
        "expected ']' at column 4"
    );
    assert_eq!(
        parse("'a.c':x").unwrap_err().to_string(),
        "expected '::' after 'a.c' at column 6 ('file.c'::name)"
    );
    assert_eq!(
        parse("*").unwrap_err().to_string(),
        "expected a name at the end of the path"
    );
}

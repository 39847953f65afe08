//! An aggregate's fields in the order they print: object members with the static members
//! declared among them, and the statics already printed in one value, so a class with a
//! static of its own type is not followed forever.

use super::types::{Member, StaticMember};

/// The static members declared just before member `i` (`i` = the member count: after the
/// last member), in declaration order.
pub fn statics_before(statics: &[StaticMember], i: usize) -> impl Iterator<Item = &StaticMember> {
    statics.iter().filter(move |s| s.before == i)
}

/// One field of an aggregate as it prints: an object member or a static member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field<'a> {
    Member(&'a Member),
    Static(&'a StaticMember),
}

/// Members and static members in declaration order.
pub fn fields_in_order<'a>(members: &'a [Member], statics: &'a [StaticMember]) -> Vec<Field<'a>> {
    let mut out = Vec::with_capacity(members.len() + statics.len());
    for (i, m) in members.iter().enumerate() {
        out.extend(statics_before(statics, i).map(Field::Static));
        out.push(Field::Member(m));
    }
    out.extend(statics_before(statics, members.len()).map(Field::Static));
    out
}

/// Addresses remembered at most; past that a static still stops at the depth limit.
const MAX_SEEN: usize = 1024;

/// The static members of struct or array type already printed in one value, by address. As
/// gdb does, a second sighting prints as a note instead of the value: a class with a static
/// of its own type (a singleton) would otherwise nest itself down to the depth limit.
#[derive(Default)]
pub struct Seen(Vec<u64>);

/// What a static member already printed shows instead of its value.
pub const SHOWN_ABOVE: &str = "<shown above>";

impl Seen {
    /// True the first time `addr` is offered (and remembers it), false after.
    pub fn first(&mut self, addr: u64) -> bool {
        if self.0.contains(&addr) {
            return false;
        }
        if self.0.len() < MAX_SEEN {
            self.0.push(addr);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::dwarf::types::TypeId;

    fn member(name: &str) -> Member {
        Member {
            name: Some(name.into()),
            ty: Some(TypeId(1)),
            offset: 0,
            bits: None,
            base: false,
            artificial: false,
            vbase: None,
        }
    }

    fn stat(name: &str, before: usize) -> StaticMember {
        StaticMember {
            name: name.into(),
            ty: Some(TypeId(1)),
            decl: 0,
            before,
        }
    }

    fn names(fields: &[Field]) -> Vec<String> {
        fields
            .iter()
            .map(|f| match f {
                Field::Member(m) => m.name.clone().unwrap_or_default(),
                Field::Static(s) => format!("static {}", s.name),
            })
            .collect()
    }

    #[test]
    fn statics_keep_their_place_among_the_members() {
        let members = [member("id"), member("w")];
        let statics = [
            stat("instances", 0),
            stat("limit", 0),
            stat("mid", 1),
            stat("last", 2),
        ];
        assert_eq!(
            names(&fields_in_order(&members, &statics)),
            [
                "static instances",
                "static limit",
                "id",
                "static mid",
                "w",
                "static last"
            ]
        );
        assert_eq!(names(&fields_in_order(&members, &[])), ["id", "w"]);
        assert_eq!(
            names(&fields_in_order(&[], &[stat("only", 0)])),
            ["static only"]
        );
    }

    #[test]
    fn a_static_prints_once_per_value() {
        let mut seen = Seen::default();
        assert!(seen.first(0x4040));
        assert!(!seen.first(0x4040));
        assert!(seen.first(0x4050));
        // Past the cap nothing more is remembered, so nothing is ever refused wrongly.
        for a in 0..2 * MAX_SEEN as u64 {
            seen.first(0x10_0000 + a);
        }
        assert!(seen.first(0x90_0000));
        assert!(seen.first(0x90_0000));
    }
}

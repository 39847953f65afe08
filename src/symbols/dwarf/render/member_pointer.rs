//! C++ pointers to members as gdb writes them: a data member by the offset it holds, a
//! member function by its code or its vtable slot.

use super::literals::{code_pointer, hex_bytes};
use crate::symbols::dwarf::target::Target;
use crate::symbols::dwarf::tree::InfoTree;
use crate::symbols::dwarf::types::{Kind, TypeId};

impl InfoTree {
    /// A pointer to a member as gdb writes it: `&Cls::q` (the data member at its offset),
    /// `0x1234 <Cls::get()>` (a member function), `&virtual Cls::spin()` (a virtual one: its
    /// pointer is 1 + the vtable offset), `NULL`.
    pub(super) fn member_pointer_text(
        &self,
        class: Option<TypeId>,
        target: Option<TypeId>,
        b: &[u8],
        t: &dyn Target,
    ) -> String {
        let word = |i: usize| {
            b.get(i * 8..i * 8 + 8)
                .and_then(|w| w.try_into().ok())
                .map(u64::from_le_bytes)
        };
        if self.is_function(target) {
            let class_name = self.type_name(class);
            let (Some(ptr), Some(adj)) = (word(0), word(1)) else {
                return hex_bytes(b);
            };
            let adjusted = match adj as i64 {
                0 => String::new(),
                n => format!(" (this {n:+})"),
            };
            return match ptr {
                0 => "NULL".into(),
                p if p & 1 == 1 => {
                    let slot = (p - 1) / 8;
                    match self.virtual_method(class, slot) {
                        Some(name) => format!("&virtual {class_name}::{name}(){adjusted}"),
                        None => format!("&virtual {class_name} slot {slot}{adjusted}"),
                    }
                }
                p => format!("{}{adjusted}", code_pointer(p, t)),
            };
        }
        let Some(offset) = word(0) else {
            return hex_bytes(b);
        };
        if offset as i64 == -1 {
            return "NULL".into();
        }
        match self.member_at_offset(class, offset, 0) {
            Some(name) => format!("&{name}"),
            None => format!("({} offset {offset})", self.type_name(class)),
        }
    }

    /// The data member of `class` (its own or a base's) at byte `offset`, named with the
    /// class that declares it (`Base::tag`, as gdb).
    fn member_at_offset(&self, class: Option<TypeId>, offset: u64, depth: usize) -> Option<String> {
        if depth > 8 {
            return None;
        }
        let ty = self.complete(self.strip(class)?);
        let Kind::Aggregate { members, .. } = &ty.kind else {
            return None;
        };
        for m in members {
            if m.base && m.vbase.is_none() && offset >= m.offset {
                if let Some(n) = self.member_at_offset(m.ty, offset - m.offset, depth + 1) {
                    return Some(n);
                }
            } else if !m.base && m.bits.is_none() && m.offset == offset {
                if let Some(n) = &m.name {
                    return Some(format!("{}::{n}", self.type_name(Some(ty.id))));
                }
            }
        }
        None
    }

    /// The name of `class`'s virtual function in vtable slot `slot`: the member function
    /// whose `DW_AT_vtable_elem_location` says that slot (bases' own are not searched).
    fn virtual_method(&self, class: Option<TypeId>, slot: u64) -> Option<String> {
        let ty = self.complete(self.strip(class)?);
        let (unit, die) = self.entry(ty.id.0)?;
        for child in super::super::type_read::children(&unit, &die) {
            if child.tag() != gimli::DW_TAG_subprogram {
                continue;
            }
            let Some(gimli::AttributeValue::Exprloc(expr)) =
                child.attr_value(gimli::DW_AT_vtable_elem_location)
            else {
                continue;
            };
            let mut ops = expr.operations(unit.encoding());
            if let Ok(Some(gimli::Operation::UnsignedConstant { value })) = ops.next() {
                if value == slot {
                    return unit.string(&child, gimli::DW_AT_name);
                }
            }
        }
        None
    }
}

//! C++ static data members: declared inside their class, stored in no object. Their values
//! come from the declaration's constant or the definition's storage (found through the
//! variable index). Where they print among the other members is `fields`.

use super::location::{FrameAccess, Gone, Place};
use super::target::Target;
use super::tree::{InfoTree, Reader, UnitHandle};
use super::types::{StaticMember, Type};
use super::value::Value;
use crate::symbols::elf::demangle;

/// A frame with no registers, for the locations of globals: memory, the load bias and TLS
/// come from the target.
struct Globals<'a> {
    target: &'a dyn Target,
    bias: u64,
}

impl FrameAccess for Globals<'_> {
    fn register(&self, _reg: u16) -> Option<Vec<u8>> {
        None
    }
    fn cfa(&self) -> Option<u64> {
        None
    }
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        self.target.read(addr, buf)
    }
    fn tls(&self, offset: u64) -> Option<u64> {
        self.target.tls_address(offset)
    }
    fn entry_value(&self, _expr: &gimli::Expression<Reader>, _unit: &UnitHandle) -> Option<u64> {
        None
    }
    fn bias(&self) -> u64 {
        self.bias
    }
}

impl InfoTree {
    /// The value of a static data member of `owner`: the constant its declaration gives,
    /// else the storage its definition names; `<optimized out>` when it has neither (declared
    /// but never defined, or the definition was dropped), as gdb says.
    pub(crate) fn static_value(&self, owner: &Type, s: &StaticMember, t: &dyn Target) -> Value {
        let at = |place| Value {
            ty: s.ty,
            place,
            bits: None,
        };
        let Some((unit, decl)) = self.entry(s.decl) else {
            return at(Place::Gone(Gone::OptimizedOut));
        };
        let size = self.size_of(s.ty).unwrap_or(8);
        if let Some(c) = decl.attr_value(gimli::DW_AT_const_value) {
            return at(self.const_place(&unit, c, s.ty, size));
        }
        // DWARF 5 gives the declaration a linkage name; DWARF 4 only the definition, which
        // the index keys by it, spelled as the class's name and the member's.
        let qualified = unit
            .string(&decl, gimli::DW_AT_linkage_name)
            .and_then(|l| demangle::demangle(&l))
            .unwrap_or_else(|| format!("{}::{}", self.type_name(Some(owner.id)), s.name));
        let Some((dunit, def)) = self
            .static_definition(s.decl, &qualified)
            .and_then(|d| self.entry(d))
        else {
            return at(Place::Gone(Gone::OptimizedOut));
        };
        let Some(bias) = t.load_bias() else {
            return at(Place::Gone(Gone::Unavailable(
                "its module is not loaded".into(),
            )));
        };
        let frame = Globals { target: t, bias };
        at(self.var_place(&dunit, &def, s.ty, size, 0, &frame, false, || None))
    }
}

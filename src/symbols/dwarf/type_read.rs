//! Types read from their DIEs one at a time, when first needed, and cached; the types scry
//! makes up (a pointer for `&x`, the rest of a multi-dimensional array); and what a type
//! comes to under its typedefs and qualifiers, with its size and alignment.

use std::sync::Arc;

use gimli::AttributeValue;

use super::tree::{Die, InfoTree, Reader, UnitHandle};
use super::types::{
    AggKind, Encoding, Kind, Member, StaticMember, Type, TypeId, Variant, VariantPart,
    SYNTHETIC_BASE,
};

/// Members and enumerators read per type at most; a hostile DIE tree cannot make a type
/// unbounded.
const MAX_CHILDREN: usize = 4096;
/// Array dimensions at most.
const MAX_DIMS: usize = 16;
/// Made-up types kept at most.
const MAX_SYNTHETIC: usize = 100_000;

impl InfoTree {
    /// The type whose DIE is at `id`, resolved and cached.
    pub(crate) fn type_of(&self, id: TypeId) -> Option<Arc<Type>> {
        if id.0 >= SYNTHETIC_BASE {
            let made = self.synthetic.lock().unwrap_or_else(|e| e.into_inner());
            return made.get(id.0 - SYNTHETIC_BASE).cloned();
        }
        if let Some(t) = self.cached_type(id.0) {
            return Some(t);
        }
        let (unit, die) = self.entry(id.0)?;
        let ty = Arc::new(read_type(&unit, &die, id)?);
        self.cache_type(id.0, ty.clone());
        Some(ty)
    }

    /// A type scry makes up, shared with an identical one made before.
    fn make(&self, kind: Kind, size: Option<u64>, like: Option<TypeId>) -> TypeId {
        let (rust, c) = like
            .and_then(|l| self.type_of(l))
            .map_or((false, true), |t| (t.rust, t.c));
        let mut made = self.synthetic.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = made.iter().position(|t| t.kind == kind && t.rust == rust) {
            return TypeId(SYNTHETIC_BASE + i);
        }
        if made.len() >= MAX_SYNTHETIC {
            made.clear();
        }
        let id = TypeId(SYNTHETIC_BASE + made.len());
        made.push(Arc::new(Type {
            id,
            name: None,
            size,
            kind,
            rust,
            c,
        }));
        id
    }

    /// `T *` for a type `T` (for `&x`).
    pub(crate) fn synthetic_pointer(&self, to: Option<TypeId>) -> TypeId {
        self.make(Kind::Pointer(to), Some(8), to)
    }

    /// `T[a][b]...` (the element of a multi-dimensional array).
    pub(crate) fn synthetic_array(&self, elem: Option<TypeId>, counts: Vec<Option<u64>>) -> TypeId {
        self.make(Kind::Array { elem, counts }, None, elem)
    }

    /// The id of the type `strip` reaches: a typedef's or qualifier's, followed through.
    pub(crate) fn strip_id(&self, mut id: Option<TypeId>) -> Option<TypeId> {
        for _ in 0..64 {
            match self.type_of(id?)?.kind {
                Kind::Typedef(next) | Kind::Qualified(_, next) => id = next,
                _ => return id,
            }
        }
        None
    }

    /// Follows typedefs and qualifiers to the type that says what the bytes are.
    pub(crate) fn strip(&self, mut id: Option<TypeId>) -> Option<Arc<Type>> {
        for _ in 0..64 {
            let t = self.type_of(id?)?;
            match t.kind {
                Kind::Typedef(next) | Kind::Qualified(_, next) => id = next,
                _ => return Some(t),
            }
        }
        None
    }

    /// The size in bytes of a type (through typedefs and qualifiers; arrays by their counts).
    pub(crate) fn size_of(&self, id: Option<TypeId>) -> Option<u64> {
        let mut cur = id;
        for _ in 0..64 {
            let t = self.type_of(cur?)?;
            if let Some(s) = t.size {
                return Some(s);
            }
            match &t.kind {
                Kind::Typedef(next) | Kind::Qualified(_, next) => cur = *next,
                Kind::Pointer(_) | Kind::Reference { .. } => return Some(8),
                // Itanium C++ ABI: an offset, or a function pointer and an adjustment.
                Kind::MemberPointer { target, .. } => {
                    return Some(if self.is_function(*target) { 16 } else { 8 })
                }
                Kind::Array { elem, counts } => {
                    let one = self.size_of(*elem)?;
                    let mut n = 1u64;
                    for c in counts {
                        n = n.checked_mul((*c)?)?;
                    }
                    return one.checked_mul(n);
                }
                _ => return None,
            }
        }
        None
    }

    /// Whether `id` is (through typedefs and qualifiers) a function type.
    pub(crate) fn is_function(&self, id: Option<TypeId>) -> bool {
        self.strip(id)
            .is_some_and(|t| matches!(t.kind, Kind::Function { .. }))
    }

    /// A type's alignment in bytes: DW_AT_alignment where the DIE says it (`alignas`),
    /// otherwise the natural one of the x86-64 psABI (a scalar's size, a complex number's
    /// part, an aggregate's strictest member). Where a container's node keeps its value
    /// follows from it.
    pub(crate) fn align_of(&self, id: Option<TypeId>) -> Option<u64> {
        self.align_within(id, 0)
    }

    fn align_within(&self, id: Option<TypeId>, depth: usize) -> Option<u64> {
        let id = id?;
        if depth > 32 {
            return None;
        }
        if id.0 < SYNTHETIC_BASE {
            if let Some((unit, die)) = self.entry(id.0) {
                if let Some(a) = unit.udata(&die, gimli::DW_AT_alignment) {
                    return (a.is_power_of_two() && a <= 1 << 16).then_some(a);
                }
            }
        }
        let t = self.type_of(id)?;
        let scalar = |size: u64| size.clamp(1, 16).next_power_of_two();
        match &t.kind {
            Kind::Typedef(next) | Kind::Qualified(_, next) => self.align_within(*next, depth + 1),
            Kind::Pointer(_) | Kind::Reference { .. } | Kind::MemberPointer { .. } => Some(8),
            Kind::Base(Encoding::ComplexFloat) => t.size.map(|s| scalar(s / 2)),
            Kind::Base(_) | Kind::Enum { .. } => t.size.map(scalar),
            Kind::Array { elem, .. } => self.align_within(*elem, depth + 1),
            Kind::Aggregate { members, .. } => {
                let mut a = 1;
                for m in members {
                    a = a.max(self.align_within(m.ty, depth + 1)?);
                }
                Some(a)
            }
            Kind::Function { .. } | Kind::Other => None,
        }
    }
}

fn read_type(unit: &UnitHandle, die: &Die, id: TypeId) -> Option<Type> {
    let name = unit.string(die, gimli::DW_AT_name);
    let size = unit.udata(die, gimli::DW_AT_byte_size);
    let target = unit.reference(die, gimli::DW_AT_type).map(TypeId);
    let lang = unit.language();
    let rust = lang == Some(gimli::DW_LANG_Rust);
    let c = super::tree::is_c(lang);
    let kind = match die.tag() {
        gimli::DW_TAG_base_type => Kind::Base(encoding(die)),
        gimli::DW_TAG_pointer_type => Kind::Pointer(target),
        gimli::DW_TAG_reference_type => Kind::Reference {
            target,
            rvalue: false,
        },
        gimli::DW_TAG_rvalue_reference_type => Kind::Reference {
            target,
            rvalue: true,
        },
        gimli::DW_TAG_typedef => Kind::Typedef(target),
        gimli::DW_TAG_const_type => Kind::Qualified("const", target),
        gimli::DW_TAG_volatile_type => Kind::Qualified("volatile", target),
        gimli::DW_TAG_restrict_type => Kind::Qualified("restrict", target),
        gimli::DW_TAG_atomic_type => Kind::Qualified("_Atomic", target),
        gimli::DW_TAG_array_type => array(unit, die, target),
        gimli::DW_TAG_structure_type => aggregate(unit, die, AggKind::Struct),
        gimli::DW_TAG_class_type => aggregate(unit, die, AggKind::Class),
        gimli::DW_TAG_union_type => aggregate(unit, die, AggKind::Union),
        gimli::DW_TAG_enumeration_type => enumeration(unit, die, target),
        gimli::DW_TAG_subroutine_type => function(unit, die, target),
        gimli::DW_TAG_ptr_to_member_type => Kind::MemberPointer {
            class: unit
                .reference(die, gimli::DW_AT_containing_type)
                .map(TypeId),
            target,
        },
        gimli::DW_TAG_unspecified_type => Kind::Other,
        _ => return None,
    };
    Some(Type {
        id,
        name,
        size,
        kind,
        rust,
        c,
    })
}

fn encoding(die: &Die) -> Encoding {
    match die.attr_value(gimli::DW_AT_encoding) {
        Some(AttributeValue::Encoding(e)) => match e {
            gimli::DW_ATE_signed => Encoding::Signed,
            gimli::DW_ATE_unsigned => Encoding::Unsigned,
            gimli::DW_ATE_float => Encoding::Float,
            gimli::DW_ATE_boolean => Encoding::Bool,
            gimli::DW_ATE_signed_char => Encoding::SignedChar,
            gimli::DW_ATE_unsigned_char => Encoding::UnsignedChar,
            gimli::DW_ATE_UTF => Encoding::Utf,
            gimli::DW_ATE_complex_float => Encoding::ComplexFloat,
            _ => Encoding::Other,
        },
        _ => Encoding::Other,
    }
}

/// The DIE's children, bounded, each with the unit.
pub(super) fn children(unit: &UnitHandle, die: &Die) -> Vec<Die> {
    let mut out = Vec::new();
    if !die.has_children() {
        return out;
    }
    let Ok(mut tree) = unit.unit.entries_tree(Some(die.offset())) else {
        return out;
    };
    let Ok(root) = tree.root() else { return out };
    let mut iter = root.children();
    while let Ok(Some(child)) = iter.next() {
        if out.len() >= MAX_CHILDREN {
            break;
        }
        out.push(child.entry().clone());
    }
    out
}

fn array(unit: &UnitHandle, die: &Die, elem: Option<TypeId>) -> Kind {
    let mut counts = Vec::new();
    for child in children(unit, die) {
        if child.tag() != gimli::DW_TAG_subrange_type || counts.len() >= MAX_DIMS {
            continue;
        }
        let count = match child.attr_value(gimli::DW_AT_count) {
            Some(v) => v.udata_value(),
            None => {
                let lower = child
                    .attr_value(gimli::DW_AT_lower_bound)
                    .and_then(bound)
                    .unwrap_or(0);
                child
                    .attr_value(gimli::DW_AT_upper_bound)
                    .and_then(bound)
                    .and_then(|upper| u64::try_from(upper - lower + 1).ok())
            }
        };
        counts.push(count);
    }
    if counts.is_empty() {
        counts.push(None);
    }
    Kind::Array { elem, counts }
}

/// An array bound. The index type is unsigned (C's `sizetype`), so a 1-, 2- or 4-byte
/// constant is its plain value: `int t[256]` has the upper bound 0xff in one byte, which
/// read as signed would be -1 and make the array empty. Only a bound of all ones in 8 bytes
/// (how old GCCs wrote a zero-length array) or a signed constant is negative.
fn bound(v: AttributeValue<Reader>) -> Option<i128> {
    match v {
        AttributeValue::Data1(x) => Some(x.into()),
        AttributeValue::Data2(x) => Some(x.into()),
        AttributeValue::Data4(x) => Some(x.into()),
        AttributeValue::Data8(x) => Some(i128::from(x as i64)),
        other => other
            .sdata_value()
            .map(i128::from)
            .or_else(|| other.udata_value().map(i128::from)),
    }
}

fn member(unit: &UnitHandle, die: &Die) -> Member {
    let mut vbase = None;
    let offset = match die.attr_value(gimli::DW_AT_data_member_location) {
        Some(AttributeValue::Exprloc(expr)) => match plus_uconst(&expr, unit.encoding()) {
            Some(offset) => offset,
            None => {
                // An expression of the object's address: a virtual base.
                vbase = gimli::Reader::to_slice(&expr.0).ok().map(|b| b.to_vec());
                0
            }
        },
        Some(v) => v.udata_value().unwrap_or(0),
        None => 0,
    };
    let bit_size = unit.udata(die, gimli::DW_AT_bit_size);
    let bits = bit_size.map(|width| {
        if let Some(pos) = unit.udata(die, gimli::DW_AT_data_bit_offset) {
            (pos, width)
        } else {
            // DWARF 2/3 counts from the most significant bit of a storage unit of
            // DW_AT_byte_size bytes at the member's location.
            let storage = unit.udata(die, gimli::DW_AT_byte_size).unwrap_or(4) * 8;
            let from_msb = unit.udata(die, gimli::DW_AT_bit_offset).unwrap_or(0);
            let within = storage.saturating_sub(from_msb).saturating_sub(width);
            (offset * 8 + within, width)
        }
    });
    Member {
        name: unit.string(die, gimli::DW_AT_name),
        ty: unit.reference(die, gimli::DW_AT_type).map(TypeId),
        offset: bits.map_or(offset, |(pos, _)| pos / 8),
        bits,
        base: die.tag() == gimli::DW_TAG_inheritance,
        artificial: unit.flag(die, gimli::DW_AT_artificial),
        vbase,
    }
}

/// `DW_OP_plus_uconst n` (how member offsets were written before DWARF 3 allowed constants).
fn plus_uconst(expr: &gimli::Expression<Reader>, enc: gimli::Encoding) -> Option<u64> {
    let mut ops = expr.clone().operations(enc);
    match ops.next() {
        Ok(Some(gimli::Operation::PlusConstant { value })) => Some(value),
        _ => None,
    }
}

fn aggregate(unit: &UnitHandle, die: &Die, kind: AggKind) -> Kind {
    let mut members = Vec::new();
    let mut statics = Vec::new();
    let mut variants = None;
    let mut params = Vec::new();
    for child in children(unit, die) {
        match child.tag() {
            gimli::DW_TAG_template_type_parameter => {
                if let Some(n) = unit.string(&child, gimli::DW_AT_name) {
                    params.push((n, unit.reference(&child, gimli::DW_AT_type).map(TypeId)));
                }
            }
            gimli::DW_TAG_member | gimli::DW_TAG_inheritance => {
                // A static member (DWARF 4 spelling) has no location in the object.
                if unit.flag(&child, gimli::DW_AT_external)
                    || (unit.flag(&child, gimli::DW_AT_declaration)
                        && child.tag() == gimli::DW_TAG_member)
                {
                    statics.extend(static_member(unit, &child, members.len()));
                    continue;
                }
                members.push(member(unit, &child));
            }
            // DWARF 5 declares static members as variables inside the class.
            gimli::DW_TAG_variable => {
                statics.extend(static_member(unit, &child, members.len()));
            }
            gimli::DW_TAG_variant_part if variants.is_none() => {
                variants = Some(variant_part(unit, &child));
            }
            _ => {}
        }
    }
    Kind::Aggregate {
        kind,
        members,
        statics,
        variants,
        params,
        declaration: unit.flag(die, gimli::DW_AT_declaration),
    }
}

fn static_member(unit: &UnitHandle, die: &Die, before: usize) -> Option<StaticMember> {
    Some(StaticMember {
        name: unit.string(die, gimli::DW_AT_name)?,
        ty: unit.reference(die, gimli::DW_AT_type).map(TypeId),
        decl: unit.global(die.offset()),
        before,
    })
}

fn variant_part(unit: &UnitHandle, die: &Die) -> VariantPart {
    let discr_at = unit.reference(die, gimli::DW_AT_discr);
    let mut discr = None;
    let mut variants = Vec::new();
    for child in children(unit, die) {
        match child.tag() {
            gimli::DW_TAG_member if discr_at.is_none_or(|at| at == unit.global(child.offset())) => {
                discr = Some(member(unit, &child));
            }
            gimli::DW_TAG_variant => {
                let discr_value = child
                    .attr_value(gimli::DW_AT_discr_value)
                    .and_then(|v| discriminant(&v));
                let Some(m) = children(unit, &child)
                    .into_iter()
                    .find(|c| c.tag() == gimli::DW_TAG_member)
                else {
                    continue;
                };
                variants.push(Variant {
                    discr_value,
                    member: member(unit, &m),
                });
            }
            _ => {}
        }
    }
    VariantPart { discr, variants }
}

fn enumeration(unit: &UnitHandle, die: &Die, base: Option<TypeId>) -> Kind {
    // Signedness from the underlying type when DWARF names one; else from the values.
    let mut signed = false;
    if let Some(b) = base {
        if let Some(bd) = unit.entry_at(b.0) {
            signed = matches!(encoding(&bd), Encoding::Signed | Encoding::SignedChar);
        }
    }
    let mut enumerators = Vec::new();
    for child in children(unit, die) {
        if child.tag() != gimli::DW_TAG_enumerator {
            continue;
        }
        let Some(name) = unit.string(&child, gimli::DW_AT_name) else {
            continue;
        };
        let value = match child.attr_value(gimli::DW_AT_const_value) {
            Some(AttributeValue::Sdata(v)) => i128::from(v),
            Some(AttributeValue::Udata(v)) => i128::from(v),
            Some(v) if signed => v.sdata_value().map_or(0, i128::from),
            Some(v) => v.udata_value().map_or(0, i128::from),
            None => 0,
        };
        if value < 0 {
            signed = true;
        }
        enumerators.push((name, value));
    }
    Kind::Enum {
        enumerators,
        signed,
        scoped: unit.flag(die, gimli::DW_AT_enum_class),
    }
}

fn function(unit: &UnitHandle, die: &Die, ret: Option<TypeId>) -> Kind {
    let mut params = Vec::new();
    let mut varargs = false;
    for child in children(unit, die) {
        match child.tag() {
            gimli::DW_TAG_formal_parameter => {
                params.push(unit.reference(&child, gimli::DW_AT_type).map(TypeId))
            }
            gimli::DW_TAG_unspecified_parameters => varargs = true,
            _ => {}
        }
    }
    Kind::Function {
        ret,
        params,
        varargs,
    }
}

/// A variant's `DW_AT_discr_value`, as the discriminant's value is compared with it: a
/// constant, or a block of up to 16 little-endian bytes (rustc's for a 128-bit discriminant,
/// as `Option<u128>` has; read as no value, every such variant looked like the default one,
/// and a `Some(5)` printed `None`).
fn discriminant<R: gimli::Reader>(v: &gimli::AttributeValue<R>) -> Option<i128> {
    if let gimli::AttributeValue::Block(b) = v {
        let bytes = b.to_slice().ok()?;
        if bytes.is_empty() || bytes.len() > 16 {
            return None;
        }
        let mut raw = [0u8; 16];
        raw[..bytes.len()].copy_from_slice(&bytes);
        return Some(u128::from_le_bytes(raw) as i128);
    }
    v.udata_value()
        .map(i128::from)
        .or_else(|| v.sdata_value().map(i128::from))
}

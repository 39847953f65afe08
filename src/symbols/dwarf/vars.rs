//! Parameters and local variables of the function at an address, from DWARF: what they are
//! and where they live. Only the common unoptimised shapes are read (a frame-base or register
//! relative slot, a register, a static address); anything else says it is not supported.

use std::panic::AssertUnwindSafe;

use gimli::{AttributeValue, Operation, UnitRef};

use super::info::DwarfInfo;
use super::reader::DwarfReader;
use crate::symbols::addr::FileAddr;

type Reader = DwarfReader;

/// How to turn a variable's bytes into a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    Signed,
    Unsigned,
    Float,
    Pointer,
    /// Aggregates and anything else: shown as bytes.
    Other,
}

/// Where a variable's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VarLocation {
    /// At the frame's canonical frame address plus an offset (`DW_OP_fbreg` with a
    /// `DW_OP_call_frame_cfa` frame base, as GCC emits).
    Cfa(i64),
    /// At a register's value plus an offset (DWARF register number).
    RegOffset(u16, i64),
    /// In a register.
    Register(u16),
    /// At a link-time address (a `static` local).
    Static(FileAddr),
    /// Not readable by scry: why.
    Unsupported(&'static str),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    pub name: String,
    pub param: bool,
    pub type_name: String,
    pub size: u64,
    pub kind: ValueKind,
    pub location: VarLocation,
}

const MAX_VARS: usize = 256;
const MAX_DEPTH: usize = 64;
const MAX_TYPE_HOPS: usize = 16;

impl DwarfInfo {
    /// Parameters and locals in scope at a link-time address (innermost function).
    pub fn variables(&self, addr: FileAddr) -> Vec<Variable> {
        let addr = addr.0;
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            let Some(ctx) = self.context_at(addr) else {
                return Vec::new();
            };
            let Some(unit) = ctx.find_dwarf_and_unit(addr).skip_all_loads() else {
                return Vec::new();
            };
            let mut out = Vec::new();
            let Ok(mut tree) = unit.entries_tree(None) else {
                return out;
            };
            let Ok(root) = tree.root() else { return out };
            find_function(unit, root, addr, 0, &mut out);
            out
        }))
        .unwrap_or_default()
    }
}

/// Finds the innermost subprogram containing `addr` and collects its variables.
fn find_function(
    unit: UnitRef<'_, Reader>,
    node: gimli::EntriesTreeNode<'_, '_, Reader>,
    addr: u64,
    depth: usize,
    out: &mut Vec<Variable>,
) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let mut children = node.children();
    while let Ok(Some(child)) = children.next() {
        let entry = child.entry();
        let tag = entry.tag();
        if tag == gimli::DW_TAG_subprogram && contains(unit, entry, addr) {
            let frame_base = frame_base(entry);
            collect(unit, child, addr, &frame_base, depth + 1, out);
            return true;
        }
        // Functions nest in namespaces and classes (C++), and in other functions (GNU C).
        let nests = matches!(
            tag,
            gimli::DW_TAG_namespace
                | gimli::DW_TAG_class_type
                | gimli::DW_TAG_structure_type
                | gimli::DW_TAG_subprogram
        );
        if nests && find_function(unit, child, addr, depth + 1, out) {
            return true;
        }
    }
    false
}

/// What `DW_OP_fbreg` is relative to.
#[derive(Clone)]
enum FrameBase {
    Cfa,
    Reg(u16, i64),
    Unknown,
}

fn frame_base(entry: &gimli::DebuggingInformationEntry<Reader>) -> FrameBase {
    let Some(AttributeValue::Exprloc(expr)) = entry.attr_value(gimli::DW_AT_frame_base) else {
        return FrameBase::Unknown;
    };
    let mut ops = expr.operations(gimli::Encoding {
        format: gimli::Format::Dwarf32,
        version: 4,
        address_size: 8,
    });
    match ops.next() {
        Ok(Some(Operation::CallFrameCFA)) => FrameBase::Cfa,
        Ok(Some(Operation::Register { register })) => FrameBase::Reg(register.0, 0),
        Ok(Some(Operation::RegisterOffset {
            register, offset, ..
        })) => FrameBase::Reg(register.0, offset),
        _ => FrameBase::Unknown,
    }
}

fn contains(
    unit: UnitRef<'_, Reader>,
    entry: &gimli::DebuggingInformationEntry<Reader>,
    addr: u64,
) -> bool {
    let Ok(mut ranges) = unit.die_ranges(entry) else {
        return false;
    };
    let mut seen = 0;
    while let Ok(Some(r)) = ranges.next() {
        seen += 1;
        if r.begin <= addr && addr < r.end {
            return true;
        }
        if seen > 1024 {
            break;
        }
    }
    false
}

fn collect(
    unit: UnitRef<'_, Reader>,
    node: gimli::EntriesTreeNode<'_, '_, Reader>,
    addr: u64,
    base: &FrameBase,
    depth: usize,
    out: &mut Vec<Variable>,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let mut children = node.children();
    while let Ok(Some(child)) = children.next() {
        if out.len() >= MAX_VARS {
            return;
        }
        let entry = child.entry();
        let tag = entry.tag();
        if tag == gimli::DW_TAG_lexical_block {
            if contains(unit, entry, addr) {
                collect(unit, child, addr, base, depth + 1, out);
            }
            continue;
        }
        if tag != gimli::DW_TAG_formal_parameter && tag != gimli::DW_TAG_variable {
            continue;
        }
        let Some(name) = attr_string(unit, entry, gimli::DW_AT_name) else {
            continue;
        };
        let (type_name, size, kind) = describe_type(unit, entry);
        out.push(Variable {
            name,
            param: tag == gimli::DW_TAG_formal_parameter,
            type_name,
            size,
            kind,
            location: location(entry, base, unit.encoding()),
        });
    }
}

fn attr_string(
    unit: UnitRef<'_, Reader>,
    entry: &gimli::DebuggingInformationEntry<Reader>,
    at: gimli::DwAt,
) -> Option<String> {
    let value = entry.attr_value(at)?;
    let s = unit.attr_string(value).ok()?;
    let text = gimli::Reader::to_string_lossy(&s).ok()?.into_owned();
    Some(text)
}

fn location(
    entry: &gimli::DebuggingInformationEntry<Reader>,
    base: &FrameBase,
    encoding: gimli::Encoding,
) -> VarLocation {
    let expr = match entry.attr_value(gimli::DW_AT_location) {
        Some(AttributeValue::Exprloc(expr)) => expr,
        Some(AttributeValue::LocationListsRef(_)) | Some(AttributeValue::SecOffset(_)) => {
            return VarLocation::Unsupported("optimized: a location list");
        }
        _ => return VarLocation::Unsupported("optimized out"),
    };
    let mut ops = expr.operations(encoding);
    let first = ops.next();
    // Only single-operation expressions: anything longer is a computed location.
    let alone = matches!(ops.next(), Ok(None));
    match (first, alone) {
        (Ok(Some(Operation::FrameOffset { offset })), true) => match base {
            FrameBase::Cfa => VarLocation::Cfa(offset),
            FrameBase::Reg(r, o) => VarLocation::RegOffset(*r, o + offset),
            FrameBase::Unknown => VarLocation::Unsupported("unknown frame base"),
        },
        (
            Ok(Some(Operation::RegisterOffset {
                register, offset, ..
            })),
            true,
        ) => VarLocation::RegOffset(register.0, offset),
        (Ok(Some(Operation::Register { register })), true) => VarLocation::Register(register.0),
        (Ok(Some(Operation::Address { address })), true) => VarLocation::Static(FileAddr(address)),
        _ => VarLocation::Unsupported("a computed location"),
    }
}

/// `int`, 4, Signed; `char *`, 8, Pointer; `struct point`, 8, Other.
fn describe_type(
    unit: UnitRef<'_, Reader>,
    entry: &gimli::DebuggingInformationEntry<Reader>,
) -> (String, u64, ValueKind) {
    describe_type_at(unit, entry, 0)
}

fn describe_type_at(
    unit: UnitRef<'_, Reader>,
    entry: &gimli::DebuggingInformationEntry<Reader>,
    depth: usize,
) -> (String, u64, ValueKind) {
    if depth > MAX_TYPE_HOPS {
        return ("?".into(), 0, ValueKind::Other);
    }
    let mut offset = match entry.attr_value(gimli::DW_AT_type) {
        Some(AttributeValue::UnitRef(o)) => o,
        _ => return ("void".into(), 0, ValueKind::Other),
    };
    let mut prefix = String::new();
    for _ in 0..MAX_TYPE_HOPS {
        let Ok(t) = unit.entry(offset) else { break };
        let name = attr_string(unit, &t, gimli::DW_AT_name);
        let size = t
            .attr_value(gimli::DW_AT_byte_size)
            .and_then(|v| v.udata_value())
            .unwrap_or(0);
        match t.tag() {
            gimli::DW_TAG_base_type => {
                let kind = match t.attr_value(gimli::DW_AT_encoding) {
                    Some(AttributeValue::Encoding(e)) => match e {
                        gimli::DW_ATE_signed | gimli::DW_ATE_signed_char => ValueKind::Signed,
                        gimli::DW_ATE_float => ValueKind::Float,
                        _ => ValueKind::Unsigned,
                    },
                    _ => ValueKind::Unsigned,
                };
                return (format!("{prefix}{}", name.unwrap_or_default()), size, kind);
            }
            gimli::DW_TAG_pointer_type | gimli::DW_TAG_reference_type => {
                // The pointer entry's own type is the pointee (absent for `void *`).
                let (pointee, _, _) = describe_type_at(unit, &t, depth + 1);
                return (format!("{prefix}{pointee} *"), 8, ValueKind::Pointer);
            }
            gimli::DW_TAG_typedef | gimli::DW_TAG_const_type | gimli::DW_TAG_volatile_type => {
                if t.tag() == gimli::DW_TAG_const_type {
                    prefix.push_str("const ");
                }
                match t.attr_value(gimli::DW_AT_type) {
                    Some(AttributeValue::UnitRef(o)) => offset = o,
                    _ => return (format!("{prefix}void"), 0, ValueKind::Other),
                }
            }
            gimli::DW_TAG_enumeration_type => {
                return (
                    format!("enum {}", name.unwrap_or_default()),
                    size,
                    ValueKind::Signed,
                );
            }
            gimli::DW_TAG_structure_type | gimli::DW_TAG_union_type | gimli::DW_TAG_class_type => {
                let word = if t.tag() == gimli::DW_TAG_union_type {
                    "union"
                } else {
                    "struct"
                };
                return (
                    format!("{word} {}", name.unwrap_or_default()),
                    size,
                    ValueKind::Other,
                );
            }
            gimli::DW_TAG_array_type => {
                return (
                    format!("{}[]", name.unwrap_or_else(|| "array".into())),
                    size,
                    ValueKind::Other,
                )
            }
            _ => return (name.unwrap_or_else(|| "?".into()), size, ValueKind::Other),
        }
    }
    ("?".into(), 0, ValueKind::Other)
}

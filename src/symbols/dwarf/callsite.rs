//! Call-site information (`DW_TAG_call_site`, GNU's `DW_TAG_GNU_call_site`): what a caller
//! put in a parameter register at a call, as an expression over the caller's own frame. It
//! recovers `DW_OP_entry_value(reg)`: a callee's argument whose register was reused after
//! entry.

use gimli::{AttributeValue, Expression, Operation, UnitOffset};

use super::tree::{InfoTree, Reader, UnitHandle};

/// DIEs searched per function at most.
const MAX_DIES: usize = 200_000;

const DW_TAG_GNU_CALL_SITE: gimli::DwTag = gimli::DwTag(0x4109);
const DW_TAG_GNU_CALL_SITE_PARAMETER: gimli::DwTag = gimli::DwTag(0x410a);
const DW_AT_GNU_CALL_SITE_VALUE: gimli::DwAt = gimli::DwAt(0x2111);

impl InfoTree {
    /// The expression the caller's call site gives for the parameter passed in DWARF
    /// register `reg`, for the call that returns to `return_pc` (a link-time address) inside
    /// function `function` of `unit`.
    pub(crate) fn call_site_value(
        &self,
        unit: &UnitHandle,
        function: usize,
        return_pc: u64,
        reg: u16,
    ) -> Option<Expression<Reader>> {
        let off = UnitOffset(function.checked_sub(unit.start())?);
        let mut cursor = unit.unit.entries_at_offset(off).ok()?;
        let top = cursor.next_dfs().ok()??.depth();
        let mut seen = 0;
        let mut in_site = false;
        let mut site_depth = 0;
        while let Ok(Some(entry)) = cursor.next_dfs() {
            let depth = entry.depth();
            seen += 1;
            if depth <= top || seen > MAX_DIES {
                return None;
            }
            if in_site && depth <= site_depth {
                in_site = false;
            }
            let tag = entry.tag();
            if tag == gimli::DW_TAG_call_site || tag == DW_TAG_GNU_CALL_SITE {
                let ret = entry
                    .attr_value(gimli::DW_AT_call_return_pc)
                    .or_else(|| entry.attr_value(gimli::DW_AT_low_pc));
                let ret = match ret {
                    Some(AttributeValue::Addr(a)) => Some(a),
                    Some(v) => unit.unit_ref().attr_address(v).ok().flatten(),
                    None => None,
                };
                in_site = ret == Some(return_pc);
                site_depth = depth;
                continue;
            }
            if in_site
                && (tag == gimli::DW_TAG_call_site_parameter
                    || tag == DW_TAG_GNU_CALL_SITE_PARAMETER)
            {
                let Some(AttributeValue::Exprloc(loc)) = entry.attr_value(gimli::DW_AT_location)
                else {
                    continue;
                };
                if single_register(&loc, unit) != Some(reg) {
                    continue;
                }
                let value = entry
                    .attr_value(gimli::DW_AT_call_value)
                    .or_else(|| entry.attr_value(DW_AT_GNU_CALL_SITE_VALUE));
                if let Some(AttributeValue::Exprloc(v)) = value {
                    return Some(v);
                }
            }
        }
        None
    }
}

/// The register an expression of exactly `DW_OP_regN` (or `DW_OP_regval_type`, how GCC
/// names an xmm register inside `DW_OP_entry_value`) names.
pub(crate) fn single_register(expr: &Expression<Reader>, unit: &UnitHandle) -> Option<u16> {
    let mut ops = expr.clone().operations(unit.encoding());
    let first = ops.next().ok()??;
    if !matches!(ops.next(), Ok(None)) {
        return None;
    }
    match first {
        Operation::Register { register } => Some(register.0),
        Operation::RegisterOffset {
            register,
            offset: 0,
            base_type,
        } if base_type.0 != 0 => Some(register.0),
        _ => None,
    }
}

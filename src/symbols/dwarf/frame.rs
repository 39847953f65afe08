//! The parameters and variables of one frame (or one call inlined into it) with their
//! values: each variable's location evaluated at pc against the frame, constants taken from
//! `DW_AT_const_value`, and the honest reason when there is no value.

use gimli::{AttributeValue, Reader as _};

use super::location::{self, FrameAccess, Gone, Place};
use super::scope::ScopeChain;
use super::tree::{Die, InfoTree, UnitHandle};
use super::types::{Kind, TypeId};
use super::value::Value;

/// One variable of a frame and its value there.
#[derive(Clone, Debug)]
pub struct FrameVar {
    pub name: String,
    pub param: bool,
    pub ty: Option<TypeId>,
    pub value: Value,
    /// Lexical-block nesting (inner variables shadow outer ones).
    pub block_depth: usize,
    /// A parameter's value when the function was entered (gdb's `m@entry`), where its
    /// location at the entry was a register and the caller's call site says what it put
    /// there; `None` elsewhere.
    pub entry: Option<Value>,
}

impl InfoTree {
    /// The variables of scope `level` of the chain (0 = the function itself, then each
    /// inlined call), evaluated at `pc` (a link-time address). `in_prologue` says the frame
    /// has not finished its prologue, so stack slots are not written yet.
    pub(crate) fn frame_vars(
        &self,
        chain: &ScopeChain,
        level: usize,
        pc: u64,
        frame: &dyn FrameAccess,
        in_prologue: bool,
    ) -> Vec<FrameVar> {
        let Some(scope) = chain.chain.get(level) else {
            return Vec::new();
        };
        let unit = &chain.unit;
        let function = unit.entry_at(chain.function);
        let mut base: Option<Option<u64>> = None;
        // Entry values are of the function's own parameters: an inlined call has no call
        // site of its own.
        let entry_pc = if level == 0 {
            self.function_range(unit, chain.function).map(|(lo, _)| lo)
        } else {
            None
        };
        let mut out = Vec::with_capacity(scope.vars.len());
        for decl in &scope.vars {
            let Some((vunit, die)) = self.entry(decl.die) else {
                continue;
            };
            let size = self.size_of(decl.ty).unwrap_or(8);
            let place = self.var_place(&vunit, &die, decl.ty, size, pc, frame, in_prologue, || {
                *base.get_or_insert_with(|| {
                    function
                        .as_ref()
                        .and_then(|f| location::frame_base(unit, f, frame, pc))
                })
            });
            out.push(FrameVar {
                name: decl.name.clone(),
                param: decl.param,
                ty: decl.ty,
                value: Value {
                    ty: decl.ty,
                    place,
                    bits: None,
                },
                block_depth: decl.block_depth,
                entry: match entry_pc {
                    Some(lo) if decl.param => {
                        entry_value_of(&vunit, &die, decl.ty, size, lo, frame)
                    }
                    _ => None,
                },
            });
        }
        out
    }

    /// Where a variable is at pc.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn var_place(
        &self,
        unit: &UnitHandle,
        die: &Die,
        ty: Option<TypeId>,
        size: u64,
        pc: u64,
        frame: &dyn FrameAccess,
        in_prologue: bool,
        frame_base: impl FnOnce() -> Option<u64>,
    ) -> Place {
        if let Some(c) = die.attr_value(gimli::DW_AT_const_value) {
            return self.const_place(unit, c, ty, size);
        }
        let is_list = !matches!(
            die.attr_value(gimli::DW_AT_location),
            Some(AttributeValue::Exprloc(_)) | None
        );
        let expr = match location::select(unit, die, gimli::DW_AT_location, pc) {
            Ok(e) => e,
            Err(g) => return Place::Gone(g),
        };
        if let Some((target, offset)) = location::implicit_pointer(&expr, unit) {
            return self.synthetic_target(target, offset, pc, frame);
        }
        // At -O0 a stack slot is written by the prologue: before that it holds garbage.
        if in_prologue && !is_list && uses_frame_base(&expr, unit) {
            return Place::Gone(Gone::NotYetStored);
        }
        let fb = if needs_frame_base(&expr, unit) {
            frame_base()
        } else {
            None
        };
        location::evaluate(&expr, unit, frame, fb, size)
    }

    /// A pointer to the object at DIE `target` (a variable kept only in registers), read
    /// now in this frame. The object's own implicit pointers are not followed (a hostile
    /// file could make them a cycle).
    fn synthetic_target(
        &self,
        target: usize,
        offset: i64,
        pc: u64,
        frame: &dyn FrameAccess,
    ) -> Place {
        let unavailable = |why: &str| Place::Gone(Gone::Unavailable(why.into()));
        let Some((tunit, tdie)) = self.entry(target) else {
            return unavailable("a pointer to an object DWARF does not describe");
        };
        let (_, tty) = self.name_and_type(&tunit, &tdie);
        let tsize = self.size_of(tty).unwrap_or(8);
        let place = if let Some(c) = tdie.attr_value(gimli::DW_AT_const_value) {
            self.const_place(&tunit, c, tty, tsize)
        } else {
            match location::select(&tunit, &tdie, gimli::DW_AT_location, pc) {
                Ok(e) if location::implicit_pointer(&e, &tunit).is_none() => {
                    location::evaluate(&e, &tunit, frame, None, tsize)
                }
                Ok(_) => unavailable("a pointer to a pointer that exists only in registers"),
                Err(g) => Place::Gone(g),
            }
        };
        Place::Gone(Gone::Synthetic {
            target: Box::new(place),
            offset,
        })
    }

    /// A `DW_AT_const_value` as the variable's bytes.
    pub(super) fn const_place(
        &self,
        unit: &UnitHandle,
        c: AttributeValue<super::tree::Reader>,
        ty: Option<TypeId>,
        size: u64,
    ) -> Place {
        let width = size.clamp(1, 16) as usize;
        let signed = self.strip(ty).is_some_and(|t| {
            matches!(
                t.kind,
                Kind::Base(super::types::Encoding::Signed)
                    | Kind::Base(super::types::Encoding::SignedChar)
                    | Kind::Enum { signed: true, .. }
            )
        });
        let bytes = match c {
            AttributeValue::Block(b) => b.to_slice().map(|s| s.to_vec()).unwrap_or_default(),
            AttributeValue::String(s) => s.to_slice().map(|s| s.to_vec()).unwrap_or_default(),
            AttributeValue::Sdata(v) => v.to_le_bytes()[..width.min(8)].to_vec(),
            AttributeValue::Udata(v) => v.to_le_bytes()[..width.min(8)].to_vec(),
            AttributeValue::Data16(v) => v.to_le_bytes()[..width].to_vec(),
            other => {
                let v = if signed {
                    other.sdata_value().map(|v| v as u64)
                } else {
                    other.udata_value()
                };
                match v {
                    Some(v) => {
                        let mut b = v.to_le_bytes().to_vec();
                        b.resize(
                            width.max(8),
                            if signed && (v as i64) < 0 { 0xff } else { 0 },
                        );
                        b.truncate(width);
                        b
                    }
                    None => {
                        // A string constant in .debug_str.
                        match unit.unit_ref().attr_string(other) {
                            Ok(s) => s.to_slice().map(|s| s.to_vec()).unwrap_or_default(),
                            Err(_) => return Place::Gone(Gone::OptimizedOut),
                        }
                    }
                }
            }
        };
        Place::bytes(bytes)
    }
}

fn uses_frame_base(expr: &gimli::Expression<super::tree::Reader>, unit: &UnitHandle) -> bool {
    let mut ops = expr.clone().operations(unit.encoding());
    while let Ok(Some(op)) = ops.next() {
        match op {
            gimli::Operation::FrameOffset { .. } | gimli::Operation::CallFrameCFA => return true,
            gimli::Operation::RegisterOffset { register, .. }
                if register.0 == 6 || register.0 == 7 =>
            {
                return true
            }
            _ => {}
        }
    }
    false
}

fn needs_frame_base(expr: &gimli::Expression<super::tree::Reader>, unit: &UnitHandle) -> bool {
    let mut ops = expr.clone().operations(unit.encoding());
    while let Ok(Some(op)) = ops.next() {
        if let gimli::Operation::FrameOffset { .. } = op {
            return true;
        }
    }
    false
}

/// A parameter's value at the function's entry, gdb's rule: its location at the entry pc
/// (`entry_pc`, link-time) is one register, and what that register held on entry is known
/// (the caller's call site says what it put there, or the frame is still at its entry).
/// Values wider than a general register are not recovered.
fn entry_value_of(
    unit: &UnitHandle,
    die: &Die,
    ty: Option<TypeId>,
    size: u64,
    entry_pc: u64,
    frame: &dyn FrameAccess,
) -> Option<Value> {
    if size == 0 || size > 8 {
        return None;
    }
    let expr = location::select(unit, die, gimli::DW_AT_location, entry_pc).ok()?;
    super::callsite::single_register(&expr, unit)?;
    let v = frame.entry_value(&expr, unit)?;
    Some(Value {
        ty,
        place: Place::bytes(v.to_le_bytes()[..size as usize].to_vec()),
        bits: None,
    })
}

//! What a function returned, by its DWARF return type and the x86-64 psABI: nothing for
//! `void`, a float from xmm0 (st0 for `long double`), an aggregate from the caller's buffer
//! (its address in rax) or from rax/rdx and xmm0/xmm1 eightbyte by eightbyte. Read at the
//! return address right after `finish()`, while the registers still hold it.

use super::typed_value::TypedValue;
use super::*;
use crate::symbols::dwarf::returns::{Eightbyte, Returned};
use crate::symbols::dwarf::types::Encoding;
use crate::symbols::dwarf::{Kind, Place, TypeId, Value};
use crate::symbols::ModuleFile;
use std::sync::Arc;

impl Session {
    /// Describes `stop` as the end of a `finish()` of the function at `fn_pc`: its reason, and
    /// what the function returned (nothing for `void`: its rax is whatever it last held). A
    /// value whose type DWARF gives comes back typed for the caller to print.
    pub fn describe_return(&mut self, stop: &mut StopInfo, fn_pc: u64) -> Option<TypedValue> {
        let mut returned = ReturnValue::default();
        let aggregate = self.returned(fn_pc, &mut returned);
        stop.kind = StopKind::Finish(returned);
        aggregate
    }

    fn returned(&mut self, fn_pc: u64, returned: &mut ReturnValue) -> Option<TypedValue> {
        // The function's return type, looked up once: where DWARF does not say, rax.
        let returns = self.return_type(fn_pc);
        if returns.as_ref().is_some_and(|r| r.ty.is_none()) {
            return None;
        }
        if returns.as_ref().is_some_and(|r| r.nocall) {
            // An optimizer changed how it returns (rustc -O2: a result nobody used
            // dropped, a slice's pointer half kept in the caller): rax is no value of it.
            returned.rax = self.regs().ok().map(|r| r.rax);
            returned.nocall = true;
            return None;
        }
        returned.rax = self.regs().ok().map(|r| r.rax);
        let Returns {
            file, ty, rust_fn, ..
        } = returns?;
        // A `long double` is its own 64-bit mantissa, typed, so it prints as one
        // (`1.66666666666666666663`), not rounded to the nearest double first.
        if let Some(v) = self.long_double_return(&file, ty) {
            return Some(v);
        }
        returned.float = self.float_return(&file, ty);
        if returned.float.is_some() {
            returned.single = file.dwarf().is_some_and(|d| d.tree.size_of(ty) == Some(4));
            return None;
        }
        let value = self
            .returned_complex(&file, ty)
            .or_else(|| self.returned_aggregate(&file, ty, rust_fn))
            .or_else(|| self.returned_scalar(&file, ty));
        if value.is_none() {
            // A type whose value none of the rules read: rax is no value of it.
            returned.unread = file.dwarf().map(|d| d.tree.type_name(ty));
        }
        value
    }

    /// What a function returned when its return type `ty` is `_Complex`: the psABI returns
    /// a `float _Complex` packed in xmm0, a `double _Complex` in xmm0 and xmm1, a
    /// `long double _Complex` in st0 and st1 (rax, which held them only at -O0 by chance,
    /// is no part of it). `None` for any other type.
    fn returned_complex(
        &mut self,
        file: &Arc<ModuleFile>,
        ty: Option<TypeId>,
    ) -> Option<TypedValue> {
        let t = file.dwarf()?.tree.strip(ty)?;
        if !matches!(t.kind, Kind::Base(Encoding::ComplexFloat)) {
            return None;
        }
        let fpu = self.selected_fp_regs()?;
        let bytes = match t.size? {
            8 => fpu.xmm(0)?[..8].to_vec(),
            16 => [&fpu.xmm(0)?[..8], &fpu.xmm(1)?[..8]].concat(),
            32 => {
                let mut b = vec![0u8; 32];
                b[..10].copy_from_slice(&fpu.st(0)?);
                b[16..26].copy_from_slice(&fpu.st(1)?);
                b
            }
            _ => return None,
        };
        Some(returned_in(file, ty, Place::bytes(bytes)))
    }

    /// The file of the function at `fn_pc` and its DWARF return type (`None` inside: `void`,
    /// no return type on its DIE or the declaration it completes); `None` where DWARF does
    /// not describe the function.
    fn return_type(&self, fn_pc: u64) -> Option<Returns> {
        let module = self.symbols.module_at(RuntimeAddr(fn_pc))?;
        let dwarf = module.file.dwarf()?;
        let chain = dwarf.scopes_at(module.bias.to_file(RuntimeAddr(fn_pc)))?;
        let (unit, die) = dwarf.tree.entry(chain.function)?;
        let (_, ty) = dwarf.tree.name_and_type(&unit, &die);
        let rust_fn = crate::symbols::dwarf::mangled_by_rustc(&unit, &die);
        Some(Returns {
            file: module.file.clone(),
            ty,
            rust_fn,
            nocall: dwarf.tree.nocall(chain.function),
        })
    }

    /// What a function returned when its return type `ty` is an integer, `bool`, `char`,
    /// an enum, a pointer or a reference: the low bytes of rax (rax:rdx for a 16-byte
    /// integer), typed, so an `int` that returned -183 reads -183, not rax's 0xffffff49.
    /// `None` for any other type.
    fn returned_scalar(
        &mut self,
        file: &Arc<ModuleFile>,
        ty: Option<TypeId>,
    ) -> Option<TypedValue> {
        let tree = &file.dwarf()?.tree;
        let scalar = match tree.strip(ty)?.kind {
            Kind::Base(Encoding::Float | Encoding::ComplexFloat) => false,
            Kind::Base(_) | Kind::Enum { .. } => true,
            Kind::Pointer(_) | Kind::Reference { .. } => true,
            _ => false,
        };
        let size = tree.size_of(ty)? as usize;
        if !scalar || size == 0 || (size > 8 && size != 16) {
            return None;
        }
        let regs = self.regs().ok()?;
        let mut bytes = [regs.rax.to_le_bytes(), regs.rdx.to_le_bytes()].concat();
        bytes.truncate(size);
        Some(returned_in(file, ty, Place::bytes(bytes)))
    }

    /// A `long double` return (st0), as a value of its type: the 10 bytes of the x87
    /// register, padded to the type's size. `None` for any other type.
    fn long_double_return(
        &mut self,
        file: &Arc<ModuleFile>,
        ty: Option<TypeId>,
    ) -> Option<TypedValue> {
        let t = file.dwarf()?.tree.strip(ty)?;
        let size = match t.kind {
            Kind::Base(Encoding::Float) if matches!(t.size, Some(10 | 12 | 16)) => t.size? as usize,
            _ => return None,
        };
        let fpu = self.selected_fp_regs()?;
        let mut bytes = vec![0u8; size];
        bytes[..10].copy_from_slice(&fpu.st(0)?);
        Some(returned_in(file, ty, Place::bytes(bytes)))
    }

    /// What a function returned when its return type `ty` is floating point (the psABI
    /// returns `float` and `double` in xmm0, `long double` in st0); `None` for any other
    /// type, whose value is rax.
    fn float_return(&mut self, file: &ModuleFile, ty: Option<TypeId>) -> Option<f64> {
        let t = file.dwarf()?.tree.strip(ty)?;
        let size = match t.kind {
            Kind::Base(Encoding::Float) => t.size?,
            _ => return None,
        };
        let fpu = self.selected_fp_regs()?;
        let xmm0 = fpu.xmm(0)?;
        match size {
            4 => Some(f64::from(f32::from_le_bytes(xmm0[..4].try_into().ok()?))),
            8 => Some(f64::from_le_bytes(xmm0[..8].try_into().ok()?)),
            10 | 12 | 16 => Some(crate::os::fpregs::f80_to_f64(fpu.st(0)?)),
            _ => None,
        }
    }

    /// The aggregate a function returned, typed (`std::string`, a small struct in rax:rdx);
    /// `None` for scalars (rax or `float_return` says them) and where the psABI's rule
    /// cannot be applied with certainty.
    fn returned_aggregate(
        &mut self,
        file: &Arc<ModuleFile>,
        ty: Option<TypeId>,
        rust_fn: bool,
    ) -> Option<TypedValue> {
        let how = file.dwarf()?.tree.returned_aggregate(ty, rust_fn)?;
        let regs = self.regs().ok()?;
        let place = match how {
            Returned::Memory => Place::Memory(regs.rax),
            Returned::Registers(pieces) => {
                let fpu = if pieces.iter().any(|p| p.class == Eightbyte::Sse) {
                    Some(self.selected_fp_regs()?)
                } else {
                    None
                };
                let (mut ints, mut sses) = ([regs.rax, regs.rdx].into_iter(), 0..2);
                let size = file.dwarf()?.tree.size_of(ty)? as usize;
                let mut bytes = vec![0u8; size];
                for p in pieces {
                    let reg = match p.class {
                        Eightbyte::Integer => ints.next()?.to_le_bytes(),
                        Eightbyte::Sse => fpu.as_ref()?.xmm(sses.next()?)?[..8].try_into().ok()?,
                    };
                    let at = p.offset as usize;
                    let end = (at + p.size as usize).min(size);
                    let dst = bytes.get_mut(at..end)?;
                    dst.copy_from_slice(reg.get(..dst.len())?);
                }
                Place::bytes(bytes)
            }
        };
        Some(returned_in(file, ty, place))
    }
}

/// What DWARF says a function returns.
struct Returns {
    file: Arc<ModuleFile>,
    /// `None`: `void`.
    ty: Option<TypeId>,
    /// A mangled Rust function: rustc's own ABI.
    rust_fn: bool,
    /// `DW_CC_nocall`: it does not return by the ABI.
    nocall: bool,
}

/// The value of type `ty` (of `file`'s DWARF) a function returned, where it is.
fn returned_in(file: &Arc<ModuleFile>, ty: Option<TypeId>, place: Place) -> TypedValue {
    TypedValue {
        file: file.clone(),
        value: Value {
            ty,
            place,
            bits: None,
        },
    }
}

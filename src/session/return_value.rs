//! What a function returned, by its DWARF return type and the x86-64 psABI: nothing for
//! `void`, a float from xmm0 (st0 for `long double`), an aggregate from the caller's buffer
//! (its address in rax) or from rax/rdx and xmm0/xmm1 eightbyte by eightbyte. Read at the
//! return address right after `finish()`, while the registers still hold it.

use super::typed_value::TypedValue;
use super::*;
use crate::symbols::dwarf::returns::{Eightbyte, Returned};
use crate::symbols::dwarf::types::Encoding;
use crate::symbols::dwarf::{Kind, Place, Value};
use crate::symbols::ModuleFile;
use std::sync::Arc;

impl Session {
    /// Describes `stop` as the end of a `finish()` of the function at `fn_pc`: its reason, and
    /// what the function returned (nothing for `void`: its rax is whatever it last held). An
    /// aggregate comes back as a typed value for the caller to print.
    pub fn describe_return(&mut self, stop: &mut StopInfo, fn_pc: u64) -> Option<TypedValue> {
        stop.reason = Some(Reason::Finish);
        if self.returns_void(fn_pc) {
            return None;
        }
        stop.returned = self.regs().ok().map(|r| r.rax);
        stop.returned_float = self.float_return(fn_pc);
        if stop.returned_float.is_some() {
            return None;
        }
        self.returned_aggregate(fn_pc)
            .or_else(|| self.returned_scalar(fn_pc))
    }

    /// What a function returned when its DWARF return type is an integer, `bool`, `char`,
    /// an enum, a pointer or a reference: the low bytes of rax (rax:rdx for a 16-byte
    /// integer), typed, so an `int` that returned -183 reads -183, not rax's 0xffffff49.
    /// `None` for any other type.
    pub fn returned_scalar(&mut self, fn_pc: u64) -> Option<TypedValue> {
        let (file, ty, size) = {
            let module = self.symbols.module_at(RuntimeAddr(fn_pc))?;
            let dwarf = module.file.dwarf()?;
            let chain = dwarf.scopes_at(module.bias.to_file(RuntimeAddr(fn_pc)))?;
            let (unit, die) = dwarf.tree.entry(chain.function)?;
            let (_, ty) = dwarf.tree.name_and_type(&unit, &die);
            let t = dwarf.tree.strip(ty)?;
            let scalar = match t.kind {
                Kind::Base(Encoding::Float) => false,
                Kind::Base(_) | Kind::Enum { .. } => true,
                Kind::Pointer(_) | Kind::Reference { .. } => true,
                _ => false,
            };
            let size = dwarf.tree.size_of(ty)? as usize;
            if !scalar || size == 0 || size > 16 || (size > 8 && size != 16) {
                return None;
            }
            let file: Arc<ModuleFile> = module.file.clone();
            (file, ty, size)
        };
        let regs = self.regs().ok()?;
        let mut bytes = [regs.rax.to_le_bytes(), regs.rdx.to_le_bytes()].concat();
        bytes.truncate(size);
        Some(TypedValue {
            file,
            value: Value {
                ty,
                place: Place::bytes(bytes),
                bits: None,
            },
        })
    }

    /// Whether the function at `fn_pc` returns nothing by its DWARF (`void`: no return type
    /// on its DIE or the declaration it completes). False where DWARF does not say.
    pub fn returns_void(&mut self, fn_pc: u64) -> bool {
        let found = (|| {
            let module = self.symbols.module_at(RuntimeAddr(fn_pc))?;
            let dwarf = module.file.dwarf()?;
            let chain = dwarf.scopes_at(module.bias.to_file(RuntimeAddr(fn_pc)))?;
            let (unit, die) = dwarf.tree.entry(chain.function)?;
            Some(dwarf.tree.name_and_type(&unit, &die).1.is_none())
        })();
        found.unwrap_or(false)
    }

    /// What a function returned when its DWARF return type is floating point (the psABI
    /// returns `float` and `double` in xmm0, `long double` in st0); `None` for any other
    /// type, whose value is rax. `fn_pc` is an address inside the function.
    pub fn float_return(&mut self, fn_pc: u64) -> Option<f64> {
        let size = {
            let module = self.symbols.module_at(RuntimeAddr(fn_pc))?;
            let dwarf = module.file.dwarf()?;
            let chain = dwarf.scopes_at(module.bias.to_file(RuntimeAddr(fn_pc)))?;
            let (unit, die) = dwarf.tree.entry(chain.function)?;
            let (_, ty) = dwarf.tree.name_and_type(&unit, &die);
            let t = dwarf.tree.strip(ty)?;
            match t.kind {
                Kind::Base(Encoding::Float) => t.size?,
                _ => return None,
            }
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
    /// cannot be applied with certainty. `fn_pc` is an address inside the function.
    pub fn returned_aggregate(&mut self, fn_pc: u64) -> Option<TypedValue> {
        let (file, ty, how) = {
            let module = self.symbols.module_at(RuntimeAddr(fn_pc))?;
            let dwarf = module.file.dwarf()?;
            let chain = dwarf.scopes_at(module.bias.to_file(RuntimeAddr(fn_pc)))?;
            let (unit, die) = dwarf.tree.entry(chain.function)?;
            let (_, ty) = dwarf.tree.name_and_type(&unit, &die);
            let how = dwarf.tree.returned_aggregate(ty)?;
            let file: Arc<ModuleFile> = module.file.clone();
            (file, ty, how)
        };
        let regs = self.regs().ok()?;
        let place = match how {
            Returned::Memory => Place::Memory(regs.rax),
            Returned::Registers(classes) => {
                let fpu = if classes.contains(&Eightbyte::Sse) {
                    Some(self.selected_fp_regs()?)
                } else {
                    None
                };
                let (mut ints, mut sses) = ([regs.rax, regs.rdx].into_iter(), 0..2);
                let mut bytes = Vec::with_capacity(classes.len() * 8);
                for c in classes {
                    match c {
                        Eightbyte::Integer => bytes.extend(ints.next()?.to_le_bytes()),
                        Eightbyte::Sse => {
                            let xmm = fpu.as_ref()?.xmm(sses.next()?)?;
                            bytes.extend(&xmm[..8]);
                        }
                    }
                }
                let size = file.dwarf()?.tree.size_of(ty)? as usize;
                bytes.truncate(size);
                Place::bytes(bytes)
            }
        };
        Some(TypedValue {
            file,
            value: Value {
                ty,
                place,
                bits: None,
            },
        })
    }
}

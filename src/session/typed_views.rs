//! Typed values as printers and casts see them: a template parameter's type at an address,
//! the object a reference leads to, base-class parts, a trait object's concrete type, a type
//! by name (`state.typed(addr, 'struct foo *')`, `(T *)p` in paths), and memory read without
//! changing what the session keeps (printers run while a value is being printed).

use std::sync::Arc;

use super::error::guarded;
use super::*;
use crate::symbols::dwarf::tree::InfoTree;
use crate::symbols::dwarf::types::TypeId;
use crate::symbols::dwarf::{Kind, Place, Scalar, Value};
use crate::symbols::{LoadedModule, ModuleFile};

impl Session {
    /// The type `spec` names (`struct foo *`), looked up in `prefer`'s DWARF first, then
    /// the executable's, then each library's: the module file it was found in, and the type.
    fn type_named(
        &self,
        spec: &str,
        prefer: Option<&Arc<ModuleFile>>,
    ) -> Result<(Arc<ModuleFile>, Option<crate::symbols::dwarf::TypeId>)> {
        let mut files: Vec<Arc<ModuleFile>> = prefer.into_iter().cloned().collect();
        let mut modules: Vec<&LoadedModule> = self.symbols.modules().iter().collect();
        modules.sort_by_key(|m| !m.is_exe);
        files.extend(modules.into_iter().map(|m| m.file.clone()));
        for file in files {
            let Some(dwarf) = file.dwarf() else { continue };
            let found = guarded(|| dwarf.tree.type_by_spec(spec))?;
            match found.map_err(|e| SessionError::Invalid(e.to_string()))? {
                Some(ty) => return Ok((file.clone(), ty)),
                None => continue,
            }
        }
        Err(SessionError::Invalid(format!(
            "no type '{spec}' in the program's DWARF (a struct, union, enum, typedef or base \
             type, then * or [n]: 'struct foo *', 'PyObject *', 'unsigned char [16]')"
        )))
    }

    /// A value of the type `spec` names at `addr` (`state.typed(addr, 'struct foo')`).
    pub fn typed_at(&self, addr: u64, spec: &str) -> Result<TypedValue> {
        let (file, ty) = self.type_named(spec, None)?;
        Ok(TypedValue {
            file,
            value: Value::at(ty, addr),
        })
    }

    /// `(T *)0x5555...`: a pointer of type `T *` whose value is the number.
    pub fn number_cast(&self, n: i64, spec: &str) -> Result<TypedValue> {
        let (file, ty) = self.type_named(spec, None)?;
        let pointer = file
            .dwarf()
            .and_then(|d| d.tree.strip(ty))
            .is_some_and(|t| matches!(t.kind, Kind::Pointer(_)));
        if !pointer {
            return Err(SessionError::Invalid(format!(
                "a number casts only to a pointer type ('{spec} *'); state.typed(addr, '{spec}') reads a {spec} at an address"
            )));
        }
        Ok(TypedValue {
            file,
            value: Value {
                ty,
                place: Place::bytes((n as u64).to_le_bytes().to_vec()),
                bits: None,
            },
        })
    }

    /// `(T)v`: to a pointer type, `v`'s value (a pointer or an integer) is the address; to
    /// any other type, `v`'s bytes read as `T`.
    pub fn value_cast(&self, v: &TypedValue, spec: &str) -> Result<TypedValue> {
        // `(C &)b`: the object `b` is, seen as a `C`, as C++'s `static_cast<C &>` does:
        // `*(C *)&b`, adjusted for where the `C` starts as a pointer cast is.
        if let Some(referred) = spec.trim_end().strip_suffix('&') {
            let referred = referred.trim_end().trim_end_matches('&').trim_end();
            let address = self.value_address_of(v)?;
            let pointer = self.value_cast(&address, &format!("{referred} *"))?;
            return self.value_deref(&pointer);
        }
        let (file, ty) = self.type_named(spec, Some(&v.file))?;
        let to_pointer = file
            .dwarf()
            .and_then(|d| d.tree.strip(ty))
            .is_some_and(|t| matches!(t.kind, Kind::Pointer(_)));
        let value = if to_pointer {
            // A reference is its referent, as in C++: `(D *)r` of a `B &r` casts the object,
            // which is no pointer; the reference's own address (the object's) read as the
            // pointer gave `(FillEvent *)ev` of a `unique_ptr<Event> &ev` the unique_ptr's
            // address and the fields of whatever lay there.
            let v = &self.referent(v);
            let addr = match self.value_scalar(v)? {
                // C++'s derived-to-base conversion: the base part's address (gdb's
                // `(B *)&mi` too), never the derived object's read as the base.
                Some(Scalar::Pointer(a)) => match self.base_part_address(v, &file, ty) {
                    Some(base) => base,
                    None => self.derived_object_address(v, &file, ty, a, spec)?,
                },
                Some(Scalar::Unsigned(u)) => u as u64,
                Some(Scalar::Signed(i)) | Some(Scalar::Enum(i)) => i as u64,
                _ => {
                    return Err(SessionError::Invalid(format!(
                        "cannot cast {} to {spec}: only a pointer or an integer becomes a pointer (cast its address: ({spec})&x; what a smart pointer holds: ({spec})&*x)",
                        self.value_type_name(v)
                    )))
                }
            };
            Value {
                ty,
                place: Place::bytes(addr.to_le_bytes().to_vec()),
                bits: None,
            }
        } else {
            Value {
                ty,
                place: v.value.place.clone(),
                bits: None,
            }
        };
        Ok(TypedValue { file, value })
    }

    /// Where the object pointer `v` points at has a base part of the class pointer type
    /// `to` points to: that part's address (bases of bases included; a virtual base where
    /// its vtable says). `None` when the class is no base of it (the cast keeps the address).
    fn base_part_address(
        &self,
        v: &TypedValue,
        file: &Arc<ModuleFile>,
        to: Option<TypeId>,
    ) -> Option<u64> {
        let tree = &file.dwarf()?.tree;
        let Kind::Pointer(target) = tree.strip(to)?.kind.clone() else {
            return None;
        };
        let want = tree.type_name(target);
        let object = self.value_deref(v).ok()?;
        if self.value_type_name(&object) == want {
            return None;
        }
        let mut parts = self.value_bases(&object);
        for _ in 0..64 {
            if parts.is_empty() {
                return None;
            }
            let (name, part) = parts.remove(0);
            if name == want {
                return part.value.address();
            }
            parts.extend(self.value_bases(&part));
        }
        None
    }

    /// C++'s base-to-derived conversion, `(C *)pb` of a `B *pb` where `B` is a base of `C`:
    /// the address of the `C` object whose `B` part `pb` points at (gdb's and
    /// `static_cast`'s), not `pb` read as a `C`, which shows another object's bytes where
    /// the base is not at offset 0 (multiple inheritance). Refused through a virtual base,
    /// whose place is the object's own; unrelated classes keep the address (a
    /// reinterpretation, as C's cast).
    fn derived_object_address(
        &self,
        v: &TypedValue,
        file: &Arc<ModuleFile>,
        to: Option<TypeId>,
        addr: u64,
        spec: &str,
    ) -> Result<u64> {
        let Some(tree) = file.dwarf().map(|d| &d.tree) else {
            return Ok(addr);
        };
        let Some(Kind::Pointer(target)) = tree.strip(to).map(|t| t.kind.clone()) else {
            return Ok(addr);
        };
        let Ok(object) = self.value_deref(v) else {
            return Ok(addr);
        };
        let from = self.value_type_name(&object);
        match tree.base_offset(target, &from) {
            Some(Ok(offset)) => Ok(addr.wrapping_sub(offset)),
            Some(Err(())) => Err(SessionError::Invalid(format!(
                "cannot cast a {from} * to {spec}: {from} is a virtual base of it, whose place in each object only that object's vtable holds"
            ))),
            None => Ok(addr),
        }
    }

    /// A value of the `i`th template parameter of `v`'s type (`T` of `vector<T>`) at
    /// `addr`: how a printer reads a container's elements.
    pub fn value_param_at(&self, v: &TypedValue, i: usize, addr: u64) -> Result<TypedValue> {
        let r = self.with_value(v, |d, _| {
            d.template_param(v.value.ty, i)
                .map(|ty| Value::at(ty, addr))
        })?;
        self.derived(v, r.map_err(|e| SessionError::Invalid(e.to_string())))
    }

    /// What a printer prints for `v` (the object a reference leads to) and its type name.
    pub fn value_printable(&self, v: &TypedValue) -> Option<(String, TypedValue)> {
        let (name, value) = self.with_value(v, |d, t| d.printable(&v.value, t)).ok()??;
        Some((
            name,
            TypedValue {
                file: v.file.clone(),
                value,
            },
        ))
    }

    /// What a Rust trait object (`Box<dyn Shape>`, `&dyn Shape`) holds: the concrete type
    /// its vtable (at runtime address `vtable`) belongs to, by name, and the value of that
    /// type at `data`. `None` when the value's DWARF has no vtable there.
    pub fn value_dyn(
        &self,
        v: &TypedValue,
        vtable: u64,
        data: u64,
    ) -> Option<(String, Option<TypedValue>)> {
        let (name, ty) = self
            .with_value(v, |d, t| {
                let bias = t.load_bias()?;
                d.dyn_type_at(vtable.wrapping_sub(bias))
            })
            .ok()??;
        let value = ty.map(|ty| TypedValue {
            file: v.file.clone(),
            value: Value::at(Some(ty), data),
        });
        Some((name, value))
    }

    /// The enumerator `Kind::Key` (an `enum class`'s, or an enum's named through its type)
    /// as a value of its enum type, as gdb's `p Kind::Key` reads it. `None` when `name`
    /// names no enum's enumerator.
    pub(super) fn enumerator(&self, name: &str) -> Option<TypedValue> {
        let (scope, item) = name.trim().rsplit_once("::")?;
        let (file, ty) = self
            .type_named(scope, None)
            .or_else(|_| self.type_named(&format!("enum {scope}"), None))
            .ok()?;
        let t = file.dwarf()?.tree.strip(ty)?;
        let Kind::Enum { enumerators, .. } = &t.kind else {
            return None;
        };
        let (_, value) = enumerators.iter().find(|(n, _)| n == item)?;
        let size = t.size.unwrap_or(4).clamp(1, 16) as usize;
        let bytes = value.to_le_bytes()[..size].to_vec();
        Some(TypedValue {
            file,
            value: Value {
                ty,
                place: Place::bytes(bytes),
                bits: None,
            },
        })
    }

    /// `Class::member`: a static data member of a class by its qualified name, one with
    /// storage or a constant the class declares (`static constexpr double rate`), as gdb
    /// reads `Account::rate`. Only the class's own statics (any other member needs an
    /// object), and only by the class's full name.
    pub(super) fn class_static(&self, name: &str) -> Option<TypedValue> {
        let (class, member) = name.trim().rsplit_once("::")?;
        let (file, ty) = self.type_named(class, None).ok()?;
        let tree = &file.dwarf()?.tree;
        // Named in full: `Cfg` of two namespaces' `a::Cfg` and `b::Cfg` is neither.
        if tree.type_name(tree.strip_id(ty)) != class.trim() {
            return None;
        }
        let t = tree.strip(ty)?;
        let Kind::Aggregate { statics, .. } = &t.kind else {
            return None;
        };
        if !statics.iter().any(|s| s.name == member) {
            return None;
        }
        // A static is read without the object: where one would be does not matter.
        let class = TypedValue {
            file,
            value: Value::at(ty, 0),
        };
        self.value_member(&class, member).ok()
    }

    /// The whole C++ object `v` is a base-class part of, as its vtable says (gdb's `set
    /// print object on`): `Rect` for the `Shape` a `unique_ptr<Shape>` holds. `None` when
    /// `v` is no polymorphic object in memory, is its whole object already, or what its
    /// first word points at is no vtable of a class that has `v`'s type as a base at `v`'s
    /// very address (checked, so no word that merely looks like a vtable pointer passes).
    pub(super) fn dynamic_object(&self, v: &TypedValue) -> Option<TypedValue> {
        let addr = v.value.address()?;
        let word = |a: u64| -> Option<u64> {
            let bytes = self.peek_memory(a, 8).ok()?;
            Some(u64::from_le_bytes(bytes.try_into().ok()?))
        };
        let vptr = word(addr)?;
        let (_, sym, off) = self.symbols.symbol_at(RuntimeAddr(vptr))?;
        let name = sym.display_name();
        let class = name.strip_prefix("vtable for ")?;
        // The address point is past offset-to-top and the typeinfo pointer.
        if off < 16 {
            return None;
        }
        let to_top = word(vptr - 16)? as i64;
        let whole = addr.checked_add_signed(to_top)?;
        // The class itself, through typedefs: a shared_ptr's `element_type`, a `ShapeT`
        // (by the typedef's name no base matched, and `sh->w` found no `w`).
        let static_name = v
            .tree()
            .map(|d| d.type_name(d.strip_id(v.value.ty)))
            .unwrap_or_else(|| self.value_type_name(v));
        if class == static_name && to_top == 0 {
            return None;
        }
        let (file, ty) = self.type_named(class, Some(&v.file)).ok()?;
        let object = TypedValue {
            file,
            value: Value::at(ty, whole),
        };
        // `v` must be a base part of it, at its own address, of its own type.
        let mut parts = vec![object.clone()];
        for _ in 0..8 {
            let mut next = Vec::new();
            for part in &parts {
                for (_, base) in self.value_bases(part) {
                    if base.value.address() == Some(addr)
                        && self.value_type_name(&base) == static_name
                    {
                        return Some(object);
                    }
                    next.push(base);
                }
            }
            if next.is_empty() {
                return None;
            }
            parts = next;
        }
        None
    }

    /// The base-class parts of a C++ object, with their type names.
    pub fn value_bases(&self, v: &TypedValue) -> Vec<(String, TypedValue)> {
        // A reference's bases are its referent's.
        let v = &self.referent(v);
        self.with_value(v, |d, t| d.bases(&v.value, t))
            .unwrap_or_default()
            .into_iter()
            .map(|(n, value)| {
                (
                    n,
                    TypedValue {
                        file: v.file.clone(),
                        value,
                    },
                )
            })
            .collect()
    }

    /// Target memory, read without changing anything the session keeps (printers read
    /// through it while a value is being printed).
    pub fn peek_memory(&self, addr: u64, len: usize) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; len];
        if self.memory_was.borrow().is_some() {
            // A watch hit's old side: only the watched bytes are as they were.
            return match self.inspect(0)?.read(addr, &mut buf) {
                true => Ok(buf),
                false => Err(SessionError::Invalid(format!(
                    "{addr:#x} is outside the watched bytes"
                ))),
            };
        }
        self.targets.view_ref()?.read_memory(addr, &mut buf)?;
        Ok(buf)
    }

    /// The size of `v`'s `i`th template parameter type.
    pub fn value_param_size(&self, v: &TypedValue, i: usize) -> Result<u64> {
        self.param_measure(v, i, "size", InfoTree::size_of)
    }

    /// The alignment of `v`'s type's template parameter `i`: where a node keeps its value.
    pub fn value_param_align(&self, v: &TypedValue, i: usize) -> Result<u64> {
        self.param_measure(v, i, "alignment", InfoTree::align_of)
    }

    fn param_measure(
        &self,
        v: &TypedValue,
        i: usize,
        what: &str,
        measure: fn(&InfoTree, Option<TypeId>) -> Option<u64>,
    ) -> Result<u64> {
        let r = self.with_value(v, |d, _| {
            let ty = d.template_param(v.value.ty, i).map_err(|e| e.to_string())?;
            measure(d, ty).ok_or_else(|| format!("{} has no known {what}", d.type_name(ty)))
        })?;
        r.map_err(SessionError::Invalid)
    }
}

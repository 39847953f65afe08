//! Globals and statics read through the inspection context: a variable by its DIE, a
//! function's static local, the executable's copy of a library's exported variable.

use super::error::guarded;
use super::frame_view::FrameView;
use super::inspection::Inspection;
use super::typed_value::TypedValue;
use super::RuntimeAddr;
use crate::symbols::dwarf::{Place, Value};
use crate::symbols::{LoadedModule, SymKind};

impl<'a> Inspection<'a> {
    /// A frame view with no frame behind it: only what needs no register (a fixed address,
    /// a thread-local of `module`) can be read through it.
    pub(super) fn frameless(&self, module: &'a LoadedModule) -> FrameView<'a> {
        FrameView::frameless(*self, module)
    }

    /// A static variable declared in the body of function `func` (not in an inner block):
    /// the function's variables at its entry, those that live at a fixed address.
    pub(super) fn function_static(&self, func: &str, var: &str) -> Option<TypedValue> {
        let addr = self.store.resolve(func).ok()?;
        self.function_static_at(addr, var)
    }

    /// `function_static` of the function whose code starts at `addr`.
    pub(super) fn function_static_at(&self, addr: RuntimeAddr, var: &str) -> Option<TypedValue> {
        let module = self.store.module_at(addr)?;
        let dwarf = module.file.dwarf()?;
        let pc = module.bias.to_file(addr);
        let chain = dwarf.scopes_at(pc)?;
        // No frame: only what needs no register (a fixed address) can be read.
        let view = self.frameless(module);
        let vars = guarded(|| dwarf.tree.frame_vars(&chain, 0, pc.0, &view, false)).ok()?;
        let found = vars
            .into_iter()
            .find(|v| !v.param && v.name == var && matches!(v.value.place, Place::Memory(_)))?;
        Some(TypedValue {
            file: module.file.clone(),
            value: found.value,
        })
    }

    /// The global or static variable whose DIE is `die` in `module`; `None` when it has no
    /// place (a declaration, or a definition the optimizer dropped).
    pub(super) fn global_value(&self, module: &'a LoadedModule, die: usize) -> Option<TypedValue> {
        self.global_value_or_gone(module, die)
            .filter(|v| !matches!(v.value.place, Place::Gone(_)))
    }

    /// A global's value, `<optimized out>` included (a definition the optimizer dropped).
    pub(super) fn global_value_or_gone(
        &self,
        module: &'a LoadedModule,
        die: usize,
    ) -> Option<TypedValue> {
        let debug = &module.file.dwarf()?.tree;
        let (unit, entry) = debug.entry(die)?;
        let (_, ty) = debug.name_and_type(&unit, &entry);
        let size = debug.size_of(ty).unwrap_or(8);
        let view = self.frameless(module);
        let mut place = debug.var_place(&unit, &entry, ty, size, 0, &view, false, || None);
        if let Place::Memory(_) = place {
            if !module.is_exe && debug.is_external(&unit, &entry) {
                let (name, _) = debug.name_and_type(&unit, &entry);
                if let Some(copy) = name.and_then(|n| self.executable_copy(&n)) {
                    place = Place::Memory(copy.0);
                }
            }
        }
        Some(TypedValue {
            file: module.file.clone(),
            value: Value {
                ty,
                place,
                bits: None,
            },
        })
    }

    /// Where the executable keeps its own copy of a library's exported variable: a program
    /// that uses `optind` or `__progname` gets a copy in its own data (an `R_X86_64_COPY`
    /// relocation, or any definition of the same name, which interposes on the library's),
    /// and the library's code reads and writes that copy through its GOT, never its
    /// original. As gdb does, the copy is the variable.
    fn executable_copy(&self, name: &str) -> Option<RuntimeAddr> {
        let exe = self.store.modules().iter().find(|m| m.is_exe)?;
        let sym = exe.file.image.symbols.lookup_name_raw(name)?;
        let defined = sym.global && sym.kind == SymKind::Object && sym.addr.0 != 0;
        defined.then(|| exe.bias.to_runtime(sym.addr))
    }
}

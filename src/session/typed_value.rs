//! A typed value: a DWARF value and the file whose DWARF describes its type.

use std::sync::Arc;

use crate::symbols::dwarf::tree::InfoTree;
use crate::symbols::dwarf::Value;
use crate::symbols::ModuleFile;

/// A value and the file whose DWARF describes its type.
#[derive(Clone)]
pub struct TypedValue {
    pub file: Arc<ModuleFile>,
    pub value: Value,
}

impl std::fmt::Debug for TypedValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedValue")
            .field("value", &self.value)
            .finish_non_exhaustive()
    }
}

impl TypedValue {
    pub(super) fn tree(&self) -> Option<&InfoTree> {
        self.file.dwarf().map(|d| &d.tree)
    }
}

//! The indexes an `InfoTree` keeps, each built the first time a question needs it: names to
//! DIE offsets (`names` builds and reads them) and each unit's functions by address
//! (`scope`). Only what they hold is here, below the tree that owns them; what fills them
//! reads the tree.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// DIE offsets by name.
pub(super) type ByName = HashMap<String, Vec<usize>>;

#[derive(Default)]
pub(crate) struct NameIndex {
    /// Variables with a location or a constant value (definitions), by name.
    pub(super) vars: OnceLock<ByName>,
    /// Complete struct, class, union and enum types, by name.
    pub(super) types: OnceLock<ByName>,
    /// Abstract instances of inlined functions (DW_AT_inline), by name: where a function
    /// with no code of its own is found (its copies refer to it).
    pub(super) inlines: OnceLock<ByName>,
    /// Every named type a user may write (typedefs and base types too), by name: what
    /// `state.typed(addr, 'T *')` and casts in paths look up.
    pub(super) type_names: OnceLock<ByName>,
}

/// Subprograms of a unit by address: (low, high, DIE offset).
pub(super) type FunctionIndex = Vec<(u64, u64, usize)>;

pub(crate) struct FunctionIndexes {
    pub(super) by_unit: Mutex<HashMap<usize, Arc<FunctionIndex>>>,
}

impl FunctionIndexes {
    pub(crate) fn new() -> Self {
        FunctionIndexes {
            by_unit: Mutex::new(HashMap::new()),
        }
    }
}

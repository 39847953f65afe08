//! Units by the source file they compile, for gdb's `'other.c'::counter`: a file's own static
//! when two files define the same name.

use super::tree::{InfoTree, UnitHandle};

/// Units looked at at most when asking whether a file is known at all.
const MAX_UNITS: usize = 200_000;

impl InfoTree {
    /// Whether `unit` compiles the source file `wanted` names (see `names_file`).
    pub(crate) fn unit_compiles(&self, unit: &UnitHandle, wanted: &str) -> bool {
        unit_path(unit).is_some_and(|p| names_file(&p, wanted))
    }

    /// Whether any unit compiles a source file `wanted` names.
    pub(crate) fn compiles_file(&self, wanted: &str) -> bool {
        self.unit_starts()
            .into_iter()
            .take(MAX_UNITS)
            .filter_map(|start| self.unit_for_scan(start))
            .any(|unit| self.unit_compiles(&unit, wanted))
    }
}

/// The unit's source file: its `DW_AT_name`, under its `DW_AT_comp_dir` when relative.
pub(super) fn unit_path(unit: &UnitHandle) -> Option<String> {
    let text = |r: &super::tree::Reader| {
        gimli::Reader::to_string_lossy(r)
            .ok()
            .map(|s| s.into_owned())
    };
    let name = text(unit.unit.name.as_ref()?)?;
    if name.starts_with('/') {
        return Some(name);
    }
    match unit.unit.comp_dir.as_ref().and_then(text) {
        Some(dir) => Some(format!("{}/{name}", dir.trim_end_matches('/'))),
        None => Some(name),
    }
}

/// gdb's rule for a file named in a search: the path ends with the name, whole path
/// components only (`other.c` and `src/other.c` name `/w/src/other.c`; `ther.c` does not).
/// A leading `./` says nothing.
pub fn names_file(path: &str, wanted: &str) -> bool {
    let mut wanted = wanted;
    while let Some(rest) = wanted.strip_prefix("./") {
        wanted = rest;
    }
    let path = path.replace("/./", "/");
    if wanted.is_empty() {
        return false;
    }
    match path.strip_suffix(wanted) {
        Some("") => true,
        Some(before) => before.ends_with('/') || wanted.starts_with('/'),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::names_file;

    #[test]
    fn a_file_is_named_by_whole_trailing_components() {
        assert!(names_file("/w/src/other.c", "other.c"));
        assert!(names_file("/w/src/other.c", "src/other.c"));
        assert!(names_file("/w/src/other.c", "./other.c"));
        assert!(names_file("/w/src/other.c", "/w/src/other.c"));
        assert!(names_file("/w/./src/other.c", "src/other.c"));
        assert!(names_file("other.c", "other.c"));
        assert!(!names_file("/w/src/another.c", "other.c"));
        assert!(!names_file("/w/src/other.c", "other"));
        assert!(!names_file("/w/src/other.c", ""));
        assert!(!names_file("/w/src/other.c", "rc/other.c"));
    }
}

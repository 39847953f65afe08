//! The state of a run of the whole process tree (see `tree`), one owner for it.

use super::processes::TreeNotes;
use super::tree_nonstop::TreeSignature;
use super::tree_sites::ImageSites;
use crate::os::Tid;

#[derive(Default)]
pub(super) struct TreeRun {
    /// The run under way is a user's `cont()`, which runs the whole tree.
    pub(super) whole: bool,
    /// The process selected when the user's `cont()` began: its end stops the tree, the
    /// end of any other while processes remain is a note.
    pub(super) anchor: Option<Tid>,
    /// Children kept and processes ended since the last reported stop, for its notes.
    pub(super) notes: TreeNotes,
    /// The breakpoint addresses of held processes that run another image (see `tree_sites`).
    pub(super) sites: ImageSites,
    /// The other processes still run from the last leg, with these breakpoints in them
    /// (see `tree_nonstop`).
    pub(super) running: Option<TreeSignature>,
    /// The selected process became current by a hit of a non-stop tree run, not through the
    /// full selection (done when everything stops).
    pub(super) swapped_in: bool,
}

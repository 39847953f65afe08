//! What values read: the target's memory, names for its code addresses and, for static and
//! thread-local members, where their module is; and the front end's printers, when values
//! are printed through them. The session implements it over a live process or a core file;
//! the DWARF side only asks.

use super::pretty::Pretty;

/// What values read: target memory, and names for code addresses.
pub trait Target {
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool;
    /// `add` or `add+0x4` for a code address.
    fn symbolize(&self, addr: u64) -> Option<String>;
    /// The load bias of the module whose DWARF describes the values: where a static
    /// member's storage is (its definition gives a link-time address). `None`: unknown, and
    /// such a member reads as unavailable.
    fn load_bias(&self) -> Option<u64> {
        None
    }
    /// The address of `offset` in that module's thread-local block (a `thread_local`
    /// static member), for the selected thread.
    fn tls_address(&self, _offset: u64) -> Option<u64> {
        None
    }
    /// The front end's printers, if values are printed through them.
    fn pretty(&self) -> Option<&dyn Pretty> {
        None
    }
}

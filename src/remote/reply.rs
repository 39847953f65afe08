//! Stop replies (`T`, `S`, `W`, `X`, `N`) and thread ids (`p<pid>.<tid>`), parsed from the
//! stub's bytes, which are trusted for nothing: a malformed reply is an error naming it.

use super::packet::number;

/// A thread as the stub names it: with the multiprocess extension `p<pid>.<tid>`, else
/// `<tid>`. `-1` (all) and `0` (any) are kept as such.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ThreadId {
    pub(crate) pid: Option<i64>,
    pub(crate) tid: i64,
}

impl ThreadId {
    pub(crate) fn parse(text: &[u8]) -> Option<ThreadId> {
        let one = |t: &[u8]| -> Option<i64> {
            if t == b"-1" {
                return Some(-1);
            }
            i64::try_from(number(t)?).ok()
        };
        match text.strip_prefix(b"p") {
            Some(rest) => {
                let mut parts = rest.splitn(2, |&b| b == b'.');
                let pid = one(parts.next()?)?;
                let tid = match parts.next() {
                    Some(t) => one(t)?,
                    None => -1,
                };
                Some(ThreadId {
                    pid: Some(pid),
                    tid,
                })
            }
            None => Some(ThreadId {
                pid: None,
                tid: one(text)?,
            }),
        }
    }
}

/// Why a `T` stop happened, beyond its signal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Why {
    Signal,
    SoftwareBreakpoint,
    HardwareBreakpoint,
    /// A watchpoint fired on the data address given.
    Watch(u64),
    SyscallEntry(u64),
    SyscallReturn(u64),
    /// A library was loaded or unloaded.
    Library,
    /// The process ran exec (`exec:` with the new image's path, lldb-server's `reason:exec`
    /// without one): its old image, with every breakpoint in it, is gone.
    Exec(Option<Vec<u8>>),
    /// The thread forked (`fork:`) or vforked (`vfork:`): the child, held by the stub.
    Fork(ThreadId),
    Vfork(ThreadId),
    /// The vfork child exec'd or exited: the parent's memory is its own again.
    VforkDone,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    Stopped {
        /// The protocol's signal number.
        signal: u8,
        thread: Option<ThreadId>,
        why: Why,
        /// Registers the stub sent with the stop (number, little-endian bytes).
        expedited: Vec<(usize, Vec<u8>)>,
    },
    Exited {
        code: u8,
        pid: Option<i64>,
    },
    Killed {
        signal: u8,
        pid: Option<i64>,
    },
    /// No thread is left running (`N`).
    NoResumed,
}

impl Reply {
    /// Parses a stop reply; `None` when the bytes are no stop reply.
    pub(crate) fn parse(reply: &[u8]) -> Option<Reply> {
        let (&kind, rest) = reply.split_first()?;
        match kind {
            b'S' | b'T' => {
                let signal = u8::try_from(number(rest.get(..2)?)?).ok()?;
                let mut thread = None;
                let mut why = Why::Signal;
                let mut expedited = Vec::new();
                let mut reason: Option<&[u8]> = None;
                let mut description = None;
                for pair in rest[2..].split(|&b| b == b';').filter(|p| !p.is_empty()) {
                    let colon = pair.iter().position(|&b| b == b':')?;
                    let (key, value) = (&pair[..colon], &pair[colon + 1..]);
                    match key {
                        b"thread" => thread = Some(ThreadId::parse(value)?),
                        b"swbreak" => why = Why::SoftwareBreakpoint,
                        b"hwbreak" => why = Why::HardwareBreakpoint,
                        b"watch" | b"rwatch" | b"awatch" => why = Why::Watch(number(value)?),
                        b"syscall_entry" => why = Why::SyscallEntry(number(value)?),
                        b"syscall_return" => why = Why::SyscallReturn(number(value)?),
                        b"library" => why = Why::Library,
                        b"exec" => why = Why::Exec(super::packet::unhex_all(value)),
                        b"fork" => why = Why::Fork(ThreadId::parse(value)?),
                        b"vfork" => why = Why::Vfork(ThreadId::parse(value)?),
                        b"vforkdone" => why = Why::VforkDone,
                        // lldb-server's words for the same (`reason:watchpoint` with a
                        // `description` of hex text: "ADDR INDEX HIT").
                        b"reason" => reason = Some(value),
                        b"description" => description = super::packet::unhex_all(value),
                        _ if key.iter().all(u8::is_ascii_hexdigit) => {
                            let num = usize::try_from(number(key)?).ok()?;
                            let bytes = super::packet::unhex_all(value)?;
                            expedited.push((num, bytes));
                        }
                        // core: and whatever a newer stub adds: not asked for.
                        _ => {}
                    }
                }
                if why == Why::Signal {
                    why = lldb_why(reason, description.as_deref()).unwrap_or(Why::Signal);
                }
                Some(Reply::Stopped {
                    signal,
                    thread,
                    why,
                    expedited,
                })
            }
            b'W' | b'X' => {
                let mut parts = rest.split(|&b| b == b';');
                let value = u8::try_from(number(parts.next()?)?).ok()?;
                let pid = parts
                    .find_map(|p| p.strip_prefix(b"process:"))
                    .and_then(|p| i64::try_from(number(p)?).ok());
                Some(if kind == b'W' {
                    Reply::Exited { code: value, pid }
                } else {
                    Reply::Killed { signal: value, pid }
                })
            }
            b'N' if rest.is_empty() => Some(Reply::NoResumed),
            _ => None,
        }
    }
}

/// What lldb-server's `reason` (and a watchpoint's `description`) says a stop is: its
/// breakpoints are rewound to the site as a `swbreak` one; other reasons (`trace`, `signal`,
/// `exception`) are the signal's.
fn lldb_why(reason: Option<&[u8]>, description: Option<&[u8]>) -> Option<Why> {
    match reason? {
        b"breakpoint" => Some(Why::SoftwareBreakpoint),
        b"exec" => Some(Why::Exec(None)),
        b"watchpoint" => {
            let text = std::str::from_utf8(description?).ok()?;
            let addr = text.split_ascii_whitespace().next()?.parse().ok()?;
            Some(Why::Watch(addr))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_breakpoint_stop_as_gdbserver_sends_it() {
        let reply = Reply::parse(
            b"T0506:00e7ffffff7f0000;10:704bfef7ff7f0000;thread:p5264.5264;core:0;swbreak:;",
        )
        .unwrap();
        let Reply::Stopped {
            signal,
            thread,
            why,
            expedited,
        } = reply
        else {
            panic!("not a stop");
        };
        assert_eq!(signal, 5);
        assert_eq!(
            thread,
            Some(ThreadId {
                pid: Some(0x5264),
                tid: 0x5264
            })
        );
        assert_eq!(why, Why::SoftwareBreakpoint);
        assert_eq!(expedited[1].0, 16);
        assert_eq!(expedited[1].1[..2], [0x70, 0x4b]);
    }

    #[test]
    fn ends_watches_and_garbage() {
        assert_eq!(
            Reply::parse(b"W07;process:1a"),
            Some(Reply::Exited {
                code: 7,
                pid: Some(26)
            })
        );
        assert_eq!(
            Reply::parse(b"X0b"),
            Some(Reply::Killed {
                signal: 11,
                pid: None
            })
        );
        let Some(Reply::Stopped { why, .. }) = Reply::parse(b"T05watch:601040;thread:1;") else {
            panic!()
        };
        assert_eq!(why, Why::Watch(0x601040));
        let Some(Reply::Stopped { why, .. }) = Reply::parse(b"T05exec:2f746d702f78;thread:p10.10;")
        else {
            panic!()
        };
        assert_eq!(why, Why::Exec(Some(b"/tmp/x".to_vec())));
        let Some(Reply::Stopped { why, .. }) =
            Reply::parse(b"T05fork:p2b.2b;thread:p10.10;core:1;")
        else {
            panic!()
        };
        assert_eq!(
            why,
            Why::Fork(ThreadId {
                pid: Some(0x2b),
                tid: 0x2b
            })
        );
        assert_eq!(Reply::parse(b"T5"), None);
        assert_eq!(Reply::parse(b"Tzz"), None);
        assert_eq!(Reply::parse(b"T05thread"), None);
        assert_eq!(Reply::parse(b"OK"), None);
        assert_eq!(ThreadId::parse(b"p-1.-1").unwrap().tid, -1);
    }
}

//! Decoding one system call from its raw registers: what its pointer arguments point to is
//! captured through a reader closure (strings and input buffers at entry, output buffers at
//! exit), then every argument becomes a value and a piece of text, strace-style.

use super::flags::{self, errno_name, is_restart};
use super::{row, Kind, Ret};
use crate::os::signals::signal_name;

/// The longest path or string read (PATH_MAX).
pub(crate) const STRING_MAX: usize = 4096;
/// Bytes of a data buffer shown, as strace's default `-s 32`.
pub(crate) const BUF_SHOWN: usize = 32;
/// Entries of an `argv` array shown.
pub(crate) const ARGV_SHOWN: usize = 16;

/// Bytes read from the program, and whether there were more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bytes {
    pub data: Vec<u8>,
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Captured {
    Bytes(Bytes),
    List {
        items: Vec<Bytes>,
        more: bool,
    },
    /// The pointer did not lead to readable memory.
    Unreadable,
}

/// Reads program memory at an address into the buffer; returns how many bytes it could read
/// (stopping at the first unreadable one).
pub(crate) type Reader<'a> = dyn FnMut(u64, &mut [u8]) -> usize + 'a;

fn read_cstr(addr: u64, max: usize, read: &mut Reader) -> Captured {
    if addr == 0 {
        return Captured::Unreadable;
    }
    let mut data = Vec::new();
    let mut chunk = [0u8; 256];
    while data.len() < max {
        let want = chunk.len().min(max - data.len());
        let n = read(addr + data.len() as u64, &mut chunk[..want]);
        if let Some(end) = chunk[..n].iter().position(|b| *b == 0) {
            data.extend_from_slice(&chunk[..end]);
            return Captured::Bytes(Bytes {
                data,
                truncated: false,
            });
        }
        data.extend_from_slice(&chunk[..n]);
        if n < want {
            return if data.is_empty() {
                Captured::Unreadable
            } else {
                // The string runs into unmapped memory: what was readable, marked as cut.
                Captured::Bytes(Bytes {
                    data,
                    truncated: true,
                })
            };
        }
    }
    Captured::Bytes(Bytes {
        data,
        truncated: true,
    })
}

fn read_buf(addr: u64, len: u64, read: &mut Reader) -> Captured {
    if addr == 0 {
        return Captured::Unreadable;
    }
    let shown = (len as usize).min(BUF_SHOWN);
    let mut data = vec![0u8; shown];
    let n = read(addr, &mut data);
    if n < shown {
        return Captured::Unreadable;
    }
    Captured::Bytes(Bytes {
        data,
        truncated: len as usize > shown,
    })
}

/// The most of a socket address read (`struct sockaddr_storage`).
const SOCKADDR_MAX: usize = 128;

/// A socket address of `len` bytes (at most [`SOCKADDR_MAX`]), read whole or not at all.
fn read_sockaddr(addr: u64, len: u64, read: &mut Reader) -> Captured {
    let len = (len as usize).min(SOCKADDR_MAX);
    if addr == 0 || len < 2 {
        return Captured::Unreadable;
    }
    let mut data = vec![0u8; len];
    if read(addr, &mut data) < len {
        return Captured::Unreadable;
    }
    Captured::Bytes(Bytes {
        data,
        truncated: false,
    })
}

/// A socket address the call filled: its length is the `socklen_t` at `len_at`.
fn read_sockaddr_out(addr: u64, len_at: u64, read: &mut Reader) -> Captured {
    let mut len = [0u8; 4];
    if len_at == 0 || read(len_at, &mut len) < 4 {
        return Captured::Unreadable;
    }
    read_sockaddr(addr, u32::from_le_bytes(len) as u64, read)
}

/// A socket address as a value and as text: `127.0.0.1:8080` and `{AF_INET, 127.0.0.1:8080}`,
/// `[::1]:53`, a Unix socket's path (`@name` for an abstract one); other families by name.
fn sockaddr_text(b: &[u8]) -> (String, String) {
    let family = u16::from_le_bytes([b[0], b[1]]) as u64;
    let name = flags::enum_text(flags::ADDRESS_FAMILIES, family);
    let port = |b: &[u8]| u16::from_be_bytes([b[2], b[3]]);
    let value = match family {
        1 => {
            let path = &b[2..];
            let (prefix, path) = match path.first() {
                Some(0) if path.len() > 1 => ("@", &path[1..]),
                _ => ("", path),
            };
            let end = path.iter().position(|c| *c == 0).unwrap_or(path.len());
            let text = plain(&Bytes {
                data: path[..end].to_vec(),
                truncated: false,
            });
            return (
                format!("{prefix}{text}"),
                format!("{{{name}, \"{prefix}{text}\"}}"),
            );
        }
        2 if b.len() >= 8 => format!("{}.{}.{}.{}:{}", b[4], b[5], b[6], b[7], port(b)),
        10 if b.len() >= 24 => {
            let mut ip = [0u8; 16];
            ip.copy_from_slice(&b[8..24]);
            format!("[{}]:{}", std::net::Ipv6Addr::from(ip), port(b))
        }
        _ => return (name.clone(), format!("{{{name}}}")),
    };
    (value.clone(), format!("{{{name}, {value}}}"))
}

fn read_argv(addr: u64, read: &mut Reader) -> Captured {
    if addr == 0 {
        return Captured::Unreadable;
    }
    let mut items = Vec::new();
    for i in 0..=ARGV_SHOWN {
        let mut ptr = [0u8; 8];
        if read(addr + 8 * i as u64, &mut ptr) < 8 {
            return if i == 0 {
                Captured::Unreadable
            } else {
                Captured::List { items, more: true }
            };
        }
        let p = u64::from_le_bytes(ptr);
        if p == 0 {
            return Captured::List { items, more: false };
        }
        if i == ARGV_SHOWN {
            break;
        }
        match read_cstr(p, BUF_SHOWN, read) {
            Captured::Bytes(b) => items.push(b),
            _ => items.push(Bytes {
                data: Vec::new(),
                truncated: true,
            }),
        }
    }
    Captured::List { items, more: true }
}

/// What the call's input arguments point to, read at its entry (before the call can change
/// it): strings, argument vectors and the buffers it will read.
pub(crate) fn capture_entry(nr: u64, args: &[u64; 6], read: &mut Reader) -> Vec<(usize, Captured)> {
    let Some(row) = row(nr) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, (_, kind)) in row.args.iter().enumerate() {
        let captured = match *kind {
            Kind::Path | Kind::Str => read_cstr(args[i], STRING_MAX, read),
            Kind::In(len) => read_buf(args[i], args[len], read),
            Kind::SockAddr(len) => read_sockaddr(args[i], args[len], read),
            Kind::Argv => read_argv(args[i], read),
            _ => continue,
        };
        out.push((i, captured));
    }
    out
}

/// The buffers the call filled, read at its exit: as many bytes as it returned.
pub(crate) fn capture_exit(
    nr: u64,
    args: &[u64; 6],
    ret: i64,
    read: &mut Reader,
) -> Vec<(usize, Captured)> {
    let Some(row) = row(nr) else {
        return Vec::new();
    };
    if ret < 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, (_, kind)) in row.args.iter().enumerate() {
        match *kind {
            Kind::Out(len) if ret > 0 => {
                let n = (ret as u64).min(args[len]);
                out.push((i, read_buf(args[i], n, read)));
            }
            // `getsockname` returns 0, `accept` an fd: the address is there either way.
            Kind::SockAddrOut(len) => out.push((i, read_sockaddr_out(args[i], args[len], read))),
            _ => {}
        }
    }
    out
}

/// An argument as scripts see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Int(i64),
    UInt(u64),
    Addr(u64),
    /// A symbolic rendering (`O_RDONLY|O_CLOEXEC`, `AT_FDCWD`, `SIGTERM`, `0644`).
    Sym(String),
    /// Text read from the program (invalid UTF-8 as `\xNN`).
    Text(String),
    List(Vec<String>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    pub name: &'static str,
    pub value: Value,
    /// As shown in the call: `"/etc/x.conf"`, `O_RDONLY`, `3`.
    pub text: String,
}

/// A decoded system call, at its entry (`ret` is `None`) or its exit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub nr: u64,
    pub name: String,
    pub args: Vec<Arg>,
    pub ret: Option<i64>,
    ret_kind: Ret,
}

impl Call {
    /// `ENOENT` when the call failed.
    pub fn errno(&self) -> Option<String> {
        self.ret.and_then(errno_name)
    }

    /// `openat(AT_FDCWD, "/etc/x.conf", O_RDONLY)`
    pub fn call_text(&self) -> String {
        let args: Vec<&str> = self.args.iter().map(|a| a.text.as_str()).collect();
        format!("{}({})", self.name, args.join(", "))
    }

    /// `-1 ENOENT`, `3`, `0x7ffff7fc3000`, `? ERESTARTSYS`; `None` at entry.
    pub fn ret_text(&self) -> Option<String> {
        let ret = self.ret?;
        Some(match (self.errno(), self.ret_kind) {
            (Some(e), _) if is_restart(ret) => format!("? {e}"),
            (Some(e), _) => format!("-1 {e}"),
            (None, Ret::Addr) => format!("{:#x}", ret as u64),
            (None, Ret::None) => "?".to_string(),
            (None, _) => ret.to_string(),
        })
    }

    /// The whole call as a stop line shows it: `openat(...) = -1 ENOENT`.
    pub fn text(&self) -> String {
        match self.ret_text() {
            Some(r) => format!("{} = {r}", self.call_text()),
            None => self.call_text(),
        }
    }
}

/// Escapes text like a C string literal, keeping printable UTF-8; invalid bytes as `\xNN`.
fn quoted(bytes: &Bytes) -> String {
    let mut s = String::from("\"");
    for piece in bytes.data.utf8_chunks() {
        for c in piece.valid().chars() {
            match c {
                '"' => s.push_str("\\\""),
                '\\' => s.push_str("\\\\"),
                '\n' => s.push_str("\\n"),
                '\t' => s.push_str("\\t"),
                '\r' => s.push_str("\\r"),
                '\0' => s.push_str("\\0"),
                c if c.is_control() => s.push_str(&format!("\\x{:02x}", c as u32)),
                c => s.push(c),
            }
        }
        for b in piece.invalid() {
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    s.push('"');
    if bytes.truncated {
        s.push_str("...");
    }
    s
}

/// The text as a script gets it: the bytes, invalid UTF-8 as `\xNN`.
fn plain(bytes: &Bytes) -> String {
    let mut s = String::new();
    for piece in bytes.data.utf8_chunks() {
        s.push_str(piece.valid());
        for b in piece.invalid() {
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    s
}

fn hex_or_null(v: u64) -> String {
    if v == 0 {
        "NULL".to_string()
    } else {
        format!("{v:#x}")
    }
}

fn sym(text: String) -> (Value, String) {
    (Value::Sym(text.clone()), text)
}

fn futex_op(v: u64) -> String {
    let cmd = v & !(flags::FUTEX_PRIVATE | flags::FUTEX_CLOCK_REALTIME);
    let mut s = match flags::FUTEX_OPS.iter().find(|(n, _)| *n == cmd) {
        Some((_, name)) => (*name).to_string(),
        None => format!("{cmd:#x}"),
    };
    if v & flags::FUTEX_PRIVATE != 0 {
        s.push_str("_PRIVATE");
    }
    if v & flags::FUTEX_CLOCK_REALTIME != 0 {
        s.push_str("|FUTEX_CLOCK_REALTIME");
    }
    s
}

/// One argument's value and text. `captured` is what was read for it, if anything.
fn decode_arg(kind: Kind, raw: u64, captured: Option<&Captured>) -> (Value, String) {
    let int = raw as i64;
    let int32 = raw as u32 as i32 as i64;
    let from_memory = |captured: Option<&Captured>| match captured {
        Some(Captured::Bytes(b)) => Some((Value::Text(plain(b)), quoted(b))),
        Some(Captured::List { items, more }) => {
            let mut texts: Vec<String> = items.iter().map(quoted).collect();
            if *more {
                texts.push("...".into());
            }
            Some((
                Value::List(items.iter().map(plain).collect()),
                format!("[{}]", texts.join(", ")),
            ))
        }
        _ => None,
    };
    match kind {
        Kind::Int => (Value::Int(int), int.to_string()),
        Kind::UInt => (Value::UInt(raw), raw.to_string()),
        Kind::Hex => (Value::Addr(raw), hex_or_null(raw)),
        Kind::Word if raw == 0 => (Value::UInt(0), "0".to_string()),
        Kind::Word => (Value::UInt(raw), format!("{raw:#x}")),
        Kind::Fd => (Value::Int(int32), int32.to_string()),
        Kind::DirFd if int32 == flags::AT_FDCWD => sym("AT_FDCWD".into()),
        Kind::DirFd => (Value::Int(int32), int32.to_string()),
        Kind::SockAddr(_) | Kind::SockAddrOut(_) => match captured {
            Some(Captured::Bytes(b)) => {
                let (value, text) = sockaddr_text(&b.data);
                (Value::Sym(value), text)
            }
            _ => (Value::Addr(raw), hex_or_null(raw)),
        },
        Kind::Path | Kind::Str | Kind::In(_) | Kind::Out(_) | Kind::Argv => {
            from_memory(captured).unwrap_or_else(|| (Value::Addr(raw), hex_or_null(raw)))
        }
        Kind::OpenFlags => sym(flags::flags_text(
            &flags::OPEN_FLAGS,
            raw & 0xffff_ffff,
            None,
        )),
        Kind::Mode => sym(format!("{:#05o}", raw & 0o7777).replace("0o", "0")),
        Kind::Prot => sym(flags::flags_text(
            &flags::PROT,
            raw & 0xffff_ffff,
            Some(flags::PROT_NONE),
        )),
        Kind::MapFlags => sym(flags::flags_text(
            &flags::MAP_FLAGS,
            raw & 0xffff_ffff,
            None,
        )),
        Kind::Signal if int32 > 0 && int32 <= 64 => sym(signal_name(int32 as i32)),
        Kind::Signal => (Value::Int(int32), int32.to_string()),
        Kind::AtFlags => sym(flags::flags_text(&flags::AT_FLAGS, raw & 0xffff_ffff, None)),
        Kind::AccessMode => sym(flags::flags_text(
            &flags::ACCESS_MODE,
            raw & 0xffff_ffff,
            Some(flags::F_OK),
        )),
        Kind::Whence => sym(flags::enum_text(flags::WHENCE, raw & 0xffff_ffff)),
        Kind::SigHow => sym(flags::enum_text(flags::SIG_HOW, raw & 0xffff_ffff)),
        Kind::AddressFamily => sym(flags::enum_text(flags::ADDRESS_FAMILIES, raw & 0xffff_ffff)),
        Kind::SockType => sym(flags::flags_text(
            &flags::SOCK_TYPE,
            raw & 0xffff_ffff,
            None,
        )),
        Kind::FcntlCmd => sym(flags::enum_text(flags::FCNTL_CMDS, raw & 0xffff_ffff)),
        Kind::FutexOp => sym(futex_op(raw & 0xffff_ffff)),
        Kind::CloneFlags => {
            // `clone`'s low byte is the signal sent to the parent at the child's exit.
            let exit_signal = (raw & 0xff) as i32;
            let mut text = flags::flags_text(&flags::CLONE_FLAGS, raw & !0xff & 0xffff_ffff, None);
            if exit_signal != 0 {
                let name = signal_name(exit_signal);
                text = if text == "0" {
                    name
                } else {
                    format!("{text}|{name}")
                };
            }
            sym(text)
        }
    }
}

/// `O_CREAT` and `O_TMPFILE`: the only opens whose mode argument means anything.
fn mode_matters(row_args: &[(&str, Kind)], raw: &[u64; 6]) -> bool {
    row_args
        .iter()
        .position(|(_, k)| *k == Kind::OpenFlags)
        .is_none_or(|i| raw[i] & (0o100 | 0o20000000) != 0)
}

/// Decodes a call: `raw` its six argument registers, `captured` what was read for its
/// pointer arguments (entry and exit captures together), `ret` its result at exit.
pub(crate) fn decode(
    nr: u64,
    raw: &[u64; 6],
    captured: &[(usize, Captured)],
    ret: Option<i64>,
) -> Call {
    let Some(row) = row(nr) else {
        // A number with no system call: the six registers as they are.
        let name = format!("syscall_{nr}");
        let args = (0..6)
            .map(|i| Arg {
                name: ["arg0", "arg1", "arg2", "arg3", "arg4", "arg5"][i],
                value: Value::Addr(raw[i]),
                text: format!("{:#x}", raw[i]),
            })
            .collect();
        return Call {
            nr,
            name,
            args,
            ret,
            ret_kind: Ret::Int,
        };
    };
    let show_mode = mode_matters(&row.args, raw);
    let mut args = Vec::new();
    for (i, (name, kind)) in row.args.iter().enumerate() {
        if *kind == Kind::Mode && !show_mode {
            continue;
        }
        let found = captured
            .iter()
            .rev()
            .find(|(at, _)| *at == i)
            .map(|(_, c)| c);
        let (value, text) = decode_arg(*kind, raw[i], found);
        args.push(Arg { name, value, text });
    }
    Call {
        nr,
        name: row.name.to_string(),
        args,
        ret,
        ret_kind: row.ret,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake address space: `(addr, bytes)` regions.
    fn reader(regions: Vec<(u64, Vec<u8>)>) -> impl FnMut(u64, &mut [u8]) -> usize {
        move |addr, buf| {
            for (base, bytes) in &regions {
                if addr >= *base && addr < base + bytes.len() as u64 {
                    let off = (addr - base) as usize;
                    let n = buf.len().min(bytes.len() - off);
                    buf[..n].copy_from_slice(&bytes[off..off + n]);
                    return n;
                }
            }
            0
        }
    }

    #[test]
    fn openat_reads_like_strace() {
        let mut mem = reader(vec![(0x1000, b"/etc/x.conf\0junk".to_vec())]);
        let raw = [(-100i64) as u64, 0x1000, 0o2000000, 0o666, 0, 0];
        let cap = capture_entry(257, &raw, &mut mem);
        let call = decode(257, &raw, &cap, Some(-2));
        assert_eq!(
            call.text(),
            "openat(AT_FDCWD, \"/etc/x.conf\", O_RDONLY|O_CLOEXEC) = -1 ENOENT"
        );
        assert_eq!(call.errno().as_deref(), Some("ENOENT"));
        assert_eq!(call.args[1].value, Value::Text("/etc/x.conf".into()));
        assert_eq!(call.args[0].value, Value::Sym("AT_FDCWD".into()));
        // With O_CREAT the mode is shown.
        let raw = [3, 0x1000, 0o101, 0o644, 0, 0];
        let call = decode(257, &raw, &capture_entry(257, &raw, &mut mem), Some(4));
        assert_eq!(
            call.text(),
            "openat(3, \"/etc/x.conf\", O_WRONLY|O_CREAT, 0644) = 4"
        );
        assert_eq!(call.errno(), None);
        // At entry: no result.
        assert_eq!(
            decode(257, &raw, &[], None).text(),
            "openat(3, 0x1000, O_WRONLY|O_CREAT, 0644)"
        );
    }

    #[test]
    fn socket_addresses_read_like_host_and_port() {
        // connect(3, {AF_INET, 127.0.0.1:8080}, 16): read at entry.
        let inet = [2u8, 0, 0x1f, 0x90, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
        let mut v6 = vec![10u8, 0, 0, 53, 0, 0, 0, 0];
        v6.extend_from_slice(&std::net::Ipv6Addr::LOCALHOST.octets());
        v6.extend_from_slice(&[0; 4]);
        let mut unix = vec![1u8, 0];
        unix.extend_from_slice(b"/run/x.sock\0");
        let abstract_ = [1u8, 0, 0, b'n', b'm'];
        let mut mem = reader(vec![
            (0x1000, inet.to_vec()),
            (0x2000, v6.clone()),
            (0x3000, unix.clone()),
            (0x4000, abstract_.to_vec()),
            (0x5000, 16u32.to_le_bytes().to_vec()),
        ]);
        let raw = [3, 0x1000, 16, 0, 0, 0];
        let call = decode(42, &raw, &capture_entry(42, &raw, &mut mem), Some(0));
        assert_eq!(call.text(), "connect(3, {AF_INET, 127.0.0.1:8080}, 16) = 0");
        assert_eq!(call.args[1].value, Value::Sym("127.0.0.1:8080".into()));
        let raw = [3, 0x2000, v6.len() as u64, 0, 0, 0];
        let call = decode(49, &raw, &capture_entry(49, &raw, &mut mem), Some(0));
        assert_eq!(call.args[1].value, Value::Sym("[::1]:53".into()));
        let raw = [3, 0x3000, unix.len() as u64, 0, 0, 0];
        let call = decode(42, &raw, &capture_entry(42, &raw, &mut mem), Some(-111));
        assert_eq!(
            call.text(),
            "connect(3, {AF_UNIX, \"/run/x.sock\"}, 14) = -1 ECONNREFUSED"
        );
        let raw = [3, 0x4000, 5, 0, 0, 0];
        let call = decode(42, &raw, &capture_entry(42, &raw, &mut mem), None);
        assert_eq!(call.args[1].value, Value::Sym("@nm".into()));
        // getsockname fills the address (its length through a pointer): read at exit.
        let raw = [3, 0x1000, 0x5000, 0, 0, 0];
        let cap = capture_exit(51, &raw, 0, &mut mem);
        assert_eq!(
            decode(51, &raw, &cap, Some(0)).text(),
            "getsockname(3, {AF_INET, 127.0.0.1:8080}, 0x5000) = 0"
        );
        // accept(3, NULL, NULL), and an address that cannot be read, stay pointers.
        let raw = [3, 0, 0, 0, 0, 0];
        let cap = capture_exit(43, &raw, 4, &mut mem);
        assert_eq!(
            decode(43, &raw, &cap, Some(4)).text(),
            "accept(3, NULL, NULL) = 4"
        );
        let raw = [3, 0x9000, 16, 0, 0, 0];
        let call = decode(42, &raw, &capture_entry(42, &raw, &mut mem), None);
        assert_eq!(call.text(), "connect(3, 0x9000, 16)");
    }

    #[test]
    fn buffers_strings_and_addresses() {
        let mut text = b"hello\tworld \"q\" \xff".to_vec();
        text.extend_from_slice(&[b'x'; 40]);
        let mut mem = reader(vec![(0x2000, text)]);
        // write: the buffer is read at entry, 32 bytes shown.
        let raw = [1, 0x2000, 56, 0, 0, 0];
        let call = decode(1, &raw, &capture_entry(1, &raw, &mut mem), Some(56));
        assert_eq!(
            call.text(),
            "write(1, \"hello\\tworld \\\"q\\\" \\xffxxxxxxxxxxxxxxx\"..., 56) = 56"
        );
        // read: the buffer is shown at exit, as many bytes as were read.
        let raw = [0, 0x2000, 100, 0, 0, 0];
        let cap = capture_exit(0, &raw, 5, &mut mem);
        assert_eq!(
            decode(0, &raw, &cap, Some(5)).text(),
            "read(0, \"hello\", 100) = 5"
        );
        assert_eq!(decode(0, &raw, &[], None).text(), "read(0, 0x2000, 100)");
        // mmap returns an address.
        let raw = [0, 4096, 3, 0x22, u64::MAX, 0];
        assert_eq!(
            decode(9, &raw, &[], Some(0x7fff_f7fc_3000)).text(),
            "mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7ffff7fc3000"
        );
        // An unreadable path stays a pointer.
        let raw = [(-100i64) as u64, 0xdead, 0, 0, 0, 0];
        let cap = capture_entry(257, &raw, &mut mem);
        assert_eq!(
            decode(257, &raw, &cap, None).call_text(),
            "openat(AT_FDCWD, 0xdead, O_RDONLY)"
        );
    }

    #[test]
    fn argv_signals_and_unknown_calls() {
        let mut bytes = Vec::new();
        for p in [0x3100u64, 0x3200, 0] {
            bytes.extend_from_slice(&p.to_le_bytes());
        }
        let mut mem = reader(vec![
            (0x3000, bytes),
            (0x3100, b"/bin/ls\0".to_vec()),
            (0x3200, b"-l\0".to_vec()),
        ]);
        let raw = [0x3100, 0x3000, 0x5000, 0, 0, 0];
        let call = decode(59, &raw, &capture_entry(59, &raw, &mut mem), Some(0));
        assert_eq!(
            call.text(),
            "execve(\"/bin/ls\", [\"/bin/ls\", \"-l\"], 0x5000) = 0"
        );
        assert_eq!(
            call.args[1].value,
            Value::List(vec!["/bin/ls".into(), "-l".into()])
        );
        assert_eq!(
            decode(62, &[1234, 15, 0, 0, 0, 0], &[], Some(0)).text(),
            "kill(1234, SIGTERM) = 0"
        );
        assert_eq!(
            decode(231, &[3, 0, 0, 0, 0, 0], &[], None).text(),
            "exit_group(3)"
        );
        assert_eq!(
            decode(335, &[1, 2, 3, 4, 5, 6], &[], Some(-38)).text(),
            "syscall_335(0x1, 0x2, 0x3, 0x4, 0x5, 0x6) = -1 ENOSYS"
        );
        assert_eq!(
            decode(202, &[0x10, 0x80, 1, 0, 0, 0], &[], Some(0)).call_text(),
            "futex(0x10, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0)"
        );
        assert_eq!(
            decode(56, &[0x3d0f00 | 17, 0, 0, 0, 0, 0], &[], None).args[0].text,
            "CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID|SIGCHLD"
        );
        assert_eq!(
            decode(0, &[0, 0x10, 1, 0, 0, 0], &[], Some(-512))
                .ret_text()
                .unwrap(),
            "? ERESTARTSYS"
        );
    }
}

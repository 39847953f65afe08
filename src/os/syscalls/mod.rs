//! The x86-64 Linux system calls: their numbers and names, what each takes and returns, and
//! how its arguments read. One table ([`table::ROWS`], data written once) gives all of it;
//! the flag names are in [`flags`], and the pure decoding of raw argument registers into
//! `openat(AT_FDCWD, "/etc/x.conf", O_RDONLY) = -1 ENOENT` in [`render`]. Nothing here
//! touches a process: memory comes through a reader closure.

pub(crate) mod flags;
pub(crate) mod render;
mod table;

use std::sync::OnceLock;

/// `futex` for 202; `syscall 999` for a number with no system call.
pub(crate) fn name(nr: u64) -> String {
    match row(nr) {
        Some(r) => r.name.to_string(),
        None => format!("syscall {nr}"),
    }
}

/// The number of a system call by name.
pub(crate) fn number(name: &str) -> Option<u64> {
    rows()
        .iter()
        .flatten()
        .find(|r| r.name == name)
        .map(|r| r.nr)
}

/// How an argument reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Int,
    UInt,
    Hex,
    /// A word of flags or an opaque number, in hex (0 is `0`, not `NULL`).
    Word,
    Fd,
    DirFd,
    Path,
    Str,
    /// A buffer the call reads; its length is the argument at this index.
    In(usize),
    /// A buffer the call fills (shown at exit, as many bytes as it returned, at most the
    /// argument at this index).
    Out(usize),
    /// A socket address the call reads; its length is the argument at this index.
    SockAddr(usize),
    /// A socket address the call fills (shown at exit); the argument at this index points
    /// to its length.
    SockAddrOut(usize),
    Argv,
    OpenFlags,
    Mode,
    Prot,
    MapFlags,
    Signal,
    AtFlags,
    AccessMode,
    Whence,
    SigHow,
    CloneFlags,
    AddressFamily,
    SockType,
    FcntlCmd,
    FutexOp,
}

/// How a result reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ret {
    Int,
    Fd,
    Addr,
    /// The call does not return (`exit`, `exit_group`).
    None,
}

/// Classes named in the table (`%net` ...); `%file` and `%desc` are derived from the kinds.
const CLASS_LETTERS: [(char, &str); 7] = [
    ('N', "net"),
    ('P', "process"),
    ('S', "signal"),
    ('M', "memory"),
    ('I', "ipc"),
    ('C', "creds"),
    ('T', "clock"),
];

/// Every group `%name` accepts, in the order help lists them.
pub(crate) const GROUPS: [&str; 9] = [
    "file", "desc", "net", "process", "signal", "memory", "ipc", "creds", "clock",
];

#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub nr: u64,
    pub name: &'static str,
    pub args: Vec<(&'static str, Kind)>,
    pub ret: Ret,
    /// Named classes, as letters of [`CLASS_LETTERS`].
    pub classes: &'static str,
}

impl Row {
    fn in_group(&self, group: &str) -> bool {
        match group {
            "file" => self.args.iter().any(|(_, k)| *k == Kind::Path),
            "desc" => {
                self.ret == Ret::Fd
                    || self
                        .args
                        .iter()
                        .any(|(_, k)| matches!(k, Kind::Fd | Kind::DirFd))
            }
            _ => CLASS_LETTERS
                .iter()
                .any(|(c, name)| *name == group && self.classes.contains(*c)),
        }
    }
}

/// The highest system-call number scry tracks, plus one (the kernel's table ends at 451).
pub(crate) const MAX_NR: u64 = 512;

/// A set of system-call numbers below [`MAX_NR`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SysSet([u64; (MAX_NR / 64) as usize]);

impl SysSet {
    pub fn insert(&mut self, nr: u64) {
        if nr < MAX_NR {
            self.0[(nr / 64) as usize] |= 1 << (nr % 64);
        }
    }

    pub fn contains(&self, nr: u64) -> bool {
        nr < MAX_NR && self.0[(nr / 64) as usize] & (1 << (nr % 64)) != 0
    }

    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }

    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn union(&self, other: &SysSet) -> SysSet {
        let mut out = *self;
        for (a, b) in out.0.iter_mut().zip(other.0) {
            *a |= b;
        }
        out
    }

    /// The numbers in `self` and not in `other`.
    pub fn minus(&self, other: &SysSet) -> SysSet {
        let mut out = *self;
        for (a, b) in out.0.iter_mut().zip(other.0) {
            *a &= !b;
        }
        out
    }

    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        (0..MAX_NR).filter(|nr| self.contains(*nr))
    }

    /// Runs of consecutive numbers, ascending: what a filter tests.
    pub fn ranges(&self) -> Vec<(u64, u64)> {
        let mut out: Vec<(u64, u64)> = Vec::new();
        for nr in self.iter() {
            match out.last_mut() {
                Some((_, hi)) if *hi + 1 == nr => *hi = nr,
                _ => out.push((nr, nr)),
            }
        }
        out
    }

    /// Every number that names a system call.
    pub fn all() -> SysSet {
        let mut s = SysSet::default();
        for row in rows().iter().flatten() {
            s.insert(row.nr);
        }
        s
    }

    /// `%file`, `%net` ... (without the `%`).
    pub fn group(name: &str) -> Option<SysSet> {
        let name = if name == "network" { "net" } else { name };
        if !GROUPS.contains(&name) {
            return None;
        }
        let mut s = SysSet::default();
        for row in rows().iter().flatten() {
            if row.in_group(name) {
                s.insert(row.nr);
            }
        }
        Some(s)
    }
}

/// The table, indexed by number (`None` where no system call is, or a row failed to parse:
/// a test proves none does).
pub(crate) fn rows() -> &'static [Option<Row>] {
    static ROWS: OnceLock<Vec<Option<Row>>> = OnceLock::new();
    ROWS.get_or_init(|| {
        let mut out: Vec<Option<Row>> = vec![None; MAX_NR as usize];
        for text in table::ROWS {
            if let Ok(row) = parse_row(text) {
                let nr = row.nr as usize;
                if out[nr].is_none() {
                    out[nr] = Some(row);
                }
            }
        }
        out
    })
}

/// The row of system call `nr`, if it has one.
pub(crate) fn row(nr: u64) -> Option<&'static Row> {
    rows().get(nr as usize)?.as_ref()
}

fn parse_kind(text: &str, names: &[&str]) -> Result<Kind, String> {
    let sized = |inner: &str| -> Result<usize, String> {
        names
            .iter()
            .position(|n| *n == inner)
            .ok_or_else(|| format!("no argument '{inner}' to take a length from"))
    };
    if let Some(inner) = text.strip_prefix("in(").and_then(|t| t.strip_suffix(')')) {
        return Ok(Kind::In(sized(inner)?));
    }
    if let Some(inner) = text.strip_prefix("out(").and_then(|t| t.strip_suffix(')')) {
        return Ok(Kind::Out(sized(inner)?));
    }
    if let Some(inner) = text.strip_prefix("addr(").and_then(|t| t.strip_suffix(')')) {
        return Ok(Kind::SockAddr(sized(inner)?));
    }
    if let Some(inner) = text
        .strip_prefix("addrout(")
        .and_then(|t| t.strip_suffix(')'))
    {
        return Ok(Kind::SockAddrOut(sized(inner)?));
    }
    Ok(match text {
        "i" => Kind::Int,
        "u" => Kind::UInt,
        "x" => Kind::Hex,
        "f" => Kind::Word,
        "fd" => Kind::Fd,
        "dirfd" => Kind::DirFd,
        "path" => Kind::Path,
        "str" => Kind::Str,
        "argv" => Kind::Argv,
        "oflags" => Kind::OpenFlags,
        "mode" => Kind::Mode,
        "prot" => Kind::Prot,
        "mapflags" => Kind::MapFlags,
        "sig" => Kind::Signal,
        "atflags" => Kind::AtFlags,
        "amode" => Kind::AccessMode,
        "whence" => Kind::Whence,
        "sighow" => Kind::SigHow,
        "clone" => Kind::CloneFlags,
        "af" => Kind::AddressFamily,
        "socktype" => Kind::SockType,
        "fcntl" => Kind::FcntlCmd,
        "futexop" => Kind::FutexOp,
        other => return Err(format!("unknown kind '{other}'")),
    })
}

/// One row of [`table::ROWS`]: `nr name arg:kind ... -> ret [classes]`.
fn parse_row(text: &'static str) -> Result<Row, String> {
    let (call, ret) = text
        .split_once(" -> ")
        .ok_or_else(|| format!("{text}: no ' -> '"))?;
    let mut words = call.split_whitespace();
    let nr: u64 = words
        .next()
        .and_then(|w| w.parse().ok())
        .ok_or_else(|| format!("{text}: no number first"))?;
    if nr >= MAX_NR {
        return Err(format!("{text}: number above {MAX_NR}"));
    }
    let name = words.next().ok_or("no name")?;
    let pairs: Vec<(&'static str, &'static str)> = words
        .map(|w| {
            w.split_once(':')
                .ok_or_else(|| format!("{name}: '{w}' has no kind"))
        })
        .collect::<Result<_, _>>()?;
    if pairs.len() > 6 {
        return Err(format!("{name}: more than 6 arguments"));
    }
    let names: Vec<&str> = pairs.iter().map(|(n, _)| *n).collect();
    let args = pairs
        .iter()
        .map(|(arg, kind)| {
            Ok((
                *arg,
                parse_kind(kind, &names).map_err(|e| format!("{name}: {e}"))?,
            ))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let mut tail = ret.split_whitespace();
    let ret = match tail.next() {
        Some("i") => Ret::Int,
        Some("fd") => Ret::Fd,
        Some("x") => Ret::Addr,
        Some("none") => Ret::None,
        other => return Err(format!("{name}: bad result kind {other:?}")),
    };
    let classes = ret_classes(text);
    let unknown = |c: &char| !c.is_whitespace() && !CLASS_LETTERS.iter().any(|(l, _)| l == c);
    if let Some(bad) = classes.chars().find(unknown) {
        return Err(format!("{name}: unknown class '{bad}'"));
    }
    Ok(Row {
        nr,
        name,
        args,
        ret,
        classes,
    })
}

/// The class letters after the result kind: `... -> x I M` gives `I M`.
fn ret_classes(text: &'static str) -> &'static str {
    let after = text.rsplit_once(" -> ").map_or("", |(_, r)| r);
    let start = after.find(' ').map_or(after.len(), |i| i + 1);
    &after[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fields every syscall event has: no argument may shadow one.
    const EVENT_FIELDS: [&str; 20] = [
        "reason",
        "stop_reason",
        "pc",
        "tid",
        "phase",
        "nr",
        "name",
        "args",
        "ret",
        "errno",
        "call",
        "catch_id",
        "state",
        "prev",
        "symbol",
        "line",
        "source",
        "insn",
        "signal",
        "code",
    ];

    #[test]
    fn every_row_parses_once_in_number_order() {
        let mut seen = SysSet::default();
        let mut names = std::collections::BTreeSet::new();
        let mut last = None;
        for text in table::ROWS {
            let row = parse_row(text).unwrap_or_else(|e| panic!("{e}"));
            assert!(!seen.contains(row.nr), "{} twice", row.nr);
            assert!(names.insert(row.name), "{} twice", row.name);
            assert!(last < Some(row.nr), "{} out of order", row.name);
            last = Some(row.nr);
            seen.insert(row.nr);
            for (arg, _) in &row.args {
                assert!(
                    !EVENT_FIELDS.contains(arg),
                    "{}: argument '{arg}' shadows an event field",
                    row.name
                );
            }
        }
        assert_eq!(seen, SysSet::all());
        // The kernel's table has no holes below 335 and none from 424 to its end.
        assert_eq!(seen.len(), 335 + (451 - 424));
    }

    #[test]
    fn names_and_numbers_agree() {
        assert_eq!(name(0), "read");
        assert_eq!(name(58), "vfork");
        assert_eq!(name(202), "futex");
        assert_eq!(name(257), "openat");
        assert_eq!(name(435), "clone3");
        assert_eq!(name(450), "set_mempolicy_home_node");
        assert_eq!(name(100_000), "syscall 100000");
        assert_eq!(name(400), "syscall 400");
        assert_eq!(number("openat"), Some(257));
        assert_eq!(number("nope"), None);
    }

    #[test]
    fn rows_and_groups() {
        let openat = row(257).unwrap();
        assert_eq!(openat.name, "openat");
        assert_eq!(
            openat.args,
            vec![
                ("dirfd", Kind::DirFd),
                ("path", Kind::Path),
                ("flags", Kind::OpenFlags),
                ("mode", Kind::Mode)
            ]
        );
        assert_eq!(openat.ret, Ret::Fd);
        assert_eq!(row(0).unwrap().args[1], ("buf", Kind::Out(2)));
        let file = SysSet::group("file").unwrap();
        assert!(file.contains(257) && file.contains(2) && file.contains(59) && !file.contains(0));
        let desc = SysSet::group("desc").unwrap();
        assert!(desc.contains(0) && desc.contains(3) && desc.contains(257) && !desc.contains(39));
        let net = SysSet::group("network").unwrap();
        assert!(net.contains(41) && net.contains(42) && !net.contains(257));
        assert!(SysSet::group("signal").unwrap().contains(62));
        assert!(SysSet::group("nope").is_none());
    }

    #[test]
    fn sets_and_ranges() {
        let mut s = SysSet::default();
        for nr in [3, 4, 5, 9, 257, 511, 600] {
            s.insert(nr);
        }
        assert_eq!(s.ranges(), vec![(3, 5), (9, 9), (257, 257), (511, 511)]);
        assert_eq!(s.len(), 6);
        let mut t = SysSet::default();
        t.insert(4);
        assert_eq!(s.minus(&t).ranges()[0], (3, 3));
        assert!(s.union(&t).contains(4));
        assert!(SysSet::all().contains(450) && !SysSet::all().contains(335));
    }
}

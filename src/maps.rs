//! Parser for the text of `/proc/PID/maps`. Pure: the caller reads the file (see `procfs`), this
//! only turns lines into entries, so it can be tested on captured text.
//!
//! Line format (fs/proc/task_mmu.c, `show_map_vma`):
//! `start-end perms offset major:minor inode` then, padded with spaces, an optional path.
//! The path runs to the end of the line and may itself contain spaces; the kernel escapes only
//! `\n` (as `\012`), so everything after the padding belongs to the path.

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Perms {
    pub read: bool,
    pub write: bool,
    pub exec: bool,
    /// `s` in the fourth column (MAP_SHARED); `p` means private copy-on-write.
    pub shared: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapEntry {
    pub start: u64,
    pub end: u64,
    pub perms: Perms,
    /// Offset into the backing file of `start` (0 for anonymous memory).
    pub offset: u64,
    /// `major:minor` of the backing device, as printed.
    pub dev: String,
    pub inode: u64,
    /// `None` for anonymous memory. Pseudo paths (`[stack]`, `[heap]`, `[vdso]`, `[anon:name]`)
    /// and the ` (deleted)` suffix of unlinked files are kept verbatim.
    pub path: Option<String>,
}

/// What the kernel appends to the path of a mapping whose file was unlinked.
const DELETED_SUFFIX: &str = " (deleted)";

impl MapEntry {
    pub fn contains(&self, addr: u64) -> bool {
        self.start <= addr && addr < self.end
    }

    pub fn len(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True for `[stack]`, `[vdso]` and friends: names the kernel made up, not files.
    pub fn is_pseudo(&self) -> bool {
        self.path.as_deref().is_some_and(|p| p.starts_with('['))
    }

    pub fn is_deleted(&self) -> bool {
        self.path
            .as_deref()
            .is_some_and(|p| p.ends_with(DELETED_SUFFIX))
    }

    /// The path without the ` (deleted)` marker, which is not part of the file's name.
    pub fn file_path(&self) -> Option<&str> {
        let p = self.path.as_deref()?;
        Some(p.strip_suffix(DELETED_SUFFIX).unwrap_or(p))
    }
}

pub fn parse_maps(text: &str) -> Vec<MapEntry> {
    text.lines().filter_map(parse_line).collect()
}

/// Maps are sorted by address and never overlap, so a binary search is exact.
pub fn find_containing(maps: &[MapEntry], addr: u64) -> Option<&MapEntry> {
    let i = maps.partition_point(|m| m.start <= addr);
    let candidate = maps.get(i.checked_sub(1)?)?;
    if candidate.contains(addr) {
        return Some(candidate);
    }
    // Input that did not come straight from the kernel may be unsorted; stay correct for it.
    maps.iter().find(|m| m.contains(addr))
}

fn parse_line(line: &str) -> Option<MapEntry> {
    let mut rest = line.trim_end_matches(['\r', '\n']);
    let range = next_field(&mut rest)?;
    let perms = next_field(&mut rest)?;
    let offset = next_field(&mut rest)?;
    let dev = next_field(&mut rest)?;
    let inode = next_field(&mut rest)?;

    let (start, end) = range.split_once('-')?;
    let start = u64::from_str_radix(start, 16).ok()?;
    let end = u64::from_str_radix(end, 16).ok()?;
    if end < start {
        return None;
    }
    let perms = parse_perms(perms)?;
    let offset = u64::from_str_radix(offset, 16).ok()?;
    if !dev.contains(':') {
        return None;
    }
    let inode = inode.parse::<u64>().ok()?;

    // Only the padding is stripped: trailing spaces, if any, are part of the file name.
    let path = rest.trim_start_matches(' ');
    let path = (!path.is_empty()).then(|| path.to_string());

    Some(MapEntry {
        start,
        end,
        perms,
        offset,
        dev: dev.to_string(),
        inode,
        path,
    })
}

/// Splits off one space-separated field, leaving `rest` positioned just after it.
fn next_field<'a>(rest: &mut &'a str) -> Option<&'a str> {
    let s = rest.trim_start_matches(' ');
    if s.is_empty() {
        return None;
    }
    let end = s.find(' ').unwrap_or(s.len());
    let (field, tail) = s.split_at(end);
    *rest = tail;
    Some(field)
}

fn parse_perms(s: &str) -> Option<Perms> {
    let b = s.as_bytes();
    if b.len() != 4 {
        return None;
    }
    let flag = |c: u8, yes: u8| match c {
        c if c == yes => Some(true),
        b'-' => Some(false),
        _ => None,
    };
    Some(Perms {
        read: flag(b[0], b'r')?,
        write: flag(b[1], b'w')?,
        exec: flag(b[2], b'x')?,
        shared: match b[3] {
            b's' => true,
            b'p' => false,
            _ => return None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
55d4c5a00000-55d4c5a01000 r--p 00000000 08:01 1311030                    /tmp/my dir/a.out
55d4c5a01000-55d4c5a02000 r-xp 00001000 08:01 1311030                    /tmp/my dir/a.out
55d4c5a04000-55d4c5a05000 rw-p 00003000 08:01 1311030                    /tmp/my dir/a.out
55d4c6b8e000-55d4c6baf000 rw-p 00000000 00:00 0                          [heap]
7f1e2a000000-7f1e2a021000 rw-p 00000000 00:00 0 
7f1e2a200000-7f1e2a228000 r--p 00000000 08:01 2098     /usr/lib/x86_64-linux-gnu/libc.so.6
7f1e2a228000-7f1e2a3bd000 r-xp 00028000 08:01 2098     /usr/lib/x86_64-linux-gnu/libc.so.6
7f1e2a500000-7f1e2a501000 rw-s 00000000 00:05 4242                       /dev/shm/x (deleted)
7ffd1b9c1000-7ffd1b9e2000 rw-p 00000000 00:00 0                          [stack]
7ffd1b9f6000-7ffd1b9f8000 r-xp 00000000 00:00 0                          [vdso]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
";

    #[test]
    fn parses_realistic_maps() {
        let maps = parse_maps(SAMPLE);
        assert_eq!(maps.len(), 11);

        let exe = &maps[1];
        assert_eq!(exe.start, 0x55d4c5a01000);
        assert_eq!(exe.end, 0x55d4c5a02000);
        assert_eq!(
            exe.perms,
            Perms {
                read: true,
                write: false,
                exec: true,
                shared: false
            }
        );
        assert_eq!(exe.offset, 0x1000);
        assert_eq!(exe.dev, "08:01");
        assert_eq!(exe.inode, 1311030);
        assert_eq!(exe.path.as_deref(), Some("/tmp/my dir/a.out"));

        assert_eq!(maps[3].path.as_deref(), Some("[heap]"));
        assert!(maps[3].is_pseudo());
        assert_eq!(
            maps[4].path, None,
            "anonymous mapping with trailing pad space"
        );
        assert_eq!(
            maps[5].path.as_deref(),
            Some("/usr/lib/x86_64-linux-gnu/libc.so.6")
        );

        let shm = &maps[7];
        assert!(shm.perms.shared);
        assert!(shm.is_deleted());
        assert_eq!(shm.path.as_deref(), Some("/dev/shm/x (deleted)"));
        assert_eq!(shm.file_path(), Some("/dev/shm/x"));

        let vsys = &maps[10];
        assert_eq!(vsys.start, 0xffffffffff600000);
        assert_eq!(vsys.end, 0xffffffffff601000);
        assert_eq!(
            vsys.perms,
            Perms {
                read: false,
                write: false,
                exec: true,
                shared: false
            }
        );
        assert_eq!(vsys.path.as_deref(), Some("[vsyscall]"));
    }

    #[test]
    fn skips_malformed_lines() {
        let text = "garbage\n\
                    1000-2000 r-xp 00000000 08:01 5 /ok\n\
                    3000-2000 r-xp 00000000 08:01 5 /end-before-start\n\
                    4000-5000 rwzp 00000000 08:01 5 /bad-perms\n\
                    6000-7000 r-xp 0000zz00 08:01 5 /bad-offset\n\
                    8000-9000 r-xp 00000000 0801 5 /bad-dev\n\
                    a000-b000 r-xp 00000000 08:01 x /bad-inode\n\
                    c000-d000 r-xp\n\
                    \n\
                    e000-f000 r--p 00000000 08:01 7\n";
        let maps = parse_maps(text);
        assert_eq!(maps.len(), 2);
        assert_eq!(maps[0].path.as_deref(), Some("/ok"));
        assert_eq!(maps[1].start, 0xe000);
        assert_eq!(maps[1].path, None);
    }

    #[test]
    fn finds_containing_entry() {
        let maps = parse_maps(SAMPLE);
        let hit = find_containing(&maps, 0x55d4c5a01234).unwrap();
        assert_eq!(hit.offset, 0x1000);
        assert!(
            find_containing(&maps, 0x55d4c5a02000).is_none(),
            "end is exclusive"
        );
        assert!(find_containing(&maps, 0x1000).is_none());
        let vsys = find_containing(&maps, 0xffffffffff600abc).unwrap();
        assert_eq!(vsys.path.as_deref(), Some("[vsyscall]"));
    }
}

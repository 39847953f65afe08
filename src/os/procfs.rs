//! Reading `/proc/PID/...`: the parsing is pure, the reading is one `fs::read`.

use std::path::PathBuf;

use super::Tid;

const AT_ENTRY: u64 = 9;

/// Looks a key up in a raw auxv (pairs of native-endian u64).
pub(crate) fn auxv_lookup(auxv: &[u8], key: u64) -> Option<u64> {
    auxv.chunks_exact(16).find_map(|pair| {
        let k = u64::from_ne_bytes(pair[..8].try_into().ok()?);
        let v = u64::from_ne_bytes(pair[8..].try_into().ok()?);
        (k == key).then_some(v)
    })
}

/// The runtime address of the program's entry point (AT_ENTRY), already relocated for PIE.
pub(crate) fn entry_point(pid: Tid) -> Option<u64> {
    let auxv = std::fs::read(format!("/proc/{pid}/auxv")).ok()?;
    auxv_lookup(&auxv, AT_ENTRY)
}

pub(crate) fn exe_path(pid: Tid) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/exe")).ok()
}

/// A path that opens the very file behind the mapping `start..end` of `pid` whose file was
/// unlinked (replaced: a rebuild renames a new binary over the one running), or `None`.
/// `/proc/PID/map_files/` opens it for a tracer with CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE;
/// without, the executable is still reachable as `/proc/PID/exe`, when it is that file.
pub(crate) fn unlinked_file(
    pid: Tid,
    start: u64,
    end: u64,
    dev: &str,
    inode: u64,
) -> Option<PathBuf> {
    let mapped = PathBuf::from(format!("/proc/{pid}/map_files/{start:x}-{end:x}"));
    if std::fs::File::open(&mapped).is_ok() {
        return Some(mapped);
    }
    use std::os::unix::fs::MetadataExt;
    let exe = PathBuf::from(format!("/proc/{pid}/exe"));
    let shown = |d: u64| format!("{:02x}:{:02x}", libc::major(d), libc::minor(d));
    std::fs::metadata(&exe)
        .is_ok_and(|m| m.ino() == inode && shown(m.dev()) == dev)
        .then_some(exe)
}

pub(crate) fn maps_text(pid: Tid) -> std::io::Result<String> {
    std::fs::read_to_string(format!("/proc/{pid}/maps"))
}

/// Whether `tid` is a thread of process `pid`.
pub(crate) fn has_task(pid: Tid, tid: Tid) -> bool {
    std::path::Path::new(&format!("/proc/{pid}/task/{tid}")).exists()
}

pub(crate) fn task_ids(pid: Tid) -> Vec<Tid> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut tids: Vec<Tid> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    tids
}

pub(crate) fn thread_name(pid: Tid, tid: Tid) -> Option<String> {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")).ok()?;
    Some(comm.trim_end().to_string())
}

/// The state letter of a thread (`R`, `S`, `t`, `Z`, ...) from `/proc/PID/task/TID/stat`;
/// `None` when the thread is gone.
pub(crate) fn thread_state(pid: Tid, tid: Tid) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
    // The command name in parentheses may itself contain ')': the state follows the last one.
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// A thread's id in its own innermost pid namespace (the last of `NSpid`), when it is in one
/// other than scry's: what `gettid()` gives inside it.
pub(crate) fn id_in_namespace(pid: Tid, tid: Tid) -> Option<Tid> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).ok()?;
    let ids = status_field(&status, "NSpid")?;
    ids.split_whitespace().last()?.parse().ok()
}

/// The kernel function a sleeping thread waits in (`/proc/PID/task/TID/wchan`), when the
/// kernel shows it.
pub(crate) fn thread_wchan(pid: Tid, tid: Tid) -> Option<String> {
    let w = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/wchan")).ok()?;
    let w = w.trim();
    (!w.is_empty() && w != "0").then(|| w.to_string())
}

/// The system call a stopped thread was in when it stopped (`/proc/PID/task/TID/syscall`:
/// its number, which it restarts when resumed), `Some(None)` when it was running user code;
/// `None` when the kernel does not say (the thread runs, is gone, or the file is closed).
pub(crate) fn thread_syscall(pid: Tid, tid: Tid) -> Option<Option<u64>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/syscall")).ok()?;
    match text.split_whitespace().next()? {
        "-1" => Some(None),
        nr => nr.parse().ok().map(Some),
    }
}

/// A field of `/proc/PID/status`, e.g. `TracerPid` or `State`.
pub(crate) fn status_field(status: &str, key: &str) -> Option<String> {
    status.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k == key).then(|| v.trim().to_string())
    })
}

/// A signal-set field of `/proc/PID/status` (`SigIgn`, `SigCgt`, `SigBlk`): bit n-1 for
/// signal n.
pub(crate) fn signal_set(status: &str, key: &str) -> Option<u64> {
    u64::from_str_radix(&status_field(status, key)?, 16).ok()
}

/// The bytes of `/proc/PID/NAME` (`stat`, `cmdline`, `auxv`, ...).
pub(crate) fn read(pid: Tid, name: &str) -> Option<Vec<u8>> {
    std::fs::read(format!("/proc/{pid}/{name}")).ok()
}

pub(crate) fn status_text(pid: Tid) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/status")).ok()
}

/// Whether `/proc/PID` exists (a stat: no descriptor needed).
pub(crate) fn exists(pid: Tid) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// How many more file descriptors scry may open (`ulimit -n` less those open), `None` when
/// it cannot tell.
pub(crate) fn descriptors_left() -> Option<(u64, u64)> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return None;
    }
    let open = std::fs::read_dir("/proc/self/fd").ok()?.count() as u64;
    Some((limit.rlim_cur.saturating_sub(open), limit.rlim_cur))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auxv_finds_entry() {
        let mut raw = Vec::new();
        for (k, v) in [(3u64, 0x40u64), (9, 0x401020), (0, 0)] {
            raw.extend_from_slice(&k.to_ne_bytes());
            raw.extend_from_slice(&v.to_ne_bytes());
        }
        assert_eq!(auxv_lookup(&raw, AT_ENTRY), Some(0x401020));
        assert_eq!(auxv_lookup(&raw, 99), None);
        assert_eq!(auxv_lookup(&raw[..10], AT_ENTRY), None);
    }

    #[test]
    fn status_fields() {
        let text = "Name:\tcat\nState:\tt (tracing stop)\nTracerPid:\t42\n";
        assert_eq!(status_field(text, "TracerPid").as_deref(), Some("42"));
        assert_eq!(
            status_field(text, "State").as_deref(),
            Some("t (tracing stop)")
        );
        assert_eq!(status_field(text, "Nope"), None);
        let sigs = "SigIgn:\t0000000000000010\nSigCgt:\t0000000180000000\n";
        assert_eq!(signal_set(sigs, "SigIgn"), Some(1 << 4));
        assert_eq!(signal_set(sigs, "SigCgt"), Some(0x1_8000_0000));
    }
}

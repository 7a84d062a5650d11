//! Files a user names for arrayburn to read (result files for `report`,
//! `ARRAYBURN_TOPOLOGY`): read whole, and only when they are regular files.
//! A FIFO with no writer, a terminal or a device would block the read (a
//! FIFO blocks already at its open, where one signal cannot end it), so
//! each is opened without blocking and refused unless it is a regular
//! file of a sane size.
//!
//! It must not interpret what it reads.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The largest file read (a fleet's year of results is megabytes).
const MAX_BYTES: u64 = 1 << 30;

/// The bytes of the regular file `path`, or why not (without the path:
/// the caller names it and the way out).
pub fn read(path: &Path) -> Result<Vec<u8>, String> {
    read_as(path, 0)
}

/// As [`read`], never through a symbolic link (a file arrayburn writes
/// back, such as `--ack`'s: a link planted in its place is refused).
pub fn read_not_linked(path: &Path) -> Result<Vec<u8>, String> {
    read_as(path, nix::libc::O_NOFOLLOW)
}

fn read_as(path: &Path, flags: i32) -> Result<Vec<u8>, String> {
    let mut f = File::options()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | flags)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
        Some(nix::libc::ELOOP) => {
            "is a symbolic link, which is not followed here: name the file itself".to_string()
        }
        _ => e.to_string(),
    })?;
    let meta = f.metadata().map_err(|e| e.to_string())?;
    let t = meta.file_type();
    let what = match () {
        _ if t.is_file() => None,
        _ if t.is_dir() => Some("a directory"),
        _ if t.is_fifo() => Some("a FIFO (a pipe cannot be waited for here)"),
        _ if t.is_socket() => Some("a socket"),
        _ if t.is_block_device() || t.is_char_device() => Some("a device"),
        _ => Some("not a regular file"),
    };
    if let Some(what) = what {
        return Err(format!("is {what}, not a regular file: save it to a file first"));
    }
    if meta.len() > MAX_BYTES {
        return Err(format!("is {} bytes, more than any result ({MAX_BYTES})", meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    f.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_at_once_and_a_file_is_read() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("f.json");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let e = read(&fifo).unwrap_err();
        assert!(e.contains("is a FIFO"), "{e}");
        let file = d.path().join("r.json");
        std::fs::write(&file, "{}").unwrap();
        assert_eq!(read(&file).unwrap(), b"{}");
        assert!(read(d.path()).unwrap_err().contains("a directory"));
    }
}

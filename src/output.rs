//! Where a result goes. Every output path (`--json`, `--csv`, the files of
//! `--out`, iozone's `--json` and `-b`, `list --json`) is resolved and
//! proven writable before the first read, and written here:
//!
//! - a new path or a regular file is replaced atomically (written whole to a
//!   temporary name beside it, then renamed), so a reader or a crash never
//!   sees half a file;
//! - a symlink is followed: its target is what gets written, the link stays;
//! - a FIFO, a terminal or another character device is written through,
//!   once, at the end, and never renamed over (`--json /dev/stdout` must not
//!   turn the machine's /dev/stdout link into a file);
//! - `-` is standard output (fio's, hyperfine's and smartctl's convention);
//! - a block device is refused: an output never writes a disk.
//!
//! It must not decide what goes into a file, only how it gets there.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// How an output path is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sink {
    /// `-` (or /dev/stdout, /dev/fd/1): standard output, written once at
    /// the end.
    Stdout,
    /// /dev/stderr (or /dev/fd/2): standard error, written once at the end.
    Stderr,
    /// A FIFO, terminal or other character device (the path with its
    /// symlinks followed), written through once at the end.
    Special(PathBuf),
    /// A regular or a new file (the path with its symlinks followed),
    /// replaced atomically at every save.
    File(PathBuf),
}

/// An output path, resolved and proven writable.
#[derive(Debug, Clone)]
pub struct Output {
    /// The flag that named it (`--json`), for messages.
    pub flag: String,
    /// The path as given.
    pub given: PathBuf,
    /// How it is written.
    pub sink: Sink,
}

impl Output {
    /// Resolves `given` for `flag` and proves it writable (a probe file is
    /// created and removed beside a file; a special file must grant write
    /// access). `-` means standard output where `dash_is_stdout`. Nothing is
    /// left behind. The error is one line naming the problem and the way out.
    pub fn resolve(flag: &str, given: &Path, dash_is_stdout: bool) -> Result<Output, String> {
        let shown = format!("{flag} {}", given.display());
        let sink = if dash_is_stdout && given == Path::new("-") {
            Sink::Stdout
        } else if let Some(sink) = standard_stream(given) {
            sink
        } else if let Ok(meta) = fs::metadata(given)
            && !meta.is_file()
            && !meta.is_dir()
        {
            // A special file, reached through its links as the kernel
            // reaches it (/dev/fd/63 of `>(jq .)` is a pipe, not a path).
            special(&shown, given, &meta)?
        } else {
            let path = follow(given).map_err(|e| format!("{shown}: {e}"))?;
            sink_for(&shown, path)?
        };
        Ok(Output {
            flag: flag.to_string(),
            given: given.to_path_buf(),
            sink,
        })
    }

    /// Whether this output is standard output.
    pub fn is_stdout(&self) -> bool {
        self.sink == Sink::Stdout
    }

    /// Writes `bytes`. A file is replaced at every save; standard output and
    /// special files are written only by the `last` save (a FIFO's reader
    /// gets one document, not one per pass).
    pub fn write(&self, bytes: &[u8], last: bool) -> io::Result<()> {
        match &self.sink {
            Sink::File(p) => write_atomic(p, bytes),
            Sink::Special(p) if last => {
                fs::OpenOptions::new().write(true).open(p)?.write_all(bytes)
            }
            Sink::Stdout if last => {
                let mut out = io::stdout().lock();
                out.write_all(bytes)?;
                out.flush()
            }
            Sink::Stderr if last => io::stderr().lock().write_all(bytes),
            _ => Ok(()),
        }
    }

    /// The file this output names, for finding two outputs that are one:
    /// the directory's canonical path and the name, or the special file's
    /// canonical path, or `-`.
    fn identity(&self) -> PathBuf {
        match &self.sink {
            Sink::Stdout => PathBuf::from("-"),
            Sink::Stderr => PathBuf::from("/dev/stderr"),
            Sink::Special(p) => fs::canonicalize(p).unwrap_or_else(|_| p.clone()),
            Sink::File(p) => identity_of(p),
        }
    }
}

/// The canonical directory of `p` joined with its name (the directory may be
/// one `--out` will create).
pub fn identity_of(p: &Path) -> PathBuf {
    let dir = parent_dir(p);
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| {
        // A directory still to be created: its parent's canonical path.
        let up = parent_dir(dir);
        fs::canonicalize(up)
            .map(|c| c.join(dir.file_name().unwrap_or_default()))
            .unwrap_or_else(|_| dir.to_path_buf())
    });
    dir.join(p.file_name().unwrap_or_default())
}

/// Refuses two outputs that name one file (`--json X --csv X`, or `-` twice):
/// each save would overwrite the other.
pub fn refuse_duplicates(
    outputs: impl IntoIterator<Item = (String, PathBuf)>,
) -> Result<(), String> {
    let mut seen: Vec<(String, PathBuf)> = Vec::new();
    for (name, id) in outputs {
        if let Some((first, _)) = seen.iter().find(|(_, s)| *s == id) {
            return Err(format!(
                "{first} and {name} name the same file ({}); give each its own path",
                id.display()
            ));
        }
        seen.push((name, id));
    }
    Ok(())
}

/// `(flag and path as given, identity)` of an output, for
/// [`refuse_duplicates`].
pub fn named(o: &Output) -> (String, PathBuf) {
    (format!("{} {}", o.flag, o.given.display()), o.identity())
}

/// This process's own standard output or error named as a path: written to
/// the stream itself (opening the path anew would start at offset 0 of a
/// redirected file, and following the link leads to `pipe:[N]`).
fn standard_stream(p: &Path) -> Option<Sink> {
    let s = p.to_str()?;
    match s {
        "/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1" => Some(Sink::Stdout),
        "/dev/stderr" | "/dev/fd/2" | "/proc/self/fd/2" => Some(Sink::Stderr),
        _ => None,
    }
}

/// Follows `p` through its symlinks (a dangling link leads to the file it
/// would create).
fn follow(p: &Path) -> io::Result<PathBuf> {
    let mut p = p.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = fs::read_link(&p)?;
                p = parent_dir(&p).join(target);
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::from_raw_os_error(nix::libc::ELOOP))
}

/// How the resolved `path` is written, refusing what must not be.
fn sink_for(shown: &str, path: PathBuf) -> Result<Sink, String> {
    let Ok(meta) = fs::metadata(&path) else {
        let dir = parent_dir(&path);
        if !dir.is_dir() {
            return Err(format!(
                "{shown}: directory {} does not exist; create it or choose another path",
                dir.display()
            ));
        }
        probe_dir(dir).map_err(|e| cannot_write(shown, dir, &e))?;
        return Ok(Sink::File(path));
    };
    if meta.is_dir() {
        Err(format!(
            "{shown}: is a directory; give a file name inside it"
        ))
    } else if meta.is_file() {
        let dir = parent_dir(&path);
        probe_dir(dir).map_err(|e| cannot_write(shown, dir, &e))?;
        Ok(Sink::File(path))
    } else {
        special(shown, &path, &meta)
    }
}

/// A FIFO, terminal or character device is written through; a block
/// device is refused.
fn special(shown: &str, path: &Path, meta: &fs::Metadata) -> Result<Sink, String> {
    if meta.file_type().is_block_device() {
        return Err(format!(
            "{shown}: is a block device; results are never written to a disk, give a file name"
        ));
    }
    nix::unistd::access(path, nix::unistd::AccessFlags::W_OK)
        .map_err(|e| format!("{shown}: cannot write to it ({e}); choose another path"))?;
    Ok(Sink::Special(path.to_path_buf()))
}

fn cannot_write(shown: &str, dir: &Path, e: &io::Error) -> String {
    format!(
        "{shown}: cannot write in {} ({e}); choose a writable directory",
        dir.display()
    )
}

/// Proves that files can be created in `dir` (permissions, a read-only
/// mount, no inodes left) by creating and removing a probe file.
pub fn probe_dir(dir: &Path) -> io::Result<()> {
    let probe = dir.join(format!(".arrayburn-probe-{}", std::process::id()));
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)?;
    fs::remove_file(&probe)
}

/// The directory a path names a file in (`.` for a bare name).
pub fn parent_dir(p: &Path) -> &Path {
    p.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Writes `bytes` to `path` whole under a temporary name in the same
/// directory and renames it over `path` (a regular or new file, its
/// symlinks already followed), so a reader (or a crash mid-write) never
/// sees half a file. The temporary file is removed when anything fails.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.arrayburn-tmp"));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Writes `bytes` to the file `path` names, by the rules of this module
/// (resolved as an output of `--out` and written as a last save): for the
/// files inside `--out DIR`, which are named only when they are written.
pub fn write_path(path: &Path, bytes: &[u8]) -> io::Result<()> {
    Output::resolve("--out", path, false)
        .map_err(io::Error::other)?
        .write(bytes, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlink_is_followed_and_stays_a_link() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("real.json");
        fs::write(&target, "old").unwrap();
        let link = d.path().join("link.json");
        std::os::unix::fs::symlink("real.json", &link).unwrap();
        let o = Output::resolve("--json", &link, true).unwrap();
        o.write(b"new", false).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        let names: Vec<_> = fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(names.len(), 2, "no temporary or probe file left");
    }

    #[test]
    fn a_dangling_symlink_creates_its_target() {
        let d = tempfile::tempdir().unwrap();
        let link = d.path().join("link.csv");
        std::os::unix::fs::symlink(d.path().join("made.csv"), &link).unwrap();
        let o = Output::resolve("--csv", &link, true).unwrap();
        o.write(b"x", false).unwrap();
        assert_eq!(fs::read_to_string(d.path().join("made.csv")).unwrap(), "x");
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[test]
    fn the_standard_streams_are_written_as_streams_never_as_paths() {
        // Resolved only: nothing is written to the system's nodes here.
        for (p, sink) in [
            ("/dev/stdout", Sink::Stdout),
            ("/proc/self/fd/1", Sink::Stdout),
            ("/dev/stderr", Sink::Stderr),
        ] {
            assert_eq!(
                Output::resolve("--json", Path::new(p), true).unwrap().sink,
                sink
            );
        }
    }

    #[test]
    fn dash_is_stdout_only_where_allowed() {
        assert!(
            Output::resolve("--json", Path::new("-"), true)
                .unwrap()
                .is_stdout()
        );
        let d = tempfile::tempdir().unwrap();
        let dash = d.path().join("-");
        let o = Output::resolve("-b", &dash, false).unwrap();
        assert_eq!(o.sink, Sink::File(dash));
    }

    #[test]
    fn the_same_file_twice_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let a = Output::resolve("--json", &d.path().join("x"), true).unwrap();
        let b = Output::resolve("--csv", &d.path().join("sub/../x"), true);
        // sub does not exist: its parent is refused first.
        assert!(b.is_err());
        let b = Output::resolve("--csv", &d.path().join(".").join("x"), true).unwrap();
        let err = refuse_duplicates([named(&a), named(&b)]).unwrap_err();
        assert!(err.contains("name the same file"), "{err}");
        let out1 = Output::resolve("--json", Path::new("-"), true).unwrap();
        let out2 = Output::resolve("--csv", Path::new("-"), true).unwrap();
        assert!(refuse_duplicates([named(&out1), named(&out2)]).is_err());
        assert!(refuse_duplicates([named(&a), named(&out1)]).is_ok());
    }

    #[test]
    fn a_directory_and_a_missing_directory_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let e = Output::resolve("--json", d.path(), true).unwrap_err();
        assert!(e.contains("is a directory"), "{e}");
        let e = Output::resolve("--json", &d.path().join("no/x.json"), true).unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
    }
}

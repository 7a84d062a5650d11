//! Where a result goes. Every output path (`--json`, `--csv`, the files of
//! `--out`, iozone's `--json` and `-b`, `list --json`, the burn-in's
//! checkpoints) is resolved and proven writable before the first read, and
//! written here:
//!
//! - a new path or a regular file is replaced atomically: written whole to
//!   a temporary file of a random name, created with O_EXCL|O_NOFOLLOW in
//!   the same directory, then renamed over the target, so a reader or a
//!   crash never sees half a file, and a link planted at the temporary or
//!   the final name is never followed (the rename replaces a link at the
//!   final name);
//! - the directory is opened once, when the path is resolved, and every
//!   file in it is made relative to that descriptor: a directory on the way
//!   that is swapped for a link afterwards is not followed either;
//! - a symlink the user names is followed (its target is written, the link
//!   stays), but only a link owned by this user or root: one another user
//!   owns would let them choose what root overwrites;
//! - the files arrayburn names itself (inside `--out DIR`, `charts/`, the
//!   checkpoints in `--state DIR`) are never reached through a link;
//! - a FIFO, a terminal or another character device is written through,
//!   once, at the end, and never renamed over (`--json /dev/stdout` must not
//!   turn the machine's /dev/stdout link into a file);
//! - `-` is standard output (fio's, hyperfine's and smartctl's convention);
//! - a block device is refused: an output never writes a disk.
//!
//! It must not decide what goes into a file, only how it gets there.

use std::ffi::OsString;
use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nix::fcntl::{OFlag, openat, renameat};
use nix::sys::stat::{Mode, mkdirat};
use nix::unistd::{UnlinkatFlags, unlinkat};

use crate::stop::StopFlag;

/// The most [`Dir::read`] reads: far above any checkpoint (a few MiB at
/// most), a bound on what a planted file can make a run hold.
pub const MOST_READ: u64 = 64 << 20;

/// A directory results are written into, held open from the moment it was
/// resolved: every file arrayburn makes in it is made through this
/// descriptor, never by path.
#[derive(Debug, Clone)]
pub struct Dir {
    fd: Arc<OwnedFd>,
    /// The path it was opened by, for messages.
    path: PathBuf,
}

impl PartialEq for Dir {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
    }
}

impl Eq for Dir {}

/// Why a link is not followed: owned by another user than this one and
/// root.
fn foreign_link(p: &Path, m: &fs::Metadata) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{} is a symbolic link owned by uid {}, not by you or root: another user may have planted it, so it is not followed; name the real path",
            p.display(),
            m.uid()
        ),
    )
}

/// Whether a link owned by `uid` may be followed by this process.
fn trusted(uid: u32) -> bool {
    uid == 0 || uid == nix::unistd::geteuid().as_raw()
}

impl Dir {
    /// Opens the existing directory `path` (the user's: its links are
    /// followed where they are this user's or root's).
    pub fn open(path: &Path) -> io::Result<Dir> {
        let real = follow(path)?;
        let fd = nix::fcntl::open(
            &real,
            OFlag::O_DIRECTORY | OFlag::O_RDONLY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(io::Error::from)?;
        Ok(Dir { fd: Arc::new(fd), path: path.to_path_buf() })
    }

    /// Opens `path`, making it first when only its parent exists (the
    /// user's `--out DIR`).
    pub fn create(path: &Path) -> io::Result<Dir> {
        match fs::symlink_metadata(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let name = path.file_name().unwrap_or(path.as_os_str());
                Dir::open(parent_dir(path))?.sub(&name.to_string_lossy())?;
            }
            _ => {}
        }
        Dir::open(path)
    }

    /// The path this directory was opened by.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The subdirectory `name` (one that arrayburn names: `charts`), made
    /// if missing and never reached through a link.
    pub fn sub(&self, name: &str) -> io::Result<Dir> {
        match mkdirat(self.fd.as_fd(), name, Mode::from_bits_truncate(0o777)) {
            Ok(()) | Err(nix::errno::Errno::EEXIST) => {}
            Err(e) => return Err(e.into()),
        }
        let fd = openat(
            self.fd.as_fd(),
            name,
            OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_RDONLY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            nix::errno::Errno::ELOOP | nix::errno::Errno::ENOTDIR => io::Error::other(format!(
                "{}: is not a directory of its own (a link or a file is in its place)",
                self.path.join(name).display()
            )),
            e => e.into(),
        })?;
        Ok(Dir { fd: Arc::new(fd), path: self.path.join(name) })
    }

    /// A new file of a random name in this directory (O_EXCL|O_NOFOLLOW,
    /// mode 0666 less the umask), and its name.
    fn temporary(&self, stem: &str) -> io::Result<(fs::File, OsString)> {
        let mut tries = 0;
        loop {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos()),
            );
            let name = OsString::from(format!(".{stem}.{:016x}.arrayburn-tmp", h.finish()));
            match openat(
                self.fd.as_fd(),
                name.as_os_str(),
                OFlag::O_CREAT
                    | OFlag::O_EXCL
                    | OFlag::O_NOFOLLOW
                    | OFlag::O_WRONLY
                    | OFlag::O_CLOEXEC,
                Mode::from_bits_truncate(0o666),
            ) {
                Ok(fd) => return Ok((fs::File::from(fd), name)),
                Err(nix::errno::Errno::EEXIST) if tries < 16 => tries += 1,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Writes `bytes` as the file `name` in this directory: whole, under a
    /// temporary name, synced, then renamed over `name` (a link there is
    /// replaced, not followed). The temporary file is removed when
    /// anything fails.
    pub fn write(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.write_os(std::ffi::OsStr::new(name), bytes)
    }

    fn write_os(&self, name: &std::ffi::OsStr, bytes: &[u8]) -> io::Result<()> {
        let (mut f, tmp) = self.temporary(&name.to_string_lossy())?;
        let result = f.write_all(bytes).and_then(|()| f.sync_all()).and_then(|()| {
            renameat(self.fd.as_fd(), tmp.as_os_str(), self.fd.as_fd(), name)
                .map_err(io::Error::from)
        });
        if result.is_err() {
            let _ = unlinkat(self.fd.as_fd(), tmp.as_os_str(), UnlinkatFlags::NoRemoveDir);
        }
        result
    }

    /// Makes the renames in this directory durable.
    pub fn sync(&self) -> io::Result<()> {
        nix::unistd::fsync(self.fd.as_fd()).map_err(io::Error::from)
    }

    /// Reads the file `name` that arrayburn wrote here (a checkpoint):
    /// never through a link, only a regular file this user or root owns
    /// (another user's file in a shared directory may have been planted to
    /// steer the run), and at most [`MOST_READ`] bytes. `Ok(None)` when
    /// there is none; every error names the file.
    pub fn read(&self, name: &str) -> io::Result<Option<Vec<u8>>> {
        let fd = match openat(
            self.fd.as_fd(),
            name,
            OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(nix::errno::Errno::ENOENT) => return Ok(None),
            Err(nix::errno::Errno::ELOOP) => {
                return Err(io::Error::other(format!(
                    "{}: is a symbolic link; arrayburn's own files are never read through one (move it away)",
                    self.path.join(name).display()
                )));
            }
            Err(e) => {
                return Err(io::Error::other(format!("{}: {e}", self.path.join(name).display())));
            }
        };
        let mut f = fs::File::from(fd);
        let m = f.metadata()?;
        if m.is_file() && m.len() > MOST_READ {
            return Err(io::Error::other(format!(
                "{}: is {} bytes, more than any file arrayburn writes here (move it away)",
                self.path.join(name).display(),
                m.len()
            )));
        }
        if !m.is_file() {
            return Err(io::Error::other(format!(
                "{}: is not a regular file (move it away)",
                self.path.join(name).display()
            )));
        }
        if !trusted(m.uid()) {
            return Err(io::Error::other(format!(
                "{}: is owned by uid {}, not by you or root: another user may have planted it (move it away)",
                self.path.join(name).display(),
                m.uid()
            )));
        }
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes)?;
        Ok(Some(bytes))
    }

    /// The file `name` here opened to append to (made if missing, mode 0644
    /// less the umask): never through a link, only a regular file this
    /// user or root owns (a run's log).
    pub fn append(&self, name: &str) -> io::Result<fs::File> {
        let flags = OFlag::O_CREAT
            | OFlag::O_APPEND
            | OFlag::O_WRONLY
            | OFlag::O_NOFOLLOW
            | OFlag::O_NONBLOCK
            | OFlag::O_CLOEXEC;
        let fd = openat(self.fd.as_fd(), name, flags, Mode::from_bits_truncate(0o644)).map_err(
            |e| match e {
                nix::errno::Errno::ELOOP => io::Error::other(format!(
                    "{}: is a symbolic link; arrayburn's own files are never written through one (move it away)",
                    self.path.join(name).display()
                )),
                e => e.into(),
            },
        )?;
        let f = fs::File::from(fd);
        let m = f.metadata()?;
        if !m.is_file() || !trusted(m.uid()) {
            return Err(io::Error::other(format!(
                "{}: is not a regular file of yours or root's (move it away)",
                self.path.join(name).display()
            )));
        }
        Ok(f)
    }

    /// Proves that files can be created here (permissions, a read-only
    /// mount, no inodes left) by creating and removing a temporary one.
    pub fn probe(&self) -> io::Result<()> {
        let (_, name) = self.temporary("probe")?;
        unlinkat(self.fd.as_fd(), name.as_os_str(), UnlinkatFlags::NoRemoveDir)
            .map_err(io::Error::from)
    }
}

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
    /// A regular or a new file: its name in its directory (held open),
    /// replaced atomically at every save.
    File { dir: Dir, name: OsString },
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
    /// Resolves `given` for `flag` and proves it writable (a temporary file
    /// is created and removed beside a file; a special file must grant
    /// write access). `-` means standard output where `dash_is_stdout`.
    /// Nothing is left behind. The error is one line naming the problem and
    /// the way out.
    pub fn resolve(flag: &str, given: &Path, dash_is_stdout: bool) -> Result<Output, String> {
        let shown = format!("{flag} {}", given.display());
        let sink = if dash_is_stdout && given == Path::new("-") {
            Sink::Stdout
        } else if let Some(sink) = standard_stream(given) {
            sink
        } else {
            let path = follow(given).map_err(|e| format!("{shown}: {e}"))?;
            match fs::metadata(&path) {
                // A special file, reached through its links as the kernel
                // reaches it (/dev/fd/63 of `>(jq .)` is a pipe, not a
                // path).
                Ok(meta) if !meta.is_file() && !meta.is_dir() => special(&shown, &path, &meta)?,
                _ => sink_for(&shown, path)?,
            }
        };
        Ok(Output { flag: flag.to_string(), given: given.to_path_buf(), sink })
    }

    /// Whether this output is standard output.
    pub fn is_stdout(&self) -> bool {
        self.sink == Sink::Stdout
    }

    /// The regular file it is (replaced at every save), where it is one.
    pub fn file(&self) -> Option<PathBuf> {
        match &self.sink {
            Sink::File { dir, name } => Some(dir.path().join(name)),
            _ => None,
        }
    }

    /// Whether it is a FIFO: its last save waits (at most [`SPECIAL_WAIT`])
    /// for a reader.
    pub fn is_fifo(&self) -> bool {
        use std::os::unix::fs::FileTypeExt;
        let Sink::Special(p) = &self.sink else { return false };
        fs::metadata(p).is_ok_and(|m| m.file_type().is_fifo())
    }

    /// Writes `bytes`. A file is replaced at every save; standard output and
    /// special files are written only by the `last` save (a FIFO's reader
    /// gets one document, not one per pass). A FIFO is waited for until it
    /// has a reader or a signal (`stop`) gives it up.
    pub fn write(&self, bytes: &[u8], last: bool, stop: &StopFlag) -> io::Result<()> {
        match &self.sink {
            Sink::File { dir, name } => dir.write_os(name, bytes),
            Sink::Special(p) if last => write_special(p, bytes, stop),
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
            Sink::File { dir, name } => identity_of(&dir.path.join(name)),
        }
    }

    /// Whether this output is the file `path` names (a checkpoint, say).
    pub fn is(&self, path: &Path) -> bool {
        self.identity() == identity_of(path)
    }
}

/// Writes a FIFO, terminal or character device through: opened without
/// following a link put in its place since it was resolved (the kernel's
/// own links, `/dev/fd/N` of a `>(...)`, excepted), and only if it is
/// still not a regular file. A FIFO without a reader is tried again every
/// 100 ms (opening it would block where no signal reaches) until one opens
/// it; a reader that stops reading is waited for the same way. Either
/// gives up at a stop or after [`SPECIAL_WAIT`] without the reader doing
/// anything, said as the error:
/// no output holds a finished run, and its disks, without end.
fn write_special(p: &Path, bytes: &[u8], stop: &StopFlag) -> io::Result<()> {
    let mut s = open_special(p, stop, Some(SPECIAL_WAIT), &|| {})?;
    s.write_all(bytes)?;
    s.flush()
}

/// Why a wait on a FIFO's reader ends: a stop, or `limit` passed since the
/// reader last did something (`since`); None while the wait goes on.
fn given_up(
    p: &Path,
    what: &str,
    (stop, since, limit): (&StopFlag, std::time::Instant, Option<std::time::Duration>),
) -> Option<io::Error> {
    let why = if stop.is_set() {
        "before the stop".to_string()
    } else if let Some(limit) = limit.filter(|l| since.elapsed() >= *l) {
        format!("within {} s", limit.as_secs())
    } else {
        return None;
    };
    Some(io::Error::other(format!("{}: {what} {why}; not written", p.display())))
}

/// `p` (a FIFO, terminal or character device) opened for writing without
/// blocking, as [`write_special`] opens it; a FIFO without a reader waited
/// for until one opens it, a stop, or `limit` (none: without end),
/// `waiting` called once if it has to be.
fn open_special(
    p: &Path,
    stop: &StopFlag,
    limit: Option<std::time::Duration>,
    waiting: &dyn Fn(),
) -> io::Result<Stream> {
    use std::os::unix::fs::OpenOptionsExt;
    let open = || {
        fs::OpenOptions::new()
            .write(true)
            .custom_flags(nix::libc::O_NONBLOCK | no_planted_link(p))
            .open(p)
    };
    let (since, mut said) = (std::time::Instant::now(), false);
    let f = loop {
        match open() {
            Err(e) if e.raw_os_error() == Some(nix::libc::ENXIO) => {
                if !std::mem::replace(&mut said, true) {
                    waiting();
                }
                if let Some(e) = given_up(p, "no reader opened it", (stop, since, limit)) {
                    return Err(e);
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            opened => break opened?,
        }
    };
    if f.metadata()?.is_file() {
        return Err(became_file(p));
    }
    Ok(Stream { f, p: p.to_path_buf(), stop: stop.clone() })
}

/// A FIFO, terminal or character device open for writing, written without
/// blocking: a reader that takes nothing is waited for 100 ms at a time, a
/// write given up at a stop or after [`SPECIAL_WAIT`] without the reader
/// taking a byte (a slow reader that keeps reading is never cut off).
#[derive(Debug)]
pub struct Stream {
    f: fs::File,
    p: PathBuf,
    stop: StopFlag,
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let since = std::time::Instant::now();
        loop {
            match self.f.write(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let waited = (&self.stop, since, Some(SPECIAL_WAIT));
                    if let Some(e) = given_up(&self.p, "its reader stopped taking it", waited) {
                        return Err(e);
                    }
                    let mut ready =
                        [nix::poll::PollFd::new(self.f.as_fd(), nix::poll::PollFlags::POLLOUT)];
                    let _ = nix::poll::poll(&mut ready, nix::poll::PollTimeout::from(100u8));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                written => return written,
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.f.flush()
    }
}

/// The flag that opens a FIFO, terminal or character device never through
/// a link put in its place since it was resolved (the kernel's own links,
/// under `/proc` and `/dev/fd/N` of a `>(...)`, excepted).
fn no_planted_link(p: &Path) -> i32 {
    let kernels = p.starts_with("/proc") || p.starts_with("/dev/fd");
    if kernels { 0 } else { nix::libc::O_NOFOLLOW }
}

fn became_file(p: &Path) -> io::Error {
    io::Error::other(format!(
        "{} has become a regular file since the run began; not written",
        p.display()
    ))
}

/// Opens a FIFO, terminal or character device for a stream of lines held
/// for a whole run (`watch --json`), as `write_special` opens one for a
/// document: never through a link put in its place since it was resolved,
/// and only if it is still not a regular file. A FIFO waits here for its
/// reader as long as it takes (`waiting` called once if it has to), but
/// never past a stop.
pub fn open_stream(p: &Path, stop: &StopFlag, waiting: &dyn Fn()) -> io::Result<Stream> {
    open_special(p, stop, None, waiting)
}

/// How long a FIFO, terminal or character device is waited for: for a
/// reader to open it, and for it to take more of the document.
pub const SPECIAL_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

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
/// would create), refusing a link that another user owns. The links of
/// `/proc/self/fd` and `/dev/fd` (a shell's `>(...)`) are the kernel's and
/// are not followed here: the kernel reaches the pipe they stand for.
fn follow(p: &Path) -> io::Result<PathBuf> {
    if p.starts_with("/proc") || p.starts_with("/dev/fd") {
        return Ok(p.to_path_buf());
    }
    // Every component in turn, so that a link on the way (a directory
    // another user replaced by a link) is judged as the last one is.
    let mut rest: Vec<OsString> = p.iter().map(|c| c.to_os_string()).collect();
    rest.reverse();
    let mut at = PathBuf::new();
    let mut links = 0;
    while let Some(c) = rest.pop() {
        let next = at.join(&c);
        match fs::symlink_metadata(&next) {
            Ok(m) if m.file_type().is_symlink() => {
                links += 1;
                if links > 40 {
                    return Err(io::Error::from_raw_os_error(nix::libc::ELOOP));
                }
                if !trusted(m.uid()) {
                    return Err(foreign_link(&next, &m));
                }
                let target = fs::read_link(&next)?;
                if target.is_absolute() {
                    at = PathBuf::new();
                }
                rest.extend(target.iter().rev().map(|c| c.to_os_string()));
            }
            _ => at = next,
        }
    }
    Ok(at)
}

/// How the resolved `path` is written, refusing what must not be.
fn sink_for(shown: &str, path: PathBuf) -> Result<Sink, String> {
    let dir = parent_dir(&path);
    if let Ok(meta) = fs::metadata(&path)
        && meta.is_dir()
    {
        return Err(format!("{shown}: is a directory; give a file name inside it"));
    }
    if !dir.is_dir() {
        return Err(format!(
            "{shown}: directory {} does not exist; create it or choose another path",
            dir.display()
        ));
    }
    let opened = Dir::open(dir)
        .and_then(|d| d.probe().map(|()| d))
        .map_err(|e| cannot_write(shown, dir, &e))?;
    let name = path
        .file_name()
        .map(|n| n.to_os_string())
        .ok_or_else(|| format!("{shown}: names no file; give a file name"))?;
    if name.as_bytes() == b".." || name.as_bytes() == b"." {
        return Err(format!("{shown}: names no file; give a file name"));
    }
    Ok(Sink::File { dir: opened, name })
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
    format!("{shown}: cannot write in {} ({e}); choose a writable directory", dir.display())
}

/// The directory a path names a file in (`.` for a bare name).
pub fn parent_dir(p: &Path) -> &Path {
    p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// The `--out` bundle's file names, the one table: the check's, the
/// burn-in's and the fleet's bundles name their files from it, and `plan`
/// refuses another output that is one of them.
pub mod bundle {
    /// The text report.
    pub const TEXT: &str = "report.txt";
    /// The JSON result.
    pub const JSON: &str = "report.json";
    /// The check's surface profiles.
    pub const CSV: &str = "surface.csv";
    /// The run's page.
    pub const PAGE: &str = "report.html";
    /// The report as Markdown.
    pub const MARKDOWN: &str = "report.md";
    /// The charts' directory (SVG and PNG of each).
    pub const CHARTS: &str = "charts";
    /// The run's log.
    pub const LOG: &str = "run.log";
    /// Every file a bundle may hold.
    pub const FILES: [&str; 6] = [TEXT, JSON, CSV, PAGE, MARKDOWN, LOG];
}

/// Where a run's result goes.
#[derive(Clone, Copy, Default)]
pub struct Outputs<'a> {
    pub json: Option<&'a Output>,
    pub csv: Option<&'a Output>,
    pub out: Option<&'a Path>,
    /// `--metrics`: Prometheus metrics for node_exporter's textfile
    /// collector.
    pub metrics: Option<&'a Output>,
    /// `--ocp-diag`: the OCP Test & Validation diag stream (JSON lines).
    pub ocp: Option<&'a Output>,
}

impl Outputs<'_> {
    /// Whether `--json -`, `--csv -` or `--ocp-diag -` has standard output (the text
    /// report then goes to standard error).
    pub fn stdout_taken(&self) -> bool {
        [self.json, self.csv, self.ocp].iter().any(|o| o.is_some_and(|o| o.is_stdout()))
    }
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
        o.write(b"new", false, &StopFlag::default()).unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        let names: Vec<_> = fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(names.len(), 2, "no temporary or probe file left");
    }

    #[test]
    fn a_stream_opens_its_fifo_and_never_a_link_or_file_put_in_its_place() {
        use std::os::unix::fs::OpenOptionsExt;
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("lines");
        nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o600)).unwrap();
        let o = Output::resolve("--json", &fifo, true).unwrap();
        let Sink::Special(p) = o.sink else { panic!("a FIFO is a special sink") };
        // A reader first (a non-blocking open for reading returns at once).
        let reader = fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        let stop = StopFlag::default();
        let mut w = open_stream(&p, &stop, &|| panic!("its reader was there")).unwrap();
        w.write_all(b"{}\n").unwrap();
        drop(w);
        let mut got = String::new();
        (&reader).read_to_string(&mut got).unwrap();
        assert_eq!(got, "{}\n");
        // Swapped for a link to a file after it was resolved: not followed.
        let victim = d.path().join("victim");
        fs::write(&victim, "kept").unwrap();
        fs::remove_file(&fifo).unwrap();
        std::os::unix::fs::symlink(&victim, &fifo).unwrap();
        let e = open_stream(&p, &stop, &|| {}).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(nix::libc::ELOOP), "{e}");
        // Swapped for a regular file: refused, nothing written.
        fs::remove_file(&fifo).unwrap();
        fs::write(&fifo, "").unwrap();
        let e = open_stream(&p, &stop, &|| {}).unwrap_err().to_string();
        assert!(e.contains("has become a regular file since the run began"), "{e}");
        assert_eq!(fs::read_to_string(&victim).unwrap(), "kept");
        assert_eq!(fs::read_to_string(&fifo).unwrap(), "");
    }

    #[test]
    fn a_stream_waits_for_its_reader_and_for_a_reader_that_stops_taking_lines_only_until_a_stop() {
        use std::os::unix::fs::OpenOptionsExt;
        use std::sync::mpsc;
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("lines");
        nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o600)).unwrap();
        let deadline = std::time::Duration::from_secs(60);
        // No reader: it waits (said once), until the stop.
        let (stop, (said, heard)) = (StopFlag::default(), mpsc::channel());
        let opening = std::thread::spawn({
            let (fifo, stop) = (fifo.clone(), stop.clone());
            move || open_stream(&fifo, &stop, &|| said.send(()).unwrap()).err()
        });
        heard.recv_timeout(deadline).expect("it said it waits for a reader");
        stop.stop();
        let e = opening.join().unwrap().expect("no stream without a reader").to_string();
        assert!(e.ends_with("no reader opened it before the stop; not written"), "{e}");
        assert!(heard.try_recv().is_err(), "said once");
        // A reader that takes nothing: the pipe fills; at a stop the write
        // gives up instead of holding the run.
        let _reader = fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        let stop = StopFlag::default();
        let mut w = open_stream(&fifo, &stop, &|| panic!("its reader was there")).unwrap();
        let line = [b'x'; 4096];
        while w.f.write(&line).is_ok() {}
        let (done, ended) = mpsc::channel();
        let writing = std::thread::spawn(move || {
            let r = w.write_all(&line);
            done.send(()).unwrap();
            r
        });
        // Held while the reader might still take it.
        assert!(ended.recv_timeout(std::time::Duration::from_millis(300)).is_err());
        stop.stop();
        ended.recv_timeout(deadline).expect("the write ended at the stop");
        let e = writing.join().unwrap().unwrap_err().to_string();
        assert!(e.ends_with("its reader stopped taking it before the stop; not written"), "{e}");
    }

    #[test]
    fn a_dangling_symlink_creates_its_target() {
        let d = tempfile::tempdir().unwrap();
        let link = d.path().join("link.csv");
        std::os::unix::fs::symlink(d.path().join("made.csv"), &link).unwrap();
        let o = Output::resolve("--csv", &link, true).unwrap();
        o.write(b"x", false, &StopFlag::default()).unwrap();
        assert_eq!(fs::read_to_string(d.path().join("made.csv")).unwrap(), "x");
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    }

    #[test]
    fn a_link_planted_where_arrayburn_names_a_file_is_replaced_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        let out = Dir::create(&d.path().join("out")).unwrap();
        std::os::unix::fs::symlink(&victim, d.path().join("out/report.txt")).unwrap();
        std::os::unix::fs::symlink(&victim, d.path().join("out/charts")).unwrap();
        out.write("report.txt", b"report").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(fs::read_to_string(d.path().join("out/report.txt")).unwrap(), "report");
        let e = out.sub("charts").unwrap_err().to_string();
        assert!(e.contains("is not a directory of its own"), "{e}");
        std::os::unix::fs::symlink(&victim, d.path().join("out/burnin-x.json")).unwrap();
        let e = out.read("burnin-x.json").unwrap_err().to_string();
        assert!(e.contains("is a symbolic link"), "{e}");
        assert_eq!(out.read("none.json").unwrap(), None);
    }

    #[test]
    fn the_standard_streams_are_written_as_streams_never_as_paths() {
        // Resolved only: nothing is written to the system's nodes here.
        for (p, sink) in [
            ("/dev/stdout", Sink::Stdout),
            ("/proc/self/fd/1", Sink::Stdout),
            ("/dev/stderr", Sink::Stderr),
        ] {
            assert_eq!(Output::resolve("--json", Path::new(p), true).unwrap().sink, sink);
        }
    }

    #[test]
    fn dash_is_stdout_only_where_allowed() {
        assert!(Output::resolve("--json", Path::new("-"), true).unwrap().is_stdout());
        let d = tempfile::tempdir().unwrap();
        let dash = d.path().join("-");
        let o = Output::resolve("-b", &dash, false).unwrap();
        assert!(matches!(o.sink, Sink::File { ref name, .. } if name == "-"));
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

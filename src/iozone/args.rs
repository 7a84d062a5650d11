//! iozone's command line, parsed by iozone's rules (getopt clusters such as
//! `-az` and `-i0`, `-+n`, size suffixes with a bare number meaning kB,
//! repeatable `-i -s -r -t`, `-F` taking one name per process), into a
//! [`Config`]. Every refusal is one line naming the problem and the way out.

use std::path::PathBuf;

/// Largest record iozone accepts (its MAXBUFFERSIZE).
pub const MAX_RECORD: u64 = 16 << 20;
/// iozone's pattern byte for 3.487 ('m'), written in the first 8 bytes of
/// every 4 KiB page of the buffer (and `-V 0`'s byte).
pub const PATTERN: u8 = 0x6d;

/// What an iozone command line asks for.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// `-a`: auto mode.
    pub auto: bool,
    /// `-A`: the obsolete six-column auto mode (as `-az -i0 -i1`).
    pub auto2: bool,
    /// `-z`: no crossover to 64 kB records on large files.
    pub no_crossover: bool,
    /// `-n`, `-g`: auto file-size range in kB.
    pub min_file_kb: Option<u64>,
    pub max_file_kb: Option<u64>,
    /// `-y`, `-q`: auto record-size range in bytes.
    pub min_rec: Option<u64>,
    pub max_rec: Option<u64>,
    /// `-i`: the tests selected, in the order given (empty: all).
    pub tests: Vec<u8>,
    /// `-r`: record sizes in bytes, as given.
    pub records: Vec<u64>,
    /// `-s`: file sizes in kB, as given.
    pub sizes_kb: Vec<u64>,
    /// `-f`: the test file of single and auto mode.
    pub file: Option<PathBuf>,
    /// `-R` (or `-b`): the Excel-style report.
    pub excel: bool,
    /// `-b`: also write the report as a BIFF2 spreadsheet here.
    pub biff: Option<PathBuf>,
    /// `-I`: O_DIRECT.
    pub direct: bool,
    /// `-t`: process counts, as given.
    pub counts: Vec<usize>,
    /// `-l`, `-u`: process-count range.
    pub lower: Option<usize>,
    pub upper: Option<usize>,
    /// `-T`: threads (the wording; arrayburn always runs threads).
    pub threads: bool,
    /// `-F`: one file per process.
    pub files: Vec<PathBuf>,
    /// `-c`: close() inside the timing.
    pub close_timed: bool,
    /// `-e`: fsync() inside the timing.
    pub fsync_timed: bool,
    /// `-o`: O_SYNC writes.
    pub osync: bool,
    /// `-O`: operations per second.
    pub ops: bool,
    /// `-N`: microseconds per operation.
    pub usec: bool,
    /// `-m`: each I/O from the next slice of a 16 MiB work area.
    pub multi_buffer: bool,
    /// `-w`: keep the test files.
    pub keep: bool,
    /// `-+n`: no re-tests.
    pub no_retest: bool,
    /// `-C`: each child's numbers after each block.
    pub per_child: bool,
    /// `-p`: evict the CPU cache before each I/O.
    pub purge: bool,
    /// `-x`: no stonewalling.
    pub no_stonewall: bool,
    /// `-E`: also pwrite/pread in single and auto mode.
    pub pwrite_tests: bool,
    /// `-j`: stride in records.
    pub stride: u64,
    /// `-S`, `-L`: processor cache size (kB) and line size (bytes), as
    /// the header shows them and `-p` purges.
    pub cache_kb: u64,
    pub cache_line: u64,
    /// `-V`: the byte every byte of every record is, each read checked
    /// byte by byte (iozone's verify mode); None: iozone's light pattern.
    pub verify_byte: Option<u8>,
    /// `-h`: help only.
    pub help: bool,
    /// `--json FILE` (arrayburn's): every number, machine-readable.
    pub json: Option<PathBuf>,
    /// `--pause SECONDS` (arrayburn's): the pause between throughput phases
    /// (iozone: 2 s after a sync).
    pub pause_s: f64,
    /// `--huge-pages` (arrayburn's): records moved through 2 MiB pages
    /// instead of iozone's 4 KiB ones (faster than iozone with -I; never
    /// the default, announced in the header and the JSON).
    pub huge_pages: bool,
    /// Splash lines of the options, in command-line order.
    pub splash: Vec<String>,
    /// The command line as typed, for the header.
    pub command_line: Vec<String>,
}

impl Config {
    /// Throughput mode: `-t`, `-l` or `-u` given.
    pub fn throughput(&self) -> bool {
        !self.counts.is_empty() || self.lower.is_some() || self.upper.is_some()
    }

    /// Auto mode: `-a`, `-A`, or several `-s` or `-r`.
    pub fn auto_mode(&self) -> bool {
        self.auto || self.auto2 || self.sizes_kb.len() > 1 || self.records.len() > 1
    }

    /// The process counts to run, in order.
    pub fn process_counts(&self) -> Vec<usize> {
        if !self.counts.is_empty() {
            return self.counts.clone();
        }
        let (lo, hi) = match (self.lower, self.upper) {
            (Some(l), Some(u)) => (l, u),
            (Some(l), None) => (l, l),
            (None, Some(u)) => (1, u),
            (None, None) => return Vec::new(),
        };
        (lo..=hi).collect()
    }

    /// The largest process count (how many `-F` names are needed).
    pub fn max_count(&self) -> usize {
        self.process_counts().into_iter().max().unwrap_or(0)
    }

    /// The file size (kB) and record size (bytes) outside auto mode: the
    /// first `-s` and `-r`, iozone's 512 kB and 4 kB without them.
    pub fn size_and_record(&self) -> (u64, u64) {
        (
            self.sizes_kb.first().copied().unwrap_or(512),
            self.records.first().copied().unwrap_or(4096),
        )
    }

    /// Whether test `n` runs (no `-i`: all).
    pub fn selected(&self, n: u8) -> bool {
        self.tests.is_empty() || self.tests.contains(&n)
    }
}

/// A bad command line, in one line.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ArgError(pub String);

fn bad<T>(m: impl Into<String>) -> Result<T, ArgError> {
    Err(ArgError(m.into()))
}

/// The leading number of `s` as C's `atoll` reads it (`1.5g` is 1).
fn leading_number(flag: char, s: &str) -> Result<(u64, &str), ArgError> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return bad(format!(
            "-{flag} {s}: not a size; give a number with an optional k, m or g (e.g. 64k, 16m, 4g)"
        ));
    }
    let n = s[..digits].parse::<u64>().or_else(|_| bad(format!("-{flag} {s}: too large")))?;
    Ok((n, &s[digits..]))
}

/// The suffix multiplier: `k` 1, `m` 1024, `g` 1024² (of kB); the rest of
/// the text after the number must be a suffix or nothing (iozone ignores
/// what it does not understand; arrayburn says so).
fn suffix(flag: char, whole: &str, rest: &str) -> Result<u64, ArgError> {
    let last = rest.chars().last().map(|c| c.to_ascii_lowercase());
    let m = match last {
        None => 1,
        Some('k') => 1,
        Some('m') => 1 << 10,
        Some('g') => 1 << 20,
        Some(_) => {
            return bad(format!(
                "-{flag} {whole}: unknown size suffix; use k, m or g (a bare number means kB)"
            ));
        }
    };
    // "1.5g" is 1 g for iozone (atoll); anything else between is an error.
    let between = &rest[..rest.len() - usize::from(last.is_some())];
    if !between.is_empty() && !between.starts_with('.') {
        return bad(format!(
            "-{flag} {whole}: not a size; give a number with an optional k, m or g"
        ));
    }
    Ok(m)
}

/// A file size (`-s -n -g`) in kB.
pub fn size_kb(flag: char, s: &str) -> Result<u64, ArgError> {
    let (n, rest) = leading_number(flag, s)?;
    Ok(n.saturating_mul(suffix(flag, s, rest)?))
}

/// A record size (`-r -y -q`) in bytes.
pub fn record_bytes(flag: char, s: &str) -> Result<u64, ArgError> {
    let (n, rest) = leading_number(flag, s)?;
    Ok(n.saturating_mul(suffix(flag, s, rest)?).saturating_mul(1024))
}

fn count(flag: char, s: &str) -> Result<usize, ArgError> {
    s.trim()
        .parse::<i64>()
        .or_else(|_| bad(format!("-{flag} {s}: not a number of processes")))
        .map(|n| n.clamp(0, 1024) as usize)
}

/// How an iozone flag takes effect.
#[derive(Clone, Copy)]
enum Takes {
    /// A switch: what it sets, and the splash line iozone prints for it.
    Switch(fn(&mut Config), Option<&'static str>),
    /// A value (the rest of the word, or the next word), and what it sets.
    Value(fn(&mut Config, char, &str) -> Result<(), ArgError>),
    /// `-F`: one file name per process, as many as the largest count.
    Files,
}
use Takes::{Files, Switch, Value};

/// iozone's flags that arrayburn runs, as data (ripgrep's `flags/defs.rs`
/// is the model): [`parse`] is a loop over this table.
const FLAGS: &[(char, Takes)] = &[
    ('a', Switch(|c| c.auto = true, Some("Auto Mode"))),
    (
        'A',
        Switch(
            |c| (c.auto2, c.no_crossover) = (true, true),
            Some("Auto Mode 2. This option is obsolete. Use -az -i0 -i1 "),
        ),
    ),
    ('z', Switch(|c| c.no_crossover = true, Some("Cross over of record size disabled."))),
    ('R', Switch(|c| c.excel = true, Some("Excel chart generation enabled"))),
    ('I', Switch(|c| c.direct = true, Some("O_DIRECT feature enabled"))),
    ('T', Switch(|c| c.threads = true, None)),
    ('c', Switch(|c| c.close_timed = true, Some("Include close in write timing"))),
    ('e', Switch(|c| c.fsync_timed = true, Some("Include fsync in write timing"))),
    ('o', Switch(|c| c.osync = true, Some("SYNC Mode. "))),
    ('O', Switch(|c| c.ops = true, Some("OPS Mode. Output is in operations per second."))),
    (
        'N',
        Switch(
            |c| c.usec = true,
            Some("Microseconds/op Mode. Output is in microseconds per operation."),
        ),
    ),
    ('m', Switch(|c| c.multi_buffer = true, Some("Multi_buffer. Work area 16777216 bytes"))),
    ('w', Switch(|c| c.keep = true, Some("Setting no_unlink"))),
    ('C', Switch(|c| c.per_child = true, None)),
    ('p', Switch(|c| c.purge = true, Some("Purge Mode On"))),
    ('x', Switch(|c| c.no_stonewall = true, Some("Stonewall disabled"))),
    ('M', Switch(machine, None)),
    ('h', Switch(|c| c.help = true, None)),
    ('E', Switch(|c| c.pwrite_tests = true, None)),
    ('n', Value(|c, f, v| file_range(c, f, v, "minimum"))),
    ('g', Value(|c, f, v| file_range(c, f, v, "maximum"))),
    ('y', Value(|c, f, v| record_range(c, f, v, "Minimum"))),
    ('q', Value(|c, f, v| record_range(c, f, v, "Maximum"))),
    ('r', Value(record)),
    ('s', Value(file_size)),
    ('i', Value(test)),
    ('f', Value(|c, _, v| set(&mut c.file, Some(PathBuf::from(v))))),
    (
        'b',
        Value(|c, _, v| {
            c.excel = true;
            set(&mut c.biff, Some(PathBuf::from(v)))
        }),
    ),
    (
        't',
        Value(|c, f, v| {
            let n = count(f, v)?;
            c.counts.push(if n == 0 { 8 } else { n });
            Ok(())
        }),
    ),
    ('l', Value(|c, f, v| set(&mut c.lower, Some(count(f, v)?.max(1))))),
    ('u', Value(|c, f, v| set(&mut c.upper, Some(count(f, v)?.max(1))))),
    (
        'j',
        Value(|c, f, v| set(&mut c.stride, positive(f, v, "give the stride in records, e.g. 17")?)),
    ),
    ('S', Value(|c, f, v| set(&mut c.cache_kb, positive(f, v, "give a positive number")?))),
    ('L', Value(|c, f, v| set(&mut c.cache_line, positive(f, v, "give a positive number")?))),
    ('V', Value(verify_mode)),
    ('+', Value(extended)),
    ('F', Files),
];

/// Stores a flag's value.
fn set<T>(field: &mut T, value: T) -> Result<(), ArgError> {
    *field = value;
    Ok(())
}

/// iozone options arrayburn does not implement (mmap, async I/O, telemetry…).
const NOT_SUPPORTED: &str = "BDGHkKJXYQUWZPdv";

/// arrayburn's own long options: name, whether it takes a value, what it
/// sets.
type Long = (&'static str, bool, fn(&mut Config, &str) -> Result<(), ArgError>);
const LONG: &[Long] = &[
    ("help", false, |c, _| set(&mut c.help, true)),
    ("huge-pages", false, |c, _| set(&mut c.huge_pages, true)),
    ("json", true, |c, v| set(&mut c.json, Some(PathBuf::from(v)))),
    ("pause", true, |c, v| {
        c.pause_s = v
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .ok_or_else(|| ArgError(format!("--pause {v}: give seconds, e.g. 2 or 0.5")))?;
        Ok(())
    }),
];

/// Parses iozone's arguments (without the program name). `program` is
/// what the header shows as `argv[0]`.
pub fn parse(program: &str, args: &[String]) -> Result<Config, ArgError> {
    let mut c =
        Config { stride: 17, cache_kb: 1024, cache_line: 32, pause_s: 2.0, ..Config::default() };
    c.command_line = std::iter::once(program.to_string()).chain(args.iter().cloned()).collect();
    if args.is_empty() {
        return bad(
            "no arguments: give iozone's options, e.g. `arrayburn iozone -a` or `-s 1g -r 1m -i 0 -i 1 -I` (-h lists them)",
        );
    }
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if let Some(long) = word.strip_prefix("--") {
            let Some(&(_, takes_value, set)) = LONG.iter().find(|(n, _, _)| *n == long) else {
                return bad(format!(
                    "--{long}: unknown option; arrayburn iozone adds only --json FILE, --pause SECONDS and --huge-pages to iozone's flags"
                ));
            };
            let value = match takes_value {
                true => words.next().ok_or_else(|| {
                    ArgError(format!("--{long} needs a value after it (-h lists the options)"))
                })?,
                false => "",
            };
            set(&mut c, value)?;
            continue;
        }
        let Some(cluster) = word.strip_prefix('-').filter(|w| !w.is_empty()) else {
            return bad(format!(
                "{word}: unexpected argument; iozone's options start with - (file names go after -f or -F)"
            ));
        };
        for (at, flag) in cluster.char_indices() {
            let rest = &cluster[at + 1..];
            match takes(flag)? {
                Switch(set, splash) => {
                    set(&mut c);
                    c.splash.extend(splash.map(String::from));
                }
                Value(set) => {
                    let value = match rest {
                        "" => words.next().ok_or_else(|| {
                            ArgError(format!(
                                "-{flag} needs a value after it (e.g. -{flag} 4 or -{flag}4; -h lists the options)"
                            ))
                        })?,
                        _ => rest,
                    };
                    set(&mut c, flag, value)?;
                    break;
                }
                Files => {
                    c.files = file_names(&c, rest, &mut words)?;
                    break;
                }
            }
        }
    }
    check(&mut c)?;
    Ok(c)
}

/// How `flag` is taken, or why it is refused.
fn takes(flag: char) -> Result<Takes, ArgError> {
    if NOT_SUPPORTED.contains(flag) {
        return bad(format!(
            "-{flag}: an iozone option arrayburn iozone does not implement (mmap, async I/O and telemetry are out of scope); see README's iozone section"
        ));
    }
    FLAGS.iter().find(|(f, _)| *f == flag).map(|(_, t)| *t).ok_or_else(|| {
        ArgError(format!("-{flag}: unknown option (-h lists iozone's options that arrayburn runs)"))
    })
}

/// `-F`'s names: the rest of its word, then words until there is one per
/// process of the largest count.
fn file_names<'a>(
    c: &Config,
    rest: &str,
    words: &mut impl Iterator<Item = &'a String>,
) -> Result<Vec<PathBuf>, ArgError> {
    let n = c.max_count();
    if n == 0 {
        return bad("-F must come after -t N (or -l/-u): it takes one file name per process");
    }
    let mut names: Vec<PathBuf> = Vec::new();
    if !rest.is_empty() {
        names.push(rest.into());
    }
    while names.len() < n {
        let Some(name) = words.next() else {
            return bad(format!("-F needs {n} file names (one per process), got {}", names.len()));
        };
        names.push(name.into());
    }
    Ok(names)
}

/// `-M`: the machine's uname in the splash lines.
fn machine(c: &mut Config) {
    let uname = uname_line().unwrap_or_default();
    c.splash.push(String::new());
    c.splash.push(format!("Machine = {uname}"));
}

/// `uname -a`'s words: system, node, release, version, machine.
fn uname_line() -> Option<String> {
    let u = nix::sys::utsname::uname().ok()?;
    let words = [u.sysname(), u.nodename(), u.release(), u.version(), u.machine()];
    Some(words.map(|s| s.to_string_lossy().into_owned()).join(" "))
}

/// `-n` / `-g`: the auto-mode file-size range (at least 4 kB).
fn file_range(c: &mut Config, flag: char, v: &str, which: &str) -> Result<(), ArgError> {
    let kb = size_kb(flag, v)?.max(4);
    *if flag == 'n' { &mut c.min_file_kb } else { &mut c.max_file_kb } = Some(kb);
    c.splash.push(format!("Using {which} file size of {kb} kilobytes."));
    Ok(())
}

/// A record size no larger than iozone's buffer.
fn record_size(flag: char, v: &str) -> Result<u64, ArgError> {
    let b = record_bytes(flag, v)?;
    if b > MAX_RECORD {
        return bad(format!(
            "-{flag} {v}: maximum record size {} kB is greater than maximum buffer size 16384 kB",
            b / 1024
        ));
    }
    Ok(b)
}

/// `-y` / `-q`: the auto-mode record-size range (at least 4 kB).
fn record_range(c: &mut Config, flag: char, v: &str, which: &str) -> Result<(), ArgError> {
    let b = record_size(flag, v)?.max(4096);
    *if flag == 'y' { &mut c.min_rec } else { &mut c.max_rec } = Some(b);
    c.splash.push(format!("Using {which} Record Size {} kB", b / 1024));
    Ok(())
}

/// `-r`: a record size (0 is iozone's 4 kB).
fn record(c: &mut Config, flag: char, v: &str) -> Result<(), ArgError> {
    let b = zero_is(record_size(flag, v)?, 4096);
    c.records.push(b);
    c.splash.push(format!("Record Size {} kB", b / 1024));
    Ok(())
}

/// `v`, or iozone's default for it where it is 0.
fn zero_is(v: u64, default: u64) -> u64 {
    if v == 0 { default } else { v }
}

/// `-s`: a file size (0 is iozone's 512 kB).
fn file_size(c: &mut Config, flag: char, v: &str) -> Result<(), ArgError> {
    let kb = zero_is(size_kb(flag, v)?, 512);
    c.sizes_kb.push(kb);
    c.splash.push(format!("File size set to {kb} kB"));
    Ok(())
}

/// `-i`: a test number.
fn test(c: &mut Config, _: char, v: &str) -> Result<(), ArgError> {
    let n: u32 = v
        .trim()
        .parse()
        .or_else(|_| bad(format!("-i {v}: give a test number 0 to 10 (-h lists them)")))?;
    if n > 10 {
        return bad(format!(
            "-i {v}: test {n} does not exist on Linux (pwritev/preadv, 11 and 12, are not built there); give 0 to 10"
        ));
    }
    c.tests.push(n as u8);
    Ok(())
}

/// A positive number, or `why` in the refusal.
fn positive(flag: char, v: &str, why: &str) -> Result<u64, ArgError> {
    v.trim()
        .parse::<u64>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| ArgError(format!("-{flag} {v}: {why}")))
}

/// `-V N`: verify mode. iozone takes `(char)atoi(N)`: a decimal number,
/// its low byte the pattern (0 is the default pattern byte); every byte
/// of every record is written as it and checked on every read. Text that
/// is not a decimal number (which iozone would silently read as 0) is
/// refused.
fn verify_mode(c: &mut Config, flag: char, v: &str) -> Result<(), ArgError> {
    let t = v.trim_start();
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return bad(format!(
            "-{flag} {v}: give the pattern byte as a decimal number, e.g. -V 165 for 0xa5 (0 is iozone's default pattern)"
        ));
    }
    // atoi's int, truncated to iozone's unsigned char.
    let n: i64 = t
        .parse()
        .or_else(|_| bad(format!("-{flag} {v}: too large; give the pattern byte, 0 to 255")))?;
    let byte = match n as u8 {
        0 => PATTERN,
        b => b,
    };
    c.verify_byte = Some(byte);
    c.splash.push(format!("Verify Mode. Pattern {:x}", u32::from_ne_bytes([byte; 4])));
    c.splash.push("Performance measurements are invalid in this mode.".into());
    Ok(())
}

/// `-+X`: iozone's extended options (only `-+n`).
fn extended(c: &mut Config, _: char, v: &str) -> Result<(), ArgError> {
    if v != "n" {
        return bad(format!(
            "-+{v}: an iozone extended option arrayburn iozone does not implement (only -+n)"
        ));
    }
    c.no_retest = true;
    c.splash.push("No retest option selected".into());
    Ok(())
}

/// iozone's exclusions, and arrayburn's own sanity checks.
fn check(c: &mut Config) -> Result<(), ArgError> {
    let auto_flags = c.auto
        || c.auto2
        || c.min_file_kb.is_some()
        || c.max_file_kb.is_some()
        || c.min_rec.is_some()
        || c.max_rec.is_some();
    if c.throughput() && auto_flags {
        return bad(
            "Can not mix throughput mode and auto-mode flags (-t/-l/-u with -a/-A/-n/-g/-y/-q): run them separately",
        );
    }
    if c.throughput() && c.file.is_some() {
        return bad(
            "You must use -F when using multiple threads or processes (-f names the file of single and auto mode)",
        );
    }
    if c.auto_mode() && !c.files.is_empty() {
        return bad("You must use -f when using auto mode (-F is for throughput mode)");
    }
    if c.throughput() && c.usec {
        return bad("Microsecond mode (-N) not supported in throughput mode");
    }
    if c.ops && c.usec {
        return bad("-O and -N both choose the unit: give one");
    }
    if let (Some(l), Some(u)) = (c.lower, c.upper)
        && l > u
    {
        return bad(format!("-l {l} is above -u {u}: the range of process counts is -l to -u"));
    }
    if let (Some(lo), Some(hi)) = (c.min_file_kb, c.max_file_kb)
        && lo > hi
    {
        return bad(format!("-n {lo} kB is above -g {hi} kB: no file size to test"));
    }
    if let (Some(lo), Some(hi)) = (c.min_rec, c.max_rec)
        && lo > hi
    {
        return bad(format!(
            "-y {} kB is above -q {} kB: no record size to test",
            lo / 1024,
            hi / 1024
        ));
    }
    let (kb, rec) = c.size_and_record();
    if !c.auto_mode() && rec > kb * 1024 {
        return bad(format!(
            "-r {} kB is larger than the file (-s {kb} kB): no record fits; use a smaller -r or a larger -s",
            rec / 1024
        ));
    }
    if c.throughput() && !c.files.is_empty() && c.files.len() < c.max_count() {
        return bad(format!("-F needs {} file names (one per process)", c.max_count()));
    }
    if c.throughput() && c.files.len() > c.max_count() {
        c.files.truncate(c.max_count());
    }
    if c.auto2 {
        c.tests = vec![0, 1];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Config, ArgError> {
        let args: Vec<String> = s.split_whitespace().map(String::from).collect();
        parse("iozone", &args)
    }

    #[test]
    fn sizes_follow_iozones_suffix_rules() {
        assert_eq!(size_kb('s', "512").unwrap(), 512);
        assert_eq!(size_kb('s', "16m").unwrap(), 16 * 1024);
        assert_eq!(size_kb('s', "4G").unwrap(), 4 << 20);
        assert_eq!(size_kb('s', "1.5g").unwrap(), 1 << 20, "atoll reads 1");
        assert_eq!(record_bytes('r', "64").unwrap(), 64 << 10);
        assert_eq!(record_bytes('r', "64k").unwrap(), 64 << 10);
        assert_eq!(record_bytes('r', "1m").unwrap(), 1 << 20);
        assert!(size_kb('s', "big").is_err());
        assert!(size_kb('s', "16x").is_err());
    }

    #[test]
    fn clusters_attached_values_and_repeats() {
        let c = p("-az -i0 -i 1 -Rb out.xls -g 64m").unwrap();
        assert!(c.auto && c.no_crossover && c.excel);
        assert_eq!(c.tests, [0, 1]);
        assert_eq!(c.biff, Some(PathBuf::from("out.xls")));
        assert_eq!(c.max_file_kb, Some(65536));
        assert_eq!(
            c.splash,
            [
                "Auto Mode",
                "Cross over of record size disabled.",
                "Excel chart generation enabled",
                "Using maximum file size of 65536 kilobytes."
            ]
        );
        let c = p("-s 1m -s 2m -r 4k").unwrap();
        assert!(c.auto_mode(), "several -s is auto mode");
    }

    #[test]
    fn throughput_flags_and_f_names() {
        let c = p("-i 0 -l 1 -u 3 -r 1m -s 64m -F a b c").unwrap();
        assert!(c.throughput());
        assert_eq!(c.process_counts(), [1, 2, 3]);
        assert_eq!(c.files.len(), 3);
        let c = p("-t 1 -t 4 -T").unwrap();
        assert_eq!(c.process_counts(), [1, 4]);
        assert_eq!(p("-u 3").unwrap().process_counts(), [1, 2, 3]);
        assert_eq!(p("-t 0").unwrap().process_counts(), [8]);
    }

    #[test]
    fn iozones_exclusions_are_refused_with_a_reason() {
        let e = |s: &str| p(s).unwrap_err().0;
        assert!(e("-a -t 2").contains("Can not mix throughput mode and auto-mode flags"));
        assert!(e("-t 2 -f x").contains("You must use -F"));
        assert!(e("-F a b -t 2").contains("-F must come after -t"));
        assert!(e("-t 2 -N").contains("Microsecond mode"));
        assert!(e("-t 3 -F a b").contains("-F needs 3 file names"));
        assert!(e("-s 4k -r 64k").contains("no record fits; use a smaller -r"));
        assert!(e("-t 2 -s 4k -r 64k").contains("no record fits"));
        assert!(p("-a -s 4k -s 8k -r 64k").is_ok(), "auto mode skips such pairs");
        assert!(
            e("-r 32m").contains(
                "maximum record size 32768 kB is greater than maximum buffer size 16384 kB"
            )
        );
        assert!(e("-Q").contains("does not implement"));
        assert!(e("-%").contains("unknown option"));
        assert!(e("-i 12").contains("give 0 to 10"));
        assert!(e("-s").contains("-s needs a value"));
        assert!(e("-+z").contains("only -+n"));
        assert!(e("stray").contains("unexpected argument"));
    }

    #[test]
    fn defaults_of_zero_values() {
        let c = p("-s 0 -r 0").unwrap();
        assert_eq!((c.sizes_kb[0], c.records[0]), (512, 4096));
    }
}

//! iozone's command line, parsed by iozone's rules (getopt clusters such as
//! `-az` and `-i0`, `-+n`, size suffixes with a bare number meaning kB,
//! repeatable `-i -s -r -t`, `-F` taking one name per process), into a
//! [`Config`]. Every refusal is one line naming the problem and the way out.

use std::path::PathBuf;

/// Largest record iozone accepts (its MAXBUFFERSIZE).
pub const MAX_RECORD: u64 = 16 << 20;

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
    let n = s[..digits]
        .parse::<u64>()
        .or_else(|_| bad(format!("-{flag} {s}: too large")))?;
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
    Ok(n.saturating_mul(suffix(flag, s, rest)?)
        .saturating_mul(1024))
}

fn count(flag: char, s: &str) -> Result<usize, ArgError> {
    s.trim()
        .parse::<i64>()
        .or_else(|_| bad(format!("-{flag} {s}: not a number of processes")))
        .map(|n| n.clamp(0, 1024) as usize)
}

/// Option letters that take a value.
const WITH_VALUE: &str = "ngyqirsfbtluFjSL+";
/// Option letters without one.
const PLAIN: &str = "aAzRITceoONmwCpxMhE";
/// iozone options arrayburn does not implement (mmap, async I/O, telemetry…).
const NOT_SUPPORTED: &str = "BDGHkKJXYQUVWZPdv";

/// Parses iozone's arguments (without the program name). `program` is
/// what the header shows as argv[0].
pub fn parse(program: &str, args: &[String]) -> Result<Config, ArgError> {
    let mut c = Config {
        stride: 17,
        cache_kb: 1024,
        cache_line: 32,
        pause_s: 2.0,
        ..Config::default()
    };
    c.command_line = std::iter::once(program.to_string())
        .chain(args.iter().cloned())
        .collect();
    if args.is_empty() {
        return bad(
            "no arguments: give iozone's options, e.g. `arrayburn iozone -a` or `-s 1g -r 1m -i 0 -i 1 -I` (-h lists them)",
        );
    }
    let mut i = 0;
    while i < args.len() {
        let word = &args[i];
        i += 1;
        if let Some(long) = word.strip_prefix("--") {
            let mut value = || {
                let v = args.get(i).cloned();
                i += 1;
                v.ok_or_else(|| {
                    ArgError(format!(
                        "--{long} needs a value after it (-h lists the options)"
                    ))
                })
            };
            match long {
                "help" => c.help = true,
                "huge-pages" => c.huge_pages = true,
                "json" => c.json = Some(PathBuf::from(value()?)),
                "pause" => {
                    let v = value()?;
                    c.pause_s = v
                        .parse::<f64>()
                        .ok()
                        .filter(|s| s.is_finite() && *s >= 0.0)
                        .ok_or_else(|| {
                            ArgError(format!("--pause {v}: give seconds, e.g. 2 or 0.5"))
                        })?;
                }
                _ => {
                    return bad(format!(
                        "--{long}: unknown option; arrayburn iozone adds only --json FILE, --pause SECONDS and --huge-pages to iozone's flags"
                    ));
                }
            }
            continue;
        }
        let Some(cluster) = word.strip_prefix('-').filter(|w| !w.is_empty()) else {
            return bad(format!(
                "{word}: unexpected argument; iozone's options start with - (file names go after -f or -F)"
            ));
        };
        for (at, flag) in cluster.char_indices() {
            if NOT_SUPPORTED.contains(flag) {
                return bad(format!(
                    "-{flag}: an iozone option arrayburn iozone does not implement (mmap, async I/O and telemetry are out of scope); see README's iozone section"
                ));
            }
            if PLAIN.contains(flag) {
                plain(&mut c, flag);
                continue;
            }
            if !WITH_VALUE.contains(flag) {
                return bad(format!(
                    "-{flag}: unknown option (-h lists iozone's options that arrayburn runs)"
                ));
            }
            if flag == 'F' {
                let rest = &cluster[at + 1..];
                let n = c.max_count();
                if n == 0 {
                    return bad(
                        "-F must come after -t N (or -l/-u): it takes one file name per process",
                    );
                }
                let mut names: Vec<String> = Vec::new();
                if !rest.is_empty() {
                    names.push(rest.to_string());
                }
                while names.len() < n {
                    match args.get(i) {
                        Some(a) => names.push(a.clone()),
                        None => {
                            return bad(format!(
                                "-F needs {n} file names (one per process), got {}",
                                names.len()
                            ));
                        }
                    }
                    i += 1;
                }
                c.files = names.into_iter().map(PathBuf::from).collect();
                break;
            }
            // The value is the rest of this word, or the next word.
            let rest = &cluster[at + 1..];
            let value = if !rest.is_empty() {
                rest.to_string()
            } else {
                let v = args
                    .get(i)
                    .cloned()
                    .ok_or_else(|| {
                        ArgError(format!(
                            "-{flag} needs a value after it (e.g. -{flag} 4 or -{flag}4; -h lists the options)"
                        ))
                    })?;
                i += 1;
                v
            };
            valued(&mut c, flag, &value)?;
            break;
        }
    }
    check(&mut c)?;
    Ok(c)
}

fn plain(c: &mut Config, flag: char) {
    let splash = |c: &mut Config, s: &str| c.splash.push(s.to_string());
    match flag {
        'a' => {
            c.auto = true;
            splash(c, "Auto Mode");
        }
        'A' => {
            c.auto2 = true;
            c.no_crossover = true;
            splash(c, "Auto Mode 2. This option is obsolete. Use -az -i0 -i1 ");
        }
        'z' => {
            c.no_crossover = true;
            splash(c, "Cross over of record size disabled.");
        }
        'R' => {
            c.excel = true;
            splash(c, "Excel chart generation enabled");
        }
        'I' => {
            c.direct = true;
            splash(c, "O_DIRECT feature enabled");
        }
        'T' => c.threads = true,
        'c' => {
            c.close_timed = true;
            splash(c, "Include close in write timing");
        }
        'e' => {
            c.fsync_timed = true;
            splash(c, "Include fsync in write timing");
        }
        'o' => {
            c.osync = true;
            splash(c, "SYNC Mode. ");
        }
        'O' => {
            c.ops = true;
            splash(c, "OPS Mode. Output is in operations per second.");
        }
        'N' => {
            c.usec = true;
            splash(
                c,
                "Microseconds/op Mode. Output is in microseconds per operation.",
            );
        }
        'm' => {
            c.multi_buffer = true;
            splash(c, "Multi_buffer. Work area 16777216 bytes");
        }
        'w' => {
            c.keep = true;
            splash(c, "Setting no_unlink");
        }
        'C' => c.per_child = true,
        'p' => {
            c.purge = true;
            splash(c, "Purge Mode On");
        }
        'x' => {
            c.no_stonewall = true;
            splash(c, "Stonewall disabled");
        }
        'M' => {
            let uname = nix::sys::utsname::uname()
                .map(|u| {
                    [
                        u.sysname(),
                        u.nodename(),
                        u.release(),
                        u.version(),
                        u.machine(),
                    ]
                    .map(|s| s.to_string_lossy().into_owned())
                    .join(" ")
                })
                .unwrap_or_default();
            splash(c, "");
            splash(c, &format!("Machine = {uname}"));
        }
        'h' => c.help = true,
        'E' => c.pwrite_tests = true,
        _ => {}
    }
}

fn valued(c: &mut Config, flag: char, v: &str) -> Result<(), ArgError> {
    match flag {
        'n' => {
            let kb = size_kb(flag, v)?.max(4);
            c.min_file_kb = Some(kb);
            c.splash
                .push(format!("Using minimum file size of {kb} kilobytes."));
        }
        'g' => {
            let kb = size_kb(flag, v)?.max(4);
            c.max_file_kb = Some(kb);
            c.splash
                .push(format!("Using maximum file size of {kb} kilobytes."));
        }
        'y' | 'q' | 'r' => {
            let b = record_bytes(flag, v)?;
            if b > MAX_RECORD {
                return bad(format!(
                    "-{flag} {v}: maximum record size {} kB is greater than maximum buffer size 16384 kB",
                    b / 1024
                ));
            }
            match flag {
                'y' => {
                    c.min_rec = Some(b.max(4096));
                    c.splash.push(format!(
                        "Using Minimum Record Size {} kB",
                        b.max(4096) / 1024
                    ));
                }
                'q' => {
                    c.max_rec = Some(b.max(4096));
                    c.splash.push(format!(
                        "Using Maximum Record Size {} kB",
                        b.max(4096) / 1024
                    ));
                }
                _ => {
                    let b = if b == 0 { 4096 } else { b };
                    c.records.push(b);
                    c.splash.push(format!("Record Size {} kB", b / 1024));
                }
            }
        }
        's' => {
            let kb = size_kb(flag, v)?;
            let kb = if kb == 0 { 512 } else { kb };
            c.sizes_kb.push(kb);
            c.splash.push(format!("File size set to {kb} kB"));
        }
        'i' => {
            let n: u32 = v.trim().parse().or_else(|_| {
                bad(format!(
                    "-i {v}: give a test number 0 to 10 (-h lists them)"
                ))
            })?;
            match n {
                0..=10 => c.tests.push(n as u8),
                _ => {
                    return bad(format!(
                        "-i {v}: test {n} does not exist on Linux (pwritev/preadv, 11 and 12, are not built there); give 0 to 10"
                    ));
                }
            }
        }
        'f' => c.file = Some(PathBuf::from(v)),
        'b' => {
            c.biff = Some(PathBuf::from(v));
            c.excel = true;
        }
        't' => {
            let n = count(flag, v)?;
            c.counts.push(if n == 0 { 8 } else { n });
        }
        'l' => c.lower = Some(count(flag, v)?.max(1)),
        'u' => c.upper = Some(count(flag, v)?.max(1)),
        'j' => {
            c.stride = v
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|s| *s > 0)
                .ok_or_else(|| ArgError(format!("-j {v}: give the stride in records, e.g. 17")))?;
        }
        'S' | 'L' => {
            let n = v
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| ArgError(format!("-{flag} {v}: give a positive number")))?;
            if flag == 'S' {
                c.cache_kb = n;
            } else {
                c.cache_line = n;
            }
        }
        '+' => match v {
            "n" => {
                c.no_retest = true;
                c.splash.push("No retest option selected".into());
            }
            _ => {
                return bad(format!(
                    "-+{v}: an iozone extended option arrayburn iozone does not implement (only -+n)"
                ));
            }
        },
        _ => {}
    }
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
        return bad(format!(
            "-l {l} is above -u {u}: the range of process counts is -l to -u"
        ));
    }
    if let (Some(lo), Some(hi)) = (c.min_file_kb, c.max_file_kb)
        && lo > hi
    {
        return bad(format!(
            "-n {lo} kB is above -g {hi} kB: no file size to test"
        ));
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
        return bad(format!(
            "-F needs {} file names (one per process)",
            c.max_count()
        ));
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
        assert!(
            p("-a -s 4k -s 8k -r 64k").is_ok(),
            "auto mode skips such pairs"
        );
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

//! What `--help` and the man pages say beyond the options: each command's
//! description, exit status and examples, and what every page shares (the
//! environment, the files, where to look next). One table for both, so
//! they never disagree.

/// One command's page.
pub struct Page {
    /// The subcommand (`""`: arrayburn itself).
    pub name: &'static str,
    /// What it does, a paragraph each.
    pub description: &'static [&'static str],
    /// Its exit statuses: (code, meaning).
    pub exit: &'static [(u8, &'static str)],
    /// Command lines people start from.
    pub examples: &'static [&'static str],
}

const USAGE_ERROR: (u8, &str) = (
    2,
    "could not run: a bad option, a refused device or output, another arrayburn run on the same disk (one line says which and how to go on; nothing was written)",
);
const INTERRUPTED: (u8, &str) =
    (130, "interrupted (Ctrl-C, SIGTERM): partial results were written, marked so");
const HEALTHY: (u8, &str) = (0, "healthy: every disk compared with its peers, nothing found");
const FLAGGED: (u8, &str) =
    (1, "something to act on: a disk or a link (the report names each, with what to do)");
const NOT_JUDGED: (u8, &str) = (
    3,
    "not judged: nothing found, but a disk could not be compared (timed too briefly, or no peer of its model, size and kind) or told slow or not; health is not claimed",
);
const RAN: (u8, &str) = (0, "it ran");

/// Every page, arrayburn's first.
pub const PAGES: [Page; 12] = [
    Page {
        name: "",
        description: &[
            "arrayburn checks disk arrays, burns in new disks and reports on many hosts' results, for the people who run storage: admins validating a disk controller or HBA, hunting the one slow drive in a shelf, checking disks before they build a pool, and teams running a tender's benchmark procedure.",
            "check reads every disk alone, then all at once, and judges each against its peers (robust statistics, re-measured before it is blamed); burnin writes every block of new disks, reads it back and classifies what came back, resumable across reboots; iozone runs iozone's file workloads; report reads results from many hosts and runs and compares them. Every command is safe by default: nothing is written to a disk unless a destructive run is asked for.",
        ],
        exit: &[HEALTHY, FLAGGED, USAGE_ERROR, NOT_JUDGED, INTERRUPTED],
        examples: &[
            "arrayburn list",
            "arrayburn check /dev/sd[b-i]",
            "arrayburn burnin --destructive --smart-test short -o burn1 /dev/disk/by-id/ata-NEW*",
            "arrayburn report results/",
        ],
    },
    Page {
        name: "check",
        description: &[
            "Reads each disk alone (the serial pass), then all at once (the parallel pass), with O_DIRECT reads of --block bytes, for --sample per disk or whole (--full-serial, --full); read-only. Each disk's MB/s is compared with its peers' (same model, size and kind) by a robust rule; a disk called slow on speed alone is re-measured before it is blamed. The parallel pass tells a shared bottleneck (a controller, expander, bus or CPU) from slow disks. Failed reads are pinpointed to their ranges, slow reads and slow regions of the surface are named, and links below their maximum are found.",
            "The report prints a solnet-style table per pass with %ofAvg and --SLOW-- marks, a sentence per disk to act on and the verdict; --json, --csv, --out DIR (a page with charts) and --metrics keep it.",
        ],
        exit: &[HEALTHY, FLAGGED, USAGE_ERROR, NOT_JUDGED, INTERRUPTED],
        examples: &[
            "arrayburn check /dev/sd[b-i]",
            "arrayburn check --full -j result.json /dev/sd[b-i]",
            "arrayburn check --spots 11 --seek -o run1 /dev/sd[b-i]",
            "arrayburn check -q --metrics /var/lib/prometheus/node-exporter/arrayburn.prom /dev/sd[b-i]",
        ],
    },
    Page {
        name: "burnin",
        description: &[
            "Burns in new disks, all at once: every 4 KiB block of each disk (or --range) written with self-identifying data, the disk's cache flushed, every block read back and classified (failed to write or read, corrupted, misdirected, another disk's, stale, zeros, foreign), --passes times. DESTROYS the data on the disks: it needs --destructive, and refuses a disk that is mounted, in a pool or array, or carries a signature (unless --wipe-signatures).",
            "Each disk's place is checkpointed in --state; --resume (or --resume-or-start, as the systemd unit in contrib/ does) continues after a reboot or a signal, proving it has the same disk first. SMART is read before and after (and the drives' self-test run first with --smart-test); counters that rose, requests that stalled, temperatures above the drive's limit and disks slower than their peers (re-measured alone first) are findings. --read-only soaks the disks with reads instead (for --duration, or --passes).",
        ],
        exit: &[
            (
                0,
                "healthy: every block written and read back as written, no SMART counter rose, no stall, every speed compared",
            ),
            FLAGGED,
            USAGE_ERROR,
            NOT_JUDGED,
            INTERRUPTED,
        ],
        examples: &[
            "arrayburn burnin --destructive --smart-test short -o burn1 /dev/disk/by-id/ata-NEW*",
            "arrayburn burnin --destructive --yes -p 2 --metrics /var/lib/prometheus/node-exporter/burnin.prom /dev/sd[b-e]",
            "arrayburn burnin --destructive --resume /dev/sd[b-e]",
            "arrayburn burnin --read-only --duration 24h /dev/sd[b-i]",
        ],
    },
    Page {
        name: "inspect",
        description: &[
            "The incoming inspection, read-only and in seconds: what each drive declares of itself (sysfs, smartctl --json -x -l farm, hdparm -N) in one table: model, serial, firmware, capacity, sector format, rotation, power-on hours, Seagate's FARM power-on hours, power cycles, start/stop count, ATA security, hidden capacity (an HPA, NVMe capacity in no namespace), TRIM and zones. Judged by simple rules and against its peers of the same model: used (more than --new-hours), hours reset (FARM far ahead of SMART), locked (unlock before testing: its reads fail, which is no fault of its media), hidden capacity, firmware, capacity or sector format unlike its peers. A drive without SMART data is not judged new or unlocked: the verdict says so.",
            "--probe --destructive also finds fake capacity: self-identifying blocks are written at the start, across the disk and at its announced end, read back, and the usable size bisected to the block, in seconds at any size; blocks past it that wrap onto the start or keep nothing are named. It overwrites those blocks, and refuses disks in use or carrying a signature as burnin does.",
        ],
        exit: &[
            (
                0,
                "nothing to act on: every drive gave SMART data, new, unlocked, whole, like its peers",
            ),
            (
                1,
                "something to act on: a drive used, reset, locked, hiding or faking capacity, or unlike its peers (the report says which and what to do)",
            ),
            USAGE_ERROR,
            (
                3,
                "not judged: nothing to act on in what was read, but a drive gave no SMART data (its hours and security are not known)",
            ),
            (130, "interrupted: the probe was stopped; what it found so far is written, marked so"),
        ],
        examples: &[
            "arrayburn inspect /dev/disk/by-id/ata-NEW*",
            "arrayburn inspect --new-hours 24 -j incoming.json /dev/sd[b-m]",
            "arrayburn inspect --probe --destructive --yes /dev/sdx",
        ],
    },
    Page {
        name: "locate",
        description: &[
            "Lights the locate LED of each disk's enclosure slot (--fault: its fault LED; --off: turns it off), through the kernel's ses driver (/sys/class/enclosure/ENCLOSURE/SLOT/locate and fault), to find the bay of a disk to act on. check and burnin light the disks to act on at their end with --locate (the fault LED of a disk to return), and every verdict sentence names the enclosure and slot where the kernel knows it. A disk without a known slot is said so, with ledctl as the way where the backplane uses SGPIO.",
        ],
        exit: &[
            (0, "every LED was set"),
            USAGE_ERROR,
            (
                3,
                "a disk's LED could not be set: no enclosure slot known, or no such LED (its line says which)",
            ),
        ],
        examples: &[
            "arrayburn locate /dev/sdf",
            "arrayburn locate --off /dev/sdf",
            "arrayburn check --locate /dev/sd[b-i]",
        ],
    },
    Page {
        name: "report",
        description: &[
            "Reads check, burn-in and inspection results (--json files, --out bundles' report.json, or directories holding them) from one host or many, old and new, and judges them together: each run's own findings (superseded where a later run measured those disks again; an inspection's stand), disks slow for their model across the fleet, disks worse than in their earlier runs (the same disk by WWN or serial), links below their maximum, and each host's runs. It only reads files.",
        ],
        exit: &[
            (
                0,
                "healthy: every run's own verdict healthy, none slow for its model, none worse than before",
            ),
            FLAGGED,
            (
                2,
                "could not run: no result file, or one that cannot be read (--keep-going skips it)",
            ),
            (
                3,
                "not judged: nothing to act on, but a run could not judge every disk or did not finish, or a file was skipped",
            ),
            (130, "interrupted: nothing was written (run it again)"),
        ],
        examples: &[
            "arrayburn report results/",
            "arrayburn report --keep-going -o fleet results/ /var/lib/arrayburn/burnin/runs",
            "arrayburn report -q --metrics /var/lib/prometheus/node-exporter/fleet.prom results/",
        ],
    },
    Page {
        name: "list",
        description: &[
            "Lists the disks on this machine with their identity (model, serial, WWN, size, sector sizes, controller and link) and whether they are in use (mounted, swap, in a pool, array or volume group), without opening them. --all includes loop, RAM, device-mapper and md devices.",
        ],
        exit: &[
            RAN,
            (2, "could not run: a device that is not there, or an output that cannot be written"),
        ],
        examples: &[
            "arrayburn list",
            "arrayburn list -j - | jq '.[].serial'",
            "arrayburn list /dev/sdb",
        ],
    },
    Page {
        name: "demo",
        description: &[
            "Builds a small array of memory-backed loop devices in /dev/shm (one made slow with a cgroup throttle), runs the real check on it, and removes everything again: a first run without spare disks. Needs root.",
        ],
        exit: &[HEALTHY, FLAGGED, USAGE_ERROR, NOT_JUDGED, INTERRUPTED],
        examples: &[
            "arrayburn demo",
            "arrayburn demo --disks 8 --sample 5s",
            "arrayburn demo --no-throttle",
        ],
    },
    Page {
        name: "iozone",
        description: &[
            "Runs iozone's file workloads on a mounted filesystem with iozone's own flags, tests and output (arrayburn iozone -h lists them), so a tender's iozone procedure runs unchanged; --json adds a machine-readable result.",
        ],
        exit: &[
            (0, "every test ran and read back what it wrote"),
            (1, "a test returned data other than was written"),
            (2, "could not run: a bad flag or a file that cannot be made"),
            (130, "interrupted: the test files were removed"),
        ],
        examples: &[
            "arrayburn iozone -a -g 1g -f /mnt/test/iozone.tmp",
            "arrayburn iozone -i 0 -i 1 -t 4 -s 1g -r 1m -F /mnt/a/f1 /mnt/a/f2 /mnt/a/f3 /mnt/a/f4",
        ],
    },
    Page {
        name: "watch",
        description: &[
            "Watches disks in service: reads /proc/diskstats every --interval (never a byte of a disk, never opening one) and gives, per disk, window and direction, its requests a second, MB/s, milliseconds a request, utilisation and requests in flight.",
            "Each disk is compared with its peers (same model, size and kind, and the same pool: an md array, an LVM volume group, the host's Ceph OSDs, a ZFS pool's vdev class from zpool status -P; never across pools) that carried a similar load (within half as much again of the group's median, at least one request a second); a disk whose latency is twice theirs or more (and a millisecond above) in most windows over --for, and in the last, is named fail-slow, with since when and how much. A whole group slowed together against its own first windows is its path or workload, said of the group, never of a disk. A disk gone, or whose failed commands rose, is said at once. An idle disk, one whose load differs and one with fewer than three peers at its load are not judged, and said so.",
            "On a terminal a live table; --json appends JSON lines (--json-every for a service), --metrics writes arrayburn_watch_* for node_exporter, --notify runs on each finding begun and ended; contrib/ has a systemd unit and a Kubernetes DaemonSet, and report reads a watch's JSON lines beside checks and burn-ins.",
        ],
        exit: &[
            (
                0,
                "every disk compared with its peers, none fail-slow (at the end, or in the --once window), none gone or with failed commands, no group slow together",
            ),
            (
                1,
                "a disk was fail-slow at the end, or gone, or had failed commands, or a group was slow together: the lines say which, since when and how much",
            ),
            (2, "could not run: a bad option or a disk that is not one (one line says which)"),
            (
                3,
                "nothing stood out, but a disk was never compared with its peers (idle, at another load, or without peers): its health is not claimed, and the last lines say why",
            ),
            (130, "interrupted (Ctrl-C, SIGTERM): what was found is said"),
        ],
        examples: &[
            "arrayburn watch",
            "arrayburn watch --interval 10s --for 30m -j /var/log/arrayburn-watch.jsonl /dev/sd[b-i]",
            "arrayburn watch --once --interval 30s /dev/sd[b-i]",
        ],
    },
    Page {
        name: "completions",
        description: &[
            "Prints a shell completion script for bash, zsh, fish, elvish or powershell to standard output (arrayburn man --install puts bash's, zsh's and fish's where the shells look).",
        ],
        exit: &[RAN, (2, "an unknown shell")],
        examples: &["arrayburn completions bash > /etc/bash_completion.d/arrayburn"],
    },
    Page {
        name: "man",
        description: &[
            "Prints a man page (roff) to standard output: arrayburn's, or one subcommand's. --install writes every page and the shell completions where the system looks for them, making the directories.",
        ],
        exit: &[RAN, (2, "an unknown subcommand, or a page that cannot be written")],
        examples: &["arrayburn man check | man -l -", "arrayburn man --install"],
    },
];

/// The environment every command reads: (variable, meaning).
pub const ENVIRONMENT: [(&str, &str); 5] = [
    ("ARRAYBURN_NOTIFY", "a command to run when a run ends (as --notify; check, burnin, report)"),
    ("ARRAYBURN_NOTIFY_TIMEOUT", "how long that command may run (as --notify-timeout)"),
    (
        "ARRAYBURN_EVENT, ARRAYBURN_COMMAND, ARRAYBURN_VERDICT, ARRAYBURN_EXIT, ARRAYBURN_HOST, ARRAYBURN_MESSAGE, ARRAYBURN_TO_ACT_ON",
        "set for the --notify command (not read): end or disk, the command, the verdict (HEALTHY, FLAGGED, NOT JUDGED, INTERRUPTED; a disk's BAD, GONE, HUNG), the exit status, the host, the verdict's sentence, the disks to act on (one a line)",
    ),
    (
        "ARRAYBURN_TOPOLOGY",
        "a JSON file placing disks on controllers and links where sysfs does not say (a lab, the tests)",
    ),
    ("NO_COLOR", "set (to anything but empty): no colour, unless --color always"),
];

/// The files arrayburn keeps or writes: (path, what).
pub const FILES: [(&str, &str); 4] = [
    (
        "/var/lib/arrayburn/burnin",
        "the burn-in's --state: a checkpoint per disk, and in runs/ each run's log (RUN.log) and report (RUN.json)",
    ),
    ("DIR/run.log", "a check's log in --out DIR (beside --json r.json: r.log)"),
    (
        "/dev/sdX",
        "the lock of a run on a disk: flock(2) on the disk's own node (no lock file); /proc/locks names the holder",
    ),
    (
        "/var/lib/prometheus/node-exporter/*.prom",
        "where node_exporter's textfile collector reads --metrics",
    ),
];

/// Where to look next.
pub const SEE_ALSO: &str = "fio(1), smartctl(8), badblocks(8), zpool(8), f3probe(1), iozone(1)";

/// The page of `name` (`""`: arrayburn's).
pub fn page(name: &str) -> Option<&'static Page> {
    PAGES.iter().find(|p| p.name == name)
}

/// The end of a command's `--help`: its exit status and examples.
pub fn tail(name: &str) -> String {
    let Some(p) = page(name) else { return String::new() };
    let codes: String = p.exit.iter().map(|(c, m)| format!("  {c:<4} {m}\n")).collect();
    let examples: String = p.examples.iter().map(|e| format!("  {e}\n")).collect();
    format!("Exit status:\n{codes}\nExamples:\n{examples}")
}

//! What the host's CPUs did while something was measured (`/proc/stat`):
//! how many sat idle on average, so that a rate which a busy host could
//! have set (requests that each need the CPU to wake a thread) is not read
//! as the disk's. It reads counters and does arithmetic; it must not judge
//! what a figure means (`judge::smr` does).

/// The CPUs' time counters at one moment (USER_HZ ticks, all CPUs summed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuTimes {
    /// Ticks idle or waiting for I/O (a CPU free to run a woken thread).
    idle: u64,
    /// All ticks counted.
    total: u64,
    /// CPUs the counters sum over.
    cpus: u32,
}

impl CpuTimes {
    /// The counters now; None where `/proc/stat` cannot be read.
    pub fn now() -> Option<Self> {
        Self::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// From `/proc/stat`'s text: the `cpu` line (user nice system idle
    /// iowait irq softirq steal; guest time is counted in user already)
    /// and one `cpuN` line per CPU.
    pub fn parse(stat: &str) -> Option<Self> {
        let mut lines = stat.lines();
        let all = lines.next()?.strip_prefix("cpu ")?;
        let ticks: Vec<u64> =
            all.split_whitespace().take(8).map(str::parse).collect::<Result<_, _>>().ok()?;
        if ticks.len() < 5 {
            return None;
        }
        let cpus = lines.filter(|l| l.starts_with("cpu")).count() as u32;
        Some(Self { idle: ticks[3] + ticks[4], total: ticks.iter().sum(), cpus: cpus.max(1) })
    }

    /// CPUs idle on average from `earlier` to these counters (0 up to the
    /// number of CPUs); None where no tick passed.
    pub fn idle_cpus_since(&self, earlier: &CpuTimes) -> Option<f64> {
        let total = self.total.checked_sub(earlier.total).filter(|t| *t > 0)?;
        let idle = self.idle.saturating_sub(earlier.idle).min(total);
        Some(idle as f64 / total as f64 * f64::from(self.cpus))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(user: u64, idle: u64, iowait: u64, cpus: usize) -> String {
        let mut s = format!("cpu  {user} 0 0 {idle} {iowait} 0 0 0 0 0\n");
        for i in 0..cpus {
            s += &format!("cpu{i} 1 0 0 1 0 0 0 0 0 0\n");
        }
        s + "intr 1 2 3\nctxt 5\n"
    }

    #[test]
    fn idle_cpus_are_idle_and_iowait_ticks_over_all_of_them_times_the_cpus() {
        let before = CpuTimes::parse(&stat(1000, 1000, 0, 2)).unwrap();
        // 100 ticks passed over 2 CPUs: 50 busy, 40 idle, 10 waiting on I/O.
        let after = CpuTimes::parse(&stat(1050, 1040, 10, 2)).unwrap();
        assert_eq!(after.idle_cpus_since(&before), Some(1.0));
        // Both CPUs busy with other work throughout.
        let hogged = CpuTimes::parse(&stat(1100, 1000, 0, 2)).unwrap();
        assert_eq!(hogged.idle_cpus_since(&before), Some(0.0));
        // No tick passed, or counters that went back: nothing to say.
        assert_eq!(before.idle_cpus_since(&before), None);
        assert_eq!(before.idle_cpus_since(&after), None);
    }

    #[test]
    fn text_that_is_not_proc_stat_is_none_and_the_real_one_reads() {
        assert_eq!(CpuTimes::parse(""), None);
        assert_eq!(CpuTimes::parse("cpu0 1 2 3 4 5\n"), None);
        assert_eq!(CpuTimes::parse("cpu  1 2 x 4 5\n"), None);
        let real = CpuTimes::now().expect("/proc/stat on Linux");
        assert!(real.cpus as usize >= 1 && real.total >= real.idle, "{real:?}");
    }
}

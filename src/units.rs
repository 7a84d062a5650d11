//! Units in one place: parsing sizes and durations from the command line, and
//! formatting bytes, rates and times for people.
//!
//! Rates are decimal MB/s (10^6 bytes per second), as drive datasheets and
//! solnet-array-test use. Sizes given on the command line are binary
//! (`4m` = 4 MiB), because read sizes must be powers of two in practice.

use std::time::{Duration, SystemTime};

use chrono::{DateTime, Local, SecondsFormat, Utc};

/// Parses a size such as `4m`, `4MiB`, `512k` or `1048576` (bytes) with
/// binary multiples.
pub fn parse_size(text: &str) -> Result<u64, String> {
    parse_size::Config::new()
        .with_binary()
        .parse_size(text.trim())
        .map_err(|e| format!("'{text}' is not a size ({e}); write it like 4m, 512k or 1048576"))
}

/// Parses a duration such as `60s`, `2m`, `1.5s`, `500ms`, `1h`, or several
/// of them as people write them (`1m30s`, `1h 30m`, `2m 15.5s`); a bare
/// number means seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let hint = "write it like 30s, 1m30s, 1.5s or 1h";
    let mut rest = text.trim();
    let mut total = 0.0;
    if rest.is_empty() {
        return Err(format!("'{text}' is not a duration; {hint}"));
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let (num, tail) = rest.split_at(digits);
        let letters = tail.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(letters);
        let factor = match unit {
            "" if tail.trim().is_empty() && total == 0.0 => 1.0,
            "s" | "sec" | "secs" => 1.0,
            "ms" => 0.001,
            "m" | "min" | "mins" => 60.0,
            "h" | "hour" | "hours" => 3600.0,
            _ => return Err(format!("'{text}' has an unknown or missing unit; {hint}")),
        };
        let Ok(v) = num.parse::<f64>() else {
            return Err(format!("'{text}' is not a positive duration; {hint}"));
        };
        total += v * factor;
        rest = tail.trim_start();
    }
    if !(total > 0.0 && total.is_finite()) {
        return Err(format!("'{text}' is not a positive duration; {hint}"));
    }
    if total > LONGEST.as_secs_f64() {
        return Err(format!(
            "'{text}' is longer than arrayburn waits for anything: give at most {}h (10 years)",
            LONGEST.as_secs() / 3600
        ));
    }
    Ok(Duration::from_secs_f64(total))
}

/// The longest duration any flag takes: ten years. Beyond it no run or
/// wait makes sense, and a clock plus a far larger one overflows (a panic
/// where a one-line refusal belongs).
pub const LONGEST: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

/// A duration as [`parse_duration`] takes it, or `0`: none.
pub fn parse_duration_or_zero(text: &str) -> Result<Duration, String> {
    if text.trim() == "0" { Ok(Duration::ZERO) } else { parse_duration(text) }
}

/// Parses a time in milliseconds as the `*-ms` flags take it: a bare
/// number is milliseconds (`500`), and a duration with its unit is taken
/// too (`500ms`, `2s`).
pub fn parse_ms(text: &str) -> Result<u64, String> {
    let longest = LONGEST.as_millis() as u64;
    if let Ok(ms) = text.trim().parse::<u64>() {
        if ms > longest {
            return Err(format!(
                "'{text}' ms is longer than arrayburn waits for anything: give at most {longest} (10 years)"
            ));
        }
        return Ok(ms);
    }
    let d = parse_duration(text).map_err(|e| format!("{e} (a bare number is milliseconds)"))?;
    Ok(d.as_millis() as u64)
}

/// The byte at `k / n` of `size` (rounded down; `n` 0 counts as 1):
/// bucket edges, spread-sample spots, seek readers' starts.
pub fn fraction_of(size: u64, k: u64, n: u64) -> u64 {
    (u128::from(size) * u128::from(k) / u128::from(n.max(1))) as u64
}

/// Decimal MB/s for `bytes` read in `seconds` (0 when no time has passed).
pub fn mb_per_s(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 { bytes as f64 / 1e6 / seconds } else { 0.0 }
}

/// A size for people, decimal like disk labels: `4.00 TB`.
pub fn human_bytes(bytes: u64) -> String {
    humansize::format_size(bytes, humansize::DECIMAL)
}

/// A size for people in binary units: `4 MiB`.
pub fn human_bytes_binary(bytes: u64) -> String {
    humansize::format_size(bytes, humansize::BINARY)
}

/// A duration for people: `45 s`, `12 min 5 s`, `3 h 20 min`.
pub fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{:.1} s", d.as_secs_f64()),
        60..=3599 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// `secs` seconds for people, as [`human_duration`] (none below 0).
pub fn human_secs(secs: f64) -> String {
    human_duration(Duration::from_secs_f64(secs.max(0.0)))
}

/// RFC 3339 UTC time stamp (`2026-11-30T05:04:50Z`), for the reports.
pub fn rfc3339(t: SystemTime) -> String {
    DateTime::<Utc>::from(t).to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Seconds from RFC 3339 time `from` to `to`; None when either does not
/// parse.
pub fn seconds_between(from: &str, to: &str) -> Option<f64> {
    let at = |t: &str| DateTime::parse_from_rfc3339(t).ok();
    Some((at(to)? - at(from)?).as_seconds_f64())
}

/// RFC 3339 local time stamp with its offset (`2026-11-30T06:04:50+01:00`,
/// `TZ` respected), for iozone's JSON.
pub fn rfc3339_local(t: SystemTime) -> String {
    DateTime::<Local>::from(t).to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The stamp a log line starts with: now, local time with its offset, to
/// the second (`2026-11-30T06:04:50+01:00`): unambiguous in a days-long
/// log.
pub fn log_stamp() -> String {
    rfc3339_local(SystemTime::now())
}

/// C's `ctime()` in local time (`Mon Nov 30 04:48:04 2026`, `TZ`
/// respected), as iozone's "Run began:" line.
pub fn ctime(t: SystemTime) -> String {
    DateTime::<Local>::from(t).format("%a %b %e %H:%M:%S %Y").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_past_ten_years_is_refused_not_a_panic() {
        for text in ["99999999999999999999s", "87601h", "99999999999999999999", "5256001m"] {
            let e = parse_duration(text).unwrap_err();
            assert!(e.contains("give at most 87600h"), "{text}: {e}");
        }
        assert_eq!(parse_duration("87600h"), Ok(LONGEST));
        assert!(parse_ms("18446744073709551615").unwrap_err().contains("give at most"));
        assert!(parse_ms("99999999999999999999ms").is_err());
    }

    #[test]
    fn a_ms_flag_takes_a_bare_number_or_a_unit() {
        assert_eq!(parse_ms("500"), Ok(500));
        assert_eq!(parse_ms("500ms"), Ok(500));
        assert_eq!(parse_ms("2s"), Ok(2000));
        assert!(parse_ms("fast").unwrap_err().contains("a bare number is milliseconds"));
    }

    #[test]
    fn a_log_stamp_is_an_iso_8601_date_and_time_with_its_offset() {
        let s = log_stamp();
        let t = DateTime::parse_from_rfc3339(&s).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(s.as_bytes()[10], b'T', "{s}");
        let now = Utc::now().timestamp();
        assert!((t.timestamp() - now).abs() <= 2, "{s} is now");
    }
    use std::time::UNIX_EPOCH;

    #[test]
    fn fractions_of_a_large_disk_do_not_overflow() {
        let size = 20_000_000_000_000u64; // 20 TB
        assert_eq!(fraction_of(size, 99, 100), 19_800_000_000_000);
        // size * k is 2e19 here, over u64::MAX (1.8e19).
        assert_eq!(fraction_of(size, 999_999, 1_000_000), 19_999_980_000_000);
        assert_eq!(fraction_of(size, 1, 3), 6_666_666_666_666);
        assert_eq!(fraction_of(size, 0, 0), 0);
    }

    #[test]
    fn sizes_are_binary() {
        assert_eq!(parse_size("4m").unwrap(), 4 << 20);
        assert_eq!(parse_size("4MiB").unwrap(), 4 << 20);
        assert_eq!(parse_size("512k").unwrap(), 512 << 10);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert!(parse_size("lots").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("7").unwrap(), Duration::from_secs(7));
        assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("1h 30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("2m 15.5s").unwrap(), Duration::from_millis(135_500));
        assert_eq!(parse_duration("1s500ms").unwrap(), Duration::from_millis(1500));
        for bad in
            ["", "0s", "-1s", "2 fortnights", "s", "1.2.3s", "1m30", "30 1m", "1m-30s", "0m0s"]
        {
            assert!(parse_duration(bad).is_err(), "{bad} should be rejected");
        }
        // Where 0 means none: 0 alone, every other text as above.
        assert_eq!(parse_duration_or_zero(" 0 ").unwrap(), Duration::ZERO);
        assert_eq!(parse_duration_or_zero("20s").unwrap(), Duration::from_secs(20));
        for bad in ["0s", "-1s", "", "00"] {
            assert!(parse_duration_or_zero(bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn timestamps() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_796_014_290);
        assert_eq!(rfc3339(t), "2026-11-30T04:51:30Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn rates_are_decimal() {
        assert_eq!(mb_per_s(150_000_000, 1.0), 150.0);
        assert_eq!(mb_per_s(1, 0.0), 0.0);
    }
}

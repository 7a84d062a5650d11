//! A result file is input from wherever it came from: before it is read
//! as a report, every string in it is cleaned of control characters (a
//! host name or a model can carry terminal escapes) and every number is
//! held to the range its unit allows, read from the field's name (`_mb_per_s`,
//! `_s`, `_pct`, `_us`, `_c`: the report types carry their units in their
//! names). A speed of -1 MB/s would be shown slow and make its peer fast;
//! 1e308 would print 309 digits.
//!
//! It must not judge: a value in range is passed on untouched.

use serde_json::Value;

/// What a field's name says it measures, and the values it can take.
#[derive(Debug, Clone, Copy)]
struct Unit {
    what: &'static str,
    min: f64,
    max: f64,
}

const SPEED: Unit = Unit { what: "a speed (0 to 1000000 MB/s)", min: 0.0, max: 1e6 };
const SECONDS: Unit = Unit { what: "a time (0 to 1e10 s)", min: 0.0, max: 1e10 };
const PERCENT: Unit = Unit { what: "a percentage (0 to 1000000 %)", min: 0.0, max: 1e6 };
const LATENCY: Unit = Unit { what: "a latency (0 to 1e13 µs or ms)", min: 0.0, max: 1e13 };
const CELSIUS: Unit = Unit { what: "a temperature (-100 to 200 °C)", min: -100.0, max: 200.0 };
/// Any other number: a count, bytes, an offset (u64 at most).
const ANY: Unit = Unit { what: "a count (at most 2^64)", min: -1.9e19, max: 1.9e19 };

/// The unit a field's name gives (`None`: the name says nothing).
fn unit_of(key: &str) -> Option<Unit> {
    let k = key.to_ascii_lowercase();
    Some(match () {
        _ if k.ends_with("mb_per_s") => SPEED,
        _ if k.ends_with("_c") => CELSIUS,
        _ if k.ends_with("_us") || k.ends_with("_ms") => LATENCY,
        _ if k.contains("pct") => PERCENT,
        _ if k.ends_with("_s") => SECONDS,
        _ => return None,
    })
}

/// Cleans every string of `v` and checks every number, naming the first
/// that is out of its range (`passes[0].disks[1].mb_per_s is -1, not a
/// speed ...`).
pub fn clean(v: &mut Value) -> Result<(), String> {
    walk(v, &mut String::new(), ANY)
}

fn walk(v: &mut Value, at: &mut String, unit: Unit) -> Result<(), String> {
    match v {
        Value::String(s) => {
            let clean = crate::escape::terminal(s);
            if clean != *s {
                *s = clean;
            }
        }
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            if !(x.is_finite() && x >= unit.min && x <= unit.max) {
                return Err(format!("{at} is {n}, not {}", unit.what));
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let len = at.len();
                at.push_str(&format!("[{i}]"));
                walk(item, at, unit)?;
                at.truncate(len);
            }
        }
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                let len = at.len();
                if !at.is_empty() {
                    at.push('.');
                }
                at.push_str(&crate::escape::terminal(key));
                walk(item, at, unit_of(key).unwrap_or(unit))?;
                at.truncate(len);
            }
        }
        Value::Null | Value::Bool(_) => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_out_of_their_units_range_are_named_and_strings_cleaned() {
        let mut v = serde_json::json!({"host": "a\u{1b}]0;x\u{7}", "passes": [{"disks": [
            {"mb_per_s": 150.0, "latency_us": {"p50": 100.0}, "hottest_c": -5},
            {"mb_per_s": -1.0}]}]});
        let e = clean(&mut v).unwrap_err();
        assert_eq!(e, "passes[0].disks[1].mb_per_s is -1.0, not a speed (0 to 1000000 MB/s)");
        assert_eq!(v["host"], "a\\x1b]0;x\\x07");
        let mut huge = serde_json::json!({"summary": {"elapsed_s": 1e308}});
        let e = clean(&mut huge).unwrap_err();
        assert!(e.starts_with("summary.elapsed_s is 1"), "{e}");
        assert!(e.ends_with("not a time (0 to 1e10 s)") && e.len() < 80, "{e}");
        let mut lat = serde_json::json!({"latency_us": {"max": -3}});
        assert!(clean(&mut lat).unwrap_err().starts_with("latency_us.max"));
        let mut fine = serde_json::json!({"bytes": 20_000_000_000_000u64, "pct_of_peers": 135.2});
        assert_eq!(clean(&mut fine), Ok(()));
    }
}

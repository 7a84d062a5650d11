//! A result file is input from wherever it came from: before it is read
//! as a report, every string in it is cleaned of control characters (a
//! host name or a model can carry terminal escapes) and every number is
//! held to the range its unit allows, read from the field's name (`_mb_per_s`,
//! `_s`, `_pct`, `_us`, `_c`: the report types carry their units in their
//! names). A speed of -1 MB/s would be shown slow and make its peer fast;
//! 1e308 would print 309 digits.
//!
//! Both as it is parsed, straight into the typed result ([`from_slice`]):
//! a deserializer around serde_json's that cleans each string and checks
//! each number on its way to the field (a result file parsed into a tree
//! of values first, then walked, then read as a report, cost three times
//! as much, and a fleet of thousands of results is mostly parsing).
//!
//! It must not judge: a value in range is passed on untouched.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt::{self, Write};

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess};
use serde::de::{VariantAccess, Visitor};

/// What a field's name says it measures, and the values it can take.
#[derive(Debug, Clone, Copy)]
struct Unit {
    what: &'static str,
    min: f64,
    max: f64,
}

const SPEED: Unit = Unit { what: "a speed (0 to 1000000 MB/s)", min: 0.0, max: 1e6 };
/// Many disks' speeds together (a pass's aggregate, the serial sum): 256
/// memory-backed disks alone summed to 2958751 MB/s, a shelf of NVMe
/// drives does as much.
const SPEEDS: Unit = Unit { what: "a speed of disks together (0 to 1e9 MB/s)", min: 0.0, max: 1e9 };
const SECONDS: Unit = Unit { what: "a time (0 to 1e10 s)", min: 0.0, max: 1e10 };
const PERCENT: Unit = Unit { what: "a percentage (0 to 1000000 %)", min: 0.0, max: 1e6 };
const LATENCY: Unit = Unit { what: "a latency (0 to 1e13 µs or ms)", min: 0.0, max: 1e13 };
const CELSIUS: Unit = Unit { what: "a temperature (-100 to 200 °C)", min: -100.0, max: 200.0 };
/// Any other number: a count, bytes, an offset (u64 at most).
const ANY: Unit = Unit { what: "a count (at most 2^64)", min: -1.9e19, max: 1.9e19 };

/// The unit a field's name gives (`None`: the name says nothing). Called
/// for every key of every result: it compares in place, allocating
/// nothing.
fn unit_of(key: &str) -> Option<Unit> {
    let k = key.as_bytes();
    let ends = |suffix: &str| {
        k.len() >= suffix.len()
            && k[k.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
    };
    Some(match () {
        _ if ends("mb_per_s") && (k.starts_with(b"aggregate") || ends("sum_mb_per_s")) => SPEEDS,
        _ if key == "parallel_mb_per_s" => SPEEDS,
        _ if ends("mb_per_s") => SPEED,
        _ if ends("_c") => CELSIUS,
        _ if ends("_us") || ends("_ms") => LATENCY,
        _ if k.windows(3).any(|w| w.eq_ignore_ascii_case(b"pct")) => PERCENT,
        _ if ends("_s") => SECONDS,
        _ => return None,
    })
}

/// Why a file could not be read as `T`: a value out of its unit's range
/// (where, in words), or not the shape `T` is (serde_json's error).
#[derive(Debug)]
pub enum Unread {
    OutOfRange(String),
    Json(serde_json::Error),
}

/// Parses `bytes` as `T`, every string cleaned of control characters and
/// every number checked against the unit its field's name gives (the
/// first out of range named: `passes[0].disks[1].mb_per_s is -1.0, not a
/// speed ...`). A field `T` does not read is skipped, not checked.
pub fn from_slice<T: de::DeserializeOwned>(bytes: &[u8]) -> Result<T, Unread> {
    let st = State::default();
    let mut json = serde_json::Deserializer::from_slice(bytes);
    let read = T::deserialize(De { de: &mut json, st: &st, key: false }).and_then(|t| {
        json.end()?;
        Ok(t)
    });
    match (read, st.bad.into_inner()) {
        (_, Some(bad)) => Err(Unread::OutOfRange(bad)),
        (Ok(t), None) => Ok(t),
        (Err(e), None) => Err(Unread::Json(e)),
    }
}

/// Where the parse is: the keys and indices down to the value being read,
/// each key with the unit its name gives.
#[derive(Default)]
struct State<'de> {
    path: RefCell<Vec<Seg<'de>>>,
    /// The key just read, until its value is.
    key: RefCell<Option<Cow<'de, str>>>,
    /// The first number out of range, in words.
    bad: RefCell<Option<String>>,
}

enum Seg<'de> {
    Index(usize),
    Key(Cow<'de, str>, Option<Unit>),
}

impl State<'_> {
    /// The unit of the value being read: its key's, else the nearest
    /// enclosing key's that gives one, else any number.
    fn unit(&self) -> Unit {
        let path = self.path.borrow();
        (path.iter().rev())
            .find_map(|s| match s {
                Seg::Key(_, u) => *u,
                Seg::Index(_) => None,
            })
            .unwrap_or(ANY)
    }

    /// `x` (shown as `shown`) checked against the current unit; out of
    /// range, the error to stop the parse with (its words kept here).
    fn check<E: de::Error>(&self, x: f64, shown: impl fmt::Display) -> Result<(), E> {
        let unit = self.unit();
        if x.is_finite() && x >= unit.min && x <= unit.max {
            return Ok(());
        }
        let mut at = String::new();
        for seg in self.path.borrow().iter() {
            match seg {
                Seg::Index(i) => {
                    let _ = write!(at, "[{i}]");
                }
                Seg::Key(k, _) => {
                    if !at.is_empty() {
                        at.push('.');
                    }
                    at.push_str(&crate::escape::terminal(k));
                }
            }
        }
        let said = format!("{at} is {shown}, not {}", unit.what);
        self.bad.borrow_mut().get_or_insert(said);
        Err(E::custom("a number out of its unit's range"))
    }
}

/// serde_json's deserializer (or a part of it), cleaning and checking
/// what it hands on; `key`: it reads a map's key (kept for the path).
struct De<'s, 'de, D> {
    de: D,
    st: &'s State<'de>,
    key: bool,
}

macro_rules! forward {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
            self.de.$method(Vis { v, st: self.st, key: self.key })
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for De<'_, 'de, D> {
    type Error = D::Error;

    forward!(deserialize_any deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32
        deserialize_i64 deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64
        deserialize_f32 deserialize_f64 deserialize_char deserialize_str deserialize_string
        deserialize_bytes deserialize_byte_buf deserialize_option deserialize_unit
        deserialize_seq deserialize_map deserialize_identifier deserialize_ignored_any);

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_unit_struct(name, Vis { v, st: self.st, key: self.key })
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_newtype_struct(name, Vis { v, st: self.st, key: self.key })
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_tuple(len, Vis { v, st: self.st, key: self.key })
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_tuple_struct(name, len, Vis { v, st: self.st, key: self.key })
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_struct(name, fields, Vis { v, st: self.st, key: self.key })
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_enum(name, variants, Vis { v, st: self.st, key: self.key })
    }
}

/// A visitor handed each value: strings cleaned, numbers checked (not a
/// map's keys: a number there is a name), the parts of a map, a list or
/// an enum read through [`De`] again.
struct Vis<'s, 'de, V> {
    v: V,
    st: &'s State<'de>,
    key: bool,
}

impl<'de, V: Visitor<'de>> Vis<'_, 'de, V> {
    /// A map key seen: kept (cleaned) for its value's path and unit. Made
    /// only for a key (a value's string costs nothing here).
    fn keep(&self, k: impl FnOnce() -> Cow<'de, str>) {
        if self.key {
            *self.st.key.borrow_mut() = Some(k());
        }
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Vis<'_, 'de, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.v.expecting(f)
    }

    fn visit_bool<E: de::Error>(self, x: bool) -> Result<V::Value, E> {
        self.v.visit_bool(x)
    }

    fn visit_i64<E: de::Error>(self, x: i64) -> Result<V::Value, E> {
        if !self.key {
            self.st.check(x as f64, x)?;
        }
        self.v.visit_i64(x)
    }

    fn visit_u64<E: de::Error>(self, x: u64) -> Result<V::Value, E> {
        if !self.key {
            self.st.check(x as f64, x)?;
        }
        self.v.visit_u64(x)
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<V::Value, E> {
        if !self.key {
            let shown =
                serde_json::Number::from_f64(x).map_or_else(|| x.to_string(), |n| n.to_string());
            self.st.check(x, shown)?;
        }
        self.v.visit_f64(x)
    }

    fn visit_str<E: de::Error>(self, x: &str) -> Result<V::Value, E> {
        let clean = crate::escape::terminal_cow(x);
        self.keep(|| Cow::Owned(clean.to_string()));
        match clean {
            Cow::Borrowed(x) => self.v.visit_str(x),
            Cow::Owned(c) => self.v.visit_string(c),
        }
    }

    fn visit_borrowed_str<E: de::Error>(self, x: &'de str) -> Result<V::Value, E> {
        let clean = crate::escape::terminal_cow(x);
        self.keep(|| clean.clone());
        match clean {
            Cow::Borrowed(x) => self.v.visit_borrowed_str(x),
            Cow::Owned(c) => self.v.visit_string(c),
        }
    }

    fn visit_string<E: de::Error>(self, x: String) -> Result<V::Value, E> {
        let x = match crate::escape::terminal_cow(&x) {
            Cow::Borrowed(_) => x,
            Cow::Owned(c) => c,
        };
        self.keep(|| Cow::Owned(x.clone()));
        self.v.visit_string(x)
    }

    fn visit_bytes<E: de::Error>(self, x: &[u8]) -> Result<V::Value, E> {
        self.v.visit_bytes(x)
    }

    fn visit_borrowed_bytes<E: de::Error>(self, x: &'de [u8]) -> Result<V::Value, E> {
        self.v.visit_borrowed_bytes(x)
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.v.visit_none()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.v.visit_some(De { de: d, st: self.st, key: self.key })
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.v.visit_unit()
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.v.visit_newtype_struct(De { de: d, st: self.st, key: self.key })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.v.visit_seq(Seq { seq, st: self.st, index: 0 })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.v.visit_map(Map { map, st: self.st })
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.v.visit_enum(Enum { data, st: self.st })
    }
}

/// A seed whose value is read through [`De`].
struct Seed<'s, 'de, S> {
    seed: S,
    st: &'s State<'de>,
    key: bool,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<'_, 'de, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(De { de: d, st: self.st, key: self.key })
    }
}

/// A list: each item read at its index.
struct Seq<'s, 'de, A> {
    seq: A,
    st: &'s State<'de>,
    index: usize,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Seq<'_, 'de, A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.st.path.borrow_mut().push(Seg::Index(self.index));
        let got = self.seq.next_element_seed(Seed { seed, st: self.st, key: false });
        self.st.path.borrow_mut().pop();
        self.index += 1;
        got
    }

    fn size_hint(&self) -> Option<usize> {
        self.seq.size_hint()
    }
}

/// A map: each value read under its key.
struct Map<'s, 'de, A> {
    map: A,
    st: &'s State<'de>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Map<'_, 'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.map.next_key_seed(Seed { seed, st: self.st, key: true })
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        let key = self.st.key.borrow_mut().take().unwrap_or_default();
        let unit = unit_of(&key);
        self.st.path.borrow_mut().push(Seg::Key(key, unit));
        let got = self.map.next_value_seed(Seed { seed, st: self.st, key: false });
        self.st.path.borrow_mut().pop();
        got
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// An enum: its variant's name as it is, its content read through [`De`].
struct Enum<'s, 'de, A> {
    data: A,
    st: &'s State<'de>,
}

impl<'s, 'de, A: EnumAccess<'de>> EnumAccess<'de> for Enum<'s, 'de, A> {
    type Error = A::Error;
    type Variant = Enum<'s, 'de, A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Self::Variant), A::Error> {
        let (v, data) = self.data.variant_seed(Seed { seed, st: self.st, key: false })?;
        Ok((v, Enum { data, st: self.st }))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Enum<'_, 'de, A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.data.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.data.newtype_variant_seed(Seed { seed, st: self.st, key: false })
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, A::Error> {
        self.data.tuple_variant(len, Vis { v, st: self.st, key: false })
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, A::Error> {
        self.data.struct_variant(fields, Vis { v, st: self.st, key: false })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn clean(v: Value) -> Result<Value, String> {
        from_slice::<Value>(v.to_string().as_bytes()).map_err(|e| match e {
            Unread::OutOfRange(s) => s,
            Unread::Json(e) => panic!("{e}"),
        })
    }

    #[test]
    fn numbers_out_of_their_units_range_are_named_and_strings_cleaned() {
        let v = serde_json::json!({"host": "a\u{1b}]0;x\u{7}", "passes": [{"disks": [
            {"mb_per_s": 150.0, "latency_us": {"p50": 100.0}, "hottest_c": -5},
            {"mb_per_s": -1.0}]}]});
        let e = clean(v.clone()).unwrap_err();
        assert_eq!(e, "passes[0].disks[1].mb_per_s is -1.0, not a speed (0 to 1000000 MB/s)");
        let mut fine = v;
        fine["passes"][0]["disks"][1]["mb_per_s"] = 3.into();
        assert_eq!(clean(fine).unwrap()["host"], "a\\x1b]0;x\\x07");
        let e = clean(serde_json::json!({"summary": {"elapsed_s": 1e308}})).unwrap_err();
        assert!(e.starts_with("summary.elapsed_s is 1"), "{e}");
        assert!(e.ends_with("not a time (0 to 1e10 s)") && e.len() < 80, "{e}");
        let lat = clean(serde_json::json!({"latency_us": {"max": -3}})).unwrap_err();
        assert_eq!(lat, "latency_us.max is -3, not a latency (0 to 1e13 µs or ms)");
        let fine = serde_json::json!({"bytes": 20_000_000_000_000u64, "pct_of_peers": 135.2});
        assert_eq!(clean(fine.clone()), Ok(fine));
        // Many disks together read more than one can: 256 memory-backed
        // disks' serial sum is a speed, one disk at that speed is not.
        let many = serde_json::json!({"passes": [{"aggregate_mb_per_s": 2958751.0}],
            "summary": {"serial_sum_mb_per_s": 2958751.0, "parallel_mb_per_s": 2.0e6}});
        assert_eq!(clean(many.clone()), Ok(many));
        let one = clean(serde_json::json!({"disks": [{"mb_per_s": 2958751.0}]})).unwrap_err();
        assert!(one.ends_with("not a speed (0 to 1000000 MB/s)"), "{one}");
        let e = clean(serde_json::json!({"aggregate_mb_per_s": 2e9})).unwrap_err();
        assert!(e.ends_with("not a speed of disks together (0 to 1e9 MB/s)"), "{e}");
        // A key with an escape in it is shown cleaned in the path.
        let e = clean(serde_json::json!({"a\u{1b}b": [{"x_s": -2}]})).unwrap_err();
        assert_eq!(e, "a\\x1bb[0].x_s is -2, not a time (0 to 1e10 s)");
    }

    #[test]
    fn a_typed_result_is_cleaned_as_it_is_read_and_a_field_it_skips_is_not_checked() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct Row {
            path: String,
            mb_per_s: f64,
            tags: Vec<String>,
            note: Option<String>,
        }
        let text = r#"{"path": "/dev/sd\u001b[2Ja", "mb_per_s": 180.5, "tags": ["ok\u0007"],
            "note": "x", "unread_s": -5}"#;
        let row: Row = from_slice(text.as_bytes()).map_err(|e| format!("{e:?}")).unwrap();
        assert_eq!(
            row,
            Row {
                path: "/dev/sd\\x1b[2Ja".into(),
                mb_per_s: 180.5,
                tags: vec!["ok\\x07".into()],
                note: Some("x".into()),
            }
        );
        let bad = from_slice::<Row>(br#"{"path": "a", "mb_per_s": -1, "tags": [], "note": null}"#);
        assert!(
            matches!(bad, Err(Unread::OutOfRange(ref s)) if s == "mb_per_s is -1, not a speed (0 to 1000000 MB/s)"),
            "{bad:?}"
        );
        let shape = from_slice::<Row>(br#"{"path": 3}"#);
        assert!(matches!(shape, Err(Unread::Json(_))), "{shape:?}");
    }
}

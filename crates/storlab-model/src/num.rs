//! A catalog number with its source. Every vendor figure in a catalog file is
//! either a bare number (its entry's `src` is its source) or a table
//! `{ value = 5.4e6, src = "ec2ug-gp", verified = false }`. Units live in the
//! field names (`size_gib`, `iops`, `mib_s`), as STYLE.md asks.

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Num {
    pub value: f64,
    /// Key into the catalog's `[source.*]` tables; `None` means "the entry's
    /// own `src`".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub src: Option<String>,
    /// False where no vendor source was found (UNVERIFIED in the reference).
    pub verified: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Num {
    pub fn new(value: f64) -> Self {
        Num { value, src: None, verified: true, note: None }
    }
    pub fn get(&self) -> f64 {
        self.value
    }
}

impl From<f64> for Num {
    fn from(v: f64) -> Self {
        Num::new(v)
    }
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number, or a table { value = <number>, src = \"<source key>\", verified = <bool> }")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                Ok(Num::new(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num::new(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
                if v.is_finite() {
                    Ok(Num::new(v))
                } else {
                    Err(E::custom("a catalog number must be finite"))
                }
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Num, A::Error> {
                let mut out = Num::new(f64::NAN);
                let mut have_value = false;
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "value" => {
                            out.value = map.next_value::<f64>()?;
                            have_value = true;
                        }
                        "src" => out.src = Some(map.next_value()?),
                        "verified" => out.verified = map.next_value()?,
                        "note" => out.note = Some(map.next_value()?),
                        other => {
                            return Err(de::Error::unknown_field(other, &["value", "src", "verified", "note"]))
                        }
                    }
                }
                if !have_value {
                    return Err(de::Error::missing_field("value"));
                }
                Ok(out)
            }
        }
        d.deserialize_any(V)
    }
}

//! Finding the line and column of an item of a YAML document by its path
//! (`perf_domains[1].opps[3]`), for validation errors.
//!
//! serde_yaml does not expose spans, but it stamps an error raised while deserializing a
//! node with that node's start position. [`locate`] walks the document along the path and
//! raises a marker error at the target node, then reads the position off the error.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, Visitor};

/// One step of a path into the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    /// A mapping key.
    Key(String),
    /// A sequence index.
    Index(usize),
}

/// Render a path as `perf_domains[1].opps[3]`.
pub(crate) fn path_string(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(i) => {
                s.push_str(&format!("[{i}]"));
            }
        }
    }
    s
}

const MARKER: &str = "\u{1}hetsched-locate\u{1}";

/// The 1-based (line, column) of the node at `path`, or of its nearest existing ancestor.
pub(crate) fn locate(text: &str, path: &[Seg]) -> Option<(usize, usize)> {
    for n in (0..=path.len()).rev() {
        if let Some(pos) = locate_exact(text, &path[..n]) {
            return Some(pos);
        }
    }
    None
}

fn locate_exact(text: &str, path: &[Seg]) -> Option<(usize, usize)> {
    let de = serde_yaml::Deserializer::from_str(text);
    match (Locate { path }).deserialize(de) {
        Err(e) if e.to_string().contains(MARKER) => e.location().map(|l| (l.line(), l.column())),
        _ => None,
    }
}

struct Locate<'a> {
    path: &'a [Seg],
}

impl<'de> DeserializeSeed<'de> for Locate<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl Locate<'_> {
    fn leaf<E: de::Error>(&self) -> Result<(), E> {
        if self.path.is_empty() {
            Err(E::custom(MARKER))
        } else {
            Ok(())
        }
    }
}

impl<'de> Visitor<'de> for Locate<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML node")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.leaf()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.leaf()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.leaf()
    }
    fn visit_i128<E: de::Error>(self, _: i128) -> Result<(), E> {
        self.leaf()
    }
    fn visit_u128<E: de::Error>(self, _: u128) -> Result<(), E> {
        self.leaf()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.leaf()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.leaf()
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.leaf()
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.leaf()
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        self.leaf()
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.leaf()?;
        let want = match self.path.first() {
            Some(Seg::Index(i)) => Some(*i),
            _ => None,
        };
        let mut i = 0usize;
        loop {
            if Some(i) == want {
                let rest = Locate {
                    path: &self.path[1..],
                };
                if seq.next_element_seed(rest)?.is_none() {
                    break;
                }
            } else if seq.next_element::<IgnoredAny>()?.is_none() {
                break;
            }
            i += 1;
        }
        Ok(())
    }
    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.leaf()?;
        let want = match self.path.first() {
            Some(Seg::Key(k)) => Some(k.as_str()),
            _ => None,
        };
        while let Some(key) = map.next_key::<serde_yaml::Value>()? {
            let hit = matches!((&key, want), (serde_yaml::Value::String(s), Some(w)) if s == w);
            if hit {
                map.next_value_seed(Locate {
                    path: &self.path[1..],
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_block_and_flow_nodes() {
        let text = "a: 1\nlist:\n  - {x: 1, y: [5, 6]}\n  - x: 2\n    y: 3\n";
        let p = |v: &[Seg]| locate(text, v);
        assert_eq!(p(&[Seg::Key("a".into())]), Some((1, 4)));
        assert_eq!(
            p(&[
                Seg::Key("list".into()),
                Seg::Index(0),
                Seg::Key("y".into()),
                Seg::Index(1)
            ]),
            Some((3, 19))
        );
        assert_eq!(
            p(&[Seg::Key("list".into()), Seg::Index(1), Seg::Key("y".into())]),
            Some((5, 8))
        );
        // A missing key falls back to the nearest ancestor.
        assert_eq!(
            p(&[
                Seg::Key("list".into()),
                Seg::Index(1),
                Seg::Key("zz".into())
            ]),
            Some((4, 5))
        );
        assert_eq!(path_string(&[Seg::Key("a".into()), Seg::Index(2)]), "a[2]");
    }
}

//! Element types and value types (§1.1), and the textual type notation `[2][3]i32`.

use std::fmt;

pub use runic_prim::PrimType;

/// The 4-byte ASCII tag of the binary format: the type name right-aligned, space-padded.
pub fn binary_tag(t: PrimType) -> [u8; 4] {
    let mut tag = [b' '; 4];
    let name = t.name().as_bytes();
    tag[4 - name.len()..].copy_from_slice(name);
    tag
}

/// Inverse of [`binary_tag`].
pub fn from_binary_tag(tag: &[u8]) -> Option<PrimType> {
    PrimType::ALL.into_iter().find(|t| binary_tag(*t) == tag)
}

/// The type of a data value: element type and rank, each dimension optionally known.
/// `dims.len()` is the rank; a scalar has no dims.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ValueType {
    pub elem: PrimType,
    pub dims: Vec<Option<usize>>,
}

impl ValueType {
    pub fn scalar(elem: PrimType) -> ValueType {
        ValueType {
            elem,
            dims: Vec::new(),
        }
    }

    /// A type with every dimension known.
    pub fn with_shape(elem: PrimType, shape: &[usize]) -> ValueType {
        ValueType {
            elem,
            dims: shape.iter().map(|&d| Some(d)).collect(),
        }
    }

    /// A type of the given rank with no dimension known (`[][]f32`).
    pub fn of_rank(elem: PrimType, rank: usize) -> ValueType {
        ValueType {
            elem,
            dims: vec![None; rank],
        }
    }

    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// The shape, if every dimension is known.
    pub fn known_shape(&self) -> Option<Vec<usize>> {
        self.dims.iter().copied().collect()
    }

    /// Same element type and rank (dimensions are ignored).
    pub fn same_elem_and_rank(&self, other: &ValueType) -> bool {
        self.elem == other.elem && self.rank() == other.rank()
    }

    /// The type written with every dimension left unknown: `[][]f32`.
    pub fn rank_only_string(&self) -> String {
        format!("{}{}", "[]".repeat(self.rank()), self.elem)
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in &self.dims {
            match d {
                Some(n) => write!(f, "[{n}]")?,
                None => f.write_str("[]")?,
            }
        }
        write!(f, "{}", self.elem)
    }
}

/// Parses a type as written in test blocks and `dataset -g`: `[2][3]i32`, `[]f32`, `i64`.
/// Whitespace around the whole text and between the brackets is allowed.
pub fn parse_value_type(s: &str) -> Result<ValueType, String> {
    let mut rest = s.trim();
    let mut dims = Vec::new();
    while let Some(after) = rest.strip_prefix('[') {
        let close = after
            .find(']')
            .ok_or_else(|| format!("invalid type `{}`: missing `]`", s.trim()))?;
        let inner = after[..close].trim();
        if inner.is_empty() {
            dims.push(None);
        } else {
            let digits: String = inner.chars().filter(|&c| c != '_').collect();
            if !digits.bytes().all(|b| b.is_ascii_digit()) || inner.starts_with('_') {
                return Err(format!(
                    "invalid type `{}`: `{inner}` is not a dimension size",
                    s.trim()
                ));
            }
            let n = digits.parse::<usize>().map_err(|_| {
                format!(
                    "invalid type `{}`: dimension `{inner}` is too large",
                    s.trim()
                )
            })?;
            dims.push(Some(n));
        }
        rest = after[close + 1..].trim_start();
    }
    let elem = PrimType::from_name(rest).ok_or_else(|| {
        if rest.is_empty() {
            format!("invalid type `{}`: missing element type", s.trim())
        } else {
            format!("invalid type `{}`: unknown element type `{rest}`", s.trim())
        }
    })?;
    Ok(ValueType { elem, dims })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_tags_sizes() {
        for t in PrimType::ALL {
            assert_eq!(PrimType::from_name(t.name()), Some(t));
            assert_eq!(from_binary_tag(&binary_tag(t)), Some(t));
        }
        assert_eq!(&binary_tag(PrimType::I32), b" i32");
        assert_eq!(&binary_tag(PrimType::U8), b"  u8");
        assert_eq!(&binary_tag(PrimType::Bool), b"bool");
        assert_eq!(PrimType::F16.size_bytes(), 2);
        assert_eq!(PrimType::from_name("i128"), None);
    }

    #[test]
    fn parse_and_display_types() {
        let t = parse_value_type("[2][3]i32").unwrap();
        assert_eq!(t, ValueType::with_shape(PrimType::I32, &[2, 3]));
        assert_eq!(t.to_string(), "[2][3]i32");
        let t = parse_value_type(" [2][]f32 ").unwrap();
        assert_eq!(t.to_string(), "[2][]f32");
        assert_eq!(t.rank_only_string(), "[][]f32");
        assert_eq!(
            parse_value_type("i64").unwrap(),
            ValueType::scalar(PrimType::I64)
        );
        assert_eq!(
            parse_value_type("[1_000]u8").unwrap().dims,
            vec![Some(1000)]
        );
        assert!(parse_value_type("[2]").is_err());
        assert!(parse_value_type("[x]i32").is_err());
        assert!(parse_value_type("[2i32").is_err());
        assert!(parse_value_type("int").is_err());
        assert!(parse_value_type("[-1]i32").is_err());
        assert!(parse_value_type("[99999999999999999999999]i32").is_err());
    }
}

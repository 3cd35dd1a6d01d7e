//! Element types and value types (§1.1), and the textual type notation `[2][3]i32`.

use std::fmt;

/// A primitive element type of a data value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ElemType {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    F32,
    F64,
    Bool,
}

impl ElemType {
    /// Every element type, in a fixed order (useful for tests and tables).
    pub const ALL: [ElemType; 12] = [
        ElemType::I8,
        ElemType::I16,
        ElemType::I32,
        ElemType::I64,
        ElemType::U8,
        ElemType::U16,
        ElemType::U32,
        ElemType::U64,
        ElemType::F16,
        ElemType::F32,
        ElemType::F64,
        ElemType::Bool,
    ];

    /// The name as written in source and data: `i32`, `f16`, `bool`.
    pub fn name(self) -> &'static str {
        match self {
            ElemType::I8 => "i8",
            ElemType::I16 => "i16",
            ElemType::I32 => "i32",
            ElemType::I64 => "i64",
            ElemType::U8 => "u8",
            ElemType::U16 => "u16",
            ElemType::U32 => "u32",
            ElemType::U64 => "u64",
            ElemType::F16 => "f16",
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
            ElemType::Bool => "bool",
        }
    }

    /// Inverse of [`ElemType::name`].
    pub fn from_name(s: &str) -> Option<ElemType> {
        ElemType::ALL.into_iter().find(|t| t.name() == s)
    }

    /// Size of one element in bytes (also in the binary format).
    pub fn size_bytes(self) -> usize {
        match self {
            ElemType::I8 | ElemType::U8 | ElemType::Bool => 1,
            ElemType::I16 | ElemType::U16 | ElemType::F16 => 2,
            ElemType::I32 | ElemType::U32 | ElemType::F32 => 4,
            ElemType::I64 | ElemType::U64 | ElemType::F64 => 8,
        }
    }

    /// The 4-byte ASCII tag of the binary format: the name right-aligned, space-padded.
    pub fn binary_tag(self) -> [u8; 4] {
        let mut tag = [b' '; 4];
        let name = self.name().as_bytes();
        tag[4 - name.len()..].copy_from_slice(name);
        tag
    }

    /// Inverse of [`ElemType::binary_tag`].
    pub fn from_binary_tag(tag: &[u8]) -> Option<ElemType> {
        ElemType::ALL.into_iter().find(|t| t.binary_tag() == tag)
    }

    pub fn is_signed_int(self) -> bool {
        matches!(
            self,
            ElemType::I8 | ElemType::I16 | ElemType::I32 | ElemType::I64
        )
    }

    pub fn is_unsigned_int(self) -> bool {
        matches!(
            self,
            ElemType::U8 | ElemType::U16 | ElemType::U32 | ElemType::U64
        )
    }

    pub fn is_int(self) -> bool {
        self.is_signed_int() || self.is_unsigned_int()
    }

    pub fn is_float(self) -> bool {
        matches!(self, ElemType::F16 | ElemType::F32 | ElemType::F64)
    }

    /// Bit width of an integer or float type (8 for bool).
    pub fn bits(self) -> u32 {
        self.size_bytes() as u32 * 8
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The type of a data value: element type and rank, each dimension optionally known.
/// `dims.len()` is the rank; a scalar has no dims.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ValueType {
    pub elem: ElemType,
    pub dims: Vec<Option<usize>>,
}

impl ValueType {
    pub fn scalar(elem: ElemType) -> ValueType {
        ValueType {
            elem,
            dims: Vec::new(),
        }
    }

    /// A type with every dimension known.
    pub fn with_shape(elem: ElemType, shape: &[usize]) -> ValueType {
        ValueType {
            elem,
            dims: shape.iter().map(|&d| Some(d)).collect(),
        }
    }

    /// A type of the given rank with no dimension known (`[][]f32`).
    pub fn of_rank(elem: ElemType, rank: usize) -> ValueType {
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
    let elem = ElemType::from_name(rest).ok_or_else(|| {
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
        for t in ElemType::ALL {
            assert_eq!(ElemType::from_name(t.name()), Some(t));
            assert_eq!(ElemType::from_binary_tag(&t.binary_tag()), Some(t));
        }
        assert_eq!(&ElemType::I32.binary_tag(), b" i32");
        assert_eq!(&ElemType::U8.binary_tag(), b"  u8");
        assert_eq!(&ElemType::Bool.binary_tag(), b"bool");
        assert_eq!(ElemType::F16.size_bytes(), 2);
        assert_eq!(ElemType::from_name("i128"), None);
    }

    #[test]
    fn parse_and_display_types() {
        let t = parse_value_type("[2][3]i32").unwrap();
        assert_eq!(t, ValueType::with_shape(ElemType::I32, &[2, 3]));
        assert_eq!(t.to_string(), "[2][3]i32");
        let t = parse_value_type(" [2][]f32 ").unwrap();
        assert_eq!(t.to_string(), "[2][]f32");
        assert_eq!(t.rank_only_string(), "[][]f32");
        assert_eq!(
            parse_value_type("i64").unwrap(),
            ValueType::scalar(ElemType::I64)
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

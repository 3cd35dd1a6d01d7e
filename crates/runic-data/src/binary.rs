//! The binary value format (§4): reading one value from a byte stream and writing values.

use crate::text::MAX_RANK;
use crate::types::PrimType;
use crate::types::{binary_tag, from_binary_tag};
use crate::value::{shape_product, Array, Value};
use crate::Buffer;
use half::f16;
use runic_prim::Prim;

const VERSION: u8 = 2;
const HEADER: usize = 7;

/// Writes a data value in the binary format, appending to `out`. Non-data values are errors.
pub fn write_binary(v: &Value, out: &mut Vec<u8>) -> Result<(), String> {
    let (shape, elem): (&[usize], PrimType) = match v {
        Value::Scalar(s) => (&[], s.ty()),
        Value::Array(a) => (&a.shape, a.elem_type()),
        _ => return Err("only scalars and arrays of primitive type can be written".into()),
    };
    if shape.len() > u8::MAX as usize {
        return Err(format!(
            "arrays of rank {} cannot be written in the binary format",
            shape.len()
        ));
    }
    if matches!(v, Value::Array(a) if !a.is_valid()) {
        return Err("invalid array: element count does not match its shape".into());
    }
    out.reserve(HEADER + 8 * shape.len() + elem.size_bytes() * v_len(v));
    out.push(b'b');
    out.push(VERSION);
    out.push(shape.len() as u8);
    out.extend_from_slice(&binary_tag(elem));
    for &d in shape {
        out.extend_from_slice(&(d as u64).to_le_bytes());
    }
    match v {
        Value::Scalar(s) => write_scalar(*s, out),
        Value::Array(a) => write_elements(&a.data, out),
        _ => {}
    }
    Ok(())
}

fn v_len(v: &Value) -> usize {
    match v {
        Value::Array(a) => a.len(),
        _ => 1,
    }
}

fn write_scalar(s: Prim, out: &mut Vec<u8>) {
    match s {
        Prim::I8(x) => out.extend_from_slice(&x.to_le_bytes()),
        Prim::I16(x) => out.extend_from_slice(&x.to_le_bytes()),
        Prim::I32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Prim::I64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Prim::U8(x) => out.push(x),
        Prim::U16(x) => out.extend_from_slice(&x.to_le_bytes()),
        Prim::U32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Prim::U64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Prim::F16(x) => out.extend_from_slice(&x.to_le_bytes()),
        Prim::F32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Prim::F64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Prim::Bool(x) => out.push(x as u8),
    }
}

fn write_elements(data: &Buffer, out: &mut Vec<u8>) {
    macro_rules! each_le {
        ($v:expr) => {
            for x in $v {
                out.extend_from_slice(&x.to_le_bytes());
            }
        };
    }
    match data {
        Buffer::U8(v) => out.extend_from_slice(v),
        Buffer::Bool(v) => out.extend(v.iter().map(|&b| b as u8)),
        Buffer::I8(v) => out.extend(v.iter().map(|&b| b as u8)),
        Buffer::I16(v) => each_le!(v),
        Buffer::I32(v) => each_le!(v),
        Buffer::I64(v) => each_le!(v),
        Buffer::U16(v) => each_le!(v),
        Buffer::U32(v) => each_le!(v),
        Buffer::U64(v) => each_le!(v),
        Buffer::F16(v) => each_le!(v),
        Buffer::F32(v) => each_le!(v),
        Buffer::F64(v) => each_le!(v),
    }
}

/// A binary-format error: byte offset and message.
pub(crate) type BinaryError = (usize, String);

/// Reads one binary value starting at `start` (where the `b` is); returns it and the position
/// just after it.
pub(crate) fn read_binary(bytes: &[u8], start: usize) -> Result<(Value, usize), BinaryError> {
    let header = bytes.get(start..start + HEADER).ok_or_else(|| {
        (
            start,
            format!(
                "truncated binary value: the header needs {HEADER} bytes, but only {} remain",
                bytes.len() - start
            ),
        )
    })?;
    if header[1] != VERSION {
        return Err((
            start + 1,
            format!(
                "unsupported binary format version {} (expected {VERSION})",
                header[1]
            ),
        ));
    }
    let rank = header[2] as usize;
    if rank > MAX_RANK {
        return Err((
            start + 2,
            format!("binary value has rank {rank}; at most {MAX_RANK} is supported"),
        ));
    }
    let tag = &header[3..7];
    let elem = from_binary_tag(tag).ok_or_else(|| {
        (
            start + 3,
            format!(
                "unknown binary type tag {:?}",
                String::from_utf8_lossy(tag).into_owned()
            ),
        )
    })?;
    let dims_start = start + HEADER;
    let dims_bytes = bytes
        .get(dims_start..dims_start + 8 * rank)
        .ok_or_else(|| {
            (
                dims_start,
                format!(
                    "truncated binary value: {rank} dimensions need {} bytes, but only {} remain",
                    8 * rank,
                    bytes.len() - dims_start
                ),
            )
        })?;
    let mut shape = Vec::with_capacity(rank);
    for chunk in dims_bytes.chunks_exact(8) {
        let d = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        let d =
            usize::try_from(d).map_err(|_| (dims_start, format!("dimension {d} is too large")))?;
        shape.push(d);
    }
    let data_start = dims_start + 8 * rank;
    let n = shape_product(&shape)
        .filter(|&n| u64::try_from(n).is_ok())
        .ok_or_else(|| {
            (
                dims_start,
                "the product of the dimensions overflows 64 bits".to_string(),
            )
        })?;
    let size = n.checked_mul(elem.size_bytes()).ok_or_else(|| {
        (
            dims_start,
            format!("{n} elements of type {elem} are too many to read"),
        )
    })?;
    let remaining = bytes.len() - data_start;
    if remaining < size {
        return Err((
            data_start,
            format!(
                "truncated binary value: {n} elements of type {elem} need {size} bytes, but only {remaining} remain"
            ),
        ));
    }
    let raw = &bytes[data_start..data_start + size];
    let data = decode_elements(elem, raw);
    let end = data_start + size;
    let value = if rank == 0 {
        Value::Scalar(data.get(0))
    } else {
        Value::Array(Array { shape, data })
    };
    Ok((value, end))
}

/// Decodes little-endian elements of type `elem` (`raw.len()` is a multiple of the size).
fn decode_elements(elem: PrimType, raw: &[u8]) -> Buffer {
    macro_rules! decode {
        ($variant:ident, $t:ty, $n:expr) => {
            Buffer::$variant(
                raw.chunks_exact($n)
                    .map(|c| <$t>::from_le_bytes(c.try_into().unwrap_or([0; $n])))
                    .collect(),
            )
        };
    }
    match elem {
        PrimType::I8 => Buffer::I8(raw.iter().map(|&b| b as i8).collect()),
        PrimType::U8 => Buffer::U8(raw.to_vec().into()),
        PrimType::Bool => Buffer::Bool(raw.iter().map(|&b| b != 0).collect()),
        PrimType::I16 => decode!(I16, i16, 2),
        PrimType::I32 => decode!(I32, i32, 4),
        PrimType::I64 => decode!(I64, i64, 8),
        PrimType::U16 => decode!(U16, u16, 2),
        PrimType::U32 => decode!(U32, u32, 4),
        PrimType::U64 => decode!(U64, u64, 8),
        PrimType::F16 => decode!(F16, f16, 2),
        PrimType::F32 => decode!(F32, f32, 4),
        PrimType::F64 => decode!(F64, f64, 8),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn bin(v: &Value) -> String {
        let mut out = Vec::new();
        write_binary(v, &mut out).unwrap();
        let (back, end) = read_binary(&out, 0).unwrap();
        assert_eq!(end, out.len());
        assert!(back.bit_eq(v));
        hex(&out)
    }

    #[test]
    fn examples_of_4_1() {
        assert_eq!(
            bin(&Value::Scalar(Prim::I32(5))),
            "62 02 00 20 69 33 32 05 00 00 00"
        );
        assert_eq!(
            bin(&Array::from_f32(vec![2], vec![1.0, -2.5]).unwrap().into()),
            "62 02 01 20 66 33 32 02 00 00 00 00 00 00 00 00 00 80 3f 00 00 20 c0"
        );
        assert_eq!(
            bin(&Array::from_bool(vec![2], vec![true, false]).unwrap().into()),
            "62 02 01 62 6f 6f 6c 02 00 00 00 00 00 00 00 01 00"
        );
        assert_eq!(
            bin(&Array::from_u8(vec![2, 2], vec![1, 2, 3, 4]).unwrap().into()),
            "62 02 02 20 20 75 38 02 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 01 02 03 04"
        );
        assert_eq!(
            bin(&Array::from_i64(vec![0, 3], vec![]).unwrap().into()),
            "62 02 02 20 69 36 34 00 00 00 00 00 00 00 00 03 00 00 00 00 00 00 00"
        );
    }

    #[test]
    fn other_element_types() {
        assert_eq!(
            bin(&Value::Scalar(Prim::F16(f16::from_f32(1.0)))),
            "62 02 00 20 66 31 36 00 3c"
        );
        assert_eq!(
            bin(&Value::Scalar(Prim::I16(-2))),
            "62 02 00 20 69 31 36 fe ff"
        );
        assert_eq!(
            bin(&Value::Scalar(Prim::U64(1 << 40))),
            "62 02 00 20 75 36 34 00 00 00 00 00 01 00 00"
        );
        assert_eq!(
            bin(&Value::Scalar(Prim::F64(1.0))),
            "62 02 00 20 66 36 34 00 00 00 00 00 00 f0 3f"
        );
        assert!(write_binary(&Value::Opaque("#<fun>".into()), &mut Vec::new()).is_err());
    }

    #[test]
    fn any_nonzero_byte_is_true() {
        let bytes = [
            0x62, 2, 1, b'b', b'o', b'o', b'l', 3, 0, 0, 0, 0, 0, 0, 0, 0, 7, 1,
        ];
        let (v, _) = read_binary(&bytes, 0).unwrap();
        assert_eq!(
            v,
            Array::from_bool(vec![3], vec![false, true, true])
                .unwrap()
                .into()
        );
    }

    #[test]
    fn errors_carry_offsets() {
        let err = |bytes: &[u8]| read_binary(bytes, 0).unwrap_err();
        assert_eq!(err(b"b\x02\x00 i3").0, 0);
        assert_eq!(err(b"b\x01\x00 i32\x05\x00\x00\x00").0, 1);
        assert_eq!(err(b"b\x02\x21 i32").0, 2);
        assert_eq!(err(b"b\x02\x00 i33\x05\x00\x00\x00").0, 3);
        assert_eq!(err(b"b\x02\x00 i32\x05\x00").0, 7);
        assert_eq!(err(b"b\x02\x01 i32\x05\x00").0, 7);
        let mut huge = b"b\x02\x02 i32".to_vec();
        huge.extend_from_slice(&u64::MAX.to_le_bytes());
        huge.extend_from_slice(&3u64.to_le_bytes());
        assert_eq!(err(&huge).0, 7);
        let mut big = b"b\x02\x01 i64".to_vec();
        big.extend_from_slice(&(u64::MAX / 4).to_le_bytes());
        let (pos, msg) = err(&big);
        assert_eq!(pos, 7);
        assert!(msg.contains("too many"), "{msg}");
    }
}

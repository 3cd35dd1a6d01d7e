//! Property tests: printing and reading back, and binary writing and reading back, give the
//! same value for random values of every element type and ranks 0–3.

use proptest::prelude::*;
use runic_data::*;

/// One element: either a special float-ish value or random bits, reinterpreted per type.
fn scalar_of(elem: PrimType, (pick, bits): (u8, u64)) -> Prim {
    let special = pick == 0;
    let f64_special = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.0,
        0.0,
        1.0,
        0.1,
    ];
    match elem {
        PrimType::I8 => Prim::I8(bits as i8),
        PrimType::I16 => Prim::I16(bits as i16),
        PrimType::I32 => Prim::I32(bits as i32),
        PrimType::I64 => Prim::I64(bits as i64),
        PrimType::U8 => Prim::U8(bits as u8),
        PrimType::U16 => Prim::U16(bits as u16),
        PrimType::U32 => Prim::U32(bits as u32),
        PrimType::U64 => Prim::U64(bits),
        PrimType::Bool => Prim::Bool(bits & 1 == 1),
        PrimType::F16 if special => Prim::F16(f16::from_f64(
            f64_special[bits as usize % f64_special.len()],
        )),
        PrimType::F32 if special => {
            Prim::F32(f64_special[bits as usize % f64_special.len()] as f32)
        }
        PrimType::F64 if special => Prim::F64(f64_special[bits as usize % f64_special.len()]),
        PrimType::F16 => Prim::F16(f16::from_bits(bits as u16)),
        PrimType::F32 => Prim::F32(f32::from_bits(bits as u32)),
        PrimType::F64 => Prim::F64(f64::from_bits(bits)),
    }
}

fn build(elem: PrimType, shape: Vec<usize>, raw: Vec<(u8, u64)>) -> Value {
    if shape.is_empty() {
        return Value::Scalar(scalar_of(elem, raw[0]));
    }
    let n = shape_product(&shape).unwrap();
    let mut data = Buffer::new(elem);
    for &r in &raw[..n] {
        data.push(scalar_of(elem, r));
    }
    Value::Array(Array::new(shape, data).unwrap())
}

fn any_value() -> impl Strategy<Value = Value> {
    (
        0..PrimType::ALL.len(),
        prop::collection::vec(0usize..4, 0..=3),
        prop::collection::vec((0u8..6, any::<u64>()), 27..=27),
    )
        .prop_map(|(t, shape, raw)| build(PrimType::ALL[t], shape, raw))
}

fn rank_hint(v: &Value) -> ValueType {
    let t = v.value_type().unwrap();
    ValueType::of_rank(t.elem, t.rank())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn text_round_trip(v in any_value()) {
        for text in [print_value(&v), print_value_single_line(&v)] {
            let back = read_all(text.as_bytes(), "t", &[]).unwrap();
            prop_assert_eq!(back.len(), 1);
            prop_assert!(back[0].bit_eq(&v), "{} read back as {:?}", text, back[0]);
            prop_assert_eq!(print_value(&back[0]), print_value(&v));
            let hinted = read_all(text.as_bytes(), "t", &[Some(rank_hint(&v))]).unwrap();
            prop_assert!(hinted[0].bit_eq(&v), "{} with hint read back as {:?}", text, hinted[0]);
        }
    }

    #[test]
    fn binary_round_trip(v in any_value()) {
        let mut bytes = Vec::new();
        write_binary(&v, &mut bytes).unwrap();
        let back = read_all(&bytes, "b", &[Some(rank_hint(&v))]).unwrap();
        prop_assert_eq!(back.len(), 1);
        prop_assert!(back[0].bit_eq(&v));
        let mut again = Vec::new();
        write_binary(&back[0], &mut again).unwrap();
        prop_assert_eq!(again, bytes);
    }

    #[test]
    fn mixed_streams(vs in prop::collection::vec((any_value(), any::<bool>()), 0..5)) {
        let mut bytes = Vec::new();
        for (v, binary) in &vs {
            if *binary {
                write_binary(v, &mut bytes).unwrap();
            } else {
                bytes.extend_from_slice(print_value(v).as_bytes());
                bytes.extend_from_slice(b" -- comment\n");
            }
        }
        let back = read_all(&bytes, "m", &[]).unwrap();
        prop_assert_eq!(back.len(), vs.len());
        for (b, (v, _)) in back.iter().zip(&vs) {
            prop_assert!(b.bit_eq(v));
        }
    }
}

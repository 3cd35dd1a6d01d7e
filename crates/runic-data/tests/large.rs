//! Large inputs: reading, printing and comparing must scale linearly. The 10⁷-element version
//! is ignored by default (run with `--release -- --ignored` to time it).

use runic_data::*;
use std::time::Instant;

fn exercise(n: usize) {
    let floats = generate(
        &ValueType::with_shape(PrimType::F32, &[n]),
        1,
        &Bounds::new(),
    )
    .unwrap();
    let ints = generate(
        &ValueType::with_shape(PrimType::I32, &[n / 1000, 1000]),
        2,
        &Bounds::new(),
    )
    .unwrap();
    for v in [floats, ints] {
        let t = Instant::now();
        let text = print_value(&v);
        let printed = t.elapsed();
        let t = Instant::now();
        let back = read_all(text.as_bytes(), "big", &[]).unwrap();
        let read = t.elapsed();
        let t = Instant::now();
        let mut bin = Vec::new();
        write_binary(&v, &mut bin).unwrap();
        let back_bin = read_all(&bin, "big", &[]).unwrap();
        let binary = t.elapsed();
        let t = Instant::now();
        assert!(compare_values(std::slice::from_ref(&v), &back, 5).is_empty());
        let compared = t.elapsed();
        assert!(back_bin[0].bit_eq(&v));
        eprintln!(
            "{}: print {printed:?}, read {read:?}, binary {binary:?}, compare {compared:?}",
            v.value_type().unwrap()
        );
    }
}

#[test]
fn hundred_thousand_elements() {
    exercise(100_000);
}

#[test]
#[ignore]
fn ten_million_elements() {
    exercise(10_000_000);
}

//! Bounded fuzzing of the readers: random bytes and mutated valid streams must give `Ok` or
//! `Err`, never a panic. Whatever is accepted must also print and read back identically.

use runic_data::*;
use std::time::{Duration, Instant};

const SEEDS: &[&[u8]] = &[
    b"-- c\n10i64 [[0.5f32, 1.0f32],\n [2.0f32, -3e2f32]] [true, false]",
    b"[1, 2, 3] empty([0][3]f64) 0x1f32 0b101u8 1_000i16 f32.nan -f64.inf",
    b"[[[1i8, 2], [3, 4]], [[5, 6], [7, 8]]] [empty([0]i32), empty([0]i32)]",
    b"\"ab\\n\" [1.5e-3f16, 2] 255u8 -1u64 1E5",
    b"b\x02\x00 i32\x05\x00\x00\x00",
    b"b\x02\x01 f32\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x3f\x00\x00\x20\xc0 [1]",
    b"b\x02\x02  u8\x02\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x01\x02\x03\x04",
];

/// Bytes that are likely to make interesting text when inserted.
const ALPHABET: &[u8] = b"[](),-+._0123456789abefinuxtrslmpy\" \n\t\\";

fn check(bytes: &[u8], hints: &[Option<ValueType>]) {
    let Ok(values) = read_all(bytes, "fuzz", hints) else {
        return;
    };
    for v in &values {
        let text = print_value(v);
        let back = read_all(text.as_bytes(), "re", &[]).expect("printed value must read back");
        assert!(back.len() == 1 && back[0].bit_eq(v), "{text}");
        let mut bin = Vec::new();
        write_binary(v, &mut bin).expect("data value");
        let back = read_all(&bin, "re", &[]).expect("binary value must read back");
        assert!(back.len() == 1 && back[0].bit_eq(v), "{text}");
    }
}

fn mutate(rng: &mut SplitMix64, input: &mut Vec<u8>) {
    let r = rng.next_u64();
    let len = input.len();
    let pos = if len == 0 { 0 } else { (r >> 8) as usize % len };
    match r % 6 {
        0 if len > 0 => input[pos] = (rng.next_u64() >> 56) as u8,
        1 => input.insert(
            pos,
            ALPHABET[(rng.next_u64() % ALPHABET.len() as u64) as usize],
        ),
        2 if len > 0 => {
            let end = (pos + 1 + (rng.next_u64() % 8) as usize).min(len);
            input.drain(pos..end);
        }
        3 => input.truncate(pos),
        4 if len > 0 => {
            let end = (pos + 1 + (rng.next_u64() % 16) as usize).min(len);
            let chunk = input[pos..end].to_vec();
            let at = (rng.next_u64() % (len as u64 + 1)) as usize;
            input.splice(at..at, chunk);
        }
        _ if len > 0 => input[pos] ^= 1 << (rng.next_u64() % 8),
        _ => input.push(b'['),
    }
}

fn random_hints(rng: &mut SplitMix64) -> Vec<Option<ValueType>> {
    (0..4)
        .map(|_| {
            let r = rng.next_u64();
            (!r.is_multiple_of(3)).then(|| {
                ValueType::of_rank(
                    PrimType::ALL[(r >> 8) as usize % 12],
                    (r >> 16) as usize % 4,
                )
            })
        })
        .collect()
}

#[test]
fn fuzz_readers_for_a_few_seconds() {
    let budget = Duration::from_millis(2500);
    let start = Instant::now();
    let mut rng = SplitMix64::new(0x5eed);
    let mut runs = 0u64;
    while start.elapsed() < budget {
        let mut input = if rng.next_u64().is_multiple_of(4) {
            let n = (rng.next_u64() % 64) as usize;
            (0..n).map(|_| (rng.next_u64() >> 56) as u8).collect()
        } else {
            SEEDS[(rng.next_u64() % SEEDS.len() as u64) as usize].to_vec()
        };
        for _ in 0..=(rng.next_u64() % 6) {
            mutate(&mut rng, &mut input);
        }
        let hints = if rng.next_u64().is_multiple_of(2) {
            Vec::new()
        } else {
            random_hints(&mut rng)
        };
        check(&input, &hints);
        runs += 1;
    }
    eprintln!("fuzz: {runs} inputs");
    assert!(runs > 1000, "only {runs} inputs tried");
}

/// Inputs found while fuzzing or by hand that stress edge cases; kept as regression tests.
#[test]
fn regressions() {
    let cases: &[&[u8]] = &[
        b"empty([9223372036854775807][4][0]i32)",
        b"[empty([0][18446744073709551615]i32)]",
        b"b\x02\x03  u8\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00",
        b"b\x02\x01 f64\xff\xff\xff\xff\xff\xff\xff\x0f",
        b"\xf0\x9f",
        b"\xe2\x80",
        b"-",
        b"--",
        b"0x",
        b"[",
        b"[[",
        b"empty(",
        b"empty([",
        b"\"\\",
        b"\"\\x4",
        b"\"\\99999999999\"",
        b"1e999999999999",
        b"0x10000000000000000000000000000000000000",
    ];
    for &c in cases {
        check(c, &[]);
        check(c, &[Some(ValueType::of_rank(PrimType::F32, 1))]);
        check(c, &[Some(ValueType::of_rank(PrimType::F16, 0))]);
    }
    // Deep nesting is rejected without recursion.
    let deep = "[".repeat(1_000_000);
    assert!(read_all(deep.as_bytes(), "deep", &[]).is_err());
}

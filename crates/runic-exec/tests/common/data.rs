//! Test inputs as text (pseudo-random arrays of every shape the tests need) and results as
//! numbers.

use super::Compiled;

/// Pseudo-random numbers from `seed` (xorshift).
fn xorshift(seed: u64) -> impl Iterator<Item = u64> {
    let mut x = seed.max(1);
    std::iter::repeat_with(move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    })
}

/// `n` pseudo-random integers in `0..m` as a text array of type `t`.
pub fn ints(n: usize, m: u64, t: &str, seed: u64) -> String {
    let xs: Vec<String> = (xorshift(seed).take(n))
        .map(|x| format!("{}{t}", x % m))
        .collect();
    format!("[{}]", xs.join(", "))
}

/// `n` pseudo-random floats in [-1, 1) as a text array of type `t`.
pub fn floats(n: usize, t: &str, seed: u64) -> String {
    let xs: Vec<String> = (xorshift(seed).take(n))
        .map(|x| format!("{}{t}", (x % 2000) as f64 / 1000.0 - 1.0))
        .collect();
    format!("[{}]", xs.join(", "))
}

/// The values of a result as f64s (floats and integers).
pub fn numbers(c: &Compiled, e: &str, input: &str, native: bool) -> Vec<f64> {
    let ex = if native { &c.native } else { &c.evaluator };
    flat_numbers(ex.run_entry(e, super::values(input)).expect("runs"))
}

/// `got` and `want` have the same length and agree within `rel` relative to `want`
/// (absolute below 1); infinities and NaNs only with themselves.
pub fn assert_near(got: &[f64], want: &[f64], rel: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (a, b) in got.iter().zip(want) {
        assert!(
            a == b || a.is_nan() && b.is_nan() || (a - b).abs() <= rel * b.abs().max(1.0),
            "{what}: {a} against {b}"
        );
    }
}

/// The elements of array values as f64s, in order.
pub fn flat_numbers(vs: Vec<runic_data::Value>) -> Vec<f64> {
    let mut out = Vec::new();
    for v in vs {
        if let runic_data::Value::Array(a) = v {
            for i in 0..a.data.len() {
                out.push(a.data.get(i).as_float().unwrap_or(f64::NAN));
            }
        }
    }
    out
}

/// `g` matrices of `n` rows of `m` pseudo-random floats of type `t`, as a text array.
pub fn cube(g: usize, n: usize, m: usize, t: &str, seed: u64) -> String {
    let xs = floats(g * n * m, t, seed);
    let xs: Vec<&str> = xs[1..xs.len() - 1].split(", ").collect();
    let rows: Vec<String> = xs
        .chunks(m)
        .map(|r| format!("[{}]", r.join(", ")))
        .collect();
    let mats: Vec<String> = rows
        .chunks(n)
        .map(|m| format!("[{}]", m.join(", ")))
        .collect();
    format!("[{}]", mats.join(", "))
}

/// `n` rows of `m` pseudo-random floats of type `t`, as a text array.
pub fn matrix(n: usize, m: usize, t: &str, seed: u64) -> String {
    let c = cube(1, n, m, t, seed);
    c[1..c.len() - 1].to_string()
}

/// `n` rows of `m` pseudo-random integers in `0..100` of type `t`, as a text array.
pub fn int_matrix(n: usize, m: usize, t: &str, seed: u64) -> String {
    let xs = ints(n * m, 100, t, seed);
    let xs: Vec<&str> = xs[1..xs.len() - 1].split(", ").collect();
    let rows: Vec<String> = xs
        .chunks(m)
        .map(|r| format!("[{}]", r.join(", ")))
        .collect();
    format!("[{}]", rows.join(", "))
}

/// Rows of the values `vals` picked pseudo-randomly (`n` rows of `m`), as a text array.
pub fn picked_matrix(n: usize, m: usize, vals: &[&str], seed: u64) -> String {
    let idx = ints(n * m, vals.len() as u64, "", seed);
    let idx: Vec<usize> = idx[1..idx.len() - 1]
        .split(", ")
        .map(|s| s.parse().unwrap())
        .collect();
    let rows: Vec<String> = idx
        .chunks(m.max(1))
        .map(|r| {
            let r: Vec<&str> = r.iter().map(|&k| vals[k]).collect();
            format!("[{}]", r.join(", "))
        })
        .collect();
    format!("[{}]", rows.join(", "))
}

//! Expression forms, primitive semantics and intrinsics; expected values computed by hand.
mod common;
use common::*;

#[test]
fn integer_division_and_remainder() {
    assert_eq!(
        ev("(7 / -2, 7 % -2, -7 % 2, -7 / 2)"),
        "(-4i32, -1i32, 1i32, -4i32)"
    );
    assert_eq!(ev("(7 // -2, 7 %% -2, -7 %% 2)"), "(-3i32, 1i32, -1i32)");
    assert_eq!(
        ev("(i32.lowest / -1, i32.lowest % -1)"),
        "(-2147483648i32, 0i32)"
    );
    assert_eq!(ev("(7u8 / 2u8, 7u8 % 2u8)"), "(3u8, 1u8)");
}

#[test]
fn wrap_around() {
    assert_eq!(ev("i32.highest + 1 == i32.lowest"), "true");
    assert_eq!(ev("-(1u8)"), "255u8");
    assert_eq!(ev("i32.abs i32.lowest"), "-2147483648i32");
    assert_eq!(ev("200u8 * 2u8"), "144u8");
    assert_eq!(ev("2i32 ** 31"), "-2147483648i32");
    assert_eq!(ev("3i64 ** 0"), "1i64");
    assert_eq!(ev("0i64 ** 0"), "1i64");
    assert_eq!(ev("256u8"), "0u8");
}

#[test]
fn shifts_and_bits() {
    assert_eq!(
        ev("(1i32 << 4, -16i32 >> 2, 255u8 >> 4u8)"),
        "(16i32, -4i32, 15u8)"
    );
    assert_eq!(
        ev("(1i32 << 40, -1i32 >> 40, 5i32 >> -1)"),
        "(0i32, -1i32, 0i32)"
    );
    assert_eq!(ev("(i32.>>>) (-1) 28"), "15i32");
    assert_eq!(
        ev("(i32.popc 255, i32.clz 1, i32.ctz 8, i32.ctz 0, u8.clz 0)"),
        "(8i32, 31i32, 3i32, 32i32, 8i32)"
    );
    assert_eq!(
        ev("(5 & 3, 5 | 3, 5 ^ 3, !5i32)"),
        "(1i32, 7i32, 6i32, -6i32)"
    );
    assert_eq!(
        ev("(i32.get_bit 2 5, i32.set_bit 1 5 1, u64.mul_hi u64.highest 2)"),
        "(1i32, 7i32, 1u64)"
    );
    assert_eq!(ev("i64.mul_hi (-1) 1"), "-1i64");
}

#[test]
fn integer_errors() {
    assert_eq!(eval_err("1 / (0: i32)"), "division by zero");
    assert_eq!(eval_err("1 %% (0: i64)"), "division by zero");
    assert_eq!(eval_err("2i32 ** (-1)"), "negative exponent");
}

#[test]
fn floats() {
    assert_eq!(ev("-7.5 % 2.0"), "-1.5f64");
    assert_eq!(ev("(1f32 / 0, -1f32 / 0)"), "(f32.inf, -f32.inf)");
    assert_eq!(ev("f64.isnan (0f64 / 0)"), "true");
    assert_eq!(
        ev("(f32.max f32.nan 1, f32.min 2 f32.nan)"),
        "(1.0f32, 2.0f32)"
    );
    assert_eq!(ev("f32.maximum [f32.nan, f32.nan]"), "-f32.inf");
    assert_eq!(
        ev("(f64.round 2.5, f64.round 3.5, f64.round (-2.5))"),
        "(2.0f64, 4.0f64, -2.0f64)"
    );
    assert_eq!(
        ev("(f64.sgn (-3), f64.sgn 0, f32.abs (-2))"),
        "(-1.0f64, 0.0f64, 2.0f32)"
    );
    assert_eq!(ev("f64.nan ** 0"), "1.0f64");
    assert_eq!(ev("f64.nan == f64.nan"), "false");
    assert_eq!(ev("f64.nan != f64.nan"), "true");
    assert_eq!(ev("0.0 == -0.0"), "true");
    assert_eq!(ev("0.1f32"), "0.1f32");
    assert_eq!(ev("f32.sqrt 2"), "1.4142135f32");
    assert_eq!(
        ev("(f32.to_bits 1.0, f64.from_bits 0x4000000000000000)"),
        "(1065353216u32, 2.0f64)"
    );
    assert_eq!(ev("f32.epsilon"), "1.1920929e-7f32");
    assert_eq!(ev("f16.f32 1.5"), "1.5f16");
    assert_eq!(ev("f16.f64 65520"), "f16.inf");
    assert_eq!(ev("f64.atan2 1 1 == f64.pi / 4"), "true");
}

#[test]
fn conversions() {
    assert_eq!(
        ev("(i8.i32 300, u8.i8 (-1), i64.i8 (-1), i64.u8 255)"),
        "(44i8, 255u8, -1i64, 255i64)"
    );
    assert_eq!(ev("(u64.i8 (-1), u32.i16 (-2))"), "(255u64, 65534u32)");
    assert_eq!(
        ev("(i32.f64 f64.nan, i32.f64 (-2.7), i32.f32 f32.inf)"),
        "(0i32, -2i32, 0i32)"
    );
    assert_eq!(
        ev("(f32.f64 1e300, bool.i32 0, bool.f64 f64.nan, i32.bool true)"),
        "(f32.inf, false, true, 1i32)"
    );
    assert_eq!(
        ev("(r32 3, t32 3.9, f32.i64 (-5), f32.u8 200)"),
        "(3.0f32, 3i32, -5.0f32, 200.0f32)"
    );
    assert_eq!(ev("f64.to_i64 (-3.5)"), "-3i64");
}

#[test]
fn ranges() {
    assert_eq!(ev("1..3...9"), "[1i32, 3i32, 5i32, 7i32, 9i32]");
    assert_eq!(ev("5..>2"), "[5i32, 4i32, 3i32]");
    assert_eq!(ev("10..7...0"), "[10i32, 7i32, 4i32, 1i32]");
    assert_eq!(ev("3...3"), "[3i32]");
    assert_eq!(ev("(0..<0) :> [0]i32"), "empty([0]i32)");
    assert_eq!(ev("0u8..<3"), "[0u8, 1u8, 2u8]");
    assert_eq!(eval_err("5..<2"), "Range 5..<2 is invalid.");
    assert_eq!(eval_err("0..2..<(-5)"), "Range 0..2..<-5 is invalid.");
    assert_eq!(eval_err("4...1"), "Range 4...1 is invalid.");
    assert_eq!(eval_err("iota (-2)"), "Range 0..1..<-2 is invalid.");
    assert_eq!(
        eval_err("replicate (-1) 0i32"),
        "Range 0..1..<-1 is invalid."
    );
}

#[test]
fn indexing_and_slicing() {
    let a = "let a = [[1,2,3],[4,5,6]] in";
    assert_eq!(ev(&format!("{a} a[1]")), "[4i32, 5i32, 6i32]");
    assert_eq!(ev(&format!("{a} a[1, 2]")), "6i32");
    assert_eq!(ev(&format!("{a} a[:, 1]")), "[2i32, 5i32]");
    assert_eq!(ev(&format!("{a} a[1][::-1]")), "[6i32, 5i32, 4i32]");
    assert_eq!(ev(&format!("{a} a[0, 2:0:-1]")), "[3i32, 2i32]");
    assert_eq!(ev(&format!("{a} a[0][7:7]")), "empty([0]i32)");
    assert_eq!(ev("(iota 10)[1:8:3]"), "[1i64, 4i64, 7i64]");
    assert_eq!(ev("(iota 10)[::-4]"), "[9i64, 5i64, 1i64]");
    assert_eq!(
        eval_err(&format!("{a} a[0:2, 1:0]")),
        "Index [0:2, 1:0] out of bounds for array of shape [2][3]."
    );
    assert_eq!(
        eval_err(&format!("{a} a[2]")),
        "Index [2] out of bounds for array of shape [2]."
    );
    assert_eq!(
        eval_err(&format!("{a} a[-1, 0]")),
        "Index [-1, 0] out of bounds for array of shape [2][3]."
    );
    assert_eq!(
        eval_err(&format!("{a} a[0][4:]")),
        "Index [4:] out of bounds for array of shape [3]."
    );
    assert_eq!(
        eval_err(&format!("{a} a[0][:5]")),
        "Index [:5] out of bounds for array of shape [3]."
    );
    assert_eq!(
        eval_err(&format!("{a} a[0][::0]")),
        "Index [::0] out of bounds for array of shape [3]."
    );
    assert_eq!(
        eval_err(&format!("{a} a[0][3:1]")),
        "Index [3:1] out of bounds for array of shape [3]."
    );
}

#[test]
fn records_tuples_sums() {
    assert_eq!(
        ev("let r = {b = 2i32, a = 1i32} in (r.a, r.b)"),
        "(1i32, 2i32)"
    );
    assert_eq!(ev("let t = (1i32, (2i32, 3i32)) in t.1.0"), "2i32");
    assert_eq!(
        ev("let r = {x = 1i32, y = 2i32} in (r with x = 5).x"),
        "5i32"
    );
    assert_eq!(
        ev("let x = 3i32 in let r = {x, y = 2i32} in r.x + r.y"),
        "5i32"
    );
    assert_eq!(
        ev("let {x, y = z} = {x = 1i32, y = 2i32} in x * 10 + z"),
        "12i32"
    );
    assert_eq!(
        ev("let f (s: #circle f64 | #rect f64 f64) = match s case #circle r -> r case #rect w h -> w * h in f (#rect 2 3)"),
        "6.0f64"
    );
    assert_eq!(
        ev("match (1i32, 2i32) case (0, _) -> 0i32 case (1, y) -> y case _ -> 9"),
        "2i32"
    );
    assert_eq!(ev("match -3i32 case -3 -> true case _ -> false"), "true");
    assert_eq!(ev("(1i32, 2.0f32) == (1, 2)"), "true");
    assert_eq!(
        ev("[1i32, 2] == [1, 2] && [1i32] != filter (> 0) [1, 2]"),
        "true"
    );
    assert_eq!(ev("(.1) (1i32, 2i32)"), "2i32");
    assert_eq!(ev("(.[1]) [4i32, 5]"), "5i32");
}

#[test]
fn functions_and_sections() {
    assert_eq!(
        ev("let add x y = x + y in let inc = add 1i32 in inc 41"),
        "42i32"
    );
    assert_eq!(ev("map (2i32 -) [1, 2]"), "[1i32, 0i32]");
    assert_eq!(ev("map (/ 2i32) [5, 7]"), "[2i32, 3i32]");
    assert_eq!(ev("map (`i32.max` 3) [1, 5]"), "[3i32, 5i32]");
    assert_eq!(ev("(\\(a, b) -> a - b) (5i32, 3)"), "2i32");
    assert_eq!(ev("[1i32, 2] |> map (* 3)"), "[3i32, 6i32]");
    assert_eq!(ev("(map (+ 1) >-> map (* 2)) [1i32, 2]"), "[4i32, 6i32]");
    assert_eq!(ev("flip (-) 1i32 10"), "9i32");
    assert_eq!(ev("curry (\\(a, b) -> a * b) 3i32 4"), "12i32");
    assert_eq!(ev("iterate 3 (* 2i32) 1"), "8i32");
    assert_eq!(ev("iterate_while (< 100i32) (* 3) 1"), "243i32");
    assert_eq!(ev("foldl (-) 10i32 [1, 2, 3]"), "4i32");
    assert_eq!(ev("foldr (-) 10i32 [1, 2, 3]"), "-8i32");
    assert_eq!(ev("let (+) a b = a * b in 3i32 + 4"), "12i32");
}

#[test]
fn loops_and_updates() {
    assert_eq!(ev("loop acc = 0i32 for i < 10 do acc + i"), "45i32");
    assert_eq!(
        ev("loop (s, p) = (0f32, 1f32) for x in [1, 2, 3] do (s + x, p * x)"),
        "(6.0f32, 6.0f32)"
    );
    assert_eq!(ev("loop x = 1i32 while x < 1000 do x * 3"), "2187i32");
    assert_eq!(
        ev("let acc = 5i32 in loop acc for i < 3 do acc + 1"),
        "8i32"
    );
    assert_eq!(
        ev("let a = replicate 3 0i32 in let a[1] = 7 in a"),
        "[0i32, 7i32, 0i32]"
    );
    assert_eq!(
        ev("let a = iota 5 in a with [1:3] = [9, 8]"),
        "[0i64, 9i64, 8i64, 3i64, 4i64]"
    );
    assert_eq!(
        ev("let m = [[1i32,2],[3,4]] in m with [1] = [7, 8]"),
        "[[1i32, 2i32], [7i32, 8i32]]"
    );
    assert_eq!(
        ev("let m = [[1i32,2],[3,4]] in let m[0, 1] = 9 in m"),
        "[[1i32, 9i32], [3i32, 4i32]]"
    );
    assert_eq!(
        ev("let r = {a = [1i32, 2], b = 0i32} in (r with a[1] = 5).a"),
        "[1i32, 5i32]"
    );
    assert_eq!(
        ev("let xs = [(1i32, 2i32)] in (xs with [0].1 = 7)[0]"),
        "(1i32, 7i32)"
    );
    assert_eq!(
        eval_err("let a = iota 5 in a with [1:length a - 2] = [9]"),
        "Shape of slice does not match shape of value."
    );
    assert_eq!(
        eval_err("let a = iota 5 in a with [5] = 1"),
        "Index [5] out of bounds for array of shape [5]."
    );
}

#[test]
fn soacs() {
    assert_eq!(ev("map2 (+) [1i32, 2] [10, 20]"), "[11i32, 22i32]");
    assert_eq!(
        ev("map3 (\\a b c -> a * b + c) [1i32, 2] [3, 4] [5, 6]"),
        "[8i32, 14i32]"
    );
    assert_eq!(ev("reduce (+) 0i32 [1, 2, 3, 4]"), "10i32");
    assert_eq!(ev("reduce (\\a b -> a * 10 + b) 0i32 [1, 2, 3]"), "123i32");
    assert_eq!(
        ev("reduce (map2 (+)) [0i32, 0] [[1, 2], [3, 4]]"),
        "[4i32, 6i32]"
    );
    assert_eq!(ev("scan (+) 0i32 [1, 2, 3]"), "[1i32, 3i32, 6i32]");
    assert_eq!(ev("exscan (+) 0i32 [1, 2, 3]"), "[0i32, 1i32, 3i32]");
    assert_eq!(
        ev("hist (+) 0i32 3 [0, 2, 2, 5, -1] [1, 2, 3, 4, 5]"),
        "[1i32, 0i32, 5i32]"
    );
    assert_eq!(
        ev("reduce_by_index [10i32, 20] (+) 0 [1, 1, 0] [1, 2, 3]"),
        "[13i32, 23i32]"
    );
    assert_eq!(
        ev("reduce_by_index_2d [[0i32, 0], [0, 0]] (+) 0 [(0, 1), (1, 0), (0, 1)] [1, 2, 3]"),
        "[[0i32, 4i32], [2i32, 0i32]]"
    );
    assert_eq!(
        ev("scatter [0i32, 0, 0] [2, 0, 7, 2] [1, 2, 3, 4]"),
        "[2i32, 0i32, 4i32]"
    );
    assert_eq!(
        ev("scatter_2d [[0i32, 0], [0, 0]] [(1, 1), (0, 0)] [5, 6]"),
        "[[6i32, 0i32], [0i32, 5i32]]"
    );
    assert_eq!(ev("spread 3 9i32 [1] [4]"), "[9i32, 4i32, 9i32]");
    assert_eq!(ev("filter (> 2i32) [1, 5, 2, 7]"), "[5i32, 7i32]");
    assert_eq!(ev("filter (> 9i32) [1, 5]"), "empty([0]i32)");
    assert_eq!(
        ev("partition (> 2i32) [1, 5, 2, 7]"),
        "([5i32, 7i32], [1i32, 2i32])"
    );
    assert_eq!(
        ev("partition2 (> 5i32) (> 1) [1, 5, 2, 7]"),
        "([7i32], [5i32, 2i32], [1i32])"
    );
    assert_eq!(
        ev("(all (> 0i32) [1, 2], any (> 1i32) [1], all (> 0i32) [])"),
        "(true, false, true)"
    );
    assert_eq!(
        ev("flatmap (\\x -> (replicate x true, x * 10)) [2i64, 0, 1]"),
        "([2i64, 0i64, 1i64], [true, false, true], [0i64, 2i64, 2i64], [true, true, true], [20i64, 0i64, 10i64])"
    );
    assert_eq!(
        eval_err("map2 (+) [1i32, 2] (filter (> 0) [1i32])"),
        "Value of (desugared) shape [1] cannot match shape of type \"[2]i32\"."
    );
}

#[test]
fn array_functions() {
    assert_eq!(ev("tabulate 3 (\\i -> i * i)"), "[0i64, 1i64, 4i64]");
    assert_eq!(
        ev("tabulate_2d 2 2 (\\i j -> i * 10 + j)"),
        "[[0i64, 1i64], [10i64, 11i64]]"
    );
    assert_eq!(ev("indices [5i32, 6]"), "[0i64, 1i64]");
    assert_eq!(ev("replicate 2 [1i32, 2]"), "[[1i32, 2i32], [1i32, 2i32]]");
    assert_eq!(ev("[1i32] ++ [2, 3]"), "[1i32, 2i32, 3i32]");
    assert_eq!(ev("concat [[1i32]] [[2]]"), "[[1i32], [2i32]]");
    assert_eq!(
        ev("flatten [[1i32, 2], [3, 4]]"),
        "[1i32, 2i32, 3i32, 4i32]"
    );
    assert_eq!(
        ev("unflatten (iota (2 * 3))"),
        "[[0i64, 1i64, 2i64], [3i64, 4i64, 5i64]]"
    );
    assert_eq!(
        ev("transpose [[1i32, 2, 3], [4, 5, 6]]"),
        "[[1i32, 4i32], [2i32, 5i32], [3i32, 6i32]]"
    );
    assert_eq!(ev("reverse [1i32, 2, 3]"), "[3i32, 2i32, 1i32]");
    assert_eq!(ev("rotate 1 [1i32, 2, 3]"), "[2i32, 3i32, 1i32]");
    assert_eq!(ev("rotate (-1) [1i32, 2, 3]"), "[3i32, 1i32, 2i32]");
    assert_eq!(
        ev("(length [1i32, 2], null ([] : []i32), head [4i32, 5], last [4i32, 5])"),
        "(2i64, true, 4i32, 5i32)"
    );
    assert_eq!(
        ev("(tail [1i32, 2, 3], init [1i32, 2, 3])"),
        "([2i32, 3i32], [1i32, 2i32])"
    );
    assert_eq!(
        ev("(take 2 [1i32, 2, 3], drop 2 [1i32, 2, 3])"),
        "([1i32, 2i32], [3i32])"
    );
    assert_eq!(
        ev("split (iota (2 + 3))"),
        "([0i64, 1i64], [2i64, 3i64, 4i64])"
    );
    assert_eq!(
        ev("unzip (zip [1i32, 2] [true, false])"),
        "([1i32, 2i32], [true, false])"
    );
    assert_eq!(
        ev("unzip3 (zip3 [1i32] [2i32] [3i32])"),
        "([1i32], [2i32], [3i32])"
    );
    assert_eq!(ev("(and [true, false], or [false, true])"), "(false, true)");
    assert_eq!(
        ev("(i32.sum [1, 2, 3], f64.product [2, 3], i32.maximum [], u8.minimum [5, 3])"),
        "(6i32, 6.0f64, -2147483648i32, 3u8)"
    );
    assert_eq!(ev("sized 2 [1i32, 2]"), "[1i32, 2i32]");
    assert_eq!(ev("with_vjp (\\x -> x * 2f64) (\\_ d -> d) 3"), "6.0f64");
    assert_eq!(
        eval_err("head ([] : []i32)"),
        "Index [0] out of bounds for array of shape [0]."
    );
    assert_eq!(
        eval_err("tail ([] : []i32)"),
        "Index [1:] out of bounds for array of shape [0]."
    );
    assert_eq!(
        eval_err("take 4 [1i32, 2]"),
        "Index [0:4] out of bounds for array of shape [2]."
    );
    // AD is implemented now: d/dx (2x) = 2 at x = 1.
    assert_eq!(ev("jvp2 (\\x -> x * 2f64) 1 1"), "(2.0f64, 2.0f64)");
}

#[test]
fn misc_errors() {
    assert_eq!(
        eval_err("let x = 1i32 in assert (x > 2) x"),
        "Assertion is false: (x > 2)"
    );
    assert_eq!(
        eval_err("[[1i32], filter (> 1) [1, 2, 3]]"),
        "Irregular array literal: elements have shapes [1] and [2]."
    );
    assert_eq!(
        eval_err("let n = 3 in iota 2 :> [n]i64"),
        "Value of (desugared) shape [2] cannot match shape of type \"[3]i64\"."
    );
    assert_eq!(
        eval_err("unflatten (iota 5 :> [2 * 3]i64)"),
        "Value of (desugared) shape [5] cannot match shape of type \"[6]i64\"."
    );
}

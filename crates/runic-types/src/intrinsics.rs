//! The prelude functions that the interpreter implements natively, with their types in runic
//! syntax (Section 10), and the members of the built-in numeric modules (Section 10.9).

use crate::infer_ty::{Sz, T};
use runic_syntax::ast::PrimType;

/// (name, type and size parameters, type). The parameters are listed in the order in which
/// `TypeInfo::size_args` reports the size parameters.
pub const INTRINSICS: &[(&str, &str, &str)] = &[
    // Section 10.3: second-order array combinators.
    ("map", "'a [n] 'x", "(a -> x) -> [n]a -> *[n]x"),
    ("map1", "'a [n] 'x", "(a -> x) -> [n]a -> *[n]x"),
    (
        "map2",
        "'a 'b [n] 'x",
        "(a -> b -> x) -> [n]a -> [n]b -> *[n]x",
    ),
    (
        "map3",
        "'a 'b 'c [n] 'x",
        "(a -> b -> c -> x) -> [n]a -> [n]b -> [n]c -> *[n]x",
    ),
    (
        "map4",
        "'a 'b 'c 'd [n] 'x",
        "(a -> b -> c -> d -> x) -> [n]a -> [n]b -> [n]c -> [n]d -> *[n]x",
    ),
    (
        "map5",
        "'a 'b 'c 'd 'e [n] 'x",
        "(a -> b -> c -> d -> e -> x) -> [n]a -> [n]b -> [n]c -> [n]d -> [n]e -> *[n]x",
    ),
    ("reduce", "[n] 'a", "(a -> a -> a) -> a -> [n]a -> a"),
    ("reduce_comm", "[n] 'a", "(a -> a -> a) -> a -> [n]a -> a"),
    ("scan", "[n] 'a", "(a -> a -> a) -> a -> [n]a -> *[n]a"),
    ("exscan", "[n] 'a", "(a -> a -> a) -> a -> [n]a -> *[n]a"),
    (
        "hist",
        "'a [n]",
        "(a -> a -> a) -> a -> (k: i64) -> [n]i64 -> [n]a -> *[k]a",
    ),
    (
        "reduce_by_index",
        "'a [k] [n]",
        "*[k]a -> (a -> a -> a) -> a -> [n]i64 -> [n]a -> *[k]a",
    ),
    (
        "reduce_by_index_2d",
        "'a [k] [n] [m]",
        "*[k][m]a -> (a -> a -> a) -> a -> [n](i64, i64) -> [n]a -> *[k][m]a",
    ),
    (
        "reduce_by_index_3d",
        "'a [k] [n] [m] [l]",
        "*[k][m][l]a -> (a -> a -> a) -> a -> [n](i64, i64, i64) -> [n]a -> *[k][m][l]a",
    ),
    ("scatter", "'t [k] [n]", "*[k]t -> [n]i64 -> [n]t -> *[k]t"),
    (
        "scatter_2d",
        "'t [k] [n] [l]",
        "*[k][n]t -> [l](i64, i64) -> [l]t -> *[k][n]t",
    ),
    (
        "scatter_3d",
        "'t [k] [n] [o] [l]",
        "*[k][n][o]t -> [l](i64, i64, i64) -> [l]t -> *[k][n][o]t",
    ),
    (
        "spread",
        "'t [n]",
        "(k: i64) -> t -> [n]i64 -> [n]t -> *[k]t",
    ),
    ("filter", "[n] 'a", "(a -> bool) -> [n]a -> *[]a"),
    (
        "partition",
        "[n] 'a",
        "(a -> bool) -> [n]a -> ?[k].([k]a, [n-k]a)",
    ),
    (
        "partition2",
        "[n] 'a",
        "(a -> bool) -> (a -> bool) -> [n]a -> ?[k][l].([k]a, [l]a, [n-k-l]a)",
    ),
    ("all", "[n] 'a", "(a -> bool) -> [n]a -> bool"),
    ("any", "[n] 'a", "(a -> bool) -> [n]a -> bool"),
    (
        "flatmap",
        "[n] 'a 'b 'c",
        "(a -> ?[k].([k]b, c)) -> [n]a -> ?[m].([n]i64, [m]bool, [n]i64, [m]b, [n]c)",
    ),
    (
        "flatmap'",
        "[n] 'a 'b",
        "(a -> ?[k].[k]b) -> [n]a -> ?[m].([n]i64, [m]bool, [n]i64, [m]b)",
    ),
    // Section 10.4: construction and reshaping.
    ("iota", "", "(n: i64) -> *[n]i64"),
    ("indices", "[n] 't", "[n]t -> *[n]i64"),
    ("replicate", "'t", "(n: i64) -> t -> *[n]t"),
    ("rep", "'t [n]", "t -> *[n]t"),
    ("tabulate", "'a", "(n: i64) -> (i64 -> a) -> *[n]a"),
    (
        "tabulate_2d",
        "'a",
        "(n: i64) -> (m: i64) -> (i64 -> i64 -> a) -> *[n][m]a",
    ),
    (
        "tabulate_3d",
        "'a",
        "(n: i64) -> (m: i64) -> (o: i64) -> (i64 -> i64 -> i64 -> a) -> *[n][m][o]a",
    ),
    ("copy", "'t", "t -> *t"),
    ("manifest", "'t", "t -> *t"),
    ("concat", "[n] [m] 't", "[n]t -> [m]t -> *[n+m]t"),
    ("++", "[n] [m] 't", "[n]t -> [m]t -> *[n+m]t"),
    ("flatten", "[n] [m] 't", "[n][m]t -> [n*m]t"),
    ("flatten_3d", "[n] [m] [l] 't", "[n][m][l]t -> [n*m*l]t"),
    (
        "flatten_4d",
        "[n] [m] [l] [k] 't",
        "[n][m][l][k]t -> [n*m*l*k]t",
    ),
    ("unflatten", "'t [n] [m]", "[n*m]t -> [n][m]t"),
    ("unflatten_3d", "'t [n] [m] [l]", "[n*m*l]t -> [n][m][l]t"),
    (
        "unflatten_4d",
        "'t [n] [m] [l] [k]",
        "[n*m*l*k]t -> [n][m][l][k]t",
    ),
    ("transpose", "[n] [m] 't", "[n][m]t -> [m][n]t"),
    ("reverse", "[n] 't", "[n]t -> [n]t"),
    ("rotate", "[n] 't", "i64 -> [n]t -> [n]t"),
    ("sized", "[m] 't", "(n: i64) -> [m]t -> [n]t"),
    // Section 10.5: access.
    ("length", "[n] 't", "[n]t -> i64"),
    ("null", "[n] 't", "[n]t -> bool"),
    ("head", "[n] 't", "[n]t -> t"),
    ("last", "[n] 't", "[n]t -> t"),
    ("tail", "[n] 't", "[n]t -> [n-1]t"),
    ("init", "[n] 't", "[n]t -> [n-1]t"),
    ("take", "[n] 't", "(i: i64) -> [n]t -> [i]t"),
    ("drop", "[n] 't", "(i: i64) -> [n]t -> [n-i]t"),
    ("split", "[n] [m] 't", "[n+m]t -> ([n]t, [m]t)"),
    // Section 10.6: zipping.
    ("zip", "[n] 'a 'b", "[n]a -> [n]b -> *[n](a, b)"),
    ("zip2", "[n] 'a 'b", "[n]a -> [n]b -> *[n](a, b)"),
    (
        "zip3",
        "[n] 'a 'b 'c",
        "[n]a -> [n]b -> [n]c -> *[n](a, b, c)",
    ),
    (
        "zip4",
        "[n] 'a 'b 'c 'd",
        "[n]a -> [n]b -> [n]c -> [n]d -> *[n](a, b, c, d)",
    ),
    (
        "zip5",
        "[n] 'a 'b 'c 'd 'e",
        "[n]a -> [n]b -> [n]c -> [n]d -> [n]e -> *[n](a, b, c, d, e)",
    ),
    ("unzip", "[n] 'a 'b", "[n](a, b) -> ([n]a, [n]b)"),
    ("unzip2", "[n] 'a 'b", "[n](a, b) -> ([n]a, [n]b)"),
    (
        "unzip3",
        "[n] 'a 'b 'c",
        "[n](a, b, c) -> ([n]a, [n]b, [n]c)",
    ),
    (
        "unzip4",
        "[n] 'a 'b 'c 'd",
        "[n](a, b, c, d) -> ([n]a, [n]b, [n]c, [n]d)",
    ),
    (
        "unzip5",
        "[n] 'a 'b 'c 'd 'e",
        "[n](a, b, c, d, e) -> ([n]a, [n]b, [n]c, [n]d, [n]e)",
    ),
    // Section 10.7 and 10.8 (the definable combinators live in prelude.fut).
    ("and", "[n]", "[n]bool -> bool"),
    ("or", "[n]", "[n]bool -> bool"),
    ("opaque", "'t", "t -> t"),
    ("trace", "'t", "t -> t"),
    ("break", "'t", "t -> t"),
    // Section 10.10: automatic differentiation.
    ("jvp2", "'a 'b", "(a -> b) -> a -> a -> (b, b)"),
    ("vjp2", "'a 'b", "(a -> b) -> a -> b -> (b, a)"),
    ("jmp2", "'a 'b [n]", "(a -> b) -> a -> [n]a -> (b, [n]b)"),
    ("mjp2", "'a 'b [n]", "(a -> b) -> a -> [n]b -> (b, [n]a)"),
    ("with_vjp", "'a 'b", "(a -> b) -> (b -> b -> a) -> a -> b"),
];

/// The overloaded built-in operators (Section 6.3); their types are not expressible in the
/// type syntax, so the checker types them itself. Unqualified uses of these names (when not
/// shadowed) are intrinsic too.
pub const OVERLOADED_OPS: &[&str] = &[
    "+", "-", "*", "/", "%", "**", "//", "%%", "&", "|", "^", "<<", ">>", "==", "!=", "<", "<=",
    ">", ">=", "&&", "||",
];

/// The numeric modules.
pub const MODULES: [PrimType; 12] = PrimType::ALL;

const FROM_PRIM: &[&str] = &[
    "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64", "bool",
];
const ARITH: &[&str] = &["+", "-", "*", "/", "%", "**", "max", "min"];
const CMP: &[&str] = &["==", "!=", "<", ">", "<=", ">="];
const NUM_UNARY: &[&str] = &["neg", "abs", "sgn"];
const NUM_CONST: &[&str] = &["highest", "lowest"];
const NUM_REDUCE: &[&str] = &["sum", "product", "maximum", "minimum"];
const INT_BINARY: &[&str] = &["//", "%%", "&", "|", "^", "<<", ">>", ">>>", "mul_hi"];
const INT_TO_I32: &[&str] = &["popc", "clz", "ctz"];
const REAL_UNARY: &[&str] = &[
    "recip", "sqrt", "rsqrt", "cbrt", "exp", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinpi", "cospi", "tanpi", "asinpi", "acospi", "atanpi", "sinh",
    "cosh", "tanh", "asinh", "acosh", "atanh", "gamma", "lgamma", "erf", "erfc", "ceil", "floor",
    "trunc", "round",
];
const REAL_BINARY: &[&str] = &["atan2", "atan2pi", "hypot", "nextafter", "copysign"];
const REAL_TERNARY: &[&str] = &["lerp", "mad", "fma"];
const REAL_CONST: &[&str] = &["inf", "nan", "pi", "e", "epsilon"];

/// The type of a value member of numeric module `m`, and its size parameters.
pub(crate) fn module_member(m: PrimType, name: &str) -> Option<(T, Vec<&'static str>)> {
    let t = || T::Prim(m);
    let p = |q: PrimType| T::Prim(q);
    let fun = |ps: Vec<T>, r: T| ps.into_iter().rev().fold(r, |acc, a| T::arrow(a, acc));
    let i32_ = PrimType::I32;
    if let Some(q) = PrimType::from_name(name) {
        return Some((fun(vec![p(q)], t()), vec![]));
    }
    if m == PrimType::Bool {
        return None;
    }
    let is_in = |list: &[&str]| list.contains(&name);
    let ty = if is_in(ARITH) {
        fun(vec![t(), t()], t())
    } else if is_in(CMP) {
        fun(vec![t(), t()], T::bool())
    } else if is_in(NUM_UNARY) {
        fun(vec![t()], t())
    } else if is_in(NUM_CONST) {
        t()
    } else if name == "to_i64" {
        fun(vec![t()], T::i64())
    } else if is_in(NUM_REDUCE) {
        let arr = T::Array(Sz::Name("n".into()), Box::new(t()));
        return Some((fun(vec![arr], t()), vec!["n"]));
    } else if m.is_int() {
        if is_in(INT_BINARY) {
            fun(vec![t(), t()], t())
        } else if name == "not" {
            fun(vec![t()], t())
        } else if is_in(INT_TO_I32) {
            fun(vec![t()], p(i32_))
        } else if name == "mad_hi" {
            fun(vec![t(), t(), t()], t())
        } else if name == "num_bits" {
            p(i32_)
        } else if name == "get_bit" {
            fun(vec![p(i32_), t()], p(i32_))
        } else if name == "set_bit" {
            fun(vec![p(i32_), t(), p(i32_)], t())
        } else {
            return None;
        }
    } else {
        let int_t = float_int_type(m);
        if is_in(REAL_UNARY) {
            fun(vec![t()], t())
        } else if is_in(REAL_BINARY) {
            fun(vec![t(), t()], t())
        } else if is_in(REAL_TERNARY) {
            fun(vec![t(), t(), t()], t())
        } else if is_in(REAL_CONST) {
            t()
        } else if name == "from_fraction" {
            fun(vec![T::i64(), T::i64()], t())
        } else if name == "to_f64" {
            fun(vec![t()], p(PrimType::F64))
        } else if name == "isinf" || name == "isnan" {
            fun(vec![t()], T::bool())
        } else if name == "to_bits" {
            fun(vec![t()], p(int_t))
        } else if name == "from_bits" {
            fun(vec![p(int_t)], t())
        } else if name == "num_bits" {
            p(i32_)
        } else if name == "get_bit" {
            fun(vec![p(i32_), t()], p(i32_))
        } else if name == "set_bit" {
            fun(vec![p(i32_), t(), p(i32_)], t())
        } else if name == "ldexp" {
            fun(vec![t(), p(i32_)], t())
        } else {
            return None;
        }
    };
    Some((ty, vec![]))
}

/// The unsigned integer type of the same width as a float type (`int_t`).
pub(crate) fn float_int_type(m: PrimType) -> PrimType {
    match m {
        PrimType::F16 => PrimType::U16,
        PrimType::F32 => PrimType::U32,
        _ => PrimType::U64,
    }
}

/// A type member of numeric module `m`.
pub(crate) fn module_type_member(m: PrimType, name: &str) -> Option<PrimType> {
    match name {
        "t" => Some(m),
        "int_t" if m.is_float() => Some(float_int_type(m)),
        _ => None,
    }
}

/// Every value member name of module `m` (for suggestions).
pub(crate) fn module_member_names(m: PrimType) -> Vec<&'static str> {
    let lists: [&[&str]; 13] = [
        FROM_PRIM,
        ARITH,
        CMP,
        NUM_UNARY,
        NUM_CONST,
        NUM_REDUCE,
        INT_BINARY,
        INT_TO_I32,
        REAL_UNARY,
        REAL_BINARY,
        REAL_TERNARY,
        REAL_CONST,
        &[
            "to_i64",
            "not",
            "mad_hi",
            "num_bits",
            "get_bit",
            "set_bit",
            "from_fraction",
            "to_f64",
            "isinf",
            "isnan",
            "to_bits",
            "from_bits",
            "ldexp",
        ],
    ];
    lists
        .iter()
        .flat_map(|l| l.iter().copied())
        .filter(|n| module_member(m, n).is_some())
        .collect()
}

/// The number of arguments an intrinsic takes before it computes anything: the arrows at
/// the top level of its type (`hist` takes 5). Backends use this to know when a partial
/// application is saturated; it is derived from [`INTRINSICS`] so that there is one list.
pub fn arity(name: &str) -> Option<usize> {
    intrinsic(name).map(|(_, a)| a)
}

/// The intrinsic's name as a `'static` string and its [`arity`].
pub fn intrinsic(name: &str) -> Option<(&'static str, usize)> {
    let (n, _, ty) = INTRINSICS.iter().find(|(n, _, _)| *n == name)?;
    Some((n, top_level_arrows(ty)))
}

fn top_level_arrows(ty: &str) -> usize {
    let (mut depth, mut count) = (0i32, 0);
    let bytes = ty.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'-' if depth == 0 && bytes.get(i + 1) == Some(&b'>') => count += 1,
            _ => {}
        }
    }
    count
}

#[cfg(test)]
mod arity_tests {
    use super::arity;

    #[test]
    fn arities_come_from_the_types() {
        assert_eq!(arity("map"), Some(2));
        assert_eq!(arity("map5"), Some(6));
        assert_eq!(arity("hist"), Some(5));
        assert_eq!(arity("rep"), Some(1));
        assert_eq!(arity("jvp2"), Some(3));
        assert_eq!(arity("flatmap'"), Some(2));
        assert_eq!(arity("no_such_thing"), None);
    }
}

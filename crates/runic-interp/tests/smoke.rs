mod common;
use common::*;

#[test]
fn arithmetic() {
    assert_eq!(ev("1 + 2 * 3"), "7i32");
    assert_eq!(ev("map (+1) (iota 5)"), "[1i64, 2i64, 3i64, 4i64, 5i64]");
}

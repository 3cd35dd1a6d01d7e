mod common;
use common::*;

#[test]
fn prelude_checks() {
    let c = ok("def main = 1");
    assert!(c.prelude_decs > 20);
}

#[test]
fn smoke() {
    let c = ok("def half x = x / 2\ndef f (xs: []f32) = map (\\x -> x * 2) xs");
    assert_eq!(def_type(&c, "half"), "i32 -> i32");
    println!("{}", def_type(&c, "f"));
}

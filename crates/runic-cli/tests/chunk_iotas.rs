//! Reductions over `iota n` alone (`chunk-iotas`, runic-opt's `iotas` module): after the
//! pass no iota of the full width `n` is left, each reduction is a map over chunks of a
//! reduction over the chunk's own range, and a negative `n` still meets an `iota` (of
//! `min n 0`) that reports it. The program's test block (`tests/native/iotas.fut`, run
//! on both backends by `runic test`) checks the values at chunk boundaries.

mod common;

use common::dev_ir;

fn ir_after(pass: &str) -> String {
    dev_ir(&["--print-ir-after", pass], "tests/native/iotas.fut")
}

#[test]
fn reductions_over_an_iota_build_no_iota() {
    // Five entry points, each `iota n` (`0 .. 1 ..< n_…`) reduced.
    let full = "range_i64(0i64 .. 1i64 ..< n_";
    assert_eq!(ir_after("fuse").matches(full).count(), 5);
    let after = ir_after("chunk-iotas");
    assert_eq!(after.matches(full).count(), 0, "{after}");
    // Per entry: the check of `min n 0`, the chunk indices, and each chunk's range.
    assert_eq!(after.matches("..< neg_").count(), 5, "{after}");
    assert_eq!(after.matches("..< chunks_").count(), 5, "{after}");
    assert_eq!(after.matches("range_i64(lo_").count(), 5, "{after}");
    // Every chunk's result is combined by a reduction over the chunks.
    assert_eq!(
        after.matches("reduce(chunks_").count() + after.matches("reduce_comm(chunks_").count(),
        5,
        "{after}"
    );
    // The chunk count is ⌊(n − 1) / K⌋ + 1 with floor division, so n = 0 makes no chunk.
    assert_eq!(after.matches("Div(last_").count(), 5, "{after}");
    assert_eq!(after.matches("Quot(last_").count(), 0, "{after}");
}

//! runic-opt: IR → IR simplification passes.

//! runic-data: run-time values shared by every backend, and the text and binary value formats
//! (`data-tests-cli.md` §1–§5.8): reading, printing, random generation and comparison.
//!
//! - [`Value`] / [`Array`] / [`Buffer`]: data values (row-major typed buffers whose elements are
//!   [`Prim`] scalars) plus the non-data values that only exist for printing results.
//! - [`Reader`] / [`read_all`]: mixed text and binary streams. A hint ([`ValueType`]) fixes the
//!   element type and rank of a value (§2.4); its dimensions are not checked here (size checks
//!   belong to the caller). Errors ([`DataError`]) carry line:col for text and a byte offset for
//!   binary data.
//! - [`print_value`], [`print_value_single_line`], [`print_value_repl`]: §3; [`write_binary`]: §4.
//! - [`generate`] with [`SplitMix64`] and [`Bounds`]: §5.6. [`compare_values`]: §5.8.

mod alloc;
mod binary;
mod buffer;
mod compare;
mod error;
mod generate;
mod lexer;
mod print;
mod reader;
mod store;
mod text;
mod types;
mod value;

pub use alloc::{check_alloc, memory_limit, out_of_memory};
pub use binary::write_binary;
pub use buffer::Buffer;
pub use compare::compare_values;
pub use error::DataError;
pub use generate::{generate, Bounds, SplitMix64};
pub use print::{
    format_float_f32, format_float_f64, print_scalar, print_value, print_value_repl,
    print_value_single_line,
};
pub use reader::{read_all, read_file_bytes, Reader};
pub use store::Store;
pub use types::{parse_value_type, PrimType, ValueType};
pub use value::{shape_product, Array, Value};

// The scalar type of data values (`Value::Scalar`, `Buffer::get`).
pub use runic_prim::Prim;

// Re-exported so that users name the same f16 type as `Prim::F16`.
pub use half::f16;

//! runic-ir: the core intermediate representation of the compiled path.
//!
//! A first-order, explicitly typed, A-normal-form IR of second-order array combinators,
//! close to Futhark's SOACS representation:
//!
//! - a [`Body`] is a list of statements and a result; a [`Stm`] binds a pattern of typed
//!   variables to an [`Exp`];
//! - every operand is a [`SubExp`]: a variable or a constant;
//! - arrays hold primitives only: arrays of tuples/records are tuples of arrays, and records
//!   and sum types are flattened into several variables during lowering;
//! - there are no function values: lambdas appear only as operators of SOACs and AD
//!   constructs, and calls name a top-level [`FunDef`].
//!
//! The data types live in [`ir`]; the builder, the traversal ([`traverse`]: visitors,
//! free variables, uses and binders), result typing ([`typing`]), the printer and the
//! verifier in their own modules; [`dots`] is a rewrite both reverse mode and the
//! optimiser use.

pub mod builder;
pub mod dots;
pub mod ir;
pub mod print;
pub mod traverse;
pub mod typing;
pub mod verify;

pub use builder::Builder;
pub use ir::*;
pub use typing::TypeError;
pub use verify::verify;

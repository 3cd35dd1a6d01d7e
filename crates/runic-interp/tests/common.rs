//! Shared helper: parse, check and run a program.
#![allow(dead_code)]

use runic_data::{Prim, Value};
use runic_interp::{Interpreter, RuntimeError};
use runic_syntax::SourceMap;
use std::sync::Arc;

pub struct Prog {
    pub interp: Interpreter,
    pub sources: Arc<SourceMap>,
}

pub fn load(src: &str) -> Prog {
    let mut sm = SourceMap::new();
    let pf = sm.add(runic_types::PRELUDE_NAME, runic_types::PRELUDE_SOURCE);
    let f = sm.add("prog.fut", src);
    let prog = match runic_syntax::parse_program(f, src, runic_types::first_user_node_id()) {
        Ok(p) => p,
        Err(ds) => panic!("parse error:\n{}", runic_syntax::diag::render_all(&ds, &sm)),
    };
    let checked = match runic_types::check_program_with_prelude_file(prog, &sm, pf) {
        Ok(c) => c,
        Err(ds) => panic!("type error:\n{}", runic_syntax::diag::render_all(&ds, &sm)),
    };
    let sources = Arc::new(sm);
    Prog {
        interp: Interpreter::new(Arc::new(checked), sources.clone()),
        sources,
    }
}

/// Run `entry` of `src` with `args`.
pub fn run(src: &str, entry: &str, args: Vec<Value>) -> Result<Vec<Value>, RuntimeError> {
    load(src).interp.call_entry(entry, args)
}

/// Run and return the single result.
pub fn run1(src: &str, entry: &str, args: Vec<Value>) -> Value {
    let p = load(src);
    match p.interp.call_entry(entry, args) {
        Ok(mut vs) => {
            if vs.len() == 1 {
                vs.remove(0)
            } else {
                Value::Tuple(vs)
            }
        }
        Err(e) => panic!("runtime error:\n{}", e.render(&p.sources)),
    }
}

/// Evaluate the expression `e` (as `entry main = e`).
pub fn eval(e: &str) -> Value {
    run1(&format!("entry main = {e}\n"), "main", vec![])
}

/// The error message of evaluating `e`.
pub fn eval_err(e: &str) -> String {
    match run(&format!("entry main = {e}\n"), "main", vec![]) {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(er) => er.message,
    }
}

pub fn print(v: &Value) -> String {
    runic_data::print_value_single_line(v)
}

/// Evaluate and print in the data format.
pub fn ev(e: &str) -> String {
    print(&eval(e))
}

pub fn i32s(v: &[i32]) -> Value {
    Value::Array(runic_data::Array {
        shape: vec![v.len()],
        data: runic_data::Buffer::I32(v.to_vec().into()),
    })
}
pub fn i64s(v: &[i64]) -> Value {
    Value::Array(runic_data::Array {
        shape: vec![v.len()],
        data: runic_data::Buffer::I64(v.to_vec().into()),
    })
}
pub fn f32s(v: &[f32]) -> Value {
    Value::Array(runic_data::Array {
        shape: vec![v.len()],
        data: runic_data::Buffer::F32(v.to_vec().into()),
    })
}
pub fn f64s(v: &[f64]) -> Value {
    Value::Array(runic_data::Array {
        shape: vec![v.len()],
        data: runic_data::Buffer::F64(v.to_vec().into()),
    })
}
pub fn i32v(x: i32) -> Value {
    Value::Scalar(Prim::I32(x))
}
pub fn i64v(x: i64) -> Value {
    Value::Scalar(Prim::I64(x))
}
pub fn f64v(x: f64) -> Value {
    Value::Scalar(Prim::F64(x))
}
pub fn f32v(x: f32) -> Value {
    Value::Scalar(Prim::F32(x))
}

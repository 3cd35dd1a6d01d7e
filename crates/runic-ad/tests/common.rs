//! Shared helpers: source text → IR with the forward pass applied (verified), and running
//! entry points on the ir backend.
#![allow(dead_code)]

use runic_data::{Array, Prim, Value};
use runic_ir::Prog;
use runic_syntax::SourceMap;
use std::sync::Arc;

pub fn lower(text: &str) -> Prog {
    let mut sources = SourceMap::new();
    let file = sources.add("test.fut", text);
    let program = runic_syntax::parse_program(file, text, 0).expect("parses");
    let checked = runic_types::check_program(program, &sources).expect("type-checks");
    runic_lower::lower_with_sources(&checked, Some(&sources)).expect("lowers")
}

/// Lower, differentiate (forward mode, and reverse mode for the gradients some forward
/// rules use), check that no AD construct remains, and verify.
pub fn differentiated(text: &str) -> Prog {
    let (prog, errors) = runic_ad::eliminate_where_possible(lower(text));
    if let Some(e) = errors.first() {
        panic!("ad: {e}");
    }
    let printed = prog.to_string();
    assert!(!printed.contains("jvp("), "a jvp remains:\n{printed}");
    if let Err(errs) = runic_ir::verify::verify_no_ad(&prog) {
        panic!("verifier: {errs:#?}\n{printed}");
    }
    prog
}

/// The differentiated program after the usual optimisation passes (verified again).
pub fn optimised(text: &str) -> Prog {
    let mut prog = differentiated(text);
    for (_, pass) in runic_opt::pipeline() {
        prog = pass(prog);
    }
    if let Err(errs) = runic_ir::verify::verify_no_ad(&prog) {
        panic!("verifier after optimisation: {errs:#?}\n{prog}");
    }
    prog
}

pub struct Runner {
    exec: runic_exec::Executor,
}

impl Runner {
    pub fn new(text: &str) -> Runner {
        Runner {
            exec: runic_exec::Executor::new(Arc::new(optimised(text))),
        }
    }
    pub fn run(&self, entry: &str, args: Vec<Value>) -> Vec<Value> {
        self.exec
            .run_entry(entry, args)
            .unwrap_or_else(|e| panic!("{entry}: {e:?}"))
    }
}

pub fn f64s(xs: &[f64]) -> Value {
    Value::Array(Array::from_f64(vec![xs.len()], xs.to_vec()).expect("shape"))
}

pub fn f64v(x: f64) -> Value {
    Value::Scalar(Prim::F64(x))
}

pub fn i64s(xs: &[i64]) -> Value {
    Value::Array(Array::from_i64(vec![xs.len()], xs.to_vec()).expect("shape"))
}

/// The floats of a value (a scalar or an array), row-major.
pub fn floats(v: &Value) -> Vec<f64> {
    match v {
        Value::Scalar(s) => vec![s.as_float().expect("a float")],
        Value::Array(a) => (0..a.data.len())
            .map(|i| a.data.get(i).as_float().expect("floats"))
            .collect(),
        other => panic!("not a float value: {other:?}"),
    }
}

pub fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= tol * (1.0 + x.abs().max(y.abs())))
}

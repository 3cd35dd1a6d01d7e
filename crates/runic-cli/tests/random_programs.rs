//! Random well-typed programs (see `random_programs/gen.rs`) must behave the same on the
//! reference interpreter and on the ir backend (lowering, the optimisation passes and
//! runic-exec): both succeed with the same values (integers exactly, floats within the
//! test-block tolerance rule or 1e-6 relative), or both fail with the same error report.

#[path = "random_programs/gen.rs"]
mod gen;

use gen::{Gen, Program, FEATURES};
use proptest::prelude::*;
use runic_data::{Buffer, Prim, Value};
use std::sync::Arc;

/// Cases per run: enough to cover every construct several times, small enough to keep
/// the test within a few seconds; `RANDOM_PROGRAMS_CASES` asks for more (a longer hunt
/// before a change lands).
fn cases() -> u32 {
    std::env::var("RANDOM_PROGRAMS_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
}

/// What running a program on both backends showed.
#[derive(Debug)]
enum Outcome {
    /// Both succeed with the same values, or fail with this same error report.
    Agree(Option<String>),
    /// The program does not type-check: a generator bug.
    IllTyped(String),
    /// The ir backend cannot lower it.
    NoLower(String),
    Disagree(String),
}

fn run_both(p: &Program) -> Outcome {
    let mut sources = runic_syntax::SourceMap::new();
    let file = sources.add("random.fut", p.source.clone());
    let program = match runic_syntax::parse_program(file, &p.source, 0) {
        Ok(x) => x,
        Err(d) => return Outcome::IllTyped(runic_syntax::diag::render_all(&d, &sources)),
    };
    let checked = match runic_types::check_program(program, &sources) {
        Ok(c) => c,
        Err(d) => return Outcome::IllTyped(runic_syntax::diag::render_all(&d, &sources)),
    };
    let prog = match runic_lower::lower_with_sources(&checked, Some(&sources)) {
        Ok(x) => x,
        Err(e) => return Outcome::NoLower(e.message),
    };
    let prog = runic_opt::pipeline()
        .iter()
        .fold(prog, |q, (_, pass)| pass(q));
    let checked = Arc::new(checked);
    let sources = Arc::new(sources);
    let interp = runic_interp::Interpreter::new(checked, sources.clone());
    let want = interp.call_entry("main", p.args.clone());
    let got = runic_exec::Executor::new(Arc::new(prog)).run_entry("main", p.args.clone());
    match (want, got) {
        (Ok(w), Ok(g)) => {
            if w.len() == g.len() && w.iter().zip(&g).all(|(a, b)| same_value(a, b)) {
                Outcome::Agree(None)
            } else {
                let show = |v: &[Value]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
                Outcome::Disagree(format!("interp: {:?}\n    ir: {:?}", show(&w), show(&g)))
            }
        }
        (Err(w), Err(g)) => {
            let (w, g) = (w.render(&sources), render_exec_error(&g, &sources));
            if w == g {
                Outcome::Agree(Some(w))
            } else {
                Outcome::Disagree(format!("interp error: {w}\n    ir error: {g}"))
            }
        }
        (Ok(w), Err(g)) => Outcome::Disagree(format!(
            "interp: {:?}\n    ir fails: {}",
            w.iter().map(|x| x.to_string()).collect::<Vec<_>>(),
            render_exec_error(&g, &sources)
        )),
        (Err(w), Ok(_)) => {
            Outcome::Disagree(format!("ir succeeds, interp fails: {}", w.render(&sources)))
        }
    }
}

/// The ir backend's error report, as the CLI renders it (`backend_ir::render_error`).
fn render_exec_error(e: &runic_exec::ExecError, sources: &runic_syntax::SourceMap) -> String {
    let span = |l: runic_ir::Loc| runic_syntax::Span {
        file: runic_syntax::FileId(l.file),
        start: l.start,
        end: l.end,
    };
    let backtrace: Vec<_> = e.backtrace.iter().map(|&l| span(l)).collect();
    runic_syntax::render_runtime_error(&e.message, e.loc.map(span), &backtrace, sources)
}

/// The test-block tolerance rule (data-tests-cli.md §6): one absolute tolerance for a value,
/// from its largest finite expected element.
fn tolerance(expected: &[f64]) -> f64 {
    let m = expected
        .iter()
        .copied()
        .filter(|x| x.is_finite())
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
        .unwrap_or(1.0);
    0.002 * m.max(1.0)
}

fn floats_match(want: &[f64], got: &[f64]) -> bool {
    let tol = tolerance(want);
    want.iter().zip(got).all(|(&e, &g)| {
        (e.is_nan() && g.is_nan())
            || e == g
            || (e.is_finite() && g.is_finite() && (g - e).abs() <= tol)
            || (g - e).abs() <= 1e-6 * e.abs().max(g.abs())
    })
}

fn floats(b: &Buffer) -> Option<Vec<f64>> {
    match b {
        Buffer::F32(v) => Some(v.iter().map(|&x| x as f64).collect()),
        Buffer::F64(v) => Some(v.clone().into_vec()),
        _ => None,
    }
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Tuple(x), Value::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_value(p, q))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.shape == y.shape
                && x.data.elem_type() == y.data.elem_type()
                && match (floats(&x.data), floats(&y.data)) {
                    (Some(p), Some(q)) => floats_match(&p, &q),
                    _ => x == y,
                }
        }
        (Value::Scalar(x), Value::Scalar(y)) => match (x, y) {
            (Prim::F32(p), Prim::F32(q)) => floats_match(&[*p as f64], &[*q as f64]),
            (Prim::F64(p), Prim::F64(q)) => floats_match(&[*p], &[*q]),
            _ => x == y,
        },
        _ => a == b,
    }
}

fn check(choices: Vec<u32>) -> Result<(), TestCaseError> {
    let p = Gen::new(choices, FEATURES).program();
    let outcome = run_both(&p);
    if std::env::var_os("RANDOM_PROGRAMS_SHOW").is_some() {
        eprintln!(
            "----\n{}args: {:?}\n=> {:?}",
            p.source,
            p.args.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
            outcome
        );
    }
    match outcome {
        Outcome::Agree(_) => Ok(()),
        // Constructs the ir backend does not support yet are not disagreements (set
        // RANDOM_PROGRAMS_STRICT to have proptest shrink such a program).
        Outcome::NoLower(e) if std::env::var_os("RANDOM_PROGRAMS_STRICT").is_some() => Err(
            TestCaseError::fail(format!("does not lower:\n{}\n{e}", p.source)),
        ),
        Outcome::NoLower(_) => Ok(()),
        Outcome::IllTyped(e) => Err(TestCaseError::fail(format!(
            "generated an ill-typed program:\n{}\n{e}",
            p.source
        ))),
        Outcome::Disagree(e) => Err(TestCaseError::fail(format!(
            "backends disagree on\n{}\nargs: {:?}\n{e}",
            p.source,
            p.args.iter().map(|a| a.to_string()).collect::<Vec<_>>()
        ))),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn backends_agree_on_random_programs(choices in prop::collection::vec(any::<u32>(), 0..160)) {
        check(choices)?;
    }
}

/// The generator must mostly produce programs that lower and run to completion (otherwise
/// the property checks little): count them over a fixed set of seeds.
#[test]
fn most_generated_programs_lower_and_run() {
    let (mut lowered, mut succeeded) = (0, 0);
    let total: usize = 60;
    for seed in 0..total {
        let choices = (0..160u32)
            .map(|k| k.wrapping_mul(2654435761).wrapping_add(seed as u32 * 40503) >> 7)
            .collect();
        let p = Gen::new(choices, FEATURES).program();
        match run_both(&p) {
            Outcome::NoLower(e) => eprintln!("does not lower: {e}\n{}", p.source),
            Outcome::Agree(error) => {
                lowered += 1;
                succeeded += usize::from(error.is_none());
            }
            _ => lowered += 1,
        }
    }
    assert!(
        lowered * 10 >= total * 9,
        "only {lowered} of {total} programs lower"
    );
    assert!(
        succeeded * 2 >= total,
        "only {succeeded} of {total} programs run without error"
    );
}

//! Every failure is a typed `runic::Error` with the text the `runic` command prints.

use ndarray::array;
use runic::{Backend, Error, Program};

const DOT: &str = "entry dot [n] (a: [n]f32) (b: [n]f32): f32 = f32.sum (map2 (*) a b)\n\
                   entry fixed (m: [2][3]f64): f64 = m[1, 2]\n\
                   entry get (xs: []i32) (i: i64) = xs[i]\n";

fn argument_error(e: Error) -> (usize, Option<String>, String) {
    match e {
        Error::Argument {
            index,
            name,
            message,
            ..
        } => (index, name, message),
        other => panic!("not an argument error: {other:?}"),
    }
}

#[test]
fn a_wrong_element_type_names_the_argument() {
    let p = Program::from_source("dot.fut", DOT).unwrap();
    let e = p.call("dot", (array![1.0f32], array![1.0f64])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Error: argument 2 (b) of \"dot\": expected type [n]f32, got [1]f64"
    );
    let e = p.call("get", (array![1i32], 0i32)).unwrap_err();
    assert_eq!(
        argument_error(e),
        (1, Some("i".into()), "expected type i64, got i32".into())
    );
}

#[test]
fn a_wrong_rank_names_the_argument() {
    let p = Program::from_source("dot.fut", DOT).unwrap();
    let e = p
        .call("dot", (array![[1.0f32]], array![1.0f32]))
        .unwrap_err();
    assert_eq!(
        argument_error(e),
        (
            0,
            Some("a".into()),
            "expected type [n]f32, got [1][1]f32".into()
        )
    );
    // A scalar where an array is expected, and the other way round.
    assert!(matches!(
        p.call("dot", (1.0f32, array![1.0f32])).unwrap_err(),
        Error::Argument { index: 0, .. }
    ));
    assert!(matches!(
        p.call("get", (array![1i32], array![0i64])).unwrap_err(),
        Error::Argument { index: 1, .. }
    ));
}

#[test]
fn a_wrong_shape_names_the_argument_and_the_size() {
    let p = Program::from_source("dot.fut", DOT).unwrap();
    let e = p
        .call("dot", (array![1.0f32, 2.0], array![1.0f32, 2.0, 3.0]))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Error: argument 2 (b) of \"dot\": expected type [n]f32, got [3]f32: dimension 1 is 3, \
         but size n is 2 (dimension 1 of argument 1)"
    );
    let e = p.call("fixed", (array![[1.0f64, 2.0]],)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Error: argument 1 (m) of \"fixed\": expected type [2][3]f64, got [1][2]f64: \
         dimension 1 is 1, not 2"
    );
}

#[test]
fn a_wrong_number_of_arguments_says_how_many() {
    let p = Program::from_source("dot.fut", DOT).unwrap();
    let e = p.call("dot", (array![1.0f32],)).unwrap_err();
    assert_eq!(
        e,
        Error::Arity {
            entry: "dot".into(),
            expected: 2,
            given: 1
        }
    );
    assert_eq!(
        e.to_string(),
        "Error: entry point \"dot\" takes 2 arguments, but 1 was given"
    );
    assert!(matches!(
        p.call("fixed", ()).unwrap_err(),
        Error::Arity { given: 0, .. }
    ));
}

#[test]
fn a_missing_entry_point_lists_the_ones_there_are() {
    let p = Program::from_source("dot.fut", DOT).unwrap();
    let e = p.entry("main").err().unwrap();
    assert_eq!(
        e,
        Error::UnknownEntry {
            name: "main".into(),
            available: vec!["dot".into(), "fixed".into(), "get".into()]
        }
    );
    assert_eq!(
        e.to_string(),
        "Error: no entry point named \"main\"; entry points: dot, fixed, get"
    );
}

#[test]
fn run_time_errors_are_located_on_both_backends() {
    let expected = "dot.fut:3:34-39: Error: Index [5] out of bounds for array of shape [2].\n   \
                    3 | entry get (xs: []i32) (i: i64) = xs[i]\n     \
                    |                                  ^^^^^\n\nBacktrace:\n-> #0  dot.fut:3:34-39";
    for backend in [Backend::Compiled, Backend::Interpreter] {
        let p = Program::from_source_with("dot.fut", DOT, backend).unwrap();
        let e = p.call("get", (array![1i32, 2], 5i64)).unwrap_err();
        assert!(matches!(e, Error::Runtime(_)), "{backend:?}: {e:?}");
        assert_eq!(e.to_string(), expected, "{backend:?}");
        // The program is still usable after a failed call.
        let ok = p.call("get", (array![1i32, 2], 1i64)).unwrap();
        assert_eq!(ok.get::<i32>(0).unwrap(), 2);
    }
}

#[test]
fn compile_errors_are_rendered_as_runic_check_prints_them() {
    let src = "def f (x: i32) = x\nentry g (y: f32) = f y\n";
    for backend in [Backend::Compiled, Backend::Interpreter] {
        let e = Program::from_source_with("bad.fut", src, backend)
            .err()
            .unwrap();
        assert!(matches!(e, Error::Compile(_)));
        assert_eq!(
            e.to_string(),
            "bad.fut:2:22-23: Error: Cannot unify \"i32\" with \"f32\".\n   \
             2 | entry g (y: f32) = f y\n     \
             |                      ^\n\
             Cannot apply \"f\" to \"y\" (its first argument): the types do not match.\n\
             Expected type \"i32\" but found \"f32\" in the first argument of \"f\"."
        );
    }
}

#[test]
fn a_construct_the_compiled_backend_cannot_lower_is_a_located_compile_error() {
    let src = "entry tup (p: []([2]f32, i32)) = p[0].1";
    let e = Program::from_source("tup.fut", src).err().unwrap();
    assert!(matches!(e, Error::Compile(_)), "{e:?}");
    assert!(e
        .to_string()
        .starts_with("tup.fut:1:1-40: Error: not yet supported"));
    // The interpreter runs it, but an array of tuples cannot be passed from the host.
    let p = Program::from_source_with("tup.fut", src, Backend::Interpreter).unwrap();
    let e = p.call("tup", (1.0f32,)).unwrap_err();
    assert!(
        e.to_string().contains("cannot be given from the host"),
        "{e}"
    );
}

#[test]
fn a_file_that_cannot_be_read_is_an_io_error() {
    let e = Program::from_file("/nonexistent/prog.fut").err().unwrap();
    assert_eq!(
        e,
        Error::Io("Error: cannot read /nonexistent/prog.fut: No such file or directory".into())
    );
}

#[test]
fn from_file_names_the_file_in_diagnostics() {
    let dir = std::env::temp_dir().join(format!("runic-lib-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("warn.fut");
    std::fs::write(&path, "entry f (x: i32) = x + 1\n").unwrap();
    let p = Program::from_file(&path).unwrap();
    assert_eq!(p.call("f", (41i32,)).unwrap().get::<i32>(0).unwrap(), 42);
    std::fs::write(&path, "entry f (x: i32) = x + \n").unwrap();
    let e = Program::from_file(&path).err().unwrap();
    assert!(matches!(e, Error::Compile(_)));
    assert!(
        e.to_string().starts_with(&format!(
            "{}:2:1-2: Error: unexpected end of file",
            path.display()
        )),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

//! Values in and out: every primitive type, arrays of every rank given as owned arrays,
//! views, non-contiguous views and slices, and tuple results; on both backends.

use half::f16;
use ndarray::{array, Array, ArrayD, Ix0, Ix1, Ix2, IxDyn};
use runic::{Backend, IntoValue, Program, Record, Value};

const BACKENDS: [Backend; 2] = [Backend::Compiled, Backend::Interpreter];

/// One identity entry per primitive type, taking a scalar and a matrix.
fn identities() -> String {
    let types = [
        "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64", "bool",
    ];
    types
        .iter()
        .map(|t| format!("entry id_{t} (x: {t}) (xs: [][]{t}) = (x, xs)\n"))
        .collect()
}

fn round_trip<T>(p: &Program, name: &str, x: T, xs: Array<T, Ix2>)
where
    T: runic::Element + runic::IntoValue + runic::FromValue + PartialEq + std::fmt::Debug,
{
    let mut out = p.call(name, (x, &xs)).unwrap();
    assert_eq!(out.len(), 2, "{name}");
    assert_eq!(out.take::<T>(0).unwrap(), x, "{name}");
    assert_eq!(out.take::<Array<T, Ix2>>(1).unwrap(), xs, "{name}");
}

#[test]
fn every_primitive_type_round_trips_on_both_backends() {
    for backend in BACKENDS {
        let p = Program::from_source_with("ids.fut", &identities(), backend).unwrap();
        round_trip(&p, "id_i8", -128i8, array![[1i8, -2], [3, 127]]);
        round_trip(&p, "id_i16", -300i16, array![[1i16, -2], [3, 32767]]);
        round_trip(&p, "id_i32", -70000i32, array![[1i32, -2], [3, i32::MIN]]);
        round_trip(&p, "id_i64", i64::MAX, array![[1i64, -2], [3, 1 << 40]]);
        round_trip(&p, "id_u8", 255u8, array![[1u8, 2], [3, 200]]);
        round_trip(&p, "id_u16", 65535u16, array![[1u16, 2], [3, 40000]]);
        round_trip(
            &p,
            "id_u32",
            u32::MAX,
            array![[1u32, 2], [3, 3_000_000_000]],
        );
        round_trip(&p, "id_u64", u64::MAX, array![[1u64, 2], [3, 1 << 63]]);
        let h = f16::from_f32;
        round_trip(
            &p,
            "id_f16",
            h(1.5),
            array![[h(0.5), h(-2.0)], [h(65504.0), h(0.0)]],
        );
        round_trip(
            &p,
            "id_f32",
            0.1f32,
            array![[1.5f32, -2.25], [f32::MAX, 1e-30]],
        );
        round_trip(
            &p,
            "id_f64",
            0.1f64,
            array![[1.5f64, -2.25], [f64::MIN, 1e-300]],
        );
        round_trip(&p, "id_bool", true, array![[true, false], [false, true]]);
    }
}

#[test]
fn arrays_of_any_rank_and_layout_are_accepted() {
    let src = "entry total [n][m] (xs: [n][m]f64): f64 = f64.sum (flatten xs)\n\
               entry row [n][m] (xs: [n][m]f64) (i: i64): [m]f64 = xs[i]\n\
               entry shape3 [a][b][c] (xs: [a][b][c]i32): [3]i64 = [a, b, c]";
    let p = Program::from_source("arrays.fut", src).unwrap();
    let xs = array![[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]];
    // Owned, view, transposed view (not contiguous), dynamic rank: all the same matrix
    // up to transposition.
    assert_eq!(
        p.call("total", (&xs,)).unwrap().get::<f64>(0).unwrap(),
        21.0
    );
    assert_eq!(
        p.call("total", (xs.view(),))
            .unwrap()
            .get::<f64>(0)
            .unwrap(),
        21.0
    );
    let t = xs.t();
    let row = p
        .call("row", (t, 2i64))
        .unwrap()
        .into_array::<f64, Ix1>(0)
        .unwrap();
    assert_eq!(row, array![3.0, 6.0]);
    let dynamic: ArrayD<f64> = xs.clone().into_dyn();
    let row = p.call("row", (dynamic, 1i64)).unwrap();
    assert_eq!(
        row.get::<ArrayD<f64>>(0).unwrap(),
        array![4.0, 5.0, 6.0].into_dyn()
    );
    // An owned array sliced in place starts past the beginning of its storage.
    let mut sliced = array![[0.0f64, 0.0, 0.0], [1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    sliced.slice_collapse(ndarray::s![1.., ..]);
    assert_eq!(
        p.call("total", (sliced,)).unwrap().get::<f64>(0).unwrap(),
        21.0
    );
    let cube = Array::from_shape_vec(IxDyn(&[2, 3, 4]), (0..24).collect::<Vec<i32>>()).unwrap();
    let shape = p.call("shape3", (&cube,)).unwrap();
    assert_eq!(shape.get::<Vec1<i64>>(0).unwrap().0, vec![2, 3, 4]);
}

/// A one-dimensional result as a plain vector (a user-defined [`runic::FromValue`]).
struct Vec1<T>(Vec<T>);

impl<T: runic::Element> runic::FromValue for Vec1<T> {
    fn from_value(v: Value) -> Result<Self, String> {
        Array::<T, Ix1>::from_value(v).map(|a| Vec1(a.to_vec()))
    }
}

#[test]
fn slices_vectors_and_zero_dimensional_arrays_are_arguments() {
    let p = Program::from_source(
        "s.fut",
        "entry dot [n] (a: [n]f32) (b: [n]f32): f32 = f32.sum (map2 (*) a b)",
    )
    .unwrap();
    let a = [1.0f32, 2.0];
    let out = p.call("dot", (&a[..], vec![3.0f32, 4.0])).unwrap();
    assert_eq!(out.get::<f32>(0).unwrap(), 11.0);
    // A scalar result can be taken as a 0-dimensional array.
    assert_eq!(
        out.get::<Array<f32, Ix0>>(0).unwrap(),
        ndarray::arr0(11.0f32)
    );
}

#[test]
fn tuple_results_are_split_and_nested_tuples_and_records_come_back_on_both_backends() {
    let src = "entry pair (x: f32) = (x + 1, [x, x])\n\
               entry nested (x: i32) = (x, (x + 1, x + 2))\n\
               entry record (x: i32) = {total = x * 10, parts = ([x, x], x > 0)}";
    for backend in BACKENDS {
        let p = Program::from_source_with("t.fut", src, backend).unwrap();
        let mut out = p.call("pair", (1.5f32,)).unwrap();
        assert_eq!(out.take::<f32>(0).unwrap(), 2.5);
        assert_eq!(out.take::<Array<f32, Ix1>>(1).unwrap(), array![1.5, 1.5]);
        let out = p.call("nested", (1i32,)).unwrap();
        assert_eq!(out.get::<i32>(0).unwrap(), 1);
        assert_eq!(out.get::<(i32, i32)>(1).unwrap(), (2, 3), "{backend:?}");
        let out = p.call("record", (2i32,)).unwrap();
        let Value::Record(mut fields) = out.get::<Value>(0).unwrap() else {
            panic!("{backend:?}: a record");
        };
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(fields[0].0, "parts", "{backend:?}");
        assert_eq!(fields[1].1.to_string(), "20i32", "{backend:?}");
    }
}

/// Tuple and record parameters, nested, with a size shared between a field and another
/// argument; the expected values are worked out by hand.
const STRUCTURED: &str = "\
entry affine [n][m] (layer: {w: [n][m]f64, b: [n]f64}) (x: [m]f64) : [n]f64 =
  map2 (\\row b -> f64.sum (map2 (*) row x) + b) layer.w layer.b
entry mix [k] (p: (i32, (f32, [k]f32))) : f32 =
  f32.i32 p.0 + p.1.0 * f32.sum p.1.1
entry pick ((a, b): (bool, u8)) : u8 = if a then b else 0
entry swap (r: {x: i64, y: [2]i64}) = {x = r.y[0], y = [r.x, r.y[1]]}
";

#[test]
fn tuple_and_record_parameters_are_passed_on_both_backends() {
    for backend in BACKENDS {
        let p = Program::from_source_with("s.fut", STRUCTURED, backend).unwrap();
        let layer = Record::new()
            .field("w", array![[1.0f64, 2.0, 3.0], [0.0, -1.0, 0.5]])
            .field("b", array![0.5f64, 1.0]);
        let out = p.call("affine", (layer, array![1.0f64, 1.0, 2.0])).unwrap();
        // [1+2+6+0.5, 0-1+1+1]
        assert_eq!(
            out.into_array::<f64, Ix1>(0).unwrap(),
            array![9.5, 1.0],
            "{backend:?}"
        );
        let out = p
            .call("mix", ((2i32, (0.5f32, array![1.0f32, 3.0])),))
            .unwrap();
        assert_eq!(out.get::<f32>(0).unwrap(), 4.0, "{backend:?}");
        let out = p.call("pick", ((true, 7u8),)).unwrap();
        assert_eq!(out.get::<u8>(0).unwrap(), 7, "{backend:?}");
        // Fields may be given in any order; a record result comes back as a Record.
        let r = Record::new().field("y", array![5i64, 6]).field("x", 4i64);
        let mut r = p.call("swap", (r,)).unwrap().take::<Record>(0).unwrap();
        assert_eq!(r.take::<i64>("x").unwrap(), 5, "{backend:?}");
        assert_eq!(r.take::<Array<i64, Ix1>>("y").unwrap(), array![4, 6]);
    }
}

#[test]
fn a_misfit_inside_a_tuple_or_record_argument_names_the_component_or_field() {
    for backend in BACKENDS {
        let p = Program::from_source_with("s.fut", STRUCTURED, backend).unwrap();
        let sig = p.entry("affine").unwrap().signature().clone();
        assert_eq!(sig.params[0].ty.to_string(), "{b: [n]f64, w: [n][m]f64}");
        let err = |args: Vec<Value>| p.call("affine", args).unwrap_err().to_string();
        let x = || array![1.0f64, 2.0].into_value();
        let w = || array![[1.0f64, 2.0], [3.0, 4.0]];
        let missing = Record::new().field("w", w()).into_value();
        assert_eq!(
            err(vec![missing, x()]),
            "Error: argument 1 (layer) of \"affine\": expected type {b: [n]f64, w: [n][m]f64}, \
             got {w: [2][2]f64}: field b is missing"
        );
        let extra = Record::new()
            .field("w", w())
            .field("b", array![0.0f64, 0.0])
            .field("c", 1i32)
            .into_value();
        assert!(err(vec![extra, x()]).ends_with("the record has no field c"));
        let short_b = Record::new()
            .field("w", w())
            .field("b", array![0.0f64])
            .into_value();
        assert_eq!(
            err(vec![short_b, x()]),
            "Error: argument 1 (layer) of \"affine\": field w: expected type [n][m]f64, got \
             [2][2]f64: dimension 1 is 2, but size n is 1 (dimension 1 of argument 1)"
        );
        let e = p
            .call("mix", ((2i32, (0.5f64, array![1.0f32])),))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "Error: argument 1 (p) of \"mix\": component 2 of the tuple: component 1 of the \
             tuple: expected type f32, got f64"
        );
    }
}

#[test]
fn taking_a_result_as_the_wrong_type_names_it() {
    let p = Program::from_source("t.fut", "entry f (x: f32) = (x, [x])").unwrap();
    let mut out = p.call("f", (1.0f32,)).unwrap();
    let e = out.get::<f64>(0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Error: result 1 of \"f\": expected f64, got f32"
    );
    let e = out.get::<Array<f32, Ix2>>(1).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Error: result 2 of \"f\": expected an array of rank 2, got one of rank 1"
    );
    assert!(out.get::<i32>(2).is_err());
    out.take::<f32>(0).unwrap();
    assert!(out
        .take::<f32>(0)
        .unwrap_err()
        .to_string()
        .contains("already taken"));
}

#[test]
fn borrowed_host_memory_is_read_but_never_written_on_both_backends() {
    use std::sync::Arc;
    let src = "entry upd (xs: *[]f32) (i: i64) : []f32 = xs with [i] = 5\n\
               entry total (xs: []f32) : f32 = f32.sum xs";
    let host: Arc<Vec<f32>> = Arc::new(vec![1.0, 2.0, 3.0]);
    let borrowed = || {
        let owner: Arc<dyn std::any::Any + Send + Sync> = host.clone();
        // SAFETY: `host` is never written and `owner` keeps it alive.
        let store = unsafe { runic::Store::borrowed(host.as_ptr(), host.len(), owner) };
        Value::Array(runic::DataArray {
            shape: vec![3],
            data: runic::Buffer::F32(store),
        })
    };
    for backend in BACKENDS {
        let p = Program::from_source_with("b.fut", src, backend).unwrap();
        let out = p.call("total", [borrowed()]).unwrap();
        assert_eq!(out.get::<f32>(0).unwrap(), 6.0, "{backend:?}");
        let out = p.call("upd", [borrowed(), Value::Scalar(runic::Prim::I64(1))]);
        let got = out.unwrap().into_array::<f32, Ix1>(0).unwrap();
        assert_eq!(got, array![1.0, 5.0, 3.0], "{backend:?}");
        assert_eq!(
            *host,
            vec![1.0, 2.0, 3.0],
            "{backend:?}: the host's memory changed"
        );
    }
    // Every borrowed store, and with it its reference to the owner, is gone.
    assert_eq!(Arc::strong_count(&host), 1);
}

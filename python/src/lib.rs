//! `runic._runic`: the native half of the `runic` Python module (the Python half,
//! `runic/__init__.py`, adds `compile` and `grad`). Programs and entry points wrap the
//! `runic` crate's; NumPy arrays and Python scalars become runic values on the way in, and
//! results become NumPy arrays (moved, not copied) and NumPy scalars on the way out.

use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::create_exception;
use pyo3::exceptions::{PyAttributeError, PyException};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyTuple};
use runic::{Backend, Error, IntoValue, ParamType, PrimType, Store, Value};
use std::any::Any;
use std::sync::Arc;

create_exception!(_runic, RunicError, PyException, "Any error of runic.");
create_exception!(
    _runic,
    CompileError,
    RunicError,
    "The program does not compile (or cannot be read); the message is the located diagnostic."
);
create_exception!(
    _runic,
    RuntimeError,
    RunicError,
    "A run-time error of a call (e.g. an index out of bounds), with its location."
);
create_exception!(
    _runic,
    ArgumentError,
    RunicError,
    "An argument does not fit its parameter: wrong count, dtype, rank, shape or layout."
);
create_exception!(
    _runic,
    EntryError,
    RunicError,
    "No entry point of that name; the message lists the ones there are."
);
create_exception!(
    _runic,
    InternalError,
    RunicError,
    "A bug in runic (a caught panic)."
);

fn to_py_err(e: Error) -> PyErr {
    let text = e.to_string();
    match e {
        Error::Io(_) | Error::Compile(_) => CompileError::new_err(text),
        Error::Runtime(_) => RuntimeError::new_err(text),
        Error::Argument { .. } | Error::Arity { .. } => ArgumentError::new_err(text),
        // A result Python cannot hold (a sum type or a function, which the compiled backend
        // returns opaque).
        Error::Result { .. } => RunicError::new_err(text),
        Error::UnknownEntry { .. } => EntryError::new_err(text),
        _ => InternalError::new_err(text),
    }
}

/// A compiled program; its entry points are attributes and items.
#[pyclass(frozen, module = "runic")]
struct Program {
    inner: runic::Program,
    /// The source text and name, so that `runic.grad` can add a gradient entry point.
    #[pyo3(get)]
    source: String,
    #[pyo3(get)]
    name: String,
}

#[pymethods]
impl Program {
    /// Compile `source`, naming it `name` in diagnostics; backend "compiled" or
    /// "interpreter".
    #[new]
    #[pyo3(signature = (source, name = "<string>".to_string(), backend = "compiled"))]
    fn new(py: Python<'_>, source: String, name: String, backend: &str) -> PyResult<Program> {
        let backend = match backend {
            "compiled" | "ir" => Backend::Compiled,
            "interpreter" | "interp" => Backend::Interpreter,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "unknown backend {other:?}; backends: \"compiled\", \"interpreter\""
                )))
            }
        };
        let inner = py
            .allow_threads(|| runic::Program::from_source_with(&name, &source, backend))
            .map_err(to_py_err)?;
        Ok(Program {
            inner,
            source,
            name,
        })
    }

    /// The entry point `name` (raises `EntryError` listing the ones there are).
    fn entry(&self, name: &str) -> PyResult<Entry> {
        let inner = self.inner.entry(name).map_err(to_py_err)?;
        Ok(Entry { inner })
    }

    fn __getitem__(&self, name: &str) -> PyResult<Entry> {
        self.entry(name)
    }

    fn __getattr__(&self, name: &str) -> PyResult<Entry> {
        // Python probes objects for special names; those are not entry points.
        if name.starts_with("__") {
            return Err(PyAttributeError::new_err(name.to_string()));
        }
        self.entry(name)
    }

    fn __dir__(&self) -> Vec<String> {
        self.entries()
    }

    /// The names of the entry points, in program order.
    fn entries(&self) -> Vec<String> {
        self.inner
            .entries()
            .iter()
            .map(|e| e.name.clone())
            .collect()
    }

    /// The compiler's warnings ("" if none).
    #[getter]
    fn warnings(&self) -> &str {
        self.inner.warnings()
    }

    #[getter]
    fn backend(&self) -> &'static str {
        match self.inner.backend() {
            Backend::Interpreter => "interpreter",
            _ => "compiled",
        }
    }
}

/// An entry point: call it with NumPy arrays and scalars.
#[pyclass(frozen, module = "runic")]
struct Entry {
    inner: runic::Entry,
}

#[pymethods]
impl Entry {
    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// The parameters as (name or None, type text) pairs: `[("x", "[n]f32"), …]`.
    #[getter]
    fn params(&self) -> Vec<(Option<String>, String)> {
        let sig = self.inner.signature();
        sig.params
            .iter()
            .map(|p| (p.name.clone(), p.ty.to_string()))
            .collect()
    }

    /// The result types as text.
    #[getter]
    fn results(&self) -> Vec<String> {
        self.inner.signature().results.clone()
    }

    /// Call the entry point. One result is returned as it is, several as a tuple. The GIL
    /// is released while runic runs.
    #[pyo3(signature = (*args))]
    fn __call__(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<PyObject> {
        let sig = self.inner.signature();
        if args.len() != sig.params.len() {
            return Err(to_py_err(Error::Arity {
                entry: sig.name.clone(),
                expected: sig.params.len(),
                given: args.len(),
            }));
        }
        let mut values = Vec::with_capacity(args.len());
        for (index, (arg, p)) in args.iter().zip(&sig.params).enumerate() {
            let v = to_value(&arg, &p.ty).map_err(|message| {
                to_py_err(Error::Argument {
                    entry: sig.name.clone(),
                    index,
                    name: p.name.clone(),
                    message,
                })
            })?;
            values.push(v);
        }
        let entry = &self.inner;
        let results = py
            .allow_threads(|| entry.call_values(values))
            .map_err(to_py_err)?;
        let mut objects = Vec::with_capacity(results.len());
        for (index, v) in results.into_iter().enumerate() {
            objects.push(to_python(py, v).map_err(|message| {
                to_py_err(Error::Result {
                    entry: sig.name.clone(),
                    index,
                    message,
                })
            })?);
        }
        if objects.len() == 1 {
            Ok(objects.pop().expect("one result"))
        } else {
            Ok(PyTuple::new(py, objects)?.into_any().unbind())
        }
    }

    fn __repr__(&self) -> String {
        let sig = self.inner.signature();
        let params: Vec<String> = sig
            .params
            .iter()
            .map(|p| format!("{}: {}", p.name.as_deref().unwrap_or("_"), p.ty))
            .collect();
        format!(
            "<runic entry {}({}) -> ({})>",
            sig.name,
            params.join(", "),
            sig.results.join(", ")
        )
    }
}

/// A Python argument as a runic value. NumPy arrays (and NumPy scalars) keep their dtype;
/// Python scalars take the parameter's type when they fit it.
fn to_value(obj: &Bound<'_, PyAny>, ty: &ParamType) -> Result<Value, String> {
    match ty {
        ParamType::Tuple(items) => return tuple_value(obj, ty, items),
        ParamType::Record(fields) => return record_value(obj, ty, fields),
        _ => {}
    }
    if let Ok(arr) = obj.downcast::<PyUntypedArray>() {
        return array_value(arr);
    }
    // A NumPy scalar (np.float32(1.0), …) has a dtype: it is a 0-dimensional array.
    if obj.hasattr("dtype").unwrap_or(false) && !obj.is_instance_of::<PyBool>() {
        let np = obj.py().import("numpy").map_err(|e| e.to_string())?;
        let arr = np
            .call_method1("asarray", (obj,))
            .map_err(|e| e.to_string())?;
        if let Ok(arr) = arr.downcast::<PyUntypedArray>() {
            return array_value(arr);
        }
    }
    let ParamType::Scalar(want) = ty else {
        return Err(format!(
            "expected type {ty} (a NumPy array), got a {}",
            type_name(obj)
        ));
    };
    python_scalar(obj, *want).ok_or_else(|| format!("expected type {ty}, got {}", describe(obj)))
}

/// A Python tuple as a runic tuple, component by component.
fn tuple_value(
    obj: &Bound<'_, PyAny>,
    ty: &ParamType,
    items: &[ParamType],
) -> Result<Value, String> {
    let Ok(given) = obj.downcast::<PyTuple>() else {
        return Err(format!(
            "expected type {ty} (a tuple), got {}",
            describe(obj)
        ));
    };
    if given.len() != items.len() {
        return Err(format!(
            "expected type {ty}, got a tuple of {} components",
            given.len()
        ));
    }
    let mut values = Vec::with_capacity(items.len());
    for (k, (x, t)) in given.iter().zip(items).enumerate() {
        values.push(to_value(&x, t).map_err(|e| format!("component {} of the tuple: {e}", k + 1))?);
    }
    Ok(Value::Tuple(values))
}

/// A Python dict with a key per field as a runic record.
fn record_value(
    obj: &Bound<'_, PyAny>,
    ty: &ParamType,
    fields: &[(String, ParamType)],
) -> Result<Value, String> {
    let Ok(given) = obj.downcast::<PyDict>() else {
        return Err(format!(
            "expected type {ty} (a dict), got {}",
            describe(obj)
        ));
    };
    for key in given.keys() {
        let known = key
            .extract::<String>()
            .is_ok_and(|k| fields.iter().any(|(f, _)| *f == k));
        if !known {
            return Err(format!(
                "expected type {ty}: the record has no field {}",
                describe(&key)
            ));
        }
    }
    let mut values = Vec::with_capacity(fields.len());
    for (name, t) in fields {
        let x = given
            .get_item(name)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("expected type {ty}: field {name} is missing"))?;
        values.push((
            name.clone(),
            to_value(&x, t).map_err(|e| format!("field {name}: {e}"))?,
        ));
    }
    Ok(Value::Record(values))
}

/// A Python `bool`, `int` or `float` as a scalar of type `want`, if it fits: ints fit any
/// numeric type whose range holds them, floats only float types.
fn python_scalar(obj: &Bound<'_, PyAny>, want: PrimType) -> Option<Value> {
    use runic::{f16, Prim};
    let prim = if obj.is_instance_of::<PyBool>() {
        match want {
            PrimType::Bool => Prim::Bool(obj.extract().ok()?),
            _ => return None,
        }
    } else if obj.is_instance_of::<PyInt>() {
        match want {
            PrimType::I8 => Prim::I8(obj.extract().ok()?),
            PrimType::I16 => Prim::I16(obj.extract().ok()?),
            PrimType::I32 => Prim::I32(obj.extract().ok()?),
            PrimType::I64 => Prim::I64(obj.extract().ok()?),
            PrimType::U8 => Prim::U8(obj.extract().ok()?),
            PrimType::U16 => Prim::U16(obj.extract().ok()?),
            PrimType::U32 => Prim::U32(obj.extract().ok()?),
            PrimType::U64 => Prim::U64(obj.extract().ok()?),
            PrimType::F16 => Prim::F16(f16::from_f64(obj.extract::<i64>().ok()? as f64)),
            PrimType::F32 => Prim::F32(obj.extract::<i64>().ok()? as f32),
            PrimType::F64 => Prim::F64(obj.extract::<i64>().ok()? as f64),
            PrimType::Bool => return None,
        }
    } else if obj.is_instance_of::<PyFloat>() {
        let x: f64 = obj.extract().ok()?;
        match want {
            PrimType::F16 => Prim::F16(f16::from_f64(x)),
            PrimType::F32 => Prim::F32(x as f32),
            PrimType::F64 => Prim::F64(x),
            _ => return None,
        }
    } else {
        return None;
    };
    Some(Value::Scalar(prim))
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "value".to_string())
}

fn describe(obj: &Bound<'_, PyAny>) -> String {
    let shown = obj
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "?".to_string());
    let shown: String = shown.chars().take(40).collect();
    format!("{} {shown}", type_name(obj))
}

macro_rules! dtypes {
    ($arr:expr, $($t:ty),*) => {{
        let arr = $arr;
        $(
            if let Ok(a) = arr.downcast::<PyArrayDyn<$t>>() {
                return contiguous::<$t>(a);
            }
        )*
        Err(format!("NumPy arrays of dtype {} are not runic data", arr.dtype()))
    }};
}

/// A NumPy array as a runic value. A C-contiguous, aligned array is read in place (no
/// copy): runic keeps a reference to it for as long as it reads it, and copies it only if
/// the program updates it in place (so the caller's array never changes). Any other layout
/// is an error (runic never copies silently).
fn array_value(arr: &Bound<'_, PyUntypedArray>) -> Result<Value, String> {
    if !arr.is_c_contiguous() {
        return Err(format!(
            "the {} array is not C-contiguous (a transposed or strided view); pass \
             numpy.ascontiguousarray(x) to copy it",
            arr.dtype()
        ));
    }
    dtypes!(
        arr,
        i8,
        i16,
        i32,
        i64,
        u8,
        u16,
        u32,
        u64,
        half::f16,
        f32,
        f64,
        bool
    )
}

fn contiguous<T: runic::Element + numpy::Element + IntoValue>(
    a: &Bound<'_, PyArrayDyn<T>>,
) -> Result<Value, String> {
    let shape = a.shape().to_vec();
    let len: usize = shape.iter().product();
    let ptr = a.data() as *const T;
    if shape.is_empty() || !(ptr as usize).is_multiple_of(std::mem::align_of::<T>()) {
        // A 0-dimensional array is a scalar; a misaligned one (a view at an odd byte
        // offset) cannot be read as a slice and is copied once, bytewise.
        let mut data: Vec<T> = Vec::with_capacity(len);
        // SAFETY: the array holds `len` elements of `T` (C-contiguous, its dtype) at `ptr`,
        // possibly misaligned, hence the byte copy into `data`'s aligned capacity; every
        // byte pattern NumPy stores for these dtypes is a valid `T`.
        unsafe {
            std::ptr::copy_nonoverlapping(
                ptr.cast::<u8>(),
                data.as_mut_ptr().cast::<u8>(),
                len * std::mem::size_of::<T>(),
            );
            data.set_len(len);
        }
        if shape.is_empty() {
            return Ok(data[0].into_value());
        }
        let arr = numpy::ndarray::ArrayD::from_shape_vec(shape, data).map_err(|e| e.to_string())?;
        return Ok(arr.into_value());
    }
    let owner: Arc<dyn Any + Send + Sync> = Arc::new(a.clone().unbind());
    // SAFETY: the array is C-contiguous (checked by the caller) and aligned (checked above),
    // so `len` elements of `T` (its dtype, checked by the downcast) start at `ptr`; `owner`
    // keeps the array alive, and runic never writes borrowed memory (the first write
    // copies it). Writing the array from another thread while a call reads it is the
    // caller's data race, as documented in the module.
    let store = unsafe { Store::borrowed(ptr, len, owner) };
    Ok(Value::Array(runic::DataArray {
        shape,
        data: T::store_buffer(store),
    }))
}

/// A result as a Python object: arrays as NumPy arrays that own runic's buffer (no copy),
/// scalars as NumPy scalars of the same dtype, tuples as tuples, records as dicts.
fn to_python(py: Python<'_>, v: Value) -> Result<PyObject, String> {
    use runic::Buffer;
    let err = |e: PyErr| e.to_string();
    Ok(match v {
        Value::Array(a) => {
            let shape = a.shape;
            macro_rules! owned {
                ($v:expr) => {{
                    let arr = numpy::ndarray::ArrayD::from_shape_vec(shape, $v.into_vec())
                        .map_err(|e| e.to_string())?;
                    PyArrayDyn::from_owned_array(py, arr).into_any().unbind()
                }};
            }
            match a.data {
                Buffer::I8(v) => owned!(v),
                Buffer::I16(v) => owned!(v),
                Buffer::I32(v) => owned!(v),
                Buffer::I64(v) => owned!(v),
                Buffer::U8(v) => owned!(v),
                Buffer::U16(v) => owned!(v),
                Buffer::U32(v) => owned!(v),
                Buffer::U64(v) => owned!(v),
                Buffer::F16(v) => owned!(v),
                Buffer::F32(v) => owned!(v),
                Buffer::F64(v) => owned!(v),
                Buffer::Bool(v) => owned!(v),
            }
        }
        Value::Scalar(p) => {
            // A 0-dimensional array indexed by `()` is the NumPy scalar of its dtype.
            let arr = to_python(
                py,
                Value::Array(runic::DataArray {
                    shape: vec![1],
                    data: runic::Buffer::filled(p.ty(), 1, p),
                }),
            )?;
            arr.bind(py).get_item(0).map_err(err)?.unbind()
        }
        Value::Tuple(items) => {
            let items = items
                .into_iter()
                .map(|x| to_python(py, x))
                .collect::<Result<Vec<_>, _>>()?;
            PyTuple::new(py, items).map_err(err)?.into_any().unbind()
        }
        Value::Record(fields) => {
            let d = PyDict::new(py);
            for (k, x) in fields {
                d.set_item(k, to_python(py, x)?).map_err(err)?;
            }
            d.into_any().unbind()
        }
        other => {
            return Err(format!(
                "a value of type {} cannot be returned to Python",
                runic_type_text(&other)
            ))
        }
    })
}

fn runic_type_text(v: &Value) -> String {
    match v {
        Value::Opaque(t) => t.clone(),
        Value::Sum(c, _) => format!("#{c} …"),
        _ => "?".to_string(),
    }
}

#[pymodule]
fn _runic(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Program>()?;
    m.add_class::<Entry>()?;
    m.add("RunicError", py.get_type::<RunicError>())?;
    m.add("CompileError", py.get_type::<CompileError>())?;
    m.add("RuntimeError", py.get_type::<RuntimeError>())?;
    m.add("ArgumentError", py.get_type::<ArgumentError>())?;
    m.add("EntryError", py.get_type::<EntryError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    Ok(())
}

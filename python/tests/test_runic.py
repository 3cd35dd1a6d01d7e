"""The runic Python module: dtypes, shapes, errors, gradients, threads."""

import threading

import numpy as np
import pytest

import runic

DTYPES = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64", "bool"]
NUMPY = {
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float16, "f32": np.float32, "f64": np.float64, "bool": np.bool_,
}

DOT = """
entry dot [n] (a: [n]f32) (b: [n]f32): f32 = f32.sum (map2 (*) a b)
entry scale [n][m] (k: f64) (xs: [n][m]f64): [n][m]f64 = map (map (* k)) xs
entry get (xs: []i32) (i: i64): i32 = xs[i]
entry stats (xs: []f64) = (f64.sum xs, f64.maximum xs, length xs)
"""


@pytest.fixture(scope="module", params=["compiled", "interpreter"])
def dot(request):
    return runic.compile(DOT, backend=request.param)


def identities():
    return "".join(f"entry id_{t} (x: {t}) (xs: [][]{t}) = (x, xs)\n" for t in DTYPES)


@pytest.mark.parametrize("backend", ["compiled", "interpreter"])
def test_every_dtype_round_trips(backend):
    p = runic.compile(identities(), backend=backend)
    for t in DTYPES:
        dt = NUMPY[t]
        xs = (np.arange(6).reshape(2, 3) % 2 == 0) if t == "bool" else np.arange(6, dtype=dt).reshape(2, 3)
        xs = xs.astype(dt)
        x = dt(1)
        y, ys = p[f"id_{t}"](x, xs)
        assert ys.dtype == np.dtype(dt), t
        assert ys.shape == (2, 3)
        np.testing.assert_array_equal(ys, xs)
        assert np.asarray(y).dtype == np.dtype(dt), t
        assert y == x


def test_results_are_numpy_arrays_and_scalars(dot):
    a = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    b = np.array([4.0, 5.0, 6.0], dtype=np.float32)
    r = dot.dot(a, b)
    assert isinstance(r, np.float32) and r == 32.0
    m = dot.scale(2, np.ones((2, 3)))
    assert m.dtype == np.float64 and m.shape == (2, 3)
    np.testing.assert_array_equal(m, np.full((2, 3), 2.0))
    # A tuple result is a Python tuple.
    s, mx, n = dot.stats(np.array([1.0, 5.0, 2.0]))
    assert (s, mx, n) == (8.0, 5.0, 3)
    assert isinstance(n, np.int64)


def test_python_scalars_take_the_parameter_type(dot):
    assert dot.get(np.array([7, 8], dtype=np.int32), 1) == 8
    np.testing.assert_array_equal(dot.scale(0.5, np.ones((1, 2))), [[0.5, 0.5]])
    with pytest.raises(runic.ArgumentError, match='argument 2 \\(i\\) of "get": expected type i64, got float'):
        dot.get(np.array([7, 8], dtype=np.int32), 1.5)


def test_wrong_dtype_names_the_argument(dot):
    a = np.ones(3, dtype=np.float32)
    with pytest.raises(runic.ArgumentError) as e:
        dot.dot(a, np.ones(3, dtype=np.float64))
    assert str(e.value) == 'Error: argument 2 (b) of "dot": expected type [n]f32, got [3]f64'


def test_wrong_rank_and_shape_name_the_argument(dot):
    a = np.ones(3, dtype=np.float32)
    with pytest.raises(runic.ArgumentError, match=r"argument 1 \(a\) of \"dot\": expected type \[n\]f32, got \[3\]\[1\]f32"):
        dot.dot(a.reshape(3, 1), a)
    with pytest.raises(runic.ArgumentError, match=r"argument 2 \(b\).*dimension 1 is 4, but size n is 3"):
        dot.dot(a, np.ones(4, dtype=np.float32))


def test_wrong_number_of_arguments(dot):
    with pytest.raises(runic.ArgumentError, match='entry point "dot" takes 2 arguments, but 1 was given'):
        dot.dot(np.ones(3, dtype=np.float32))


def test_non_contiguous_arrays_are_refused_not_copied(dot):
    m = np.ones((3, 2), dtype=np.float64)
    with pytest.raises(runic.ArgumentError, match="not C-contiguous.*ascontiguousarray"):
        dot.scale(1.0, m.T)
    np.testing.assert_array_equal(dot.scale(1.0, np.ascontiguousarray(m.T)), m.T)
    a = np.arange(6, dtype=np.float32)
    with pytest.raises(runic.ArgumentError, match="not C-contiguous"):
        dot.dot(a[::2], a[1::2])


def test_missing_entry_lists_the_entries(dot):
    with pytest.raises(runic.EntryError, match='no entry point named "main"; entry points: dot, scale, get, stats'):
        dot.main
    with pytest.raises(runic.RunicError):
        dot["main"]
    assert dot.entries() == ["dot", "scale", "get", "stats"]
    assert not hasattr(dot, "__array__")


def test_runtime_errors_are_located(dot):
    with pytest.raises(runic.RuntimeError) as e:
        dot.get(np.array([1, 2], dtype=np.int32), 5)
    assert str(e.value).startswith("<string>:4:39-44: Error: Index [5] out of bounds for array of shape [2].")
    assert "Backtrace:" in str(e.value)


def test_compile_errors_are_located(tmp_path):
    with pytest.raises(runic.CompileError) as e:
        runic.compile("def f (x: i32) = x\nentry g (y: f32) = f y\n")
    assert str(e.value).startswith('<string>:2:22-23: Error: Cannot unify "i32" with "f32".')
    path = tmp_path / "bad.fut"
    path.write_text("entry f (x: i32) = x +\n")
    with pytest.raises(runic.CompileError, match=f"^{path}:2:1-2: Error: unexpected end of file"):
        runic.compile(path)
    with pytest.raises(runic.CompileError, match="cannot read"):
        runic.compile(str(tmp_path / "missing.fut"))


def test_compile_reads_files(tmp_path):
    path = tmp_path / "sq.fut"
    path.write_text("entry sq (x: f64) = x * x\n")
    assert runic.compile(str(path)).sq(3.0) == 9.0


def test_gradient_matches_finite_differences():
    p = runic.compile(
        "entry loss (w: []f64) (x: []f64): f64 = f64.sum (map2 (\\a b -> f64.sin (a * b)) w x)"
    )
    w = np.array([0.3, -1.2, 2.0])
    x = np.array([1.5, 0.7, -0.4])
    g = runic.grad(p, "loss")(w, x)
    h = 1e-6
    fd = np.array([(p.loss(w + h * e, x) - p.loss(w - h * e, x)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(g, fd, rtol=1e-6)
    np.testing.assert_allclose(g, x * np.cos(w * x), rtol=1e-12)
    # Both parameters, and the value with the gradient.
    gw, gx = runic.grad(p, "loss", wrt=(0, 1))(w, x)
    np.testing.assert_allclose(gx, w * np.cos(w * x), rtol=1e-12)
    v, gw2 = runic.value_and_grad(p, "loss")(w, x)
    assert v == pytest.approx(np.sum(np.sin(w * x)))
    np.testing.assert_allclose(gw2, gw)


def test_threads_share_a_program():
    p = runic.compile(DOT)
    errors = []

    def work(t):
        for k in range(50):
            n = 100 + 10 * t + k
            a = np.arange(n, dtype=np.float32)
            b = np.full(n, t + 1, dtype=np.float32)
            got = p.dot(a, b)
            if got != (t + 1) * n * (n - 1) / 2:
                errors.append((t, k, got))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []


def test_unknown_backend_is_a_value_error():
    with pytest.raises(ValueError, match="unknown backend"):
        runic.compile(DOT, backend="gpu")


def test_records_and_nested_tuples_come_back_as_dicts_and_tuples_on_both_backends():
    src = "entry rec (x: f32) = {a = x, b = (x * 2, [x])}"
    for backend in ("compiled", "interpreter"):
        p = runic.compile(src, backend=backend)
        r = p.rec(1.0)
        assert r["a"] == 1.0, backend
        assert r["b"][0] == 2.0, backend
        assert list(r["b"][1]) == [1.0], backend


def test_results_python_cannot_hold_raise_runic_error():
    # A sum type is opaque on the compiled backend.
    p = runic.compile("entry opt (x: f32) : (#some f32 | #none) = if x > 0 then #some x else #none")
    with pytest.raises(runic.RunicError, match=r'result 1 of "opt": a value of type .* cannot be returned'):
        p.opt(1.0)


LAYER = """
entry affine [n][m] (layer: {w: [n][m]f64, b: [n]f64}) (x: [m]f64) : [n]f64 =
  map2 (\\row b -> f64.sum (map2 (*) row x) + b) layer.w layer.b
entry mix [k] (p: (i32, (f32, [k]f32))) : f32 = f32.i32 p.0 + p.1.0 * f32.sum p.1.1
"""


@pytest.mark.parametrize("backend", ["compiled", "interpreter"])
def test_tuple_and_record_parameters_take_tuples_and_dicts(backend):
    p = runic.compile(LAYER, backend=backend)
    w = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 0.5]])
    out = p.affine({"w": w, "b": np.array([0.5, 1.0])}, np.array([1.0, 1.0, 2.0]))
    # Worked by hand: [1+2+6+0.5, 0-1+1+1].
    assert out.tolist() == [9.5, 1.0]
    assert p.mix((2, (0.5, np.array([1.0, 3.0], dtype=np.float32)))) == 4.0


@pytest.mark.parametrize("backend", ["compiled", "interpreter"])
def test_a_misfit_inside_a_tuple_or_record_names_the_field(backend):
    p = runic.compile(LAYER, backend=backend)
    x = np.array([1.0, 2.0])
    with pytest.raises(runic.ArgumentError, match="field b is missing"):
        p.affine({"w": np.eye(2)}, x)
    with pytest.raises(runic.ArgumentError, match="the record has no field str 'c'"):
        p.affine({"w": np.eye(2), "b": x, "c": 1}, x)
    with pytest.raises(runic.ArgumentError, match=r"field w: expected type \[n\]\[m\]f64, got \[2\]\[2\]f32"):
        p.affine({"w": np.eye(2, dtype=np.float32), "b": x}, x)
    with pytest.raises(runic.ArgumentError, match=r"component 2 of the tuple: expected type \(f32, \[k\]f32\) \(a tuple\)"):
        p.mix((2, 0.5))


NOCOPY = """
entry first (xs: []f32) : f32 = xs[0] + xs[length xs - 1]
entry upd (xs: *[]f32) : []f32 = xs with [0] = 5
entry same (xs: []f64) : []f64 = xs
"""


def peak_rss_mib():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.parametrize("backend", ["compiled", "interpreter"])
def test_contiguous_arguments_are_read_in_place_not_copied(backend):
    p = runic.compile(NOCOPY, backend=backend)
    xs = np.ones(64 * 1024 * 1024, dtype=np.float32)  # 256 MiB
    xs[-1] = 2.0
    before = peak_rss_mib()
    assert p.first(xs) == 3.0
    # A copy of the argument would raise the peak by 256 MiB.
    assert peak_rss_mib() - before < 64, "the argument was copied"


@pytest.mark.parametrize("backend", ["compiled", "interpreter"])
def test_an_in_place_update_of_an_argument_never_changes_the_callers_array(backend):
    p = runic.compile(NOCOPY, backend=backend)
    xs = np.arange(4, dtype=np.float32)
    out = p.upd(xs)
    assert out.tolist() == [5.0, 1.0, 2.0, 3.0]
    assert xs.tolist() == [0.0, 1.0, 2.0, 3.0]
    ys = np.array([1.0, 2.0])
    zs = p.same(ys)
    zs[0] = 9.0
    assert ys.tolist() == [1.0, 2.0], "a result is never the argument's memory"


def test_arguments_stay_alive_while_runic_reads_them():
    import gc
    p = runic.compile(NOCOPY)
    total = 0.0
    for _ in range(50):
        total += p.first(np.full(1000, 2.0, dtype=np.float32))
        gc.collect()
    assert total == 200.0


def test_a_misaligned_view_is_read_correctly():
    p = runic.compile(NOCOPY)
    raw = np.zeros(4 * 8 + 1, dtype=np.uint8)
    xs = np.frombuffer(raw, dtype=np.float32, offset=1, count=8).copy()
    xs[:] = np.arange(8, dtype=np.float32)
    raw[1:] = xs.view(np.uint8)
    view = np.frombuffer(raw, dtype=np.float32, offset=1, count=8)
    assert not view.flags["ALIGNED"]
    assert p.first(view) == 7.0

//! Intrinsic functions: the prelude's native functions (language.md §10.3–§10.10) and the
//! members of the numeric modules (§10.9).

use crate::ad;
use crate::error::RuntimeError;
use crate::eval::{binop_values, Eval, R};
use crate::index::{self, DimVal, MAX_ELEMS};
use crate::prim::{self, BinOp, Prim, UnOp};
use crate::value::{array_from_rows, shape_string, Array, Data, Value};
use runic_data::Buffer;
use runic_syntax::ast::PrimType;
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    Bin(BinOp),
    Un(UnOp),
    /// Conversion of the argument to the given type.
    Conv(PrimType),
    GetBit,
    SetBit,
    MadHi,
    Lerp,
    Mad,
    Fma,
    FromFraction(PrimType),
    Sum(PrimType),
    Product(PrimType),
    Maximum(PrimType),
    Minimum(PrimType),
    /// A prelude intrinsic, by name.
    Named(&'static str),
}

/// A module member: a function with its arity, or a constant.
pub enum Member {
    Fun(Builtin, usize),
    Const(Prim),
}

pub fn lookup_unqualified(name: &str) -> Option<(Builtin, usize)> {
    if let Some(op) = BinOp::from_symbol(name) {
        return Some((Builtin::Bin(op), 2));
    }
    runic_types::intrinsics::intrinsic(name).map(|(n, a)| (Builtin::Named(n), a))
}

fn un(name: &str) -> Option<UnOp> {
    UnOp::from_member_name(name)
}

/// A member `T.name` of the numeric module of type `t`.
pub fn lookup_member(t: PrimType, name: &str) -> Option<Member> {
    if PrimType::from_name(name).is_some() {
        return Some(Member::Fun(Builtin::Conv(t), 1));
    }
    if t == PrimType::Bool {
        return None;
    }
    let f = |b, a| Some(Member::Fun(b, a));
    if let Some(op) = BinOp::from_member_name(name) {
        return f(Builtin::Bin(op), 2);
    }
    if let Some(op) = un(name) {
        return f(Builtin::Un(op), 1);
    }
    let c = |p| Some(Member::Const(p));
    match name {
        "to_i64" => f(Builtin::Conv(PrimType::I64), 1),
        "to_f64" => f(Builtin::Conv(PrimType::F64), 1),
        "mad_hi" => f(Builtin::MadHi, 3),
        "get_bit" => f(Builtin::GetBit, 2),
        "set_bit" => f(Builtin::SetBit, 3),
        "from_fraction" => f(Builtin::FromFraction(t), 2),
        "lerp" => f(Builtin::Lerp, 3),
        "mad" => f(Builtin::Mad, 3),
        "fma" => f(Builtin::Fma, 3),
        "sum" => f(Builtin::Sum(t), 1),
        "product" => f(Builtin::Product(t), 1),
        "maximum" => f(Builtin::Maximum(t), 1),
        "minimum" => f(Builtin::Minimum(t), 1),
        "highest" => c(Prim::highest(t)),
        "lowest" => c(Prim::lowest(t)),
        "num_bits" => c(Prim::I32(t.bits() as i32)),
        "inf" => c(Prim::float(t, f64::INFINITY)),
        "nan" => c(Prim::float(t, f64::NAN)),
        "pi" => c(Prim::float(t, std::f64::consts::PI)),
        "e" => c(Prim::float(t, std::f64::consts::E)),
        "epsilon" => c(Prim::float(
            t,
            match t {
                PrimType::F16 => 2f64.powi(-10),
                PrimType::F32 => 2f64.powi(-23),
                _ => f64::EPSILON,
            },
        )),
        _ => None,
    }
}

fn err<T>(msg: impl Into<String>) -> R<T> {
    Err(RuntimeError::new(msg))
}

fn prim_arg(v: &Value) -> R<Prim> {
    v.as_prim()
        .ok_or_else(|| RuntimeError::new("internal error: expected a primitive argument"))
}

fn i64_arg(v: &Value) -> R<i64> {
    prim_arg(v)?
        .to_i64()
        .ok_or_else(|| RuntimeError::new("internal error: expected an integer argument"))
}

fn bool_arg(v: &Value) -> R<bool> {
    prim_arg(v)?
        .as_bool()
        .ok_or_else(|| RuntimeError::new("internal error: expected a boolean"))
}

fn array_arg<'v, 'a>(v: &'v Value<'a>) -> R<&'v Rc<Array<'a>>> {
    match v {
        Value::Array(a) => Ok(a),
        _ => err("internal error: expected an array argument"),
    }
}

fn elem_desc(a: &Array) -> String {
    let inner: String = a.shape[1..].iter().map(|d| format!("[{d}]")).collect();
    match a.elem_prim() {
        Some(t) => format!("{inner}{t}"),
        None => format!("{inner}t"),
    }
}

/// Lengths of arrays that must agree (`map2`, `zip`, ...).
fn same_lengths(arrs: &[&Rc<Array>]) -> R<usize> {
    let n = arrs[0].len();
    for a in &arrs[1..] {
        if a.len() != n {
            return err(format!(
                "Value of (desugared) shape {} cannot match shape of type \"[{n}]{}\".",
                shape_string(&a.shape),
                elem_desc(a)
            ));
        }
    }
    Ok(n)
}

/// Ok when `n` rows like `row` fit in memory: the first row tells how big a `map`'s result
/// will be, before the other rows are computed.
fn check_rows_fit(n: usize, row: &Value) -> R<()> {
    let Value::Array(a) = row else {
        return Ok(());
    };
    let elem_bytes = match &a.data {
        Data::Flat(b) => b.elem_type().size_bytes(),
        Data::Boxed(_) => std::mem::size_of::<Value>(),
    };
    runic_data::check_alloc(n as u128 * a.data.len() as u128, elem_bytes).or_else(err)
}

fn build<'a>(rows: Vec<Value<'a>>, elem: Option<PrimType>) -> R<Value<'a>> {
    array_from_rows(rows, elem).map_err(|(a, b)| {
        RuntimeError::new(format!(
            "Value of (desugared) shape {} cannot match shape of type \"{}\".",
            shape_string(&b),
            shape_string(&a)
        ))
    })
}

fn tuple<'a>(vs: Vec<Value<'a>>) -> Value<'a> {
    Value::Tuple(Rc::new(vs))
}

fn empty_like<'a>(a: &Array<'a>) -> Value<'a> {
    let mut shape = a.shape.clone();
    shape[0] = 0;
    let data = match &a.data {
        Data::Flat(b) => Data::Flat(Buffer::with_capacity(b.elem_type(), 0)),
        Data::Boxed(_) => Data::Boxed(Vec::new()),
    };
    Value::Array(Rc::new(Array::new(shape, data)))
}

fn reshape<'a>(a: &Array<'a>, shape: Vec<usize>) -> Value<'a> {
    Value::Array(Rc::new(Array::new(shape, a.data.clone())))
}

fn replicate<'a>(n: i64, x: &Value<'a>) -> R<Value<'a>> {
    if n < 0 {
        return err(format!("Range 0..1..<{n} is invalid."));
    }
    let total = n as i128 * x.shape().iter().map(|&d| d as i128).product::<i128>();
    if total > MAX_ELEMS {
        return err("out of memory: array too large");
    }
    let n = n as usize;
    let boxed_bytes = std::mem::size_of::<Value>();
    match x {
        Value::Prim(p) => {
            let mut b = Buffer::try_with_capacity(p.ty(), n).or_else(err)?;
            for _ in 0..n {
                b.push(*p);
            }
            Ok(Value::Array(Rc::new(Array::new(vec![n], Data::Flat(b)))))
        }
        Value::Array(a) => {
            let mut shape = vec![n];
            shape.extend_from_slice(&a.shape);
            let mut data = match &a.data {
                Data::Flat(b) => Data::Flat(
                    Buffer::try_with_capacity(b.elem_type(), total as usize).or_else(err)?,
                ),
                Data::Boxed(_) => {
                    runic_data::check_alloc(total as u128, boxed_bytes).or_else(err)?;
                    Data::Boxed(Vec::new())
                }
            };
            for _ in 0..n {
                data.extend_from(&a.data, 0, a.data.len());
            }
            Ok(Value::Array(Rc::new(Array::new(shape, data))))
        }
        other => {
            runic_data::check_alloc(n as u128, boxed_bytes).or_else(err)?;
            Ok(Value::Array(Rc::new(Array::new(
                vec![n],
                Data::Boxed(vec![other.clone(); n]),
            ))))
        }
    }
}

fn size_named(sizes: &[(&str, i64)], name: &str, pos: usize) -> Option<i64> {
    let found = sizes
        .iter()
        .find(|(n, _)| *n == name)
        .or_else(|| sizes.get(pos))
        .map(|(_, v)| *v);
    found.filter(|v| *v >= 0)
}

impl<'a> Eval<'a> {
    pub fn call_builtin(
        &self,
        op: Builtin,
        args: Vec<Value<'a>>,
        sizes: &[(&'a str, i64)],
    ) -> R<Value<'a>> {
        match op {
            Builtin::Bin(b) => binop_values(b, &args[0], &args[1]),
            Builtin::Un(u) => match &args[0] {
                Value::Active(_) => crate::eval::unop_value(u, &args[0]),
                v => Ok(Value::Prim(prim::unop(u, prim_arg(v)?))),
            },
            Builtin::Conv(t) => match &args[0] {
                Value::Active(_) => crate::eval::convert_value(&args[0], t),
                v => Ok(Value::Prim(prim::convert(prim_arg(v)?, t))),
            },
            Builtin::Mad | Builtin::Fma | Builtin::Lerp
                if args.iter().any(|a| matches!(a, Value::Active(_))) =>
            {
                let ss: Vec<ad::S> = args
                    .iter()
                    .map(|a| {
                        ad::to_s(a)
                            .ok_or_else(|| RuntimeError::new("internal error: expected a scalar"))
                    })
                    .collect::<R<_>>()?;
                let r = if op == Builtin::Lerp {
                    ad::lerp(&ss[0], &ss[1], &ss[2])?
                } else {
                    ad::fma(&ss[0], &ss[1], &ss[2])?
                };
                Ok(ad::from_s(r))
            }
            Builtin::GetBit => Ok(Value::Prim(prim::get_bit(
                prim_arg(&args[0])?,
                prim_arg(&args[1])?,
            ))),
            Builtin::SetBit => Ok(Value::Prim(prim::set_bit(
                prim_arg(&args[0])?,
                prim_arg(&args[1])?,
                prim_arg(&args[2])?,
            ))),
            Builtin::MadHi => {
                let hi = binop_values(BinOp::MulHi, &args[0], &args[1])?;
                binop_values(BinOp::Add, &hi, &args[2])
            }
            Builtin::Mad | Builtin::Fma => {
                let (a, b, c) = (
                    prim_arg(&args[0])?,
                    prim_arg(&args[1])?,
                    prim_arg(&args[2])?,
                );
                let t = a.ty();
                let (x, y, z) = (
                    a.as_float().unwrap_or(0.0),
                    b.as_float().unwrap_or(0.0),
                    c.as_float().unwrap_or(0.0),
                );
                Ok(Value::Prim(Prim::float(t, x.mul_add(y, z))))
            }
            Builtin::Lerp => {
                let (a, b, c) = (
                    prim_arg(&args[0])?,
                    prim_arg(&args[1])?,
                    prim_arg(&args[2])?,
                );
                let t = a.ty();
                let (v0, v1, w) = (
                    a.as_float().unwrap_or(0.0),
                    b.as_float().unwrap_or(0.0),
                    c.as_float().unwrap_or(0.0),
                );
                let r = match t {
                    PrimType::F64 => v0 + (v1 - v0) * w,
                    _ => {
                        let d = Prim::float(t, v1 - v0).as_float().unwrap_or(0.0);
                        let m = Prim::float(t, d * w).as_float().unwrap_or(0.0);
                        v0 + m
                    }
                };
                Ok(Value::Prim(Prim::float(t, r)))
            }
            Builtin::FromFraction(t) => {
                let (a, b) = (i64_arg(&args[0])?, i64_arg(&args[1])?);
                let x = Prim::float(t, a as f64).as_float().unwrap_or(0.0);
                let y = Prim::float(t, b as f64).as_float().unwrap_or(0.0);
                Ok(Value::Prim(Prim::float(t, x / y)))
            }
            Builtin::Sum(t) => self.fold_prims(&args[0], Prim::zero(t), BinOp::Add),
            Builtin::Product(t) => self.fold_prims(&args[0], Prim::one(t), BinOp::Mul),
            Builtin::Maximum(t) => self.fold_prims(&args[0], Prim::lowest(t), BinOp::Max),
            Builtin::Minimum(t) => self.fold_prims(&args[0], Prim::highest(t), BinOp::Min),
            Builtin::Named(name) => self.call_named(name, args, sizes),
        }
    }

    fn fold_prims(&self, xs: &Value<'a>, init: Prim, op: BinOp) -> R<Value<'a>> {
        let a = array_arg(xs)?;
        if let Data::Boxed(vs) = &a.data {
            // Active scalars: fold with the lifted operator (§11.4 rules follow from it).
            let mut acc = Value::Prim(init);
            for v in vs {
                acc = binop_values(op, &acc, v)?;
            }
            return Ok(acc);
        }
        let mut acc = init;
        for i in 0..a.data.len() {
            let x = prim_arg(&a.data.get(i))?;
            acc = prim::binop(op, acc, x).map_err(|e| RuntimeError::new(e.message()))?;
        }
        Ok(Value::Prim(acc))
    }

    fn map_n(&self, f: &Value<'a>, arrs: &[Value<'a>]) -> R<Value<'a>> {
        let arrays: Vec<&Rc<Array<'a>>> = arrs.iter().map(array_arg).collect::<R<_>>()?;
        let n = same_lengths(&arrays)?;
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let args: Vec<Value<'a>> = arrays.iter().map(|a| a.row(i)).collect();
            out.push(self.apply_many(f.clone(), args)?);
            if i == 0 {
                check_rows_fit(n, &out[0])?;
            }
        }
        build(out, None)
    }

    fn check_row_shape(ne: &Value<'a>, x: &Value<'a>, msg: &str) -> R<()> {
        if ne.shape() != x.shape() {
            return err(msg);
        }
        Ok(())
    }

    fn combine(
        &self,
        op: &Value<'a>,
        acc: Value<'a>,
        x: Value<'a>,
        ne: &Value<'a>,
    ) -> R<Value<'a>> {
        let r = self.apply2(op, acc, x)?;
        if matches!(ne, Value::Array(_)) {
            Self::check_row_shape(
                ne,
                &r,
                "shape of result does not match shape of initial value",
            )?;
        }
        Ok(r)
    }

    fn reduce(&self, op: &Value<'a>, ne: &Value<'a>, xs: &Value<'a>) -> R<Value<'a>> {
        let a = array_arg(xs)?;
        // Fast path: a built-in operator on primitives.
        if let (Value::Fun(f), Data::Flat(_), Value::Prim(init)) = (op, &a.data, ne) {
            if let crate::value::Fun::Builtin(b) = &**f {
                if let (Builtin::Bin(bop), true) = (b.op, b.args.is_empty()) {
                    let mut acc = *init;
                    for i in 0..a.data.len() {
                        let x = prim_arg(&a.data.get(i))?;
                        acc =
                            prim::binop(bop, acc, x).map_err(|e| RuntimeError::new(e.message()))?;
                    }
                    return Ok(Value::Prim(acc));
                }
            }
        }
        let mut acc = ne.clone();
        for i in 0..a.len() {
            let x = a.row(i);
            if matches!(ne, Value::Array(_)) {
                Self::check_row_shape(
                    ne,
                    &x,
                    "Row shape of input array does not match shape of neutral element",
                )?;
            }
            acc = self.combine(op, acc, x, ne)?;
        }
        Ok(acc)
    }

    fn scan(
        &self,
        op: &Value<'a>,
        ne: &Value<'a>,
        xs: &Value<'a>,
        exclusive: bool,
    ) -> R<Value<'a>> {
        let a = array_arg(xs)?;
        let mut acc = ne.clone();
        let mut out = Vec::with_capacity(a.len());
        for i in 0..a.len() {
            let x = a.row(i);
            if matches!(ne, Value::Array(_)) {
                Self::check_row_shape(
                    ne,
                    &x,
                    "Row shape of input array does not match shape of neutral element",
                )?;
            }
            if exclusive {
                out.push(acc.clone());
            }
            acc = self.combine(op, acc, x, ne)?;
            if !exclusive {
                out.push(acc.clone());
            }
        }
        if out.is_empty() {
            return Ok(empty_like(a));
        }
        build(out, None)
    }

    /// `reduce_by_index` on bins addressed by `dims` coordinates.
    fn reduce_by_index(
        &self,
        dest: Value<'a>,
        op: &Value<'a>,
        ne: &Value<'a>,
        is: &Value<'a>,
        vs: &Value<'a>,
        dims: usize,
    ) -> R<Value<'a>> {
        let ia = array_arg(is)?;
        let va = array_arg(vs)?;
        same_lengths(&[ia, va])?;
        let Value::Array(mut d) = dest else {
            return err("internal error: reduce_by_index destination");
        };
        let row_shape: Vec<usize> = d.shape[dims.min(d.shape.len())..].to_vec();
        if ne.shape() != row_shape.as_slice() {
            return err("Row shape of destination array does not match shape of neutral element");
        }
        if va.shape[1..] != row_shape[..] {
            return err("Row shape of value array does not match row shape of hist target");
        }
        let bins_shape: Vec<usize> = d.shape[..dims].to_vec();
        if ad::reverse_active() {
            return self.reduce_by_index_per_bin(d, op, ne, ia, va, &bins_shape);
        }
        let arr = Rc::make_mut(&mut d);
        for j in 0..ia.len() {
            let Some(coords) = bin_coords(&ia.row(j), &bins_shape)? else {
                continue;
            };
            let dv: Vec<DimVal> = coords.iter().map(|&c| DimVal::Idx(c)).collect();
            let sel = index::select(&arr.shape, &dv).map_err(RuntimeError::new)?;
            let old = index::extract(arr, &sel);
            let new = self.combine(op, old, va.row(j), ne)?;
            index::write(arr, &sel, new).map_err(RuntimeError::new)?;
        }
        Ok(Value::Array(d))
    }

    /// `reduce_by_index` as reverse mode differentiates it (§11.4): each bin is
    /// `dest[b] op (ne op v1 op ... op vk)` with the values in index order, also when empty.
    fn reduce_by_index_per_bin(
        &self,
        mut d: Rc<Array<'a>>,
        op: &Value<'a>,
        ne: &Value<'a>,
        ia: &Rc<Array<'a>>,
        va: &Rc<Array<'a>>,
        bins_shape: &[usize],
    ) -> R<Value<'a>> {
        let nbins: usize = bins_shape.iter().product();
        let mut accs: Vec<Option<Value<'a>>> = vec![None; nbins];
        for j in 0..ia.len() {
            let Some(coords) = bin_coords(&ia.row(j), bins_shape)? else {
                continue;
            };
            let flat = coords
                .iter()
                .zip(bins_shape)
                .fold(0usize, |acc, (&c, &w)| acc * w + c as usize);
            let acc = accs[flat].take().unwrap_or_else(|| ne.clone());
            accs[flat] = Some(self.combine(op, acc, va.row(j), ne)?);
        }
        let arr = Rc::make_mut(&mut d);
        for (b, acc) in accs.into_iter().enumerate() {
            let mut rem = b;
            let mut coords = vec![0i64; bins_shape.len()];
            for k in (0..bins_shape.len()).rev() {
                coords[k] = (rem % bins_shape[k]) as i64;
                rem /= bins_shape[k];
            }
            let dv: Vec<DimVal> = coords.iter().map(|&c| DimVal::Idx(c)).collect();
            let sel = index::select(&arr.shape, &dv).map_err(RuntimeError::new)?;
            let old = index::extract(arr, &sel);
            let new = self.combine(op, old, acc.unwrap_or_else(|| ne.clone()), ne)?;
            index::write(arr, &sel, new).map_err(RuntimeError::new)?;
        }
        Ok(Value::Array(d))
    }

    fn scatter(
        &self,
        dest: Value<'a>,
        is: &Value<'a>,
        vs: &Value<'a>,
        dims: usize,
    ) -> R<Value<'a>> {
        let ia = array_arg(is)?;
        let va = array_arg(vs)?;
        same_lengths(&[ia, va])?;
        let Value::Array(mut d) = dest else {
            return err("internal error: scatter destination");
        };
        let bins_shape: Vec<usize> = d.shape[..dims.min(d.shape.len())].to_vec();
        let arr = Rc::make_mut(&mut d);
        for j in 0..ia.len() {
            let Some(coords) = bin_coords(&ia.row(j), &bins_shape)? else {
                continue;
            };
            let dv: Vec<DimVal> = coords.iter().map(|&c| DimVal::Idx(c)).collect();
            let sel = index::select(&arr.shape, &dv).map_err(RuntimeError::new)?;
            index::write(arr, &sel, va.row(j)).map_err(RuntimeError::new)?;
        }
        Ok(Value::Array(d))
    }

    fn filter_rows(&self, p: &Value<'a>, a: &Rc<Array<'a>>) -> R<Vec<bool>> {
        let mut keep = Vec::with_capacity(a.len());
        for i in 0..a.len() {
            keep.push(bool_arg(&self.apply1(p, a.row(i))?)?);
        }
        Ok(keep)
    }

    fn select_rows(a: &Rc<Array<'a>>, keep: impl Fn(usize) -> bool) -> R<Value<'a>> {
        let rows: Vec<Value<'a>> = (0..a.len())
            .filter(|&i| keep(i))
            .map(|i| a.row(i))
            .collect();
        if rows.is_empty() {
            return Ok(empty_like(a));
        }
        build(rows, None)
    }

    fn call_named(
        &self,
        name: &'static str,
        args: Vec<Value<'a>>,
        sizes: &[(&'a str, i64)],
    ) -> R<Value<'a>> {
        match name {
            "map" | "map1" | "map2" | "map3" | "map4" | "map5" => self.map_n(&args[0], &args[1..]),
            "reduce" | "reduce_comm" => self.reduce(&args[0], &args[1], &args[2]),
            "scan" => self.scan(&args[0], &args[1], &args[2], false),
            "exscan" => self.scan(&args[0], &args[1], &args[2], true),
            "hist" => {
                let k = i64_arg(&args[2])?;
                let dest = replicate(k, &args[1])?;
                self.reduce_by_index(dest, &args[0], &args[1], &args[3], &args[4], 1)
            }
            "reduce_by_index" | "reduce_by_index_2d" | "reduce_by_index_3d" => {
                let dims = match name {
                    "reduce_by_index" => 1,
                    "reduce_by_index_2d" => 2,
                    _ => 3,
                };
                let mut it = args.into_iter();
                let dest = it.next().unwrap_or_else(Value::unit);
                let rest: Vec<Value<'a>> = it.collect();
                self.reduce_by_index(dest, &rest[0], &rest[1], &rest[2], &rest[3], dims)
            }
            "scatter" | "scatter_2d" | "scatter_3d" => {
                let dims = match name {
                    "scatter" => 1,
                    "scatter_2d" => 2,
                    _ => 3,
                };
                let mut it = args.into_iter();
                let dest = it.next().unwrap_or_else(Value::unit);
                let rest: Vec<Value<'a>> = it.collect();
                self.scatter(dest, &rest[0], &rest[1], dims)
            }
            "spread" => {
                let dest = replicate(i64_arg(&args[0])?, &args[1])?;
                self.scatter(dest, &args[2], &args[3], 1)
            }
            "filter" => {
                let a = array_arg(&args[1])?;
                let keep = self.filter_rows(&args[0], a)?;
                Self::select_rows(a, |i| keep[i])
            }
            "partition" => {
                let a = array_arg(&args[1])?;
                let keep = self.filter_rows(&args[0], a)?;
                Ok(tuple(vec![
                    Self::select_rows(a, |i| keep[i])?,
                    Self::select_rows(a, |i| !keep[i])?,
                ]))
            }
            "partition2" => {
                let a = array_arg(&args[2])?;
                let k1 = self.filter_rows(&args[0], a)?;
                let k2 = self.filter_rows(&args[1], a)?;
                Ok(tuple(vec![
                    Self::select_rows(a, |i| k1[i])?,
                    Self::select_rows(a, |i| !k1[i] && k2[i])?,
                    Self::select_rows(a, |i| !k1[i] && !k2[i])?,
                ]))
            }
            "all" | "any" => {
                let a = array_arg(&args[1])?;
                let want = name == "any";
                for i in 0..a.len() {
                    if bool_arg(&self.apply1(&args[0], a.row(i))?)? == want {
                        return Ok(Value::bool(want));
                    }
                }
                Ok(Value::bool(!want))
            }
            "flatmap" | "flatmap'" => self.flatmap(&args[0], &args[1], name == "flatmap"),
            "iota" => self.iota_value(&args[0]),
            "indices" => index::iota(array_arg(&args[0])?.len() as i64).map_err(RuntimeError::new),
            "replicate" => replicate(i64_arg(&args[0])?, &args[1]),
            "rep" => match size_named(sizes, "n", 0) {
                Some(n) => replicate(n, &args[0]),
                None => err("ambiguous size: the length of `rep` is not known"),
            },
            "tabulate" => {
                let is = self.iota_value(&args[0])?;
                self.map_n(&args[1], &[is])
            }
            "tabulate_2d" => {
                let (n, m) = (i64_arg(&args[0])?, i64_arg(&args[1])?);
                index::iota(n).map_err(RuntimeError::new)?;
                index::iota(m).map_err(RuntimeError::new)?;
                // The rows are built from boxed values.
                runic_data::check_alloc(n as u128 * m as u128, std::mem::size_of::<Value>())
                    .or_else(err)?;
                let mut rows = Vec::with_capacity(n as usize);
                for i in 0..n {
                    let mut row = Vec::with_capacity(m as usize);
                    for j in 0..m {
                        row.push(self.apply2(&args[2], Value::i64(i), Value::i64(j))?);
                    }
                    rows.push(build(row, None)?);
                }
                if n == 0 || m == 0 {
                    let data = Data::Boxed(Vec::new());
                    return Ok(Value::Array(Rc::new(Array::new(
                        vec![n as usize, m as usize],
                        data,
                    ))));
                }
                build(rows, None)
            }
            "tabulate_3d" => {
                let (n, m, l) = (i64_arg(&args[0])?, i64_arg(&args[1])?, i64_arg(&args[2])?);
                for k in [n, m, l] {
                    index::iota(k).map_err(RuntimeError::new)?;
                }
                runic_data::check_alloc(
                    n as u128 * m as u128 * l as u128,
                    std::mem::size_of::<Value>(),
                )
                .or_else(err)?;
                if n == 0 || m == 0 || l == 0 {
                    let data = Data::Boxed(Vec::new());
                    return Ok(Value::Array(Rc::new(Array::new(
                        vec![n as usize, m as usize, l as usize],
                        data,
                    ))));
                }
                let mut rows = Vec::with_capacity(n as usize);
                for i in 0..n {
                    let mut plane = Vec::with_capacity(m as usize);
                    for j in 0..m {
                        let mut row = Vec::with_capacity(l as usize);
                        for k in 0..l {
                            row.push(self.apply_many(
                                args[3].clone(),
                                vec![Value::i64(i), Value::i64(j), Value::i64(k)],
                            )?);
                        }
                        plane.push(build(row, None)?);
                    }
                    rows.push(build(plane, None)?);
                }
                build(rows, None)
            }
            "copy" | "manifest" | "opaque" | "break" => {
                Ok(args.into_iter().next().unwrap_or_else(Value::unit))
            }
            "trace" => {
                eprintln!("{}", crate::convert::show(&args[0]));
                Ok(args.into_iter().next().unwrap_or_else(Value::unit))
            }
            "concat" | "++" => {
                let (a, b) = (array_arg(&args[0])?, array_arg(&args[1])?);
                if a.is_empty() && a.data.is_empty() {
                    return Ok(args[1].clone());
                }
                if b.is_empty() && b.data.is_empty() {
                    return Ok(args[0].clone());
                }
                if a.shape[1..] != b.shape[1..] {
                    let mut want = vec![b.len()];
                    want.extend_from_slice(&a.shape[1..]);
                    return err(format!(
                        "Value of (desugared) shape {} cannot match shape of type \"{}{}\".",
                        shape_string(&b.shape),
                        shape_string(&want),
                        a.elem_prim().map(|t| t.name()).unwrap_or("t")
                    ));
                }
                let mut shape = a.shape.clone();
                shape[0] += b.len();
                let mut data = a.data.clone();
                data.extend_from(&b.data, 0, b.data.len());
                Ok(Value::Array(Rc::new(Array::new(shape, data))))
            }
            "flatten" | "flatten_3d" | "flatten_4d" => {
                let a = array_arg(&args[0])?;
                let k = match name {
                    "flatten" => 2,
                    "flatten_3d" => 3,
                    _ => 4,
                };
                if a.shape.len() < k {
                    return err("internal error: flatten of an array of too low rank");
                }
                let mut shape = vec![a.shape[..k].iter().product()];
                shape.extend_from_slice(&a.shape[k..]);
                Ok(reshape(a, shape))
            }
            "unflatten" | "unflatten_3d" | "unflatten_4d" => {
                let a = array_arg(&args[0])?;
                let names: &[&str] = match name {
                    "unflatten" => &["n", "m"],
                    "unflatten_3d" => &["n", "m", "l"],
                    _ => &["n", "m", "l", "k"],
                };
                let mut dims: Vec<Option<i64>> = names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| size_named(sizes, n, i))
                    .collect();
                let unknown: Vec<usize> = (0..dims.len()).filter(|&i| dims[i].is_none()).collect();
                if unknown.len() == 1 {
                    let known: i64 = dims.iter().flatten().product();
                    if known > 0 && a.len() as i64 % known == 0 {
                        dims[unknown[0]] = Some(a.len() as i64 / known);
                    }
                }
                let dims: Vec<i64> = match dims.into_iter().collect::<Option<Vec<i64>>>() {
                    Some(d) => d,
                    None => return err("ambiguous size: the shape of `unflatten` is not known"),
                };
                let total: i128 = dims.iter().map(|&d| d as i128).product();
                if total != a.len() as i128 || dims.iter().any(|&d| d < 0) {
                    return err(format!(
                        "Cannot unflatten array of shape [{}] to array of shape {}.",
                        a.len(),
                        dims.iter().map(|d| format!("[{d}]")).collect::<String>()
                    ));
                }
                let mut shape: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
                shape.extend_from_slice(&a.shape[1..]);
                Ok(reshape(a, shape))
            }
            "transpose" => {
                let a = array_arg(&args[0])?;
                if a.shape.len() < 2 {
                    return err("internal error: transpose of a one-dimensional array");
                }
                let (n, m) = (a.shape[0], a.shape[1]);
                let inner: usize = a.shape[2..].iter().product();
                let mut idx = Vec::with_capacity(n * m * inner);
                for j in 0..m {
                    for i in 0..n {
                        let base = (i * m + j) * inner;
                        idx.extend(base..base + inner);
                    }
                }
                let mut shape = a.shape.clone();
                shape.swap(0, 1);
                Ok(Value::Array(Rc::new(Array::new(
                    shape,
                    a.data.gather(&idx),
                ))))
            }
            "reverse" => {
                let a = array_arg(&args[0])?;
                index::index_value(
                    &args[0],
                    &[DimVal::Slice {
                        start: None,
                        end: None,
                        stride: Some(-1),
                    }],
                )
                .map_err(RuntimeError::new)
                .or_else(|_| Ok(Value::Array(a.clone())))
            }
            "rotate" => {
                let r = i64_arg(&args[0])?;
                let a = array_arg(&args[1])?;
                let n = a.len();
                if n == 0 {
                    return Ok(args[1].clone());
                }
                let rs = a.row_size();
                let idx: Vec<usize> = (0..n)
                    .flat_map(|i| {
                        let src = (i as i64 + r).rem_euclid(n as i64) as usize;
                        src * rs..src * rs + rs
                    })
                    .collect();
                Ok(Value::Array(Rc::new(Array::new(
                    a.shape.clone(),
                    a.data.gather(&idx),
                ))))
            }
            "sized" => {
                let n = i64_arg(&args[0])?;
                let a = array_arg(&args[1])?;
                if a.len() as i64 != n {
                    let mut want = vec![n.max(0) as usize];
                    want.extend_from_slice(&a.shape[1..]);
                    return err(format!(
                        "Value of (desugared) shape {} cannot match shape of type \"[{n}]{}\".",
                        shape_string(&a.shape),
                        elem_desc(a)
                    ));
                }
                Ok(args[1].clone())
            }
            "length" => Ok(Value::i64(array_arg(&args[0])?.len() as i64)),
            "null" => Ok(Value::bool(array_arg(&args[0])?.is_empty())),
            "head" => index::index_value(&args[0], &[DimVal::Idx(0)]).map_err(RuntimeError::new),
            "last" => {
                let n = array_arg(&args[0])?.len() as i64;
                index::index_value(&args[0], &[DimVal::Idx(n - 1)]).map_err(RuntimeError::new)
            }
            "tail" => index::index_value(
                &args[0],
                &[DimVal::Slice {
                    start: Some(1),
                    end: None,
                    stride: None,
                }],
            )
            .map_err(RuntimeError::new),
            "init" => {
                let n = array_arg(&args[0])?.len() as i64;
                index::index_value(
                    &args[0],
                    &[DimVal::Slice {
                        start: Some(0),
                        end: Some(n - 1),
                        stride: None,
                    }],
                )
                .map_err(RuntimeError::new)
            }
            "take" => {
                let i = i64_arg(&args[0])?;
                index::index_value(
                    &args[1],
                    &[DimVal::Slice {
                        start: Some(0),
                        end: Some(i),
                        stride: None,
                    }],
                )
                .map_err(RuntimeError::new)
            }
            "drop" => {
                let i = i64_arg(&args[0])?;
                index::index_value(
                    &args[1],
                    &[DimVal::Slice {
                        start: Some(i),
                        end: None,
                        stride: None,
                    }],
                )
                .map_err(RuntimeError::new)
            }
            "split" => {
                let a = array_arg(&args[0])?;
                let len = a.len() as i64;
                let n = size_named(sizes, "n", 0);
                let m = size_named(sizes, "m", 1);
                let (n, m) = match (n, m) {
                    (Some(n), Some(m)) => (n, m),
                    (Some(n), None) => (n, len - n),
                    (None, Some(m)) => (len - m, m),
                    (None, None) => {
                        return err("ambiguous size: the split point of `split` is not known")
                    }
                };
                if n < 0 || m < 0 || n + m != len {
                    return err(format!(
                        "Value of (desugared) shape {} cannot match shape of type \"[{}]{}\".",
                        shape_string(&a.shape),
                        n as i128 + m as i128,
                        elem_desc(a)
                    ));
                }
                let first = index::index_value(
                    &args[0],
                    &[DimVal::Slice {
                        start: Some(0),
                        end: Some(n),
                        stride: None,
                    }],
                )
                .map_err(RuntimeError::new)?;
                let second = index::index_value(
                    &args[0],
                    &[DimVal::Slice {
                        start: Some(n),
                        end: None,
                        stride: None,
                    }],
                )
                .map_err(RuntimeError::new)?;
                Ok(tuple(vec![first, second]))
            }
            "zip" | "zip2" | "zip3" | "zip4" | "zip5" => {
                let arrays: Vec<&Rc<Array<'a>>> = args.iter().map(array_arg).collect::<R<_>>()?;
                let n = same_lengths(&arrays)?;
                let items: Vec<Value<'a>> = (0..n)
                    .map(|i| tuple(arrays.iter().map(|a| a.row(i)).collect()))
                    .collect();
                Ok(Value::Array(Rc::new(Array::new(
                    vec![n],
                    Data::Boxed(items),
                ))))
            }
            "unzip" | "unzip2" | "unzip3" | "unzip4" | "unzip5" => {
                let k = match name {
                    "unzip" | "unzip2" => 2,
                    "unzip3" => 3,
                    "unzip4" => 4,
                    _ => 5,
                };
                let a = array_arg(&args[0])?;
                let mut cols: Vec<Vec<Value<'a>>> = vec![Vec::with_capacity(a.len()); k];
                for i in 0..a.len() {
                    match a.row(i) {
                        Value::Tuple(t) if t.len() == k => {
                            for (c, x) in cols.iter_mut().zip(t.iter()) {
                                c.push(x.clone());
                            }
                        }
                        _ => return err("internal error: unzip of a non-tuple array"),
                    }
                }
                let out: Vec<Value<'a>> =
                    cols.into_iter().map(|c| build(c, None)).collect::<R<_>>()?;
                Ok(tuple(out))
            }
            "and" | "or" => {
                let a = array_arg(&args[0])?;
                let want = name == "or";
                for i in 0..a.data.len() {
                    if bool_arg(&a.data.get(i))? == want {
                        return Ok(Value::bool(want));
                    }
                }
                Ok(Value::bool(!want))
            }
            "jvp2" => {
                let (y, mut ts) = self.ad_forward(&args[0], &args[1], &args[2..3])?;
                Ok(tuple(vec![y, ts.pop().unwrap_or_else(Value::unit)]))
            }
            "vjp2" => {
                let (y, mut cs) = self.ad_reverse(&args[0], &args[1], &args[2..3])?;
                Ok(tuple(vec![y, cs.pop().unwrap_or_else(Value::unit)]))
            }
            "jmp2" | "mjp2" => {
                let seeds: Vec<Value<'a>> = array_arg(&args[2])?.rows().collect();
                if name == "jmp2" {
                    let k = seeds.len();
                    if let Some(e) = seeds
                        .iter()
                        .find_map(|s| crate::ad::seed_shape_error(&args[1], s, Some(k)))
                    {
                        return Err(e);
                    }
                }
                let (y, outs) = if name == "jmp2" {
                    self.ad_forward(&args[0], &args[1], &seeds)?
                } else {
                    self.ad_reverse(&args[0], &args[1], &seeds)?
                };
                let outs = if outs.is_empty() {
                    let mut shape = vec![0];
                    let like = if name == "jmp2" { &y } else { &args[1] };
                    shape.extend_from_slice(like.shape());
                    Value::Array(Rc::new(Array::new(shape, Data::Boxed(Vec::new()))))
                } else {
                    build(outs, None)?
                };
                Ok(tuple(vec![y, outs]))
            }
            "with_vjp" => self.ad_with_vjp(&args[0], &args[1], &args[2]),
            other => err(format!(
                "not supported yet: intrinsic `{other}` in the interpreter"
            )),
        }
    }

    /// `iota n`; when `n` is active its elements depend on it in reverse mode only, so that
    /// `n` receives the sum of their cotangents (§11.4 *Sizes*).
    fn iota_value(&self, n: &Value<'a>) -> R<Value<'a>> {
        let plain = index::iota(i64_arg(n)?).map_err(RuntimeError::new)?;
        let Value::Active(a) = n else {
            return Ok(plain);
        };
        let src = ad::S::A(a.clone());
        ad::map_scalars(&plain, &mut |s| ad::reverse_only_dependent(&src, s.strip()))
    }

    fn flatmap(&self, f: &Value<'a>, xs: &Value<'a>, with_values: bool) -> R<Value<'a>> {
        let a = array_arg(xs)?;
        let n = a.len();
        let mut sizes = Vec::with_capacity(n);
        let mut offsets = Vec::with_capacity(n);
        let mut flags = Vec::new();
        let mut data_rows: Vec<Value<'a>> = Vec::new();
        let mut values = Vec::with_capacity(n);
        let mut off = 0i64;
        for i in 0..n {
            let r = self.apply1(f, a.row(i))?;
            let seg = if with_values {
                match r {
                    Value::Tuple(t) if t.len() == 2 => {
                        values.push(t[1].clone());
                        t[0].clone()
                    }
                    _ => return err("internal error: flatmap function must return a pair"),
                }
            } else {
                r
            };
            let sa = array_arg(&seg)?;
            let k = sa.len();
            sizes.push(k as i64);
            offsets.push(off);
            off += k as i64;
            for j in 0..k {
                flags.push(j == 0);
                data_rows.push(sa.row(j));
            }
        }
        let i64s = |v: Vec<i64>| {
            Value::Array(Rc::new(Array::new(
                vec![v.len()],
                Data::Flat(Buffer::I64(v.into())),
            )))
        };
        let nflags = flags.len();
        let mut out = vec![
            i64s(sizes),
            Value::Array(Rc::new(Array::new(
                vec![nflags],
                Data::Flat(Buffer::Bool(flags.into())),
            ))),
            i64s(offsets),
            build(data_rows, None)?,
        ];
        if with_values {
            out.push(build(values, None)?);
        }
        Ok(tuple(out))
    }
}

/// Bin coordinates from an index value (`i64` or a tuple of them).
/// The bin an index value (an `i64`, or a tuple of them for `_2d`/`_3d`) addresses, or
/// `None` when it is out of bounds (such elements are ignored by hist and scatter).
fn bin_coords(v: &Value, bins_shape: &[usize]) -> R<Option<Vec<i64>>> {
    let coords = coords_of(v, bins_shape.len())?;
    let inside = coords
        .iter()
        .zip(bins_shape)
        .all(|(&c, &w)| c >= 0 && (c as usize) < w);
    Ok(inside.then_some(coords))
}

fn coords_of(v: &Value, dims: usize) -> R<Vec<i64>> {
    if dims == 1 {
        return Ok(vec![i64_arg(v)?]);
    }
    match v {
        Value::Tuple(t) if t.len() == dims => t.iter().map(i64_arg).collect(),
        _ => err("internal error: bad multi-dimensional index"),
    }
}

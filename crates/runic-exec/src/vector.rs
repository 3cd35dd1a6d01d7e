//! Vectorised interpretation of straight-line scalar lambdas: a lambda body made only of
//! scalar operations (and reads of free vectors) is compiled once into a list of column
//! instructions, then run statement by statement over blocks of elements held in typed
//! buffers. Bodies with control flow, nested SOACs or array values are not compiled and run
//! element by element instead.

use crate::error::{err, ExecError, R};
use crate::eval::{scalar_binop, ternop};
use crate::value::*;
use runic_data::Buffer;
use runic_ir::traverse::{walk_exp, Visitor};
use runic_ir::*;
use runic_prim::{convert, unop};
use std::collections::HashMap;

/// Elements per block: large enough to amortise dispatch, small enough to stay in cache.
pub const BLOCK: usize = 2048;

#[derive(Clone, Copy, Debug)]
pub enum Opd {
    Col(usize),
    Const(Prim),
    /// A scalar free variable of the lambda (index into `Plan::frees`).
    Free(usize),
}

#[derive(Clone, Debug)]
enum Instr {
    Bin(BinOp, Opd, Opd),
    Un(UnOp, Opd),
    Tern(TernOp, Opd, Opd, Opd),
    Conv(PrimType, Opd),
    Copy(Opd),
    /// `arr[i]` of a free vector `frees[arr]`.
    Gather(usize, Opd),
    /// `if c then a else b` with both sides already computed (an `if` whose branches only
    /// return operands).
    Select(Opd, Opd, Opd),
    /// `acc[i] ⊕= v` on the accumulator `frees[acc]` (one lock per block). Writes no column.
    AccAdd(usize, Opd, Opd),
}

/// Whether an instruction can fail (then the block is redone element by element, which
/// must not repeat accumulator updates).
fn fallible(ins: &Instr) -> bool {
    match ins {
        Instr::Gather(..) | Instr::Tern(..) | Instr::AccAdd(..) => true,
        Instr::Bin(op, _, _) => matches!(
            op,
            BinOp::Div | BinOp::Mod | BinOp::Quot | BinOp::Rem | BinOp::Pow
        ),
        _ => false,
    }
}

/// A compiled lambda. Columns `0..params` are the parameters; instruction `k` writes column
/// `params + k`.
#[derive(Clone, Debug)]
pub struct Plan {
    params: usize,
    types: Vec<PrimType>,
    instrs: Vec<Instr>,
    results: Vec<Opd>,
    pub frees: Vec<VName>,
}

/// The compiled lambdas of a program, by lambda id (ids are unique within a program the
/// executor runs: see [`runic_ir::traverse::make_lambda_ids_unique`]).
#[derive(Default)]
pub struct Plans {
    plans: HashMap<LamId, Plan>,
}

impl Plans {
    pub fn new(prog: &Prog) -> Plans {
        let mut p = Plans::default();
        for f in &prog.funs {
            p.body(&f.body);
        }
        p
    }
    pub fn get(&self, lam: &Lambda) -> Option<&Plan> {
        self.plans.get(&lam.id)
    }
    fn add(&mut self, lam: &Lambda) {
        if let Some(plan) = compile(lam) {
            self.plans.insert(lam.id, plan);
        }
    }
}

/// Map lambdas are compiled, and so are the operators of folds: a fold applies them one
/// element at a time with [`Plan::eval`].
impl Visitor for Plans {
    fn exp(&mut self, e: &Exp) {
        match e {
            Exp::Soac(Soac::Map { lam, .. } | Soac::Hist { lam, .. }) => self.add(lam),
            Exp::Soac(Soac::Reduce { pre, lam, .. } | Soac::Scan { pre, lam, .. }) => {
                if let Some(p) = pre {
                    self.add(p);
                }
                self.add(lam);
            }
            _ => {}
        }
        walk_exp(self, e)
    }
}

fn compile(lam: &Lambda) -> Option<Plan> {
    let mut cols: HashMap<VName, usize> = HashMap::new();
    let mut types = Vec::new();
    for p in &lam.params {
        let Type::Prim(t) = p.ty else { return None };
        cols.insert(p.name, types.len());
        types.push(t);
    }
    let mut plan = Plan {
        params: lam.params.len(),
        types,
        instrs: Vec::new(),
        results: Vec::new(),
        frees: Vec::new(),
    };
    let mut frees: HashMap<VName, usize> = HashMap::new();
    let mut opd = |s: &SubExp, cols: &HashMap<VName, usize>, plan: &mut Plan| match s {
        SubExp::Const(p) => Opd::Const(*p),
        SubExp::Var(v) => match cols.get(v) {
            Some(&c) => Opd::Col(c),
            None => {
                let n = frees.len();
                let k = *frees.entry(*v).or_insert(n);
                if k == plan.frees.len() {
                    plan.frees.push(*v);
                }
                Opd::Free(k)
            }
        },
    };
    let mut updated_acc = false;
    for stm in &lam.body.stms {
        let [p] = stm.pat.as_slice() else { return None };
        // `acc' = update_acc acc [i] [v]` of a free accumulator: the new name stands for
        // the same accumulator.
        if let Exp::Basic(BasicOp::UpdateAcc { acc, is, vals }) = &stm.exp {
            let ([i], [v], false) = (is.as_slice(), vals.as_slice(), cols.contains_key(acc)) else {
                return None;
            };
            let Opd::Free(a) = opd(&SubExp::Var(*acc), &cols, &mut plan) else {
                return None;
            };
            let ins = Instr::AccAdd(a, opd(i, &cols, &mut plan), opd(v, &cols, &mut plan));
            // Its column is empty; a later use of `acc'` is a free variable that is not
            // bound at run time, so such a lambda runs element by element instead.
            plan.instrs.push(ins);
            plan.types.push(PrimType::Bool);
            updated_acc = true;
            continue;
        }
        let Type::Prim(t) = p.ty else { return None };
        if let Exp::If {
            cond,
            then_body,
            else_body,
            ..
        } = &stm.exp
        {
            let (true, true, [a], [b]) = (
                then_body.stms.is_empty(),
                else_body.stms.is_empty(),
                then_body.result.as_slice(),
                else_body.result.as_slice(),
            ) else {
                return None;
            };
            let ins = Instr::Select(
                opd(cond, &cols, &mut plan),
                opd(a, &cols, &mut plan),
                opd(b, &cols, &mut plan),
            );
            cols.insert(p.name, plan.types.len());
            plan.types.push(t);
            plan.instrs.push(ins);
            continue;
        }
        let Exp::Basic(op) = &stm.exp else {
            return None;
        };
        let ins = match op {
            BasicOp::SubExp(a) => Instr::Copy(opd(a, &cols, &mut plan)),
            BasicOp::BinOp(o, a, b) => {
                Instr::Bin(*o, opd(a, &cols, &mut plan), opd(b, &cols, &mut plan))
            }
            BasicOp::UnOp(o, a) => Instr::Un(*o, opd(a, &cols, &mut plan)),
            BasicOp::TernOp(o, a, b, c) => Instr::Tern(
                *o,
                opd(a, &cols, &mut plan),
                opd(b, &cols, &mut plan),
                opd(c, &cols, &mut plan),
            ),
            BasicOp::Convert(to, a) => Instr::Conv(*to, opd(a, &cols, &mut plan)),
            BasicOp::Index(v, idx) if !cols.contains_key(v) => match idx.as_slice() {
                [DimIndex::Fix(i)] => {
                    let i = opd(i, &cols, &mut plan);
                    let Opd::Free(a) = opd(&SubExp::Var(*v), &cols, &mut plan) else {
                        return None;
                    };
                    Instr::Gather(a, i)
                }
                _ => return None,
            },
            _ => return None,
        };
        if updated_acc && fallible(&ins) {
            return None;
        }
        cols.insert(p.name, plan.types.len());
        plan.types.push(t);
        plan.instrs.push(ins);
    }
    for r in &lam.body.result {
        let o = opd(r, &cols, &mut plan);
        plan.results.push(o);
    }
    Some(plan)
}

impl Plan {
    /// Evaluate on one element: `args` are the parameters, `regs` scratch space reused
    /// between calls, the results go to `out`. For operators of folds, where elements come
    /// one at a time.
    pub fn eval(
        &self,
        frees: &[Val],
        args: &[Prim],
        regs: &mut Vec<Prim>,
        out: &mut Vec<Prim>,
    ) -> R<()> {
        regs.clear();
        regs.extend_from_slice(args);
        for ins in &self.instrs {
            let get = |o: &Opd, regs: &Vec<Prim>| -> R<Prim> {
                Ok(match o {
                    Opd::Col(c) => regs[*c],
                    Opd::Const(p) => *p,
                    Opd::Free(f) => frees[*f].prim()?,
                })
            };
            let v = match ins {
                Instr::Bin(op, a, b) => {
                    let (x, y) = (get(a, regs)?, get(b, regs)?);
                    match fast_binop(*op, x, y) {
                        Some(v) => v,
                        None => scalar_binop(*op, x, y)?,
                    }
                }
                Instr::Un(op, a) => unop(*op, get(a, regs)?),
                Instr::Tern(op, a, b, c) => {
                    ternop(*op, get(a, regs)?, get(b, regs)?, get(c, regs)?)?
                }
                Instr::Conv(to, a) => convert(get(a, regs)?, *to),
                Instr::Copy(a) => get(a, regs)?,
                Instr::Select(c, a, b) => {
                    if get(c, regs)?.as_bool().unwrap_or(false) {
                        get(a, regs)?
                    } else {
                        get(b, regs)?
                    }
                }
                Instr::AccAdd(acc, i, v) => {
                    acc_add(
                        &frees[*acc],
                        Arg::Scalar(get(i, regs)?),
                        Arg::Scalar(get(v, regs)?),
                        1,
                    )?;
                    Prim::Bool(false)
                }
                Instr::Gather(a, i) => {
                    let src = frees[*a].arr()?;
                    let k = get(i, regs)?.to_i64().unwrap_or(-1);
                    if k < 0 || k as usize >= src.data.len() || src.shape.len() != 1 {
                        return Err(ExecError::new("index out of bounds"));
                    }
                    src.data.get(k as usize)
                }
            };
            regs.push(v);
        }
        out.clear();
        for r in &self.results {
            out.push(match r {
                Opd::Col(c) => regs[*c],
                Opd::Const(p) => *p,
                Opd::Free(f) => frees[*f].prim()?,
            });
        }
        Ok(())
    }
}

/// An operand resolved for one block: elements `off..off + n` of a column (an input array
/// read in place, or a block-sized intermediate at offset 0), or a broadcast scalar.
#[derive(Clone, Copy)]
enum Arg<'a> {
    Col(&'a Buffer, usize),
    Scalar(Prim),
}

impl Arg<'_> {
    #[inline]
    fn at(&self, i: usize) -> Prim {
        match self {
            Arg::Col(b, off) => b.get(off + i),
            Arg::Scalar(p) => *p,
        }
    }
}

/// A column of a running plan: an input array (elements from the block's offset on) or a
/// block-sized intermediate.
enum Column<'a> {
    Input(&'a Buffer),
    Owned(Buffer),
}

impl Plan {
    /// Run over elements `off..off + n` of the parameter arrays `inputs` (read in place);
    /// `frees` are the values of [`Plan::frees`]. Result `k` is handed to `sink(k, col,
    /// start)` as elements `start..start + n` of `col` (valid only during the call). Any
    /// error makes the caller redo the block element by element (so that the first failing
    /// element is the one reported).
    pub fn run(
        &self,
        frees: &[Val],
        inputs: &[&Buffer],
        off: usize,
        n: usize,
        mut sink: impl FnMut(usize, &Buffer, usize) -> R<()>,
    ) -> R<()> {
        if inputs.len() != self.params {
            return err("internal error: plan arity");
        }
        let mut cols: Vec<Column> = inputs.iter().map(|b| Column::Input(b)).collect();
        for (k, ins) in self.instrs.iter().enumerate() {
            let t = self.types[self.params + k];
            let out = {
                let arg = |o: &Opd| -> R<Arg> {
                    Ok(match o {
                        Opd::Col(c) => match &cols[*c] {
                            Column::Input(b) => Arg::Col(b, off),
                            Column::Owned(b) => Arg::Col(b, 0),
                        },
                        Opd::Const(p) => Arg::Scalar(*p),
                        Opd::Free(f) => Arg::Scalar(frees[*f].prim()?),
                    })
                };
                match ins {
                    Instr::Bin(op, a, b) => vbin(*op, arg(a)?, arg(b)?, n, t)?,
                    Instr::Un(op, a) => {
                        let a = arg(a)?;
                        let mut out = Buffer::with_capacity(t, n);
                        for i in 0..n {
                            out.push_converted(unop(*op, a.at(i)));
                        }
                        out
                    }
                    Instr::Tern(op, a, b, c) => {
                        let (a, b, c) = (arg(a)?, arg(b)?, arg(c)?);
                        let mut out = Buffer::with_capacity(t, n);
                        for i in 0..n {
                            out.push_converted(ternop(*op, a.at(i), b.at(i), c.at(i))?);
                        }
                        out
                    }
                    Instr::Conv(to, a) => vconv(*to, arg(a)?, n),
                    Instr::Select(c, a, b) => vselect(arg(c)?, arg(a)?, arg(b)?, n, t)?,
                    Instr::AccAdd(acc, i, v) => {
                        acc_add(&frees[*acc], arg(i)?, arg(v)?, n)?;
                        Buffer::Bool(Vec::new().into())
                    }
                    Instr::Copy(a) => match arg(a)? {
                        Arg::Col(b, o) => b.slice(o, n),
                        Arg::Scalar(p) => Buffer::filled(t, n, p),
                    },
                    Instr::Gather(a, i) => {
                        let src = frees[*a].arr()?;
                        if src.shape.len() != 1 {
                            return err("internal error: gather from a non-vector");
                        }
                        let len = src.shape[0];
                        let i = arg(i)?;
                        let mut idx = Vec::with_capacity(n);
                        for e in 0..n {
                            let k = i.at(e).to_i64().unwrap_or(-1);
                            if k < 0 || k as usize >= len {
                                return Err(ExecError::new("index out of bounds"));
                            }
                            idx.push(k as usize);
                        }
                        src.data.gather(&idx)
                    }
                }
            };
            cols.push(Column::Owned(out));
        }
        for (k, r) in self.results.iter().enumerate() {
            match r {
                Opd::Col(c) => match &cols[*c] {
                    Column::Input(b) => sink(k, b, off)?,
                    Column::Owned(b) => sink(k, b, 0)?,
                },
                Opd::Const(p) => sink(k, &Buffer::filled(p.ty(), n, *p), 0)?,
                Opd::Free(f) => {
                    let p = frees[*f].prim()?;
                    sink(k, &Buffer::filled(p.ty(), n, p), 0)?
                }
            }
        }
        Ok(())
    }
}

macro_rules! typed_bin {
    ($op:expr, $a:expr, $b:expr, $n:expr, $V:ident, $t:ty, float) => {
        typed_bin!(@go $op, $a, $b, $n, $V, $t, |x: $t, y: $t| x + y, |x: $t, y: $t| x - y,
            |x: $t, y: $t| x * y, Some(|x: $t, y: $t| x / y), None::<fn($t, $t) -> $t>)
    };
    ($op:expr, $a:expr, $b:expr, $n:expr, $V:ident, $t:ty, int) => {
        typed_bin!(@go $op, $a, $b, $n, $V, $t, |x: $t, y: $t| x.wrapping_add(y),
            |x: $t, y: $t| x.wrapping_sub(y), |x: $t, y: $t| x.wrapping_mul(y),
            None::<fn($t, $t) -> $t>, Some(|a: $t, b: $t| {
                let r = a.wrapping_rem(b);
                if r != 0 && ((r < 0) != (b < 0)) { r.wrapping_add(b) } else { r }
            }))
    };
    (@go $op:expr, $a:expr, $b:expr, $n:expr, $V:ident, $t:ty, $add:expr, $sub:expr, $mul:expr, $div:expr, $modf:expr) => {{
        let x: Option<(&[$t], Option<$t>)> = match $a {
            Arg::Col(Buffer::$V(v), o) => Some((&v[o..o + $n], None)),
            Arg::Scalar(Prim::$V(s)) => Some((&[][..], Some(s))),
            _ => None,
        };
        let y: Option<(&[$t], Option<$t>)> = match $b {
            Arg::Col(Buffer::$V(v), o) => Some((&v[o..o + $n], None)),
            Arg::Scalar(Prim::$V(s)) => Some((&[][..], Some(s))),
            _ => None,
        };
        if let (Some(x), Some(y)) = (x, y) {
            let arith = |f: fn($t, $t) -> $t| -> Buffer {
                let out: Vec<$t> = match (x, y) {
                    ((xs, None), (ys, None)) => xs.iter().zip(ys).map(|(&a, &b)| f(a, b)).collect(),
                    ((xs, None), (_, Some(s))) => xs.iter().map(|&a| f(a, s)).collect(),
                    ((_, Some(s)), (ys, None)) => ys.iter().map(|&b| f(s, b)).collect(),
                    ((_, Some(s)), (_, Some(t))) => vec![f(s, t); $n],
                };
                Buffer::from(out)
            };
            let cmp = |f: fn($t, $t) -> bool| -> Buffer {
                let out: Vec<bool> = match (x, y) {
                    ((xs, None), (ys, None)) => xs.iter().zip(ys).map(|(&a, &b)| f(a, b)).collect(),
                    ((xs, None), (_, Some(s))) => xs.iter().map(|&a| f(a, s)).collect(),
                    ((_, Some(s)), (ys, None)) => ys.iter().map(|&b| f(s, b)).collect(),
                    ((_, Some(s)), (_, Some(t))) => vec![f(s, t); $n],
                };
                Buffer::Bool(out.into())
            };
            // Floor modulo (runic_prim's `%`) where no divisor is zero (else the generic
            // path reports the division by zero).
            let no_zero = match y {
                (ys, None) => ys.iter().all(|&b| b != (0 as $t)),
                (_, Some(s)) => s != (0 as $t),
            };
            if let (BinOp::Mod, true, Some(m)) = ($op, no_zero, $modf) {
                return Ok(arith(m));
            }
            match $op {
                BinOp::Add => return Ok(arith($add)),
                BinOp::Sub => return Ok(arith($sub)),
                BinOp::Mul => return Ok(arith($mul)),
                BinOp::Div => {
                    if let Some(d) = $div {
                        return Ok(arith(d));
                    }
                }
                BinOp::Lt => return Ok(cmp(|a, b| a < b)),
                BinOp::Le => return Ok(cmp(|a, b| a <= b)),
                BinOp::Gt => return Ok(cmp(|a, b| a > b)),
                BinOp::Ge => return Ok(cmp(|a, b| a >= b)),
                BinOp::Eq => return Ok(cmp(|a, b| a == b)),
                BinOp::Neq => return Ok(cmp(|a, b| a != b)),
                _ => {}
            }
        }
    }};
}

/// A binary operation over a block. Native arithmetic is used where it gives exactly the
/// result of `runic_prim::binop` (IEEE `+ - * /` on f32/f64, wrapping `+ - *` on i32/i64,
/// comparisons); everything else goes through `binop` element by element.
fn vbin(op: BinOp, a: Arg, b: Arg, n: usize, t: PrimType) -> R<Buffer> {
    typed_bin!(op, a, b, n, F32, f32, float);
    typed_bin!(op, a, b, n, F64, f64, float);
    typed_bin!(op, a, b, n, I32, i32, int);
    typed_bin!(op, a, b, n, I64, i64, int);
    if let Some(out) = vbool(op, a, b, n) {
        return Ok(out);
    }
    let mut out = Buffer::with_capacity(t, n);
    for i in 0..n {
        out.push_converted(scalar_binop(op, a.at(i), b.at(i))?);
    }
    Ok(out)
}

fn vconv(to: PrimType, a: Arg, n: usize) -> Buffer {
    // Native casts of a column (`as` agrees with runic_prim on these pairs).
    macro_rules! casts {
        ($($To:ident <- $From:ident as $t:ty),*) => {
            match (to, a) {
                $(
                    (PrimType::$To, Arg::Col(Buffer::$From(v), o)) => {
                        return Buffer::$To(v[o..o + n].iter().map(|&x| x as $t).collect())
                    }
                )*
                (to, a) => (to, a),
            }
        };
    }
    let (to, a) = casts!(
        F32 <- I32 as f32,
        F64 <- I32 as f64,
        F64 <- F32 as f64,
        F64 <- I64 as f64,
        I64 <- I32 as i64,
        I32 <- I64 as i32,
        I64 <- U32 as i64,
        I64 <- U16 as i64,
        I64 <- U8 as i64
    );
    match (to, a) {
        // Through f64, exactly as runic_prim converts.
        (PrimType::F32, Arg::Col(Buffer::I64(v), o)) => {
            Buffer::F32(v[o..o + n].iter().map(|&x| x as f64 as f32).collect())
        }
        _ => {
            let mut out = Buffer::with_capacity(to, n);
            for i in 0..n {
                out.push_converted(convert(a.at(i), to));
            }
            out
        }
    }
}

/// `if c then a else b` over a block.
fn vselect(c: Arg, a: Arg, b: Arg, n: usize, t: PrimType) -> R<Buffer> {
    macro_rules! typed {
        ($V:ident) => {
            let x = match a {
                Arg::Col(Buffer::$V(v), o) => Some((&v[o..o + n], None)),
                Arg::Scalar(Prim::$V(s)) => Some((&[][..], Some(s))),
                _ => None,
            };
            let y = match b {
                Arg::Col(Buffer::$V(v), o) => Some((&v[o..o + n], None)),
                Arg::Scalar(Prim::$V(s)) => Some((&[][..], Some(s))),
                _ => None,
            };
            let cs = match c {
                Arg::Col(Buffer::Bool(v), o) => Some((&v[o..o + n], None)),
                Arg::Scalar(Prim::Bool(s)) => Some((&[][..], Some(s))),
                _ => None,
            };
            if let (Some(x), Some(y), Some(cs)) = (x, y, cs) {
                fn get<T: Copy>(s: (&[T], Option<T>), i: usize) -> T {
                    match s.1 {
                        Some(k) => k,
                        None => s.0[i],
                    }
                }
                let out: Vec<_> = (0..n)
                    .map(|i| if get(cs, i) { get(x, i) } else { get(y, i) })
                    .collect();
                return Ok(Buffer::from(out));
            }
        };
    }
    typed!(F32);
    typed!(F64);
    typed!(I32);
    typed!(I64);
    typed!(Bool);
    let mut out = Buffer::with_capacity(t, n);
    for i in 0..n {
        let k = c
            .at(i)
            .as_bool()
            .ok_or_else(|| ExecError::new("internal error: select"))?;
        out.push_converted(if k { a.at(i) } else { b.at(i) });
    }
    Ok(out)
}

/// `x op y` for the common cases whose native result is exactly `runic_prim::binop`'s (IEEE
/// arithmetic and comparisons on f32/f64, wrapping arithmetic on i32/i64); `None` otherwise.
#[inline]
pub fn fast_binop(op: BinOp, x: Prim, y: Prim) -> Option<Prim> {
    macro_rules! float {
        ($V:ident, $a:expr, $b:expr, $min:path, $max:path) => {
            Some(match op {
                BinOp::Add => Prim::$V($a + $b),
                BinOp::Sub => Prim::$V($a - $b),
                BinOp::Mul => Prim::$V($a * $b),
                BinOp::Div => Prim::$V($a / $b),
                BinOp::Min => Prim::$V($min($a, $b)),
                BinOp::Max => Prim::$V($max($a, $b)),
                BinOp::Lt => Prim::Bool($a < $b),
                BinOp::Le => Prim::Bool($a <= $b),
                BinOp::Gt => Prim::Bool($a > $b),
                BinOp::Ge => Prim::Bool($a >= $b),
                BinOp::Eq => Prim::Bool($a == $b),
                BinOp::Neq => Prim::Bool($a != $b),
                _ => return None,
            })
        };
    }
    macro_rules! int {
        ($V:ident, $a:expr, $b:expr) => {
            Some(match op {
                BinOp::Add => Prim::$V($a.wrapping_add($b)),
                BinOp::Sub => Prim::$V($a.wrapping_sub($b)),
                BinOp::Mul => Prim::$V($a.wrapping_mul($b)),
                BinOp::Lt => Prim::Bool($a < $b),
                BinOp::Le => Prim::Bool($a <= $b),
                BinOp::Gt => Prim::Bool($a > $b),
                BinOp::Ge => Prim::Bool($a >= $b),
                BinOp::Eq => Prim::Bool($a == $b),
                BinOp::Neq => Prim::Bool($a != $b),
                BinOp::Min => Prim::$V($a.min($b)),
                BinOp::Max => Prim::$V($a.max($b)),
                _ => return None,
            })
        };
    }
    match (x, y) {
        (Prim::F32(a), Prim::F32(b)) => {
            float!(F32, a, b, runic_prim::min_f32, runic_prim::max_f32)
        }
        (Prim::F64(a), Prim::F64(b)) => {
            float!(F64, a, b, runic_prim::min_f64, runic_prim::max_f64)
        }
        (Prim::I32(a), Prim::I32(b)) => int!(I32, a, b),
        (Prim::I64(a), Prim::I64(b)) => int!(I64, a, b),
        (Prim::Bool(a), Prim::Bool(b)) => match op {
            BinOp::LogAnd => Some(Prim::Bool(a && b)),
            BinOp::LogOr => Some(Prim::Bool(a || b)),
            BinOp::Eq => Some(Prim::Bool(a == b)),
            BinOp::Neq => Some(Prim::Bool(a != b)),
            _ => None,
        },
        _ => None,
    }
}

/// `acc[i[e]] ⊕= v[e]` for the `n` elements of a block, under one lock. Fails (before
/// changing anything) unless the accumulator is one vector with a simple operator.
fn acc_add(acc: &Val, i: Arg, v: Arg, n: usize) -> R<()> {
    let Val::Acc(cell) = acc else {
        return err("internal error: update_acc on a non-accumulator");
    };
    let Some(op) = cell
        .op
        .as_ref()
        .and_then(|(l, _)| crate::soac::simple_op_of(l))
    else {
        return err("internal error: accumulator without a simple operator");
    };
    let mut arrays = cell
        .arrays
        .lock()
        .map_err(|_| ExecError::new("internal error: accumulator lock"))?;
    let [a] = arrays.as_mut_slice() else {
        return err("internal error: accumulator of several arrays");
    };
    if a.shape.len() != 1 {
        return err("internal error: accumulator of a multi-dimensional array");
    }
    let len = a.shape[0];
    if let (BinOp::Add, Buffer::F32(d)) = (op, &mut a.data) {
        for e in 0..n {
            let k = i.at(e).to_i64().unwrap_or(-1);
            if k >= 0 && (k as usize) < len {
                if let Prim::F32(x) = v.at(e) {
                    d[k as usize] += x;
                }
            }
        }
        return Ok(());
    }
    for e in 0..n {
        let k = i.at(e).to_i64().unwrap_or(-1);
        if k < 0 || k as usize >= len {
            continue;
        }
        let old = a.data.get(k as usize);
        let x = v.at(e);
        let new = match fast_binop(op, old, x) {
            Some(r) => r,
            None => scalar_binop(op, old, x)?,
        };
        a.data.set_converted(k as usize, new);
    }
    Ok(())
}

/// `&&`, `||`, `==` and `!=` on boolean columns.
fn vbool(op: BinOp, a: Arg, b: Arg, n: usize) -> Option<Buffer> {
    let side = |x: Arg<'_>| -> Option<(Option<Vec<bool>>, Option<bool>)> {
        match x {
            Arg::Col(Buffer::Bool(v), o) => Some((Some(v[o..o + n].to_vec()), None)),
            Arg::Scalar(Prim::Bool(s)) => Some((None, Some(s))),
            _ => None,
        }
    };
    let f: fn(bool, bool) -> bool = match op {
        BinOp::LogAnd => |x, y| x && y,
        BinOp::LogOr => |x, y| x || y,
        BinOp::Eq => |x, y| x == y,
        BinOp::Neq => |x, y| x != y,
        _ => return None,
    };
    let (x, y) = (side(a)?, side(b)?);
    let get = |s: &(Option<Vec<bool>>, Option<bool>), i: usize| match s {
        (Some(v), _) => v[i],
        (None, Some(k)) => *k,
        _ => false,
    };
    Some(Buffer::Bool(
        (0..n).map(|i| f(get(&x, i), get(&y, i))).collect(),
    ))
}

//! The code of a group of rows, a row per lane (`RowGen` over `VGen`): the lambda's
//! statements on its lanes' rows, small integers and index parameters, and the reads,
//! updates and gathers of rows in lanes.

use super::super::{select, unaligned, Plan, VGen, R, V};
use super::{first_row, lane_rows, Lane, LaneRow, Out, Parts, RowInput, VECTOR_BYTES};
use crate::gen::ba;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;
use runic_ir::*;
use std::collections::HashMap;

/// The lambda on the group of rows at byte offset `off` (of the first row's result): its
/// results, and the lanes to leave to the scalar code, if any can be.
pub(super) fn rows_body(
    b: &mut FunctionBuilder,
    plan: Plan,
    parts: &Parts,
    off: Value,
) -> R<(Vec<Out>, Option<Value>)> {
    let first = first_row(b, plan, off);
    let mut env: HashMap<VName, V> = (parts.frees.iter())
        .map(|(k, &(v, mask))| (*k, V { v, mask }))
        .collect();
    let mut rows: HashMap<VName, LaneRow> = (parts.vectors.iter())
        .map(|(v, x)| (*v, LaneRow::Uniform(x.base, x.step)))
        .collect();
    let mut indices: HashMap<VName, Vec<Value>> = HashMap::new();
    for p in &parts.lam.params {
        match parts.inputs.get(&p.name) {
            Some(RowInput::Indices(base)) => {
                let ks = (0..plan.lanes)
                    .map(|l| {
                        let at = b.ins().iadd_imm_s(first, l);
                        let a = crate::gen::elem_addr(b, *base, at, PrimType::I64);
                        b.ins().load(types::I64, unaligned(), a, 0)
                    })
                    .collect();
                indices.insert(p.name, ks);
            }
            Some(RowInput::Column(base)) => {
                let a = b.ins().iadd(*base, off);
                let v = b.ins().load(plan.vt(), unaligned(), a, 0);
                env.insert(p.name, V { v, mask: false });
            }
            Some(RowInput::Rows(r)) => {
                let lanes = lane_rows(b, plan, r, first);
                rows.insert(p.name, LaneRow::Gathered(lanes, r.elem_step));
            }
            None => return Err(format!("internal error: no input for {}", p.name)),
        }
    }
    let mut r = RowGen {
        g: VGen {
            b,
            plan,
            env,
            bail: None,
        },
        parts,
        rows,
        ints: HashMap::new(),
        indices,
    };
    for (p, &slot) in parts.staged {
        let (row, len) = (r.row(p)?, parts.lens[p]);
        r.lane_loop(len, &[], |r, j, _| {
            let v = element(&mut r.g, &row, j).value();
            store_element(r.g.b, slot, j, v);
            Ok(Vec::new())
        })?;
        r.rows.insert(*p, LaneRow::Slot(slot));
    }
    r.stms(&parts.lam.body)?;
    let mut res = Vec::new();
    for x in &parts.lam.body.result {
        res.push(match x {
            SubExp::Var(v) if parts.slots.contains_key(v) => {
                Out::Row(parts.slots[v], parts.lens[v])
            }
            _ => Out::Lanes(r.g.opd(x)?),
        });
    }
    Ok((res, r.g.bail))
}

/// The code of a group of rows: `VGen`'s lanes, and the rows, small integers and index
/// parameters of each lane.
struct RowGen<'p, 'a, 'b> {
    g: VGen<'a, 'b>,
    parts: &'p Parts<'p>,
    rows: HashMap<VName, LaneRow>,
    ints: HashMap<VName, Value>,
    indices: HashMap<VName, Vec<Value>>,
}

impl RowGen<'_, '_, '_> {
    fn stms(&mut self, body: &Body) -> R<()> {
        for s in &body.stms {
            self.stm(s)?;
        }
        Ok(())
    }

    fn stm(&mut self, s: &Stm) -> R<()> {
        let p = s
            .pat
            .first()
            .ok_or("internal error: a statement binds nothing")?;
        match &s.exp {
            Exp::Soac(Soac::Reduce {
                arrs,
                pre,
                lam: op,
                neutral,
                ..
            }) => {
                let w = self.parts.widths[&p.name];
                let ins = self.lane_rows_of(arrs)?;
                let int = p.ty == Type::Prim(PrimType::I64);
                let v = self.row_fold(&ins, pre.as_ref(), op, &neutral[0], int, w)?;
                self.bind(p.name, v);
            }
            Exp::Soac(Soac::Map { arrs, lam: f, .. }) => {
                let w = self.parts.widths[&p.name];
                let ins = self.lane_rows_of(arrs)?;
                let outs: Vec<Value> = s.pat.iter().map(|p| self.parts.slots[&p.name]).collect();
                self.row_map(&ins, f, &outs, w)?;
                for (p, slot) in s.pat.iter().zip(outs) {
                    self.rows.insert(p.name, LaneRow::Slot(slot));
                }
            }
            Exp::Basic(BasicOp::Range { .. }) => {
                self.rows.insert(p.name, LaneRow::Iota);
            }
            Exp::Basic(BasicOp::Replicate(_, x)) => {
                let v = self.g.opd(x)?.v;
                self.rows.insert(p.name, LaneRow::Filled(v));
            }
            Exp::Basic(BasicOp::Copy(a)) => {
                let row = self.row(a)?;
                self.rows.insert(p.name, row);
            }
            Exp::Basic(BasicOp::Index(a, idx)) => {
                let [DimIndex::Fix(k)] = &idx[..] else {
                    return Err("internal error: a row read".into());
                };
                let ks = self.lane_indices(k)?;
                let (row, len) = (self.row(a)?, self.parts.lens[a]);
                let v = element_at(&mut self.g, &row, &ks, len, self.parts.dummy)?;
                self.bind(p.name, Lane::float(v));
            }
            Exp::Basic(BasicOp::Update(a, idx, x)) => {
                let [DimIndex::Fix(k)] = &idx[..] else {
                    return Err("internal error: a row update".into());
                };
                self.update(p.name, a, k, x)?;
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ..
            } => self.branch(&s.pat, cond, then_body, else_body)?,
            Exp::Basic(op) if self.is_int_op(&p.ty, op) => {
                let v = self.int_op(op)?;
                self.bind(p.name, v);
            }
            _ => self.g.stm(s)?,
        }
        Ok(())
    }

    fn bind(&mut self, v: VName, x: Lane) {
        match x {
            Lane::F(x) => {
                self.g.env.insert(v, x);
            }
            Lane::I(x) => {
                self.ints.insert(v, x);
            }
        }
    }

    fn row(&self, a: &VName) -> R<LaneRow> {
        (self.rows.get(a).cloned()).ok_or_else(|| format!("internal error: no row {a}"))
    }

    fn lane_rows_of(&self, arrs: &[VName]) -> R<Vec<LaneRow>> {
        arrs.iter().map(|a| self.row(a)).collect()
    }

    /// Whether `s` is a small integer (see `Scope::int`).
    fn is_int(&self, s: &SubExp) -> bool {
        match s {
            SubExp::Const(p) => p.ty() == PrimType::I64,
            SubExp::Var(v) => {
                self.ints.contains_key(v)
                    || self.indices.contains_key(v)
                    || (!self.g.env.contains_key(v)
                        && matches!(self.parts.env.get(v), Some((_, PrimType::I64))))
            }
        }
    }

    /// Whether `op`, binding `ty`, is `Scope::int_op`'s.
    fn is_int_op(&self, ty: &Type, op: &BasicOp) -> bool {
        match op {
            BasicOp::SubExp(_) | BasicOp::BinOp(BinOp::Min | BinOp::Max, ..) => {
                *ty == Type::Prim(PrimType::I64)
            }
            BasicOp::BinOp(_, a, b) => {
                *ty == Type::Prim(PrimType::Bool) && (self.is_int(a) || self.is_int(b))
            }
            _ => false,
        }
    }

    fn int_op(&mut self, op: &BasicOp) -> R<Lane> {
        let (o, a, b) = match op {
            BasicOp::SubExp(a) => return Ok(Lane::I(self.int_opd(a)?)),
            BasicOp::BinOp(o, a, b) => (o, a, b),
            _ => return Err("internal error: an integer operation in lanes".into()),
        };
        let (x, y) = (self.int_opd(a)?, self.int_opd(b)?);
        let cc = match o {
            BinOp::Min | BinOp::Lt => IntCC::SignedLessThan,
            BinOp::Max | BinOp::Gt => IntCC::SignedGreaterThan,
            BinOp::Le => IntCC::SignedLessThanOrEqual,
            BinOp::Ge => IntCC::SignedGreaterThanOrEqual,
            BinOp::Eq => IntCC::Equal,
            BinOp::Neq => IntCC::NotEqual,
            _ => return Err("internal error: an integer operation in lanes".into()),
        };
        let m = self.g.b.ins().icmp(cc, x, y);
        Ok(match o {
            BinOp::Min | BinOp::Max => Lane::I(select(self.g.b, m, x, y)),
            _ => Lane::F(self.g.mask(m)),
        })
    }

    /// A small integer in lanes: constants beyond `i32` clamped to its ends in `i32`
    /// lanes; a free size beyond them sends the group to the scalar code.
    fn int_opd(&mut self, s: &SubExp) -> R<Value> {
        let mt = self.g.plan.mt();
        match s {
            SubExp::Const(c) => {
                let c = (c.as_int()).ok_or("internal error: an integer constant in lanes")?;
                let c = if mt.lane_bits() == 32 {
                    c.clamp(i32::MIN as i128, i32::MAX as i128) as i64
                } else {
                    c as i64
                };
                let c = self.g.b.ins().iconst(mt.lane_type(), c);
                Ok(self.g.b.ins().splat(mt, c))
            }
            SubExp::Var(v) => {
                if let Some(x) = self.ints.get(v) {
                    return Ok(*x);
                }
                if let Some(ks) = self.indices.get(v).cloned() {
                    if mt.lane_bits() == 32 {
                        let oks: Vec<Value> = (ks.iter()).map(|&k| fits_i32(self.g.b, k)).collect();
                        bail_lanes(&mut self.g, &oks);
                    }
                    return Ok(index_vector(&mut self.g, &ks));
                }
                let &(x, _) = (self.parts.env.get(v))
                    .ok_or_else(|| format!("internal error: {v} is not in scope"))?;
                if mt.lane_bits() == 32 {
                    let inside = fits_i32(self.g.b, x);
                    bail_unless(&mut self.g, inside);
                }
                Ok(int_splat(&mut self.g, x))
            }
        }
    }

    /// Each lane's `i64` index `k`: an index parameter's, or a small integer's lanes.
    fn lane_indices(&mut self, k: &SubExp) -> R<Vec<Value>> {
        if let SubExp::Var(v) = k {
            if let Some(ks) = self.indices.get(v) {
                return Ok(ks.clone());
            }
        }
        let v = self.int_opd(k)?;
        let narrow = self.g.plan.mt().lane_bits() == 32;
        let b = &mut self.g.b;
        Ok((0..self.g.plan.lanes as u8)
            .map(|l| {
                let x = b.ins().extractlane(v, l);
                if narrow {
                    b.ins().sextend(types::I64, x)
                } else {
                    x
                }
            })
            .collect())
    }

    fn lane_opd(&mut self, s: &SubExp) -> R<Lane> {
        if self.is_int(s) {
            Ok(Lane::I(self.int_opd(s)?))
        } else {
            Ok(Lane::F(self.g.opd(s)?))
        }
    }

    /// `a with [k] = x` in each lane, into the slot of `p` (the bounds checked: an index
    /// outside sends the group to the scalar code). Every element is selected between the
    /// row's and `x`, which costs a row's length in vector operations and needs no lane's
    /// address.
    fn update(&mut self, p: VName, a: &VName, k: &SubExp, x: &SubExp) -> R<()> {
        let ks = self.lane_indices(k)?;
        let len = self.parts.lens[a];
        let b = &mut self.g.b;
        let oks: Vec<Value> = (ks.iter())
            .map(|&k| b.ins().icmp(IntCC::UnsignedLessThan, k, len))
            .collect();
        bail_lanes(&mut self.g, &oks);
        let at = index_vector(&mut self.g, &ks);
        let x = self.g.opd(x)?.v;
        let (src, slot) = (self.row(a)?, self.parts.slots[&p]);
        self.lane_loop(len, &[], |r, j, _| {
            let old = element(&mut r.g, &src, j).value();
            let js = int_splat(&mut r.g, j);
            let here = r.g.b.ins().icmp(IntCC::Equal, at, js);
            let y = select(r.g.b, here, x, old);
            store_element(r.g.b, slot, j, y);
            Ok(Vec::new())
        })?;
        self.rows.insert(p, LaneRow::Slot(slot));
        Ok(())
    }

    /// An `if`: both branches computed (none of their operations has an effect, and what
    /// each leaves to the scalar code counts only in the lanes that take it), their
    /// results selected lane by lane, rows element by element into the slots of `pat`.
    fn branch(&mut self, pat: &[Param], cond: &SubExp, then: &Body, els: &Body) -> R<()> {
        let c = self.g.opd(cond)?.v;
        let not_c = self.g.b.ins().bnot(c);
        let outer = self.g.bail.take();
        let mut left = Vec::new();
        let mut sides = Vec::new();
        for (body, taken) in [(then, c), (els, not_c)] {
            self.stms(body)?;
            let mut side = Vec::new();
            for (r, p) in body.result.iter().zip(pat) {
                side.push(match (r, &p.ty) {
                    (SubExp::Var(v), Type::Array { .. }) => Err(self.row(v)?),
                    _ => Ok(self.lane_opd(r)?),
                });
            }
            sides.push(side);
            // What a branch (its results included) leaves to the scalar code matters only
            // where it is taken.
            if let Some(m) = self.g.bail.take() {
                left.push(self.g.b.ins().band(m, taken));
            }
        }
        self.g.bail = outer;
        for m in left {
            self.g.leave(m);
        }
        let els = sides.pop().unwrap_or_default();
        let then = sides.pop().unwrap_or_default();
        for ((p, x), y) in pat.iter().zip(then).zip(els) {
            match (x, y) {
                (Ok(Lane::I(x)), Ok(Lane::I(y))) => {
                    let v = select(self.g.b, c, x, y);
                    self.bind(p.name, Lane::I(v));
                }
                (Ok(Lane::F(x)), Ok(Lane::F(y))) => {
                    let v = select(self.g.b, c, x.v, y.v);
                    self.bind(p.name, Lane::F(V { v, mask: x.mask }));
                }
                (Err(x), Err(y)) => {
                    let (slot, len) = (self.parts.slots[&p.name], self.parts.lens[&p.name]);
                    self.lane_loop(len, &[], |r, j, _| {
                        let xj = element(&mut r.g, &x, j).value();
                        let yj = element(&mut r.g, &y, j).value();
                        let v = select(r.g.b, c, xj, yj);
                        store_element(r.g.b, slot, j, v);
                        Ok(Vec::new())
                    })?;
                    self.rows.insert(p.name, LaneRow::Slot(slot));
                }
                _ => return Err("internal error: an if's branches differ in kind".into()),
            }
        }
        Ok(())
    }

    /// `for j < w` carrying `carried` (vectors) and the lanes left to the scalar code:
    /// `step(r, j, carried)` emits one element's code and returns the next values. Returns
    /// the final values, the lanes left joined into `g.bail`.
    fn lane_loop(
        &mut self,
        w: Value,
        carried: &[Value],
        mut step: impl FnMut(&mut Self, Value, &[Value]) -> R<Vec<Value>>,
    ) -> R<Vec<Value>> {
        let mt = self.g.plan.mt();
        let b = &mut self.g.b;
        let zero = b.ins().iconst(mt.lane_type(), 0);
        let no_bail = b.ins().splat(mt, zero);
        let j0 = b.ins().iconst(types::I64, 0);
        let header = b.create_block();
        let body = b.create_block();
        let done = b.create_block();
        b.append_block_param(header, types::I64);
        for &x in carried {
            let ty = b.func.dfg.value_type(x);
            b.append_block_param(header, ty);
            b.append_block_param(done, ty);
        }
        b.append_block_param(header, mt);
        b.append_block_param(done, mt);
        let init = [&[j0][..], carried, &[no_bail]].concat();
        b.ins().jump(header, &ba(&init));
        b.switch_to_block(header);
        let params = b.block_params(header).to_vec();
        let (j, values, bail) = (
            params[0],
            &params[1..params.len() - 1],
            params[params.len() - 1],
        );
        let more = b.ins().icmp(IntCC::SignedLessThan, j, w);
        b.ins().brif(more, body, &[], done, &ba(&params[1..]));
        b.switch_to_block(body);
        let saved = (self.g.env.clone(), self.g.bail.take(), self.ints.clone());
        let next = step(self, j, values)?;
        let bail = match self.g.bail {
            Some(m) => self.g.b.ins().bor(bail, m),
            None => bail,
        };
        (self.g.env, self.g.bail, self.ints) = saved;
        let b = &mut self.g.b;
        let j1 = b.ins().iadd_imm_s(j, 1);
        b.ins()
            .jump(header, &ba(&[&[j1][..], &next, &[bail]].concat()));
        b.switch_to_block(done);
        let out = b.block_params(done).to_vec();
        let (values, bail) = (&out[..out.len() - 1], out[out.len() - 1]);
        self.g.leave(bail);
        Ok(values.to_vec())
    }

    /// `reduce op ne (map pre rows…)` over the first `w` elements of each lane's rows, in
    /// order from `ne`; `int`: of small integers.
    fn row_fold(
        &mut self,
        ins: &[LaneRow],
        pre: Option<&Lambda>,
        op: &Lambda,
        ne: &SubExp,
        int: bool,
        w: Value,
    ) -> R<Lane> {
        let kind = move |v: Value| if int { Lane::I(v) } else { Lane::float(v) };
        let acc0 = if int {
            self.int_opd(ne)?
        } else {
            self.g.opd(ne)?.v
        };
        let out = self.lane_loop(w, &[acc0], |r, j, acc| {
            let xs: Vec<Lane> = ins.iter().map(|row| element(&mut r.g, row, j)).collect();
            let y = match pre {
                Some(pre) => r.apply(pre, &xs)?[0],
                None => xs[0],
            };
            Ok(vec![r.apply(op, &[kind(acc[0]), y])?[0].value()])
        })?;
        Ok(kind(out[0]))
    }

    /// `map f rows…` over the first `w` elements of each lane's rows, into the slots `outs`.
    fn row_map(&mut self, ins: &[LaneRow], f: &Lambda, outs: &[Value], w: Value) -> R<()> {
        self.lane_loop(w, &[], |r, j, _| {
            let xs: Vec<Lane> = ins.iter().map(|row| element(&mut r.g, row, j)).collect();
            let ys = r.apply(f, &xs)?;
            for (y, slot) in ys.iter().zip(outs) {
                store_element(r.g.b, *slot, j, y.value());
            }
            Ok(Vec::new())
        })?;
        Ok(())
    }

    /// `l` applied to lanes `xs`: its results' lanes.
    fn apply(&mut self, l: &Lambda, xs: &[Lane]) -> R<Vec<Lane>> {
        for (p, x) in l.params.iter().zip(xs) {
            self.bind(p.name, *x);
        }
        self.stms(&l.body)?;
        l.body.result.iter().map(|r| self.lane_opd(r)).collect()
    }
}

/// `k` (an `i64`) in every lane of a vector of the mask's type.
fn int_splat(g: &mut VGen, k: Value) -> Value {
    let mt = g.plan.mt();
    let k = if mt.lane_bits() == 32 {
        g.b.ins().ireduce(types::I32, k)
    } else {
        k
    };
    g.b.ins().splat(mt, k)
}

/// Lane `l` holding `ks[l]` (`i64`s, narrowed in `i32` lanes), a vector of the mask's type.
fn index_vector(g: &mut VGen, ks: &[Value]) -> Value {
    let mt = g.plan.mt();
    let narrow = |g: &mut VGen, k: Value| {
        if mt.lane_bits() == 32 {
            g.b.ins().ireduce(types::I32, k)
        } else {
            k
        }
    };
    let first = narrow(g, ks[0]);
    let mut v = g.b.ins().scalar_to_vector(mt, first);
    for (l, &k) in ks.iter().enumerate().skip(1) {
        let k = narrow(g, k);
        v = g.b.ins().insertlane(v, k, l as u8);
    }
    v
}

/// Every lane to the scalar code unless `inside` (a scalar condition) holds.
fn bail_unless(g: &mut VGen, inside: Value) {
    let mt = g.plan.mt();
    let lane = mt.lane_type();
    let (all, none) = (g.b.ins().iconst(lane, -1), g.b.ins().iconst(lane, 0));
    let flag = g.b.ins().select(inside, none, all);
    let outside = g.b.ins().splat(mt, flag);
    g.leave(outside);
}

/// Whether `x` (an `i64`) lies strictly between `i32`'s ends, where no clamped constant is.
fn fits_i32(b: &mut FunctionBuilder, x: Value) -> Value {
    let above = b
        .ins()
        .icmp_imm_s(IntCC::SignedGreaterThan, x, i32::MIN as i64);
    let below = b
        .ins()
        .icmp_imm_s(IntCC::SignedLessThan, x, i32::MAX as i64);
    b.ins().band(above, below)
}

/// The lanes `l` where `oks[l]` (a scalar condition) fails to the scalar code.
fn bail_lanes(g: &mut VGen, oks: &[Value]) {
    let mt = g.plan.mt();
    let lane = mt.lane_type();
    let (all, none) = (g.b.ins().iconst(lane, -1), g.b.ins().iconst(lane, 0));
    let mut out = g.b.ins().splat(mt, none);
    for (l, &ok) in oks.iter().enumerate() {
        let flag = g.b.ins().select(ok, none, all);
        out = g.b.ins().insertlane(out, flag, l as u8);
    }
    g.leave(out);
}

/// Vector `v` as element `j` of the lanes' rows in `slot`.
fn store_element(b: &mut FunctionBuilder, slot: Value, j: Value, v: Value) {
    let at = b.ins().imul_imm_s(j, VECTOR_BYTES);
    let a = b.ins().iadd(slot, at);
    b.ins().store(unaligned(), v, a, 0);
}

/// Element `k` of each lane's row, as one vector.
fn element(g: &mut VGen, row: &LaneRow, k: Value) -> Lane {
    Lane::float(match row {
        LaneRow::Slot(slot) => {
            let at = g.b.ins().imul_imm_s(k, VECTOR_BYTES);
            let a = g.b.ins().iadd(*slot, at);
            g.b.ins().load(g.plan.vt(), unaligned(), a, 0)
        }
        LaneRow::Gathered(lanes, step) => {
            let at = g.b.ins().imul(k, *step);
            let addrs: Vec<Value> = lanes.iter().map(|row| g.b.ins().iadd(*row, at)).collect();
            gather(g, &addrs)
        }
        LaneRow::Uniform(base, step) => {
            let at = g.b.ins().imul(k, *step);
            let a = g.b.ins().iadd(*base, at);
            let x = g.b.ins().load(g.plan.elem_type(), unaligned(), a, 0);
            g.b.ins().splat(g.plan.vt(), x)
        }
        LaneRow::Filled(v) => *v,
        LaneRow::Iota => return Lane::I(int_splat(g, k)),
    })
}

/// Element `ks[l]` of lane `l`'s row, as one vector; an index outside the row (of length
/// `len`) reads a harmless dummy and sends the group to the scalar code, which reports it.
fn element_at(g: &mut VGen, row: &LaneRow, ks: &[Value], len: Value, dummy: Value) -> R<Value> {
    let mut addrs = Vec::new();
    let mut oks = Vec::new();
    let size = g.plan.elem.size_bytes() as i64;
    for (l, &k) in ks.iter().enumerate() {
        let ok = g.b.ins().icmp(IntCC::UnsignedLessThan, k, len);
        oks.push(ok);
        let a = match row {
            LaneRow::Gathered(lanes, step) => {
                let at = g.b.ins().imul(k, *step);
                g.b.ins().iadd(lanes[l], at)
            }
            LaneRow::Slot(slot) => {
                let at = g.b.ins().imul_imm_s(k, VECTOR_BYTES);
                let a = g.b.ins().iadd(*slot, at);
                g.b.ins().iadd_imm_s(a, l as i64 * size)
            }
            LaneRow::Uniform(base, step) => {
                let at = g.b.ins().imul(k, *step);
                g.b.ins().iadd(*base, at)
            }
            LaneRow::Filled(_) => continue,
            LaneRow::Iota => return Err("internal error: an iota's element read".into()),
        };
        addrs.push(g.b.ins().select(ok, a, dummy));
    }
    bail_lanes(g, &oks);
    Ok(match row {
        LaneRow::Filled(v) => *v,
        _ => gather(g, &addrs),
    })
}

/// One element of the plan's type loaded from each of `addrs` (one per lane), as a vector.
fn gather(g: &mut VGen, addrs: &[Value]) -> Value {
    let load = |g: &mut VGen, a: Value| g.b.ins().load(g.plan.elem_type(), unaligned(), a, 0);
    let first = load(g, addrs[0]);
    let mut v = g.b.ins().scalar_to_vector(g.plan.vt(), first);
    for (l, &a) in addrs.iter().enumerate().skip(1) {
        let x = load(g, a);
        v = g.b.ins().insertlane(v, x, l as u8);
    }
    v
}

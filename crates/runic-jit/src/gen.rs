//! Translation of scalar lambdas to Cranelift IR, and the element loops around them.

use crate::shims;
use crate::Code;
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64};
use cranelift_codegen::ir::{
    types, AbiParam, Block, BlockArg, FuncRef, InstBuilder, MemFlagsData, Signature, StackSlot,
    StackSlotData, StackSlotKind, Type as CType, UserFuncName, Value,
};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};
use runic_ir::*;
use std::collections::{HashMap, HashSet};

pub(crate) type R<T> = Result<T, String>;

/// The Cranelift type that holds a value of `t`.
pub(crate) fn cl(t: PrimType) -> CType {
    match t {
        PrimType::I8 | PrimType::U8 | PrimType::Bool => types::I8,
        PrimType::I16 | PrimType::U16 | PrimType::F16 => types::I16,
        PrimType::I32 | PrimType::U32 => types::I32,
        PrimType::I64 | PrimType::U64 => types::I64,
        PrimType::F32 => types::F32,
        PrimType::F64 => types::F64,
    }
}

pub(crate) fn mem() -> MemFlagsData {
    MemFlagsData::trusted()
}

pub(crate) fn ba(vs: &[Value]) -> Vec<BlockArg> {
    vs.iter().map(|&v| BlockArg::Value(v)).collect()
}

/// Checks that a lambda has only constructs this slice compiles, and names the first that
/// it does not.
pub(crate) fn check_lambda(lam: &Lambda, what: &str) -> R<()> {
    check_lambda_in(lam, what, false)
}

/// [`check_lambda`]; `nest`: the body of a map kernel, which may also index arrays (its
/// rows and free arrays) and fold them with inner reductions.
pub(crate) fn check_lambda_in(lam: &Lambda, what: &str, nest: bool) -> R<()> {
    for p in &lam.params {
        if nest && matches!(p.ty, Type::Array { .. }) {
            continue;
        }
        if !matches!(p.ty, Type::Prim(_)) {
            return Err(format!("{what} has a non-scalar parameter"));
        }
    }
    for t in &lam.ret {
        if !matches!(t, Type::Prim(_)) {
            return Err(format!("{what} has a non-scalar result"));
        }
    }
    check_body(&lam.body, what, nest)
}

fn check_body(b: &Body, what: &str, nest: bool) -> R<()> {
    for s in &b.stms {
        let view = nest
            && matches!(
                s.exp,
                Exp::If { .. }
                    | Exp::Basic(
                        BasicOp::Index(..)
                            | BasicOp::Range { .. }
                            | BasicOp::Replicate(..)
                            | BasicOp::ArrayLit(..)
                            | BasicOp::Copy(_)
                            | BasicOp::SubExp(_)
                            | BasicOp::Update(..)
                            | BasicOp::Scratch(..)
                            | BasicOp::Rearrange(..)
                            | BasicOp::Reshape { .. }
                            | BasicOp::Concat(..)
                    )
                    | Exp::Loop { .. }
                    | Exp::Soac(
                        Soac::Map { .. }
                            | Soac::Scan { .. }
                            | Soac::Hist { .. }
                            | Soac::Scatter { .. }
                    )
                    | Exp::WithAcc { .. }
            );
        let acc_update = nest && matches!(s.exp, Exp::Basic(BasicOp::UpdateAcc { .. }));
        if !view && !acc_update && s.pat.iter().any(|p| !matches!(p.ty, Type::Prim(_))) {
            return Err(format!(
                "{what} binds a non-scalar value ({})",
                exp_name(&s.exp)
            ));
        }
        match &s.exp {
            Exp::Basic(
                BasicOp::Index(..)
                | BasicOp::UpdateAcc { .. }
                | BasicOp::Update(..)
                | BasicOp::Scratch(..)
                | BasicOp::ArraySize(..),
            ) if nest => {}
            Exp::Basic(BasicOp::Assert { .. } | BasicOp::ShapeCheck { .. }) if nest => {}
            Exp::Basic(
                BasicOp::Range { .. }
                | BasicOp::Replicate(..)
                | BasicOp::Copy(_)
                | BasicOp::ArrayLit(..)
                | BasicOp::Rearrange(..)
                | BasicOp::Reshape { .. }
                | BasicOp::Concat(..),
            ) if nest => {}
            Exp::Soac(Soac::Reduce { pre, lam, .. }) if nest => {
                if let Some(p) = pre {
                    check_lambda_in(p, what, true)?;
                }
                check_lambda(lam, "an inner reduction's operator")?;
            }
            Exp::Soac(Soac::Hist { lam, .. }) if nest => {
                check_lambda(lam, "an inner reduce_by_index's operator")?;
            }
            Exp::Soac(Soac::Scatter { .. }) if nest => {}
            Exp::WithAcc { inputs, lam } if nest => {
                for op in inputs.iter().filter_map(|i| i.op.as_ref()) {
                    check_lambda(&op.0, "an accumulator's operator")?;
                }
                // The lambda takes and returns accumulators: only its body is checked.
                check_body(&lam.body, what, nest)?;
            }
            Exp::Soac(Soac::Scan { pre, lam, .. }) if nest => {
                if let Some(p) = pre {
                    check_lambda_in(p, what, true)?;
                }
                check_lambda(lam, "an inner scan's operator")?;
            }
            Exp::Soac(Soac::Map { lam, .. }) if nest => {
                // Array results are written into rows of the map's result.
                let scalar_ret = Lambda {
                    ret: vec![],
                    ..lam.clone()
                };
                check_lambda_in(&scalar_ret, "a nested map's lambda", true)?;
                if lam.ret.iter().any(|t| t.elem().is_none()) {
                    return Err(format!("{what} contains a nested map of accumulators"));
                }
            }
            Exp::Basic(
                BasicOp::SubExp(_)
                | BasicOp::BinOp(..)
                | BasicOp::UnOp(..)
                | BasicOp::TernOp(..)
                | BasicOp::Convert(..),
            ) => {}
            Exp::Basic(op) => {
                let name = match op {
                    BasicOp::Index(..) => "indexing",
                    BasicOp::Update(..) => "an in-place update",
                    BasicOp::Assert { .. } | BasicOp::ShapeCheck { .. } => "an assertion",
                    BasicOp::UpdateAcc { .. } => "an accumulator update",
                    _ => "an array operation",
                };
                return Err(format!("{what} contains {name}"));
            }
            Exp::If {
                then_body,
                else_body,
                ..
            } => {
                check_body(then_body, what, nest)?;
                check_body(else_body, what, nest)?;
            }
            Exp::Loop { params, body, .. } => {
                let arrays = params.iter().any(|(p, _)| !matches!(p.ty, Type::Prim(_)));
                if arrays && !nest {
                    return Err(format!("{what} contains a loop with array parameters"));
                }
                check_body(body, what, nest)?;
            }
            Exp::Soac(_) => return Err(format!("{what} contains a nested SOAC")),
            Exp::Apply { .. } => return Err(format!("{what} contains a function call")),
            _ => return Err(format!("{what} contains an accumulator or AD construct")),
        }
    }
    Ok(())
}

/// What a statement is, for the reasons of [`check_body`].
fn exp_name(e: &Exp) -> &'static str {
    match e {
        Exp::Basic(op) => match op {
            BasicOp::Range { .. } => "iota",
            BasicOp::Replicate(..) => "replicate",
            BasicOp::Reshape { .. } => "a reshape",
            BasicOp::Rearrange(..) => "a transposition",
            BasicOp::Concat(..) => "a concatenation",
            BasicOp::Copy(..) => "a copy",
            BasicOp::ArrayLit(..) => "an array literal",
            BasicOp::Scratch(..) => "a scratch array",
            BasicOp::Update(..) => "an in-place update",
            BasicOp::Index(..) => "a slice",
            BasicOp::SubExp(_) => "an alias of an array",
            BasicOp::UpdateAcc { .. } => "an accumulator update",
            _ => "an array operation",
        },
        Exp::If { .. } => "an if with array results",
        Exp::Loop { .. } => "a loop with array parameters",
        Exp::Soac(Soac::Map { .. }) => "a map",
        Exp::Soac(Soac::Scan { .. }) => "a scan",
        Exp::Soac(Soac::Hist { .. }) => "a reduce_by_index",
        Exp::Soac(Soac::Scatter { .. }) => "a scatter",
        Exp::Soac(Soac::Reduce { .. }) => "a reduce of arrays",
        Exp::Apply { .. } => "a function call",
        _ => "an accumulator or AD construct",
    }
}

/// The shims native code calls, declared in one function.
pub(crate) struct Rt {
    pub(crate) binop: FuncRef,
    pub(crate) unop: FuncRef,
    pub(crate) convert: FuncRef,
    pub(crate) ternop: FuncRef,
    pub(crate) scratch: FuncRef,
    pub(crate) slice: FuncRef,
    pub(crate) range: FuncRef,
}

fn new_module() -> R<JITModule> {
    let mut flags = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| {
        f.set(k, v)
            .map_err(|e| format!("cranelift setting {k}: {e}"))
    };
    set(&mut flags, "use_colocated_libcalls", "false")?;
    set(&mut flags, "is_pic", "false")?;
    set(&mut flags, "opt_level", "speed")?;
    let isa = cranelift_native::builder()
        .map_err(|e| format!("unsupported host: {e}"))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| format!("cranelift: {e}"))?;
    let mut b = JITBuilder::with_isa(isa, default_libcall_names());
    b.symbol("runic_rt_binop", shims::rt_binop as *const u8);
    b.symbol("runic_rt_unop", shims::rt_unop as *const u8);
    b.symbol("runic_rt_convert", shims::rt_convert as *const u8);
    b.symbol("runic_rt_ternop", shims::rt_ternop as *const u8);
    b.symbol("runic_rt_scratch", shims::rt_scratch as *const u8);
    b.symbol("runic_rt_slice", shims::rt_slice as *const u8);
    b.symbol("runic_rt_range", shims::rt_range as *const u8);
    Ok(JITModule::new(b))
}

fn declare_rt(module: &mut JITModule, func: &mut cranelift_codegen::ir::Function) -> R<Rt> {
    let i64t = types::I64;
    let mut decl = |name: &str, params: &[CType], ret: CType| -> R<FuncRef> {
        let mut sig = module.make_signature();
        sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
        sig.returns.push(AbiParam::new(ret));
        let id = module
            .declare_function(name, Linkage::Import, &sig)
            .map_err(|e| e.to_string())?;
        Ok(module.declare_func_in_func(id, func))
    };
    Ok(Rt {
        binop: decl("runic_rt_binop", &[i64t; 6], types::I32)?,
        unop: decl("runic_rt_unop", &[i64t; 3], i64t)?,
        convert: decl("runic_rt_convert", &[i64t; 3], i64t)?,
        ternop: decl("runic_rt_ternop", &[i64t; 8], types::I32)?,
        scratch: decl("runic_rt_scratch", &[i64t; 3], i64t)?,
        slice: decl("runic_rt_slice", &[i64t; 6], types::I32)?,
        range: decl("runic_rt_range", &[i64t; 7], types::I32)?,
    })
}

/// Compile one function `kernel` with signature `sig`, whose body `build` emits, and return
/// its address with the module that owns it.
/// The name a kernel's code has in profiles (`perf` reads cranelift-jit's
/// `/tmp/perf-PID.map`): its kind and the first parameter of its lambda, which names the
/// SOAC in `runic dev --backend ir`'s listing.
pub(crate) fn kernel_name(kind: &str, lam: &Lambda) -> String {
    match lam.params.first() {
        Some(p) => format!("{kind}_{}", p.name),
        None => kind.to_string(),
    }
}

pub(crate) fn build_kernel(
    name: &str,
    params: &[CType],
    build: impl FnOnce(&mut FunctionBuilder, &Rt, StackSlot) -> R<()>,
) -> R<(*const u8, Code)> {
    let mut module = new_module()?;
    let mut ctx = module.make_context();
    let mut sig: Signature = module.make_signature();
    sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
    sig.returns.push(AbiParam::new(types::I32));
    let id = module
        .declare_function(name, Linkage::Export, &sig)
        .map_err(|e| e.to_string())?;
    ctx.func.signature = sig;
    ctx.func.name = UserFuncName::user(0, id.as_u32());
    let rt = declare_rt(&mut module, &mut ctx.func)?;
    let mut fctx = FunctionBuilderContext::new();
    let config = module.target_config();
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let slot = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 8, 3));
        build(&mut b, &rt, slot)?;
        b.seal_all_blocks();
        b.finalize(config);
    }
    let dump = std::env::var("RUNIC_JIT_DUMP").is_ok();
    if dump {
        eprintln!("{}", ctx.func.display());
        ctx.set_disasm(true);
    }
    module
        .define_function(id, &mut ctx)
        .map_err(|e| format!("cranelift: {e:?}"))?;
    if dump {
        if let Some(c) = ctx.compiled_code() {
            eprintln!("{}", c.vcode.as_deref().unwrap_or(""));
        }
    }
    module.clear_context(&mut ctx);
    module
        .finalize_definitions()
        .map_err(|e| format!("cranelift: {e}"))?;
    let ptr = module.get_finalized_function(id);
    Ok((ptr, Code(Some(module))))
}

/// A kernel's ending: the current block returns 0 (success); `fail`, whose one parameter
/// is the failure code, returns that code.
pub(crate) fn return_ok_or_fail(b: &mut FunctionBuilder, fail: Block) {
    let zero = b.ins().iconst(types::I32, 0);
    b.ins().return_(&[zero]);
    b.switch_to_block(fail);
    let code = b.block_params(fail)[0];
    b.ins().return_(&[code]);
}

/// Address of element `i` of the column at `base`.
pub(crate) fn elem_addr(b: &mut FunctionBuilder, base: Value, i: Value, t: PrimType) -> Value {
    let shift = t.size_bytes().trailing_zeros() as i64;
    let off = if shift == 0 {
        i
    } else {
        b.ins().ishl_imm_u(i, shift)
    };
    b.ins().iadd(base, off)
}

/// Loads `n` pointers from the pointer array at `arr`, from index `first` on.
pub(crate) fn load_ptrs(b: &mut FunctionBuilder, arr: Value, first: usize, n: usize) -> Vec<Value> {
    (first..first + n)
        .map(|k| b.ins().load(types::I64, mem(), arr, (8 * k) as i32))
        .collect()
}

pub(crate) fn prim_of(t: &Type) -> PrimType {
    t.elem().unwrap_or(PrimType::Bool)
}

/// An accumulator in native code: the address of its array's first element (dense), its
/// element type and dimensions, and its operator (`None`: updates overwrite).
#[derive(Clone)]
pub(crate) struct AccV {
    pub base: Value,
    pub elem: PrimType,
    pub dims: Vec<Value>,
    pub op: Option<Lambda>,
}

/// Emits the code of lambda bodies into a function under construction.
pub(crate) struct Gen<'a, 'b> {
    pub(crate) b: &'a mut FunctionBuilder<'b>,
    /// The value and type of every variable in scope.
    pub(crate) env: HashMap<VName, (Value, PrimType)>,
    /// The arrays in scope (rows of the inputs, free arrays, views of them).
    pub(crate) arrays: HashMap<VName, crate::nest::ArrV>,
    /// Block (taking an i32 code) that returns a failure.
    pub(crate) fail: Block,
    pub(crate) rt: &'a Rt,
    /// Scratch word for the results of fallible shims.
    pub(crate) slot: StackSlot,
    /// The [`crate::shims::Scratch`] of the call (map kernels only).
    pub(crate) arena: Option<Value>,
    /// Scratch buffers handed out so far (one per intermediate array statement).
    pub(crate) n_scratch: usize,
    /// Output rows where the arrays of these names (the lambda's results) are built.
    pub(crate) dests: HashMap<VName, crate::nest::ArrV>,
    /// The names of `dests` built in place.
    pub(crate) written: HashSet<VName>,
    /// The accumulators in scope (free ones, and the names updates bind).
    pub(crate) accs: HashMap<VName, AccV>,
    /// The arrays in scope that this code made and no other name refers to, which may be
    /// updated in place (see `inplace.rs`).
    pub(crate) owned: HashSet<VName>,
    /// The variables read after the statement being generated (in its body and the bodies
    /// around it): an array among them is never consumed in place.
    pub(crate) later: HashSet<VName>,
    /// The arrays in scope that are `iota n` (element `j` is `j`).
    pub(crate) iotas: HashSet<VName>,
    /// `iota n`s not stored (with `n`): read only as inputs of maps and reductions, whose
    /// loops use their counter instead (see [`Gen::stms`]).
    pub(crate) lazy_iotas: HashMap<VName, Value>,
    /// The `iota`s that may stay lazy: every later use is an input of a map, reduce or scan.
    pub(crate) soac_only: HashSet<VName>,
    /// Whether a column reduction's steps were generated in SIMD lanes (`columns.rs`).
    pub(crate) column_lanes: bool,
    /// Sums over at most `simd::rows::ROW_LANES_MAX` elements fold in order, not in lanes
    /// along the row: the scalar code of a map whose other rows run a row per lane, which
    /// fold in order (so a row's sum does not depend on where the row falls).
    pub(crate) in_order_short_sums: bool,
}

impl<'a, 'b> Gen<'a, 'b> {
    pub(crate) fn new(
        b: &'a mut FunctionBuilder<'b>,
        env: HashMap<VName, (Value, PrimType)>,
        fail: Block,
        rt: &'a Rt,
        slot: StackSlot,
        arena: Option<Value>,
    ) -> Gen<'a, 'b> {
        Gen {
            b,
            env,
            arrays: HashMap::new(),
            fail,
            rt,
            slot,
            arena,
            n_scratch: 0,
            dests: HashMap::new(),
            written: HashSet::new(),
            accs: HashMap::new(),
            owned: HashSet::new(),
            later: HashSet::new(),
            iotas: HashSet::new(),
            lazy_iotas: HashMap::new(),
            soac_only: HashSet::new(),
            column_lanes: false,
            in_order_short_sums: false,
        }
    }
}

impl Gen<'_, '_> {
    pub(crate) fn lambda(&mut self, lam: &Lambda, args: &[Value]) -> R<Vec<Value>> {
        for (p, &a) in lam.params.iter().zip(args) {
            self.env.insert(p.name, (a, prim_of(&p.ty)));
        }
        self.body(&lam.body)
    }

    /// The statements of a body, each knowing what is read after it.
    pub(crate) fn stms(&mut self, body: &Body) -> R<()> {
        let outer = self.later.clone();
        let mut after: Vec<HashSet<VName>> = Vec::with_capacity(body.stms.len());
        let mut acc = runic_ir::traverse::uses(&body.result);
        for s in body.stms.iter().rev() {
            after.push(acc.clone());
            acc.extend(runic_ir::traverse::uses(s));
        }
        after.reverse();
        for (k, s) in body.stms.iter().enumerate() {
            if let (Some(_), [p]) = (runic_ir::traverse::iota_width(&s.exp), &s.pat[..]) {
                if only_soac_input(p.name, &body.stms[k + 1..], &body.result) {
                    self.soac_only.insert(p.name);
                }
            }
        }
        for (s, later) in body.stms.iter().zip(after) {
            self.later = outer.union(&later).copied().collect();
            self.stm(s)?;
        }
        self.later = outer;
        Ok(())
    }

    /// Whether the array `a` may be consumed in place here: this code owns it, and nothing
    /// reads it afterwards.
    pub(crate) fn consume(&mut self, a: VName) -> bool {
        !self.later.contains(&a) && self.owned.remove(&a)
    }

    pub(crate) fn body(&mut self, body: &Body) -> R<Vec<Value>> {
        self.stms(body)?;
        body.result
            .iter()
            .map(|r| self.opd(r).map(|(v, _)| v))
            .collect()
    }

    fn konst(&mut self, p: Prim) -> Value {
        let t = p.ty();
        match p {
            Prim::F32(x) => self.b.ins().f32const(Ieee32::with_bits(x.to_bits())),
            Prim::F64(x) => self.b.ins().f64const(Ieee64::with_bits(x.to_bits())),
            _ => {
                let raw = shims::to_raw(p) as i64;
                self.b.ins().iconst(cl(t), raw)
            }
        }
    }

    pub(crate) fn opd(&mut self, s: &SubExp) -> R<(Value, PrimType)> {
        match s {
            SubExp::Const(p) => Ok((self.konst(*p), p.ty())),
            SubExp::Var(v) => self
                .env
                .get(v)
                .copied()
                .ok_or_else(|| format!("internal error: {v} is not in scope")),
        }
    }

    pub(crate) fn stm(&mut self, s: &Stm) -> R<()> {
        if let Exp::If {
            cond,
            then_body,
            else_body,
            ..
        } = &s.exp
        {
            return self.if_(s, cond, then_body, else_body);
        }
        match &s.exp {
            Exp::Basic(BasicOp::Index(v, idx)) => return self.index(s, *v, idx),
            Exp::Basic(op @ (BasicOp::Assert { .. } | BasicOp::ShapeCheck { .. })) => {
                return self.assertion(s, op)
            }
            Exp::Soac(Soac::Reduce {
                w,
                arrs,
                pre,
                lam,
                neutral,
                ..
            }) => return self.inner_reduce(s, w, arrs, pre.as_ref(), lam, neutral),
            Exp::Soac(Soac::Scan {
                w,
                arrs,
                pre,
                lam,
                neutral,
            }) => return self.inner_scan(s, w, arrs, pre.as_ref(), lam, neutral),
            Exp::Soac(Soac::Map { w, lam, arrs }) => return self.inner_map(s, w, lam, arrs),
            Exp::Soac(Soac::Hist {
                w,
                dests,
                lam,
                is,
                vals,
                ..
            }) => return self.inner_hist(s, w, dests, Some(lam), is, vals),
            Exp::Soac(Soac::Scatter { w, dests, is, vals }) => {
                return self.inner_hist(s, w, dests, None, is, vals)
            }
            Exp::Basic(BasicOp::ArrayLit(rows, Type::Array { .. })) => {
                return self.array_of_rows(s, rows)
            }
            Exp::Basic(
                op @ (BasicOp::Range { .. } | BasicOp::Replicate(..) | BasicOp::ArrayLit(..)),
            ) => return self.fill_array(s, op),
            // Nothing in a kernel updates an array in place, so a copy can be the same view.
            Exp::Basic(BasicOp::Copy(a) | BasicOp::SubExp(SubExp::Var(a)))
                if self.arrays.contains_key(a) =>
            {
                let v = self.array(*a)?;
                for p in &s.pat {
                    self.arrays.insert(p.name, v.clone());
                }
                // Two names for one buffer: neither may be consumed in place.
                self.owned.remove(a);
                return Ok(());
            }
            Exp::Loop { params, form, body } => return self.native_loop(s, params, form, body),
            Exp::WithAcc { inputs, lam } => return self.with_acc(s, inputs, lam),
            Exp::Basic(BasicOp::UpdateAcc { acc, is, vals }) => {
                return self.update_acc(s, *acc, is, vals)
            }
            Exp::Basic(BasicOp::Update(a, idx, v)) => return self.update(s, *a, idx, v),
            Exp::Basic(BasicOp::Rearrange(perm, a)) => return self.rearrange(s, perm, *a),
            Exp::Basic(BasicOp::Reshape { arr, shape }) => return self.reshape(s, shape, *arr),
            Exp::Basic(BasicOp::Concat(dim, pieces)) => return self.concat(s, *dim, pieces),

            Exp::Basic(BasicOp::Scratch(t, shape)) => return self.scratch_array(s, *t, shape),
            Exp::Basic(BasicOp::ArraySize(a, d)) if self.arrays.contains_key(a) => {
                return self.array_size(s, *a, *d)
            }
            _ => {}
        }
        let [p] = s.pat.as_slice() else {
            return Err("a scalar operation with several results".into());
        };
        let rt = prim_of(&p.ty);
        let Exp::Basic(op) = &s.exp else {
            return Err("unsupported statement".into());
        };
        let v = match op {
            BasicOp::SubExp(a) => self.opd(a)?.0,
            BasicOp::BinOp(o, a, b) => {
                let a = self.opd(a)?;
                let b = self.opd(b)?;
                self.binop(*o, a, b, rt)
            }
            BasicOp::UnOp(o, a) => {
                let a = self.opd(a)?;
                self.unop(*o, a, rt)
            }
            BasicOp::Convert(to, a) => {
                let a = self.opd(a)?;
                self.convert(a, *to)
            }
            BasicOp::TernOp(o, a, b, c) => {
                let args = [self.opd(a)?, self.opd(b)?, self.opd(c)?];
                self.ternop_shim(*o, args, rt)
            }
            _ => return Err("unsupported statement".into()),
        };
        self.env.insert(p.name, (v, rt));
        Ok(())
    }
}

/// Whether `v` is read by `stms` and `result` only as an input array of maps, reduces and
/// scans (at any depth), whose loops can bind the element of an `iota` to their counter.
fn only_soac_input(v: VName, stms: &[Stm], result: &[SubExp]) -> bool {
    let body_ok = |b: &Body| only_soac_input(v, &b.stms, &b.result);
    let lam_ok = |l: &Lambda| body_ok(&l.body);
    !result.contains(&SubExp::Var(v))
        && stms.iter().all(|s| match &s.exp {
            Exp::Soac(Soac::Map { w, lam, .. }) => *w != SubExp::Var(v) && lam_ok(lam),
            Exp::Soac(
                Soac::Reduce {
                    w,
                    pre,
                    lam,
                    neutral,
                    ..
                }
                | Soac::Scan {
                    w,
                    pre,
                    lam,
                    neutral,
                    ..
                },
            ) => {
                *w != SubExp::Var(v)
                    && !neutral.contains(&SubExp::Var(v))
                    && pre.as_ref().is_none_or(lam_ok)
                    && lam_ok(lam)
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ..
            } => *cond != SubExp::Var(v) && body_ok(then_body) && body_ok(else_body),
            _ => !runic_ir::traverse::uses(s).contains(&v),
        })
}

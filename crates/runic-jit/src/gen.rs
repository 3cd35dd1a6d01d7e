//! Translation of scalar lambdas to Cranelift IR, and the element loops around them.

use crate::shims::{self, binop_index, ternop_index, type_index, unop_index};
use crate::{Code, FoldFn, FoldKernel, MapFn, MapKernel};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
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
use std::collections::HashMap;

type R<T> = Result<T, String>;

/// The Cranelift type that holds a value of `t`.
fn cl(t: PrimType) -> CType {
    match t {
        PrimType::I8 | PrimType::U8 | PrimType::Bool => types::I8,
        PrimType::I16 | PrimType::U16 | PrimType::F16 => types::I16,
        PrimType::I32 | PrimType::U32 => types::I32,
        PrimType::I64 | PrimType::U64 => types::I64,
        PrimType::F32 => types::F32,
        PrimType::F64 => types::F64,
    }
}

fn mem() -> MemFlagsData {
    MemFlagsData::trusted()
}

fn ba(vs: &[Value]) -> Vec<BlockArg> {
    vs.iter().map(|&v| BlockArg::Value(v)).collect()
}

/// Checks that a lambda has only constructs this slice compiles, and names the first that
/// it does not.
fn check_lambda(lam: &Lambda, what: &str) -> R<()> {
    for p in &lam.params {
        if !matches!(p.ty, Type::Prim(_)) {
            return Err(format!("{what} has a non-scalar parameter"));
        }
    }
    for t in &lam.ret {
        if !matches!(t, Type::Prim(_)) {
            return Err(format!("{what} has a non-scalar result"));
        }
    }
    check_body(&lam.body, what)
}

fn check_body(b: &Body, what: &str) -> R<()> {
    for s in &b.stms {
        if s.pat.iter().any(|p| !matches!(p.ty, Type::Prim(_))) {
            return Err(format!("{what} binds a non-scalar value"));
        }
        match &s.exp {
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
                check_body(then_body, what)?;
                check_body(else_body, what)?;
            }
            Exp::Loop { .. } => return Err(format!("{what} contains a loop")),
            Exp::Soac(_) => return Err(format!("{what} contains a nested SOAC")),
            Exp::Apply { .. } => return Err(format!("{what} contains a function call")),
            _ => return Err(format!("{what} contains an accumulator or AD construct")),
        }
    }
    Ok(())
}

/// The free variables of `lams`, sorted, with their types.
fn frees_of(
    lams: &[&Lambda],
    free_type: &dyn Fn(VName) -> Option<PrimType>,
) -> R<Vec<(VName, PrimType)>> {
    let mut vs: Vec<VName> = Vec::new();
    for l in lams {
        for v in runic_ir::traverse::free_vars(*l) {
            if !vs.contains(&v) {
                vs.push(v);
            }
        }
    }
    vs.sort();
    vs.into_iter()
        .map(|v| match free_type(v) {
            Some(t) => Ok((v, t)),
            None => Err(format!("the free variable {v} is not a scalar")),
        })
        .collect()
}

/// The shims native code calls, declared in one function.
struct Rt {
    binop: FuncRef,
    unop: FuncRef,
    convert: FuncRef,
    ternop: FuncRef,
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
    })
}

/// Compile one function `kernel` with signature `sig`, whose body `build` emits, and return
/// its address with the module that owns it.
fn build_kernel(
    params: &[CType],
    build: impl FnOnce(&mut FunctionBuilder, &Rt, StackSlot) -> R<()>,
) -> R<(*const u8, Code)> {
    let mut module = new_module()?;
    let mut ctx = module.make_context();
    let mut sig: Signature = module.make_signature();
    sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
    sig.returns.push(AbiParam::new(types::I32));
    let id = module
        .declare_function("kernel", Linkage::Export, &sig)
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
    module
        .define_function(id, &mut ctx)
        .map_err(|e| format!("cranelift: {e:?}"))?;
    module.clear_context(&mut ctx);
    module
        .finalize_definitions()
        .map_err(|e| format!("cranelift: {e}"))?;
    let ptr = module.get_finalized_function(id);
    Ok((ptr, Code(Some(module))))
}

/// Address of element `i` of the column at `base`.
fn elem_addr(b: &mut FunctionBuilder, base: Value, i: Value, t: PrimType) -> Value {
    let shift = t.size_bytes().trailing_zeros() as i64;
    let off = if shift == 0 {
        i
    } else {
        b.ins().ishl_imm_u(i, shift)
    };
    b.ins().iadd(base, off)
}

/// Loads `n` pointers from the pointer array at `arr`, from index `first` on.
fn load_ptrs(b: &mut FunctionBuilder, arr: Value, first: usize, n: usize) -> Vec<Value> {
    (first..first + n)
        .map(|k| b.ins().load(types::I64, mem(), arr, (8 * k) as i32))
        .collect()
}

pub fn compile_map(lam: &Lambda, free_type: &dyn Fn(VName) -> Option<PrimType>) -> R<MapKernel> {
    check_lambda(lam, "the map's lambda")?;
    let frees = frees_of(&[lam], free_type)?;
    let params: Vec<PrimType> = lam.params.iter().map(|p| prim_of(&p.ty)).collect();
    let results: Vec<PrimType> = lam.ret.iter().map(prim_of).collect();
    let i64t = types::I64;
    let (ptr, code) = build_kernel(&[i64t; 4], |b, rt, slot| {
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        let header = b.create_block();
        b.append_block_param(header, i64t);
        let body = b.create_block();
        let done = b.create_block();
        let fail = b.create_block();
        b.append_block_param(fail, types::I32);

        b.switch_to_block(entry);
        let [start, end, ins, outs] = b.block_params(entry)[..] else {
            return Err("internal error: kernel parameters".into());
        };
        let bases = load_ptrs(b, ins, 0, params.len());
        let free_ptrs = load_ptrs(b, ins, params.len(), frees.len());
        let out_bases = load_ptrs(b, outs, 0, results.len());
        let mut env = HashMap::new();
        for ((v, t), p) in frees.iter().zip(free_ptrs) {
            let x = b.ins().load(cl(*t), mem(), p, 0);
            env.insert(*v, (x, *t));
        }
        b.ins().jump(header, &ba(&[start]));

        b.switch_to_block(header);
        let i = b.block_params(header)[0];
        let more = b.ins().icmp(IntCC::SignedLessThan, i, end);
        b.ins().brif(more, body, &[], done, &[]);

        b.switch_to_block(body);
        let mut args = Vec::new();
        for (base, t) in bases.iter().zip(&params) {
            let a = elem_addr(b, *base, i, *t);
            args.push(b.ins().load(cl(*t), mem(), a, 0));
        }
        let mut g = Gen {
            b,
            env,
            fail,
            rt,
            slot,
        };
        let res = g.lambda(lam, &args)?;
        let b = g.b;
        for ((base, t), v) in out_bases.iter().zip(&results).zip(res) {
            let a = elem_addr(b, *base, i, *t);
            b.ins().store(mem(), v, a, 0);
        }
        let next = b.ins().iadd_imm_s(i, 1);
        b.ins().jump(header, &ba(&[next]));

        b.switch_to_block(done);
        let zero = b.ins().iconst(types::I32, 0);
        b.ins().return_(&[zero]);
        b.switch_to_block(fail);
        let code = b.block_params(fail)[0];
        b.ins().return_(&[code]);
        Ok(())
    })?;
    // SAFETY: the function was compiled with exactly this signature (four i64-sized
    // arguments, an i32 result, the platform's C calling convention).
    let f: MapFn = unsafe { std::mem::transmute::<*const u8, MapFn>(ptr) };
    Ok(MapKernel {
        f,
        params,
        results,
        frees,
        _code: code,
    })
}

pub fn compile_fold(
    pre: Option<&Lambda>,
    op: &Lambda,
    free_type: &dyn Fn(VName) -> Option<PrimType>,
) -> R<FoldKernel> {
    if let Some(p) = pre {
        check_lambda(p, "the reduction's map lambda")?;
    }
    check_lambda(op, "the reduction operator")?;
    let k = op.ret.len();
    if op.params.len() != 2 * k {
        return Err("the reduction operator's arity does not match its results".into());
    }
    let accs: Vec<PrimType> = op.ret.iter().map(prim_of).collect();
    for (p, t) in op.params.iter().zip(accs.iter().chain(&accs)) {
        if prim_of(&p.ty) != *t {
            return Err("the reduction operator's parameter types differ from its results".into());
        }
    }
    let elems: Vec<PrimType> = match pre {
        Some(p) => {
            if p.ret.iter().map(prim_of).ne(accs.iter().copied()) {
                return Err("the reduction's map lambda does not produce operands".into());
            }
            p.params.iter().map(|q| prim_of(&q.ty)).collect()
        }
        None => accs.clone(),
    };
    let mut lams = vec![op];
    lams.extend(pre);
    let frees = frees_of(&lams, free_type)?;
    let i64t = types::I64;
    let (ptr, code) = build_kernel(&[i64t; 4], |b, rt, slot| {
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        let header = b.create_block();
        b.append_block_param(header, i64t);
        for t in &accs {
            b.append_block_param(header, cl(*t));
        }
        let body = b.create_block();
        let done = b.create_block();
        for t in &accs {
            b.append_block_param(done, cl(*t));
        }
        let fail = b.create_block();
        b.append_block_param(fail, types::I32);

        b.switch_to_block(entry);
        let [start, end, ins, acc_ptr] = b.block_params(entry)[..] else {
            return Err("internal error: kernel parameters".into());
        };
        let bases = load_ptrs(b, ins, 0, elems.len());
        let free_ptrs = load_ptrs(b, ins, elems.len(), frees.len());
        let mut env = HashMap::new();
        for ((v, t), p) in frees.iter().zip(free_ptrs) {
            let x = b.ins().load(cl(*t), mem(), p, 0);
            env.insert(*v, (x, *t));
        }
        let mut init = vec![start];
        for (j, t) in accs.iter().enumerate() {
            init.push(b.ins().load(cl(*t), mem(), acc_ptr, (8 * j) as i32));
        }
        b.ins().jump(header, &ba(&init));

        b.switch_to_block(header);
        let hp = b.block_params(header).to_vec();
        let (i, acc) = (hp[0], hp[1..].to_vec());
        let more = b.ins().icmp(IntCC::SignedLessThan, i, end);
        b.ins().brif(more, body, &[], done, &ba(&acc));

        b.switch_to_block(body);
        let mut xs = Vec::new();
        for (base, t) in bases.iter().zip(&elems) {
            let a = elem_addr(b, *base, i, *t);
            xs.push(b.ins().load(cl(*t), mem(), a, 0));
        }
        let mut g = Gen {
            b,
            env,
            fail,
            rt,
            slot,
        };
        let ys = match pre {
            Some(p) => g.lambda(p, &xs)?,
            None => xs,
        };
        let mut args = acc;
        args.extend(ys);
        let new = g.lambda(op, &args)?;
        let b = g.b;
        let next = b.ins().iadd_imm_s(i, 1);
        let mut hargs = vec![next];
        hargs.extend(new);
        b.ins().jump(header, &ba(&hargs));

        b.switch_to_block(done);
        let fin = b.block_params(done).to_vec();
        for (j, v) in fin.into_iter().enumerate() {
            b.ins().store(mem(), v, acc_ptr, (8 * j) as i32);
        }
        let zero = b.ins().iconst(types::I32, 0);
        b.ins().return_(&[zero]);
        b.switch_to_block(fail);
        let code = b.block_params(fail)[0];
        b.ins().return_(&[code]);
        Ok(())
    })?;
    // SAFETY: compiled with exactly this signature (see `compile_map`).
    let f: FoldFn = unsafe { std::mem::transmute::<*const u8, FoldFn>(ptr) };
    Ok(FoldKernel {
        f,
        elems,
        accs,
        frees,
        _code: code,
    })
}

fn prim_of(t: &Type) -> PrimType {
    t.elem().unwrap_or(PrimType::Bool)
}

/// Emits the code of lambda bodies into a function under construction.
struct Gen<'a, 'b> {
    b: &'a mut FunctionBuilder<'b>,
    /// The value and type of every variable in scope.
    env: HashMap<VName, (Value, PrimType)>,
    /// Block (taking an i32 code) that returns a failure.
    fail: Block,
    rt: &'a Rt,
    /// Scratch word for the results of fallible shims.
    slot: StackSlot,
}

impl Gen<'_, '_> {
    fn lambda(&mut self, lam: &Lambda, args: &[Value]) -> R<Vec<Value>> {
        for (p, &a) in lam.params.iter().zip(args) {
            self.env.insert(p.name, (a, prim_of(&p.ty)));
        }
        self.body(&lam.body)
    }

    fn body(&mut self, body: &Body) -> R<Vec<Value>> {
        for s in &body.stms {
            self.stm(s)?;
        }
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

    fn opd(&mut self, s: &SubExp) -> R<(Value, PrimType)> {
        match s {
            SubExp::Const(p) => Ok((self.konst(*p), p.ty())),
            SubExp::Var(v) => self
                .env
                .get(v)
                .copied()
                .ok_or_else(|| format!("internal error: {v} is not in scope")),
        }
    }

    fn stm(&mut self, s: &Stm) -> R<()> {
        if let Exp::If {
            cond,
            then_body,
            else_body,
            ..
        } = &s.exp
        {
            let (c, _) = self.opd(cond)?;
            let tys: Vec<PrimType> = s.pat.iter().map(|p| prim_of(&p.ty)).collect();
            let vals = if then_body.stms.is_empty() && else_body.stms.is_empty() {
                // Branches that only select operands: a select, no control flow.
                let mut out = Vec::new();
                for (a, e) in then_body.result.iter().zip(&else_body.result) {
                    let (a, _) = self.opd(a)?;
                    let (e, _) = self.opd(e)?;
                    out.push(self.b.ins().select(c, a, e));
                }
                out
            } else {
                let (tb, eb, merge) = (
                    self.b.create_block(),
                    self.b.create_block(),
                    self.b.create_block(),
                );
                for t in &tys {
                    self.b.append_block_param(merge, cl(*t));
                }
                self.b.ins().brif(c, tb, &[], eb, &[]);
                for (blk, body) in [(tb, then_body), (eb, else_body)] {
                    self.b.switch_to_block(blk);
                    let saved = self.env.clone();
                    let r = self.body(body)?;
                    self.env = saved;
                    self.b.ins().jump(merge, &ba(&r));
                }
                self.b.switch_to_block(merge);
                self.b.block_params(merge).to_vec()
            };
            for ((p, v), t) in s.pat.iter().zip(vals).zip(tys) {
                self.env.insert(p.name, (v, t));
            }
            return Ok(());
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

    // ---- raw words and shims ----

    fn raw_word(&mut self, v: Value, t: PrimType) -> Value {
        let b = &mut self.b;
        match t {
            PrimType::F32 => {
                let i = b.ins().bitcast(types::I32, MemFlagsData::new(), v);
                b.ins().uextend(types::I64, i)
            }
            PrimType::F64 => b.ins().bitcast(types::I64, MemFlagsData::new(), v),
            _ if cl(t) == types::I64 => v,
            _ => b.ins().uextend(types::I64, v),
        }
    }

    fn value_of_word(&mut self, r: Value, t: PrimType) -> Value {
        let b = &mut self.b;
        match t {
            PrimType::F32 => {
                let i = b.ins().ireduce(types::I32, r);
                b.ins().bitcast(types::F32, MemFlagsData::new(), i)
            }
            PrimType::F64 => b.ins().bitcast(types::F64, MemFlagsData::new(), r),
            _ if cl(t) == types::I64 => r,
            _ => b.ins().ireduce(cl(t), r),
        }
    }

    fn iconst64(&mut self, x: i64) -> Value {
        self.b.ins().iconst(types::I64, x)
    }

    /// Branch to the failure block with `code` unless it is 0.
    fn check(&mut self, code: Value) {
        let cont = self.b.create_block();
        self.b.ins().brif(code, self.fail, &ba(&[code]), cont, &[]);
        self.b.switch_to_block(cont);
    }

    fn binop_shim(
        &mut self,
        op: BinOp,
        a: (Value, PrimType),
        b: (Value, PrimType),
        rt: PrimType,
    ) -> Value {
        let args = [
            self.iconst64(binop_index(op)),
            self.iconst64(type_index(a.1)),
            self.raw_word(a.0, a.1),
            self.iconst64(type_index(b.1)),
            self.raw_word(b.0, b.1),
            self.b.ins().stack_addr(types::I64, self.slot, 0),
        ];
        let call = self.b.ins().call(self.rt.binop, &args);
        let code = self.b.inst_results(call)[0];
        self.check(code);
        let r = self
            .b
            .ins()
            .stack_load(types::I64, types::I64, self.slot, 0);
        self.value_of_word(r, rt)
    }

    fn unop_shim(&mut self, op: UnOp, a: (Value, PrimType), rt: PrimType) -> Value {
        let args = [
            self.iconst64(unop_index(op)),
            self.iconst64(type_index(a.1)),
            self.raw_word(a.0, a.1),
        ];
        let call = self.b.ins().call(self.rt.unop, &args);
        let r = self.b.inst_results(call)[0];
        self.value_of_word(r, rt)
    }

    fn convert_shim(&mut self, a: (Value, PrimType), to: PrimType) -> Value {
        let args = [
            self.iconst64(type_index(a.1)),
            self.iconst64(type_index(to)),
            self.raw_word(a.0, a.1),
        ];
        let call = self.b.ins().call(self.rt.convert, &args);
        let r = self.b.inst_results(call)[0];
        self.value_of_word(r, to)
    }

    fn ternop_shim(&mut self, op: TernOp, xs: [(Value, PrimType); 3], rt: PrimType) -> Value {
        let mut args = vec![self.iconst64(ternop_index(op))];
        for (v, t) in xs {
            args.push(self.iconst64(type_index(t)));
            args.push(self.raw_word(v, t));
        }
        args.push(self.b.ins().stack_addr(types::I64, self.slot, 0));
        let call = self.b.ins().call(self.rt.ternop, &args);
        let code = self.b.inst_results(call)[0];
        self.check(code);
        let r = self
            .b
            .ins()
            .stack_load(types::I64, types::I64, self.slot, 0);
        self.value_of_word(r, rt)
    }

    // ---- binary operations ----

    fn binop(
        &mut self,
        op: BinOp,
        a: (Value, PrimType),
        b: (Value, PrimType),
        rt: PrimType,
    ) -> Value {
        let t = a.1;
        let native = if t != b.1 || op == BinOp::GetBit {
            None
        } else if t == PrimType::Bool {
            self.bool_binop(op, a.0, b.0)
        } else if t.is_int() {
            self.int_binop(op, t, a.0, b.0)
        } else if t == PrimType::F32 || t == PrimType::F64 {
            self.float_binop(op, t, a.0, b.0)
        } else {
            None
        };
        match native {
            Some(v) => v,
            None => self.binop_shim(op, a, b, rt),
        }
    }

    fn bool_binop(&mut self, op: BinOp, x: Value, y: Value) -> Option<Value> {
        let b = &mut self.b;
        Some(match op {
            BinOp::LogAnd | BinOp::And | BinOp::Min | BinOp::Mul => b.ins().band(x, y),
            BinOp::LogOr | BinOp::Or | BinOp::Max | BinOp::Add => b.ins().bor(x, y),
            BinOp::Xor | BinOp::Sub => b.ins().bxor(x, y),
            BinOp::Eq => b.ins().icmp(IntCC::Equal, x, y),
            BinOp::Neq => b.ins().icmp(IntCC::NotEqual, x, y),
            BinOp::Lt => b.ins().icmp(IntCC::UnsignedLessThan, x, y),
            BinOp::Le => b.ins().icmp(IntCC::UnsignedLessThanOrEqual, x, y),
            BinOp::Gt => b.ins().icmp(IntCC::UnsignedGreaterThan, x, y),
            BinOp::Ge => b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, x, y),
            _ => return None,
        })
    }

    fn int_binop(&mut self, op: BinOp, t: PrimType, x: Value, y: Value) -> Option<Value> {
        let s = t.is_signed_int();
        let ct = cl(t);
        let bits = t.bits() as i64;
        let cc = |signed: IntCC, unsigned: IntCC| if s { signed } else { unsigned };
        Some(match op {
            BinOp::Add => self.b.ins().iadd(x, y),
            BinOp::Sub => self.b.ins().isub(x, y),
            BinOp::Mul => self.b.ins().imul(x, y),
            BinOp::And => self.b.ins().band(x, y),
            BinOp::Or => self.b.ins().bor(x, y),
            BinOp::Xor => self.b.ins().bxor(x, y),
            BinOp::Eq => self.b.ins().icmp(IntCC::Equal, x, y),
            BinOp::Neq => self.b.ins().icmp(IntCC::NotEqual, x, y),
            BinOp::Lt => {
                let c = cc(IntCC::SignedLessThan, IntCC::UnsignedLessThan);
                self.b.ins().icmp(c, x, y)
            }
            BinOp::Le => {
                let c = cc(IntCC::SignedLessThanOrEqual, IntCC::UnsignedLessThanOrEqual);
                self.b.ins().icmp(c, x, y)
            }
            BinOp::Gt => {
                let c = cc(IntCC::SignedGreaterThan, IntCC::UnsignedGreaterThan);
                self.b.ins().icmp(c, x, y)
            }
            BinOp::Ge => {
                let c = cc(
                    IntCC::SignedGreaterThanOrEqual,
                    IntCC::UnsignedGreaterThanOrEqual,
                );
                self.b.ins().icmp(c, x, y)
            }
            BinOp::Max if s => self.b.ins().smax(x, y),
            BinOp::Max => self.b.ins().umax(x, y),
            BinOp::Min if s => self.b.ins().smin(x, y),
            BinOp::Min => self.b.ins().umin(x, y),
            BinOp::Div | BinOp::Mod | BinOp::Quot | BinOp::Rem => {
                let zero = self.b.ins().icmp_imm_s(IntCC::Equal, y, 0);
                let code = self.b.ins().iconst(types::I32, shims::FAIL_DIV_ZERO as i64);
                let nil = self.b.ins().iconst(types::I32, 0);
                let code = self.b.ins().select(zero, code, nil);
                self.check(code);
                if !s {
                    return Some(match op {
                        BinOp::Div | BinOp::Quot => self.b.ins().udiv(x, y),
                        _ => self.b.ins().urem(x, y),
                    });
                }
                let b = &mut self.b;
                // x / -1 overflows for the smallest x: divide by 1 and negate instead.
                let m1 = b.ins().icmp_imm_s(IntCC::Equal, y, -1);
                let one = b.ins().iconst(ct, 1);
                let z = b.ins().iconst(ct, 0);
                let ys = b.ins().select(m1, one, y);
                let q0 = b.ins().sdiv(x, ys);
                let nx = b.ins().ineg(x);
                let q = b.ins().select(m1, nx, q0);
                let r0 = b.ins().srem(x, ys);
                let r = b.ins().select(m1, z, r0);
                match op {
                    BinOp::Quot => q,
                    BinOp::Rem => r,
                    _ => {
                        // Floor: adjust when the remainder is nonzero and its sign differs
                        // from the divisor's.
                        let nz = b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
                        let xor = b.ins().bxor(r, y);
                        let neg = b.ins().icmp_imm_s(IntCC::SignedLessThan, xor, 0);
                        let adj = b.ins().band(nz, neg);
                        if op == BinOp::Div {
                            let adj = if ct == types::I8 {
                                adj
                            } else {
                                b.ins().uextend(ct, adj)
                            };
                            b.ins().isub(q, adj)
                        } else {
                            let ry = b.ins().iadd(r, y);
                            b.ins().select(adj, ry, r)
                        }
                    }
                }
            }
            BinOp::Shl => {
                let b = &mut self.b;
                let big = b
                    .ins()
                    .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, y, bits);
                let sh = b.ins().ishl(x, y);
                let z = b.ins().iconst(ct, 0);
                b.ins().select(big, z, sh)
            }
            BinOp::Shr if s => {
                let b = &mut self.b;
                let max = b.ins().iconst(ct, bits - 1);
                let amt = b.ins().umin(y, max);
                b.ins().sshr(x, amt)
            }
            BinOp::Shr | BinOp::Lshr => {
                let b = &mut self.b;
                let big = b
                    .ins()
                    .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, y, bits);
                let sh = b.ins().ushr(x, y);
                let z = b.ins().iconst(ct, 0);
                b.ins().select(big, z, sh)
            }
            BinOp::MulHi => {
                let b = &mut self.b;
                if bits == 64 {
                    if s {
                        b.ins().smulhi(x, y)
                    } else {
                        b.ins().umulhi(x, y)
                    }
                } else {
                    let (wx, wy) = if s {
                        (
                            b.ins().sextend(types::I64, x),
                            b.ins().sextend(types::I64, y),
                        )
                    } else {
                        (
                            b.ins().uextend(types::I64, x),
                            b.ins().uextend(types::I64, y),
                        )
                    };
                    let p = b.ins().imul(wx, wy);
                    let h = if s {
                        b.ins().sshr_imm_u(p, bits)
                    } else {
                        b.ins().ushr_imm_u(p, bits)
                    };
                    b.ins().ireduce(ct, h)
                }
            }
            _ => return None,
        })
    }

    fn promote(&mut self, t: PrimType, x: Value) -> Value {
        if t == PrimType::F32 {
            self.b.ins().fpromote(types::F64, x)
        } else {
            x
        }
    }

    fn demote(&mut self, t: PrimType, x: Value) -> Value {
        if t == PrimType::F32 {
            self.b.ins().fdemote(types::F32, x)
        } else {
            x
        }
    }

    fn float_binop(&mut self, op: BinOp, t: PrimType, x: Value, y: Value) -> Option<Value> {
        // `+ - * /` of two f32 rounded once equal runic_prim's f64 operation rounded to f32
        // (the double rounding is innocuous for these operations).
        Some(match op {
            BinOp::Add => self.b.ins().fadd(x, y),
            BinOp::Sub => self.b.ins().fsub(x, y),
            BinOp::Mul => self.b.ins().fmul(x, y),
            BinOp::Div => self.b.ins().fdiv(x, y),
            BinOp::Eq => self.b.ins().fcmp(FloatCC::Equal, x, y),
            BinOp::Neq => self.b.ins().fcmp(FloatCC::NotEqual, x, y),
            BinOp::Lt => self.b.ins().fcmp(FloatCC::LessThan, x, y),
            BinOp::Le => self.b.ins().fcmp(FloatCC::LessThanOrEqual, x, y),
            BinOp::Gt => self.b.ins().fcmp(FloatCC::GreaterThan, x, y),
            BinOp::Ge => self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, x, y),
            BinOp::CopySign => {
                let (px, py) = (self.promote(t, x), self.promote(t, y));
                let r = self.b.ins().fcopysign(px, py);
                self.demote(t, r)
            }
            BinOp::Min | BinOp::Max => return Some(self.float_min_max(op, t, x, y)),
            _ => return None,
        })
    }

    /// runic_prim's `min`/`max`: a NaN operand yields the other one; otherwise the smaller
    /// (larger) operand. Which zero `min(0, -0)` gives is whatever the Rust library gives
    /// (it differs between builds), so that one case calls runic_prim.
    fn float_min_max(&mut self, op: BinOp, t: PrimType, x: Value, y: Value) -> Value {
        let (px, py) = (self.promote(t, x), self.promote(t, y));
        let b = &mut self.b;
        let xn = b.ins().fcmp(FloatCC::Unordered, px, px);
        let yn = b.ins().fcmp(FloatCC::Unordered, py, py);
        let cc = if op == BinOp::Min {
            FloatCC::LessThan
        } else {
            FloatCC::GreaterThan
        };
        let pick_x = b.ins().fcmp(cc, px, py);
        let r = b.ins().select(pick_x, px, py);
        let r = b.ins().select(yn, px, r);
        let r = b.ins().select(xn, py, r);
        let fast = self.demote(t, r);
        let b = &mut self.b;
        let eq = b.ins().fcmp(FloatCC::Equal, px, py);
        let bx = b.ins().bitcast(types::I64, MemFlagsData::new(), px);
        let by = b.ins().bitcast(types::I64, MemFlagsData::new(), py);
        let differ = b.ins().icmp(IntCC::NotEqual, bx, by);
        let zeros = b.ins().band(eq, differ);
        let slow_b = b.create_block();
        let merge = b.create_block();
        b.append_block_param(merge, cl(t));
        b.ins().brif(zeros, slow_b, &[], merge, &ba(&[fast]));
        b.switch_to_block(slow_b);
        let slow = self.binop_shim(op, (x, t), (y, t), t);
        self.b.ins().jump(merge, &ba(&[slow]));
        self.b.switch_to_block(merge);
        self.b.block_params(merge)[0]
    }

    // ---- unary operations ----

    fn unop(&mut self, op: UnOp, a: (Value, PrimType), rt: PrimType) -> Value {
        let (x, t) = a;
        let native = if t == PrimType::Bool {
            Some(match op {
                UnOp::Not => self.b.ins().bxor_imm_s(x, 1),
                _ => x,
            })
        } else if t.is_int() {
            self.int_unop(op, t, x, rt)
        } else if t == PrimType::F32 || t == PrimType::F64 {
            self.float_unop(op, t, x)
        } else {
            None
        };
        match native {
            Some(v) => v,
            None => self.unop_shim(op, a, rt),
        }
    }

    fn int_unop(&mut self, op: UnOp, t: PrimType, x: Value, rt: PrimType) -> Option<Value> {
        let s = t.is_signed_int();
        let ct = cl(t);
        let b = &mut self.b;
        let to_i32 = |b: &mut FunctionBuilder, v: Value| match ct.bits().cmp(&32) {
            std::cmp::Ordering::Less => b.ins().uextend(types::I32, v),
            std::cmp::Ordering::Equal => v,
            std::cmp::Ordering::Greater => b.ins().ireduce(types::I32, v),
        };
        Some(match op {
            UnOp::Neg => b.ins().ineg(x),
            UnOp::Not => b.ins().bnot(x),
            UnOp::Abs if s => b.ins().iabs(x),
            UnOp::Abs => x,
            UnOp::Sgn => {
                let one = b.ins().iconst(ct, 1);
                let z = b.ins().iconst(ct, 0);
                if s {
                    let m1 = b.ins().iconst(ct, -1);
                    let pos = b.ins().icmp_imm_s(IntCC::SignedGreaterThan, x, 0);
                    let neg = b.ins().icmp_imm_s(IntCC::SignedLessThan, x, 0);
                    let r = b.ins().select(neg, m1, z);
                    b.ins().select(pos, one, r)
                } else {
                    let nz = b.ins().icmp_imm_s(IntCC::NotEqual, x, 0);
                    b.ins().select(nz, one, z)
                }
            }
            UnOp::Popc => {
                let v = b.ins().popcnt(x);
                to_i32(b, v)
            }
            UnOp::Clz => {
                let v = b.ins().clz(x);
                to_i32(b, v)
            }
            UnOp::Ctz => {
                let v = b.ins().ctz(x);
                to_i32(b, v)
            }
            UnOp::FromBits => match (t, rt) {
                (PrimType::U16, PrimType::F16) => x,
                (PrimType::U32, PrimType::F32) => {
                    b.ins().bitcast(types::F32, MemFlagsData::new(), x)
                }
                (PrimType::U64, PrimType::F64) => {
                    b.ins().bitcast(types::F64, MemFlagsData::new(), x)
                }
                _ => return None,
            },
            _ => return None,
        })
    }

    fn float_unop(&mut self, op: UnOp, t: PrimType, x: Value) -> Option<Value> {
        // Tests first: they produce no float.
        match op {
            UnOp::IsNan => return Some(self.b.ins().fcmp(FloatCC::Unordered, x, x)),
            UnOp::IsInf => {
                let b = &mut self.b;
                let a = b.ins().fabs(x);
                let inf = if t == PrimType::F32 {
                    b.ins().f32const(f32::INFINITY)
                } else {
                    b.ins().f64const(f64::INFINITY)
                };
                return Some(b.ins().fcmp(FloatCC::Equal, a, inf));
            }
            UnOp::ToBits => {
                let it = if t == PrimType::F32 {
                    types::I32
                } else {
                    types::I64
                };
                return Some(self.b.ins().bitcast(it, MemFlagsData::new(), x));
            }
            _ => {}
        }
        // runic_prim computes in f64 and rounds to the operand type: do the same.
        let px = self.promote(t, x);
        let b = &mut self.b;
        let r = match op {
            UnOp::Neg => b.ins().fneg(px),
            UnOp::Abs => b.ins().fabs(px),
            UnOp::Sqrt => b.ins().sqrt(px),
            UnOp::Recip => {
                let one = b.ins().f64const(1.0);
                b.ins().fdiv(one, px)
            }
            UnOp::Rsqrt => {
                let one = b.ins().f64const(1.0);
                let s = b.ins().sqrt(px);
                b.ins().fdiv(one, s)
            }
            UnOp::Ceil => b.ins().ceil(px),
            UnOp::Floor => b.ins().floor(px),
            UnOp::Trunc => b.ins().trunc(px),
            UnOp::Round => b.ins().nearest(px),
            UnOp::Sgn => {
                let nan = b.ins().fcmp(FloatCC::Unordered, px, px);
                let zero = b.ins().f64const(0.0);
                let is0 = b.ins().fcmp(FloatCC::Equal, px, zero);
                let one = b.ins().f64const(1.0);
                let sg = b.ins().fcopysign(one, px);
                let r = b.ins().select(is0, zero, sg);
                b.ins().select(nan, px, r)
            }
            _ => return None,
        };
        Some(self.demote(t, r))
    }

    // ---- conversions ----

    fn convert(&mut self, a: (Value, PrimType), to: PrimType) -> Value {
        let (x, from) = a;
        if from == to {
            return x;
        }
        if from == PrimType::F16 || to == PrimType::F16 {
            return self.convert_shim(a, to);
        }
        let b = &mut self.b;
        let ct = cl(to);
        if from == PrimType::Bool {
            if to.is_int() {
                return if ct == types::I8 {
                    x
                } else {
                    b.ins().uextend(ct, x)
                };
            }
            let w = b.ins().uextend(types::I32, x);
            return b.ins().fcvt_from_uint(ct, w);
        }
        if from.is_int() {
            if to == PrimType::Bool {
                return b.ins().icmp_imm_s(IntCC::NotEqual, x, 0);
            }
            let (fb, tb) = (from.bits(), to.bits());
            if to.is_int() {
                return match fb.cmp(&tb) {
                    std::cmp::Ordering::Greater => b.ins().ireduce(ct, x),
                    std::cmp::Ordering::Equal => x,
                    std::cmp::Ordering::Less => {
                        if from.is_signed_int() && to.is_signed_int() {
                            b.ins().sextend(ct, x)
                        } else {
                            b.ins().uextend(ct, x)
                        }
                    }
                };
            }
            // To a float: exactly, through f64 (as runic_prim does).
            let wide = if fb == 64 {
                x
            } else if from.is_signed_int() {
                b.ins().sextend(types::I64, x)
            } else {
                b.ins().uextend(types::I64, x)
            };
            let d = if from == PrimType::U64 {
                b.ins().fcvt_from_uint(types::F64, wide)
            } else {
                b.ins().fcvt_from_sint(types::F64, wide)
            };
            return self.demote(to, d);
        }
        // From f32 or f64.
        if to == PrimType::Bool {
            let z = if from == PrimType::F32 {
                b.ins().f32const(0.0)
            } else {
                b.ins().f64const(0.0)
            };
            return b.ins().fcmp(FloatCC::NotEqual, x, z);
        }
        if to.is_float() {
            return if to == PrimType::F64 {
                b.ins().fpromote(types::F64, x)
            } else {
                b.ins().fdemote(types::F32, x)
            };
        }
        // To an integer: truncate and wrap. Natively where the truncated value fits an i64;
        // runic_prim otherwise (huge values, infinities, NaN).
        let px = self.promote(from, x);
        let b = &mut self.b;
        let ax = b.ins().fabs(px);
        let lim = b.ins().f64const((1u64 << 63) as f64);
        let fits = b.ins().fcmp(FloatCC::LessThan, ax, lim);
        let fast_b = b.create_block();
        let slow_b = b.create_block();
        let merge = b.create_block();
        b.append_block_param(merge, ct);
        b.ins().brif(fits, fast_b, &[], slow_b, &[]);
        b.switch_to_block(fast_b);
        let i = b.ins().fcvt_to_sint_sat(types::I64, px);
        let r = if ct == types::I64 {
            i
        } else {
            b.ins().ireduce(ct, i)
        };
        b.ins().jump(merge, &ba(&[r]));
        b.switch_to_block(slow_b);
        let slow = self.convert_shim(a, to);
        self.b.ins().jump(merge, &ba(&[slow]));
        self.b.switch_to_block(merge);
        self.b.block_params(merge)[0]
    }
}

//! Scalar operations in native code: `runic_prim`'s semantics, bit for bit, with Cranelift
//! instructions where they agree with it and calls of its functions (the shims) elsewhere.

use crate::gen::{ba, cl, Gen};
use crate::shims::{self, binop_index, ternop_index, type_index, unop_index};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    types, InstBuilder, MemFlagsData, Opcode, StackSlotData, StackSlotKind, Value, ValueDef,
};
use cranelift_frontend::FunctionBuilder;
use runic_ir::*;

impl Gen<'_, '_> {
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

    pub(crate) fn ternop_shim(
        &mut self,
        op: TernOp,
        xs: [(Value, PrimType); 3],
        rt: PrimType,
    ) -> Value {
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

    pub(crate) fn binop(
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
    /// (larger) operand, `-0` counting as smaller than `0`.
    ///
    /// The common case, ordered and unequal operands, is one `minss`/`maxss` (`y` when it
    /// is smaller/larger, else `x`): a running extremum `x` carries four cycles per step
    /// (with runic_prim's f64 and three selects, which are branches on scalar floats that
    /// unordered data mispredicts, it carried about twelve). The others branch off to
    /// [`Gen::float_min_max_special`], rarely taken on ordinary data.
    fn float_min_max(&mut self, op: BinOp, t: PrimType, x: Value, y: Value) -> Value {
        let b = &mut self.b;
        // (Operand order matters: this is the form Cranelift turns into one instruction.)
        let y_wins = if op == BinOp::Min {
            b.ins().fcmp(FloatCC::LessThan, y, x)
        } else {
            b.ins().fcmp(FloatCC::LessThan, x, y)
        };
        let fast = b.ins().select(y_wins, y, x);
        let special = b.ins().fcmp(FloatCC::UnorderedOrEqual, x, y);
        let special_b = b.create_block();
        let merge = b.create_block();
        b.append_block_param(merge, cl(t));
        b.ins().brif(special, special_b, &[], merge, &ba(&[fast]));
        b.set_cold_block(special_b);
        b.switch_to_block(special_b);
        let r = self.float_min_max_special(op, t, x, y);
        self.b.ins().jump(merge, &ba(&[r]));
        self.b.switch_to_block(merge);
        self.b.block_params(merge)[0]
    }

    /// `min`/`max` of a NaN operand (the other operand) or of equal ones: their bits
    /// combined, `x & y` for `max` and `x | y` for `min` (`0` and `-0` for the two zeros,
    /// as runic_prim orders them; other equal values are the same bits).
    fn float_min_max_special(&mut self, op: BinOp, t: PrimType, x: Value, y: Value) -> Value {
        let int = if t == PrimType::F32 {
            types::I32
        } else {
            types::I64
        };
        let b = &mut self.b;
        let bx = b.ins().bitcast(int, MemFlagsData::new(), x);
        let by = b.ins().bitcast(int, MemFlagsData::new(), y);
        let both = if op == BinOp::Min {
            b.ins().bor(bx, by)
        } else {
            b.ins().band(bx, by)
        };
        let both = b.ins().bitcast(cl(t), MemFlagsData::new(), both);
        let xn = b.ins().fcmp(FloatCC::Unordered, x, x);
        let yn = b.ins().fcmp(FloatCC::Unordered, y, y);
        let r = b.ins().select(yn, x, both);
        b.ins().select(xn, y, r)
    }

    // ---- unary operations ----

    pub(crate) fn unop(&mut self, op: UnOp, a: (Value, PrimType), rt: PrimType) -> Value {
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
            // One lane of the SIMD code's polynomials, in the operand's own type (see
            // `simd::math`): a call to a shim would clobber every vector register around it.
            UnOp::Exp | UnOp::Log | UnOp::Tanh => {
                let b = &mut self.b;
                let vt = if t == PrimType::F32 {
                    types::F32X4
                } else {
                    types::F64X2
                };
                let lanes = b.ins().splat(vt, x);
                let r = match op {
                    UnOp::Exp => crate::simd::exp(b, lanes),
                    UnOp::Log => crate::simd::log(b, lanes),
                    _ => crate::simd::tanh(b, lanes),
                };
                let r = b.ins().extractlane(r, 0);
                return Some(pinned(b, r));
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

    pub(crate) fn convert(&mut self, a: (Value, PrimType), to: PrimType) -> Value {
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

/// `x`, read back from a stack slot it is stored to here: computed here, once.
/// Cranelift's optimiser places a pure computation where it is used, and one that
/// reads constants (a polynomial's coefficients) may land inside an inner loop that uses
/// it and run at every iteration of that loop: a row's `exp` in a map over the row's
/// elements ran its 60 instructions per element (7 ms instead of 1.8 for 8192 rows of
/// 256). A load is not pure, so it stays where it is, and the computation with it; the
/// second store keeps alias analysis from forwarding `x` to the load.
pub(crate) fn pinned(b: &mut FunctionBuilder, x: Value) -> Value {
    let t = b.func.dfg.value_type(x);
    let slot = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 4));
    let addr = b.ins().stack_addr(types::I64, slot, 0);
    let flags = MemFlagsData::trusted();
    b.ins().store(flags, x, addr, 0);
    let byte = b.ins().iconst(types::I8, 0);
    b.ins().store(flags, byte, addr, 8);
    b.ins().load(t, flags, addr, 0)
}

/// `x` [`pinned`] when a pure computation makes it (not a constant, a load, a call or a
/// parameter, which stay where they are): a scalar that a loop is about to broadcast, so
/// that computing it (a `1 / sqrt(var + eps)`, say) stays outside the loop.
pub(crate) fn pinned_if_computed(b: &mut FunctionBuilder, x: Value) -> Value {
    let ValueDef::Result(inst, _) = b.func.dfg.value_def(x) else {
        return x;
    };
    let op = b.func.dfg.insts[inst].opcode();
    let fixed = matches!(
        op,
        Opcode::Iconst | Opcode::F32const | Opcode::F64const | Opcode::Vconst
    ) || op.can_load()
        || op.is_call();
    if fixed {
        x
    } else {
        pinned(b, x)
    }
}

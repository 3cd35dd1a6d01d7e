//! Resolution of variables to frame slots before execution: every variable of a function
//! (its parameters, the patterns of its statements, and the parameters of its lambdas and
//! loops) gets a dense index, so that evaluation never looks a name up.

use runic_ir::traverse::Visitor;
use runic_ir::{FunDef, Lambda, Prog, Type, VName};

pub const NO_SLOT: u32 = u32::MAX;

/// Slot of every variable (indexed by `VName.0`; variable ids are unique in a program, so one
/// table serves all functions) and the frame size of every function.
pub struct Slots {
    pub slot: Vec<u32>,
    pub frame_size: Vec<usize>,
}

impl Slots {
    pub fn new(prog: &Prog) -> Slots {
        let mut s = Slots {
            slot: vec![NO_SLOT; prog.names.len()],
            frame_size: Vec::with_capacity(prog.funs.len()),
        };
        for f in &prog.funs {
            let mut frame = Layout {
                slots: &mut s,
                next: 0,
            };
            frame.fun(f);
            let size = frame.next as usize;
            s.frame_size.push(size);
        }
        s
    }

    #[inline]
    pub fn of(&self, v: VName) -> usize {
        self.slot.get(v.0 as usize).copied().unwrap_or(NO_SLOT) as usize
    }

    /// The largest slot of a variable bound in `lam`, at any depth (for evaluating an
    /// accumulator operator on a frame of its own).
    pub fn max_in(&self, lam: &Lambda) -> usize {
        struct Max<'s> {
            slots: &'s Slots,
            max: usize,
        }
        impl Visitor for Max<'_> {
            fn bind_var(&mut self, v: VName, _: Option<&Type>) {
                self.max = self.max.max(self.slots.of(v));
            }
        }
        let mut m = Max {
            slots: self,
            max: 0,
        };
        m.lambda(lam);
        m.max
    }
}

/// The slots of one function's frame, handed out as the traversal meets binders (in scope
/// order: what a statement binds after the binders nested in its expression).
struct Layout<'s> {
    slots: &'s mut Slots,
    next: u32,
}

impl Layout<'_> {
    fn fun(&mut self, f: &FunDef) {
        for p in &f.params {
            self.bind_var(p.name, None);
        }
        // Size variables named in parameter types may be bound from argument shapes.
        for p in &f.params {
            if let Type::Array { shape, .. } = &p.ty {
                for v in shape.iter().filter_map(|d| d.as_var()) {
                    self.bind_var(v, None);
                }
            }
        }
        self.body(&f.body);
    }
}

impl Visitor for Layout<'_> {
    fn bind_var(&mut self, v: VName, _: Option<&Type>) {
        let i = v.0 as usize;
        let slot = &mut self.slots.slot;
        if i >= slot.len() {
            slot.resize(i + 1, NO_SLOT);
        }
        if slot[i] == NO_SLOT {
            slot[i] = self.next;
            self.next += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use runic_ir::traverse::binders;
    use runic_ir::*;

    /// `f (xs: [n]i64) = map (\x -> loop (a = x) for i < n do a + i) xs`
    fn prog() -> (Prog, Lambda) {
        let mut names = NameSource::default();
        let i64t = Type::Prim(PrimType::I64);
        let n = names.fresh_typed("n", i64t.clone());
        let xs_t = i64t.array_of(SubExp::Var(n));
        let xs = names.fresh_typed("xs", xs_t.clone());
        let mut b = Builder::new(&mut names);
        let lam = b.lambda(vec![("x", i64t.clone())], vec![i64t.clone()], |b, ps| {
            let a = b.param("a", i64t.clone());
            let i = b.fresh("i");
            let body = b.body(|b| vec![b.add_i64(SubExp::Var(a.name), SubExp::Var(i))]);
            let exp = Exp::Loop {
                params: vec![(a, SubExp::Var(ps[0]))],
                form: LoopForm::For {
                    i,
                    bound: SubExp::Var(n),
                },
                body,
            };
            vec![SubExp::Var(b.bind(exp, vec![i64t.clone()])[0])]
        });
        let ys = b.map("ys", SubExp::Var(n), lam.clone(), vec![xs]).unwrap();
        let body = b.finish(vec![SubExp::Var(ys[0])]);
        let f = FunDef {
            name: "f".into(),
            params: vec![Param { name: xs, ty: xs_t }],
            ret: vec![i64t.array_of(SubExp::Var(n))],
            body,
            entry: None,
            src: SrcInfo::default(),
        };
        (
            Prog {
                funs: vec![f],
                names,
            },
            lam,
        )
    }

    #[test]
    fn every_binder_at_every_depth_gets_its_own_slot() {
        let (prog, lam) = prog();
        let s = Slots::new(&prog);
        let f = &prog.funs[0];
        let mut vars: Vec<VName> = binders(&f.body).into_iter().collect();
        vars.extend(f.params.iter().map(|p| p.name));
        vars.push(VName(0)); // `n`, a size in a parameter's type
        let mut seen: Vec<usize> = vars.iter().map(|v| s.of(*v)).collect();
        seen.sort();
        // xs, n, the map's result; the lambda's x, the loop's i, a, sum and result.
        assert_eq!(seen, (0..8).collect::<Vec<_>>());
        assert_eq!(s.frame_size, vec![8]);
        // Everything the lambda binds, the sum in the loop's body included.
        let inner: Vec<usize> = binders(&lam).iter().map(|v| s.of(*v)).collect();
        assert_eq!(s.max_in(&lam), *inner.iter().max().unwrap());
    }
}

//! Resolution of variables to frame slots before execution: every variable of a function
//! (its parameters, the patterns of its statements, and the parameters of its lambdas and
//! loops) gets a dense index, so that evaluation never looks a name up.

use runic_ir::{Body, Exp, FunDef, Lambda, LoopForm, Prog, Soac, VName};

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
            let mut next = 0u32;
            s.fun(f, &mut next);
            s.frame_size.push(next as usize);
        }
        s
    }

    #[inline]
    pub fn of(&self, v: VName) -> usize {
        self.slot.get(v.0 as usize).copied().unwrap_or(NO_SLOT) as usize
    }

    fn bind(&mut self, v: VName, next: &mut u32) {
        let i = v.0 as usize;
        if i >= self.slot.len() {
            self.slot.resize(i + 1, NO_SLOT);
        }
        if self.slot[i] == NO_SLOT {
            self.slot[i] = *next;
            *next += 1;
        }
    }

    fn fun(&mut self, f: &FunDef, next: &mut u32) {
        for p in &f.params {
            self.bind(p.name, next);
        }
        // Size variables named in parameter types may be bound from argument shapes.
        for p in &f.params {
            if let runic_ir::Type::Array { shape, .. } = &p.ty {
                for d in shape {
                    if let Some(v) = d.as_var() {
                        self.bind(v, next);
                    }
                }
            }
        }
        self.body(&f.body, next);
    }

    fn lambda(&mut self, l: &Lambda, next: &mut u32) {
        for p in &l.params {
            self.bind(p.name, next);
        }
        self.body(&l.body, next);
    }

    fn body(&mut self, b: &Body, next: &mut u32) {
        for stm in &b.stms {
            for p in &stm.pat {
                self.bind(p.name, next);
            }
            match &stm.exp {
                Exp::Basic(_) | Exp::Apply { .. } => {}
                Exp::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    self.body(then_body, next);
                    self.body(else_body, next);
                }
                Exp::Loop { params, form, body } => {
                    for (p, _) in params {
                        self.bind(p.name, next);
                    }
                    if let LoopForm::For { i, .. } = form {
                        self.bind(*i, next);
                    }
                    self.body(body, next);
                }
                Exp::Soac(s) => match s {
                    Soac::Map { lam, .. } | Soac::Hist { lam, .. } => self.lambda(lam, next),
                    Soac::Reduce { pre, lam, .. } | Soac::Scan { pre, lam, .. } => {
                        if let Some(p) = pre {
                            self.lambda(p, next);
                        }
                        self.lambda(lam, next);
                    }
                    Soac::Scatter { .. } => {}
                },
                Exp::WithAcc { inputs, lam } => {
                    for i in inputs {
                        if let Some((l, _)) = &i.op {
                            self.lambda(l, next);
                        }
                    }
                    self.lambda(lam, next);
                }
                Exp::Jvp { lam, .. } | Exp::Vjp { lam, .. } => self.lambda(lam, next),
                Exp::WithVjp { f, adj, .. } => {
                    self.lambda(f, next);
                    self.lambda(adj, next);
                }
            }
        }
    }
}

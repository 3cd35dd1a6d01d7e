//! Common-subexpression elimination for pure scalar and shape operations within a body
//! (and the bodies nested in it): a repeated computation reuses the earlier result.

use crate::dce::removable;
use runic_ir::traverse::{walk_stm_mut, VisitorMut};
use runic_ir::*;
use std::collections::HashMap;

pub fn cse(mut prog: Prog) -> Prog {
    for f in &mut prog.funs {
        Cse::default().body(&mut f.body);
    }
    prog
}

type Table = HashMap<String, Vec<VName>>;

/// Each body is visited with the computations of the bodies around it (`table`) and the
/// renamings made so far (`subst`); what a body adds to them is forgotten when it ends.
#[derive(Default)]
struct Cse {
    table: Table,
    /// Eliminated variables and the earlier results that replace them.
    subst: HashMap<VName, VName>,
}

impl VisitorMut for Cse {
    fn use_var(&mut self, v: &mut VName) {
        if let Some(r) = self.subst.get(v) {
            *v = *r;
        }
    }

    fn body(&mut self, b: &mut Body) {
        let outer = (self.table.clone(), self.subst.clone());
        let mut out = Vec::new();
        for mut s in std::mem::take(&mut b.stms) {
            // Renames the statement's operands and eliminates in its nested bodies.
            walk_stm_mut(self, &mut s);
            // Copies and scratch arrays are fresh storage that a later operation may
            // consume: two of them are never the same value.
            let fresh = matches!(s.exp, Exp::Basic(BasicOp::Copy(_) | BasicOp::Scratch(..)));
            // Only basic operations: two SOACs or branches producing arrays are two
            // arrays, and either may be consumed.
            if matches!(s.exp, Exp::Basic(_)) && removable(&s.exp) && !fresh {
                let key = format!(
                    "{:?}|{:?}",
                    s.exp,
                    s.pat.iter().map(|p| &p.ty).collect::<Vec<_>>()
                );
                if let Some(prev) = self.table.get(&key) {
                    for (p, v) in s.pat.iter().zip(prev) {
                        self.subst.insert(p.name, *v);
                    }
                    continue;
                }
                self.table
                    .insert(key, s.pat.iter().map(|p| p.name).collect());
            }
            out.push(s);
        }
        b.stms = out;
        b.result.iter_mut().for_each(|r| self.subexp(r));
        (self.table, self.subst) = outer;
    }
}

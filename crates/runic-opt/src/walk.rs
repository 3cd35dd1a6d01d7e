//! Substitution and uses for the passes, on the IR's one traversal
//! ([`runic_ir::traverse`]).

use runic_ir::traverse::{add_uses, Substitute, VisitorMut};
use runic_ir::*;
use std::collections::{HashMap, HashSet};

pub type Subst = HashMap<VName, SubExp>;

/// Apply a substitution to every operand of a body (types and nested scopes included).
pub fn body(b: &mut Body, m: &Subst) {
    Substitute(m).body(b)
}

/// Apply a substitution to every operand of a statement.
pub fn stm(s: &mut Stm, m: &Subst) {
    Substitute(m).stm(s)
}

/// Every variable read anywhere in `e`, including in types and nested scopes.
pub fn uses_exp(e: &Exp, out: &mut HashSet<VName>) {
    add_uses(e, out)
}

/// The variables of a type's dimensions.
pub fn uses_type(t: &Type, out: &mut HashSet<VName>) {
    add_uses(t, out)
}

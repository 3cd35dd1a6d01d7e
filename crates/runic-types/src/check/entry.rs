//! Entry points: their external signatures and the restrictions on them.

use super::pat::simple_pat_name;
use super::{err, Checker, Scheme, R};
use crate::ty::Type;
use crate::{EntryParam, EntryPoint};
use runic_syntax::ast::*;

impl Checker {
    pub(super) fn entry_point(&mut self, vb: &ValBind, sc: &Scheme, dec_index: usize) -> R<()> {
        if vb.name.contains('\'') {
            return err(
                vb.name_span,
                format!("Entry point names may not contain \"'\": \"{}\".", vb.name),
            );
        }
        let full = self.export(&sc.ty);
        let mut params = Vec::new();
        let mut cur = full;
        let mut i = 0;
        while let Type::Arrow { param, ret, .. } = cur {
            let name = vb.params.get(i).and_then(simple_pat_name);
            params.push(EntryParam { name, ty: *param });
            cur = *ret;
            i += 1;
        }
        let results = match cur.as_tuple() {
            Some(ts) => ts.into_iter().cloned().collect(),
            None => vec![cur],
        };
        for p in &params {
            if p.ty.is_functional() {
                return err(
                    vb.name_span,
                    "Entry point functions may not be higher-order.",
                );
            }
        }
        let poly = params
            .iter()
            .map(|p| &p.ty)
            .chain(results.iter())
            .any(type_has_param);
        if poly {
            return err(
                vb.name_span,
                "Entry point functions may not be polymorphic.",
            );
        }
        self.info.entries.push(EntryPoint {
            name: vb.name.clone(),
            dec_index,
            params,
            results,
            span: vb.span,
        });
        Ok(())
    }
}

fn type_has_param(t: &Type) -> bool {
    match t {
        Type::Param(_) => true,
        Type::Prim(_) => false,
        Type::Array { elem, .. } => type_has_param(elem),
        Type::Record(fs) => fs.iter().any(|(_, t)| type_has_param(t)),
        Type::Sum(cs) => cs.iter().any(|(_, ts)| ts.iter().any(type_has_param)),
        Type::Arrow { param, ret, .. } => type_has_param(param) || type_has_param(ret),
    }
}

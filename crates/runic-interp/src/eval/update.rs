//! In-place updates (`x with [i] = v`, `r with f = v`) along pre-evaluated paths.

use super::{Eval, Step, R};
use crate::error::RuntimeError;
use crate::index;
use crate::value::Value;
use std::rc::Rc;

impl<'a> Eval<'a> {
    pub(super) fn update_at(
        &self,
        target: Value<'a>,
        steps: &[Step<'a>],
        new: Value<'a>,
    ) -> R<Value<'a>> {
        let Some((step, rest)) = steps.split_first() else {
            return Ok(new);
        };
        match step {
            Step::Field(f) => match target {
                Value::Tuple(mut rc) => {
                    let i: usize = f
                        .parse()
                        .map_err(|_| RuntimeError::new("internal error: bad tuple field"))?;
                    let items = Rc::make_mut(&mut rc);
                    let old = std::mem::replace(&mut items[i], Value::unit());
                    items[i] = self.update_at(old, rest, new)?;
                    Ok(Value::Tuple(rc))
                }
                Value::Record(mut rc) => {
                    let items = Rc::make_mut(&mut rc);
                    let slot = items
                        .iter_mut()
                        .find(|(n, _)| n == f)
                        .ok_or_else(|| RuntimeError::new("internal error: missing field"))?;
                    let old = std::mem::replace(&mut slot.1, Value::unit());
                    slot.1 = self.update_at(old, rest, new)?;
                    Ok(Value::Record(rc))
                }
                _ => Err(RuntimeError::new(
                    "internal error: field update of a non-record",
                )),
            },
            Step::Index(dims, span) => {
                let Value::Array(mut rc) = target else {
                    return Err(RuntimeError::at(
                        "internal error: index update of a non-array",
                        *span,
                    ));
                };
                let sel = index::select(&rc.shape, dims).map_err(|m| RuntimeError::at(m, *span))?;
                let arr = Rc::make_mut(&mut rc);
                let new = if rest.is_empty() {
                    new
                } else {
                    let cur = index::extract(arr, &sel);
                    self.update_at(cur, rest, new)?
                };
                index::write(arr, &sel, new).map_err(|m| RuntimeError::at(m, *span))?;
                Ok(Value::Array(rc))
            }
        }
    }
}

//! Checking an entry point's derivatives: the interpreter's `jvp` and `vjp` against central
//! finite differences in f64 (`runic dev grad-check`).

use crate::ad::{map_scalars, scalars, S};
use crate::eval::{Eval, R};
use crate::prim::Prim;
use crate::value::Value;

/// Largest differences found for one float input of an entry point.
#[derive(Clone, Debug, PartialEq)]
pub struct GradCheck {
    /// Position of the input among the entry's parameters.
    pub input: usize,
    /// Number of scalars in the input.
    pub scalars: usize,
    /// Bits of the input's float type (16, 32 or 64): lower precision needs a larger step
    /// and a looser tolerance.
    pub float_bits: u32,
    /// The finite-difference step used.
    pub eps: f64,
    /// Largest |jvp − fd| and |vjp − fd| over all Jacobian entries of this input.
    pub max_abs: f64,
    /// Largest |ad − fd| / max(1, |fd|).
    pub max_rel: f64,
}

/// Finite-difference step for a float type of `bits` bits: about the cube root of its
/// machine epsilon, which balances truncation and rounding error of central differences.
pub fn default_eps(bits: u32) -> f64 {
    match bits {
        16 => 1e-1,
        32 => 5e-3,
        _ => 1e-5,
    }
}

/// Relative error accepted for a float type of `bits` bits.
pub fn default_tolerance(bits: u32) -> f64 {
    match bits {
        16 => 1e-1,
        32 => 1e-2,
        _ => 1e-4,
    }
}

fn as_f64(s: &S) -> Option<f64> {
    s.strip().as_float()
}

/// Indices of float scalars of `v`, in order.
fn float_positions(v: &Value) -> Vec<usize> {
    let mut s = Vec::new();
    scalars(v, &mut s);
    (0..s.len()).filter(|&i| as_f64(&s[i]).is_some()).collect()
}

/// `v` with scalar `k` replaced by `f(scalar)` (and all others by `other(scalar)`).
fn set_scalar<'a>(
    v: &Value<'a>,
    k: usize,
    hit: &dyn Fn(Prim) -> Prim,
    other: &dyn Fn(Prim) -> Prim,
) -> R<Value<'a>> {
    let mut i = 0;
    map_scalars(v, &mut |s| {
        let p = s.strip();
        let r = if i == k { hit(p) } else { other(p) };
        i += 1;
        Ok(S::P(r))
    })
}

fn float_outputs(v: &Value) -> Vec<f64> {
    let mut s = Vec::new();
    scalars(v, &mut s);
    s.iter().map(|x| as_f64(x).unwrap_or(0.0)).collect()
}

impl<'a> Eval<'a> {
    /// Compare the Jacobian of `f args` with respect to each float argument, computed by
    /// forward mode (one direction per input scalar), reverse mode (one cotangent per output
    /// scalar) and central differences with step `eps` (default: [`default_eps`] of the
    /// input's float type).
    pub fn grad_check(
        &self,
        f: &Value<'a>,
        args: &[Value<'a>],
        eps: Option<f64>,
    ) -> R<Vec<GradCheck>> {
        let mut out = Vec::new();
        for (i, x) in args.iter().enumerate() {
            let pos = float_positions(x);
            if pos.is_empty()
                || pos.len() != {
                    let mut s = Vec::new();
                    scalars(x, &mut s);
                    s.len()
                }
            {
                continue;
            }
            let mut call = |xi: Value<'a>| -> R<Value<'a>> {
                let mut a = args.to_vec();
                a[i] = xi;
                self.apply_many(f.clone(), a)
            };
            let n = pos.len();
            let float_bits = {
                let mut s = Vec::new();
                scalars(x, &mut s);
                s[0].ty().bits()
            };
            let eps = eps.unwrap_or_else(|| default_eps(float_bits));
            let dirs: Vec<Value<'a>> = (0..n)
                .map(|k| set_scalar(x, k, &|p| Prim::float(p.ty(), 1.0), &|p| Prim::zero(p.ty())))
                .collect::<R<_>>()?;
            let (y, tangents) = self.ad_forward_with(&mut call, x, &dirs)?;
            let m = float_outputs(&y).len();
            let (_, cots) = self.ad_reverse_with(&mut call, x, &mut |y| {
                (0..m)
                    .map(|k| {
                        set_scalar(y, k, &|p| Prim::float(p.ty(), 1.0), &|p| Prim::zero(p.ty()))
                    })
                    .collect()
            })?;
            let (mut max_abs, mut max_rel) = (0.0f64, 0.0f64);
            for k in 0..n {
                let plus = set_scalar(
                    x,
                    k,
                    &|p| Prim::float(p.ty(), p.as_float().unwrap_or(0.0) + eps),
                    &|p| p,
                )?;
                let minus = set_scalar(
                    x,
                    k,
                    &|p| Prim::float(p.ty(), p.as_float().unwrap_or(0.0) - eps),
                    &|p| p,
                )?;
                let hp = {
                    let mut s = Vec::new();
                    scalars(&plus, &mut s);
                    s[k].strip().as_float().unwrap_or(0.0)
                };
                let hm = {
                    let mut s = Vec::new();
                    scalars(&minus, &mut s);
                    s[k].strip().as_float().unwrap_or(0.0)
                };
                let yp = float_outputs(&call(plus)?);
                let ym = float_outputs(&call(minus)?);
                let fwd = float_outputs(&tangents[k]);
                for j in 0..m {
                    let fd = (yp[j] - ym[j]) / (hp - hm);
                    let rev = float_outputs(&cots[j])[k];
                    for ad in [fwd[j], rev] {
                        let e = (ad - fd).abs();
                        max_abs = max_abs.max(e);
                        max_rel = max_rel.max(e / fd.abs().max(1.0));
                    }
                }
            }
            out.push(GradCheck {
                input: i,
                scalars: n,
                float_bits,
                eps,
                max_abs,
                max_rel,
            });
        }
        Ok(out)
    }
}

//! Train a logistic regression by gradient descent, the gradient computed by runic
//! (`examples/logreg.fut`, `vjp2` of the mean log-loss), in a plain Rust loop on synthetic
//! data: `cargo run --release -p runic --example train_logreg`.

use ndarray::{Array1, Array2};
use runic::Program;

/// Synthetic, linearly separable-ish data: `n` points of dimension `d`, labelled by the sign
/// of a fixed linear function plus a little noise (a deterministic generator: same data on
/// every run).
pub fn data(n: usize, d: usize) -> (Array2<f32>, Array1<f32>) {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut uniform = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    };
    let truth: Vec<f32> = (0..d)
        .map(|j| if j % 2 == 0 { 1.5 } else { -1.0 })
        .collect();
    let xs = Array2::from_shape_fn((n, d), |_| uniform());
    let ys = xs
        .rows()
        .into_iter()
        .map(|x| {
            let z: f32 = x.iter().zip(&truth).map(|(a, b)| a * b).sum::<f32>() + 0.3;
            f32::from(z + 0.2 * uniform() > 0.0)
        })
        .collect();
    (xs, ys)
}

/// `steps` steps of gradient descent from zero weights; the loss before each step.
pub fn train(steps: usize, rate: f32) -> Result<Vec<f32>, runic::Error> {
    let source = include_str!("logreg.fut");
    let program = Program::from_source("logreg.fut", source)?;
    let grad_loss = program.entry("grad_loss")?;
    let (xs, ys) = data(512, 8);
    let mut w = Array1::<f32>::zeros(xs.ncols());
    let mut b = 0.0f32;
    let mut losses = Vec::with_capacity(steps);
    for _ in 0..steps {
        let mut out = grad_loss.call((&w, b, &xs, &ys))?;
        losses.push(out.take::<f32>(0)?);
        let gw: Array1<f32> = out.take(1)?;
        w.scaled_add(-rate, &gw);
        b -= rate * out.take::<f32>(2)?;
    }
    Ok(losses)
}

fn main() -> Result<(), runic::Error> {
    let losses = train(200, 1.0)?;
    for (step, loss) in losses.iter().enumerate().step_by(20) {
        println!("step {step:4}  loss {loss:.4}");
    }
    println!(
        "final loss {:.4}",
        losses.last().copied().unwrap_or(f32::NAN)
    );
    Ok(())
}

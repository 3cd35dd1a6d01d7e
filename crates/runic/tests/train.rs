//! The training example runs, and its loss falls.

#[path = "../examples/train_logreg.rs"]
#[allow(dead_code)]
mod train_logreg;

#[test]
fn gradient_descent_with_runic_gradients_lowers_the_loss() {
    let losses = train_logreg::train(30, 1.0).unwrap();
    assert_eq!(losses.len(), 30);
    // From zero weights the model predicts 1/2 everywhere: the loss starts at ln 2.
    assert!(
        (losses[0] - std::f32::consts::LN_2).abs() < 1e-5,
        "{}",
        losses[0]
    );
    assert!(losses.windows(2).all(|w| w[1] < w[0]), "{losses:?}");
    assert!(losses[29] < 0.6 * losses[0], "{losses:?}");
}

#[test]
fn the_gradient_matches_finite_differences() {
    let program =
        runic::Program::from_source("logreg.fut", include_str!("../examples/logreg.fut")).unwrap();
    let (xs, ys) = train_logreg::data(64, 3);
    let w = ndarray::array![0.3f32, -0.2, 0.1];
    let b = 0.05f32;
    let mut out = program.call("grad_loss", (&w, b, &xs, &ys)).unwrap();
    let gw = out.take::<ndarray::Array1<f32>>(1).unwrap();
    let loss = |w: &ndarray::Array1<f32>| -> f64 {
        let out = program.call("mean_loss", (w, b, &xs, &ys)).unwrap();
        out.get::<f32>(0).unwrap() as f64
    };
    let h = 1e-2f32;
    for j in 0..3 {
        let (mut up, mut down) = (w.clone(), w.clone());
        up[j] += h;
        down[j] -= h;
        let fd = (loss(&up) - loss(&down)) / (2.0 * h as f64);
        assert!(
            (fd - gw[j] as f64).abs() < 2e-3,
            "w[{j}]: {fd} vs {}",
            gw[j]
        );
    }
}

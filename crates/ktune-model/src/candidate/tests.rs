//! Tests of `candidate`.

use super::*;
use crate::DenseGp;
use crate::kernel::KernelKind;

#[test]
fn prior_before_observations() {
    let mut k = Kernel::new(KernelKind::Rbf, 1.0);
    k.hyper.output_scale = 2.5;
    let gp = CandidateGp::new(k, vec![0.0, 1.0, 2.0], 1).unwrap();
    assert!(gp.is_empty());
    assert_eq!(gp.means(), vec![0.0; 3]);
    assert_eq!(gp.variances(), vec![2.5; 3]);
    assert_eq!(gp.log_marginal_likelihood(), 0.0);
}

#[test]
fn matches_dense_small() {
    let cands: Vec<f64> = (0..7)
        .flat_map(|i| [i as f64 * 0.3, (i * i) as f64 * 0.05])
        .collect();
    let kernel = Kernel::new(KernelKind::Matern32, 0.7);
    let mut gp = CandidateGp::new(kernel.clone(), cands.clone(), 2).unwrap();
    let pts: Vec<Vec<f64>> = cands.chunks(2).map(<[f64]>::to_vec).collect();
    let order = [3, 0, 6, 1];
    let ys = [1003.0, 998.5, 1001.25, 1000.0];
    for (t, (&j, &y)) in order.iter().zip(&ys).enumerate() {
        gp.observe(j, y).unwrap();
        let xs: Vec<Vec<f64>> = order[..=t].iter().map(|&j| pts[j].clone()).collect();
        let dense = DenseGp::fit(&kernel, &xs, &ys[..=t]).unwrap();
        for (j, (m, v)) in dense.predict(&pts).into_iter().enumerate() {
            assert!((gp.mean(j) - m).abs() < 1e-9 * m.abs(), "{t} {j}");
            assert!((gp.variance(j) - v).abs() < 1e-9, "{t} {j}");
        }
        let (a, b) = (
            gp.log_marginal_likelihood(),
            dense.log_marginal_likelihood(),
        );
        assert!((a - b).abs() < 1e-9 * b.abs().max(1.0), "{a} {b}");
    }
}

/// Candidates appended after observations (and observed through the `Surrogate`
/// interface without a key) have the posterior of a model that listed them from the
/// start, and the old candidates' posterior does not change.
#[test]
fn appended_candidates_match_a_model_that_had_them() {
    let cands: Vec<f64> = (0..6)
        .flat_map(|i| [i as f64 * 0.3, (i * i) as f64 * 0.05])
        .collect();
    let extra = [0.45, 0.1, 1.2, 0.9];
    let mut kernel = Kernel::new(KernelKind::Matern52, 0.6);
    kernel.hyper.noise = 1e-4;
    let mut gp = CandidateGp::new(kernel.clone(), cands.clone(), 2).unwrap();
    let all: Vec<f64> = cands.iter().chain(&extra).copied().collect();
    let mut whole = CandidateGp::new(kernel.clone(), all.clone(), 2).unwrap();
    for (j, y) in [(4, 3.0), (1, 1.5), (5, 2.25)] {
        gp.observe(j, y).unwrap();
        whole.observe(j, y).unwrap();
    }
    let before = (gp.means(), gp.variances());
    assert_eq!(gp.push_candidate(&extra[..2]).unwrap(), 6);
    assert_eq!(gp.means()[..6], before.0[..]);
    assert_eq!(gp.variances()[..6], before.1[..]);
    // The second new point is observed without a key: it is appended, then observed.
    Surrogate::observe(&mut gp, Point::new(&extra[2..]), 4.0).unwrap();
    whole.observe(7, 4.0).unwrap();
    assert_eq!(gp.num_candidates(), 8);
    assert!(gp.is_observed(7));
    for j in 0..8 {
        assert!((gp.mean(j) - whole.mean(j)).abs() < 1e-9, "mean {j}");
        assert!(
            (gp.variance(j) - whole.variance(j)).abs() < 1e-9,
            "variance {j}"
        );
    }
    // A keyless point that is a candidate is observed there, not appended again.
    Surrogate::observe(&mut gp, Point::new(&extra[..2]), 2.0).unwrap();
    assert_eq!(gp.num_candidates(), 8);
    assert!(gp.is_observed(6));
    assert!(gp.push_candidate(&[1.0]).is_err());
    assert!(gp.push_candidate(&[1.0, f64::NAN]).is_err());
    assert!(Surrogate::observe(&mut gp, Point::new(&[0.7, 0.7]), f64::NAN).is_err());
    assert_eq!(gp.num_candidates(), 8, "nothing appended on an error");
}

/// The posterior off the candidates, with noise large enough that the diagonal of the
/// factor differs from `V`'s entries at the observed candidates.
#[test]
fn posterior_anywhere_matches_the_dense_gp_with_noise() {
    let cands: Vec<f64> = (0..9).map(|i| i as f64 / 8.0).collect();
    let mut kernel = Kernel::new(KernelKind::Matern52, 0.4);
    kernel.hyper.noise = 0.05;
    let mut gp = CandidateGp::new(kernel.clone(), cands.clone(), 1).unwrap();
    let (order, ys) = ([1, 4, 7, 8], [2.0, 1.0, 3.5, 2.5]);
    for (&j, &y) in order.iter().zip(&ys) {
        gp.observe(j, y).unwrap();
    }
    let xs: Vec<Vec<f64>> = order.iter().map(|&j| vec![cands[j]]).collect();
    let dense = DenseGp::fit(&kernel, &xs, &ys).unwrap();
    for x in [0.3, 0.55, 1.3] {
        let (m, v) = gp.posterior(&[x]);
        let want = dense.predict(&[vec![x]])[0];
        assert!(
            (m - want.0).abs() < 1e-9 && (v - want.1).abs() < 1e-9,
            "{x}"
        );
    }
}

/// The posteriors of many points at once (one blocked solve per block of points) are
/// those of one point at a time, across blocks, without noise and with noise and a
/// repeated measurement (an appended candidate at an observed point); a point of the
/// wrong dimension is NaN either way.
#[test]
fn posteriors_together_match_one_at_a_time() {
    let cands: Vec<f64> = (0..400)
        .flat_map(|i| [(i as f64 * 0.37).sin(), (i as f64 * 0.11).cos()])
        .collect();
    let points: Vec<Vec<f64>> = (0..2500)
        .map(|i| vec![(i as f64 * 0.013).sin() * 1.2, (i as f64 * 0.029).cos()])
        .collect();
    let xs: Vec<&[f64]> = points.iter().map(Vec::as_slice).collect();
    for noise in [0.01, 0.0] {
        let mut kernel = Kernel::new(KernelKind::Matern32, 0.6);
        if noise > 0.0 {
            kernel.hyper.noise = noise;
        }
        let mut gp = CandidateGp::new(kernel, cands.clone(), 2).unwrap();
        for (t, j) in (0..60).map(|i| i * 37 % 400).enumerate() {
            gp.observe(j, 5.0 + cands[2 * j] - cands[2 * j + 1] * t as f64 / 60.0)
                .unwrap();
        }
        // A repeated measurement, where noise makes it well-posed.
        if noise > 0.0 {
            let x0 = gp.candidate(gp.observed_indices()[3]).to_vec();
            let dup = gp.push_candidate(&x0).unwrap();
            gp.observe(dup, 4.0).unwrap();
        }
        let together = gp.posteriors(&xs);
        assert_eq!(together.len(), points.len());
        for (x, (m, v)) in xs.iter().zip(&together) {
            let (m1, v1) = gp.posterior(x);
            assert!((m - m1).abs() < 1e-9 * (1.0 + m1.abs()), "{x:?}: {m} {m1}");
            assert!((v - v1).abs() < 1e-9 * (1.0 + v1.abs()), "{x:?}: {v} {v1}");
        }
        let odd = gp.posteriors(&[&[0.1, 0.2], &[0.3]]);
        assert!(odd[0].0.is_finite() && odd[1].0.is_nan());
        // Forgetting observations forgets their rows of the factor too.
        let (kept, values) = (
            gp.observed_indices()[..20].to_vec(),
            gp.observed_values()[..20].to_vec(),
        );
        gp.truncate(20);
        let mut fresh = CandidateGp::new(gp.kernel().clone(), cands.clone(), 2).unwrap();
        for (&j, &y) in kept.iter().zip(&values) {
            fresh.observe(j, y).unwrap();
        }
        for (x, (m, v)) in xs.iter().zip(gp.posteriors(&xs)).step_by(50) {
            let (m1, v1) = fresh.posterior(x);
            assert!((m - m1).abs() < 1e-9 * (1.0 + m1.abs()), "{x:?}: {m} {m1}");
            assert!((v - v1).abs() < 1e-9 * (1.0 + v1.abs()), "{x:?}: {v} {v1}");
        }
    }
}

/// Observing many candidates at once (one blocked factorisation) gives the posterior of
/// observing them one by one; a duplicate point, which needs jitter, takes the one-by-one
/// path and gets it.
#[test]
fn observing_all_at_once_matches_one_by_one() {
    let cands: Vec<f64> = (0..3000)
        .flat_map(|i| [(i as f64 * 0.37).sin(), (i as f64 * 0.11).cos()])
        .collect();
    let kernel = Kernel::new(KernelKind::Matern52, 0.5);
    let indices: Vec<usize> = (0..40).map(|i| i * 71 % 3000).collect();
    let ys: Vec<f64> = indices.iter().map(|&j| 10.0 + cands[2 * j]).collect();
    let mut one = CandidateGp::new(kernel.clone(), cands.clone(), 2).unwrap();
    for (&j, &y) in indices.iter().zip(&ys) {
        one.observe(j, y).unwrap();
    }
    let mut all = CandidateGp::new(kernel.clone(), cands.clone(), 2).unwrap();
    all.observe_all(&indices, &ys).unwrap();
    assert_eq!(all.observed_indices(), &indices[..]);
    assert_eq!(all.jitter_events(), 0);
    for j in (0..3000).step_by(7) {
        assert!((all.mean(j) - one.mean(j)).abs() < 1e-9, "mean {j}");
        assert!(
            (all.variance(j) - one.variance(j)).abs() < 1e-9,
            "variance {j}"
        );
    }
    let (a, b) = (all.log_marginal_likelihood(), one.log_marginal_likelihood());
    assert!((a - b).abs() < 1e-9 * b.abs(), "{a} {b}");
    // Candidates 0 and 1 at the same coordinates, no noise: the second needs jitter.
    let mut exact = kernel.clone();
    exact.hyper.noise = 0.0;
    let twins = CandidateGp::new(exact, vec![0.5, 0.5, 0.5, 0.5, 0.1, 0.9], 2);
    let mut twins = twins.unwrap();
    twins.observe_all(&[0, 1], &[1.0, 1.5]).unwrap();
    assert_eq!(twins.jitter_events(), 1);
    assert!(twins.observe_all(&[2], &[1.0, 2.0]).is_err());
    assert!(
        twins.observe_all(&[2, 2], &[1.0, 2.0]).is_err(),
        "observed twice"
    );
}

#[test]
fn measurement_variances_as_the_dense_gp() {
    // 12 candidates on a line; an outlier at candidate 6, beside a precise candidate 5.
    let cands: Vec<f64> = (0..12).map(|i| i as f64 / 11.0).collect();
    let pts: Vec<Vec<f64>> = cands.iter().map(|&c| vec![c]).collect();
    let mut kernel = Kernel::new(KernelKind::Matern52, 0.3);
    kernel.hyper.noise = 1e-6;
    let order = [0, 3, 5, 6, 9, 11];
    let ys = [2.0, 2.6, 3.0, 8.0, 3.4, 3.1];
    let mut gp = CandidateGp::new(kernel.clone(), cands.clone(), 1).unwrap();
    for (&j, &y) in order.iter().zip(&ys) {
        gp.observe(j, y).unwrap();
    }
    let plain = gp.mean(6);
    let before = (gp.means(), gp.variances());
    gp.set_noise(&[0.0; 6]).unwrap();
    assert_eq!(
        (gp.means(), gp.variances()),
        before,
        "zero variances change nothing"
    );
    let var = [0.0, 0.0, 0.0, 25.0, 0.0, 0.0];
    gp.set_noise(&var).unwrap();
    let xs: Vec<Vec<f64>> = order.iter().map(|&j| pts[j].clone()).collect();
    let dense = DenseGp::fit_noisy(&kernel, &xs, &ys, &var).unwrap();
    for (j, (m, v)) in dense.predict(&pts).into_iter().enumerate() {
        assert!((gp.mean(j) - m).abs() < 1e-9 * m.abs().max(1.0), "{j}");
        assert!((gp.variance(j) - v).abs() < 1e-9, "{j}");
    }
    // The imprecise outlier no longer pulls the posterior to itself.
    assert!(plain > 7.9 && gp.mean(6) < 5.0, "{plain} {}", gp.mean(6));

    // A new observation with its variance: only it is refactorised, with the scale the
    // others were converted with, and the result is that of converting all with it.
    gp.observe(8, 3.3).unwrap();
    let var7 = [0.0, 0.0, 0.0, 25.0, 0.0, 0.0, 0.5];
    gp.set_noise(&var7).unwrap();
    let scale = gp.extra_scale;
    let mut fresh = CandidateGp::new(kernel.clone(), cands.clone(), 1).unwrap();
    fresh.extra_scale = scale;
    for ((&j, &y), &v) in order
        .iter()
        .chain(&[8])
        .zip(ys.iter().chain(&[3.3]))
        .zip(&var7)
    {
        fresh.observe_noisy(j, y, v).unwrap();
    }
    for j in 0..12 {
        assert!((gp.mean(j) - fresh.mean(j)).abs() < 1e-9, "{j}");
        assert!((gp.variance(j) - fresh.variance(j)).abs() < 1e-9, "{j}");
    }
    // Forgetting observations forgets their variances; bad input changes nothing.
    gp.truncate(3);
    assert_eq!(gp.extra, vec![0.0; 3]);
    let kept = (gp.means(), gp.variances());
    assert!(gp.set_noise(&[1.0; 4]).is_err());
    assert!(gp.set_noise(&[0.0, -1.0, 0.0]).is_err());
    assert!(gp.set_noise(&[0.0, f64::NAN, 0.0]).is_err());
    assert_eq!((gp.means(), gp.variances()), kept);
    // A rebuild keeps the variances.
    gp.set_noise(&[0.0, 4.0, 0.0]).unwrap();
    let noisy = (gp.means(), gp.variances());
    gp.rebuild(kernel).unwrap();
    assert_eq!((gp.means(), gp.variances()), noisy);
}

#[test]
fn bad_input() {
    let k = Kernel::new(KernelKind::Matern52, 1.0);
    assert!(CandidateGp::new(k.clone(), vec![0.0; 5], 2).is_err());
    assert!(CandidateGp::new(k.clone(), vec![0.0; 4], 0).is_err());
    assert!(CandidateGp::new(k.clone(), vec![0.0, f64::NAN], 1).is_err());
    let mut bad = k.clone();
    bad.hyper.lengthscales = vec![1.0, 1.0, 1.0];
    assert!(CandidateGp::new(bad.clone(), vec![0.0; 4], 2).is_err());
    let mut gp = CandidateGp::new(k.clone(), vec![0.0, 1.0, 2.0], 1).unwrap();
    assert_eq!(
        gp.observe(3, 1.0),
        Err(ModelError::IndexOutOfRange { index: 3, len: 3 })
    );
    assert!(matches!(
        gp.observe(0, f64::NAN),
        Err(ModelError::NonFinite { .. })
    ));
    gp.observe(0, 1.0).unwrap();
    assert_eq!(
        gp.observe(0, 2.0),
        Err(ModelError::AlreadyObserved { index: 0 })
    );
    assert_eq!(gp.len(), 1);
    assert!(gp.mean(3).is_nan() && gp.variance(3).is_nan());
    // A failed rebuild leaves the model untouched.
    assert!(gp.rebuild(bad).is_err());
    assert_eq!(gp.len(), 1);
    assert_eq!(gp.kernel(), &k);
}

#[test]
fn exact_duplicates_trigger_jitter() {
    let mut k = Kernel::new(KernelKind::Rbf, 1.0);
    k.hyper.noise = 0.0;
    // Candidates 0, 1 and 2 coincide; 3 is 1e-9 away.
    let cands = vec![0.5, 0.5, 0.5, 0.5 + 1e-9, 2.0];
    let mut gp = CandidateGp::new(k, cands, 1).unwrap();
    gp.observe(0, 1.0).unwrap();
    assert_eq!(gp.jitter_events(), 0);
    gp.observe(1, 1.2).unwrap();
    gp.observe(2, 0.9).unwrap();
    gp.observe(3, 1.1).unwrap();
    gp.observe(4, 3.0).unwrap();
    assert!(gp.jitter_events() >= 3, "{}", gp.jitter_events());
    for (m, v) in gp.means().into_iter().zip(gp.variances()) {
        assert!(m.is_finite() && v.is_finite() && v >= 0.0);
        assert!(m > 0.0 && m < 4.0, "{m}");
    }
    assert!(gp.log_marginal_likelihood().is_finite());
}

/// Equal to rounding: a rebuild factorises all observations at once, a fresh model one
/// by one.
fn assert_close(a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len());
    for (j, (x, y)) in a.iter().zip(b).enumerate() {
        assert!((x - y).abs() <= 1e-9 * y.abs().max(1.0), "{j}: {x} {y}");
    }
}

#[test]
fn rebuild_matches_fresh() {
    let cands: Vec<f64> = (0..20).map(|i| (i as f64 * 0.37).sin()).collect();
    let mut gp = CandidateGp::new(Kernel::new(KernelKind::Rbf, 0.3), cands.clone(), 1).unwrap();
    for (j, y) in [(2, 1.0), (5, -2.0), (11, 0.5)] {
        gp.observe(j, y).unwrap();
    }
    let k2 = Kernel::new(KernelKind::Matern52, 0.8);
    gp.rebuild(k2.clone()).unwrap();
    let mut fresh = CandidateGp::new(k2, cands, 1).unwrap();
    for (j, y) in [(2, 1.0), (5, -2.0), (11, 0.5)] {
        fresh.observe(j, y).unwrap();
    }
    assert_close(&gp.means(), &fresh.means());
    assert_close(&gp.variances(), &fresh.variances());
    assert_eq!(gp.observed_indices(), &[2, 5, 11]);
}

#[test]
fn replacing_values_matches_fresh() {
    let cands: Vec<f64> = (0..20).map(|i| (i as f64 * 0.37).sin()).collect();
    let kernel = Kernel::new(KernelKind::Matern32, 0.5);
    let mut gp = CandidateGp::new(kernel.clone(), cands.clone(), 1).unwrap();
    for (j, y) in [(2, 1.0), (5, 8.0), (11, 3.0)] {
        gp.observe(j, y).unwrap();
    }
    let logs = [0.0, 8f64.ln(), 3f64.ln()];
    gp.replace_values(&logs).unwrap();
    let mut fresh = CandidateGp::new(kernel, cands, 1).unwrap();
    for (&j, &y) in [2, 5, 11].iter().zip(&logs) {
        fresh.observe(j, y).unwrap();
    }
    assert_close(&gp.means(), &fresh.means());
    assert_close(&gp.variances(), &fresh.variances());
    assert_eq!(gp.observed_values(), &logs);
    // Wrong length or a non-finite value: an error, and the model is unchanged.
    assert!(gp.replace_values(&[1.0]).is_err());
    assert!(gp.replace_values(&[1.0, f64::NAN, 2.0]).is_err());
    assert_eq!(gp.observed_values(), &logs);
}

/// Replacing values keeps the factor and solves again for the values only: on many
/// candidates (the parallel path) and with known measurement variances (kept where the
/// spread moves little, converted again where it moves much) it matches a model built on the
/// new values from the start.
#[test]
fn replacing_values_keeps_the_factor_and_matches_fresh() {
    let m = 5000;
    let cands: Vec<f64> = (0..m).map(|i| (i as f64 * 0.0137).sin()).collect();
    let kernel = Kernel::new(KernelKind::Matern52, 0.4);
    let obs = [3, 900, 1700, 2500, 4999, 4100];
    let ys = [1.0, 2.0, 0.5, 3.0, 1.5, 2.5];
    let variances = [0.0, 0.1, 0.0, 0.2, 0.05, 0.0];
    let built = |ys: &[f64], noisy: bool| {
        let mut gp = CandidateGp::new(kernel.clone(), cands.clone(), 1).unwrap();
        for (&j, &y) in obs.iter().zip(ys) {
            gp.observe(j, y).unwrap();
        }
        if noisy {
            gp.set_noise(&variances).unwrap();
        }
        gp
    };
    for noisy in [false, true] {
        // A small change of spread (kept conversion) and a large one (converted again).
        for scale in [1.2, 10.0] {
            let new: Vec<f64> = ys.iter().map(|y| scale * y - 4.0).collect();
            let mut gp = built(&ys, noisy);
            gp.replace_values(&new).unwrap();
            // The variances stay converted with the old spread where it moved little: as a
            // full replay of the new values would keep them.
            let mut fresh = if noisy && scale < NOISE_RESCALE {
                let mut r = built(&ys, noisy);
                let s = r.extra_scale;
                r.replay(kernel.clone(), &new, s).unwrap();
                r
            } else {
                built(&new, noisy)
            };
            let (a, b) = (gp.means(), fresh.means());
            let (va, vb) = (gp.variances(), fresh.variances());
            for j in (0..m).step_by(97) {
                assert!(
                    (a[j] - b[j]).abs() < 1e-6 * (1.0 + b[j].abs()),
                    "{noisy} {scale} mean {j}"
                );
                assert!(
                    (va[j] - vb[j]).abs() < 1e-6 * (1.0 + vb[j]),
                    "{noisy} {scale} var {j}"
                );
            }
            let (la, lb) = (
                gp.log_marginal_likelihood(),
                fresh.log_marginal_likelihood(),
            );
            assert!(
                (la - lb).abs() < 1e-6 * (1.0 + lb.abs()),
                "{noisy} {scale}: {la} {lb}"
            );
            // Observing on after a replacement goes on from the new values.
            gp.observe(10, 0.0).unwrap();
            fresh.observe(10, 0.0).unwrap();
            assert!(
                (gp.mean(11) - fresh.mean(11)).abs() < 1e-6,
                "{noisy} {scale}"
            );
        }
    }
}

#[test]
fn parallel_path_matches_serial_formula() {
    // m above PARALLEL_MIN exercises the rayon path; compare against DenseGp.
    let m = PARALLEL_MIN + 37;
    let cands: Vec<f64> = (0..m * 2)
        .map(|i| ((i as f64) * 0.618_033_988_7).fract())
        .collect();
    let kernel = Kernel::new(KernelKind::Matern52, 0.4);
    let mut gp = CandidateGp::new(kernel.clone(), cands.clone(), 2).unwrap();
    let order = [5usize, 1000, 4000, 77, m - 1];
    let ys = [3.0, 1.0, 2.0, 5.0, 4.5];
    for (&j, &y) in order.iter().zip(&ys) {
        gp.observe(j, y).unwrap();
    }
    let pts: Vec<Vec<f64>> = cands.chunks(2).map(<[f64]>::to_vec).collect();
    let xs: Vec<Vec<f64>> = order.iter().map(|&j| pts[j].clone()).collect();
    let dense = DenseGp::fit(&kernel, &xs, &ys).unwrap();
    let (means, vars) = (gp.means(), gp.variances());
    for (j, (mu, var)) in dense.predict(&pts).into_iter().enumerate() {
        assert!((means[j] - mu).abs() < 1e-9 * mu.abs().max(1.0));
        assert!((vars[j] - var).abs() < 1e-9);
        assert_eq!(means[j], gp.mean(j));
        assert_eq!(vars[j], gp.variance(j));
    }
}

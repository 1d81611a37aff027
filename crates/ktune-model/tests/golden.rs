//! `DenseGp` and `CandidateGp` against scikit-learn reference posteriors.
//!
//! The reference data come from `tests/data/make_sklearn_golden.py` (committed output in
//! `tests/data/sklearn_golden.json`); this test does not need Python.

use ktune_model::{CandidateGp, DenseGp, Hyperparameters, Kernel, KernelKind};
use serde_json::Value;

const GOLDEN: &str = include_str!("data/sklearn_golden.json");
/// Relative tolerance for well-conditioned problems (`cond(K + noise·I) <= 1e7`).
const REL_TOL: f64 = 1e-8;

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

fn points(v: &Value) -> Vec<Vec<f64>> {
    v.as_array().expect("array").iter().map(floats).collect()
}

struct Problem {
    kernel: Kernel,
    x: Vec<Vec<f64>>,
    y: Vec<f64>,
    x_test: Vec<Vec<f64>>,
    mean: Vec<f64>,
    std: Vec<f64>,
    lml: f64,
    cond: f64,
}

fn problems() -> Vec<Problem> {
    let root: Value = serde_json::from_str(GOLDEN).expect("valid JSON");
    root["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| {
            let kind = match p["kind"].as_str().expect("kind") {
                "Matern32" => KernelKind::Matern32,
                "Matern52" => KernelKind::Matern52,
                "Rbf" => KernelKind::Rbf,
                other => panic!("unknown kind {other}"),
            };
            let hyper = Hyperparameters {
                lengthscales: floats(&p["lengthscales"]),
                output_scale: p["output_scale"].as_f64().expect("output_scale"),
                noise: p["noise"].as_f64().expect("noise"),
            };
            Problem {
                kernel: Kernel::with_hyperparameters(kind, hyper),
                x: points(&p["x"]),
                y: floats(&p["y"]),
                x_test: points(&p["x_test"]),
                mean: floats(&p["mean"]),
                std: floats(&p["std"]),
                lml: p["log_marginal_likelihood"].as_f64().expect("lml"),
                cond: p["cond"].as_f64().expect("cond"),
            }
        })
        .collect()
}

/// Error relative to `max(|want|, scale)`: `scale` is the problem's natural scale (the
/// prior standard deviation or variance in `y` units), so that values that are tiny by
/// cancellation (posterior variance at a point next to an observation) are not compared
/// digit by digit.
fn rel_err(got: f64, want: f64, scale: f64) -> f64 {
    (got - want).abs() / want.abs().max(scale)
}

impl Problem {
    /// `REL_TOL`, scaled up for ill-conditioned problems: the forward error of any
    /// backward-stable solver (scikit-learn's included) grows like `cond·ε`. One problem
    /// (RBF, 8 points in 1-D, lengthscale 0.3) has `cond ≈ 2.8e8`.
    fn tol(&self) -> f64 {
        REL_TOL * (self.cond / 1e7).max(1.0)
    }

    /// Prior standard deviation in `y` units: `s·√output_scale`, `s` = population std of `y`.
    fn prior_std(&self) -> f64 {
        let n = self.y.len() as f64;
        let m = self.y.iter().sum::<f64>() / n;
        let s = (self.y.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n).sqrt();
        s * self.kernel.hyper.output_scale.sqrt()
    }

    /// Worst relative error of `(mean, variance)` predictions at the test points.
    fn check(&self, what: &str, pred: &[(f64, f64)]) -> f64 {
        let sd = self.prior_std();
        let mut worst = 0.0f64;
        for (t, &(mean, var)) in pred.iter().enumerate() {
            let want_var = self.std[t] * self.std[t];
            let em = rel_err(mean, self.mean[t], sd);
            let ev = rel_err(var, want_var, sd * sd);
            let tol = self.tol();
            assert!(
                em <= tol,
                "{what} point {t}: mean {mean} vs {}",
                self.mean[t]
            );
            assert!(ev <= tol, "{what} point {t}: variance {var} vs {want_var}");
            worst = worst.max(em).max(ev);
        }
        worst
    }

    /// Relative error of a log marginal likelihood against scikit-learn's.
    fn check_lml(&self, what: &str, lml: f64) -> f64 {
        let e = rel_err(lml, self.lml, 1.0);
        assert!(e <= self.tol(), "{what}: lml {lml} vs {}", self.lml);
        e
    }
}

/// Worst errors seen, split by conditioning: `[well-conditioned, ill-conditioned]`.
#[derive(Default)]
struct Worst([f64; 2]);

impl Worst {
    fn add(&mut self, p: &Problem, e: f64) {
        let slot = &mut self.0[usize::from(p.cond > 1e7)];
        *slot = slot.max(e);
    }
}

#[test]
fn dense_gp_matches_sklearn() {
    let probs = problems();
    assert_eq!(probs.len(), 12);
    let mut worst = Worst::default();
    for (pi, p) in probs.iter().enumerate() {
        let gp = DenseGp::fit(&p.kernel, &p.x, &p.y).expect("fit");
        assert_eq!(gp.jitter(), 0.0);
        worst.add(
            p,
            p.check(&format!("dense, problem {pi}"), &gp.predict(&p.x_test)),
        );
        worst.add(
            p,
            p.check_lml(&format!("problem {pi}"), gp.log_marginal_likelihood()),
        );
    }
    eprintln!(
        "DenseGp vs scikit-learn: worst relative error {:e} (cond <= 1e7), {:e} (cond > 1e7)",
        worst.0[0], worst.0[1]
    );
}

/// The test points become candidates (after the training points); observing the training
/// points one by one must end at scikit-learn's posterior.
#[test]
fn candidate_gp_matches_sklearn() {
    let mut worst = Worst::default();
    for (pi, p) in problems().iter().enumerate() {
        let dims = p.x[0].len();
        let cands: Vec<f64> = p.x.iter().chain(&p.x_test).flatten().copied().collect();
        let mut gp = CandidateGp::new(p.kernel.clone(), cands, dims).expect("new");
        for (j, &y) in p.y.iter().enumerate() {
            gp.observe(j, y).expect("observe");
        }
        assert_eq!(gp.jitter_events(), 0);
        let n = p.x.len();
        let pred: Vec<(f64, f64)> = (0..p.x_test.len())
            .map(|t| (gp.mean(n + t), gp.variance(n + t)))
            .collect();
        worst.add(p, p.check(&format!("candidate, problem {pi}"), &pred));
        worst.add(
            p,
            p.check_lml(&format!("problem {pi}"), gp.log_marginal_likelihood()),
        );
    }
    eprintln!(
        "CandidateGp vs scikit-learn: worst relative error {:e} (cond <= 1e7), {:e} (cond > 1e7)",
        worst.0[0], worst.0[1]
    );
}

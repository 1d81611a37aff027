//! Which parameters matter: PED-ANOVA (Watanabe et al., IJCAI 2023) on the study's own
//! measurements, with a chance level and a test for each parameter and each pair.
//!
//! For a parameter with values `v`, let `p(v)` be their shares among all successful
//! measurements and `q(v)` among the best `γ` of them (γ = 10%, at least 10). Its importance is
//! the Pearson divergence `D = Σ p(v) (q(v)/p(v) − 1)² = Σ q(v)²/p(v) − 1`: zero when the best
//! configurations use the parameter's values as often as all of them do. PED-ANOVA needs no
//! model, so it is exact for what was measured; ktune's measurements are discrete, so the
//! shares are counted, not smoothed by kernels.
//!
//! A study samples its space unevenly and finitely, so some divergence is chance: with `m` of
//! `n` measurements in the best set drawn regardless of the value, `m (n−1)/(n−m) · D` follows
//! a χ² distribution with `K − 1` degrees of freedom (`K` values seen), whose mean gives the
//! chance level shown beside each parameter. A parameter counts as important when its
//! statistic passes the χ² quantile at 0.999 (strict, because every parameter and pair is
//! tested); the quantile is the Wilson–Hilferty approximation, written here because no crate
//! of the workspace provides the χ² distribution and the report needs nothing else of one.
//!
//! A parameter that matters only together with another (`b` good only with the right `c`)
//! can leave its marginal shares even. Pairs are therefore tested by a two-way analysis of
//! variance of the objective's logarithm (of the objective where some values are not
//! positive): the cell means of each pair of values against their best additive fit
//! (backfitted, weighted by the cells' counts, since a study samples unevenly), the
//! interaction's sum of squares over the within-cell variance compared with the χ² quantile
//! at 0.999 with `cells − K_a − K_b + 1` degrees of freedom. A pair is shown when it passes and
//! explains at least [`MIN_INTERACTION_SHARE`] of the variance. The best set is not used
//! here: selecting the best of an additive objective makes its parameters look dependent.
//!
//! Marginal effects are the geometric mean of the objective over the measurements with each
//! value, relative to that of all of them, with a 95% interval from the spread of the logs
//! (arithmetic means and differences where some values are not positive).

use std::collections::HashMap;

/// One parameter's importance.
#[derive(Clone, Debug)]
pub struct ParamImportance {
    /// The parameter.
    pub name: String,
    /// PED-ANOVA's divergence.
    pub divergence: f64,
    /// Its expected value by chance alone.
    pub chance: f64,
    /// Its share of all parameters' divergence beyond chance (0 to 1).
    pub share: f64,
    /// Whether it passes the test.
    pub important: bool,
}

/// A pair whose joint effect is more than the sum of their own.
#[derive(Clone, Debug)]
pub struct PairInteraction {
    /// The two parameters.
    pub names: (String, String),
    /// The share of the objective's variance (of its logarithm, where positive) that the
    /// interaction explains.
    pub share: f64,
}

/// The least share of the variance an interaction must explain to be shown: with 100,000
/// measurements, a negligible interaction is significant.
pub const MIN_INTERACTION_SHARE: f64 = 0.01;

/// The objective over the measurements with one value of a parameter.
#[derive(Clone, Debug)]
pub struct Effect {
    /// The value, as shown.
    pub value: String,
    /// How many successful measurements had it.
    pub count: usize,
    /// The geometric mean relative to all (or the difference of arithmetic means).
    pub centre: f64,
    /// The 95% interval of `centre`.
    pub low: f64,
    /// See `low`.
    pub high: f64,
}

/// What the analysis found.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// Successful measurements analysed, and how many formed the best set.
    pub measurements: usize,
    /// See `measurements`.
    pub best_set: usize,
    /// Every parameter with more than one value, most important first.
    pub params: Vec<ParamImportance>,
    /// Pairs that pass the interaction test, strongest first.
    pub pairs: Vec<PairInteraction>,
    /// Marginal effects of each parameter, in the order of `params`.
    pub effects: Vec<Vec<Effect>>,
    /// Whether effects are ratios of geometric means (else differences of means).
    pub ratios: bool,
}

/// Fewest successful measurements the analysis runs on.
pub const MIN_MEASUREMENTS: usize = 20;

/// Analyses `rows`: each a configuration's values (as text, one per parameter of `names`) and
/// its objective oriented so that lower is better. `None` with fewer than
/// [`MIN_MEASUREMENTS`].
pub fn analyse(names: &[String], rows: &[(Vec<String>, f64)], shown: &[f64]) -> Option<Analysis> {
    let n = rows.len();
    if n < MIN_MEASUREMENTS {
        return None;
    }
    let m = ((n as f64 * 0.1).ceil() as usize).max(10).min(n / 2);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| rows[a].1.total_cmp(&rows[b].1));
    let mut in_best = vec![false; n];
    for &i in &order[..m] {
        in_best[i] = true;
    }
    // Category indices per parameter, values in order of first appearance.
    let mut codes: Vec<Vec<usize>> = Vec::with_capacity(names.len());
    let mut labels: Vec<Vec<String>> = Vec::with_capacity(names.len());
    for d in 0..names.len() {
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut l = Vec::new();
        let c: Vec<usize> = rows
            .iter()
            .map(|(v, _)| {
                *index.entry(v[d].as_str()).or_insert_with(|| {
                    l.push(v[d].clone());
                    l.len() - 1
                })
            })
            .collect();
        codes.push(c);
        labels.push(l);
    }
    let scale = (n as f64 - 1.0) / (n - m) as f64 * m as f64;
    let mut params = Vec::new();
    for d in 0..names.len() {
        let k = labels[d].len();
        if k < 2 {
            continue;
        }
        let (all, best) = counts(&codes[d], &in_best, k);
        let divergence = pearson(&all, &best, n, m);
        let df = (k - 1) as f64;
        params.push(ParamImportance {
            name: names[d].clone(),
            divergence,
            chance: df / scale,
            share: 0.0,
            important: divergence * scale > chi2_quantile(df, Z_999),
        });
    }
    let beyond: f64 = params
        .iter()
        .map(|p| (p.divergence - p.chance).max(0.0))
        .sum();
    for p in &mut params {
        p.share = if beyond > 0.0 {
            (p.divergence - p.chance).max(0.0) / beyond
        } else {
            0.0
        };
    }
    let ratios = shown.iter().all(|v| *v > 0.0);
    let y: Vec<f64> = shown
        .iter()
        .map(|v| if ratios { v.ln() } else { *v })
        .collect();
    let pairs = interactions(names, &codes, &labels, &y);
    let mut ranked: Vec<(ParamImportance, usize)> = params
        .into_iter()
        .map(|p| {
            let d = names.iter().position(|x| *x == p.name).unwrap_or(0);
            (p, d)
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.0.share
            .total_cmp(&a.0.share)
            .then(b.0.divergence.total_cmp(&a.0.divergence))
    });
    let effects = ranked
        .iter()
        .map(|(_, d)| effects(&codes[*d], &labels[*d], shown, ratios))
        .collect();
    Some(Analysis {
        measurements: n,
        best_set: m,
        params: ranked.into_iter().map(|(p, _)| p).collect(),
        pairs,
        effects,
        ratios,
    })
}

/// The standard normal quantile at 0.999.
const Z_999: f64 = 3.090_232;

/// The χ² quantile with `df` degrees of freedom at the normal quantile `z` (Wilson–Hilferty;
/// within 1% of the exact value from 2 degrees of freedom at this level).
fn chi2_quantile(df: f64, z: f64) -> f64 {
    let a = 2.0 / (9.0 * df);
    df * (1.0 - a + z * a.sqrt()).powi(3)
}

fn counts(codes: &[usize], in_best: &[bool], k: usize) -> (Vec<f64>, Vec<f64>) {
    let (mut all, mut best) = (vec![0.0; k], vec![0.0; k]);
    for (&c, &b) in codes.iter().zip(in_best) {
        all[c] += 1.0;
        if b {
            best[c] += 1.0;
        }
    }
    (all, best)
}

/// `Σ q²/p − 1` from counts.
fn pearson(all: &[f64], best: &[f64], n: usize, m: usize) -> f64 {
    let s: f64 = all
        .iter()
        .zip(best)
        .filter(|(a, _)| **a > 0.0)
        .map(|(a, b)| {
            let (p, q) = (a / n as f64, b / m as f64);
            q * q / p
        })
        .sum();
    (s - 1.0).max(0.0)
}

fn interactions(
    names: &[String],
    codes: &[Vec<usize>],
    labels: &[Vec<String>],
    y: &[f64],
) -> Vec<PairInteraction> {
    let n = y.len();
    let mean = y.iter().sum::<f64>() / n as f64;
    let total: f64 = y.iter().map(|v| (v - mean).powi(2)).sum();
    let mut out = Vec::new();
    if total <= 0.0 {
        return out;
    }
    for a in 0..names.len() {
        for b in a + 1..names.len() {
            let (ka, kb) = (labels[a].len(), labels[b].len());
            if ka < 2 || kb < 2 {
                continue;
            }
            let cells = ka * kb;
            let (mut count, mut sum, mut squares) =
                (vec![0.0; cells], vec![0.0; cells], vec![0.0; cells]);
            for ((x, z), v) in codes[a].iter().zip(&codes[b]).zip(y) {
                let c = x * kb + z;
                count[c] += 1.0;
                sum[c] += v;
                squares[c] += v * v;
            }
            let filled: Vec<usize> = (0..cells).filter(|&c| count[c] > 0.0).collect();
            let within: f64 = filled
                .iter()
                .map(|&c| squares[c] - sum[c] * sum[c] / count[c])
                .sum();
            let df_within = n as f64 - filled.len() as f64;
            let df = filled.len() as f64 - ka as f64 - kb as f64 + 1.0;
            if df < 1.0 || df_within < 1.0 || within <= 0.0 {
                continue;
            }
            // The additive fit of the cell means, weighted by their counts (backfitting).
            let cell_mean = |c: usize| sum[c] / count[c];
            let (mut alpha, mut beta) = (vec![0.0; ka], vec![0.0; kb]);
            for _ in 0..50 {
                for (x, al) in alpha.iter_mut().enumerate() {
                    let (mut num, mut den) = (0.0, 0.0);
                    for (z, be) in beta.iter().enumerate() {
                        let c = x * kb + z;
                        if count[c] > 0.0 {
                            num += count[c] * (cell_mean(c) - mean - be);
                            den += count[c];
                        }
                    }
                    *al = if den > 0.0 { num / den } else { 0.0 };
                }
                for (z, be) in beta.iter_mut().enumerate() {
                    let (mut num, mut den) = (0.0, 0.0);
                    for (x, al) in alpha.iter().enumerate() {
                        let c = x * kb + z;
                        if count[c] > 0.0 {
                            num += count[c] * (cell_mean(c) - mean - al);
                            den += count[c];
                        }
                    }
                    *be = if den > 0.0 { num / den } else { 0.0 };
                }
            }
            let interaction: f64 = filled
                .iter()
                .map(|&c| {
                    let (x, z) = (c / kb, c % kb);
                    count[c] * (cell_mean(c) - mean - alpha[x] - beta[z]).powi(2)
                })
                .sum();
            let statistic = interaction / (within / df_within);
            let share = interaction / total;
            if statistic > chi2_quantile(df, Z_999) && share >= MIN_INTERACTION_SHARE {
                out.push(PairInteraction {
                    names: (names[a].clone(), names[b].clone()),
                    share,
                });
            }
        }
    }
    out.sort_by(|x, y| y.share.total_cmp(&x.share));
    out
}

fn effects(codes: &[usize], labels: &[String], shown: &[f64], ratios: bool) -> Vec<Effect> {
    let t = |v: f64| if ratios { v.ln() } else { v };
    let overall = shown.iter().map(|v| t(*v)).sum::<f64>() / shown.len() as f64;
    let mut groups: Vec<Vec<f64>> = vec![Vec::new(); labels.len()];
    for (&c, &v) in codes.iter().zip(shown) {
        groups[c].push(t(v));
    }
    // Numbers in numeric order, other values as first seen.
    let mut order: Vec<usize> = (0..labels.len()).collect();
    let numbers: Vec<Option<f64>> = labels.iter().map(|l| l.parse::<f64>().ok()).collect();
    if numbers.iter().all(Option::is_some) {
        order.sort_by(|&a, &b| {
            numbers[a]
                .unwrap_or(0.0)
                .total_cmp(&numbers[b].unwrap_or(0.0))
        });
    }
    order
        .into_iter()
        .map(|i| (&groups[i], &labels[i]))
        .map(|(g, label)| {
            let k = g.len() as f64;
            let mean = g.iter().sum::<f64>() / k;
            let se = if g.len() > 1 {
                (g.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt() / k.sqrt()
            } else {
                f64::NAN
            };
            let back = |x: f64| {
                if ratios {
                    (x - overall).exp()
                } else {
                    x - overall
                }
            };
            Effect {
                value: label.clone(),
                count: g.len(),
                centre: back(mean),
                low: back(mean - 1.96 * se),
                high: back(mean + 1.96 * se),
            }
        })
        .collect()
}

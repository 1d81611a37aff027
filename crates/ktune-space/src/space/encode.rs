//! Continuous encodings of configurations, for models and continuous-space strategies.
//!
//! - [`Encoding::Normalized`]: each parameter in `[0, 1]`, linear in the value index, or in the
//!   logarithm of the value for parameters marked log-scale (BaCO, section 4.1). A parameter
//!   with a single value encodes as 0.
//! - [`Encoding::EpsSpaced`]: the encoding of the PSO section of the constraint-aware EA paper
//!   (and Kernel Tuner's `scale_from_params`): with `ε = 1 / (largest domain size)`, value
//!   index `i` of every parameter maps to `(i + 0.5) ε`, so a step of `ε` in any dimension
//!   reaches a different value; parameter `d` lives in `[0, m_d ε]`.
//!
//! Decoding snaps each coordinate to the nearest value ([`Encoder::decode`], which may give an
//! invalid configuration) or finds the valid configuration nearest by Euclidean distance in
//! the encoding ([`Encoder::decode_valid`], exact: squared distances add up over groups, so
//! each group is searched on its own).

use super::{Configuration, SearchSpace};

/// Which encoding to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// `[0, 1]` per parameter, by value index (by log value where marked log-scale).
    Normalized,
    /// `(i + 0.5) ε` per value index, `ε = 1 / max domain size`.
    EpsSpaced,
}

/// Coordinates of every value of every parameter under one encoding.
#[derive(Clone, Debug)]
pub struct Encoder {
    encoding: Encoding,
    /// `coords[d][i]`: coordinate of value `i` of parameter `d`.
    coords: Vec<Vec<f64>>,
    /// `(coordinate, value index)` sorted by coordinate, for nearest look-ups.
    sorted: Vec<Vec<(f64, u32)>>,
    bounds: Vec<(f64, f64)>,
}

impl SearchSpace {
    /// The encoder for `encoding` on this space.
    pub fn encoder(&self, encoding: Encoding) -> Encoder {
        let eps = 1.0 / self.params.iter().map(|p| p.len()).max().unwrap_or(1) as f64;
        let mut coords = Vec::with_capacity(self.dims());
        let mut bounds = Vec::with_capacity(self.dims());
        for p in &self.params {
            let m = p.len();
            let c: Vec<f64> = match encoding {
                Encoding::EpsSpaced => (0..m).map(|i| (i as f64 + 0.5) * eps).collect(),
                Encoding::Normalized if m == 1 => vec![0.0],
                Encoding::Normalized if p.is_log() => {
                    let logs: Vec<f64> = p
                        .values()
                        .iter()
                        .map(|v| v.as_f64().unwrap_or(1.0).ln())
                        .collect();
                    let (lo, hi) = logs
                        .iter()
                        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                            (a.min(x), b.max(x))
                        });
                    logs.iter().map(|x| (x - lo) / (hi - lo)).collect()
                }
                Encoding::Normalized => (0..m).map(|i| i as f64 / (m - 1) as f64).collect(),
            };
            bounds.push(match encoding {
                Encoding::EpsSpaced => (0.0, m as f64 * eps),
                Encoding::Normalized => (0.0, 1.0),
            });
            coords.push(c);
        }
        let sorted = coords
            .iter()
            .map(|c| {
                let mut s: Vec<(f64, u32)> =
                    c.iter().enumerate().map(|(i, &x)| (x, i as u32)).collect();
                s.sort_by(|a, b| a.0.total_cmp(&b.0));
                s
            })
            .collect();
        Encoder {
            encoding,
            coords,
            sorted,
            bounds,
        }
    }
}

impl Encoder {
    /// The encoding.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Lower and upper bound of each coordinate.
    pub fn bounds(&self) -> &[(f64, f64)] {
        &self.bounds
    }

    /// The coordinate of value index `i` of parameter `d`.
    pub fn coordinate(&self, d: usize, i: u32) -> f64 {
        self.coords[d][i as usize]
    }

    /// Encodes a configuration.
    pub fn encode(&self, config: &[u32]) -> Vec<f64> {
        config
            .iter()
            .zip(&self.coords)
            .map(|(&i, c)| c[i as usize])
            .collect()
    }

    /// Snaps every coordinate to its nearest value (the result may violate constraints).
    pub fn decode(&self, x: &[f64]) -> Configuration {
        x.iter()
            .zip(&self.sorted)
            .map(|(&v, s)| nearest(s, v))
            .collect()
    }

    /// The valid configuration nearest to `x` by Euclidean distance in this encoding.
    pub fn decode_valid(&self, space: &SearchSpace, x: &[f64]) -> Configuration {
        let mut out = self.decode(x);
        for g in &space.groups {
            let Some(_) = g.row(0) else {
                continue; // a free parameter: the per-coordinate snap is already nearest
            };
            let mut best = (f64::INFINITY, 0usize);
            for r in 0..g.len() as usize {
                let row = g.row(r).unwrap_or(&[]);
                let d: f64 = g
                    .params
                    .iter()
                    .zip(row)
                    .map(|(&p, &v)| {
                        let t = self.coords[p][v as usize] - x[p];
                        t * t
                    })
                    .sum();
                if d < best.0 {
                    best = (d, r);
                }
            }
            g.write(best.1 as u64, &mut out);
        }
        out
    }
}

fn nearest(sorted: &[(f64, u32)], x: f64) -> u32 {
    let i = sorted.partition_point(|&(c, _)| c < x);
    match (i.checked_sub(1).map(|j| sorted[j]), sorted.get(i)) {
        (Some(a), Some(b)) => {
            if x - a.0 <= b.0 - x {
                a.1
            } else {
                b.1
            }
        }
        (Some(a), None) => a.1,
        (None, Some(b)) => b.1,
        (None, None) => 0,
    }
}

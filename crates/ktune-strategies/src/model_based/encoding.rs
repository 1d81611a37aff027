//! The mixed-type encoding of configurations for Gaussian processes with one distance per
//! parameter type (BaCO, section 4.1), shared by the strategies that use such models.
//!
//! - Integer and real parameters: one coordinate, the value normalised to `[0, 1]` over the
//!   domain, on the logarithmic scale when the parameter is marked `log` or when its values are
//!   spaced geometrically (see [`spaced_geometrically`]); Euclidean distance.
//! - Ordinal parameters: one coordinate, the position in the declared order normalised to
//!   `[0, 1]`; Euclidean distance.
//! - Categorical and boolean parameters: one coordinate, the value's index; Hamming distance.
//! - Permutations of `n` items: `n` coordinates, the position of each item; Spearman's rank
//!   distance by default, Kendall's or Hamming on request, or the whole ordering as one
//!   categorical value (the naive choice of BaCO's ablation).
//! - Parameters with a single value carry no information and are left out.
//!
//! Every parameter's contribution to the squared distance is at most 1, so one set of
//! lengthscale priors fits all of them.

use ktune_model::{Block, Distance, Metric};
use ktune_space::{ParamKind, SearchSpace, Value};
use serde::Deserialize;

/// How a permutation parameter is compared with another ordering of its items.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PermutationDistance {
    /// Sum of squared moves of the items (BaCO's default: large moves weigh most).
    Spearman,
    /// Pairs of items whose order differs.
    Kendall,
    /// Items whose position differs.
    Hamming,
    /// The ordering as one categorical value: equal or different.
    Categorical,
}

/// How one parameter becomes coordinates.
#[derive(Clone, Debug, PartialEq)]
enum Coding {
    /// A single-valued parameter: no coordinate.
    Skip,
    /// One coordinate per value index (numeric by value or ordinal by position).
    Table(Vec<f64>),
    /// The value index itself, compared for equality.
    Index,
    /// The positions of a permutation's items, one coordinate each.
    Positions { items: usize },
}

/// The mixed encoding of a search space's configurations.
#[derive(Clone, Debug, PartialEq)]
pub struct MixedEncoding {
    codings: Vec<Coding>,
    dims: usize,
    metric: Metric,
    /// Per space parameter, whether the log scale was chosen (marked or detected).
    log: Vec<bool>,
}

/// Whether positive `values` are closer to evenly spaced on the logarithmic scale than on
/// the linear one (1, 2, 4, 8 is; 16, 32, 48, 64 is not): such parameters are "innately
/// exponential" (tile sizes, block sizes in powers of two), and BaCO measures them on the log
/// scale. Needs three distinct positive values spanning at least a factor of 4.
pub fn spaced_geometrically(values: &[f64]) -> bool {
    let mut v: Vec<f64> = values.to_vec();
    if v.len() < 3 || v.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
        return false;
    }
    v.sort_by(f64::total_cmp);
    v.dedup();
    if v.len() < 3 || v[v.len() - 1] / v[0] < 4.0 {
        return false;
    }
    // The coefficient of variation of the gaps, on each scale: smaller is more even.
    let unevenness = |x: &[f64]| {
        let gaps: Vec<f64> = x.windows(2).map(|w| w[1] - w[0]).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean) * (g - mean)).sum::<f64>() / gaps.len() as f64;
        var.sqrt() / mean
    };
    let logs: Vec<f64> = v.iter().map(|x| x.ln()).collect();
    unevenness(&logs) < unevenness(&v)
}

/// An extra coordinate per value of an integer parameter: how many times 2 divides it, scaled
/// to `[0, 1]` over the domain. GPU kernels run fastest at sizes aligned to warps, memory
/// transactions and banks (16, 32, 64, 128 threads; not 48 or 80; tiles of 2 or 4, not 3), a
/// pattern no distance on the value alone can express: 64 sits between 48 and 80. `None` where
/// the coordinate would add nothing: a non-integer or non-positive domain, a single level of
/// alignment, or alignment that only grows with the value (1, 2, 4, 8: the value's own
/// coordinate orders them already).
pub fn alignment(values: &[Value]) -> Option<Vec<f64>> {
    let twos: Vec<u32> = values
        .iter()
        .map(|v| match v {
            Value::Int(i) if *i > 0 => Some(i.trailing_zeros()),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let (lo, hi) = (*twos.iter().min()?, *twos.iter().max()?);
    let mut by_value: Vec<(i64, u32)> = values
        .iter()
        .zip(&twos)
        .filter_map(|(v, &t)| match v {
            Value::Int(i) => Some((*i, t)),
            _ => None,
        })
        .collect();
    by_value.sort_unstable();
    if hi == lo || by_value.windows(2).all(|w| w[0].1 <= w[1].1) {
        return None;
    }
    Some(
        twos.iter()
            .map(|&t| f64::from(t - lo) / f64::from(hi - lo))
            .collect(),
    )
}

/// How much an initial sample favours each value of an integer parameter whose alignment
/// varies out of step with its value (those [`alignment`] gives a coordinate): `1 / q^power`
/// for a value `2^k · q` with `q` odd, relative to the domain's smallest `q`. A block size of
/// 64 or 128 (`q = 1`) weighs 1, 48 and 96 (`q = 3`) `1/9` at power 2, 80 `1/25`, 112 `1/49`;
/// tiles of 1, 2 and 4 weigh 1 and a tile of 3 `1/9`. `None` where [`alignment`] is `None`
/// (every value then weighs the same).
///
/// Why: the same hardware fact as the alignment coordinate, used before any result exists. On
/// the 12 shared spaces 20 configurations drawn this way score 0.41 (power 2) to 0.44 (power
/// 4) above uniform ones, and at least as well on every space (`bench/aligned_sample.py`,
/// docs/benchmarks/auto.md). Where the optimum is not aligned (a tile of 3 on
/// convolution_A100) its values are still drawn, only less often.
pub fn aligned_weights(values: &[Value], power: f64) -> Option<Vec<f64>> {
    alignment(values)?;
    let odd: Vec<f64> = values
        .iter()
        .map(|v| match v {
            Value::Int(i) => (*i >> i.trailing_zeros()) as f64,
            _ => 1.0,
        })
        .collect();
    let least = odd.iter().copied().fold(f64::INFINITY, f64::min);
    Some(odd.iter().map(|q| (q / least).powf(-power)).collect())
}

/// The lexicographic rank of a permutation of `0..n` (its index among the `n!` orderings a
/// permutation parameter's domain lists).
pub fn permutation_rank(perm: &[u32]) -> usize {
    let n = perm.len();
    let mut rank = 0usize;
    let mut factorial = vec![1usize; n + 1];
    for i in 1..=n {
        factorial[i] = factorial[i - 1].saturating_mul(i);
    }
    for i in 0..n {
        let smaller_after = perm[i + 1..].iter().filter(|&&x| x < perm[i]).count();
        rank = rank.saturating_add(smaller_after.saturating_mul(factorial[n - 1 - i]));
    }
    rank
}

impl MixedEncoding {
    /// The encoding of `space`'s parameters; permutation parameters use `distance`, or the
    /// distance `per_parameter` gives for their name.
    pub fn new(
        space: &SearchSpace,
        distance: PermutationDistance,
        per_parameter: &dyn Fn(&str) -> Option<PermutationDistance>,
    ) -> MixedEncoding {
        let mut codings = Vec::new();
        let mut blocks = Vec::new();
        let mut log = Vec::new();
        for p in space.params() {
            let values = p.values();
            let mut is_log = false;
            let coding = if values.len() <= 1 {
                Coding::Skip
            } else {
                match p.kind() {
                    ParamKind::Permutation { items } => {
                        match per_parameter(p.name()).unwrap_or(distance) {
                            PermutationDistance::Categorical => {
                                blocks.push((1, Distance::Hamming));
                                Coding::Index
                            }
                            d => {
                                blocks.push((
                                    items.len(),
                                    match d {
                                        PermutationDistance::Kendall => Distance::Kendall,
                                        PermutationDistance::Hamming => {
                                            Distance::PermutationHamming
                                        }
                                        _ => Distance::Spearman,
                                    },
                                ));
                                Coding::Positions { items: items.len() }
                            }
                        }
                    }
                    ParamKind::Categorical | ParamKind::Boolean => {
                        blocks.push((1, Distance::Hamming));
                        Coding::Index
                    }
                    ParamKind::Ordinal => {
                        blocks.push((1, Distance::Euclidean));
                        let last = (values.len() - 1) as f64;
                        Coding::Table((0..values.len()).map(|i| i as f64 / last).collect())
                    }
                    ParamKind::Integer | ParamKind::Real => {
                        let nums: Vec<f64> = values.iter().filter_map(Value::as_f64).collect();
                        if nums.len() != values.len() {
                            blocks.push((1, Distance::Hamming));
                            Coding::Index
                        } else {
                            is_log = p.is_log() || spaced_geometrically(&nums);
                            let scaled: Vec<f64> = if is_log {
                                nums.iter().map(|x| x.ln()).collect()
                            } else {
                                nums
                            };
                            let lo = scaled.iter().copied().fold(f64::INFINITY, f64::min);
                            let hi = scaled.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                            let span = if hi > lo { hi - lo } else { 1.0 };
                            blocks.push((1, Distance::Euclidean));
                            Coding::Table(scaled.iter().map(|x| (x - lo) / span).collect())
                        }
                    }
                }
            };
            codings.push(coding);
            log.push(is_log);
        }
        let dims = blocks.iter().map(|b| b.0).sum();
        MixedEncoding {
            codings,
            dims,
            metric: Metric::Parameters(
                blocks
                    .into_iter()
                    .map(|(len, distance)| Block { len, distance })
                    .collect(),
            ),
            log,
        }
    }

    /// Coordinates per configuration.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// The metric over the coordinates (one block per encoded parameter).
    pub fn metric(&self) -> &Metric {
        &self.metric
    }

    /// Whether space parameter `p` is encoded on the log scale.
    pub fn is_log(&self, p: usize) -> bool {
        self.log[p]
    }

    /// Writes the coordinates of `config` (value indices) into `out` (`dims()` long).
    pub fn write(&self, space: &SearchSpace, config: &[u32], out: &mut [f64]) {
        let mut k = 0;
        for (p, coding) in self.codings.iter().enumerate() {
            let v = config[p] as usize;
            match coding {
                Coding::Skip => {}
                Coding::Table(t) => {
                    out[k] = t[v];
                    k += 1;
                }
                Coding::Index => {
                    out[k] = v as f64;
                    k += 1;
                }
                Coding::Positions { items } => {
                    if let Value::Perm(order) = &space.params()[p].values()[v] {
                        // order[i] is the item at position i.
                        for (position, &item) in order.iter().enumerate() {
                            out[k + item as usize] = position as f64;
                        }
                    }
                    k += items;
                }
            }
        }
    }

    /// The coordinates of `config`.
    pub fn encode(&self, space: &SearchSpace, config: &[u32]) -> Vec<f64> {
        let mut out = vec![0.0; self.dims];
        self.write(space, config, &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ktune_space::Parameter;

    #[test]
    fn geometric_spacing_is_detected() {
        assert!(spaced_geometrically(&[1.0, 2.0, 4.0, 8.0, 16.0]));
        assert!(spaced_geometrically(&[
            32.0, 64.0, 128.0, 256.0, 512.0, 1024.0
        ]));
        assert!(!spaced_geometrically(&[16.0, 32.0, 48.0, 64.0, 80.0]));
        assert!(!spaced_geometrically(&[1.0, 2.0, 3.0, 4.0]));
        // Too few values, too narrow, or not all positive.
        assert!(!spaced_geometrically(&[1.0, 100.0]));
        assert!(!spaced_geometrically(&[2.0, 3.0, 4.5]));
        assert!(!spaced_geometrically(&[0.0, 1.0, 2.0, 4.0]));
    }

    #[test]
    fn permutation_ranks_are_the_domains_indices() {
        let p = Parameter::permutation("order", ["i", "j", "k", "l"]).unwrap();
        for (index, v) in p.values().iter().enumerate() {
            let Value::Perm(order) = v else { panic!() };
            assert_eq!(permutation_rank(order), index);
        }
    }

    #[test]
    fn each_type_gets_its_coordinates_and_distance() {
        let space = SearchSpace::new(
            vec![
                Parameter::integer("tile", [1, 2, 4, 8]).unwrap(),
                Parameter::integer("block", [16, 32, 48, 64]).unwrap(),
                Parameter::categorical("layout", ["row", "col", "tiled"]).unwrap(),
                Parameter::integer("fixed", [3]).unwrap(),
                Parameter::permutation("order", ["i", "j", "k"]).unwrap(),
            ],
            &[] as &[&str],
        )
        .unwrap();
        let e = MixedEncoding::new(&space, PermutationDistance::Kendall, &|_| None);
        assert_eq!(e.dims(), 1 + 1 + 1 + 3);
        assert!(e.is_log(0) && !e.is_log(1));
        let Metric::Parameters(blocks) = e.metric() else {
            panic!()
        };
        let kinds: Vec<(usize, Distance)> = blocks.iter().map(|b| (b.len, b.distance)).collect();
        assert_eq!(
            kinds,
            [
                (1, Distance::Euclidean),
                (1, Distance::Euclidean),
                (1, Distance::Hamming),
                (3, Distance::Kendall)
            ]
        );
        // tile = 4 (log scale: 2/3), block = 48 (linear: 2/3), layout = tiled, order = the
        // fourth ordering [1, 2, 0]: item 1 first, item 2 second, item 0 third.
        let order = space.params()[4]
            .index_of(&Value::Perm(vec![1, 2, 0]))
            .unwrap() as u32;
        let x = e.encode(&space, &[2, 2, 2, 0, order]);
        assert!((x[0] - 2.0 / 3.0).abs() < 1e-12 && (x[1] - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(&x[2..], &[2.0, 2.0, 0.0, 1.0]);
        // A per-parameter choice wins over the default.
        let e = MixedEncoding::new(&space, PermutationDistance::Kendall, &|name| {
            (name == "order").then_some(PermutationDistance::Categorical)
        });
        assert_eq!(e.dims(), 4);
        assert_eq!(e.encode(&space, &[0, 0, 0, 0, order])[3], order as f64);
    }

    #[test]
    fn aligned_weights_favour_values_with_small_odd_parts() {
        let block: Vec<Value> = (1..=8).map(|k| Value::Int(16 * k)).collect();
        let w = aligned_weights(&block, 2.0).unwrap();
        // 16, 32, 48, 64, 80, 96, 112, 128
        let want = [
            1.0,
            1.0,
            1.0 / 9.0,
            1.0,
            1.0 / 25.0,
            1.0 / 9.0,
            1.0 / 49.0,
            1.0,
        ];
        for (got, want) in w.iter().zip(want) {
            assert!((got - want).abs() < 1e-12, "{w:?}");
        }
        // Relative to the smallest odd part: 3, 6, 9, 12 weigh 1, 1, 1/9, 1.
        let threes: Vec<Value> = [3, 6, 9, 12].into_iter().map(Value::Int).collect();
        let w = aligned_weights(&threes, 1.0).unwrap();
        assert!(
            (w[2] - 1.0 / 3.0).abs() < 1e-12 && w[0] == 1.0 && w[3] == 1.0,
            "{w:?}"
        );
        // Powers of two only, or reals: no preference.
        let pow2: Vec<Value> = [1, 2, 4, 8].into_iter().map(Value::Int).collect();
        assert!(aligned_weights(&pow2, 2.0).is_none());
        assert!(aligned_weights(&[Value::Real(1.5), Value::Real(3.0)], 2.0).is_none());
    }

    #[test]
    fn alignment_counts_the_factors_of_two_where_the_value_does_not() {
        let ints = |v: &[i64]| v.iter().map(|&i| Value::Int(i)).collect::<Vec<_>>();
        // 16..=128 in steps of 16: 2 divides 16 four times, 32 five, 48 four, 64 six, ...
        let t = alignment(&ints(&[16, 32, 48, 64, 80, 96, 112, 128])).unwrap();
        assert_eq!(
            t,
            [0.0, 1.0 / 3.0, 0.0, 2.0 / 3.0, 0.0, 1.0 / 3.0, 0.0, 1.0]
        );
        // Tiles of 3 are unaligned between aligned 2 and 4.
        assert_eq!(
            alignment(&ints(&[1, 2, 3, 4])).unwrap(),
            [0.0, 0.5, 0.0, 1.0]
        );
        // Nothing to add: powers of two (alignment grows with the value, in any declared
        // order), one level of alignment, or domains that are not positive integers.
        assert_eq!(alignment(&ints(&[1, 2, 4, 8])), None);
        assert_eq!(alignment(&ints(&[8, 4, 2, 1])), None);
        assert_eq!(alignment(&ints(&[1, 3, 5, 7])), None);
        assert_eq!(alignment(&ints(&[0, 2, 3])), None);
        assert_eq!(
            alignment(&[Value::Real(2.0), Value::Real(3.0), Value::Real(4.0)]),
            None
        );
        assert_eq!(alignment(&[Value::Bool(false), Value::Bool(true)]), None);
    }
}

//! A configuration's footprint: the logarithm of the product of its sizes, a feature the
//! feasibility forest sees beside the encoded parameters.
//!
//! Why: what a GPU kernel asks for (registers, shared memory, threads) grows with the product
//! of its block and tile sizes, not with any one of them. On convolution_W7800, where every
//! failure is a compilation that ran out of registers, nothing fails below a product of 2¹¹,
//! 2% fails at 2¹¹, 9% at 2¹², 57% at 2¹³ and all of it at 2¹⁴ (`bench/footprint_rates.py`;
//! `docs/benchmarks/auto.md`, "A footprint for the forest"). A forest on the parameters alone needs failures on several
//! sides of that surface before its trees draw it (each split is on one parameter); on the
//! footprint one split draws it from a single failure. It is a feature, not a rule: the
//! forest may as well not use it, and where the product says nothing (failures from a
//! switch, a divisibility) the other features decide. [`crate::model_based::monotone`] is
//! the rule, and it needs a configuration larger in every size.
//!
//! Which parameters are sizes: those [`size_values`] names, whose values are all positive
//! (a logarithm).

use ktune_space::{Encoder, SearchSpace};

use crate::roles::size_values;

/// Per size among the encoded dimensions: its position in the encoded point, and for each
/// of its values, the value's coordinate and logarithm.
#[derive(Clone, Debug)]
pub(crate) struct Footprint {
    terms: Vec<(usize, Vec<(f64, f64)>)>,
}

impl Footprint {
    /// The footprint of points encoded on `dims` (the parameters the model kept, in the
    /// point's order). `None` when none of them is a size.
    pub(crate) fn new(space: &SearchSpace, encoder: &Encoder, dims: &[usize]) -> Option<Self> {
        let terms: Vec<(usize, Vec<(f64, f64)>)> = dims
            .iter()
            .enumerate()
            .filter_map(|(pos, &d)| {
                let values = size_values(&space.params()[d])?;
                if values.iter().any(|&v| v <= 0.0 || !v.is_finite()) {
                    return None;
                }
                let table = values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (encoder.coordinate(d, i as u32), v.ln()))
                    .collect();
                Some((pos, table))
            })
            .collect();
        (!terms.is_empty()).then_some(Footprint { terms })
    }

    /// The footprint of encoded point `x`: each size's value read back from its coordinate
    /// (the nearest), their logarithms summed.
    pub(crate) fn of(&self, x: &[f64]) -> f64 {
        self.terms
            .iter()
            .map(|(pos, table)| {
                let c = x[*pos];
                table
                    .iter()
                    .min_by(|a, b| (a.0 - c).abs().total_cmp(&(b.0 - c).abs()))
                    .map_or(0.0, |&(_, ln)| ln)
            })
            .sum()
    }

    /// `x` with its footprint appended, in `buf`.
    pub(crate) fn append<'a>(&self, x: &[f64], buf: &'a mut Vec<f64>) -> &'a [f64] {
        buf.clear();
        buf.extend_from_slice(x);
        buf.push(self.of(x));
        buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ktune_space::{Encoding, Parameter, Value};

    #[test]
    fn the_footprint_is_the_log_of_the_product_of_the_sizes_the_model_kept() {
        let ints =
            |name: &str, v: &[i64]| Parameter::integer(name, v.to_vec()).expect("valid parameter");
        let params = vec![
            ints("block", &[32, 64, 128, 256]),
            ints("shmem", &[0, 1]),
            ints("tile", &[1, 2, 4]),
            ints("offset", &[0, 1, 2]),
            ints("unroll", &[1, 2, 8]),
        ];
        let space = SearchSpace::new(params, &[] as &[&str]).expect("a space");
        let encoder = space.encoder(Encoding::EpsSpaced);
        // The model dropped `unroll`; `shmem` has two values and `offset` a zero: not sizes.
        let dims = [0, 1, 2, 3];
        let f = Footprint::new(&space, &encoder, &dims).expect("block and tile are sizes");
        let c = space
            .configuration_of(&[
                Value::Int(128),
                Value::Int(1),
                Value::Int(4),
                Value::Int(2),
                Value::Int(8),
            ])
            .expect("in the space");
        let x: Vec<f64> = dims.iter().map(|&d| encoder.coordinate(d, c[d])).collect();
        assert!((f.of(&x) - (128.0f64 * 4.0).ln()).abs() < 1e-12);
        let mut buf = Vec::new();
        let row = f.append(&x, &mut buf);
        assert_eq!(row.len(), x.len() + 1);
        assert_eq!(&row[..x.len()], &x[..]);
        // Without a size among the dimensions kept, there is no footprint.
        assert!(Footprint::new(&space, &encoder, &[1, 3]).is_none());
    }
}

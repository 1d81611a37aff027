//! What a parameter is to the strategies that read a space's structure: a size or a switch.
//!
//! - **Sizes** ([`size_values`]): integer or real parameters of three values or more, ordered
//!   by value, such as block and tile sizes. What a GPU kernel asks for (shared memory,
//!   registers, threads) grows with them, so a failure rules out the larger ones
//!   ([`crate::model_based::monotone`]) and their product is the forest's footprint
//!   ([`crate::model_based::footprint`]).
//! - **Switches** ([`switches`]): the other parameters of more than one value: two-valued
//!   numbers (`use_shmem`, `read_only`), categories, ordinals and permutations (a loop
//!   order, an algorithm's name). Their combinations split a space into sub-spaces with
//!   landscapes of their own: the local search's switch kicks move between them
//!   ([`crate::local_search::switch_kick`]) and the model's kernel correlates them less
//!   ([`crate::model_based::sub_spaces`]).

use ktune_space::{ParamKind, Parameter, SearchSpace};

/// A parameter's values as numbers, when it is a size: an integer or real parameter of three
/// values or more (two-valued switches, categories, ordinals and permutations are not).
pub(crate) fn size_values(p: &Parameter) -> Option<Vec<f64>> {
    let numeric = matches!(p.kind(), ParamKind::Integer | ParamKind::Real);
    if !numeric || p.len() < 3 {
        return None;
    }
    p.values().iter().map(|v| v.as_f64()).collect()
}

/// The space's switches (dimensions): parameters of more than one value that are not sizes.
pub(crate) fn switches(space: &SearchSpace) -> Vec<usize> {
    (0..space.dims())
        .filter(|&d| {
            let p = &space.params()[d];
            p.len() > 1 && size_values(p).is_none()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Block and tile sizes are sizes; two-valued numbers, categories and permutations are
    /// switches; a parameter of one value is neither.
    #[test]
    fn sizes_and_switches() {
        let space = SearchSpace::new(
            vec![
                Parameter::integer("block", [32, 64, 128]).unwrap(),
                Parameter::integer("use_shmem", [0, 1]).unwrap(),
                Parameter::real("scale", [0.5, 1.0, 2.0]).unwrap(),
                Parameter::categorical("layout", ["row", "column", "tiled"]).unwrap(),
                Parameter::integer("filter", [15]).unwrap(),
                Parameter::permutation("order", ["i", "j", "k"]).unwrap(),
            ],
            &[] as &[&str],
        )
        .unwrap();
        let sizes: Vec<bool> = space
            .params()
            .iter()
            .map(|p| size_values(p).is_some())
            .collect();
        assert_eq!(sizes, [true, false, true, false, false, false]);
        assert_eq!(
            size_values(&space.params()[0]),
            Some(vec![32.0, 64.0, 128.0])
        );
        assert_eq!(switches(&space), vec![1, 3, 5]);
    }
}

//! One tree of the chain of trees: the feasible partial configurations of a set of parameters
//! that constraints link together, stored as value indices.

use rustc_hash::FxHashMap;

/// The feasible tuples of one group of parameters.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    /// Global parameter indices, in the group's storage order (the order the search assigned
    /// them; rows are lexicographic in it).
    pub params: Vec<usize>,
    /// Domain size of each of `params`.
    pub radix: Vec<u32>,
    pub rows: Rows,
}

#[derive(Clone, Debug)]
pub(crate) enum Rows {
    /// A single parameter that no constraint mentions: every value is feasible, nothing stored.
    Free,
    /// Enumerated tuples, `k = params.len()` value indices each, sorted lexicographically (the
    /// first parameter varies slowest), with a hash index for membership.
    Enumerated { data: Vec<u32>, index: RowIndex },
}

/// Membership index of an enumerated group: tuples are packed into one `u64` by mixed radix
/// when the group's Cartesian product fits, which makes hashing cheap.
#[derive(Clone, Debug)]
pub(crate) enum RowIndex {
    Packed(FxHashMap<u64, u32>),
    Wide(FxHashMap<Box<[u32]>, u32>),
}

impl Group {
    pub fn free(param: usize, size: u32) -> Group {
        Group {
            params: vec![param],
            radix: vec![size],
            rows: Rows::Free,
        }
    }

    /// Builds an enumerated group from rows that are already sorted lexicographically and
    /// distinct (as backtracking produces them): only the index is built.
    pub fn from_sorted(params: Vec<usize>, radix: Vec<u32>, data: Vec<u32>) -> Group {
        let k = params.len();
        debug_assert!(
            data.chunks_exact(k)
                .zip(data.chunks_exact(k).skip(1))
                .all(|(a, b)| a < b)
        );
        let index = if packable(&radix) {
            let mut map = FxHashMap::with_capacity_and_hasher(data.len() / k, Default::default());
            for (rank, row) in data.chunks_exact(k).enumerate() {
                map.insert(pack(&radix, row), rank as u32);
            }
            RowIndex::Packed(map)
        } else {
            let mut map = FxHashMap::with_capacity_and_hasher(data.len() / k, Default::default());
            for (rank, row) in data.chunks_exact(k).enumerate() {
                map.insert(row.to_vec().into_boxed_slice(), rank as u32);
            }
            RowIndex::Wide(map)
        };
        Group {
            params,
            radix,
            rows: Rows::Enumerated { data, index },
        }
    }

    /// Builds an enumerated group from unsorted rows (`k` indices each, in `params` order).
    pub fn enumerated(params: Vec<usize>, radix: Vec<u32>, mut data: Vec<u32>) -> Group {
        let k = params.len();
        let n = data.len() / k;
        if packable(&radix) {
            let mut keys: Vec<u64> = data.chunks_exact(k).map(|r| pack(&radix, r)).collect();
            keys.sort_unstable();
            keys.dedup();
            data.clear();
            let mut index = FxHashMap::with_capacity_and_hasher(keys.len(), Default::default());
            for (rank, &key) in keys.iter().enumerate() {
                unpack_into(&radix, key, &mut data);
                index.insert(key, rank as u32);
            }
            Group {
                params,
                radix,
                rows: Rows::Enumerated {
                    data,
                    index: RowIndex::Packed(index),
                },
            }
        } else {
            let mut order: Vec<usize> = (0..n).collect();
            order
                .sort_unstable_by(|&a, &b| data[a * k..(a + 1) * k].cmp(&data[b * k..(b + 1) * k]));
            order.dedup_by(|a, b| data[*a * k..(*a + 1) * k] == data[*b * k..(*b + 1) * k]);
            let mut sorted = Vec::with_capacity(order.len() * k);
            let mut index = FxHashMap::with_capacity_and_hasher(order.len(), Default::default());
            for (rank, &i) in order.iter().enumerate() {
                let row = &data[i * k..(i + 1) * k];
                sorted.extend_from_slice(row);
                index.insert(row.to_vec().into_boxed_slice(), rank as u32);
            }
            Group {
                params,
                radix,
                rows: Rows::Enumerated {
                    data: sorted,
                    index: RowIndex::Wide(index),
                },
            }
        }
    }

    /// Number of feasible tuples.
    pub fn len(&self) -> u64 {
        match &self.rows {
            Rows::Free => u64::from(self.radix[0]),
            Rows::Enumerated { data, .. } => (data.len() / self.params.len()) as u64,
        }
    }

    /// Writes tuple `rank` into the full configuration `out`.
    #[inline]
    pub fn write(&self, rank: u64, out: &mut [u32]) {
        match &self.rows {
            Rows::Free => out[self.params[0]] = rank as u32,
            Rows::Enumerated { data, .. } => {
                let k = self.params.len();
                let row = &data[rank as usize * k..(rank as usize + 1) * k];
                for (&p, &v) in self.params.iter().zip(row) {
                    out[p] = v;
                }
            }
        }
    }

    /// Tuple `rank` as a slice (enumerated groups) or `None` (free groups: the tuple is `[rank]`).
    #[inline]
    pub fn row(&self, rank: usize) -> Option<&[u32]> {
        match &self.rows {
            Rows::Free => None,
            Rows::Enumerated { data, .. } => {
                let k = self.params.len();
                Some(&data[rank * k..(rank + 1) * k])
            }
        }
    }

    /// The rank of the group's part of `config`, if that part is feasible.
    #[inline]
    pub fn rank_of(&self, config: &[u32]) -> Option<u64> {
        match &self.rows {
            Rows::Free => {
                let v = config[self.params[0]];
                (v < self.radix[0]).then_some(u64::from(v))
            }
            Rows::Enumerated { index, .. } => match index {
                RowIndex::Packed(map) => {
                    let mut key = 0u64;
                    for (&p, &r) in self.params.iter().zip(&self.radix) {
                        let v = config[p];
                        if v >= r {
                            return None;
                        }
                        key = key * u64::from(r) + u64::from(v);
                    }
                    map.get(&key).map(|&i| u64::from(i))
                }
                RowIndex::Wide(map) => {
                    let row: Vec<u32> = self.params.iter().map(|&p| config[p]).collect();
                    map.get(row.as_slice()).map(|&i| u64::from(i))
                }
            },
        }
    }

    /// Bytes held by this group (rows and index), for reports.
    pub fn memory_bytes(&self) -> usize {
        let base = self.params.len() * (std::mem::size_of::<usize>() + 4);
        match &self.rows {
            Rows::Free => base,
            Rows::Enumerated { data, index } => {
                let idx = match index {
                    // hashbrown: one control byte plus the entry per bucket.
                    RowIndex::Packed(m) => m.capacity() * (12 + 1),
                    RowIndex::Wide(m) => {
                        m.capacity() * (16 + 4 + 1) + m.len() * self.params.len() * 4
                    }
                };
                base + data.capacity() * 4 + idx
            }
        }
    }
}

/// Whether the product of `radix` fits in a `u64`.
pub(crate) fn packable(radix: &[u32]) -> bool {
    radix
        .iter()
        .try_fold(1u64, |acc, &r| acc.checked_mul(u64::from(r)))
        .is_some()
}

#[inline]
fn pack(radix: &[u32], row: &[u32]) -> u64 {
    row.iter()
        .zip(radix)
        .fold(0u64, |acc, (&v, &r)| acc * u64::from(r) + u64::from(v))
}

fn unpack_into(radix: &[u32], mut key: u64, out: &mut Vec<u32>) {
    let start = out.len();
    out.resize(start + radix.len(), 0);
    for (slot, &r) in out[start..].iter_mut().zip(radix).rev() {
        *slot = (key % u64::from(r)) as u32;
        key /= u64::from(r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enumerated_groups_sort_dedup_and_index() {
        let g = Group::enumerated(vec![0, 2], vec![3, 4], vec![2, 1, 0, 3, 2, 1, 1, 0]);
        assert_eq!(g.len(), 3);
        assert_eq!(g.row(0), Some(&[0, 3][..]));
        assert_eq!(g.row(2), Some(&[2, 1][..]));
        assert_eq!(g.rank_of(&[1, 99, 0]), Some(1));
        assert_eq!(g.rank_of(&[1, 99, 1]), None);
        assert_eq!(g.rank_of(&[7, 99, 1]), None);
        let mut out = vec![9; 3];
        g.write(2, &mut out);
        assert_eq!(out, vec![2, 9, 1]);
    }

    #[test]
    fn wide_groups_behave_like_packed_ones() {
        let radix = vec![u32::MAX; 3];
        assert!(!packable(&radix));
        let g = Group::enumerated(vec![0, 1, 2], radix, vec![5, 5, 5, 1, 2, 3, 1, 2, 3]);
        assert_eq!(g.len(), 2);
        assert_eq!(g.row(0), Some(&[1, 2, 3][..]));
        assert_eq!(g.rank_of(&[5, 5, 5]), Some(1));
        assert_eq!(g.rank_of(&[5, 5, 4]), None);
    }
}

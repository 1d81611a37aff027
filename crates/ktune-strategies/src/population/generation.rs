//! A generation under evaluation: the bookkeeping the genetic algorithm and NSGA-II share. Its
//! members are handed out in breeding order; one the study has measured already is known at
//! once, without a proposal (memoised); they are told back in any order; and those handed out
//! but never told (a driver that dropped them) count as failed once nothing else is left to
//! hand out, so that the search goes on.

use std::collections::VecDeque;

use ktune_core::{History, Observation};
use ktune_space::Configuration;
use rustc_hash::FxHashMap;

/// Where a member of the generation stands.
#[derive(Clone, Debug)]
pub(crate) enum State<T> {
    /// Not yet handed out.
    Pending,
    /// Handed out, not yet told.
    Asked,
    /// Its result is known (`None`: it failed).
    Known(Option<T>),
}

/// A member of the generation.
#[derive(Clone, Debug)]
pub(crate) struct Member<T> {
    pub(crate) config: Configuration,
    pub(crate) state: State<T>,
}

impl<T> Member<T> {
    /// Its result, when known and not a failure.
    pub(crate) fn known(&self) -> Option<&T> {
        match &self.state {
            State::Known(v) => v.as_ref(),
            _ => None,
        }
    }
}

/// What [`Generation::hand_out`] ended with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Handed {
    /// As many configurations as were asked for.
    Full,
    /// Fewer, and the rest of the generation is out: the next is bred once these are told.
    Waiting,
    /// Every member's result is known: the next generation can be bred.
    Done,
}

/// The current generation, in breeding order.
#[derive(Clone, Debug)]
pub(crate) struct Generation<T> {
    members: Vec<Member<T>>,
    /// Position of each member (look-up only).
    index: FxHashMap<Configuration, usize>,
    /// Members not yet handed out, in order.
    pending: VecDeque<usize>,
    /// Members handed out and not yet told.
    outstanding: usize,
}

impl<T> Default for Generation<T> {
    fn default() -> Self {
        Generation {
            members: Vec::new(),
            index: FxHashMap::default(),
            pending: VecDeque::new(),
            outstanding: 0,
        }
    }
}

impl<T> Generation<T> {
    /// A generation of `configs` (distinct), none handed out.
    pub(crate) fn new(configs: Vec<Configuration>) -> Self {
        let index = configs
            .iter()
            .enumerate()
            .map(|(i, c)| (c.clone(), i))
            .collect();
        let pending = (0..configs.len()).collect();
        let members = configs
            .into_iter()
            .map(|config| Member {
                config,
                state: State::Pending,
            })
            .collect();
        Generation {
            members,
            index,
            pending,
            outstanding: 0,
        }
    }

    /// Its members, in breeding order.
    pub(crate) fn members(&self) -> &[Member<T>] {
        &self.members
    }

    /// Its members, leaving the generation empty.
    pub(crate) fn take_members(&mut self) -> Vec<Member<T>> {
        std::mem::take(self).members
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Adds members not yet handed out to `out` until it holds `n`; a member the study has
    /// measured already is known from `history` through `result` instead.
    pub(crate) fn hand_out(
        &mut self,
        history: &History,
        n: usize,
        out: &mut Vec<Configuration>,
        result: impl Fn(&Observation) -> Option<T>,
    ) -> Handed {
        loop {
            if out.len() >= n {
                return Handed::Full;
            }
            if let Some(i) = self.pending.pop_front() {
                let m = &mut self.members[i];
                if !matches!(m.state, State::Pending) {
                    continue;
                }
                if let Some(o) = history.get(&m.config) {
                    m.state = State::Known(result(o));
                    continue;
                }
                m.state = State::Asked;
                self.outstanding += 1;
                out.push(m.config.clone());
                continue;
            }
            if self.outstanding > 0 {
                if !out.is_empty() {
                    return Handed::Waiting;
                }
                // Handed out but never told: they count as failed, so the search goes on.
                for m in &mut self.members {
                    if matches!(m.state, State::Asked) {
                        m.state = State::Known(None);
                    }
                }
                self.outstanding = 0;
            }
            return Handed::Done;
        }
    }

    /// Learns the results of its members among `observations` (others are ignored).
    pub(crate) fn tell(
        &mut self,
        observations: &[Observation],
        result: impl Fn(&Observation) -> Option<T>,
    ) {
        for o in observations {
            if let Some(&i) = self.index.get(&o.config) {
                let m = &mut self.members[i];
                match m.state {
                    State::Known(_) => continue,
                    State::Asked => self.outstanding -= 1,
                    State::Pending => {}
                }
                m.state = State::Known(result(o));
            }
        }
    }
}

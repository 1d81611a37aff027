//! Search spaces for auto-tuning.
//!
//! A search space is a set of tunable [`Parameter`]s with finite domains, restricted by
//! constraints written in a small Python-like language ([`expr`]). [`SearchSpace`] holds every
//! configuration that satisfies the constraints, built without walking the Cartesian product,
//! and offers what optimisation strategies need: size, rank <-> configuration, membership,
//! uniform and Latin hypercube sampling, neighbourhoods, repair and continuous encodings.
//! [`spec`] reads problem files: native `ktune.toml`, T1 JSON and Kernel Tuner cache files.
#![deny(missing_docs)]

pub mod error;
pub mod expr;
pub mod param;
pub mod space;
pub mod spec;

pub use error::{Location, SpaceError};
pub use expr::Constraint;
pub use param::{ParamKind, Parameter, Value};
pub use space::sample::DistinctSampler;
pub use space::{
    BuildProgress, Configuration, DEFAULT_MAX_CHECKS, Encoder, Encoding, GroupInfo, Neighbourhood,
    SearchSpace,
};

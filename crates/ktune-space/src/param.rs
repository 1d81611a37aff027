//! Tunable parameters: their kinds, their finite domains, and the values in them.
//!
//! Every parameter has a finite, ordered list of values (its *domain*); a configuration stores
//! one value index per parameter. Integer and real parameters may come from explicit lists or
//! from ranges with a step (or a factor, for geometric ranges such as powers of two); a
//! permutation parameter's domain is every ordering of its items, in lexicographic order.
//! A parameter marked log-scale is encoded by the logarithm of its value (BaCO, section 4.1).

use std::fmt;

use crate::error::SpaceError;
use crate::expr::{ExprType, Interner, Scalar};

/// The largest domain a parameter may have (value indices are stored as `u32`, and a larger
/// domain is almost always a mistake in a range step).
pub const MAX_DOMAIN: usize = 10_000_000;

/// One value of a parameter's domain.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// An integer.
    Int(i64),
    /// A real number.
    Real(f64),
    /// A boolean.
    Bool(bool),
    /// A string (categorical or ordinal label).
    Str(String),
    /// An ordering of a permutation parameter's items: `perm[i]` is the item placed at
    /// position `i`.
    Perm(Vec<u32>),
}

impl Value {
    /// The value as a number, if it is one (booleans count as 0 and 1).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Real(r) => Some(*r),
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            Value::Str(_) | Value::Perm(_) => None,
        }
    }

    /// Whether two values are the same domain entry (reals compare by bit pattern, so that
    /// duplicate detection is exact; `-0.0` and `0.0` are the same).
    fn same(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Real(a), Value::Real(b)) => a == b || (a.is_nan() && b.is_nan()),
            _ => self == other,
        }
    }

    /// The value as JSON, the way Kernel Tuner cache files and T4 write it.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Int(i) => serde_json::Value::from(*i),
            Value::Real(r) => serde_json::Value::from(*r),
            Value::Bool(b) => serde_json::Value::from(*b),
            Value::Str(s) => serde_json::Value::from(s.as_str()),
            Value::Perm(p) => serde_json::Value::from(p.clone()),
        }
    }

    /// A number, boolean or string value from its JSON form; `None` for anything else
    /// (permutations included: where an array may be one, the caller says so).
    pub fn from_json(v: &serde_json::Value) -> Option<Value> {
        use serde_json::Value as Json;
        match v {
            Json::Number(n) => n
                .as_i64()
                .map(Value::Int)
                .or_else(|| n.as_f64().map(Value::Real)),
            Json::Bool(b) => Some(Value::Bool(*b)),
            Json::String(s) => Some(Value::Str(s.clone())),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Real(r) => {
                if r.fract() == 0.0 && r.is_finite() && r.abs() < 1e15 {
                    write!(f, "{r:.1}")
                } else {
                    write!(f, "{r}")
                }
            }
            Value::Bool(true) => f.write_str("True"),
            Value::Bool(false) => f.write_str("False"),
            Value::Str(s) => f.write_str(s),
            Value::Perm(p) => {
                f.write_str("[")?;
                for (i, x) in p.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{x}")?;
                }
                f.write_str("]")
            }
        }
    }
}

/// What kind of parameter this is; it decides how distances and encodings treat it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// Integers, ordered by value.
    Integer,
    /// Real numbers, ordered by value (always a finite list: explicit, or a range with a step).
    Real,
    /// Values with a meaningful order that is the order given (numbers or labels).
    Ordinal,
    /// Values without order (strings or numbers); distances treat them as equal or different.
    Categorical,
    /// `False` and `True`.
    Boolean,
    /// An ordering of named items (e.g. a loop order).
    Permutation {
        /// The items being ordered.
        items: Vec<String>,
    },
}

impl ParamKind {
    /// The short name used in specs and reports.
    pub fn name(&self) -> &'static str {
        match self {
            ParamKind::Integer => "int",
            ParamKind::Real => "real",
            ParamKind::Ordinal => "ordinal",
            ParamKind::Categorical => "categorical",
            ParamKind::Boolean => "bool",
            ParamKind::Permutation { .. } => "permutation",
        }
    }

    /// Whether the values have an order (neighbourhoods by index make sense).
    pub fn is_ordered(&self) -> bool {
        !matches!(self, ParamKind::Categorical | ParamKind::Permutation { .. })
    }
}

/// A tunable parameter: a name, a kind and a finite, duplicate-free domain.
#[derive(Clone, Debug, PartialEq)]
pub struct Parameter {
    name: String,
    kind: ParamKind,
    values: Vec<Value>,
    log: bool,
    default: Option<usize>,
    /// Value -> index, built on the first [`index_of`](Parameter::index_of).
    lookup: Lookup,
}

/// A value as a hash key: reals by their bits (-0 as 0, every NaN alike), so that equal
/// values (as [`Value::same`] sees them) have equal keys.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key<'a> {
    Int(i64),
    Real(u64),
    Bool(bool),
    Str(&'a str),
    Perm(&'a [u32]),
}

impl<'a> Key<'a> {
    fn of(v: &'a Value) -> Key<'a> {
        match v {
            Value::Int(i) => Key::Int(*i),
            Value::Real(r) => Key::Real(real_bits(*r)),
            Value::Bool(b) => Key::Bool(*b),
            Value::Str(s) => Key::Str(s),
            Value::Perm(p) => Key::Perm(p),
        }
    }
}

fn real_bits(r: f64) -> u64 {
    if r == 0.0 {
        0
    } else if r.is_nan() {
        f64::NAN.to_bits()
    } else {
        r.to_bits()
    }
}

fn key_hash(v: &Value) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    Key::of(v).hash(&mut h);
    h.finish()
}

/// The index of each value of a domain, and of each numeric value by its number (so that
/// `2` finds `2.0`): built once, so that looking values up (cache records, defaults) is
/// linear in their number, not quadratic.
#[derive(Default)]
struct Lookup(std::sync::OnceLock<Index>);

struct Index {
    /// The first index of each value's [`Key`] hash (checked on look-up: a collision of two
    /// 64-bit hashes falls back to a scan).
    exact: rustc_hash::FxHashMap<u64, usize>,
    /// The first index of each numeric value, by its number's bits.
    numeric: rustc_hash::FxHashMap<u64, usize>,
}

impl Clone for Lookup {
    fn clone(&self) -> Self {
        Lookup::default()
    }
}

impl std::fmt::Debug for Lookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Lookup")
    }
}

impl PartialEq for Lookup {
    fn eq(&self, _: &Self) -> bool {
        true // a cache of the values, which are compared themselves
    }
}

impl Parameter {
    /// A general constructor; checks the name, the domain (non-empty, no duplicates, values of
    /// the kind) and log-scale (positive numbers only).
    pub fn new(
        name: impl Into<String>,
        kind: ParamKind,
        values: Vec<Value>,
    ) -> Result<Parameter, SpaceError> {
        let name = name.into();
        let bad = |message: String| SpaceError::InvalidParameter {
            name: name.clone(),
            message,
        };
        if !is_identifier(&name) {
            let message = if is_identifier(&format!("{name}_")) {
                // `and`, `in`, `True`: a word of the constraint language.
                format!("`{name}` is a word of the constraint language; choose another name")
            } else {
                "a parameter name must be an identifier (letters, digits and `_`, not starting with a digit)".into()
            };
            return Err(bad(message));
        }
        if values.is_empty() {
            return Err(SpaceError::EmptyDomain { name });
        }
        if values.len() > MAX_DOMAIN {
            return Err(bad(format!(
                "the domain has {} values; at most {MAX_DOMAIN} are allowed",
                values.len()
            )));
        }
        for v in &values {
            let ok = match (&kind, v) {
                (ParamKind::Integer, Value::Int(_)) => true,
                (ParamKind::Real, Value::Real(r)) => r.is_finite(),
                (ParamKind::Boolean, Value::Bool(_)) => true,
                (ParamKind::Permutation { items }, Value::Perm(p)) => {
                    is_permutation(p, items.len())
                }
                (ParamKind::Ordinal | ParamKind::Categorical, v) => !matches!(v, Value::Perm(_)),
                _ => false,
            };
            if !ok {
                return Err(bad(format!(
                    "value `{v}` is not a valid {} value",
                    kind.name()
                )));
            }
        }
        let numeric = values
            .iter()
            .all(|v| matches!(v, Value::Int(_) | Value::Real(_)));
        let textual = values.iter().all(|v| matches!(v, Value::Str(_)));
        if !numeric && !textual && matches!(kind, ParamKind::Ordinal | ParamKind::Categorical) {
            return Err(bad(
                "values must be all numbers or all strings, not a mix".into()
            ));
        }
        // Duplicates: one hash look-up per value, no allocation (reals by their bits).
        let mut seen = rustc_hash::FxHashSet::default();
        for v in &values {
            if !seen.insert(Key::of(v)) {
                return Err(SpaceError::DuplicateValue {
                    name,
                    value: v.to_string(),
                });
            }
        }
        Ok(Parameter {
            name,
            kind,
            values,
            log: false,
            default: None,
            lookup: Lookup::default(),
        })
    }

    /// An integer parameter with the given values.
    pub fn integer(
        name: impl Into<String>,
        values: impl IntoIterator<Item = i64>,
    ) -> Result<Parameter, SpaceError> {
        Parameter::new(
            name,
            ParamKind::Integer,
            values.into_iter().map(Value::Int).collect(),
        )
    }

    /// An integer parameter `start, start+step, ...` up to and including `stop` when reached.
    pub fn integer_range(
        name: impl Into<String>,
        start: i64,
        stop: i64,
        step: i64,
    ) -> Result<Parameter, SpaceError> {
        let name = name.into();
        let values =
            int_range(start, stop, step).map_err(|message| SpaceError::InvalidParameter {
                name: name.clone(),
                message,
            })?;
        Parameter::integer(name, values)
    }

    /// A real parameter with the given values.
    pub fn real(
        name: impl Into<String>,
        values: impl IntoIterator<Item = f64>,
    ) -> Result<Parameter, SpaceError> {
        Parameter::new(
            name,
            ParamKind::Real,
            values.into_iter().map(Value::Real).collect(),
        )
    }

    /// A real parameter `start, start+step, ...` up to and including `stop` (within a relative
    /// tolerance of 1e-9 of a step, so that `0.1` steps reach their end point).
    pub fn real_range(
        name: impl Into<String>,
        start: f64,
        stop: f64,
        step: f64,
    ) -> Result<Parameter, SpaceError> {
        let name = name.into();
        let values =
            real_range(start, stop, step).map_err(|message| SpaceError::InvalidParameter {
                name: name.clone(),
                message,
            })?;
        Parameter::real(name, values)
    }

    /// A categorical parameter with string values.
    pub fn categorical<S: Into<String>>(
        name: impl Into<String>,
        values: impl IntoIterator<Item = S>,
    ) -> Result<Parameter, SpaceError> {
        Parameter::new(
            name,
            ParamKind::Categorical,
            values.into_iter().map(|s| Value::Str(s.into())).collect(),
        )
    }

    /// An ordinal parameter: the order of `values` is meaningful.
    pub fn ordinal(name: impl Into<String>, values: Vec<Value>) -> Result<Parameter, SpaceError> {
        Parameter::new(name, ParamKind::Ordinal, values)
    }

    /// A boolean parameter (`False`, `True`).
    pub fn boolean(name: impl Into<String>) -> Result<Parameter, SpaceError> {
        Parameter::new(
            name,
            ParamKind::Boolean,
            vec![Value::Bool(false), Value::Bool(true)],
        )
    }

    /// A permutation parameter over `items`; its domain is all `n!` orderings in
    /// lexicographic order (at most 10 items).
    pub fn permutation<S: Into<String>>(
        name: impl Into<String>,
        items: impl IntoIterator<Item = S>,
    ) -> Result<Parameter, SpaceError> {
        let name = name.into();
        let items: Vec<String> = items.into_iter().map(Into::into).collect();
        if items.is_empty() {
            return Err(SpaceError::EmptyDomain { name });
        }
        if items.len() > 10 {
            return Err(SpaceError::InvalidParameter {
                name,
                message: format!(
                    "a permutation of {} items has too many orderings; at most 10 items are supported",
                    items.len()
                ),
            });
        }
        // A program receives the ordering as its items joined by commas (`i,k,j`): an empty
        // item, one with a comma or with surrounding blanks would make two orderings one text.
        if let Some(bad) = items
            .iter()
            .find(|i| i.trim().is_empty() || i.contains(',') || i.trim() != i.as_str())
        {
            return Err(SpaceError::InvalidParameter {
                name,
                message: format!(
                    "item {bad:?} cannot be told apart in the text a program receives (the items \
                     joined by commas): an item is a non-empty name without commas or \
                     surrounding blanks"
                ),
            });
        }
        for (i, a) in items.iter().enumerate() {
            if items[..i].contains(a) {
                return Err(SpaceError::DuplicateValue {
                    name,
                    value: a.clone(),
                });
            }
        }
        let values = permutations(items.len())
            .into_iter()
            .map(Value::Perm)
            .collect();
        Parameter::new(name, ParamKind::Permutation { items }, values)
    }

    /// Marks the parameter log-scale: encodings and distances use the logarithm of its value.
    /// Only positive numeric domains can be log-scale.
    pub fn with_log_scale(mut self, log: bool) -> Result<Parameter, SpaceError> {
        if log
            && !self
                .values
                .iter()
                .all(|v| v.as_f64().is_some_and(|x| x > 0.0) && !matches!(v, Value::Bool(_)))
        {
            return Err(SpaceError::InvalidParameter {
                name: self.name,
                message: "log-scale needs every value to be a positive number".into(),
            });
        }
        self.log = log;
        Ok(self)
    }

    /// Sets the default value (the configuration a user would run without tuning).
    pub fn with_default(mut self, default: &Value) -> Result<Parameter, SpaceError> {
        match self.index_of(default) {
            Some(i) => {
                self.default = Some(i);
                Ok(self)
            }
            None => Err(SpaceError::InvalidParameter {
                name: self.name,
                message: format!("default `{default}` is not one of its values"),
            }),
        }
    }

    /// The parameter's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The parameter's kind.
    pub fn kind(&self) -> &ParamKind {
        &self.kind
    }

    /// The domain, in order.
    pub fn values(&self) -> &[Value] {
        &self.values
    }

    /// Number of values in the domain.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Never true for a constructed parameter (domains are non-empty); provided for symmetry.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Whether the parameter is log-scale.
    pub fn is_log(&self) -> bool {
        self.log
    }

    /// The index of the default value, if one was given.
    pub fn default_index(&self) -> Option<usize> {
        self.default
    }

    /// `value` as a person reads it: a permutation as its item names in order
    /// (`[i, k, j]`), anything else as [`Value`]'s `Display` writes it.
    pub fn display(&self, value: &Value) -> String {
        match self.ordering(value) {
            Some(names) => format!("[{}]", names.join(", ")),
            None => value.to_string(),
        }
    }

    /// `value` as programs receive it (command templates, defines, environment
    /// variables): a permutation as its item names in order joined by commas (`i,k,j`),
    /// anything else as [`Value`]'s `Display` writes it.
    pub fn text(&self, value: &Value) -> String {
        match self.ordering(value) {
            Some(names) => names.join(","),
            None => value.to_string(),
        }
    }

    /// A permutation's value as its item names in order; `None` for any other parameter or
    /// value.
    pub fn ordering(&self, value: &Value) -> Option<Vec<&str>> {
        match (&self.kind, value) {
            (ParamKind::Permutation { items }, Value::Perm(order)) => Some(
                order
                    .iter()
                    .map(|&i| items.get(i as usize).map_or("?", String::as_str))
                    .collect(),
            ),
            _ => None,
        }
    }

    /// The index of `value` in the domain. Integers and reals match each other when equal
    /// (a cache file may write `2.0` for an integer `2`).
    pub fn index_of(&self, value: &Value) -> Option<usize> {
        let index = self.lookup.0.get_or_init(|| {
            let mut exact = rustc_hash::FxHashMap::default();
            let mut numeric = rustc_hash::FxHashMap::default();
            for (i, v) in self.values.iter().enumerate() {
                exact.entry(key_hash(v)).or_insert(i);
                if let (Value::Int(_) | Value::Real(_), Some(x)) = (v, v.as_f64()) {
                    numeric.entry(real_bits(x)).or_insert(i);
                }
            }
            Index { exact, numeric }
        });
        match index.exact.get(&key_hash(value)) {
            Some(&i) if self.values[i].same(value) => return Some(i),
            Some(_) => return self.values.iter().position(|v| v.same(value)),
            None => {}
        }
        match value {
            Value::Int(_) | Value::Real(_) => index
                .numeric
                .get(&real_bits(value.as_f64()?))
                .copied()
                .filter(|&i| self.values[i].as_f64() == value.as_f64()),
            _ => None,
        }
    }

    /// The type the constraint language sees for this parameter.
    pub(crate) fn expr_type(&self) -> ExprType {
        match &self.kind {
            ParamKind::Boolean => ExprType::Bool,
            ParamKind::Permutation { .. } => ExprType::Permutation,
            _ => {
                if self.values.iter().any(|v| matches!(v, Value::Str(_))) {
                    ExprType::Str
                } else if self.values.iter().any(|v| matches!(v, Value::Real(_))) {
                    ExprType::Real
                } else {
                    ExprType::Int
                }
            }
        }
    }

    /// The run-time values seen by compiled constraints, one per domain entry.
    pub(crate) fn scalars(&self, interner: &mut Interner) -> Vec<Scalar> {
        let real = self.expr_type() == ExprType::Real;
        self.values
            .iter()
            .map(|v| match v {
                Value::Int(i) if real => Scalar::Real(*i as f64),
                Value::Int(i) => Scalar::Int(*i),
                Value::Real(r) => Scalar::Real(*r),
                Value::Bool(b) => Scalar::Bool(*b),
                Value::Str(s) => Scalar::Str(interner.intern(s)),
                // Read only through `p.index(...)` and `p[k]`, which unpack it.
                Value::Perm(p) => crate::expr::Symbol::pack_permutation(p),
            })
            .collect()
    }
}

/// Whether `name` is a valid identifier for the constraint language.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !matches!(
            name,
            "and" | "or" | "not" | "in" | "if" | "else" | "for" | "True" | "False" | "None"
        )
}

fn is_permutation(p: &[u32], n: usize) -> bool {
    let mut seen = vec![false; n];
    p.len() == n
        && p.iter().all(|&x| {
            let x = x as usize;
            x < n && !std::mem::replace(&mut seen[x], true)
        })
}

/// All orderings of `0..n` in lexicographic order.
fn permutations(n: usize) -> Vec<Vec<u32>> {
    let mut current: Vec<u32> = (0..n as u32).collect();
    let mut out = vec![current.clone()];
    // Next lexicographic permutation (Narayana Pandita).
    loop {
        let Some(i) = (0..n.saturating_sub(1))
            .rev()
            .find(|&i| current[i] < current[i + 1])
        else {
            return out;
        };
        let j = (i + 1..n)
            .rev()
            .find(|&j| current[j] > current[i])
            .unwrap_or(i + 1);
        current.swap(i, j);
        current[i + 1..].reverse();
        out.push(current.clone());
    }
}

/// `start, start+step, ...` while not past `stop` (inclusive).
pub(crate) fn int_range(start: i64, stop: i64, step: i64) -> Result<Vec<i64>, String> {
    if step == 0 {
        return Err("a range step must not be zero".into());
    }
    if (step > 0 && start > stop) || (step < 0 && start < stop) {
        return Err(format!(
            "the range from {start} to {stop} with step {step} is empty"
        ));
    }
    let count = (stop - start) / step + 1;
    if count as u128 > MAX_DOMAIN as u128 {
        return Err(format!(
            "the range has {count} values; at most {MAX_DOMAIN} are allowed"
        ));
    }
    Ok((0..count).map(|i| start + i * step).collect())
}

/// Real range with an inclusive end; values are computed as `start + i*step` (no accumulated
/// rounding) and rounded to 12 significant digits so that `0.1*3` prints as `0.3`.
pub(crate) fn real_range(start: f64, stop: f64, step: f64) -> Result<Vec<f64>, String> {
    if !(start.is_finite() && stop.is_finite() && step.is_finite()) || step == 0.0 {
        return Err("a real range needs finite bounds and a non-zero step".into());
    }
    let span = (stop - start) / step;
    if span < -1e-9 {
        return Err(format!(
            "the range from {start} to {stop} with step {step} is empty"
        ));
    }
    let count = (span + 1e-9).floor() as u64 + 1;
    if count > MAX_DOMAIN as u64 {
        return Err(format!(
            "the range has {count} values; at most {MAX_DOMAIN} are allowed"
        ));
    }
    Ok((0..count)
        .map(|i| round_sig(start + i as f64 * step, 12))
        .collect())
}

/// `start, start*factor, ...` while not past `stop` (inclusive); for powers of two and the like.
pub(crate) fn geometric_range(start: f64, stop: f64, factor: f64) -> Result<Vec<f64>, String> {
    if !(start > 0.0 && stop.is_finite() && factor > 1.0 && factor.is_finite()) {
        return Err("a geometric range needs a positive start and a factor greater than 1".into());
    }
    let mut out = Vec::new();
    let mut x = start;
    while x <= stop * (1.0 + 1e-12) {
        out.push(round_sig(x, 12));
        if out.len() > MAX_DOMAIN {
            return Err(format!("the range has more than {MAX_DOMAIN} values"));
        }
        x *= factor;
    }
    if out.is_empty() {
        return Err(format!("the range from {start} to {stop} is empty"));
    }
    Ok(out)
}

/// `start, start*factor, ...` while not past `stop` (inclusive), exactly, for integers.
pub(crate) fn int_geometric_range(start: i64, stop: i64, factor: i64) -> Result<Vec<i64>, String> {
    if start <= 0 || factor <= 1 {
        return Err("a geometric range needs a positive start and a factor greater than 1".into());
    }
    let mut out = Vec::new();
    let mut x = Some(start);
    while let Some(v) = x.filter(|&v| v <= stop) {
        out.push(v);
        x = v.checked_mul(factor);
    }
    if out.is_empty() {
        return Err(format!("the range from {start} to {stop} is empty"));
    }
    Ok(out)
}

fn round_sig(x: f64, digits: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(digits - 1 - x.abs().log10().floor() as i32);
    let r = (x * scale).round() / scale;
    if r.is_finite() { r } else { x }
}

#[cfg(test)]
mod tests;

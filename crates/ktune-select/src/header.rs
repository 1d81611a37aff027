//! The C/C++ header of `#define`s per device, as Kernel Tuner's `integration` module writes
//! it: compiled with `-DTARGET_<DEVICE>`, a program gets that device's tuned values; without,
//! the default.
//!
//! - A device's macro is `TARGET_` and its name's words in capitals joined by `_`
//!   (`NVIDIA A100-SXM4-40GB` is `TARGET_NVIDIA_A100_SXM4_40GB`; the words are those of
//!   [`crate::family::normalise`], so names the selection takes for one device share a macro).
//! - A device tuned at several problem sizes has a block per size, chosen with
//!   `-DSIZE_<X>_<Y>_<Z>` (trailing extents of 1 left out: `SIZE_4096_4096`); without one, its
//!   largest problem size.
//! - Nothing is defined where `kernel_tuner` is (ktune's and Kernel Tuner's tuning runs define
//!   it), so a tuning run's own values win.
//! - Values as the tuning runs define them: integers and reals as written, booleans as 1 or 0,
//!   strings as their text (a permutation as its items joined by commas).

use std::fmt::Write as _;

use crate::{Record, Wisdom};

/// The macro that selects `device`, or `None` where its name has no letter or digit.
pub fn device_macro(device: &str) -> Option<String> {
    let words = crate::family::normalise(device);
    (!words.is_empty()).then(|| format!("TARGET_{}", words.replace(' ', "_").to_uppercase()))
}

/// The macro that selects a problem size.
pub fn size_macro(size: [u64; 3]) -> String {
    let kept = size.iter().rposition(|&x| x != 1).map_or(1, |i| i + 1);
    let parts: Vec<String> = size[..kept].iter().map(u64::to_string).collect();
    format!("SIZE_{}", parts.join("_"))
}

/// Why a header cannot be written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeaderError {
    /// A device's name has nothing a macro can be made of.
    DeviceName(String),
    /// A parameter's name is not a C identifier.
    ParameterName(String),
}

impl std::fmt::Display for HeaderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeaderError::DeviceName(d) => write!(
                f,
                "device {d:?} cannot be a macro: its name has no letter or digit (give the \
                 study a device name, e.g. --device \"NVIDIA A100\")"
            ),
            HeaderError::ParameterName(p) => write!(
                f,
                "parameter `{p}` cannot be a C macro name (letters, digits and `_`, not \
                 starting with a digit)"
            ),
        }
    }
}

impl std::error::Error for HeaderError {}

/// Whether `name` is a C identifier.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The header for `wisdom`, with `note` (where it came from) in its opening comment.
pub fn defines_header(wisdom: &Wisdom, note: &str) -> Result<String, HeaderError> {
    if let Some(p) = wisdom.parameters.iter().find(|p| !is_identifier(p)) {
        return Err(HeaderError::ParameterName(p.clone()));
    }
    // Devices in the order first written, each with its best record per size.
    let mut devices: Vec<(String, String, Vec<&Record>)> = Vec::new();
    for r in &wisdom.records {
        let m = device_macro(&r.device).ok_or_else(|| HeaderError::DeviceName(r.device.clone()))?;
        let at = match devices.iter().position(|(d, _, _)| *d == m) {
            Some(i) => i,
            None => {
                devices.push((m, r.device.clone(), Vec::new()));
                devices.len() - 1
            }
        };
        let sizes = &mut devices[at].2;
        match sizes.iter_mut().find(|s| s.problem_size == r.problem_size) {
            Some(s) if wisdom.direction.better(r.objective, s.objective) => *s = r,
            Some(_) => {}
            None => sizes.push(r),
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "/* Tuned configurations of kernel `{}` ({}).",
        wisdom.key, note
    );
    for line in [
        "Compile with -DTARGET_<DEVICE> for a device's values (and -DSIZE_<X>_<Y>_<Z> where it",
        "was tuned at several problem sizes; without, its largest); without any, the default.",
        "Nothing is defined in a tuning run (where kernel_tuner is defined), so its values win.",
    ] {
        let _ = writeln!(out, " * {line}");
    }
    for (m, name, sizes) in &devices {
        let listed: Vec<String> = sizes.iter().map(|r| size_macro(r.problem_size)).collect();
        let _ = writeln!(out, " *   {m}: {name} ({})", listed.join(", "));
    }
    out.push_str(" */\n#ifndef kernel_tuner\n");
    let block = |out: &mut String, config: &[crate::Value], indent: &str, why: &str| {
        let _ = writeln!(out, "{indent}/* {why} */");
        for (p, v) in wisdom.parameters.iter().zip(config) {
            let _ = writeln!(out, "{indent}#define {p} {v}");
        }
    };
    for (i, (m, _, sizes)) in devices.iter().enumerate() {
        let _ = writeln!(out, "#{} defined({m})", if i == 0 { "if" } else { "elif" });
        let describe = |r: &Record| {
            format!(
                "problem size {}: {} {}",
                size_macro(r.problem_size)
                    .trim_start_matches("SIZE_")
                    .replace('_', "x"),
                wisdom.objective,
                r.objective
            )
        };
        if sizes.len() == 1 {
            block(&mut out, &sizes[0].config, "", &describe(sizes[0]));
            continue;
        }
        for (j, r) in sizes.iter().enumerate() {
            let _ = writeln!(
                out,
                "#  {} defined({})",
                if j == 0 { "if" } else { "elif" },
                size_macro(r.problem_size)
            );
            block(&mut out, &r.config, "  ", &describe(r));
        }
        let largest = sizes
            .iter()
            .enumerate()
            .max_by_key(|(j, r)| {
                (
                    r.problem_size
                        .iter()
                        .fold(1u64, |a, &x| a.saturating_mul(x)),
                    std::cmp::Reverse(*j),
                )
            })
            .map(|(_, r)| *r)
            .expect("a device has a record");
        out.push_str("#  else\n");
        block(
            &mut out,
            &largest.config,
            "  ",
            &format!("no SIZE_ given: the largest, {}", describe(largest)),
        );
        out.push_str("#  endif\n");
    }
    match &wisdom.default {
        Some(d) => {
            out.push_str(if devices.is_empty() { "" } else { "#else\n" });
            block(&mut out, d, "", "the default, for any other device");
            if !devices.is_empty() {
                out.push_str("#endif\n");
            }
        }
        None if !devices.is_empty() => {
            out.push_str(
                "#else\n/* no default configuration: define one of the TARGET_ macros */\n#endif\n",
            );
        }
        None => {}
    }
    out.push_str("#endif /* kernel_tuner */\n");
    Ok(out)
}

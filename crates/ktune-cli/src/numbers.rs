//! The command line's numbers, checked where they are parsed: a negative count, seed or time
//! limit is named as such (clap alone would take `-1` for an unknown flag and suggest `-- -1`,
//! which does not work either).

/// A whole number of things, 0 or more.
pub(crate) fn count(text: &str) -> Result<usize, String> {
    whole(text, "a count")
}

/// A seed: a whole number from 0 to 2⁶⁴ − 1.
pub(crate) fn seed(text: &str) -> Result<u64, String> {
    whole(text, "a seed")
}

/// A number of seeds (runs per strategy and space).
pub(crate) fn seeds(text: &str) -> Result<u64, String> {
    whole(text, "a number of seeds")
}

/// A number of seconds, more than 0 (and not absurdly many: [`ktune_core::checked_seconds`]).
pub(crate) fn seconds(text: &str) -> Result<f64, String> {
    let x: f64 = text.trim().parse().map_err(|_| {
        format!("a time limit in seconds is a number more than 0; `{text}` is not one")
    })?;
    ktune_core::checked_seconds(x)
        .map(|_| x)
        .map_err(|m| format!("a time limit {m}"))
}

/// A limit on work, more than 0.
pub(crate) fn limit(text: &str) -> Result<f64, String> {
    positive(text, "a limit")
}

/// A fraction from 0 to 1.
pub(crate) fn fraction(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("`{text}` is not a fraction from 0 to 1")),
    }
}

fn whole<T: std::str::FromStr>(text: &str, what: &str) -> Result<T, String> {
    let t = text.trim();
    if let Ok(x) = t.parse::<T>() {
        return Ok(x);
    }
    Err(
        if t.starts_with('-') && t[1..].chars().all(|c| c.is_ascii_digit()) && t.len() > 1 {
            format!("{what} cannot be negative")
        } else if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) {
            format!("{what} of {t} is too large")
        } else {
            format!("{what} is a whole number, 0 or more; `{text}` is not one")
        },
    )
}

fn positive(text: &str, what: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
        Ok(_) => Err(format!("{what} must be more than 0")),
        Err(_) => Err(format!(
            "{what} is a number more than 0; `{text}` is not one"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_huge_and_wordy_numbers_are_named() {
        assert_eq!(count("12"), Ok(12));
        assert_eq!(count("-1").unwrap_err(), "a count cannot be negative");
        assert!(
            seed("1".repeat(30).as_str())
                .unwrap_err()
                .contains("too large")
        );
        assert!(count("ten").unwrap_err().contains("`ten` is not one"));
        assert_eq!(seconds("2.5"), Ok(2.5));
        for bad in ["-1", "0", "inf", "NaN", "1e300"] {
            let e = seconds(bad).unwrap_err();
            assert!(
                e.contains("must be a positive number of seconds"),
                "{bad}: {e}"
            );
        }
        assert!(seconds("soon").unwrap_err().contains("`soon` is not one"));
        assert!(fraction("1.5").is_err() && fraction("-0.1").is_err());
        assert_eq!(fraction("0.05"), Ok(0.05));
    }
}

//! Devices by family: a device's name normalised, and the architecture and vendor a name
//! belongs to, for the selection's fallbacks (a configuration tuned on an A100 for an A30).
//!
//! A name is normalised to its lower-case words: every run of characters other than ASCII
//! letters and digits is one space (`NVIDIA A100-SXM4-40GB` is `nvidia a100 sxm4 40gb`).
//! Two names are the same device when their normalised forms are equal.
//!
//! The architecture is found by [`ARCHITECTURES`]: each entry is a pattern of words that must
//! appear one after another in the name, where `#` in a pattern word stands for one digit and a
//! trailing `*` for any ending (`a100*` matches `a100` and `a100x`; `rtx 30##` matches
//! `rtx 3090 ti`). The first entry that matches decides. The vendor is the architecture's, or
//! else the first of [`VENDOR_WORDS`] that is a word of the name. The same table is written
//! into the C selection header, so both read names alike.

/// Pattern, architecture, vendor; the first match decides (more specific patterns first).
pub const ARCHITECTURES: &[(&str, &str, &str)] = &[
    ("gh200*", "hopper", "nvidia"),
    ("h100*", "hopper", "nvidia"),
    ("h200*", "hopper", "nvidia"),
    ("h800*", "hopper", "nvidia"),
    ("gb200*", "blackwell", "nvidia"),
    ("b100*", "blackwell", "nvidia"),
    ("b200*", "blackwell", "nvidia"),
    ("b300*", "blackwell", "nvidia"),
    ("rtx 50##*", "blackwell", "nvidia"),
    ("rtx pro #000 blackwell", "blackwell", "nvidia"),
    ("rtx ##00 ada", "ada", "nvidia"),
    ("rtx #000 ada", "ada", "nvidia"),
    ("rtx 40##*", "ada", "nvidia"),
    ("l40*", "ada", "nvidia"),
    ("l4", "ada", "nvidia"),
    ("a100*", "ampere", "nvidia"),
    ("a800*", "ampere", "nvidia"),
    ("a#000", "ampere", "nvidia"),
    ("a#500", "ampere", "nvidia"),
    ("a40", "ampere", "nvidia"),
    ("a30", "ampere", "nvidia"),
    ("a16", "ampere", "nvidia"),
    ("a10*", "ampere", "nvidia"),
    ("a2", "ampere", "nvidia"),
    ("rtx 30##*", "ampere", "nvidia"),
    ("t4", "turing", "nvidia"),
    ("rtx 20##*", "turing", "nvidia"),
    ("quadro rtx #000", "turing", "nvidia"),
    ("titan rtx", "turing", "nvidia"),
    ("gtx 16##*", "turing", "nvidia"),
    ("v100*", "volta", "nvidia"),
    ("titan v", "volta", "nvidia"),
    ("p100*", "pascal", "nvidia"),
    ("p40", "pascal", "nvidia"),
    ("gtx 10##*", "pascal", "nvidia"),
    ("mi35#*", "cdna4", "amd"),
    ("mi3##*", "cdna3", "amd"),
    ("mi250*", "cdna2", "amd"),
    ("mi210", "cdna2", "amd"),
    ("mi100", "cdna1", "amd"),
    ("w7###*", "rdna3", "amd"),
    ("rx 7###*", "rdna3", "amd"),
    ("w6###*", "rdna2", "amd"),
    ("rx 6###*", "rdna2", "amd"),
    ("max 1###", "xe-hpc", "intel"),
    ("arc b###*", "xe2", "intel"),
    ("arc a###*", "xe-hpg", "intel"),
];

/// A word of the name, and the vendor it names, where no architecture matched.
pub const VENDOR_WORDS: &[(&str, &str)] = &[
    ("nvidia", "nvidia"),
    ("geforce", "nvidia"),
    ("tesla", "nvidia"),
    ("quadro", "nvidia"),
    ("titan", "nvidia"),
    ("rtx", "nvidia"),
    ("gtx", "nvidia"),
    ("amd", "amd"),
    ("radeon", "amd"),
    ("instinct", "amd"),
    ("intel", "intel"),
    ("arc", "intel"),
];

/// A device name's lower-case words, one space apart.
pub fn normalise(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for word in name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&word.to_ascii_lowercase());
    }
    out
}

/// What a device name says of its family.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Family {
    /// The architecture (`ampere`, `cdna2`, ...), where the table knows the name.
    pub architecture: Option<&'static str>,
    /// The vendor (`nvidia`, `amd`, `intel`), where known.
    pub vendor: Option<&'static str>,
}

/// The family of the device `name` (any spelling; it is normalised here).
pub fn family(name: &str) -> Family {
    let normal = normalise(name);
    let words: Vec<&str> = normal.split(' ').filter(|w| !w.is_empty()).collect();
    if let Some(&(_, architecture, vendor)) = ARCHITECTURES
        .iter()
        .find(|(pattern, _, _)| matches_words(pattern, &words))
    {
        return Family {
            architecture: Some(architecture),
            vendor: Some(vendor),
        };
    }
    Family {
        architecture: None,
        vendor: VENDOR_WORDS
            .iter()
            .find(|(w, _)| words.contains(w))
            .map(|&(_, v)| v),
    }
}

/// Whether the pattern's words appear one after another among `words`.
fn matches_words(pattern: &str, words: &[&str]) -> bool {
    let pattern: Vec<&str> = pattern.split(' ').collect();
    words.len() >= pattern.len()
        && words.windows(pattern.len()).any(|w| {
            w.iter()
                .zip(&pattern)
                .all(|(word, p)| matches_word(p, word))
        })
}

/// Whether one word matches one pattern word (`#` a digit, a trailing `*` any ending of
/// letters).
fn matches_word(pattern: &str, word: &str) -> bool {
    let (pattern, open) = match pattern.strip_suffix('*') {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    let (p, w) = (pattern.as_bytes(), word.as_bytes());
    if w.len() < p.len() || (!open && w.len() != p.len()) {
        return false;
    }
    p.iter().zip(w).all(|(&p, &c)| {
        if p == b'#' {
            c.is_ascii_digit()
        } else {
            p == c
        }
    }) && w[p.len()..].iter().all(u8::is_ascii_alphabetic)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fall_into_their_families() {
        for (name, architecture, vendor) in [
            ("NVIDIA A100-SXM4-40GB", Some("ampere"), Some("nvidia")),
            ("NVIDIA A100 80GB PCIe", Some("ampere"), Some("nvidia")),
            ("A30", Some("ampere"), Some("nvidia")),
            ("NVIDIA RTX A4000", Some("ampere"), Some("nvidia")),
            ("NVIDIA RTX A6000", Some("ampere"), Some("nvidia")),
            ("NVIDIA GeForce RTX 3090 Ti", Some("ampere"), Some("nvidia")),
            ("NVIDIA GeForce RTX 4090", Some("ada"), Some("nvidia")),
            (
                "NVIDIA RTX 6000 Ada Generation",
                Some("ada"),
                Some("nvidia"),
            ),
            ("NVIDIA H100 80GB HBM3", Some("hopper"), Some("nvidia")),
            ("NVIDIA H200", Some("hopper"), Some("nvidia")),
            ("Tesla V100-SXM2-16GB", Some("volta"), Some("nvidia")),
            ("AMD Instinct MI250X", Some("cdna2"), Some("amd")),
            ("MI250X", Some("cdna2"), Some("amd")),
            ("AMD Instinct MI300X", Some("cdna3"), Some("amd")),
            ("AMD Radeon PRO W6600", Some("rdna2"), Some("amd")),
            ("AMD Radeon PRO W7800", Some("rdna3"), Some("amd")),
            (
                "Intel(R) Data Center GPU Max 1550",
                Some("xe-hpc"),
                Some("intel"),
            ),
            ("NVIDIA GeForce GTX 480", None, Some("nvidia")),
            ("pthread-Intel(R) Xeon(R) CPU", None, Some("intel")),
            ("my laptop", None, None),
        ] {
            assert_eq!(
                family(name),
                Family {
                    architecture,
                    vendor
                },
                "{name}"
            );
        }
        // Whole words, and only letters after a `*`: an A1000 is found by `a#000`, not as an
        // A100; a longer number is nothing.
        assert_eq!(family("NVIDIA RTX A1000").architecture, Some("ampere"));
        assert_eq!(family("NVIDIA A10G").architecture, Some("ampere"));
        assert_eq!(family("a1000000").architecture, None);
    }

    #[test]
    fn names_are_normalised_to_their_words() {
        assert_eq!(
            normalise("  NVIDIA A100-SXM4-40GB "),
            "nvidia a100 sxm4 40gb"
        );
        assert_eq!(normalise("Intel(R) Xeon(R)"), "intel r xeon r");
        assert_eq!(normalise("--"), "");
    }
}

//! The single-file C header with the selection over an embedded table
//! (`ktune export --c-select`): no file to read at run time, no library to link.
//!
//! It declares, for a kernel whose key is `K` (made a C identifier):
//!
//! ```c
//! typedef struct { long long block_size_x; double scale; const char *order; } K_config;
//! const K_config *ktune_select_K(const char *device, const unsigned long long *size,
//!                                int dims, ktune_match *how);  /* NULL: nothing matched */
//! int ktune_select_index_K(const char *device, const unsigned long long *size, int dims,
//!                          ktune_match *how);   /* the record's index; -1 the default; -2 none */
//! ```
//!
//! with `ktune_match_name(how)` for the step's name, and `ktune_select` as another name for the
//! first kernel's `ktune_select_K`. A parameter
//! whose values are all integers is a `long long`, all booleans an `int`, numbers a `double`,
//! anything else a `const char *`. The rule is [the crate's](crate#the-selection-rule), in
//! portable C99; the device families come from the same table ([`crate::family`]), and the
//! helpers shared by all kernels are guarded so that several kernels' headers can be
//! included in one program.

use std::fmt::Write as _;

use crate::family::{ARCHITECTURES, VENDOR_WORDS};
use crate::header::{HeaderError, is_identifier};
use crate::{Direction, Value, Wisdom};

/// The kernel's key as a C identifier (other characters as `_`, a leading digit after `_`).
pub fn c_name(key: &str) -> String {
    let mut s: String = key
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

/// A C string literal of `s` (octal escapes for anything but printable ASCII).
fn literal(s: &str) -> String {
    let mut out = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'?' => out.push_str("\\?"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\{b:03o}");
            }
        }
    }
    out.push('"');
    out
}

#[derive(Clone, Copy, PartialEq)]
enum CType {
    Int,
    Bool,
    Real,
    Text,
}

fn c_value(v: &Value, ty: CType) -> String {
    match (v, ty) {
        (Value::Int(i), CType::Int) => format!("{i}LL"),
        (Value::Bool(b), CType::Bool) => u8::from(*b).to_string(),
        (Value::Int(i), CType::Real) => format!("{i}.0"),
        (Value::Real(x), CType::Real) if x.is_finite() => format!("{x:?}"),
        (Value::Real(x), CType::Real) => (if x.is_nan() {
            "(0.0/0.0)"
        } else if *x > 0.0 {
            "(1.0/0.0)"
        } else {
            "(-1.0/0.0)"
        })
        .to_string(),
        (v, _) => literal(&v.to_string()),
    }
}

/// The helpers every kernel's header shares, defined once per program.
fn common() -> String {
    let mut rules = String::new();
    for (p, a, v) in ARCHITECTURES {
        let _ = writeln!(
            rules,
            "    {{{}, {}, {}}},",
            literal(p),
            literal(a),
            literal(v)
        );
    }
    let mut vendors = String::new();
    for (w, v) in VENDOR_WORDS {
        let _ = writeln!(vendors, "    {{{}, {}}},", literal(w), literal(v));
    }
    COMMON
        .replace("@RULES@", &rules)
        .replace("@VENDORS@", &vendors)
}

/// The header for `wisdom`, with `note` (where it came from) in its opening comment.
pub fn select_header(wisdom: &Wisdom, note: &str) -> Result<String, HeaderError> {
    if let Some(p) = wisdom.parameters.iter().find(|p| !is_identifier(p)) {
        return Err(HeaderError::ParameterName(p.clone()));
    }
    let k = c_name(&wisdom.key);
    let configs: Vec<&[Value]> = wisdom
        .records
        .iter()
        .map(|r| r.config.as_slice())
        .chain(wisdom.default.as_deref())
        .collect();
    let types: Vec<CType> = (0..wisdom.parameters.len())
        .map(|i| {
            let column = || configs.iter().map(move |c| &c[i]);
            if column().all(|v| matches!(v, Value::Int(_))) {
                CType::Int
            } else if column().all(|v| matches!(v, Value::Bool(_))) {
                CType::Bool
            } else if column().all(|v| matches!(v, Value::Int(_) | Value::Real(_))) {
                CType::Real
            } else {
                CType::Text
            }
        })
        .collect();
    let config = |c: &[Value]| {
        let fields: Vec<String> = c.iter().zip(&types).map(|(v, &t)| c_value(v, t)).collect();
        format!("{{{}}}", fields.join(", "))
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "/* Selection of kernel `{}`'s tuned configuration at run time ({note}).\n * Written by ktune export; the rule: exact device and problem size, else the same device's\n * nearest problem size (absolute difference of the extents' products), else a device of the\n * same architecture, else of the same vendor (each the nearest size), else the default. */",
        wisdom.key
    );
    let _ = writeln!(
        out,
        "#ifndef KTUNE_SELECT_{}_H\n#define KTUNE_SELECT_{}_H\n",
        k.to_uppercase(),
        k.to_uppercase()
    );
    out.push_str(&common());
    let _ = writeln!(out, "\ntypedef struct {{");
    for (p, t) in wisdom.parameters.iter().zip(&types) {
        let ty = match t {
            CType::Int => "long long",
            CType::Bool => "int",
            CType::Real => "double",
            CType::Text => "const char *",
        };
        let _ = writeln!(out, "    {ty} {p};");
    }
    if wisdom.parameters.is_empty() {
        out.push_str("    char unused;\n");
    }
    let _ = writeln!(out, "}} {k}_config;\n");
    let n = wisdom.records.len();
    let rows = n.max(1);
    let _ = writeln!(out, "static const int {k}_count = {n};");
    let _ = writeln!(out, "static const char *const {k}_devices[{rows}] = {{");
    for r in &wisdom.records {
        let _ = writeln!(out, "    {},", literal(&r.device));
    }
    if n == 0 {
        out.push_str("    0,\n");
    }
    let _ = writeln!(
        out,
        "}};\nstatic const unsigned long long {k}_sizes[{rows}][3] = {{"
    );
    for r in &wisdom.records {
        let _ = writeln!(
            out,
            "    {{{}ULL, {}ULL, {}ULL}},",
            r.problem_size[0], r.problem_size[1], r.problem_size[2]
        );
    }
    if n == 0 {
        out.push_str("    {0ULL, 0ULL, 0ULL},\n");
    }
    let _ = writeln!(out, "}};\nstatic const double {k}_objectives[{rows}] = {{");
    for r in &wisdom.records {
        let _ = writeln!(
            out,
            "    {},",
            c_value(&Value::Real(r.objective), CType::Real)
        );
    }
    if n == 0 {
        out.push_str("    0.0,\n");
    }
    let _ = writeln!(
        out,
        "}};\nstatic const {k}_config {k}_configs[{}] = {{",
        rows + 1
    );
    for r in &wisdom.records {
        let _ = writeln!(out, "    {},", config(&r.config));
    }
    if n == 0 {
        out.push_str("    {0},\n");
    }
    match &wisdom.default {
        Some(d) => {
            let _ = writeln!(out, "    {} /* the default */", config(d));
        }
        None => out.push_str("    {0} /* no default */\n"),
    }
    let maximize = i32::from(wisdom.direction == Direction::Maximize);
    let has_default = i32::from(wisdom.default.is_some());
    let _ = write!(
        out,
        "}};

static inline int ktune_select_index_{k}(const char *device, const unsigned long long *size, int dims,
                                ktune_match *how) {{
    int i = ktune__pick({k}_devices, {k}_sizes, {k}_objectives, {k}_count, {maximize}, device,
                        size, dims, how);
    if (i < 0 && {has_default}) {{
        if (how) *how = KTUNE_DEFAULT;
        return -1;
    }}
    return i < 0 ? -2 : i;
}}

static inline const {k}_config *ktune_select_{k}(const char *device, const unsigned long long *size,
                                        int dims, ktune_match *how) {{
    int i = ktune_select_index_{k}(device, size, dims, how);
    return i == -2 ? 0 : &{k}_configs[i == -1 ? {n} : i];
}}

#ifndef ktune_select
#define ktune_select ktune_select_{k}
#endif

#endif
"
    );
    Ok(out)
}

const COMMON: &str = r#"#ifndef KTUNE_SELECT_COMMON
#define KTUNE_SELECT_COMMON
#include <stddef.h>
#include <string.h>

/* How a configuration was found (the rule's steps, best first). */
typedef enum {
    KTUNE_EXACT = 0,
    KTUNE_NEAREST_SIZE = 1,
    KTUNE_SAME_ARCHITECTURE = 2,
    KTUNE_SAME_VENDOR = 3,
    KTUNE_DEFAULT = 4,
    KTUNE_NOTHING = 5
} ktune_match;

/* The step's name: "exact", "nearest_size", "same_architecture", "same_vendor", "default",
 * "nothing" (as Rust's and Python's selection name them). */
static inline const char *ktune_match_name(ktune_match how) {
    static const char *const names[6] = {
        "exact", "nearest_size", "same_architecture", "same_vendor", "default", "nothing"};
    return (unsigned)how < 6 ? names[how] : "nothing";
}

/* Pattern, architecture, vendor: the first whose words appear one after another in a
 * device's name decides ('#' a digit, a trailing '*' any ending of letters). */
static const char *const ktune__rules[][3] = {
@RULES@};
static const char *const ktune__vendor_words[][2] = {
@VENDORS@};

static inline int ktune__alnum(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static inline int ktune__alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static inline int ktune__digit(char c) { return c >= '0' && c <= '9'; }
static inline char ktune__lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c; }

/* The next word (run of ASCII letters and digits) at or after *s; its length, 0 at the end. */
static inline size_t ktune__word(const char **s) {
    size_t n = 0;
    while (**s && !ktune__alnum(**s)) (*s)++;
    while (ktune__alnum((*s)[n])) n++;
    return n;
}

/* Whether two names have the same words, letters compared in lower case. */
static inline int ktune__same_device(const char *a, const char *b) {
    for (;;) {
        size_t i, m = ktune__word(&a), n = ktune__word(&b);
        if (m != n) return 0;
        if (m == 0) return 1;
        for (i = 0; i < m; i++)
            if (ktune__lower(a[i]) != ktune__lower(b[i])) return 0;
        a += m;
        b += n;
    }
}

/* Whether a word of the name matches a pattern word of length p. */
static inline int ktune__match_word(const char *pattern, size_t p, const char *word, size_t w) {
    size_t i;
    int open = p > 0 && pattern[p - 1] == '*';
    if (open) p--;
    if (w < p || (!open && w != p)) return 0;
    for (i = 0; i < p; i++) {
        char c = ktune__lower(word[i]);
        if (pattern[i] == '#' ? !ktune__digit(c) : pattern[i] != c) return 0;
    }
    for (; i < w; i++)
        if (!ktune__alpha(word[i])) return 0;
    return 1;
}

/* Whether the pattern's words appear one after another in name. */
static inline int ktune__match_words(const char *pattern, const char *name) {
    const char *start = name;
    for (;;) {
        const char *p = pattern, *s = start;
        size_t w = ktune__word(&s);
        const char *first = s;
        int all = 1;
        if (w == 0) return 0;
        for (;;) {
            size_t plen = 0, wlen;
            while (p[plen] && p[plen] != ' ') plen++;
            wlen = ktune__word(&s);
            if (wlen == 0 || !ktune__match_word(p, plen, s, wlen)) {
                all = 0;
                break;
            }
            s += wlen;
            p += plen;
            if (*p == ' ') p++;
            if (*p == 0) break;
        }
        if (all) return 1;
        start = first + w;
    }
}

/* The architecture (or 0) and vendor (or 0) of a device name. */
static inline void ktune__family(const char *name, const char **architecture, const char **vendor) {
    size_t i;
    *architecture = 0;
    *vendor = 0;
    for (i = 0; i < sizeof ktune__rules / sizeof ktune__rules[0]; i++) {
        if (ktune__match_words(ktune__rules[i][0], name)) {
            *architecture = ktune__rules[i][1];
            *vendor = ktune__rules[i][2];
            return;
        }
    }
    for (i = 0; i < sizeof ktune__vendor_words / sizeof ktune__vendor_words[0]; i++) {
        const char *s = name;
        size_t n;
        while ((n = ktune__word(&s)) != 0) {
            if (ktune__match_word(ktune__vendor_words[i][0], strlen(ktune__vendor_words[i][0]), s, n)) {
                *vendor = ktune__vendor_words[i][1];
                return;
            }
            s += n;
        }
    }
}

static inline unsigned long long ktune__product(const unsigned long long *s) {
    unsigned long long p = 1;
    int i;
    if (s[0] == 0 || s[1] == 0 || s[2] == 0) return 0;
    for (i = 0; i < 3; i++) {
        if (s[i] != 0 && p > ~0ULL / s[i]) return ~0ULL;
        p *= s[i];
    }
    return p;
}

static inline int ktune__same_text(const char *a, const char *b) {
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* The index of the record the rule picks, or -1 (how is set to KTUNE_NOTHING then). */
static inline int ktune__pick(const char *const *devices, const unsigned long long (*sizes)[3],
                       const double *objectives, int count, int maximize, const char *device,
                       const unsigned long long *size, int dims, ktune_match *how) {
    unsigned long long q[3] = {1, 1, 1}, wanted, best_distance = 0;
    const char *arch, *vendor;
    int i, d, step, best = -1;
    for (d = 0; d < dims && size; d++) {
        if (d < 3) q[d] = size[d];
        else if (size[d] != 0 && q[2] > ~0ULL / size[d]) q[2] = ~0ULL;
        else q[2] *= size[d];
    }
    wanted = ktune__product(q);
    for (i = 0; i < count; i++) {
        if (ktune__same_device(devices[i], device) && sizes[i][0] == q[0] &&
            sizes[i][1] == q[1] && sizes[i][2] == q[2] &&
            (best < 0 || (maximize ? objectives[i] > objectives[best]
                                   : objectives[i] < objectives[best])))
            best = i;
    }
    if (best >= 0) {
        if (how) *how = KTUNE_EXACT;
        return best;
    }
    ktune__family(device, &arch, &vendor);
    for (step = 1; step <= 3; step++) {
        for (i = 0; i < count; i++) {
            unsigned long long p, distance;
            int kin;
            if (step == 1) {
                kin = ktune__same_device(devices[i], device);
            } else {
                const char *a, *v;
                ktune__family(devices[i], &a, &v);
                kin = step == 2 ? (arch && ktune__same_text(a, arch))
                                : (vendor && ktune__same_text(v, vendor));
            }
            if (!kin) continue;
            p = ktune__product(sizes[i]);
            distance = p > wanted ? p - wanted : wanted - p;
            if (best < 0 || distance < best_distance) {
                best = i;
                best_distance = distance;
            }
        }
        if (best >= 0) {
            if (how) *how = (ktune_match)step;
            return best;
        }
    }
    if (how) *how = KTUNE_NOTHING;
    return -1;
}
#endif
"#;

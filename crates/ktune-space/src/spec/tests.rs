use std::collections::BTreeSet;
use std::path::PathBuf;

use super::*;

fn shared(rel: &str) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared")
        .join(rel);
    assert!(
        p.exists(),
        "{} is missing: the tests need ../shared beside the checkout",
        p.display()
    );
    p
}

fn t1_space(name: &str) -> SearchSpace {
    let spec = SpaceSpec::from_path(shared(&format!("data/t1/{name}.json"))).unwrap();
    assert_eq!(spec.format, SpecFormat::T1);
    spec.build().unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn t1_sizes_equal_kernel_tuner_1_5() {
    for (name, size) in [
        ("convolution", 4362),
        ("dedispersion", 11130),
        ("gemm", 116928),
        ("hotspot", 82984),
    ] {
        let space = t1_space(name);
        assert_eq!(space.size(), size, "{name}");
    }
}

#[test]
fn t1_space_equals_the_brute_forced_cache() {
    // A brute-forced cache lists exactly the configurations that satisfy the constraints, so
    // building from the T1 constraints and reading the cache must give the same set.
    for (t1, cache) in [
        ("convolution", "convolution_A100"),
        ("dedispersion", "dedispersion_A4000"),
    ] {
        let built = t1_space(t1);
        let spec = SpaceSpec::from_path(shared(&format!("data/spaces/{cache}.json.gz"))).unwrap();
        assert_eq!(spec.format, SpecFormat::Cache);
        let cached = spec.build().unwrap();
        assert_eq!(cached.size(), built.size(), "{cache}");
        let names: Vec<&str> = built.params().iter().map(|p| p.name()).collect();
        let as_values = |s: &SearchSpace, c: &[u32]| -> Vec<String> {
            names
                .iter()
                .map(|n| s.values(c)[s.param_index(n).unwrap()].to_string())
                .collect()
        };
        let a: BTreeSet<Vec<String>> = built.iter().map(|c| as_values(&built, &c)).collect();
        let b: BTreeSet<Vec<String>> = cached.iter().map(|c| as_values(&cached, &c)).collect();
        assert!(a == b, "{t1} and {cache} differ");
    }
}

#[test]
fn t1_values_expressions_and_defaults() {
    let spec = SpaceSpec::from_path(shared("data/t1/hotspot.json")).unwrap();
    let bx = &spec.parameters[2];
    assert_eq!(bx.name(), "block_size_x");
    assert_eq!(bx.len(), 5 + 32);
    assert_eq!(
        spec.parameters[3].values(),
        &[1, 2, 4, 8, 16, 32].map(Value::Int)
    );
    // max_tfactor's default 1 is not among its values [10]: a warning, not an error.
    assert!(
        spec.warnings.iter().any(|w| w.contains("max_tfactor")),
        "{:?}",
        spec.warnings
    );
    let gemm = SpaceSpec::from_path(shared("data/t1/gemm.json")).unwrap();
    assert_eq!(gemm.parameters[0].default_index(), Some(0)); // written as [0]
}

const EXAMPLE: &str = r#"
name = "example"
constraints = [
    "block_size_x * block_size_y <= 256",
    "precision == 'single' or vector <= 2",
]

[[parameter]]
name = "block_size_x"
values = [16, 32, 64, 128]
default = 32

[[parameter]]
name = "block_size_y"
values = "[2**i for i in range(4)]"

[[parameter]]
name = "vector"
range = { start = 1, stop = 8, factor = 2 }
log = true

[[parameter]]
name = "precision"
type = "categorical"
values = ["single", "double"]

[[parameter]]
name = "alpha"
type = "real"
range = { start = 0.5, stop = 1.0, step = 0.25 }

[[parameter]]
name = "unroll"
type = "bool"

[[parameter]]
name = "order"
type = "permutation"
items = ["i", "j", "k"]

[[parameter]]
name = "level"
type = "ordinal"
values = ["low", "mid", "high"]

[runner]
kind = "command"
"#;

#[test]
fn native_toml_reads_every_parameter_kind() {
    let spec = SpaceSpec::from_toml_str(EXAMPLE, "ktune.toml").unwrap();
    assert_eq!(spec.name.as_deref(), Some("example"));
    let kinds: Vec<&str> = spec.parameters.iter().map(|p| p.kind().name()).collect();
    assert_eq!(
        kinds,
        [
            "int",
            "int",
            "int",
            "categorical",
            "real",
            "bool",
            "permutation",
            "ordinal"
        ]
    );
    assert_eq!(spec.parameters[2].values(), &[1, 2, 4, 8].map(Value::Int));
    assert!(spec.parameters[2].is_log());
    assert_eq!(
        spec.parameters[4].values(),
        &[0.5, 0.75, 1.0].map(Value::Real)
    );
    assert_eq!(spec.parameters[6].len(), 6);
    assert_eq!(spec.parameters[0].default_index(), Some(1));
    let space = spec.build().unwrap();
    // (x, y) pairs with x*y <= 256: 4+4+3+2 = 13; (vector, precision): 4 + 2 = 6.
    assert_eq!(space.size(), 13 * 6 * 3 * 2 * 6 * 3);
    assert_eq!(space.groups().len(), 2 + 4);
}

fn err(text: &str) -> String {
    match SpaceSpec::from_toml_str(text, "ktune.toml").and_then(|s| s.build()) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

const TWO_PARAMS: &str = "[[parameter]]\nname = \"block_size_x\"\nvalues = [1, 2]\n[[parameter]]\nname = \"mode\"\nvalues = [\"a\", \"b\"]\n";

#[test]
fn unknown_parameter_points_at_the_token_in_the_file() {
    let text = format!("constraints = [\"block_sise_x * 2 <= 4\"]\n{TWO_PARAMS}");
    let e = err(&text);
    assert!(e.contains("block_sise_x"), "{e}");
    assert!(e.contains("did you mean `block_size_x`?"), "{e}");
    assert!(e.contains("--> ktune.toml:1:17"), "{e}");
    assert!(
        e.contains(&format!("{}^^^^^^^^^^^^", " ".repeat(16))),
        "{e}"
    );
}

#[test]
fn type_mismatch_is_reported() {
    let e = err(&format!("constraints = [\"mode < 3\"]\n{TWO_PARAMS}"));
    assert!(e.contains("string") && e.contains("number"), "{e}");
    assert!(e.contains("ktune.toml:1"), "{e}");
}

#[test]
fn syntax_error_in_a_constraint_shows_a_caret() {
    let e = err(&format!(
        "constraints = [\"block_size_x * * 2\"]\n{TWO_PARAMS}"
    ));
    assert!(e.contains("--> ktune.toml:1:32"), "{e}");
}

#[test]
fn malformed_toml_names_the_line() {
    let e = err("[[parameter]]\nname = \"x\"\nvalues = [1, 2\n");
    assert!(e.contains("TOML") && e.contains("line"), "{e}");
}

#[test]
fn malformed_json_names_the_line() {
    let e = SpaceSpec::from_t1_str(
        "{\n  \"ConfigurationSpace\": {\n    \"TuningParameters\": [,]\n  }\n}",
        "p.json",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("line 3"), "{e}");
    assert!(e.contains("--> p.json:3:"), "{e}");
}

#[test]
fn duplicates_and_empty_domains_are_errors_with_locations() {
    let e = err(
        "[[parameter]]\nname = \"x\"\nvalues = [1]\n[[parameter]]\nname = \"x\"\nvalues = [2]\n",
    );
    assert!(
        e.contains("duplicate parameter `x`") && e.contains("ktune.toml:5:8"),
        "{e}"
    );
    let e = err("[[parameter]]\nname = \"x\"\nvalues = [1, 2, 1]\n");
    assert!(
        e.contains("lists the value `1` more than once") && e.contains("ktune.toml:2"),
        "{e}"
    );
    let e = err("[[parameter]]\nname = \"x\"\nvalues = []\n");
    assert!(e.contains("empty domain"), "{e}");
    let e = err("[[parameter]]\nname = \"x\"\nvalues = \"[i for i in range(3, 3)]\"\n");
    assert!(e.contains("empty domain"), "{e}");
}

#[test]
fn an_empty_space_names_the_constraint_that_removes_most() {
    let e = err(
        "constraints = [\"x > 1\", \"x * y > 100\"]\n[[parameter]]\nname = \"x\"\nvalues = [1, 2, 3]\n[[parameter]]\nname = \"y\"\nvalues = [1, 2]\n",
    );
    assert!(
        e.contains("no configuration satisfies the constraints"),
        "{e}"
    );
    assert!(e.contains("`x * y > 100`") && e.contains("100.0%"), "{e}");
}

#[test]
fn misspelt_sections_and_fields_are_errors() {
    let e = err("[[paramter]]\nname = \"x\"\nvalues = [1]\n");
    assert!(
        e.contains("unknown top-level key `paramter`") && e.contains("did you mean `parameter`?"),
        "{e}"
    );
    assert!(e.contains("ktune.toml:1:3"), "{e}");
    let e = err("[[parameter]]\nname = \"x\"\nvalue = [1]\n");
    assert!(e.contains("value"), "{e}");
    let e = err("[[parameter]]\nname = \"x\"\ntype = \"integr\"\nvalues = [1]\n");
    assert!(e.contains("unknown type `integr`"), "{e}");
    let e = err("name = \"nothing\"\n");
    assert!(e.contains("defines no parameters"), "{e}");
}

#[test]
fn values_must_fit_the_declared_type() {
    let e = err("[[parameter]]\nname = \"x\"\ntype = \"int\"\nvalues = [1, 2.5]\n");
    assert!(e.contains("`x`"), "{e}");
    let e = err("[[parameter]]\nname = \"x\"\ntype = \"int\"\nvalues = [1, \"a\"]\n");
    assert!(e.contains("string"), "{e}");
    let e = err("[[parameter]]\nname = \"x\"\nvalues = [1, 2]\nrange = { start = 1, stop = 2 }\n");
    assert!(e.contains("either `values` or `range`"), "{e}");
    let e = err("[[parameter]]\nname = \"x\"\nvalues = [0, 1]\nlog = true\n");
    assert!(e.contains("log-scale"), "{e}");
}

#[test]
fn closest_suggests_near_names_only() {
    assert_eq!(
        closest("blok_size_x", ["block_size_x", "tile"]),
        Some("block_size_x")
    );
    assert_eq!(
        closest("BLOCK_SIZE_X", ["block_size_x"]),
        Some("block_size_x")
    );
    assert_eq!(closest("zzz", ["block_size_x", "tile"]), None);
}

#[test]
fn an_error_in_a_values_expression_points_into_the_string() {
    let e = err("[[parameter]]\nname = \"x\"\nvalues = \"[2**i for i in rnge(4)]\"\n");
    assert!(e.contains("error in the values of parameter `x`"), "{e}");
    assert!(e.contains("--> ktune.toml:3:26"), "{e}");
    assert!(e.contains(&format!("{}^^^^", " ".repeat(25))), "{e}");
    assert_eq!(e.matches("not supported").count(), 1, "{e}");
}

#[test]
fn integer_geometric_ranges_are_exact() {
    let spec = SpaceSpec::from_toml_str(
        "[[parameter]]\nname = \"n\"\nrange = { start = 1, stop = 1099511627776, factor = 2 }\n",
        "big.toml",
    )
    .unwrap();
    let space = spec.build().unwrap();
    let last = space.configuration(space.size() - 1);
    assert_eq!(space.size(), 41);
    assert_eq!(
        space.values(&last)[0].as_f64(),
        Some(1_099_511_627_776.0),
        "{}",
        space.describe(&last)
    );
    assert_eq!(space.describe(&last), "n=1099511627776");
}

#[test]
fn sections_nothing_reads_are_refused_with_where_they_go() {
    let base = "[[parameter]]\nname = \"x\"\nvalues = [1, 2]\n";
    for (section, says) in [
        ("[objective]\ndirection = \"maximize\"\n", "objective = {"),
        ("[store]\npath = \"x.db\"\n", "--db"),
        ("[bench]\nseeds = 3\n", "ktune bench"),
    ] {
        let e = SpaceSpec::from_toml_str(&format!("{section}{base}"), "k.toml")
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("is not read by ktune") && e.contains(says),
            "{e}"
        );
    }
    assert!(
        SpaceSpec::from_toml_str(&format!("[budget]\nmax_evaluations = 3\n{base}"), "k.toml")
            .is_ok()
    );
}

/// Numbered loops, as compiler benchmarks write them (BaCO's `p_i0 < p_i3`): items may be
/// numbers, named by their decimal text, and `order.index(0) < order.index(3)` says loop 0
/// comes before loop 3 in one line.
#[test]
fn permutation_items_may_be_numbers_and_their_positions_compared() {
    let text = r#"
constraints = ["order.index(0) < order.index(3)", "order.index('1') != 0"]

[[parameter]]
name = "order"
type = "permutation"
items = [0, 1, 2, 3]
"#;
    let spec = SpaceSpec::from_toml_str(text, "ktune.toml").unwrap();
    let space = spec.build().unwrap();
    // Of the 24 orderings, 12 put 0 before 3; of those, 3 start with loop 1.
    assert_eq!(space.size(), 9);
    let p = &space.params()[0];
    for r in 0..space.size() {
        let c = space.configuration(r);
        let text = p.text(space.values(&c)[0]);
        let order: Vec<&str> = text.split(',').collect();
        let at = |i: &str| order.iter().position(|o| *o == i).unwrap();
        assert!(at("0") < at("3") && at("1") != 0, "{text}");
    }
    // A number that is not an item is named as such.
    let bad = text.replace("order.index(3)", "order.index(7)");
    let e = SpaceSpec::from_toml_str(&bad, "ktune.toml")
        .unwrap()
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("`7` is not an item"), "{e}");
}

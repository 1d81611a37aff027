use super::json::{self, Json};
use super::*;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

/// The shared fixtures' queries: (wisdom file, device, size, matched, index: -1 the default,
/// -2 nothing). The C header and Python read the same file.
pub(crate) fn queries() -> Vec<(String, String, Vec<u64>, String, i64)> {
    let doc = json::parse(&fixture("queries.json")).unwrap();
    doc.as_array()
        .unwrap()
        .iter()
        .map(|q| {
            let text = |k: &str| q.get(k).unwrap().as_str().unwrap().to_string();
            let size = q
                .get("size")
                .unwrap()
                .as_array()
                .unwrap()
                .iter()
                .map(|x| match x {
                    Json::Int(i) => *i as u64,
                    // Beyond i64: the largest extent.
                    other => other.as_f64().unwrap() as u64,
                })
                .collect();
            let index = match q.get("index").unwrap() {
                Json::Int(i) => *i,
                _ => panic!("index"),
            };
            (text("wisdom"), text("device"), size, text("matched"), index)
        })
        .collect()
}

#[test]
fn the_shared_queries_are_answered_by_the_rule() {
    let qs = queries();
    assert!(qs.len() >= 30);
    for (file, device, size, matched, index) in qs {
        let w = Wisdom::parse(&fixture(&file)).unwrap();
        let got = w.select(&device, &size);
        let (got_match, got_index) = match got {
            None => ("nothing", -2),
            Some(s) => (
                s.matched.name(),
                s.record.map_or(-1, |r| {
                    w.records.iter().position(|x| std::ptr::eq(x, r)).unwrap() as i64
                }),
            ),
        };
        assert_eq!(
            (got_match, got_index),
            (matched.as_str(), index),
            "{file}: {device:?} {size:?}"
        );
        if let Some(s) = got {
            let expected = if index >= 0 {
                &w.records[index as usize].config
            } else {
                w.default.as_ref().unwrap()
            };
            assert_eq!(s.config, expected.as_slice());
        }
    }
}

#[test]
fn a_wisdom_file_reads_back_as_written() {
    let w = Wisdom::parse(&fixture("tuned.wisdom")).unwrap();
    assert_eq!(w.key, "matmul");
    assert_eq!(w.records.len(), 10);
    assert_eq!(w.records[9].problem_size, [4096, 4096, 2]);
    assert_eq!(w.records[0].config[3], Value::Real(1.0));
    assert_eq!(w.records[2].config[3], Value::Int(2));
    assert_eq!(
        w.facts,
        vec![("default_from".to_string(), Json::Str("a fixture".into()))]
    );
    assert_eq!(Wisdom::parse(&w.to_text()).unwrap(), w);
    let m = Wisdom::parse(&fixture("maximize.wisdom")).unwrap();
    assert_eq!(m.direction, Direction::Maximize);
    assert_eq!(m.default, None);
}

#[test]
fn broken_wisdom_is_named_with_its_line() {
    let good = fixture("tuned.wisdom");
    let cut = &good[..good.len() - 40];
    let e = Wisdom::parse(cut).unwrap_err().to_string();
    assert!(
        e.starts_with("line 11, column") && e.contains("cut off"),
        "{e}"
    );
    for (text, said) in [
        ("", "the file is empty"),
        (
            "{\"a\": 1}",
            "the header has no `version`: this is not a wisdom file",
        ),
        (
            "{\"version\": \"2.0\", \"key\": \"k\", \"objective\": \"time\", \"tunable_parameters\": []}",
            "wisdom version \"2.0\" is not 1.0",
        ),
        (
            "{\"version\": \"1.0\", \"key\": \"k\", \"objective\": \"time\", \"tunable_parameters\": [\"x\"]}\n\
             {\"config\": [1, 2], \"problem_size\": [1], \"environment\": {\"device_name\": \"d\"}, \"time\": 1}",
            "line 2: config: 2 values for 1 tunable parameters",
        ),
        (
            "{\"version\": \"1.0\", \"key\": \"k\", \"objective\": \"time\", \"tunable_parameters\": [\"x\"]}\n\
             {\"config\": [1], \"problem_size\": [1, -2], \"environment\": {\"device_name\": \"d\"}, \"time\": 1}",
            "line 2: problem_size holds -2",
        ),
        (
            "{\"version\": \"1.0\", \"key\": \"k\", \"objective\": \"time\", \"tunable_parameters\": [\"x\"]}\n\
             {\"config\": [1], \"problem_size\": [1], \"environment\": {}, \"time\": 1}",
            "line 2: the record has no environment.device_name",
        ),
        (
            "{\"version\": \"1.0\", \"key\": \"k\", \"objective\": \"time\", \"tunable_parameters\": [\"x\"]}\n\
             {\"config\": [[1]], \"problem_size\": [1], \"environment\": {\"device_name\": \"d\"}, \"time\": 1}",
            "line 2: config: [1] is not a parameter's value",
        ),
        (
            "{\"version\": \"1.0\", \"key\": \"k\", \"objective\": \"time\", \"tunable_parameters\": [\"x\"]}\n\
             {\"config\": [1], \"problem_size\": [1], \"environment\": {\"device_name\": \"d\"}}",
            "line 2: the record has no `time` (the objective)",
        ),
    ] {
        let e = Wisdom::parse(text).unwrap_err().to_string();
        assert!(e.contains(said), "{text}: {e}");
    }
    let dir = std::env::temp_dir().join(format!("ktune-select-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("matmul.wisdom");
    std::fs::write(&path, &good).unwrap();
    let e = Wisdom::read_for(&path, "conv").unwrap_err().to_string();
    assert_eq!(e, "this is wisdom for kernel `matmul`, not `conv`");
    assert!(Wisdom::read_for(&path, "matmul").is_ok());
    let e = Wisdom::read(dir.join("missing.wisdom"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("cannot read `") && e.contains("missing.wisdom"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_defines_header_has_a_block_per_device_and_size() {
    let w = Wisdom::parse(&fixture("tuned.wisdom")).unwrap();
    let h = header::defines_header(&w, "a fixture").unwrap();
    // The A100's two sizes nest; its 4096x4096 block takes the better of two records.
    let a100 = h.find("#if defined(TARGET_NVIDIA_A100_SXM4_40GB)").unwrap();
    let nested = &h[a100..h
        .find("#elif defined(TARGET_NVIDIA_H100_80GB_HBM3)")
        .unwrap()];
    assert!(nested.contains("#  if defined(SIZE_4096_4096)\n  /* problem size 4096x4096: time 1.4 */\n  #define block_size_x 512"), "{nested}");
    assert!(
        nested.contains("#  elif defined(SIZE_1024_1024)"),
        "{nested}"
    );
    assert!(
        nested.contains("#  else\n  /* no SIZE_ given: the largest, problem size 4096x4096"),
        "{nested}"
    );
    assert!(
        h.contains("#elif defined(TARGET_NVIDIA_RTX_A4000)\n/* problem size 4096x4096x2"),
        "{h}"
    );
    assert!(h.contains("#define layout col \"quoted\""), "{h}");
    assert!(
        h.contains("#else\n/* the default, for any other device */\n#define block_size_x 128"),
        "{h}"
    );
    assert!(h.starts_with("/* Tuned configurations of kernel `matmul` (a fixture)."));
    assert!(h.contains("#ifndef kernel_tuner\n") && h.ends_with("#endif /* kernel_tuner */\n"));
    let mut bad = w.clone();
    bad.records[3].device = "--".into();
    let e = header::defines_header(&bad, "").unwrap_err().to_string();
    assert!(e.contains("device \"--\" cannot be a macro"), "{e}");
    bad.parameters[0] = "block-x".into();
    let e = c::select_header(&bad, "").unwrap_err().to_string();
    assert!(
        e.contains("parameter `block-x` cannot be a C macro name"),
        "{e}"
    );
}

#[test]
fn macros_are_made_of_the_names_words() {
    assert_eq!(
        header::device_macro("NVIDIA A100-SXM4-40GB").as_deref(),
        Some("TARGET_NVIDIA_A100_SXM4_40GB")
    );
    assert_eq!(
        header::device_macro("Intel(R) Data Center GPU Max 1550").as_deref(),
        Some("TARGET_INTEL_R_DATA_CENTER_GPU_MAX_1550")
    );
    assert_eq!(header::device_macro(" - "), None);
    assert_eq!(header::size_macro([4096, 1, 1]), "SIZE_4096");
    assert_eq!(header::size_macro([1, 1, 1]), "SIZE_1");
    assert_eq!(header::size_macro([4, 1, 2]), "SIZE_4_1_2");
    assert_eq!(c::c_name("conv-2d"), "conv_2d");
    assert_eq!(c::c_name("2d"), "_2d");
}

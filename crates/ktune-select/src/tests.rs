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

/// The C selection header against the Rust selection: both fixtures' headers compiled into one
/// program (so several kernels' headers coexist) with a C compiler, strict warnings as errors,
/// and every shared query answered alike. Skipped, saying so, where no C compiler is found.
mod c_header {
    use std::io::Write as _;
    use std::process::{Command, Stdio};

    use super::{fixture, queries};
    use crate::{Value, Wisdom, c};

    const DRIVER: &str = r#"
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>
    #include "matmul_select.h"
    #include "gflops_select.h"

    /* Lines: kernel TAB device TAB extents separated by spaces. Prints the step, the index, and
     * the configuration's values. */
    int main(void) {
        char line[4096];
        while (fgets(line, sizeof line, stdin)) {
            char *kernel = strtok(line, "\t"), *device = strtok(0, "\t"), *sizes = strtok(0, "\t\n");
            unsigned long long size[8];
            int dims = 0, i;
            ktune_match how;
            char *tok;
            for (tok = strtok(sizes, " "); tok && dims < 8; tok = strtok(0, " ")) {
                if (strcmp(tok, "-") != 0) size[dims++] = strtoull(tok, 0, 10);
            }
            if (strcmp(device, "-") == 0) device = "";
            if (strcmp(kernel, "matmul") == 0) {
                const matmul_config *c = ktune_select(device, size, dims, &how);
                i = ktune_select_index_matmul(device, size, dims, &how);
                if (c) printf("%s %d %lld %lld %d %.17g %s %s\n", ktune_match_name(how), i,
                              c->block_size_x, c->tile, c->use_shared, c->scale, c->layout, c->order);
                else printf("%s %d\n", ktune_match_name(how), i);
            } else {
                const gflops_kernel_config *c = ktune_select_gflops_kernel(device, size, dims, &how);
                i = ktune_select_index_gflops_kernel(device, size, dims, &how);
                if (c) printf("%s %d %lld\n", ktune_match_name(how), i, c->bx);
                else printf("%s %d\n", ktune_match_name(how), i);
            }
        }
        return 0;
    }
    "#;

    fn compiler() -> Option<String> {
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        Command::new(&cc)
            .arg("--version")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|_| cc)
    }

    /// What the driver prints for a selection (reals as C's `%.17g` writes them).
    fn expected(w: &Wisdom, matched: &str, index: i64) -> String {
        let config = match index {
            -2 => return format!("{matched} {index}"),
            -1 => w.default.as_ref().unwrap(),
            i => &w.records[i as usize].config,
        };
        let text: Vec<String> = config
            .iter()
            .map(|v| match v {
                // `%.17g` writes a whole real as an integer, as Rust's `{}` does.
                Value::Real(x) => format!("{x}"),
                other => other.to_string(),
            })
            .collect();
        format!("{matched} {index} {}", text.join(" "))
    }

    #[test]
    fn the_c_header_answers_every_shared_query_as_rust_does() {
        let Some(cc) = compiler() else {
            eprintln!("SKIPPED: no C compiler (cc, or $CC) to compile the selection header with");
            return;
        };
        let dir = std::env::temp_dir().join(format!("ktune-select-c-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let tuned = Wisdom::parse(&fixture("tuned.wisdom")).unwrap();
        let gflops = Wisdom::parse(&fixture("maximize.wisdom")).unwrap();
        std::fs::write(
            dir.join("matmul_select.h"),
            c::select_header(&tuned, "fixture").unwrap(),
        )
        .unwrap();
        std::fs::write(
            dir.join("gflops_select.h"),
            c::select_header(&gflops, "fixture").unwrap(),
        )
        .unwrap();
        std::fs::write(dir.join("driver.c"), DRIVER).unwrap();
        let exe = dir.join("driver");
        let built = Command::new(&cc)
            .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-o"])
            .arg(&exe)
            .arg(dir.join("driver.c"))
            .output()
            .unwrap();
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
        let queries = queries();
        let mut input = String::new();
        let mut want = Vec::new();
        for (file, device, size, matched, index) in &queries {
            let (kernel, w) = if file == "tuned.wisdom" {
                ("matmul", &tuned)
            } else {
                ("gflops", &gflops)
            };
            let sizes: Vec<String> = size.iter().map(u64::to_string).collect();
            let device = if device.is_empty() { "-" } else { device };
            let sizes = if sizes.is_empty() {
                "-".to_string()
            } else {
                sizes.join(" ")
            };
            input.push_str(&format!("{kernel}\t{device}\t{sizes}\n"));
            want.push(expected(w, matched, *index));
        }
        let mut child = Command::new(&exe)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let got: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        assert_eq!(got.len(), want.len());
        for ((q, g), w) in queries.iter().zip(&got).zip(&want) {
            assert_eq!(g, w, "{q:?}");
        }
        assert!(
            got.contains(&"same_architecture 3 512 4 1 1.5 row i,k,j".to_string()),
            "{got:?}"
        );
        assert!(got.contains(&"nothing -2".to_string()), "{got:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! The C selection header against the Rust selection: both fixtures' headers compiled into one
//! program (so several kernels' headers coexist) with a C compiler, strict warnings as errors,
//! and every shared query answered alike. Skipped, saying so, where no C compiler is found.

use std::io::Write as _;
use std::process::{Command, Stdio};

use ktune_select::{Value, Wisdom, c};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

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
    let queries: Vec<_> = ktune_select_queries();
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

/// The shared queries (the same reader as the unit tests', repeated here: integration tests
/// see only the public API).
fn ktune_select_queries() -> Vec<(String, String, Vec<u64>, String, i64)> {
    use ktune_select::json::{self, Json};
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
                    other => other.as_f64().unwrap() as u64,
                })
                .collect();
            let Json::Int(index) = q.get("index").unwrap() else {
                panic!("index")
            };
            (
                text("wisdom"),
                text("device"),
                size,
                text("matched"),
                *index,
            )
        })
        .collect()
}

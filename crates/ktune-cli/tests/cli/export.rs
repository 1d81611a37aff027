//! `ktune export`: the wisdom file and the two C headers from brute-forced caches and from real
//! studies at two problem sizes, compiled with gcc per device; and its refusals, which leave
//! nothing written.

use std::path::Path;

use crate::common::*;

/// A wisdom file's records: device, problem size, values as text.
type Records = Vec<(String, Vec<u64>, Vec<String>)>;

/// The wisdom's parameter names, records and default (values as text).
fn records(wisdom: &Path) -> (Vec<String>, Records, Vec<String>) {
    let text = std::fs::read_to_string(wisdom).unwrap();
    let mut lines = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap());
    let header = lines.next().unwrap();
    let names = header["tunable_parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect();
    let text_of = |v: &serde_json::Value| match v {
        serde_json::Value::Bool(b) => u8::from(*b).to_string(),
        other => other.to_string(),
    };
    let default = header["ktune"]["default"]
        .as_array()
        .map(|d| d.iter().map(text_of).collect())
        .unwrap_or_default();
    let records = lines
        .map(|r| {
            (
                r["environment"]["device_name"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                r["problem_size"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap())
                    .collect(),
                r["config"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(text_of)
                    .collect(),
            )
        })
        .collect();
    (names, records, default)
}

/// What a C program compiled with `header` and `flags` sees of the parameters' macros.
fn compiled_values(dir: &Path, header: &Path, names: &[String], flags: &[&str]) -> String {
    let prints: String = names
        .iter()
        .map(|n| {
            format!(
                "#ifdef {n}\n    printf(\"%s \", KTUNE_STR({n}));\n#else\n    printf(\"- \");\n#endif\n"
            )
        })
        .collect();
    let source = format!(
        "#include <stdio.h>\n#include \"{}\"\n#define KTUNE_STR2(x) #x\n#define KTUNE_STR(x) KTUNE_STR2(x)\nint main(void) {{\n{prints}    printf(\"\\n\");\n    return 0;\n}}\n",
        header.display()
    );
    let c = written(dir, "show.c", &source);
    let exe = dir.join("show");
    succeeded(
        std::process::Command::new("gcc")
            .args(flags)
            .arg("-Wall")
            .arg("-Werror")
            .arg("-o")
            .arg(&exe)
            .arg(&c)
            .output()
            .unwrap(),
    );
    let out = std::process::Command::new(&exe).output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn brute_forced_caches_export_per_device_and_compile_per_target() {
    if gcc_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let gpus = ["A100", "A4000", "A6000", "MI250X", "W6600", "W7800"];
    let sources: Vec<String> = gpus
        .iter()
        .map(|g| {
            shared_space(&format!("convolution_{g}"))
                .display()
                .to_string()
        })
        .collect();
    let mi250x = format!("{}=AMD Instinct MI250X", sources[3]);
    let (wisdom, header, select) = (
        dir.path().join("conv.wisdom"),
        dir.path().join("conv.h"),
        dir.path().join("conv_select.h"),
    );
    let out = ktune()
        .arg("export")
        .args(&sources)
        .args(["--device", &mi250x, "--wisdom"])
        .arg(&wisdom)
        .arg("--header")
        .arg(&header)
        .arg("--c-select")
        .arg(&select)
        .succeeds();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_mentions(
        &err,
        &["the robust configuration: measured in 6 of 6 sources"],
    );
    let (names, records, default) = records(&wisdom);
    assert_eq!(records.len(), 6);
    assert_eq!(records[3].0, "AMD Instinct MI250X");
    assert_eq!(records[0].1, vec![4096, 4096, 1]);
    for (device, _, values) in &records {
        let flag = format!(
            "-DTARGET_{}",
            device
                .split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join("_")
                .to_uppercase()
        );
        assert_eq!(
            compiled_values(dir.path(), &header, &names, &[&flag]),
            values.join(" "),
            "{device}"
        );
    }
    // No target: the default; a tuning run (kernel_tuner defined): nothing.
    assert_eq!(
        compiled_values(dir.path(), &header, &names, &[]),
        default.join(" ")
    );
    let none = vec!["-"; names.len()].join(" ");
    assert_eq!(
        compiled_values(dir.path(), &header, &names, &["-Dkernel_tuner=1"]),
        none
    );
    // The selection header compiles beside it and picks the A100's record for an A30.
    let program = written(
        dir.path(),
        "pick.c",
        &format!(
            "#include <stdio.h>\n#include \"{}\"\nint main(void) {{\n    unsigned long long size[2] = {{4096, 4096}};\n    ktune_match how;\n    const convolution_kernel_config *c = ktune_select(\"NVIDIA A30\", size, 2, &how);\n    printf(\"%s %lld %lld\\n\", ktune_match_name(how), c->block_size_x, c->block_size_y);\n    return 0;\n}}\n",
            select.display()
        ),
    );
    let exe = dir.path().join("pick");
    succeeded(
        std::process::Command::new("gcc")
            .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-o"])
            .arg(&exe)
            .arg(&program)
            .output()
            .unwrap(),
    );
    let picked =
        String::from_utf8(std::process::Command::new(&exe).output().unwrap().stdout).unwrap();
    // A30 and A100 are Ampere; of the Ampere devices at 4096x4096 the first written, the A100.
    assert_eq!(
        picked.trim(),
        format!("same_architecture {} {}", records[0].2[0], records[0].2[1])
    );
}

/// A small program tuned at two problem sizes: each size's study exports as a nested block,
/// chosen with -DSIZE_...
#[test]
fn studies_at_two_sizes_nest_per_size() {
    if gcc_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    written(
        dir.path(),
        "prog.c",
        "#include <stdio.h>\nint main(void) { printf(\"time: %d ms\\n\", (X - N / 100) * (X - N / 100) + 1); return 0; }\n",
    );
    let mut dbs = Vec::new();
    for n in [200, 400] {
        let spec = gcc_spec(
            &format!(
                "[[parameter]]\nname = \"X\"\nvalues = [1, 2, 3, 4, 5]\n\n[[parameter]]\nname = \"N\"\nvalues = [{n}]\n"
            ),
            0,
            5,
        )
        .replace("name = \"random\"", "name = \"brute_force\"");
        let spec_path = written(dir.path(), &format!("n{n}.toml"), &spec);
        let db = dir.path().join(format!("n{n}.db"));
        ktune_in(dir.path())
            .arg("tune")
            .arg(&spec_path)
            .arg("--db")
            .arg(&db)
            .arg("--quiet")
            .succeeds();
        dbs.push(db.display().to_string());
    }
    let header = dir.path().join("prog.h");
    let wisdom = dir.path().join("prog.wisdom");
    let err = ktune()
        .arg("export")
        .args(&dbs)
        .arg("--wisdom")
        .arg(&wisdom)
        .fails();
    assert_mentions(&err, &["does not record its problem size", "--size"]);
    assert!(!wisdom.exists());
    let mut cmd = ktune();
    cmd.arg("export").args(&dbs);
    for (db, n) in dbs.iter().zip([200, 400]) {
        cmd.args([
            "--device",
            &format!("{db}=Test CPU"),
            "--size",
            &format!("{db}={n}"),
        ]);
    }
    cmd.arg("--header")
        .arg(&header)
        .arg("--wisdom")
        .arg(&wisdom)
        .succeeds();
    let (names, records, _) = records(&wisdom);
    assert_eq!(names, ["X", "N", "SLEEP_MS"]);
    assert_eq!(records[0].2, ["2", "200", "0"]);
    assert_eq!(records[1].2, ["4", "400", "0"]);
    let show = |flags: &[&str]| compiled_values(dir.path(), &header, &names, flags);
    assert_eq!(show(&["-DTARGET_TEST_CPU", "-DSIZE_200"]), "2 200 0");
    assert_eq!(show(&["-DTARGET_TEST_CPU", "-DSIZE_400"]), "4 400 0");
    // Without a size, the device's largest.
    assert_eq!(show(&["-DTARGET_TEST_CPU"]), "4 400 0");
}

#[test]
fn refusals_name_the_problem_and_leave_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let cache = |name: &str, values: &[(i64, &str)], params: &str| {
        let entries: Vec<String> = values
            .iter()
            .map(|(x, t)| format!("\"{x}\": {{\"x\": {x}, \"time\": {t}}}"))
            .collect();
        written(
            dir.path(),
            name,
            &format!(
                "{{\"kernel_name\": \"k\", \"device_name\": \"NVIDIA A100\", \"problem_size\": [64], \"tune_params_keys\": [\"x\"], \"tune_params\": {{\"x\": {params}}}, \"cache\": {{{}}}}}",
                entries.join(", ")
            ),
        )
        .display()
        .to_string()
    };
    let failed = cache(
        "failed.json",
        &[
            (1, "\"RuntimeFailedConfig\""),
            (2, "\"CompilationFailedConfig\""),
        ],
        "[1, 2]",
    );
    let good = cache("good.json", &[(1, "2.0"), (2, "1.0")], "[1, 2]");
    let other = cache("other.json", &[(1, "2.0"), (3, "1.5")], "[1, 3]");
    let wisdom = dir.path().join("out.wisdom");
    let header = dir.path().join("out.h");
    let export = |args: &[&str]| {
        let mut c = ktune();
        c.arg("export")
            .args(args)
            .arg("--wisdom")
            .arg(&wisdom)
            .arg("--header")
            .arg(&header);
        c.fails()
    };
    assert_mentions(
        &export(&[&failed]),
        &["failed.json` holds no measurements that succeeded (every configuration failed"],
    );
    assert_mentions(
        &export(&[&good, &other]),
        &[
            "both claim device \"NVIDIA A100\" at problem size 64x1x1, but their search spaces differ",
        ],
    );
    let renamed = format!("{good}=--");
    assert_mentions(
        &export(&[&good, "--device", &renamed]),
        &["device \"--\" cannot be a macro"],
    );
    let unknown = "elsewhere.json=X".to_string();
    assert_mentions(
        &export(&[&good, "--device", &unknown]),
        &["`elsewhere.json` is none of the sources"],
    );
    let bad_size = format!("{good}=4096x");
    assert_mentions(
        &export(&[&good, "--size", &bad_size]),
        &["--size \"4096x\": `` is not a whole number"],
    );
    assert!(
        !wisdom.exists() && !header.exists(),
        "a refused export wrote something"
    );
    ktune()
        .args(["export", &good])
        .fails_saying(&["nothing to write: give --wisdom FILE"]);
    // The same device and size with the same space: both kept, the header takes the better.
    let again = cache("again.json", &[(1, "0.5"), (2, "3.0")], "[1, 2]");
    ktune()
        .args(["export", &good, &again])
        .arg("--header")
        .arg(&header)
        .succeeds();
    let text = std::fs::read_to_string(&header).unwrap();
    assert_mentions(&text, &["#define x 1\n"]);
}

/// The CPU matmul's real studies at three sizes (`bench/data/matmul-sizes`): exported with
/// their sizes, the header put in front of `examples/matmul-cpu/matmul.c` with `-include`
/// gives each size its tuned tiles, and the program built so runs.
#[test]
fn the_matmul_studies_at_three_sizes_build_the_example_per_size() {
    if gcc_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut sources = Vec::new();
    for n in [256, 512, 768] {
        // Copies: reading a study may leave SQLite's shared-memory file beside it.
        let copy = dir.path().join(format!("{n}.db"));
        std::fs::copy(repo(&format!("bench/data/matmul-sizes/{n}.db")), &copy).unwrap();
        sources.push((copy.display().to_string(), n));
    }
    let header = dir.path().join("matmul_tuned.h");
    let mut cmd = ktune();
    cmd.arg("export");
    for (s, _) in &sources {
        cmd.arg(s);
    }
    for (s, n) in &sources {
        cmd.args(["--size", &format!("{s}={n}")]);
    }
    let out = cmd.arg("--header").arg(&header).succeeds();
    let err = String::from_utf8_lossy(&out.stderr);
    // The study recorded its worker's CPU; the tiles are each size's best (README there).
    assert_mentions(
        &err,
        &["AMD EPYC at 512x1x1: time = 15.128 (N=512, TILE_I=16, TILE_J=128, TILE_K=32"],
    );
    let macros = |size: &str| {
        let out = std::process::Command::new("gcc")
            .args(["-dM", "-E", "-include"])
            .arg(&header)
            .args(["-DTARGET_AMD_EPYC", size, "-x", "c", "/dev/null"])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    assert_mentions(
        &macros("-DSIZE_512"),
        &["#define TILE_I 16\n", "#define N 512\n"],
    );
    assert_mentions(
        &macros("-DSIZE_256"),
        &["#define TILE_I 64\n", "#define N 256\n"],
    );
    let exe = dir.path().join("matmul");
    succeeded(
        std::process::Command::new("gcc")
            .args(["-O1", "-include"])
            .arg(&header)
            .args(["-DTARGET_AMD_EPYC", "-DSIZE_256", "-o"])
            .arg(&exe)
            .arg(repo("examples/matmul-cpu/matmul.c"))
            .arg("-lm")
            .output()
            .unwrap(),
    );
    let ran = std::process::Command::new(&exe)
        .arg("256")
        .output()
        .unwrap();
    assert!(ran.status.success());
    assert_mentions(&String::from_utf8_lossy(&ran.stdout), &["time: "]);
}

/// `--goal` exports per source what a goal over several objectives picks from its
/// measurements (here a Kernel Tuner cache recording time and energy), and names the
/// source's objectives when the goal names another.
#[test]
fn a_goal_over_time_and_energy_picks_the_exported_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let entries = [
        (1, 1.00, 10.0),
        (2, 1.03, 6.0),
        (3, 1.20, 3.0),
        (4, 1.04, 8.0),
    ]
    .iter()
    .map(|(x, t, e)| format!("\"{x}\": {{\"x\": {x}, \"time\": {t}, \"energy\": {e}}}"))
    .collect::<Vec<_>>()
    .join(", ");
    let cache = written(
        dir.path(),
        "a100.json",
        &format!(
            "{{\"kernel_name\": \"k\", \"device_name\": \"NVIDIA A100\", \"problem_size\": [64], \"tune_params_keys\": [\"x\"], \"tune_params\": {{\"x\": [1, 2, 3, 4]}}, \"cache\": {{{entries}}}}}"
        ),
    );
    let wisdom = dir.path().join("out.wisdom");
    let export = |goal: Option<&str>| {
        let mut c = ktune();
        c.arg("export").arg(&cache).arg("--wisdom").arg(&wisdom);
        if let Some(g) = goal {
            c.args(["--goal", g]);
        }
        c.succeeds();
        let (_, recs, _) = records(&wisdom);
        recs[0].2.clone()
    };
    // The fastest; the least energy within 5% of the fastest time; the least sum of each
    // relative to its best (1.20 / 1.00 + 3 / 3).
    assert_eq!(export(None), ["1"]);
    assert_eq!(export(Some("energy within 5% of time")), ["2"]);
    assert_eq!(export(Some("weighted time=1, energy=1")), ["3"]);
    let text = std::fs::read_to_string(&wisdom).unwrap();
    assert!(
        text.contains("the goal `weighted time=1, energy=1`"),
        "{text}"
    );
    let err = ktune()
        .arg("export")
        .arg(&cache)
        .arg("--wisdom")
        .arg(dir.path().join("never.wisdom"))
        .args(["--goal", "power within 5% of time"])
        .fails();
    assert_mentions(
        &err,
        &[
            "a100.json",
            "`power` is not an objective of this source",
            "time, energy",
        ],
    );
    assert!(!dir.path().join("never.wisdom").exists());
}

//! `roce-dissect plan`: the calculators as a user runs them (text, JSON,
//! errors); their formulas are unit-tested in `src/plan.rs`.

mod common;

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = common::bin().arg("plan").args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn headroom_text_names_every_term_and_what_it_assumed() {
    let (code, text, _) = run(&[
        "headroom", "--speed", "100G", "--cable", "100m", "--mtu", "4200",
    ]);
    assert_eq!(code, Some(0));
    insta::assert_snapshot!("plan_headroom", text);
}

#[test]
fn pfc_and_dcqcn_text() {
    let (code, text, _) = run(&[
        "pfc",
        "--buffer",
        "32MiB",
        "--ports",
        "32",
        "--lossless",
        "3,4",
    ]);
    assert_eq!(code, Some(0));
    insta::assert_snapshot!("plan_pfc", text);
    let (code, text, _) = run(&["dcqcn", "--speed", "100G", "--cnp", "0us"]);
    assert_eq!(code, Some(0));
    insta::assert_snapshot!("plan_dcqcn", text);
}

#[test]
fn json_carries_the_same_figures() {
    let (_, text, _) = run(&["headroom", "--speed", "400G", "--cable", "30m", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["response_quanta"], 905);
    assert_eq!(
        v["total_bytes"],
        v["xoff_bytes"].as_u64().unwrap() + v["xon_bytes"].as_u64().unwrap()
    );
    let (_, text, _) = run(&["pfc", "--buffer", "1MiB", "--ports", "64", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(
        v["left_bytes"].as_i64().unwrap() < 0,
        "64 ports do not fit 1 MiB"
    );
    let (_, text, _) = run(&["dcqcn", "--cnp", "0us,50us", "--params", "paper", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps[0]["event"], "cnp");
    assert_eq!(steps[0]["rate_bps"], 50e9);
    assert_eq!(v["cnps_ns"], serde_json::json!([0, 50_000]));
}

#[test]
fn bad_options_are_one_line_and_exit_2() {
    for args in [
        &["dcqcn", "--cnp", "0us", "--params", "intel"][..],
        &["headroom", "--cable", "far"][..],
        &["pfc", "--buffer", "lots", "--ports", "2"][..],
        &["dcqcn", "--cnp", "1ms", "--duration", "10us"][..],
    ] {
        let (code, _, err) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.lines()
                .next()
                .is_some_and(|l| l.contains("error") || l.contains("roce-dissect")),
            "{err}"
        );
    }
}

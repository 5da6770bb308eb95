//! The command line as data: each `cmd/*.toml` case runs `eksynth` and
//! checks its exit code, stdout and stderr.

#[test]
fn cli_cases() {
    // trycmd passes when the glob matches nothing: make sure it does not.
    let cases = std::fs::read_dir("tests/cmd")
        .expect("tests/cmd")
        .filter(|entry| {
            entry
                .as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "toml"))
        })
        .count();
    assert!(cases >= 30, "only {cases} CLI cases found");
    trycmd::TestCases::new().case("tests/cmd/*.toml");
}

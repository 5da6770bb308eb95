//! The command line as data: each `cmd/*.toml` case runs `eksynth` and
//! checks its exit code, stdout and stderr.

#[test]
fn cli_cases() {
    trycmd::TestCases::new().case("tests/cmd/*.toml");
}

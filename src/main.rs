//! The `eksynth` command line.

use std::io::{Read, Write};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand, ValueEnum};

use eksynth::cfn;
use eksynth::compile::{CompileError, compile};
use eksynth::diagnostic::Diagnostic;
use eksynth::source::SourceFile;

/// Compile a blueprint of EKS worker node groups into a CloudFormation template.
#[derive(Parser)]
#[command(name = "eksynth", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Synthesize the CloudFormation template of a blueprint and write it to stdout.
    ///
    /// Nothing is written when the blueprint has errors: they are reported on
    /// stderr with their file, line and column, and the exit code is 1.
    Synth {
        /// The blueprint file (YAML or JSON); `-` reads standard input.
        blueprint: String,
        /// The template format.
        #[arg(long, value_enum, default_value_t = Format::Yaml)]
        format: Format,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// YAML with short-form intrinsics (`!Ref`, `!Sub`).
    Yaml,
    /// JSON with long-form intrinsics.
    Json,
}

/// Exit codes: 0 success, 1 findings in the input, 2 usage or I/O errors.
const FINDINGS: u8 = 1;
const USAGE_OR_IO: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Synth { blueprint, format } => synth(&blueprint, format),
    }
}

fn read_input(path: &str) -> Result<Arc<SourceFile>, String> {
    let mut text = String::new();
    let (name, result) = if path == "-" {
        (
            "<stdin>".to_string(),
            std::io::stdin().read_to_string(&mut text).map(|_| ()),
        )
    } else {
        (
            path.to_string(),
            std::fs::read_to_string(path).map(|t| text = t),
        )
    };
    match result {
        Ok(()) => Ok(SourceFile::new(name, text)),
        Err(error) if error.kind() == std::io::ErrorKind::InvalidData => {
            Err(format!("error: cannot read `{name}`: it is not UTF-8 text"))
        }
        Err(error) => Err(format!("error: cannot read `{name}`: {error}")),
    }
}

fn report(diagnostics: &[Diagnostic]) {
    let mut stderr = std::io::stderr().lock();
    for diagnostic in diagnostics {
        let _ = writeln!(stderr, "{}", diagnostic.render());
    }
}

fn synth(path: &str, format: Format) -> ExitCode {
    let file = match read_input(path) {
        Ok(file) => file,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(USAGE_OR_IO);
        }
    };
    match compile(&file) {
        Ok(compiled) => {
            report(&compiled.warnings);
            let text = match format {
                Format::Yaml => cfn::yaml::emit(&compiled.template),
                Format::Json => cfn::json::emit(&compiled.template),
            };
            let mut stdout = std::io::stdout().lock();
            if let Err(error) = stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
                && error.kind() != std::io::ErrorKind::BrokenPipe
            {
                eprintln!("error: cannot write the template: {error}");
                return ExitCode::from(USAGE_OR_IO);
            }
            ExitCode::SUCCESS
        }
        Err(CompileError::Blueprint(diagnostics)) => {
            report(&diagnostics);
            let errors = diagnostics.iter().filter(|d| d.is_error()).count();
            let plural = if errors == 1 { "" } else { "s" };
            eprintln!(
                "error: `{}` has {errors} error{plural}; no template was written",
                file.name
            );
            ExitCode::from(FINDINGS)
        }
        Err(error @ CompileError::Internal(_)) => {
            eprintln!("error: {error}");
            ExitCode::from(USAGE_OR_IO)
        }
    }
}

//! The `eksynth` command line.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand, ValueEnum};

use eksynth::cfn;
use eksynth::check::{Report, check_file};
use eksynth::compile::{CompileError, compile_with};
use eksynth::diagnostic::Diagnostic;
use eksynth::report;
use eksynth::source::SourceFile;
use eksynth::validate::{Level, SchemaSet};

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
    /// The template is validated first; nothing is written when the blueprint
    /// or the template has errors: they are reported on stderr with their
    /// file, line and column, and the exit code is 1.
    Synth {
        /// The blueprint file (YAML or JSON); `-` reads standard input.
        blueprint: String,
        /// The template format.
        #[arg(long, value_enum, default_value_t = Format::Yaml)]
        format: Format,
        /// A directory of CloudFormation provider schemas to validate against
        /// instead of the embedded ones.
        #[arg(long, value_name = "DIR")]
        schemas: Option<PathBuf>,
    },
    /// List every resource a blueprint produces, with the blueprint line it
    /// comes from.
    Explain {
        /// The blueprint file; `-` reads standard input.
        blueprint: String,
    },
    /// Validate blueprints and CloudFormation templates offline.
    ///
    /// A blueprint is compiled and its template validated; any other file is
    /// read as a template (YAML with short- or long-form intrinsics, or JSON).
    /// Every resource is checked against its provider schema, references,
    /// quotas, update policies, signal wiring and security defaults.
    /// Exit code: 0 clean, 1 errors (or warnings with --strict), 2 unreadable input.
    Validate {
        /// Files to validate; `-` reads standard input.
        #[arg(required = true)]
        files: Vec<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
        format: ReportFormat,
        /// Fail (exit 1) on warnings too.
        #[arg(long)]
        strict: bool,
        /// A directory of CloudFormation provider schemas (for example the
        /// `cfnlint/data/schemas/resources` directory of cfn-lint) to use
        /// instead of the embedded ones.
        #[arg(long, value_name = "DIR")]
        schemas: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// YAML with short-form intrinsics (`!Ref`, `!Sub`).
    Yaml,
    /// JSON with long-form intrinsics.
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum ReportFormat {
    /// rustc-style messages.
    Human,
    /// One JSON document.
    Json,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
}

/// Exit codes: 0 success, 1 findings in the input, 2 usage or I/O errors.
const FINDINGS: u8 = 1;
const USAGE_OR_IO: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Synth {
            blueprint,
            format,
            schemas,
        } => synth(&blueprint, format, schemas),
        Command::Explain { blueprint } => explain(&blueprint),
        Command::Validate {
            files,
            format,
            strict,
            schemas,
        } => validate(&files, format, strict, schemas),
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

fn load_schemas(dir: Option<PathBuf>) -> Result<&'static SchemaSet, String> {
    match dir {
        None => Ok(SchemaSet::embedded()),
        Some(dir) => SchemaSet::from_dir(&dir)
            .map(|set| &*Box::leak(Box::new(set)))
            .map_err(|error| {
                format!(
                    "error: cannot read schemas from `{}`: {error}",
                    dir.display()
                )
            }),
    }
}

fn report(diagnostics: &[Diagnostic]) {
    let mut stderr = std::io::stderr().lock();
    for diagnostic in diagnostics {
        let _ = writeln!(stderr, "{}", diagnostic.render());
    }
}

fn write_stdout(text: &str) -> Result<(), ExitCode> {
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        && error.kind() != std::io::ErrorKind::BrokenPipe
    {
        eprintln!("error: cannot write to stdout: {error}");
        return Err(ExitCode::from(USAGE_OR_IO));
    }
    Ok(())
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn synth(path: &str, format: Format, schemas: Option<PathBuf>) -> ExitCode {
    let (file, schemas) = match read_input(path).and_then(|file| Ok((file, load_schemas(schemas)?)))
    {
        Ok(loaded) => loaded,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(USAGE_OR_IO);
        }
    };
    match compile_with(&file, schemas) {
        Ok(compiled) => {
            report(&compiled.diagnostics);
            if compiled.has_errors() {
                let errors = compiled.diagnostics.iter().filter(|d| d.is_error()).count();
                eprintln!(
                    "error: the template of `{}` has {}; no template was written",
                    file.name,
                    plural(errors, "error")
                );
                return ExitCode::from(FINDINGS);
            }
            let text = match format {
                Format::Yaml => cfn::yaml::emit(&compiled.template),
                Format::Json => cfn::json::emit(&compiled.template),
            };
            match write_stdout(&text) {
                Ok(()) => ExitCode::SUCCESS,
                Err(code) => code,
            }
        }
        Err(CompileError::Blueprint(diagnostics)) => {
            report(&diagnostics);
            let errors = diagnostics.iter().filter(|d| d.is_error()).count();
            eprintln!(
                "error: `{}` has {}; no template was written",
                file.name,
                plural(errors, "error")
            );
            ExitCode::from(FINDINGS)
        }
        Err(error @ CompileError::Internal(_)) => {
            eprintln!("error: {error}");
            ExitCode::from(USAGE_OR_IO)
        }
    }
}

fn explain(path: &str) -> ExitCode {
    let file = match read_input(path) {
        Ok(file) => file,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(USAGE_OR_IO);
        }
    };
    match compile_with(&file, SchemaSet::embedded()) {
        Ok(compiled) => {
            report(&compiled.diagnostics);
            match write_stdout(&eksynth::compile::explain(&compiled, &file)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(code) => code,
            }
        }
        Err(CompileError::Blueprint(diagnostics)) => {
            report(&diagnostics);
            ExitCode::from(FINDINGS)
        }
        Err(error @ CompileError::Internal(_)) => {
            eprintln!("error: {error}");
            ExitCode::from(USAGE_OR_IO)
        }
    }
}

fn validate(
    paths: &[String],
    format: ReportFormat,
    strict: bool,
    schemas: Option<PathBuf>,
) -> ExitCode {
    let schemas = match load_schemas(schemas) {
        Ok(schemas) => schemas,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(USAGE_OR_IO);
        }
    };
    let mut reports: Vec<Report> = Vec::new();
    let mut unreadable = false;
    for path in paths {
        match read_input(path) {
            Ok(file) => reports.push(check_file(&file, schemas)),
            Err(message) => {
                eprintln!("{message}");
                unreadable = true;
            }
        }
    }
    let errors: usize = reports.iter().map(|r| r.count(Level::Error)).sum();
    let warnings: usize = reports.iter().map(|r| r.count(Level::Warning)).sum();
    let written = match format {
        ReportFormat::Human => {
            for r in &reports {
                report(&r.diagnostics);
            }
            eprintln!(
                "{}: {} checked, {}, {}",
                if errors > 0 { "error" } else { "validate" },
                plural(reports.len(), "file"),
                plural(errors, "error"),
                plural(warnings, "warning")
            );
            Ok(())
        }
        ReportFormat::Json => write_stdout(&report::json(&reports)),
        ReportFormat::Sarif => write_stdout(&report::sarif(&reports)),
    };
    if let Err(code) = written {
        return code;
    }
    if unreadable {
        ExitCode::from(USAGE_OR_IO)
    } else if errors > 0 || strict && warnings > 0 {
        ExitCode::from(FINDINGS)
    } else {
        ExitCode::SUCCESS
    }
}

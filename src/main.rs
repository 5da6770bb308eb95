//! The `eksynth` command line.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

mod diff_command;

use eksynth::cfn;
use eksynth::check::{Report, check_file_keeping_trees};
use eksynth::compile::{CompileError, Compiled, Stack};
use eksynth::diagnostic::Diagnostic;
use eksynth::escape;
use eksynth::output;
use eksynth::policy::{Policy, PolicyError};
use eksynth::report;
use eksynth::source::{self, SourceFile};
use eksynth::suggest::listed;
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
        #[command(flatten)]
        options: SynthOptions,
    },
    /// Check that committed templates are what their blueprints synthesize now.
    ///
    /// Exit code 0 when every template in DIR matches, 1 with a unified diff
    /// for each stale or missing one and a list of files no blueprint produces.
    Check {
        /// The blueprints whose templates are committed.
        #[arg(required = true)]
        blueprints: Vec<String>,
        /// The directory of committed templates.
        #[arg(long, value_name = "DIR")]
        out_dir: PathBuf,
        /// The format the templates were written in.
        #[arg(long, value_enum, default_value_t = Format::Yaml)]
        format: Format,
        /// The parameters files (`synth --parameters-file`) must be
        /// committed too. A committed one is checked like the templates
        /// even without this flag.
        #[arg(long)]
        parameters_file: bool,
        /// CloudFormation Guard rules every template must pass: a `.guard`
        /// file, or a directory of them (read with its subdirectories).
        /// Repeatable. A failed rule is a finding `G:<rule name>`.
        #[arg(long = "rules", value_name = "PATH")]
        rules: Vec<PathBuf>,
    },
    /// Show what changes between two templates or blueprints, and which nodes roll or are replaced
    ///
    /// Compares two templates, two blueprints, or a blueprint and a
    /// committed template: resources added, removed and modified property
    /// by property, which changes REPLACE resources (loudly for Auto Scaling
    /// groups, node groups, roles and access), and which rolling updates
    /// follow. Exit code 0 when nothing changes, 1 when something does.
    Diff {
        /// The old template or blueprint.
        old: String,
        /// The new template or blueprint.
        new: String,
        /// The stack of a blueprint that makes several.
        #[arg(long, value_name = "NAME")]
        stack: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = DiffFormat::Human)]
        format: DiffFormat,
    },
    /// Print the JSON Schema of the blueprint format, for editors
    /// (`# yaml-language-server: $schema=...`).
    Schema,
    /// List every resource a blueprint produces, with the blueprint line it
    /// comes from.
    Explain {
        /// The blueprint file; `-` reads standard input.
        blueprint: String,
    },
    /// Print the cluster autoscaler's priority-expander ConfigMap for the
    /// node groups that set `clusterAutoscaler.priority`.
    ///
    /// The ConfigMap (`cluster-autoscaler-priority-expander` in kube-system)
    /// maps each priority (higher wins) to regular expressions that match
    /// those groups' Auto Scaling group names. Exit code 1 when the
    /// blueprint has errors or no group sets a priority.
    AutoscalerPriorities {
        /// The blueprint file; `-` reads standard input.
        blueprint: String,
    },
    /// Write a commented starter blueprint for an existing cluster.
    ///
    /// The cluster's name, version, endpoint, CA, service CIDR, security
    /// groups, VPC, subnets and authentication mode come from `--cluster-json`;
    /// without it each is a marked placeholder, which `synth` reports as an
    /// error at its line until it is replaced. Never writes over a file.
    /// Exit code 0 when the blueprint was written, 2 when a file cannot be
    /// read or written or is not describe-cluster output.
    Init {
        /// The output of `aws eks describe-cluster --name NAME --output json`.
        #[arg(long, value_name = "DESCRIBE.json")]
        cluster_json: Option<String>,
        /// Write the blueprint to OUT, a new file, instead of stdout.
        #[arg(short, long, value_name = "OUT")]
        output: Option<PathBuf>,
    },
    /// Write a blueprint from another tool's configuration.
    #[command(subcommand)]
    Import(ImportSource),
    /// Validate blueprints and CloudFormation templates offline.
    ///
    /// A blueprint is compiled and its template validated; any other file is
    /// read as a template (YAML with short- or long-form intrinsics, or JSON).
    /// Every resource is checked against its provider schema, references,
    /// quotas, update policies, signal wiring and security defaults, and
    /// the template against the CloudFormation Guard rules of `--rules` (and
    /// of a blueprint's `rules:`).
    /// Findings are errors, warnings or notes (information only, never a
    /// failure). Exit code: 0 clean, 1 errors (or warnings with --strict),
    /// 2 unreadable input.
    Validate {
        /// Files to validate; `-` reads standard input.
        #[arg(required = true)]
        files: Vec<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ReportFormat::Human)]
        format: ReportFormat,
        /// Fail (exit 1) on warnings too (never on notes).
        #[arg(long)]
        strict: bool,
        /// A directory of CloudFormation provider schemas (for example the
        /// `cfnlint/data/schemas/resources` directory of cfn-lint) to use
        /// instead of the embedded ones.
        #[arg(long, value_name = "DIR")]
        schemas: Option<PathBuf>,
        /// CloudFormation Guard rules every template must pass: a `.guard`
        /// file, or a directory of them (read with its subdirectories).
        /// Repeatable. A failed rule is a finding `G:<rule name>`.
        #[arg(long = "rules", value_name = "PATH")]
        rules: Vec<PathBuf>,
    },
    /// Print the completion script of a shell for this command line.
    ///
    /// bash: `eksynth completions bash > ~/.local/share/bash-completion/completions/eksynth`;
    /// zsh: `eksynth completions zsh > _eksynth` in a directory of `$fpath`;
    /// fish: `eksynth completions fish > ~/.config/fish/completions/eksynth.fish`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page eksynth(1) in roff (`eksynth man | man -l -`),
    /// or write it and one page per subcommand to DIR.
    Man {
        /// Write eksynth.1 and eksynth-<subcommand>.1 to DIR (created when
        /// missing) instead.
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum ImportSource {
    /// Write a blueprint from an eksctl `ClusterConfig` (eksctl.io/v1alpha5).
    ///
    /// Every `nodeGroups` and `managedNodeGroups` entry becomes a node group
    /// with each field eksynth has an equivalent for; every other field is
    /// a warning on stderr at its line and column, and is not carried.
    /// Cluster values come from `--cluster-json`, else from the eksctl file,
    /// else become template parameters. Exit code 0 when the blueprint was
    /// written (warnings included), 1 when the eksctl file has errors, 2
    /// when a file cannot be read or written.
    Eksctl {
        /// The eksctl config file; `-` reads standard input.
        config: String,
        /// The output of `aws eks describe-cluster --name NAME --output json`,
        /// for the cluster's endpoint, CA, service CIDR, VPC and security groups.
        #[arg(long, value_name = "DESCRIBE.json")]
        cluster_json: Option<String>,
        /// Write the blueprint to OUT instead of stdout.
        #[arg(short, long, value_name = "OUT")]
        output: Option<PathBuf>,
    },
}

#[derive(clap::Args)]
struct SynthOptions {
    /// The template format.
    #[arg(long, value_enum, default_value_t = Format::Yaml)]
    format: Format,
    /// A directory of CloudFormation provider schemas to validate against
    /// instead of the embedded ones.
    #[arg(long, value_name = "DIR")]
    schemas: Option<PathBuf>,
    /// Write each stack's template to DIR/<stack name>.yaml (or .json),
    /// atomically, leaving a file untouched when nothing changed, instead
    /// of one template to stdout.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
    /// With --out-dir, also write DIR/<stack name>.parameters.json with
    /// each template's parameters (defaults filled in), in the shape
    /// `aws cloudformation create-stack --parameters file://...` reads.
    #[arg(long, requires = "out_dir")]
    parameters_file: bool,
    /// The stack to synthesize, when the blueprint makes several
    /// (`stacks:`); with --out-dir, write only that one.
    #[arg(long, value_name = "NAME")]
    stack: Option<String>,
    /// Override one blueprint field, e.g. `--set nodeGroups.0.maxSize=6`
    /// or `--set cluster.name=prod` (the value is read as YAML). Repeatable.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    set: Vec<String>,
    /// CloudFormation Guard rules every template must pass: a `.guard`
    /// file, or a directory of them (read with its subdirectories).
    /// Repeatable. A failed rule is a finding `G:<rule name>`, at the
    /// blueprint line that made the value.
    #[arg(long = "rules", value_name = "PATH")]
    rules: Vec<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// YAML with short-form intrinsics (`!Ref`, `!Sub`).
    Yaml,
    /// JSON with long-form intrinsics.
    Json,
}

impl From<Format> for cfn::Format {
    fn from(format: Format) -> cfn::Format {
        match format {
            Format::Yaml => cfn::Format::Yaml,
            Format::Json => cfn::Format::Json,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum DiffFormat {
    /// Readable text.
    Human,
    /// One JSON document.
    Json,
    /// GitHub-flavoured Markdown for a pull-request comment: replacements
    /// first (CRITICAL flagged), rolling updates, then the other changes.
    Markdown,
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
    pad_heaps();
    let cli = Cli::parse();
    match cli.command {
        Command::Synth { blueprint, options } => synth(&blueprint, &options),
        Command::Check {
            blueprints,
            out_dir,
            format,
            parameters_file,
            rules,
        } => check(&blueprints, &out_dir, format, parameters_file, &rules),
        Command::Explain { blueprint } => explain(&blueprint),
        Command::AutoscalerPriorities { blueprint } => autoscaler_priorities(&blueprint),
        Command::Schema => finish(write_stdout(&blueprint_schema()).map(|()| ExitCode::SUCCESS)),
        Command::Diff {
            old,
            new,
            stack,
            format,
        } => diff_command::diff(&old, &new, stack.as_deref(), format),
        Command::Init {
            cluster_json,
            output,
        } => init(cluster_json.as_deref(), output.as_deref()),
        Command::Import(ImportSource::Eksctl {
            config,
            cluster_json,
            output,
        }) => import_eksctl(&config, cluster_json.as_deref(), output.as_deref()),
        Command::Completions { shell } => completions(shell),
        Command::Man { out_dir } => man(out_dir.as_deref()),
        Command::Validate {
            files,
            format,
            strict,
            schemas,
            rules,
        } => validate(&files, format, strict, schemas, &rules),
    }
}

/// Has glibc's allocator grow its heaps 16 MiB at a time. By default each
/// worker thread's heap grows by what one allocation needs, a system call
/// each time: about 2,200 of them while a large template is validated,
/// about 7% of its CPU time. Address space is reserved, not memory: pages
/// are still used only once written.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn pad_heaps() {
    use std::ffi::c_int;
    unsafe extern "C" {
        /// glibc's `mallopt(3)`.
        fn mallopt(param: c_int, value: c_int) -> c_int;
    }
    /// `M_TOP_PAD` of glibc's `malloc.h`.
    const M_TOP_PAD: c_int = -2;
    // SAFETY: `mallopt` only sets an allocator parameter, and is called
    // before any thread is started.
    unsafe {
        mallopt(M_TOP_PAD, 16 << 20);
    }
}

/// Other allocators grow their heaps as they see fit.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn pad_heaps() {}

/// Reads a regular file (or `-`, standard input) of at most
/// `source::MAX_INPUT_BYTES` as UTF-8 text.
fn read_input(path: &str) -> Result<Arc<SourceFile>, String> {
    let (name, bytes) = if path == "-" {
        ("<stdin>".to_string(), source::read_stdin())
    } else {
        (
            path.to_string(),
            source::read_file(std::path::Path::new(path)),
        )
    };
    let shown = escape::terminal(&name);
    let bytes = bytes.map_err(|error| format!("error: cannot read `{shown}`: {error}"))?;
    match eksynth::syntax::text_of(bytes) {
        Ok(text) => Ok(SourceFile::new(name, text)),
        Err(not_utf8) => Err(format!(
            "error: cannot read `{shown}`: {not_utf8}\n  = help: save it as UTF-8"
        )),
    }
}

/// The embedded schemas, or those of `--schemas DIR`; a directory that
/// cannot be read is reported (exit 2).
fn load_schemas(dir: Option<PathBuf>) -> Result<&'static SchemaSet, ExitCode> {
    match dir {
        None => Ok(SchemaSet::embedded()),
        Some(dir) => SchemaSet::from_dir(&dir)
            .map(|set| &*Box::leak(Box::new(set)))
            .map_err(|error| {
                eprintln!(
                    "error: cannot read schemas from `{}`: {}",
                    shown_path(&dir),
                    shown(&error)
                );
                ExitCode::from(USAGE_OR_IO)
            }),
    }
}

/// Text from the input or the file system, as a message may show it
/// (`escape::terminal`).
fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    escape::terminal(text)
}

/// A path, as a message may show it.
fn shown_path(path: &std::path::Path) -> String {
    escape::terminal(&path.display().to_string()).into_owned()
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

/// The template's parameters with their defaults, for a parameters file.
fn parameter_values(template: &cfn::Template) -> Vec<(String, String)> {
    template
        .parameters
        .iter()
        .map(|(name, parameter)| {
            let value = parameter
                .default
                .as_ref()
                .and_then(|d| d.as_str().map(str::to_string))
                .unwrap_or_default();
            (name.clone(), value)
        })
        .collect()
}

/// Reads a file, or reports why not (exit 2).
fn read(path: &str) -> Result<Arc<SourceFile>, ExitCode> {
    read_input(path).map_err(|message| {
        eprintln!("{message}");
        ExitCode::from(USAGE_OR_IO)
    })
}

/// Compiles a blueprint and reports its diagnostics. A blueprint or
/// template with errors is exit 1, naming what was not written; an internal
/// error is exit 2.
fn compiled(file: &Arc<SourceFile>, schemas: &SchemaSet) -> Result<Compiled, ExitCode> {
    compiled_with(file, schemas, &[], cfn::Format::Yaml, &Policy::none())
}

/// `compiled`, with `--set` overrides, the templates in `format`, judged by
/// `rules` too. A rule file that cannot be used is exit 2.
fn compiled_with(
    file: &Arc<SourceFile>,
    schemas: &SchemaSet,
    overrides: &[(String, String)],
    format: cfn::Format,
    rules: &Policy,
) -> Result<Compiled, ExitCode> {
    match eksynth::compile::compile_with_policy(file, schemas, overrides, format, rules) {
        Ok(compiled) if !compiled.has_errors() => {
            report(&compiled.diagnostics);
            Ok(compiled)
        }
        Ok(compiled) => {
            let subject = format!("the template of `{}`", shown(&file.name));
            Err(refused(&compiled.diagnostics, &subject, "template"))
        }
        Err(CompileError::Blueprint(diagnostics)) => {
            let subject = format!("`{}`", shown(&file.name));
            Err(refused(&diagnostics, &subject, "template"))
        }
        Err(CompileError::Policy(diagnostics)) => {
            report(&diagnostics);
            Err(ExitCode::from(USAGE_OR_IO))
        }
        Err(error @ CompileError::Internal(_)) => {
            eprintln!("error: {}", shown(&error.to_string()));
            Err(ExitCode::from(USAGE_OR_IO))
        }
    }
}

/// Reports `diagnostics` and that `subject` has errors among them, so no
/// `what` was written: exit 1.
fn refused(diagnostics: &[Diagnostic], subject: &str, what: &str) -> ExitCode {
    report(diagnostics);
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    eprintln!(
        "error: {subject} has {}; no {what} was written",
        plural(errors, "error")
    );
    ExitCode::from(FINDINGS)
}

/// The rules of `--rules`, read and parsed; a path that cannot be read or
/// a rule file that does not parse is reported (exit 2). No path, no work.
fn load_rules(paths: &[PathBuf]) -> Result<Policy, ExitCode> {
    Policy::load(paths).map_err(|error| {
        match error {
            PolicyError::Invalid(diagnostic) => report(&[*diagnostic]),
            // The message shows the path escaped already.
            PolicyError::Unreadable(message) => eprintln!("error: {message}"),
        }
        ExitCode::from(USAGE_OR_IO)
    })
}

/// Makes sure `dir` can take the files written into it (see
/// `output::prepare_out_dir`); an error is exit 2.
fn prepare_out_dir(dir: &std::path::Path) -> Result<(), ExitCode> {
    output::prepare_out_dir(dir).map_err(|error| {
        eprintln!("error: {}", shown(&error.to_string()));
        ExitCode::from(USAGE_OR_IO)
    })
}

/// Turns a command's result into its exit code.
fn finish(result: Result<ExitCode, ExitCode>) -> ExitCode {
    result.unwrap_or_else(|code| code)
}

/// The stacks of `compiled` that `--stack` selects: the one named, or all of
/// them. A name that is not a stack is a usage error (exit 2).
fn select_stacks<'c>(
    compiled: &'c Compiled,
    file: &SourceFile,
    stack: Option<&str>,
) -> Result<Vec<&'c Stack>, ExitCode> {
    let Some(name) = stack else {
        return Ok(compiled.stacks.iter().collect());
    };
    if let Some(found) = compiled.stack(name) {
        return Ok(vec![found]);
    }
    let names: Vec<&str> = compiled.stacks.iter().map(|s| s.name.as_str()).collect();
    let hint = match eksynth::suggest::closest(name, &names) {
        Some(best) => format!("did you mean `{}`? ", shown(best)),
        None => String::new(),
    };
    eprintln!(
        "error: `{}` makes no stack `{}`\n  = help: {hint}its stacks are {}",
        shown(&file.name),
        shown(name),
        shown(&listed(&names))
    );
    Err(ExitCode::from(USAGE_OR_IO))
}

/// The one stack a command that prints one template works on: `--stack`,
/// or the blueprint's only stack.
fn single_stack<'c>(
    compiled: &'c Compiled,
    file: &SourceFile,
    stack: Option<&str>,
    alternative: &str,
) -> Result<&'c Stack, ExitCode> {
    let selected = select_stacks(compiled, file, stack)?;
    if let [one] = selected.as_slice() {
        return Ok(one);
    }
    let names: Vec<&str> = selected.iter().map(|s| s.name.as_str()).collect();
    eprintln!(
        "error: `{}` makes {}: {}\n  = help: choose one with `--stack NAME`{alternative}",
        shown(&file.name),
        plural(names.len(), "stack"),
        shown(&listed(&names))
    );
    Err(ExitCode::from(USAGE_OR_IO))
}

fn synth(path: &str, options: &SynthOptions) -> ExitCode {
    finish((|| {
        let mut overrides = Vec::new();
        for item in &options.set {
            let Some((path, value)) = item.split_once('=') else {
                eprintln!("error: `--set {}` is not PATH=VALUE", shown(item));
                return Err(ExitCode::from(USAGE_OR_IO));
            };
            overrides.push((path.trim().to_string(), value.to_string()));
        }
        if let Some(dir) = &options.out_dir {
            prepare_out_dir(dir)?;
        }
        let file = read(path)?;
        let schemas = load_schemas(options.schemas.clone())?;
        let rules = load_rules(&options.rules)?;
        let compiled = compiled_with(&file, schemas, &overrides, options.format.into(), &rules)?;
        let Some(dir) = &options.out_dir else {
            let stack = single_stack(
                &compiled,
                &file,
                options.stack.as_deref(),
                ", or write them all with `--out-dir DIR`",
            )?;
            write_stdout(&stack.text)?;
            return Ok(ExitCode::SUCCESS);
        };
        let mut files = Vec::new();
        let mut owners = Vec::new();
        for stack in select_stacks(&compiled, &file, options.stack.as_deref())? {
            for stack_file in stack_files(stack, options.format.into(), options.parameters_file) {
                files.push(stack_file);
                owners.push(Owner::of(&compiled, stack));
            }
        }
        write_stacks(dir, &files, &owners, &input_paths(&compiled))?;
        Ok(ExitCode::SUCCESS)
    })())
}

/// The stack a file to write comes from, to locate an error about it.
struct Owner {
    stack: String,
    file: Arc<SourceFile>,
    span: eksynth::source::Span,
}

impl Owner {
    fn of(compiled: &Compiled, stack: &Stack) -> Owner {
        let index = stack.span.file as usize;
        Owner {
            stack: stack.name.clone(),
            file: Arc::clone(compiled.files.get(index).unwrap_or(&compiled.files[0])),
            span: stack.span,
        }
    }

    /// Why this stack's file at `path` is not written, at the stack's
    /// declaration.
    fn diagnostic(&self, path: &std::path::Path, refusal: &output::Refusal) -> Diagnostic {
        output::refusal_diagnostic(path, refusal, &self.stack, &self.file, self.span)
    }
}

/// The files a blueprint was read from, which no output may replace.
fn input_paths(compiled: &Compiled) -> Vec<PathBuf> {
    compiled
        .files
        .iter()
        .map(|file| PathBuf::from(&file.name))
        .collect()
}

/// Writes the files of the stacks into `dir` as one (see
/// `output::write_files`) and says what became of each; a file that would
/// replace anything but a template eksynth wrote is an error at its
/// stack's declaration, and nothing is written (exit 2).
fn write_stacks(
    dir: &std::path::Path,
    files: &[(String, String)],
    owners: &[Owner],
    inputs: &[PathBuf],
) -> Result<(), ExitCode> {
    let written = match output::write_files(dir, files, inputs) {
        Ok(written) => written,
        Err(output::OutputError::Refused { refused }) => {
            let diagnostics: Vec<Diagnostic> = refused
                .iter()
                .map(|r| owners[r.index].diagnostic(&r.path, &r.refusal))
                .collect();
            report(&diagnostics);
            eprintln!("error: no file was written to `{}`", shown_path(dir));
            return Err(ExitCode::from(USAGE_OR_IO));
        }
        Err(error) => {
            eprintln!("error: {}", shown(&error.to_string()));
            return Err(ExitCode::from(USAGE_OR_IO));
        }
    };
    for name in &written.removed {
        eprintln!(
            "removed {}, left by a run that was stopped",
            shown_path(&dir.join(name))
        );
    }
    for ((file_name, _), outcome) in files.iter().zip(&written.outcomes) {
        eprintln!("{} {}", verb(*outcome), shown_path(&dir.join(file_name)));
    }
    Ok(())
}

/// How a written file is reported.
fn verb(outcome: output::WriteOutcome) -> &'static str {
    match outcome {
        output::WriteOutcome::Written => "wrote",
        output::WriteOutcome::Unchanged => "unchanged",
    }
}

/// The files `synth --out-dir` writes for one stack.
fn stack_files(stack: &Stack, format: cfn::Format, parameters_file: bool) -> Vec<(String, String)> {
    let parameters = parameters_file.then(|| parameter_values(&stack.template));
    output::stack_files(
        &stack.name,
        format.extension(),
        &stack.text,
        parameters.as_deref(),
    )
}

fn check(
    paths: &[String],
    out_dir: &std::path::Path,
    format: Format,
    parameters_file: bool,
    rules: &[PathBuf],
) -> ExitCode {
    let rules = match load_rules(rules) {
        Ok(rules) => rules,
        Err(code) => return code,
    };
    let mut expected: Vec<(String, String)> = Vec::new();
    let mut owners: Vec<Owner> = Vec::new();
    let mut producers: Vec<&str> = Vec::new();
    let mut inputs = Vec::new();
    let mut failed = false;
    for path in paths {
        if path == "-" {
            eprintln!("error: `check` needs blueprint files, not standard input");
            return ExitCode::from(USAGE_OR_IO);
        }
        let file = match read(path) {
            Ok(file) => file,
            Err(code) => return code,
        };
        match compiled_with(&file, SchemaSet::embedded(), &[], format.into(), &rules) {
            Ok(compiled) => {
                inputs.extend(input_paths(&compiled));
                for stack in &compiled.stacks {
                    if let Some(index) = owners.iter().position(|o| o.stack == stack.name) {
                        eprintln!(
                            "error: `{}` and `{}` both make the stack `{}`\n  = help: give each blueprint its own `stack:` name",
                            shown(path),
                            shown(producers[index]),
                            shown(&stack.name)
                        );
                        return ExitCode::from(USAGE_OR_IO);
                    }
                    // A committed parameters file is checked even without
                    // `--parameters-file`, which makes it required.
                    let committed = out_dir
                        .join(output::parameters_file_name(&stack.name))
                        .is_file();
                    let files = stack_files(stack, format.into(), parameters_file || committed);
                    for _ in &files {
                        owners.push(Owner::of(&compiled, stack));
                        producers.push(path);
                    }
                    expected.extend(files);
                }
            }
            Err(code) if code == ExitCode::from(FINDINGS) => failed = true,
            Err(code) => return code,
        }
    }
    let result = output::check(out_dir, &expected, &inputs);
    for (name, diff) in &result.stale {
        eprintln!("stale: {}", shown_path(&out_dir.join(name)));
        // A committed file may hold anything: each line is shown escaped.
        for line in diff.lines() {
            println!("{}", shown(line));
        }
    }
    for name in &result.missing {
        eprintln!("missing: {}", shown_path(&out_dir.join(name)));
    }
    for (name, error) in &result.unreadable {
        eprintln!(
            "unreadable: {}: {}",
            shown_path(&out_dir.join(name)),
            shown(error)
        );
    }
    for name in &result.extra {
        eprintln!(
            "not produced by any blueprint: {}",
            shown_path(&out_dir.join(name))
        );
    }
    // `synth` would refuse these files: it is not the command to advise.
    if !result.refused.is_empty() {
        let diagnostics: Vec<Diagnostic> = result
            .refused
            .iter()
            .filter_map(|(name, refusal)| {
                let index = expected.iter().position(|(n, _)| n == name)?;
                Some(owners[index].diagnostic(&out_dir.join(name), refusal))
            })
            .collect();
        report(&diagnostics);
        eprintln!(
            "error: `eksynth synth --out-dir {}` would not write {}",
            shown_path(out_dir),
            plural(result.refused.len(), "file")
        );
        return ExitCode::from(USAGE_OR_IO);
    }
    if failed || !result.is_clean() {
        // The files expected include parameters files: synth writes them
        // only when asked to.
        let asked = expected
            .iter()
            .any(|(name, _)| name.ends_with(".parameters.json"));
        eprintln!(
            "error: committed templates are not what the blueprints synthesize\n  = help: run `eksynth synth BLUEPRINT --out-dir {}{}` for each blueprint, and remove the files no blueprint produces",
            shown_path(out_dir),
            if asked { " --parameters-file" } else { "" }
        );
        return ExitCode::from(FINDINGS);
    }
    let stacks = owners
        .iter()
        .map(|o| o.stack.as_str())
        .collect::<std::collections::HashSet<_>>()
        .len();
    eprintln!(
        "check: {} of {} up to date",
        plural(expected.len(), "file"),
        plural(stacks, "stack")
    );
    ExitCode::SUCCESS
}

fn completions(shell: clap_complete::Shell) -> ExitCode {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "eksynth", &mut script);
    finish(write_stdout(&String::from_utf8_lossy(&script)).map(|()| ExitCode::SUCCESS))
}

/// The manual pages, generated from the command line's definitions:
/// eksynth(1) first, then one per subcommand, as (file name, roff).
fn man_pages() -> Vec<(String, Vec<u8>)> {
    let mut cli = Cli::command().disable_help_subcommand(true);
    cli.build();
    let page = |command: clap::Command| {
        let man = clap_mangen::Man::new(command);
        let mut roff = Vec::new();
        // Rendering into memory cannot fail.
        let _ = man.render(&mut roff);
        (man.get_filename(), roff)
    };
    // Every command a page names has its own page: subcommands of
    // subcommands too (`eksynth-import-eksctl`).
    fn nested(command: &clap::Command, found: &mut Vec<clap::Command>) {
        for sub in command.get_subcommands().filter(|c| !c.is_hide_set()) {
            found.push(sub.clone());
            nested(sub, found);
        }
    }
    let mut commands = vec![cli.clone()];
    nested(&cli, &mut commands);
    commands.into_iter().map(page).collect()
}

fn man(out_dir: Option<&std::path::Path>) -> ExitCode {
    finish((|| {
        let pages = man_pages();
        let Some(dir) = out_dir else {
            let (_, roff) = &pages[0];
            write_stdout(&String::from_utf8_lossy(roff))?;
            return Ok(ExitCode::SUCCESS);
        };
        prepare_out_dir(dir)?;
        let pages: Vec<(String, String)> = pages
            .into_iter()
            .map(|(name, roff)| (name, String::from_utf8_lossy(&roff).into_owned()))
            .collect();
        let written = output::write_files(dir, &pages, &[]).map_err(|error| {
            eprintln!("error: {}", shown(&error.to_string()));
            ExitCode::from(USAGE_OR_IO)
        })?;
        for ((file_name, _), outcome) in pages.iter().zip(&written.outcomes) {
            eprintln!("{} {}", verb(*outcome), shown_path(&dir.join(file_name)));
        }
        Ok(ExitCode::SUCCESS)
    })())
}

fn blueprint_schema() -> String {
    let mut text = serde_json::to_string_pretty(&eksynth::blueprint::schema::json_schema())
        .unwrap_or_default();
    text.push('\n');
    text
}

fn explain(path: &str) -> ExitCode {
    finish((|| {
        let file = read(path)?;
        let compiled = compiled(&file, SchemaSet::embedded())?;
        write_stdout(&eksynth::compile::explain(&compiled))?;
        Ok(ExitCode::SUCCESS)
    })())
}

fn autoscaler_priorities(path: &str) -> ExitCode {
    finish((|| {
        let file = read(path)?;
        let loaded = match eksynth::blueprint::load(&file) {
            Ok(loaded) => loaded,
            Err(diagnostics) => {
                return Err(refused(&diagnostics, &shown(&file.name), "ConfigMap"));
            }
        };
        report(&loaded.warnings);
        let Some(priorities) = eksynth::eks::priorities::config_map(&loaded.blueprint) else {
            eprintln!(
                "error: no node group of {} sets `clusterAutoscaler.priority`",
                shown(&file.name)
            );
            eprintln!(
                "  = help: write `clusterAutoscaler: {{priority: 10}}` on the groups to prioritize (higher wins)"
            );
            return Err(ExitCode::from(FINDINGS));
        };
        for (group, stack) in &priorities.stack_named {
            eprintln!(
                "note: CloudFormation names the Auto Scaling group of `{}` after its stack: its regex holds when the stack is deployed as `{}`",
                shown(group),
                shown(stack)
            );
        }
        if !priorities.stack_named.is_empty() {
            eprintln!(
                "  = help: set `autoScalingGroupName` on a group to match it under any stack name"
            );
        }
        write_stdout(&priorities.config_map)?;
        Ok(ExitCode::SUCCESS)
    })())
}

fn import_eksctl(
    config: &str,
    cluster_json: Option<&str>,
    output: Option<&std::path::Path>,
) -> ExitCode {
    finish((|| {
        let file = read(config)?;
        let cluster = cluster_json.map(read).transpose()?;
        match eksynth::import::eksctl::import(&file, cluster.as_ref()) {
            Ok(imported) => {
                report(&imported.warnings);
                write_blueprint(&imported.text, output)?;
                Ok(ExitCode::SUCCESS)
            }
            Err(diagnostics) => {
                let subject = format!("`{}`", shown(&file.name));
                Err(refused(&diagnostics, &subject, "blueprint"))
            }
        }
    })())
}

/// Writes a blueprint to stdout, or to `output` where no file is (an
/// error, exit 2, where one is).
fn write_blueprint(text: &str, output: Option<&std::path::Path>) -> Result<(), ExitCode> {
    let Some(path) = output else {
        return write_stdout(text);
    };
    output::write_new(path, text.as_bytes()).map_err(|error| {
        eprintln!("error: {}", shown(&error.to_string()));
        if matches!(error, output::OutputError::Exists { .. }) {
            eprintln!("  = help: remove it first, or write the blueprint to another file");
        }
        ExitCode::from(USAGE_OR_IO)
    })?;
    Ok(())
}

/// `eksynth init`: a describe-cluster output that cannot be read is exit 2.
fn init(cluster_json: Option<&str>, output: Option<&std::path::Path>) -> ExitCode {
    finish((|| {
        let cluster = cluster_json.map(read).transpose()?;
        let text = eksynth::init::starter(cluster.as_ref()).map_err(|diagnostics| {
            report(&diagnostics);
            if let Some(file) = &cluster {
                eprintln!(
                    "error: `{}` is not `aws eks describe-cluster` output; no blueprint was written",
                    shown(&file.name)
                );
            }
            ExitCode::from(USAGE_OR_IO)
        })?;
        write_blueprint(&text, output)?;
        Ok(ExitCode::SUCCESS)
    })())
}

fn validate(
    paths: &[String],
    format: ReportFormat,
    strict: bool,
    schemas: Option<PathBuf>,
    rules: &[PathBuf],
) -> ExitCode {
    // The threads start while the files are read.
    eksynth::parallel::start();
    let schemas = match load_schemas(schemas) {
        Ok(schemas) => schemas,
        Err(code) => return code,
    };
    let rules = match load_rules(rules) {
        Ok(rules) => rules,
        Err(code) => return code,
    };
    let mut files = Vec::new();
    let mut unreadable = false;
    for path in paths {
        match read_input(path) {
            Ok(file) => files.push(file),
            Err(message) => {
                eprintln!("{message}");
                unreadable = true;
            }
        }
    }
    let (reports, trees): (Vec<Report>, Vec<_>) = eksynth::parallel::map(&files, |file| {
        check_file_keeping_trees(file, schemas, &rules)
    })
    .into_iter()
    .unzip();
    // The process ends with this command: the templates' trees go with it,
    // without the milliseconds freeing a large one takes.
    std::mem::forget(trees);
    let errors: usize = reports.iter().map(|r| r.count(Level::Error)).sum();
    let warnings: usize = reports.iter().map(|r| r.count(Level::Warning)).sum();
    let notes: usize = reports.iter().map(|r| r.count(Level::Note)).sum();
    let written = match format {
        ReportFormat::Human => {
            for r in &reports {
                report(&r.diagnostics);
            }
            // Notes are counted only when there are any, so that a
            // clean run reads as it always has.
            let notes = if notes > 0 {
                format!(", {}", plural(notes, "note"))
            } else {
                String::new()
            };
            eprintln!(
                "{}: {} checked, {}, {}{notes}",
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
    if unreadable || reports.iter().any(|r| r.unusable) {
        ExitCode::from(USAGE_OR_IO)
    } else if errors > 0 || strict && warnings > 0 {
        ExitCode::from(FINDINGS)
    } else {
        ExitCode::SUCCESS
    }
}

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    roce_dissect::cli::main()
}

//! Bash and POSIX shell (`.sh`, `.bash`, `.zsh`, `.ksh`; an extensionless
//! script whose first line runs a shell, [`super::Language::of_file`]):
//! functions (`f() { … }`, `function f { … }`); calls link by command name,
//! the shell's own commands and the common Unix tools left out.

use super::{Spec, field_body, field_name, no_owner, no_script_block};

pub(super) static SPEC: Spec = Spec {
    defs: &[("function_definition", "function")],
    containers: &[],
    wrappers: &[],
    transparent: &[],
    calls: &[("command", "name")],
    imports: &[],
    heritage: &[],
    type_refs: &[],
    builtins: BUILTINS,
    capital_calls: false,
    name: field_name,
    body: field_body,
    owner: no_owner,
    script_block: no_script_block,
    hidden: super::never_hidden,
    makes_type: super::makes_no_type,
    kind: super::listed_kind,
};

/// The shell's builtins and the tools every script runs: as graph edges they
/// would join every script to every other.
const BUILTINS: &[&str] = &[
    "echo",
    "printf",
    "cd",
    "pwd",
    "test",
    "local",
    "export",
    "readonly",
    "declare",
    "typeset",
    "unset",
    "shift",
    "source",
    "eval",
    "exec",
    "exit",
    "return",
    "true",
    "false",
    "trap",
    "wait",
    "command",
    "builtin",
    "type",
    "hash",
    "getopts",
    "case",
    "alias",
    "set",
    "cat",
    "grep",
    "egrep",
    "sed",
    "awk",
    "cut",
    "tr",
    "sort",
    "uniq",
    "head",
    "tail",
    "wc",
    "find",
    "xargs",
    "rm",
    "cp",
    "mv",
    "mkdir",
    "rmdir",
    "ln",
    "ls",
    "chmod",
    "chown",
    "touch",
    "date",
    "sleep",
    "kill",
    "env",
    "basename",
    "dirname",
    "readlink",
    "realpath",
    "mktemp",
    "tee",
    "curl",
    "wget",
    "tar",
    "gzip",
    "git",
    "sudo",
    "command",
    "which",
    "printenv",
    "umask",
    "compgen",
    "complete",
    "compopt",
    "mapfile",
    "readarray",
    "let",
];

#[cfg(test)]
mod tests {
    use cairn_core::Relation;

    use crate::code::tests::{assert_crumbs, assert_symbols, check_lines, has_link, opts};
    use crate::code::{Language, chunk_code, enclosing_definition, highlight};

    const SRC: &str = "#!/bin/bash\n# Installs the release.\nset -euo pipefail\nreadonly PREFIX=/usr/local\n\n# Copies the binaries in.\ninstall_files() {\n  cp target/release/cairn \"$PREFIX/bin\"\n  check_prefix \"$PREFIX\"\n}\n\nfunction check_prefix {\n  test -d \"$1\" || fail \"no $1\"\n}\n\ninstall_files\n";

    #[test]
    fn shell_functions_are_definitions_and_commands_are_calls() {
        for path in ["install.sh", "x.bash", "y.zsh", "z.ksh"] {
            assert_eq!(Language::of_path(path), Some(Language::Shell), "{path}");
        }
        let doc = chunk_code("scripts/install.sh", SRC, &opts());
        assert_eq!(doc.language, "shell");
        check_lines(SRC, &doc);
        assert_crumbs(
            &doc,
            &[
                "scripts/install.sh > install_files",
                "scripts/install.sh > check_prefix",
            ],
        );
        assert_symbols(
            &doc,
            &[("install_files", "function"), ("check_prefix", "function")],
        );
        let f = doc
            .chunks
            .iter()
            .find(|c| c.breadcrumb().ends_with("> install_files"))
            .expect("install_files");
        assert!(f.text.starts_with("# Copies"), "{}", f.text);
        assert!(
            has_link(&doc, "check_prefix", Relation::Calls),
            "{:?}",
            doc.links
        );
        assert!(has_link(&doc, "fail", Relation::Calls), "{:?}", doc.links);
        for common in ["cp", "test", "set"] {
            assert!(!doc.links.iter().any(|l| l.to == common), "{common}");
        }
        let def = enclosing_definition("scripts/install.sh", SRC, 13, 13).expect("in check_prefix");
        assert_eq!(def.name, "check_prefix");
        assert_eq!(
            highlight("scripts/install.sh", SRC)
                .expect("highlighted")
                .len(),
            SRC.lines().count()
        );
    }
}

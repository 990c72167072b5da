//! Python: functions and classes (decorators included), and a module's
//! `if __name__ == "__main__":` block as its own chunk ([`MAIN_BLOCK`]).

use tree_sitter::Node;

use super::{Spec, field_body, field_name, no_owner, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("function_definition", "function"),
        ("class_definition", "class"),
    ],
    containers: &["class_definition"],
    wrappers: &[("decorated_definition", "definition")],
    transparent: &[],
    calls: &[("call", "function")],
    imports: &["import_statement", "import_from_statement"],
    heritage: &[("argument_list", Some("class_definition"))],
    type_refs: &[],
    builtins: BUILTINS,
    capital_calls: false,
    name: field_name,
    body: field_body,
    owner: no_owner,
    script_block: is_main_guard,
    hidden: super::never_hidden,
    makes_type: super::makes_no_type,
    kind: super::listed_kind,
};

/// Python's own: builtins, exceptions every module raises, and `typing`.
const BUILTINS: &[&str] = &[
    "cls",
    "kwargs",
    "isinstance",
    "issubclass",
    "getattr",
    "setattr",
    "hasattr",
    "sorted",
    "float",
    "tuple",
    "Exception",
    "BaseException",
    "ValueError",
    "TypeError",
    "KeyError",
    "IndexError",
    "AttributeError",
    "RuntimeError",
    "NotImplementedError",
    "Any",
    "Optional",
    "Union",
    "List",
    "Dict",
    "Tuple",
    "Set",
    "Type",
    "Callable",
    "Iterable",
    "Iterator",
    "Sequence",
    "Mapping",
    "TYPE_CHECKING",
];

/// The breadcrumb of a Python file's `if __name__ == "__main__":` block
/// (`rich/markdown.py > __main__`): the script part of a module.
pub const MAIN_BLOCK: &str = "__main__";

/// Whether a node is Python's `if __name__ == "__main__":` guard.
fn is_main_guard(node: Node<'_>, src: &str) -> bool {
    if node.kind() != "if_statement" {
        return false;
    }
    let Some(cond) = node.child_by_field_name("condition") else {
        return false;
    };
    let c: String = text_of(cond, src)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    matches!(
        c.as_str(),
        "__name__==\"__main__\""
            | "__name__=='__main__'"
            | "\"__main__\"==__name__"
            | "'__main__'==__name__"
    )
}

#[cfg(test)]
mod tests {
    use cairn_core::Chunk;
    use cairn_core::Relation;

    use super::MAIN_BLOCK;
    use crate::code::chunk_code;
    use crate::code::tests::{check_lines, crumbs, has_link, opts};

    #[test]
    fn a_method_is_named_by_its_class_and_signature() {
        // Big enough to be cut into a header and one chunk per method.
        let mut src = String::from(
            "class LineDecoder:\n    \"\"\"Splits bytes into lines.\"\"\"\n\n    def decode(self, data: bytes, final: bool = False) -> list:\n        return data.split(b\"\\n\")\n",
        );
        for i in 0..30 {
            src.push_str(&format!(
                "\n    def helper_{i}(self, x):\n        return x + {i} * len(str(x))\n"
            ));
        }
        let doc = chunk_code("pkg/lines.py", &src, &opts());
        let c = crumbs(&doc);
        assert!(
            c.contains(&"pkg/lines.py > LineDecoder > decode(self, data: bytes, final: bool = False) -> list".to_string()),
            "{c:?}"
        );
    }

    #[test]
    fn a_python_script_block_is_its_own_chunk_named_main() {
        let src = "import sys\n\n\ndef parse(markup):\n    \"\"\"Parse console markup into tags.\"\"\"\n    return [t for t in markup.split('[') if t]\n\n\nif __name__ == \"__main__\":  # pragma: no cover\n    import argparse\n\n    parser = argparse.ArgumentParser(description=\"Render markup\")\n    parser.add_argument(\"path\", help=\"the file to render\")\n    args = parser.parse_args()\n    print(parse(open(args.path).read()))\n";
        let doc = chunk_code("rich/markup.py", src, &opts());
        let main: Vec<&Chunk> = doc
            .chunks
            .iter()
            .filter(|c| c.heading_path.last().map(String::as_str) == Some(MAIN_BLOCK))
            .collect();
        assert_eq!(main.len(), 1, "{:?}", crumbs(&doc));
        assert!(main[0].text.starts_with("if __name__ == \"__main__\":"));
        assert!(main[0].text.contains("parser.parse_args()"));
        assert_eq!(main[0].heading_path, vec!["rich/markup.py", "__main__"]);
        // The function above stays its own definition, not part of the block.
        assert!(crumbs(&doc).iter().any(|c| c == "rich/markup.py > parse"));
        // Any other `if` at the top is plain leftover code, and other
        // languages have no such block.
        let other = chunk_code(
            "a.py",
            "if DEBUG == \"__main__\":\n    import logging\n    logging.basicConfig(level=logging.DEBUG)\n",
            &opts(),
        );
        assert!(other.chunks.iter().all(|c| c.heading_path.len() == 1));
    }

    #[test]
    fn a_large_class_keeps_its_header_line_and_bases() {
        // markdown 3.7's tests: `class TestSetextHeaders(TestCase):` then
        // methods; the class line was in no chunk and its base unlinked.
        let mut src = String::from("import unittest\n\n\nclass TestSetextHeaders(TestCase):\n\n");
        for i in 0..30 {
            src.push_str(&format!(
                "    def test_case_{i}(self):\n        self.assertMarkdownRenders(self.dedent('text {i}'), '<p>{i}</p>')\n\n"
            ));
        }
        let doc = chunk_code("tests/test_headers.py", &src, &opts());
        check_lines(&src, &doc);
        let first = doc
            .chunks
            .iter()
            .find(|c| c.start_line <= 4 && 4 <= c.end_line)
            .expect("a chunk holds the class line");
        assert_eq!(
            first.breadcrumb(),
            "tests/test_headers.py > TestSetextHeaders > test_case_0(self)"
        );
        assert!(first.text.starts_with("class TestSetextHeaders(TestCase):"));
        assert!(
            has_link(&doc, "TestCase", Relation::Implements),
            "{:?}",
            doc.links
        );
    }
}

//! JavaScript, TypeScript and TSX: functions, classes, methods, interfaces,
//! types, enums, and `const f = () => {}` (a function by another syntax).

use tree_sitter::Node;

use super::{DefName, Spec, field_body, field_name, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("function_declaration", "function"),
        ("generator_function_declaration", "function"),
        ("class_declaration", "class"),
        ("abstract_class_declaration", "class"),
        ("method_definition", "method"),
        ("interface_declaration", "interface"),
        ("type_alias_declaration", "type"),
        ("enum_declaration", "enum"),
        ("lexical_declaration", "function"),
        ("variable_declaration", "function"),
        ("expression_statement", "function"),
    ],
    containers: &["class_declaration", "abstract_class_declaration"],
    wrappers: &[("export_statement", "declaration")],
    transparent: &[],
    calls: &[
        ("call_expression", "function"),
        ("new_expression", "constructor"),
    ],
    imports: &["import_statement"],
    heritage: &[("class_heritage", None)],
    type_refs: &["type_identifier"],
    builtins: BUILTINS,
    capital_calls: false,
    name: declaration_name,
    body: function_body,
    owner: prototype_owner,
    script_block: no_script_block,
    hidden: super::never_hidden,
    makes_type: super::makes_no_type,
    kind: super::listed_kind,
};

/// JavaScript's and TypeScript's own: globals and utility types.
const BUILTINS: &[&str] = &[
    "require",
    "module",
    "exports",
    "Object",
    "Array",
    "String",
    "Number",
    "Boolean",
    "Symbol",
    "Function",
    "Error",
    "TypeError",
    "RangeError",
    "Promise",
    "JSON",
    "Math",
    "Date",
    "RegExp",
    "Map",
    "Set",
    "Record",
    "Partial",
    "Readonly",
    "Pick",
    "Omit",
];

/// The target and the function a declaration or an assignment holds:
/// `const f = () => {…}`, `app.init = function init() {…}`,
/// `module.exports = function f() {…}`.
fn function_value(node: Node<'_>) -> Option<(Node<'_>, Node<'_>)> {
    match node.kind() {
        "lexical_declaration" | "variable_declaration" => {
            let mut cursor = node.walk();
            let decl = node
                .named_children(&mut cursor)
                .find(|c| c.kind() == "variable_declarator")?;
            let value = decl.child_by_field_name("value")?;
            Some((decl.child_by_field_name("name")?, value))
        }
        "expression_statement" => {
            // `req.get = req.header = function header() {…}`: the last one.
            let mut assign = node.named_child(0)?;
            if assign.kind() != "assignment_expression" {
                return None;
            }
            while let Some(right) = assign.child_by_field_name("right")
                && right.kind() == "assignment_expression"
            {
                assign = right;
            }
            Some((
                assign.child_by_field_name("left")?,
                assign.child_by_field_name("right")?,
            ))
        }
        _ => None,
    }
    .filter(|(_, value)| {
        matches!(
            value.kind(),
            "arrow_function" | "function_expression" | "function" | "generator_function" | "class"
        )
    })
}

/// `const handler = (…) => {…}` and `app.init = function init() {…}` are
/// functions by another syntax, named by their variable or property
/// (`module.exports = function createApplication() {…}` by the function's
/// own name); a declaration or assignment of anything else defines
/// nothing. Other kinds are named by their `name`.
fn declaration_name(node: Node<'_>, src: &str) -> Option<DefName> {
    if !matches!(
        node.kind(),
        "lexical_declaration" | "variable_declaration" | "expression_statement"
    ) {
        return field_name(node, src);
    }
    let (target, value) = function_value(node)?;
    let name = match target.kind() {
        "member_expression" => {
            let property = text_of(target.child_by_field_name("property")?, src);
            let object = target
                .child_by_field_name("object")
                .map(|o| text_of(o, src));
            if property == "exports" && matches!(object, Some("module")) {
                text_of(value.child_by_field_name("name")?, src)
            } else {
                property
            }
        }
        "identifier" => text_of(target, src),
        _ => return None,
    };
    Some((name.to_string(), None))
}

/// The body of a function declared or assigned by another syntax is its
/// value's (a block, not an arrow function's expression); other kinds have
/// a `body`.
fn function_body(node: Node<'_>) -> Option<Node<'_>> {
    let Some((_, value)) = function_value(node) else {
        return field_body(node);
    };
    value
        .child_by_field_name("body")
        .filter(|b| matches!(b.kind(), "statement_block" | "class_body"))
}

/// `Route.prototype.dispatch = function (…) {…}` is a method of `Route`.
fn prototype_owner(node: Node<'_>, src: &str) -> Option<String> {
    if node.kind() != "expression_statement" {
        return None;
    }
    let (target, _) = function_value(node)?;
    let object = target.child_by_field_name("object")?;
    if object.kind() != "member_expression"
        || object
            .child_by_field_name("property")
            .map(|p| text_of(p, src))
            != Some("prototype")
    {
        return None;
    }
    let owner = object.child_by_field_name("object")?;
    (owner.kind() == "identifier").then(|| text_of(owner, src).to_string())
}

#[cfg(test)]
mod tests {
    use crate::code::chunk_code;
    use crate::code::tests::{check_lines, crumbs, has_link, opts};
    use cairn_core::Relation;

    #[test]
    fn functions_assigned_to_properties_are_definitions() {
        // express 4.21's style: `app.init = function init() {…}`.
        let src = "var app = exports = module.exports = {};\n\n/**\n * Initialize the server.\n */\napp.init = function init() {\n  this.cache = {};\n  this.defaultConfiguration();\n};\n\nres.send = function send(body) {\n  return this.end(body);\n};\n\nRoute.prototype.dispatch = function (req, res, done) {\n  next();\n};\n\nmodule.exports = function createApplication() {\n  return mixin(app);\n};\n\nreq.get =\nreq.header = function header(name) {\n  return this.headers[name];\n};\n\napp.count = 3;\n";
        let doc = chunk_code("lib/application.js", src, &opts());
        check_lines(src, &doc);
        let c = crumbs(&doc);
        for want in [
            "lib/application.js > init",
            "lib/application.js > send",
            "lib/application.js > Route > dispatch",
            "lib/application.js > createApplication",
            "lib/application.js > header",
        ] {
            assert!(c.contains(&want.to_string()), "{want} not in {c:?}");
        }
        // The doc comment travels with its function.
        let init = doc
            .chunks
            .iter()
            .find(|c| c.breadcrumb() == "lib/application.js > init")
            .expect("init");
        assert!(init.text.starts_with("/**"), "{}", init.text);
        assert!(
            has_link(&doc, "dispatch", Relation::Defines),
            "{:?}",
            doc.links
        );
        assert!(
            has_link(&doc, "Route", Relation::MemberOf),
            "{:?}",
            doc.links
        );
        assert!(has_link(&doc, "defaultConfiguration", Relation::Calls));
        // A value that is no function defines nothing.
        assert!(
            !has_link(&doc, "count", Relation::Defines),
            "{:?}",
            doc.links
        );
    }

    #[test]
    fn a_long_arrow_function_is_cut_between_statements() {
        let mut src = String::from("export const handler = async (req, res) => {\n");
        for i in 0..80 {
            src.push_str(&format!(
                "  const value{i} = await compute{i}(req.body.items[{i}]);\n"
            ));
        }
        src.push_str("  res.json({ ok: true });\n};\n");
        let doc = chunk_code("api/handler.ts", &src, &opts());
        check_lines(&src, &doc);
        assert!(doc.chunks.len() >= 3, "{:?}", crumbs(&doc));
        assert_eq!(doc.chunks[0].breadcrumb(), "api/handler.ts > handler");
        assert_eq!(
            doc.chunks[1].breadcrumb(),
            "api/handler.ts > const handler = async (req, res) =>"
        );
        for c in &doc.chunks {
            assert!(c.text.len() <= 1500 + 80, "{}", c.text.len());
        }
    }

    #[test]
    fn a_generator_function_in_a_const_is_a_definition() {
        // axios 1.7's helpers/readBlob.js.
        let src = "const {asyncIterator} = Symbol;\n\nconst readBlob = async function* (blob) {\n  if (blob.stream) {\n    yield* blob.stream()\n  } else {\n    yield await blob.arrayBuffer()\n  }\n}\n\nexport default readBlob;\n";
        let doc = chunk_code("lib/helpers/readBlob.js", src, &opts());
        check_lines(src, &doc);
        assert!(
            crumbs(&doc).contains(&"lib/helpers/readBlob.js > readBlob".to_string()),
            "{:?}",
            crumbs(&doc)
        );
        assert!(
            has_link(&doc, "readBlob", Relation::Defines),
            "{:?}",
            doc.links
        );
    }
}

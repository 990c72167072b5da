//! Ruby (`.rb`, `.rake`, `.gemspec`): classes and modules (nested ones as
//! `Outer > Inner`), methods and singleton methods (`def self.x`), a
//! `class << self` block's methods as members of the class around it.
//! Calls link by method name; `class Foo < Bar` is a supertype link.
//! `require` is a call like any other: Ruby names files, not concepts.

use tree_sitter::Node;

use super::{DefName, Spec, field_body, no_owner, no_script_block, text_of};

pub(super) static SPEC: Spec = Spec {
    defs: &[
        ("class", "class"),
        ("module", "module"),
        ("method", "method"),
        ("singleton_method", "method"),
    ],
    containers: &["class", "module"],
    wrappers: &[],
    // `class << self … end`: its methods belong to the class around it;
    // `if RUBY_ENGINE == "jruby"` … `end` around a file's module groups
    // definitions without naming any.
    transparent: &[
        "singleton_class",
        "if",
        "unless",
        "then",
        "else",
        "elsif",
        "begin",
    ],
    calls: &[("call", "method")],
    imports: &[],
    heritage: &[("superclass", None)],
    type_refs: &["constant"],
    builtins: BUILTINS,
    capital_calls: false,
    name: def_name,
    body: field_body,
    owner: no_owner,
    script_block: no_script_block,
    hidden: ruby_hidden,
    makes_type: super::makes_no_type,
    kind: super::listed_kind,
};

/// A method after a bare `private` or `protected` in its class's body (up to
/// a bare `public`), or written `private def x`: the class's helper, not
/// its interface (rack's private `Events#on_commit` beside the public
/// `Events::Abstract#on_commit`).
fn ruby_hidden(node: Node<'_>, src: &str) -> bool {
    if node.kind() != "method" {
        return false;
    }
    if let Some(args) = node.parent()
        && args.kind() == "argument_list"
        && let Some(call) = args.parent()
        && call.kind() == "call"
    {
        return call
            .child_by_field_name("method")
            .is_some_and(|m| matches!(text_of(m, src), "private" | "protected"));
    }
    let mut prev = node.prev_named_sibling();
    while let Some(p) = prev {
        if p.kind() == "identifier" {
            match text_of(p, src) {
                "private" | "protected" => return true,
                "public" => return false,
                _ => {}
            }
        }
        prev = p.prev_named_sibling();
    }
    false
}

/// Ruby's own: the core methods and classes every file uses.
const BUILTINS: &[&str] = &[
    "require",
    "require_relative",
    "attr_accessor",
    "attr_reader",
    "attr_writer",
    "include",
    "extend",
    "prepend",
    "private",
    "protected",
    "public",
    "private_constant",
    "module_function",
    "raise",
    "puts",
    "p",
    "pp",
    "lambda",
    "proc",
    "block_given?",
    "respond_to?",
    "is_a?",
    "kind_of?",
    "instance_variable_get",
    "instance_variable_set",
    "send",
    "public_send",
    "freeze",
    "frozen?",
    "dup",
    "each",
    "each_with_object",
    "map",
    "select",
    "reject",
    "any?",
    "all?",
    "empty?",
    "nil?",
    "to_s",
    "to_sym",
    "to_a",
    "to_h",
    "inspect",
    "Object",
    "BasicObject",
    "Module",
    "Class",
    "String",
    "Symbol",
    "Array",
    "Hash",
    "Integer",
    "Float",
    "Proc",
    "Kernel",
    "Comparable",
    "Enumerable",
    "StandardError",
    "ArgumentError",
    "NameError",
    "NoMethodError",
    "RuntimeError",
    "TypeError",
    "NotImplementedError",
];

/// A class's or module's name (the last part of `Foo::Bar`), a method's
/// (`self.` left out of a singleton method's).
fn def_name(node: Node<'_>, src: &str) -> Option<DefName> {
    let name = node.child_by_field_name("name")?;
    let text = match name.kind() {
        "scope_resolution" => name
            .child_by_field_name("name")
            .map_or_else(|| text_of(name, src), |n| text_of(n, src)),
        _ => text_of(name, src),
    };
    (!text.is_empty()).then(|| (text.to_string(), None))
}

#[cfg(test)]
mod tests {
    use cairn_core::Relation;

    use crate::code::tests::{
        assert_crumbs, assert_symbols, check_lines, chunk_named, has_link, opts,
    };
    use crate::code::{Language, chunk_code, enclosing_definition, highlight};
    use crate::markdown::ChunkOptions;

    const SRC: &str = r#"# frozen_string_literal: true

require "set"

module Zeitwerk
  # A loader sets autoloads for the constants of its root directories.
  class Loader < BasicLoader
    include RealModName

    # The inflector turns file names into constant names.
    attr_accessor :inflector

    def initialize
      super
      @inflector = Zeitwerk::Inflector.new
      @autoloads = {}
    end

    # Sets autoloads in the root namespaces.
    def setup
      mutex.synchronize do
        break if @setup

        actual_roots.each do |root_dir, root_namespace|
          set_autoloads_in_dir(root_dir, root_namespace)
        end
        @setup = true
      end
    end

    class << self
      # The loader for a gem, found from the caller's file.
      def for_gem(warn_on_extra_files: true)
        called_from = caller_locations(1, 1).first.path
        Registry.loader_for_gem(called_from, warn_on_extra_files: warn_on_extra_files)
      end
    end

    def self.eager_load_all
      Registry.loaders.each(&:eager_load)
    end
  end
end

if RUBY_ENGINE == "jruby"
  module Zeitwerk
    class JavaLatch
      def wait(timeout = nil)
        @latch.await(timeout)
      end
    end
  end
end
"#;

    #[test]
    fn ruby_modules_classes_and_methods_get_breadcrumbs() {
        for path in [
            "lib/zeitwerk/loader.rb",
            "Rakefile.rake",
            "zeitwerk.gemspec",
        ] {
            assert_eq!(Language::of_path(path), Some(Language::Ruby), "{path}");
        }
        assert_eq!(Language::Ruby.name(), "ruby");
        let small = ChunkOptions {
            max_chars: 400,
            ..opts()
        };
        let doc = chunk_code("lib/zeitwerk/loader.rb", SRC, &small);
        assert_eq!(doc.language, "ruby");
        check_lines(SRC, &doc);
        assert_crumbs(
            &doc,
            &[
                "lib/zeitwerk/loader.rb > Zeitwerk > Loader > setup",
                "lib/zeitwerk/loader.rb > Zeitwerk > Loader > initialize",
                "lib/zeitwerk/loader.rb > Zeitwerk > Loader > for_gem(warn_on_extra_files: true)",
                "lib/zeitwerk/loader.rb > Zeitwerk > Loader > eager_load_all",
            ],
        );
        let setup = doc
            .chunks
            .iter()
            .find(|c| c.breadcrumb().ends_with("> setup"))
            .expect("setup");
        assert!(
            setup.text.trim_start().starts_with("# Sets autoloads"),
            "{}",
            setup.text
        );
        assert_symbols(
            &doc,
            &[
                ("Zeitwerk", "module"),
                ("Loader", "class"),
                ("setup", "method"),
                ("for_gem", "method"),
                // Inside `if RUBY_ENGINE == "jruby"`: the module, small, is one
                // chunk that holds it.
                ("JavaLatch", "class"),
            ],
        );
        // Calls by method name, the superclass, members; no `require` or
        // `each` links.
        assert!(
            has_link(&doc, "set_autoloads_in_dir", Relation::Calls),
            "{:?}",
            doc.links
        );
        assert!(
            has_link(&doc, "loader_for_gem", Relation::Calls),
            "{:?}",
            doc.links
        );
        assert!(
            has_link(&doc, "BasicLoader", Relation::Implements),
            "{:?}",
            doc.links
        );
        assert!(
            has_link(&doc, "Loader", Relation::MemberOf),
            "{:?}",
            doc.links
        );
        for name in ["require", "each", "attr_accessor"] {
            assert!(
                !doc.links.iter().any(|l| l.to == name),
                "{name}: {:?}",
                doc.links
            );
        }
        let def = enclosing_definition("lib/zeitwerk/loader.rb", SRC, 24, 24).expect("in setup");
        assert_eq!((def.kind, def.name.as_str()), ("method", "setup"));
        let lines = highlight("lib/zeitwerk/loader.rb", SRC).expect("highlighted");
        assert_eq!(lines.len(), SRC.lines().count());
    }

    #[test]
    fn a_small_file_kept_whole_defines_its_nested_classes_and_methods() {
        // tzinfo's `data_sources/country_info.rb`: one chunk, modules around
        // a class; the class and its methods are what a name search asks.
        let src = "module TZInfo\n  module DataSources\n    class CountryInfo\n      attr_reader :code\n\n      def initialize(code, name)\n        @code = code\n      end\n\n      def zone_identifiers\n        []\n      end\n    end\n  end\nend\n";
        let doc = chunk_code("lib/country_info.rb", src, &opts());
        assert_eq!(doc.chunks.len(), 1);
        for name in ["TZInfo", "DataSources", "CountryInfo", "zone_identifiers"] {
            assert!(
                has_link(&doc, name, Relation::Defines),
                "{name}: {:?}",
                doc.links
            );
        }
    }

    #[test]
    fn methods_after_private_are_hidden_definitions() {
        // rack's `Events`: the public `Abstract#on_commit` and the class's
        // private `on_commit`; `public` ends the private part.
        let src = "class Events\n  module Abstract\n    def on_commit(req, res)\n    end\n  end\n\n  def call(env)\n    on_commit(env, nil)\n  end\n\n  private\n\n  def on_commit(request, response)\n    @handlers.each { |h| h.on_commit request, response }\n  end\n\n  public\n\n  def on_finish(request, response)\n    nil\n  end\nend\n";
        let small = ChunkOptions {
            max_chars: 60,
            ..opts()
        };
        let doc = chunk_code("lib/rack/events.rb", src, &small);
        let weights = |name: &str| -> Vec<(u32, f32)> {
            doc.links
                .iter()
                .filter(|l| l.to == name && l.rel == Relation::Defines)
                .map(|l| (doc.chunks[l.chunk.unwrap()].start_line, l.weight))
                .collect()
        };
        assert_eq!(
            weights("on_commit"),
            [(1, 1.0), (13, 0.5)],
            "{:?}",
            doc.links
        );
        assert_eq!(weights("call"), [(7, 1.0)]);
        assert_eq!(weights("on_finish"), [(19, 1.0)]);
    }

    #[test]
    fn a_class_that_opens_with_class_self_gets_its_class_methods() {
        // tzinfo's `Timezone`: `class << self` first, its methods were the
        // class's header (one 200-line chunk), no definitions of their own.
        let src = "module TZInfo\n  # A time zone.\n  class Timezone\n    include Comparable\n\n    class << self\n      # Every zone identifier there is, sorted by name and then some\n      # more words so that the method is not small.\n      def all_identifiers\n        data_source.timezone_identifiers.sort.map { |i| i.to_s }\n      end\n\n      # The identifiers of the zones observed by a country, with more\n      # words about them so that this method is not small either.\n      def all_country_zone_identifiers\n        Country.all.map(&:zone_identifiers).flatten.uniq\n      end\n    end\n\n    def identifier\n      raise_unknown_timezone\n    end\n  end\nend\n";
        let small = ChunkOptions {
            max_chars: 300,
            ..opts()
        };
        let doc = chunk_code("lib/tzinfo/timezone.rb", src, &small);
        check_lines(src, &doc);
        let c = chunk_named(
            &doc,
            "lib/tzinfo/timezone.rb > TZInfo > Timezone > all_country_zone_identifiers",
        );
        assert!(c.text.contains("# The identifiers"), "{}", c.text);
        assert_crumbs(
            &doc,
            &[
                "lib/tzinfo/timezone.rb > TZInfo > Timezone > all_identifiers",
                "lib/tzinfo/timezone.rb > TZInfo > Timezone > identifier",
            ],
        );
        // The short header opens the first method's chunk, no more.
        let first = chunk_named(
            &doc,
            "lib/tzinfo/timezone.rb > TZInfo > Timezone > all_identifiers",
        );
        assert!(!first.text.contains("def all_country"), "{}", first.text);
    }

    #[test]
    fn a_method_under_a_long_comment_is_defined_where_its_def_line_is() {
        // tzinfo's `local_datetime`: 80 lines of comment, split in parts.
        let comment: String = (0..100)
            .map(|i| format!("    # Line {i} of the comment that says what the method does.\n"))
            .collect();
        let src = format!(
            "class Timezone\n  def identifier\n    @identifier\n  end\n\n{comment}    def local_datetime(year, month = 1)\n      local_timestamp(year, month).to_datetime\n    end\nend\n"
        );
        let doc = chunk_code("lib/timezone.rb", &src, &opts());
        check_lines(&src, &doc);
        let parts: Vec<_> = doc
            .chunks
            .iter()
            .enumerate()
            .filter(|(_, c)| c.breadcrumb().contains("local_datetime"))
            .collect();
        assert!(
            parts.len() > 1,
            "split: {:?}",
            doc.chunks
                .iter()
                .map(|c| (c.breadcrumb(), c.start_line, c.end_line))
                .collect::<Vec<_>>()
        );
        let defines: Vec<usize> = doc
            .links
            .iter()
            .filter(|l| l.to == "local_datetime" && l.rel == Relation::Defines)
            .filter_map(|l| l.chunk)
            .collect();
        assert_eq!(defines.len(), 1, "{:?}", doc.links);
        assert!(
            doc.chunks[defines[0]].text.contains("def local_datetime"),
            "{}",
            doc.chunks[defines[0]].text
        );
    }
}

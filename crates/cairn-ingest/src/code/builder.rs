//! The chunker all languages share: walks a syntax tree with the [`Spec`]
//! of its language, cuts definitions into chunks and finds their links.

use std::collections::HashSet;

use cairn_core::{Chunk, Link, Relation};
use tree_sitter::Node;

use super::{CodeDoc, DefName, MAIN_BLOCK, Spec, always_node, is_common, text_of, windows};
use crate::markdown::ChunkOptions;

/// Leftover text this short (closing braces, a lone `pass`) is no chunk,
/// and a container header this short (`impl Foo {`) gives way to its first
/// member.
const TINY_CHARS: usize = 40;

pub(super) struct Builder<'a> {
    pub(super) path: &'a str,
    pub(super) src: &'a str,
    pub(super) lines: Vec<&'a str>,
    pub(super) spec: &'static Spec,
    pub(super) opts: &'a ChunkOptions,
    pub(super) doc: CodeDoc,
    /// Per chunk: the qualified name of the definition it belongs to.
    pub(super) owners: Vec<Option<String>>,
    /// Names of the types and top-level functions this file defines: never
    /// too common to link on here.
    pub(super) defined: HashSet<String>,
}

impl<'a> Builder<'a> {
    pub(super) fn def_kind(&self, node: Node<'_>) -> Option<&'static str> {
        self.spec.def_kind(node, self.src)
    }

    /// The definition a wrapper (export, decorator) holds, or the node itself.
    pub(super) fn unwrap_def<'t>(&self, node: Node<'t>) -> Node<'t> {
        let mut node = node;
        while let Some((_, field)) = self.spec.wrappers.iter().find(|(k, _)| *k == node.kind()) {
            match super::wrapped(node, field) {
                Some(inner) => node = inner,
                None => break,
            }
        }
        node
    }

    /// Where a transparent group's members are: the node itself where
    /// [`Spec::body`] says so (R's `{ … }`, whose every statement is a
    /// `body`), else its `body` field, else what [`Spec::body`] finds
    /// (Kotlin's `companion object`'s `class_body`), else the node itself
    /// (an `#ifdef`'s children).
    fn transparent_body<'t>(&self, node: Node<'t>) -> Node<'t> {
        if (self.spec.body)(node).is_some_and(|b| b.id() == node.id()) {
            return node;
        }
        node.child_by_field_name("body")
            .or_else(|| (self.spec.body)(node))
            .unwrap_or(node)
    }

    /// Whether a definition's body holds members ([`Spec::containers`],
    /// [`Spec::makes_type`]).
    fn is_container(&self, node: Node<'_>) -> bool {
        self.spec.containers.contains(&node.kind()) || (self.spec.makes_type)(node)
    }

    /// A definition's name (and, for `impl Trait for Type`, the trait).
    pub(super) fn def_name(&self, node: Node<'_>) -> Option<DefName> {
        (self.spec.name)(node, self.src)
    }

    /// Chunks the definitions among `node`'s children; what lies between them
    /// becomes chunks of `parents`.
    /// Children starting before `from_row` are already in a header chunk.
    pub(super) fn block(&mut self, node: Node<'_>, parents: &[String], from_row: usize) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node
            .named_children(&mut cursor)
            .filter(|c| c.start_position().row >= from_row)
            .collect();
        let mut run: Option<(usize, usize)> = None; // leftover rows, inclusive
        // The last row of the last definition: a comment after it on its
        // line (`int f(void);  /* … */`) is already in its chunk.
        let mut def_end: Option<usize> = None;
        let mut i = 0;
        while i < children.len() {
            let child = children[i];
            let inner = self.unwrap_def(child);
            // Scala's `package a.b` line holds nothing; `package a.b { … }`
            // holds definitions.
            let bare_package =
                inner.kind() == "package_clause" && inner.child_by_field_name("body").is_none();
            if self.spec.transparent.contains(&inner.kind()) && !bare_package {
                self.flush(&mut run, parents);
                let body = self.transparent_body(inner);
                self.block(body, parents, 0);
                i += 1;
                continue;
            }
            if (self.spec.script_block)(child, self.src) {
                // Python's `if __name__ == "__main__":` is a script that
                // uses the module (argparse, a demo): its own chunks, named
                // [`MAIN_BLOCK`], so that ranking can tell it from the
                // module's implementation.
                self.flush(&mut run, parents);
                let mut inner = parents.to_vec();
                inner.push(MAIN_BLOCK.to_string());
                let mut block = Some((child.start_position().row, end_row(child)));
                self.flush(&mut block, &inner);
                i += 1;
                continue;
            }
            let def = self
                .def_kind(inner)
                .and_then(|k| self.def_name(inner).map(|n| (k, n)));
            let Some((kind, (name, trait_))) = def else {
                let (mut s, e) = (child.start_position().row, end_row(child));
                if let Some(d) = def_end {
                    s = s.max(d + 1);
                }
                if s <= e {
                    run = Some(match run {
                        Some((rs, _)) => (rs, e),
                        None => (s, e),
                    });
                }
                i += 1;
                continue;
            };
            // Comments and attributes right above belong to the definition.
            let start = if run.is_some() {
                attached_start(&children, i)
            } else {
                child.start_position().row
            };
            // Take those rows back from the leftover run.
            if let Some((rs, _)) = run {
                if start <= rs {
                    run = None;
                } else {
                    run = Some((rs, start - 1));
                }
            }
            self.flush(&mut run, parents);
            let owner = (self.spec.owner)(inner, self.src);
            let mut path = parents.to_vec();
            if let Some(r) = &owner
                && path.last() != Some(r)
            {
                path.push(r.clone());
            }
            self.definition(inner, start, end_row(child), kind, name, trait_, &path);
            def_end = Some(end_row(child));
            i += 1;
        }
        self.flush(&mut run, parents);
    }

    fn flush(&mut self, run: &mut Option<(usize, usize)>, parents: &[String]) {
        let Some((s, e)) = run.take() else { return };
        // A node may end past the last line (C's `\` continuing the last
        // line into the end of the file): the run stops at the text's end.
        let e = e.min(self.lines.len().saturating_sub(1));
        if self.lines.is_empty() || s > e {
            return;
        }
        let text = self.lines[s..=e].join("\n");
        if text.trim().len() < TINY_CHARS {
            return; // closing braces, a lone `pass`
        }
        let mut heading = vec![self.path.to_string()];
        heading.extend(parents.iter().cloned());
        let chunks = windows(self.path, &self.lines, s, e + 1, heading, self.opts);
        let owner = parents.last().cloned();
        for c in chunks {
            self.push(c, owner.clone());
        }
    }

    /// Chunk `i` made to start at row `start` (0-based), lines unchanged
    /// after it.
    fn extend_back(&mut self, i: usize, start: usize) {
        let c = &self.doc.chunks[i];
        let row = c.start_line as usize - 1;
        if start >= row {
            return;
        }
        let end = (c.end_line as usize).min(self.lines.len());
        let text = self.lines[start..end].join("\n");
        let heading = c.heading_path.clone();
        let level = c.level;
        self.doc.chunks[i] = Chunk::new(
            self.path,
            heading,
            level,
            start as u32 + 1,
            c.end_line,
            text,
        );
    }

    /// Adds a chunk; one with the lines (so the id) of a chunk already
    /// there (two definitions on one line) is that chunk.
    fn push(&mut self, chunk: Chunk, owner: Option<String>) -> usize {
        if let Some(i) = self.doc.chunks.iter().rposition(|c| c.id == chunk.id) {
            return i;
        }
        self.doc.chunks.push(chunk);
        self.owners.push(owner);
        self.doc.chunks.len() - 1
    }

    #[allow(clippy::too_many_arguments)]
    fn definition(
        &mut self,
        node: Node<'_>,
        start: usize,
        end: usize,
        kind: &'static str,
        name: String,
        trait_: Option<String>,
        parents: &[String],
    ) {
        // Its members are `member_of` it, whatever its name.
        if always_node(kind, parents.last().map(String::as_str)) {
            self.defined.insert(name.clone());
        }
        let end = end.min(self.lines.len().saturating_sub(1));
        let start = start.min(end);
        let mut heading = vec![self.path.to_string()];
        heading.extend(parents.iter().cloned());
        // A member (method) is named by its signature, so that a question
        // about what it takes or returns meets it, not its type's header.
        heading.push(match self.member_signature(node, parents) {
            Some(sig) => sig,
            None => name.clone(),
        });
        let size: usize = self.lines[start..=end.min(self.lines.len() - 1)]
            .iter()
            .map(|l| l.len() + 1)
            .sum();
        let body = (self.spec.body)(node);
        let first;
        // A type with two members or more is cut into its header and its
        // members even when it would fit in one chunk: a method is found as
        // itself (`Point > norm`), and `merge_small` joins members too small
        // to stand alone. A type with one member stays whole.
        let two_members = |b: Node<'_>| {
            let mut cursor = b.walk();
            b.named_children(&mut cursor)
                .filter(|m| {
                    let m = self.unwrap_def(*m);
                    self.def_kind(m).is_some() && self.def_name(m).is_some()
                })
                .nth(1)
                .is_some()
        };
        let whole = size <= self.opts.max_chars
            && !body.is_some_and(|b| self.is_container(node) && two_members(b));
        if whole || body.is_none() {
            let text = self.lines[start..=end].join("\n");
            let level = heading.len().min(6) as u8;
            first = self.push(
                Chunk::new(
                    self.path,
                    heading,
                    level,
                    start as u32 + 1,
                    end as u32 + 1,
                    text,
                ),
                Some(name.clone()),
            );
            // Members of a container kept whole are still its symbols, and
            // so are theirs (`module A; module B; class C; def d`: a small
            // Ruby file kept whole defines C and d, not only A).
            if let Some(body) = body
                && self.is_container(node)
            {
                self.members_of_whole(body, first, &name, 0);
            }
        } else if let Some(body) = body
            && self.is_container(node)
        {
            // Header (signature, fields up to the first member), then members.
            let mut cursor = body.walk();
            let members: Vec<Node<'_>> = body.named_children(&mut cursor).collect();
            // A transparent group (Ruby's `class << self`, a namespace, an
            // `#ifdef`) holds members too: the header ends before it, or
            // the header would swallow its methods (tzinfo's `Timezone` was
            // one 200-line header, its class methods no definitions).
            let first_member = members
                .iter()
                .position(|m| {
                    let m = self.unwrap_def(*m);
                    self.def_kind(m).is_some() || self.spec.transparent.contains(&m.kind())
                })
                .map_or(end + 1, |i| attached_start(&members, i));
            let header_end = first_member.saturating_sub(1).max(start);
            let text = self.lines[start..=header_end].join("\n");
            let level = heading.len().min(6) as u8;
            // A header that is only `impl Foo {` or `class Foo(Base):` is no
            // chunk of its own: it opens its first member's chunk, which
            // gets the type's links (its bases on that line included).
            let tiny = first_member > start && text.trim().len() < TINY_CHARS;
            let header = Chunk::new(
                self.path,
                heading,
                level,
                start as u32 + 1,
                header_end as u32 + 1,
                text,
            );
            let before = self.doc.chunks.len();
            let mut inner = parents.to_vec();
            inner.push(name.clone());
            if tiny {
                self.block(body, &inner, first_member);
                first = if self.doc.chunks.len() > before {
                    self.extend_back(before, start);
                    before
                } else {
                    self.push(header, Some(name.clone()))
                };
            } else {
                first = self.push(header, Some(name.clone()));
                self.block(body, &inner, first_member);
            }
        } else {
            let parts = self.split_body(node, start, end, &heading, &name);
            // The part that holds the signature defines the name: a method
            // under an 80-line doc comment (tzinfo's `local_datetime`) is
            // split with its comment first, and the name's question asks for
            // the `def` line.
            let row = node.start_position().row as u32 + 1;
            first = (parts..self.doc.chunks.len())
                .find(|&i| {
                    let c = &self.doc.chunks[i];
                    c.start_line <= row && row <= c.end_line
                })
                .unwrap_or(parts);
        }
        let hidden = (self.spec.hidden)(node, self.src);
        self.symbol(
            name.clone(),
            kind,
            first,
            parents.last().map(String::as_str),
            hidden,
        );
        if let Some(t) = trait_ {
            self.doc
                .links
                .push(Link::from_chunk(first, t.clone(), Relation::Implements));
            self.doc
                .links
                .push(Link::between(name, t, Relation::Implements));
        }
    }

    /// The definitions inside the body of a container kept whole in chunk
    /// `first`, as symbols of that chunk, members of `parent`; nested
    /// containers' members too, down to a depth of 8.
    fn members_of_whole(&mut self, body: Node<'_>, first: usize, parent: &str, depth: usize) {
        let mut cursor = body.walk();
        let members: Vec<Node<'_>> = body.named_children(&mut cursor).collect();
        for m in members {
            let m = self.unwrap_def(m);
            if depth < 8 && self.spec.transparent.contains(&m.kind()) {
                // `class << self`'s methods are the class's.
                let inner = self.transparent_body(m);
                self.members_of_whole(inner, first, parent, depth + 1);
                continue;
            }
            if let (Some(k), Some((n, _))) = (self.def_kind(m), self.def_name(m)) {
                let hidden = (self.spec.hidden)(m, self.src);
                self.symbol(n.clone(), k, first, Some(parent), hidden);
                if depth < 8
                    && self.is_container(m)
                    && let Some(inner) = (self.spec.body)(m)
                {
                    self.members_of_whole(inner, first, &n, depth + 1);
                }
            }
        }
    }

    /// Whether a name is too common to link on in this file: a type or
    /// top-level function it defines never is.
    fn is_common(&self, name: &str, call: bool) -> bool {
        !self.defined.contains(name) && is_common(self.spec, name, call)
    }

    fn symbol(
        &mut self,
        name: String,
        kind: &'static str,
        chunk: usize,
        parent: Option<&str>,
        hidden: bool,
    ) {
        if always_node(kind, parent) {
            self.defined.insert(name.clone());
        }
        let mut link = Link::from_chunk(chunk, name.clone(), Relation::Defines);
        if self.is_common(&name, false) {
            link.weight = super::NAME_ONLY_DEFINES_WEIGHT;
        } else if hidden {
            link.weight = super::HIDDEN_DEFINES_WEIGHT;
        }
        self.doc.links.push(link);
        if let Some(p) = parent
            && !self.is_common(p, false)
        {
            self.doc
                .links
                .push(Link::from_chunk(chunk, p, Relation::MemberOf));
        }
        self.doc.symbols.push((name, kind, chunk));
    }

    /// `name(params) -> ret` of a function defined inside a type (`parents`
    /// not empty), on one line, without visibility and keywords before the
    /// name; `None` for other definitions.
    fn member_signature(&self, node: Node<'_>, parents: &[String]) -> Option<String> {
        if parents.is_empty() || self.is_container(node) {
            return None;
        }
        let name = node.child_by_field_name("name")?;
        // Lua's `function M.join(…)` and `function M:render(…)`: the
        // signature starts at the function's own name, its table is the
        // breadcrumb's parent already.
        let name = name
            .child_by_field_name("field")
            .or_else(|| name.child_by_field_name("method"))
            .unwrap_or(name);
        let params = node.child_by_field_name("parameters")?;
        let sig_end = node
            .child_by_field_name("body")
            .map_or(params.end_byte(), |b| b.start_byte());
        self.src.get(name.start_byte()..sig_end)?;
        let sig = one_line_without_comments(self.src, node, name.start_byte(), sig_end);
        let sig = sig.trim_end_matches([':', '{', ' ']);
        Some(clip_at_token(sig, 120))
    }

    /// A function too big for one chunk, cut between the statements of its
    /// body; later parts name the signature in their heading path.
    fn split_body(
        &mut self,
        node: Node<'_>,
        start: usize,
        end: usize,
        heading: &[String],
        name: &str,
    ) -> usize {
        let body = (self.spec.body)(node);
        // The signature: everything before the body, on one line.
        let sig_end = body.map_or(node.end_byte(), |b| b.start_byte());
        let signature = one_line_without_comments(self.src, node, node.start_byte(), sig_end);
        let signature = clip_at_token(&signature, 160);
        let mut bounds: Vec<(usize, usize)> = Vec::new(); // statement rows
        if let Some(body) = body {
            let mut cursor = body.walk();
            for s in body.named_children(&mut cursor) {
                bounds.push((s.start_position().row, end_row(s)));
            }
        }
        let mut cont = heading.to_vec();
        if let Some(last) = cont.last_mut() {
            *last = signature;
        }
        let mut pieces: Vec<(usize, usize)> = Vec::new();
        let mut cur_start = start;
        let mut cur_end: Option<usize> = None;
        let mut size = 0usize;
        let lens: Vec<usize> = self.lines.iter().map(|l| l.len() + 1).collect();
        let row_len = |r: usize| lens.get(r).copied().unwrap_or(1);
        for &(s, e) in &bounds {
            let len: usize = (s..=e).map(row_len).sum();
            if let Some(ce) = cur_end
                && size + len > self.opts.max_chars
            {
                pieces.push((cur_start, ce));
                cur_start = ce + 1;
                size = (cur_start..s).map(row_len).sum();
            }
            if cur_end.is_none() {
                size += (cur_start..s).map(row_len).sum::<usize>();
            }
            size += len;
            cur_end = Some(e);
        }
        pieces.push((cur_start, end));
        let mut first = None;
        for (n, &(s, e)) in pieces.iter().enumerate() {
            if s > e {
                continue;
            }
            let h = if n == 0 {
                heading.to_vec()
            } else {
                cont.clone()
            };
            let size: usize = (s..=e).map(row_len).sum();
            let chunks = if size > self.opts.max_chars * 2 {
                windows(self.path, &self.lines, s, e + 1, h, self.opts)
            } else {
                let level = h.len().min(6) as u8;
                vec![Chunk::new(
                    self.path,
                    h,
                    level,
                    s as u32 + 1,
                    e as u32 + 1,
                    self.lines[s..=e].join("\n"),
                )]
            };
            for c in chunks {
                let idx = self.push(c, Some(name.to_string()));
                first.get_or_insert(idx);
            }
        }
        first.unwrap_or(0)
    }

    /// Calls, imports, type references and supertypes, each linked from the
    /// chunk holding its line.
    pub(super) fn references(&mut self, root: Node<'_>) {
        let mut by_row: Vec<Option<usize>> = vec![None; self.lines.len() + 1];
        for (i, c) in self.doc.chunks.iter().enumerate() {
            for r in c.start_line as usize - 1..(c.end_line as usize).min(by_row.len()) {
                by_row[r].get_or_insert(i);
            }
        }
        let spec = self.spec;
        // (row, name, relation, a called function's or method's name)
        let mut found: Vec<(usize, String, Relation, bool)> = Vec::new();
        visit(root, &mut |n| {
            let kind = n.kind();
            let row = n.start_position().row;
            if let Some((_, field)) = spec.calls.iter().find(|(k, _)| *k == kind) {
                if let Some(f) = super::wrapped(n, field)
                    && let Some(name) = callee(f, self.src)
                {
                    let constructor =
                        matches!(kind, "new_expression" | "object_creation_expression");
                    found.push((row, name, Relation::Calls, !constructor));
                }
            } else if kind == "preproc_include" {
                // C's `#include "x.h"` names a header, not identifiers.
                if let Some(header) = super::c::included_header(n, self.src) {
                    found.push((row, header, Relation::Imports, false));
                }
            } else if spec.imports.contains(&kind) {
                visit(n, &mut |m| {
                    // PHP's `use A\B\C;` names are `name`s.
                    if matches!(
                        m.kind(),
                        "identifier"
                            | "type_identifier"
                            | "scoped_identifier"
                            | "name"
                            | "simple_identifier"
                    ) && m.named_child_count() == 0
                    {
                        found.push((
                            row,
                            text_of(m, self.src).to_string(),
                            Relation::Imports,
                            false,
                        ));
                    }
                });
            } else if spec.heritage.iter().any(|(k, parent)| {
                *k == kind && parent.is_none_or(|p| n.parent().is_some_and(|np| np.kind() == p))
            }) {
                visit(n, &mut |m| {
                    // Ruby's supertypes are `constant`s, PHP's `name`s.
                    if matches!(
                        m.kind(),
                        "identifier" | "type_identifier" | "constant" | "name"
                    ) {
                        found.push((
                            row,
                            text_of(m, self.src).to_string(),
                            Relation::Implements,
                            false,
                        ));
                    }
                });
            } else if spec.type_refs.contains(&kind) {
                found.push((row, text_of(n, self.src).to_string(), Relation::Uses, false));
            }
        });
        for (row, name, rel, call) in found {
            if self.is_common(&name, call)
                || !name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_')
            {
                continue;
            }
            let Some(Some(chunk)) = by_row.get(row) else {
                continue;
            };
            if self.owners[*chunk].as_deref() == Some(name.as_str()) {
                continue; // a type naming itself
            }
            self.doc.links.push(Link::from_chunk(*chunk, name, rel));
        }
        self.doc
            .links
            .sort_by(|a, b| (a.chunk, &a.to, &a.rel).cmp(&(b.chunk, &b.to, &b.rel)));
    }
}

/// `src[start..end]` (inside `node`) on one line, its comments left out: a
/// breadcrumb read `def __init__( # noqa: PLR0912, PLR0915 self, …` where
/// the signature has a comment after its parenthesis.
pub(super) fn one_line_without_comments(
    src: &str,
    node: Node<'_>,
    start: usize,
    end: usize,
) -> String {
    let mut comments: Vec<(usize, usize)> = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.end_byte() <= start || n.start_byte() >= end {
            continue;
        }
        if n.kind().contains("comment") {
            comments.push((n.start_byte().max(start), n.end_byte().min(end)));
            continue;
        }
        let mut cursor = n.walk();
        stack.extend(n.children(&mut cursor));
    }
    comments.sort_unstable();
    let mut text = String::new();
    let mut at = start;
    for (a, b) in comments {
        if a > at {
            text.push_str(src.get(at..a).unwrap_or(""));
        }
        text.push(' ');
        at = at.max(b);
    }
    if at < end {
        text.push_str(src.get(at..end).unwrap_or(""));
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` cut to at most `max` characters at a token boundary, with `…`
/// where it was cut: at the last space that leaves at least half of it
/// (`…, highlight: …`), else after the last punctuation, else mid-word (one
/// long word). A breadcrumb cut at `highlight: Optiona` read as a typo.
pub(super) fn clip_at_token(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    // Room for " …".
    let head: String = text.chars().take(max.saturating_sub(2)).collect();
    let next = text[head.len()..].chars().next();
    if next.is_some_and(char::is_whitespace) {
        return format!("{} …", head.trim_end());
    }
    let half = head.len() / 2;
    if let Some(i) = head.rfind(char::is_whitespace).filter(|i| *i >= half) {
        return format!("{} …", head[..i].trim_end());
    }
    let word = |c: char| c.is_alphanumeric() || c == '_';
    match head.rfind(|c: char| !word(c)).filter(|i| *i >= half) {
        Some(i) => {
            let end = i + head[i..].chars().next().map_or(1, char::len_utf8);
            format!("{}…", head[..end].trim_end())
        }
        None => format!("{head}…"),
    }
}

/// The first row of `children[i]` with the comments and attributes right
/// above it (no blank line between).
pub(super) fn attached_start(children: &[Node<'_>], i: usize) -> usize {
    let mut start = children[i].start_position().row;
    for prev in children[..i].iter().rev() {
        // A comment, a Rust attribute, a Haskell haddock or type signature,
        // Elixir's `@doc` and `@spec`, a Julia docstring.
        let is_note = prev.kind().contains("comment")
            || matches!(prev.kind(), "attribute_item" | "haddock" | "signature")
            || super::elixir::is_attribute(*prev)
            || super::julia::is_docstring(*prev);
        if is_note && end_row(*prev) + 1 >= start {
            start = prev.start_position().row;
        } else {
            break;
        }
    }
    start
}

pub(super) fn end_row(node: Node<'_>) -> usize {
    let end = node.end_position();
    // A node ending at column 0 ends on the line before (trailing newline).
    if end.column == 0 && end.row > node.start_position().row {
        end.row - 1
    } else {
        end.row
    }
}

/// The called name in a callee expression: the last identifier of
/// `a.b.c`, `a::b`, `new Foo<T>`.
fn callee(node: Node<'_>, src: &str) -> Option<String> {
    if node.named_child_count() == 0 {
        let t = text_of(node, src);
        return t
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_')
            .then(|| t.to_string());
    }
    for field in ["name", "field", "property", "attribute", "function", "type"] {
        if let Some(f) = node.child_by_field_name(field) {
            return callee(f, src);
        }
    }
    let last = node.named_child(u32::try_from(node.named_child_count().checked_sub(1)?).ok()?)?;
    callee(last, src)
}

/// Depth-first visit of every node under (and including) `node`.
pub(super) fn visit<'t>(node: Node<'t>, f: &mut dyn FnMut(Node<'t>)) {
    visit_where(node, &|_| true, f);
}

/// [`visit`] of the nodes `enter` lets in, the subtrees of the others
/// skipped.
pub(super) fn visit_where<'t>(
    node: Node<'t>,
    enter: &dyn Fn(Node<'t>) -> bool,
    f: &mut dyn FnMut(Node<'t>),
) {
    let mut cursor = node.walk();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if !enter(n) {
            continue;
        }
        f(n);
        let children: Vec<Node<'t>> = n.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
}

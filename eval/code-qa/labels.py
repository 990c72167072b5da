"""The code-QA questions and their labels: the source of queries.jsonl and qrels.tsv.

    python3 eval/code-qa/labels.py eval/code-qa    # after eval/code-qa/fetch

checks that every labelled file exists in corpus/ and every line range lies
inside it, then writes queries.jsonl and qrels.tsv. Each entry is
(query id, question, [(doc-id, lines)]); lines as in README.md ("" = the
whole file). Written by reading the sources, before any search was run.
"""
Q = [
# ---------------- axum 0.7.9 ----------------
("axum_q01", "what happens when a HEAD request arrives at a route that only has a GET handler",
 [("axum/src/routing/method_routing.rs", "1112-1170"), ("axum/src/routing/tests/get_to_head.rs", "")]),
("axum_q02", "what happens if I register two handlers for the same HTTP method on one path",
 [("axum/src/routing/method_routing.rs", "1038-1075"), ("axum/src/routing/path_router.rs", "42-82")]),
("axum_q03", "where is the Allow header of a 405 Method Not Allowed response built",
 [("axum/src/routing/method_routing.rs", "745-752,1167-1195"), ("axum/src/routing/route.rs", "207-217")]),
("axum_q04", "behind a reverse proxy, how does the host extractor work out the hostname of the request",
 [("axum/src/extract/host.rs", "11-77")]),
("axum_q05", "which content types does the JSON body extractor accept, for example is text/json or a +json suffix allowed",
 [("axum/src/json.rs", "117-140,256-277")]),
("axum_q06", "how often are keep-alive comments sent on a server-sent events stream by default",
 [("axum/src/response/sse.rs", "407-460")]),
("axum_q07", "which redirect should I return after a form submission so the browser follows up with a GET",
 [("axum/src/response/redirect.rs", "20-68")]),
("axum_q08", "what does the server do when accepting a TCP connection fails, for example because the process ran out of file descriptors",
 [("axum/src/serve.rs", "465-498")]),
("axum_q09", "how does graceful shutdown stop accepting connections and wait for the open ones to finish",
 [("axum/src/serve.rs", "118-150,359-462")]),
("axum_q10", "which request headers must a client send for a websocket upgrade to be accepted",
 [("axum/src/extract/ws.rs", "385-450")]),
("axum_q11", "if a client offers several websocket subprotocols, which one does the server choose",
 [("axum/src/extract/ws.rs", "201-258")]),
("axum_q12", "what error does a handler get when it asks for a shared value that was never added as a request extension",
 [("axum/src/extension.rs", "73-94")]),
("axum_q13", "in what order do middleware run when I call layer several times, and how does ServiceBuilder change that",
 [("axum/src/docs/middleware", "61-153")]),
("axum_q14", "my authorization middleware turns 404 for unknown paths into 401, how do I run it only for requests that matched a route",
 [("axum/src/docs/routing/route_layer", ""), ("axum/src/routing/path_router.rs", "276-306")]),
("axum_q15", "why must the extractor that consumes the request body be the last argument of a handler",
 [("axum/src/docs/extract", "128-202")]),
("axum_q16", "what is the default size limit for request bodies read by Json, Form or String",
 [("axum/src/docs/extract", "615-621")]),
("axum_q17", "does a router mounted under a prefix see the full request URI or the URI with the prefix stripped",
 [("axum/src/docs/routing/nest", "30-36,63-89")]),
("axum_q18", "how can a handler get the IP address and port of the connected client",
 [("axum/src/docs/routing/into_make_service_with_connect_info", ""), ("axum/src/extract/connect_info.rs", "")]),
("axum_q19", "how are errors from fallible middleware such as a timeout turned into HTTP responses",
 [("axum/src/docs/error_handling", "94-135"), ("axum/src/error_handling/mod.rs", "")]),
("axum_q20", "the compiler says my async function does not implement Handler, how do I find out why",
 [("axum/src/docs/debugging_handler_type_errors", "")]),
("axum_q21", "how do I put the route template like /users/:id rather than the concrete URL into a tracing span",
 [("axum/src/extract/matched_path.rs", "7-82")]),
("axum_q22", "what status code comes back when a URL path parameter cannot be parsed into the expected type",
 [("axum/src/extract/path/mod.rs", "384-397")]),
("axum_q23", "which release added a fallback for requests whose path matches but whose method has no handler",
 [("axum/CHANGELOG", "14-26"), ("axum/src/docs/routing/method_not_allowed_fallback", "")]),
("axum_q24", "for a GET request, where does the url-encoded form extractor take its data from",
 [("axum/src/form.rs", "11-32,83-104"), ("axum/src/extract/raw_form.rs", "40-55")]),
("axum_q25", "does the framework contain any unsafe code",
 [("axum/README", "100-103")]),
# ---------------- rayon 1.10.0 ----------------
("rayon_q01", "how many worker threads are started by default and how can I change the number",
 [("rayon/FAQ", "6-17")]),
("rayon_q02", "how is work balanced between threads, what is work stealing",
 [("rayon/FAQ", "18-40")]),
("rayon_q03", "my code uses Rc and RefCell and does not compile once I parallelize it, what are my options",
 [("rayon/FAQ", "41-195")]),
("rayon_q04", "does it run in parallel when compiled to WebAssembly",
 [("rayon/README", "89-105")]),
("rayon_q05", "how does the unstable parallel sort avoid quadratic time on adversarial or patterned input",
 [("rayon/src/slice/quicksort.rs", "621-665,740-842")]),
("rayon_q06", "how does the stable parallel sort split the slice before merging, and how large are the pieces",
 [("rayon/src/slice/mergesort.rs", "609-755")]),
("rayon_q07", "how is it decided whether a parallel iterator job is split further, and what happens when a job gets stolen",
 [("rayon/src/iter/plumbing/mod.rs", "249-338")]),
("rayon_q08", "I receive items from a channel; how can I process them in parallel, and is their order kept",
 [("rayon/src/iter/par_bridge.rs", "13-56")]),
("rayon_q09", "if one item panics in a parallel for_each, how can I make the other threads stop early",
 [("rayon/src/iter/mod.rs", "1931-1963"), ("rayon/src/iter/panic_fuse.rs", "")]),
("rayon_q10", "how is the first matching element in sequence order found when the search runs in parallel",
 [("rayon/src/iter/find_first_last/mod.rs", "9-58"), ("rayon/src/iter/mod.rs", "1676-1709")]),
("rayon_q11", "when collecting an iterator of known length into a Vec, how are results written straight into the vector's memory",
 [("rayon/src/iter/collect/mod.rs", "67-116"), ("rayon/src/iter/collect/consumer.rs", "")]),
("rayon_q12", "what do the minimum and maximum length settings do to how a parallel iterator is divided into jobs",
 [("rayon/src/iter/mod.rs", "3167-3219"), ("rayon/src/iter/plumbing/mod.rs", "290-338")]),
("rayon_q13", "why does a parallel fold give back several results instead of one, and how is it different from reduce",
 [("rayon/src/iter/mod.rs", "1133-1270")]),
("rayon_q14", "when a string is split for parallel processing, how does it avoid cutting a multi-byte UTF-8 character in half",
 [("rayon/src/str.rs", "22-57")]),
("rayon_q15", "when the number of items is not known in advance, for example after a filter, how are the results gathered into a collection",
 [("rayon/src/iter/extend.rs", "13-82")]),
("rayon_q16", "does iterating an owned HashMap in parallel copy its entries into a temporary buffer first",
 [("rayon/src/collections/mod.rs", "8-22"), ("rayon/src/collections/hash_map.rs", "14-28")]),
("rayon_q17", "why can't I zip a parallel range of u64 with another parallel iterator",
 [("rayon/src/range.rs", "23-43,212-297")]),
("rayon_q18", "in which version did the library gain functions for iterating over tree-like structures",
 [("rayon/RELEASES", "7-25")]),
("rayon_q19", "how can I walk a tree in parallel so that every node is visited before its children",
 [("rayon/src/iter/walk_tree.rs", "104-217")]),
("rayon_q20", "searching a big range for the first match gets no speedup on two threads; which adaptor processes blocks of growing size",
 [("rayon/src/iter/mod.rs", "2462-2488"), ("rayon/src/iter/blocks.rs", "")]),
("rayon_q21", "design notes: what are producers and consumers, and why do some adaptors like zip switch from push to pull mode",
 [("rayon/src/iter/plumbing/README", "53-130")]),
("rayon_q22", "which import brings the parallel iterator methods like par_iter into scope",
 [("rayon/README", "66-86"), ("rayon/src/prelude.rs", "")]),
("rayon_q23", "how can I take a few matching items from anywhere in the iterator, not necessarily the first ones",
 [("rayon/src/iter/mod.rs", "2218-2241"), ("rayon/src/iter/take_any.rs", "")]),
# ---------------- Python-Markdown 3.7 ----------------
("markdown_q01", "if two headings have the same text, how do their anchor ids stay distinct",
 [("markdown/markdown/extensions/toc.py", "53-66")]),
("markdown_q02", "how is heading text turned into an id for the anchor, and what happens to accented letters",
 [("markdown/markdown/extensions/toc.py", "38-50"), ("markdown/docs/extensions/toc", "218-235")]),
("markdown_q03", "how can I put a clickable link symbol next to each heading, and can it go before the heading text",
 [("markdown/docs/extensions/toc", "177-198"), ("markdown/markdown/extensions/toc.py", "318-333")]),
("markdown_q04", "my page template already has h1 and h2, how do I make headings in the document start at h3",
 [("markdown/docs/extensions/toc", "200-216"), ("markdown/markdown/extensions/toc.py", "299-304")]),
("markdown_q05", "how do I give a fenced code block an id and CSS classes",
 [("markdown/docs/extensions/fenced_code_blocks", "76-171")]),
("markdown_q06", "how is raw HTML in the source kept away from Markdown processing and put back at the end",
 [("markdown/markdown/preprocessors.py", "78-91"), ("markdown/markdown/util.py", "215-260"), ("markdown/markdown/postprocessors.py", "69-119")]),
("markdown_q07", "how can I get Markdown inside a div element parsed instead of passed through as raw HTML",
 [("markdown/docs/extensions/md_in_html", "9-67")]),
("markdown_q08", "in which order do registered processors run, and how do I remove a built-in one",
 [("markdown/markdown/util.py", "272-408"), ("markdown/docs/extensions/api", "804-886")]),
("markdown_q09", "how do I add my own inline syntax, for example turning --text-- into a del element",
 [("markdown/docs/extensions/api", "270-398")]),
("markdown_q10", "is the default output XHTML or HTML, and how do I switch",
 [("markdown/docs/reference", "166-175"), ("markdown/markdown/core.py", "279-301")]),
("markdown_q11", "how do I pass settings to an extension that I load by its name as a string",
 [("markdown/docs/reference", "128-165")]),
("markdown_q12", "when an extension is given as a string, how is it found and loaded (entry points or dotted module path)",
 [("markdown/markdown/core.py", "195-246"), ("markdown/docs/extensions/api", "717-803")]),
("markdown_q13", "how do I get German-style typographic quotes, changing what straight quotes are replaced with",
 [("markdown/docs/extensions/smarty", "8-45")]),
("markdown_q14", "which extensions are bundled together in extra",
 [("markdown/docs/extensions/extra", "5-22"), ("markdown/markdown/extensions/extra.py", "")]),
("markdown_q15", "can the command line tool read extension settings from a YAML or JSON file",
 [("markdown/docs/cli", "143-184"), ("markdown/markdown/__main__.py", "25-38,100-113")]),
("markdown_q16", "how do I change the text of the link that goes from a footnote back to where it is referenced",
 [("markdown/docs/extensions/footnotes", "85-97"), ("markdown/markdown/extensions/footnotes.py", "51-61")]),
("markdown_q17", "are email addresses in automatic links obscured from spam harvesters",
 [("markdown/markdown/inlinepatterns.py", "963-989")]),
("markdown_q18", "a numbered list followed by a bulleted list merges into one list, how do I keep them separate",
 [("markdown/docs/extensions/sane_lists", ""), ("markdown/markdown/extensions/sane_lists.py", "")]),
("markdown_q19", "when a code block names no language, does syntax highlighting try to guess it",
 [("markdown/docs/extensions/code_hilite", "153-178"), ("markdown/markdown/extensions/codehilite.py", "146-172")]),
("markdown_q20", "how do I write a unit test that checks that a snippet renders to the expected HTML",
 [("markdown/docs/test_tools", "15-68"), ("markdown/markdown/test_tools.py", "39-90")]),
("markdown_q21", "are tabs in the input expanded, and what happens to Windows line endings",
 [("markdown/markdown/preprocessors.py", "66-75")]),
("markdown_q22", "how does the parser recognise a heading underlined with === or ---",
 [("markdown/markdown/blockprocessors.py", "493-515")]),
("markdown_q23", "underscores inside words like connected_words are not treated as emphasis, how do I get the original reference behaviour back",
 [("markdown/docs/extensions/legacy_em", ""), ("markdown/markdown/extensions/legacy_em.py", "")]),
("markdown_q24", "what keeps deeply nested blockquotes from crashing with a recursion error",
 [("markdown/markdown/util.py", "168-181"), ("markdown/markdown/blockprocessors.py", "284-290")]),
("markdown_q25", "how can I apply a site-wide dictionary of abbreviations to every page without defining them in each document",
 [("markdown/docs/extensions/abbreviations", "45-69"), ("markdown/markdown/extensions/abbr.py", "40-75")]),
]

import json, os, re, sys
root = sys.argv[1]
corpus = os.path.join(root, "corpus")
ids = set()
problems = 0
for qid, text, labels in Q:
    assert qid not in ids, qid; ids.add(qid)
    for doc, lines in labels:
        p = os.path.join(corpus, doc)
        if not os.path.isfile(p):
            p = p + ".md"
        if not os.path.isfile(p):
            print("MISSING", qid, doc); problems += 1; continue
        n = sum(1 for _ in open(p, encoding="utf-8"))
        for r in filter(None, lines.split(",")):
            a, _, b = r.partition("-"); b = b or a
            if not (1 <= int(a) <= int(b) <= n):
                print("RANGE", qid, doc, r, n); problems += 1
if problems:
    sys.exit(1)
with open(os.path.join(root, "queries.jsonl"), "w") as f:
    for qid, text, _ in Q:
        f.write(json.dumps({"id": qid, "text": text}) + "\n")
with open(os.path.join(root, "qrels.tsv"), "w") as f:
    f.write("query-id\tdoc-id\trelevance\tlines\n")
    for qid, _, labels in Q:
        for doc, lines in labels:
            f.write(f"{qid}\t{doc}\t1\t{lines}\n")
from collections import Counter
print(Counter(q[0].split("_q")[0] for q in Q), sum(len(q[2]) for q in Q), "qrels")

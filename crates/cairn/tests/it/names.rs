//! The names retriever end to end: a query that is a name, a path, a
//! module or a traceback brings the definition or file it names, over
//! words that only resemble it.

use cairn::{NoProgress, SearchOptions};
use cairn_core::Retriever;

use crate::{Project, roots};

/// A small Python package in which every name has a rival: a longer name
/// that contains it, a private twin, a doc full of the same word, and a
/// second file with the same name in another folder.
fn package() -> Project {
    let p = Project::new();
    // Each function long enough to be a chunk of its own.
    let body = |name: &str| {
        (0..24)
            .map(|i| format!("    step_{i} = {name}_state[{i}] + {i}\n"))
            .collect::<String>()
    };
    p.write(
        "src/pkg/_config.py",
        &format!(
            "\"\"\"Configuration.\"\"\"\n\n\
             def configure_once(*args):\n    \"\"\"Configure unless configured: configure, configure.\"\"\"\n{}    if not is_configured():\n        configure(*args)\n\n\n\
             def is_configured():\n    \"\"\"Whether configure ran.\"\"\"\n{}    return _CONFIG.configured\n\n\n\
             def configure(processors=None):\n    \"\"\"Set the processors.\"\"\"\n{}    _CONFIG.processors = processors\n",
            body("once"),
            body("is"),
            body("set")
        ),
    );
    p.write(
        "src/pkg/_native.py",
        &format!(
            "def _make_filtering_bound_logger(level):\n    \"\"\"The private twin: make filtering bound logger for a level.\"\"\"\n{}    return level\n\n\n\
             def make_filtering_bound_logger(min_level):\n{}    return _make_filtering_bound_logger(min_level)\n",
            body("twin"),
            body("public")
        ),
    );
    p.write(
        "src/pkg/modeling/separable.py",
        "def separability_matrix(transform):\n    return _cstack(transform)\n\n\n\
         def _cstack(left, right):\n    raise ValueError('shapes')\n",
    );
    p.write(
        "src/pkg/other/separable.py",
        "def unrelated():\n    return 1\n",
    );
    p.write(
        "docs/configuration.md",
        "# Configuration\n\nConfigure the configuration: configuring configures the configured configuration. \
         Call configure once, or configure_once, and make a filtering bound logger.\n",
    );
    p
}

/// Each hit's path and the first line of its text.
fn top(p: &Project, query: &str, opts: &SearchOptions) -> Vec<(String, String)> {
    let e = p.engine();
    e.index(&roots(&p.root()), &NoProgress).unwrap();
    e.search(query, opts)
        .unwrap()
        .into_iter()
        .map(|h| (h.path, h.text.lines().next().unwrap_or("").to_string()))
        .collect()
}

#[test]
fn a_name_puts_its_definition_first_over_longer_names_twins_and_docs() {
    let p = package();
    for (query, path, line) in [
        ("configure", "src/pkg/_config.py", "def configure("),
        (
            "make_filtering_bound_logger",
            "src/pkg/_native.py",
            "def make_filtering_bound_logger(",
        ),
        (
            "`separability_matrix`",
            "src/pkg/modeling/separable.py",
            "def separability_matrix(",
        ),
    ] {
        let hits = top(&p, query, &SearchOptions::default());
        assert_eq!(hits[0].0, path, "{query}: {hits:#?}");
        assert!(hits[0].1.starts_with(line), "{query}: {hits:#?}");
    }
    // Without it, the longer name, the twin or the doc comes first: the
    // test can fail.
    let no = SearchOptions {
        no_names: true,
        ..Default::default()
    };
    let hits = top(&p, "configure", &no);
    assert!(!hits[0].1.starts_with("def configure("), "{hits:#?}");
}

#[test]
fn a_traceback_and_a_module_bring_their_files() {
    let p = package();
    let issue = "separability is wrong for nested models.\n\n```\nTraceback (most recent call last):\n  File \"/home/me/t.py\", line 3, in <module>\n    m()\n  File \"/venv/lib/site-packages/pkg/modeling/separable.py\", line 2, in separability_matrix\n    return _cstack(transform)\nValueError: shapes\n```\n";
    let hits = top(&p, issue, &SearchOptions::default());
    assert_eq!(hits[0].0, "src/pkg/modeling/separable.py", "{hits:#?}");
    let hits = top(
        &p,
        "what does pkg.modeling.separable do",
        &SearchOptions::default(),
    );
    assert_eq!(hits[0].0, "src/pkg/modeling/separable.py", "{hits:#?}");
    let e = p.engine();
    let hit = &e
        .search("look at modeling/separable.py", &SearchOptions::default())
        .unwrap()[0];
    assert_eq!(hit.path, "src/pkg/modeling/separable.py");
    assert!(
        hit.signals.iter().any(|s| s.retriever == Retriever::Names),
        "{:?}",
        hit.signals
    );
}

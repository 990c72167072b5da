//! Memory that knows what replaced what: a memory that says a change
//! replaces the earlier one it changes; recall shows the newest with what it
//! replaced; undoing the newer store makes the older current again.

use cairn::{MemoryInput, RecallOptions};

use crate::Project;

fn decision(text: &str) -> MemoryInput {
    MemoryInput {
        text: text.into(),
        kind: Some("decision".into()),
        ..MemoryInput::default()
    }
}

#[test]
fn a_change_replaces_the_memory_it_changes_and_undo_restores_it() {
    let p = Project::new();
    let e = p.engine();
    let old = e
        .remember(&decision("We use Redis for session caching"))
        .unwrap();
    let old_id = old.memory.memory.id.clone();
    // Unrelated, of the same type and with a word of change: not linked.
    e.remember(&decision(
        "We switched the CI runner to GitHub Actions instead of Jenkins",
    ))
    .unwrap();
    let new = e
        .remember(&decision("We moved session caching to Memcached"))
        .unwrap();
    assert_eq!(new.action, "created", "not merged as a near-duplicate");
    let new_id = new.memory.memory.id.clone();
    assert_eq!(new.memory.memory.supersedes, std::slice::from_ref(&old_id));
    // The link is in the newer file only.
    let file =
        std::fs::read_to_string(p.root().join(format!(".cairn/memory/{new_id}.md"))).unwrap();
    assert!(file.contains(&format!("supersedes:\n- {old_id}")), "{file}");

    let hits = e
        .recall("how are sessions cached", &RecallOptions::default())
        .unwrap();
    assert_eq!(hits[0].memory.memory.id, new_id);
    assert_eq!(hits[0].replaces, std::slice::from_ref(&old_id));
    assert!(hits.iter().all(|h| h.memory.memory.id != old_id));

    // On request the older one is shown, marked and below the newer.
    let shown = e
        .recall(
            "how are sessions cached",
            &RecallOptions {
                show_replaced: true,
                ..RecallOptions::default()
            },
        )
        .unwrap();
    let at = |id: &str| shown.iter().position(|h| h.memory.memory.id == id).unwrap();
    assert!(at(&new_id) < at(&old_id));
    assert_eq!(
        shown[at(&old_id)].superseded_by.as_deref(),
        Some(new_id.as_str())
    );

    // Undo the newer store: the older memory is current again.
    e.undo(Some(&new_id), "test").unwrap();
    let hits = e
        .recall("how are sessions cached", &RecallOptions::default())
        .unwrap();
    assert_eq!(hits[0].memory.memory.id, old_id);
    assert!(hits[0].superseded_by.is_none() && hits[0].replaces.is_empty());
}

#[test]
fn a_named_supersession_must_name_a_memory() {
    let p = Project::new();
    let e = p.engine();
    let err = e
        .remember(&MemoryInput {
            supersedes: vec!["m20200101-nothere".into()],
            ..decision("Deploys go through the release train")
        })
        .unwrap_err()
        .to_string();
    assert!(err.contains("m20200101-nothere"), "{err}");
    let first = e.remember(&decision("Deploys happen on Fridays")).unwrap();
    let id = first.memory.memory.id.clone();
    let second = e
        .remember(&MemoryInput {
            supersedes: vec![id.clone()],
            ..decision("Deploys go through the release train on Tuesdays")
        })
        .unwrap();
    assert_eq!(second.memory.memory.supersedes, [id]);
}

#[test]
fn a_question_naming_a_time_favours_memories_of_that_time() {
    let p = Project::new();
    let e = p.engine();
    for (text, created) in [
        (
            "The deploy checklist gained a database backup step",
            "2024-03-12",
        ),
        (
            "Reviewed the deploy checklist: rollback steps are now tested",
            "2024-06-20",
        ),
    ] {
        e.remember(&MemoryInput {
            created: Some(created.into()),
            ..decision(text)
        })
        .unwrap();
    }
    for (q, want) in [
        (
            "what changed in the deploy checklist in March 2024",
            "2024-03-12",
        ),
        (
            "what changed in the deploy checklist in June 2024",
            "2024-06-20",
        ),
    ] {
        let hits = e.recall(q, &RecallOptions::default()).unwrap();
        assert!(
            hits[0].memory.memory.created.starts_with(want),
            "{q}: {:?}",
            hits[0].memory.memory
        );
        assert!(
            hits[0].terms.iter().any(|t| t.name.starts_with("time")),
            "{q}"
        );
    }
    // `[memory] time_factor = 1` turns it off: no time term.
    let off = Project::with_config("[memory]\ntime_factor = 1.0\n");
    let e = off.engine();
    e.remember(&MemoryInput {
        created: Some("2024-03-12".into()),
        ..decision("The deploy checklist gained a database backup step")
    })
    .unwrap();
    let hits = e
        .recall(
            "the deploy checklist in March 2024",
            &RecallOptions::default(),
        )
        .unwrap();
    assert!(!hits.is_empty());
    assert!(hits[0].terms.iter().all(|t| !t.name.starts_with("time")));
}

#[test]
fn an_event_is_never_replaced_by_words_alone() {
    let p = Project::new();
    let e = p.engine();
    let event = |text: &str| MemoryInput {
        kind: Some("event".into()),
        ..decision(text)
    };
    e.remember(&event("We use Redis for session caching"))
        .unwrap();
    let later = e
        .remember(&event("We moved session caching to Memcached"))
        .unwrap();
    assert!(
        later.memory.memory.supersedes.is_empty(),
        "{:?}",
        later.memory
    );
    // Named, it still links.
    let first = e.remember(&event("The launch is on Monday")).unwrap();
    let named = e
        .remember(&MemoryInput {
            supersedes: vec![first.memory.memory.id.clone()],
            ..event("The launch moved to Tuesday")
        })
        .unwrap();
    assert_eq!(named.memory.memory.supersedes, vec![first.memory.memory.id]);
}

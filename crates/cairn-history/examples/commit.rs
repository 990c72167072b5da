//! Prints what `cairn-history` reads of some commits: subject, files, the
//! lines and definitions each changed.
//!
//! `cargo run -p cairn-history --example commit -- REPO REV...`

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(repo) = args.next() else {
        eprintln!("usage: commit REPO REV...");
        std::process::exit(2);
    };
    let opts = cairn_history::HistoryOptions::default();
    for rev in args {
        match cairn_history::read_commit_at(std::path::Path::new(&repo), &rev, &opts) {
            Ok(Some(c)) => {
                println!("{} {}", c.short(), c.subject);
                for f in &c.files {
                    println!(
                        "  {} {} +{} -{} {:?} {}",
                        f.status,
                        f.path,
                        f.added,
                        f.removed,
                        f.hunks,
                        f.symbols.join(", ")
                    );
                }
            }
            Ok(None) => println!("{rev}: nothing under {repo}"),
            Err(e) => eprintln!("{e}"),
        }
    }
}

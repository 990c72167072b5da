#!/usr/bin/env python3
"""Questions a kind of file answers, before and after cairn indexes it:
hit@1 and hit@5 (a gold file among the first one / five files of `cairn
search -n 20`) with some entries left out of `index.extensions` (before)
and with the default extensions (after).

- Python projects' reStructuredText docs (issue 61, item 8; the default
  set): `rst`, `rest`, `txt` left out, questions.tsv here;
- configuration and build files (issue 63, item 2): `--set configs`, the
  config extensions and names left out, eval/configs/questions.tsv.

questions.tsv: `project  question  gold files (|-separated)`, written from
the files' contents before any search was run. The projects are this
folder's corpus (`fetch`). Each setting's copy of a project lives in
target/<set>/<setting>/<project>.

    eval/rst-docs/fetch
    python3 eval/rst-docs/run.py --cairn target/release/cairn [--set configs]
"""
import argparse
import json
import os
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
SETS = {
    "rst-docs": (HERE / "questions.tsv", ("rst", "rest", "txt")),
    "configs": (
        HERE.parent / "configs" / "questions.tsv",
        ("toml", "ini", "cfg", "yaml", "yml", "mk", "makefile", "gnumakefile", "dockerfile",
         "containerfile", "package.json", "composer.json", "tsconfig.json", "jsconfig.json",
         "deno.json"),
    ),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cairn", default="cairn")
    ap.add_argument("--set", default="rst-docs", choices=sorted(SETS))
    ap.add_argument("--work")
    a = ap.parse_args()
    questions_file, leave_out = SETS[a.set]
    work_root = Path(a.work or HERE.parent.parent / "target" / a.set)
    cairn = os.path.abspath(a.cairn) if os.sep in a.cairn else a.cairn
    env = dict(os.environ, CAIRN_NO_DAEMON="1")
    shown = json.loads(
        subprocess.run([cairn, "config", "show", "--json"], capture_output=True, text=True,
                       check=True, cwd=HERE).stdout)
    default = next(x["value"] for x in shown if x["key"] == "index.extensions")
    before = [e for e in default if e.lower() not in leave_out]
    questions = [l.rstrip("\n").split("\t") for l in open(questions_file) if l.strip()]
    ranks = {}
    for setting in ("before", "after"):
        for project in sorted({p for p, _, _ in questions}):
            work = work_root / setting / project
            if not work.exists():
                shutil.copytree(HERE / "corpus" / project, work)
                # A cairn.toml makes the copy its own project (inside this
                # checkout, the git root would otherwise be cairn's).
                (work / "cairn.toml").write_text(
                    "[index]\nextensions = " + json.dumps(before) + "\n"
                    if setting == "before" else "# the default extensions\n")
                subprocess.run([cairn, "-q", "-C", str(work), "index", str(work)], cwd=work,
                               env=env, check=True)
            for p, q, gold in questions:
                if p != project:
                    continue
                out = subprocess.run([cairn, "-C", str(work), "search", q, "-n", "20", "--json"],
                                     cwd=work,
                                     env=env, capture_output=True, text=True, check=True).stdout
                files = []
                for h in json.loads(out):
                    if h["path"] not in files:
                        files.append(h["path"])
                golds = gold.split("|")
                ranks[(setting, q)] = next(
                    (i + 1 for i, f in enumerate(files) if f in golds), None)
    print("| setting | project | n | hit@1 | hit@5 |")
    print("|---|---|---|---|---|")
    for setting in ("before", "after"):
        for project in sorted({p for p, _, _ in questions}):
            rs = [ranks[(setting, q)] for p, q, _ in questions if p == project]
            h1 = sum(1 for r in rs if r == 1) / len(rs)
            h5 = sum(1 for r in rs if r and r <= 5) / len(rs)
            print(f"| {setting} | {project} | {len(rs)} | {h1:.2f} | {h5:.2f} |")
    for p, q, _ in questions:
        print(f"{p}: {ranks[('before', q)]} -> {ranks[('after', q)]}  {q}")


if __name__ == "__main__":
    main()

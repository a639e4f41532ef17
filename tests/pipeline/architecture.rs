//! The design's rules about the code itself (docs/testing.md, README's layout table), checked on
//! the sources so that they stay true: the crates' layers (a stage never depends on another stage,
//! nothing below the application on clap), no circle between the modules of a crate, no file over
//! 800 lines before its tests, no function over 150 lines, a page one folder of the render crate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::common;

/// Each crate of `pipeline/` (by folder) and the workspace crates it may depend on (its normal
/// dependencies; tests may use more). The layers, top down: app; render; the stages; sim;
/// warehouse; base; the hooks crate beside them. Of the stages only ingest may use the simulator, which it
/// offers as a telemetry source; the anomaly vocabulary every stage shares is in base.
const MAY_DEPEND_ON: &[(&str, &[&str])] = &[
    ("base", &["jobsight-slurm-hooks"]),
    ("warehouse", &["jobsight-base", "jobsight-slurm-hooks"]),
    ("sim", &["jobsight-base", "jobsight-slurm-hooks"]),
    ("ingest", INGEST),
    ("features", STAGE),
    ("rules", STAGE),
    ("model", STAGE),
    ("notify", STAGE),
    ("summary", STAGE),
    ("report", STAGE),
    ("workflow", STAGE),
    ("running", STAGE),
    ("render", RENDER),
];

/// What a stage may depend on: the layers below it, never another stage.
const STAGE: &[&str] = &[
    "jobsight-base",
    "jobsight-slurm-hooks",
    "jobsight-warehouse",
];
/// What the render crate may depend on: the stages whose results it turns into text and the
/// layers below them; not the application, and not the simulator or the stages whose results
/// nobody reads as they are (features feed the rules and models).
const RENDER: &[&str] = &[
    "jobsight-base",
    "jobsight-slurm-hooks",
    "jobsight-warehouse",
    "jobsight-ingest",
    "jobsight-rules",
    "jobsight-model",
    "jobsight-notify",
    "jobsight-summary",
    "jobsight-report",
    "jobsight-workflow",
    "jobsight-running",
];
/// ... and ingest the simulator too: `jobsight simulate` and the demo write a simulated day
/// through it, as a telemetry source.
const INGEST: &[&str] = &[
    "jobsight-base",
    "jobsight-slurm-hooks",
    "jobsight-warehouse",
    "jobsight-sim",
];

fn pipeline_dir() -> PathBuf {
    common::repo().join("pipeline")
}

/// The dependencies of a crate's Cargo.toml in `section` (`dependencies`, `dev-dependencies`),
/// by package name.
fn dependencies(manifest: &Path, section: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    let Some(deps) = doc.get(section).and_then(|d| d.as_table()) else {
        return BTreeSet::new();
    };
    deps.iter()
        .map(|(name, spec)| {
            spec.get("package")
                .and_then(|p| p.as_str())
                .unwrap_or(name)
                .to_string()
        })
        .collect()
}

#[test]
fn every_crate_depends_only_on_the_layers_below_it() {
    let mut folders: Vec<String> = std::fs::read_dir(pipeline_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let listed: Vec<&str> = MAY_DEPEND_ON.iter().map(|(c, _)| *c).collect();
    for folder in &folders {
        assert!(
            folder == "app" || listed.contains(&folder.as_str()),
            "pipeline/{folder} is a crate this test does not know: give it its layer"
        );
    }
    for (folder, allowed) in MAY_DEPEND_ON {
        let manifest = pipeline_dir().join(folder).join("Cargo.toml");
        let deps = dependencies(&manifest, "dependencies");
        // Tests may use more of the workspace, but not another stage: a stage's tests that need
        // two stages' results belong to the application's tests.
        let dev_deps = dependencies(&manifest, "dev-dependencies");
        for (dep, kind) in deps
            .iter()
            .map(|d| (d, "depends"))
            .chain(dev_deps.iter().map(|d| (d, "has a dev-dependency")))
        {
            if dep.starts_with("jobsight") && dep != &format!("jobsight-{folder}") {
                assert!(
                    allowed.contains(&dep.as_str()),
                    "pipeline/{folder} {kind} on {dep}, which is not below it"
                );
            }
        }
        assert!(
            !deps.contains("clap"),
            "pipeline/{folder} depends on clap: only the application reads arguments"
        );
        // Pages, emails and charts are what a person reads: the render crate renders them.
        if *folder != "render" {
            for renderer in ["minijinja", "plotters"] {
                assert!(
                    !deps.contains(renderer),
                    "pipeline/{folder} depends on {renderer}: only the render crate renders what a person reads"
                );
            }
        }
    }
    // The application chooses what to show; the render crate makes the text of it.
    let app = dependencies(
        &pipeline_dir().join("app").join("Cargo.toml"),
        "dependencies",
    );
    for renderer in ["minijinja", "plotters"] {
        assert!(
            !app.contains(renderer),
            "pipeline/app depends on {renderer}: pages, emails and charts are rendered in pipeline/render"
        );
    }
}

/// The Rust files of a crate's `src/`, each with its module path (`a::b`; the root is empty).
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "bin") {
                    stack.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).unwrap().with_extension("");
            let mut module: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                module.last().map(String::as_str),
                Some("lib" | "mod" | "main")
            ) {
                module.pop();
            }
            out.insert(module, path);
        }
    }
    out
}

/// A file's text before its `#[cfg(test)]` module.
fn before_tests(text: &str) -> &str {
    match text.find("\n#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    }
}

/// The paths of a use tree at the start of `s` (`a::b`, `a::{b, c::d}`, `{self, x}`), and how
/// many bytes it took.
fn use_tree(s: &str) -> (Vec<Vec<String>>, usize) {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut prefix = Vec::new();
    let mut at = 0;
    loop {
        let ident: String = s[at..].chars().take_while(|c| is_ident(*c)).collect();
        at += ident.len();
        if !ident.is_empty() {
            prefix.push(ident);
        }
        if s[at..].starts_with("::") {
            at += 2;
            continue;
        }
        if !s[at..].starts_with('{') {
            return (vec![prefix], at);
        }
        at += 1;
        let mut out = Vec::new();
        loop {
            at += s[at..].len() - s[at..].trim_start().len();
            let (paths, used) = use_tree(&s[at..]);
            at += used;
            for path in paths {
                let mut full = prefix.clone();
                full.extend(path.into_iter().filter(|p| p != "self"));
                out.push(full);
            }
            at += s[at..].len() - s[at..].trim_start().len();
            if s[at..].starts_with(',') {
                at += 1;
            } else {
                if s[at..].starts_with('}') {
                    at += 1;
                }
                return (out, at);
            }
        }
    }
}

/// The statements of a file's code before its tests, a `use` spread over lines joined into one.
fn statements(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open_use = false;
    for line in before_tests(text).lines() {
        let line = line.trim();
        if open_use {
            if let Some(last) = out.last_mut() {
                last.push(' ');
                last.push_str(line);
            }
        } else {
            out.push(line.to_string());
        }
        let starts_use = line.starts_with("use ") || line.starts_with("pub(crate) use ");
        if starts_use || open_use {
            open_use = !line.ends_with(';');
        }
    }
    out
}

/// The modules `module` names in its code (not in comments, module declarations or
/// re-exports): `crate::x::...`, `super::x`, in `use` trees too. A module's own ancestors are
/// its interface, not an edge.
fn uses(
    module: &[String],
    text: &str,
    known: &BTreeMap<Vec<String>, PathBuf>,
) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    let skipped = [
        "//",
        "mod ",
        "pub mod ",
        "pub(crate) mod ",
        "pub use ",
        "pub(crate) use ",
        "#[",
    ];
    for line in statements(text) {
        if skipped.iter().any(|p| line.starts_with(p)) {
            continue;
        }
        let mut rest = line.as_str();
        while let Some(i) = ["crate::", "super::"]
            .iter()
            .filter_map(|p| rest.find(p))
            .min()
        {
            let preceded =
                i > 0 && rest[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':');
            let mut tail = &rest[i..];
            let mut base: Option<Vec<String>> = None;
            if let Some(t) = tail.strip_prefix("crate::") {
                base = Some(Vec::new());
                tail = t;
            } else {
                let mut ups = 0;
                while let Some(t) = tail.strip_prefix("super::") {
                    ups += 1;
                    tail = t;
                }
                if ups <= module.len() {
                    base = Some(module[..module.len() - ups].to_vec());
                }
            }
            let (paths, used) = use_tree(tail);
            rest = &tail[used..];
            let Some(base) = base.filter(|_| !preceded) else {
                continue;
            };
            for path in paths {
                let mut full = base.clone();
                full.extend(path);
                if let Some(target) = (0..=full.len())
                    .rev()
                    .map(|k| full[..k].to_vec())
                    .find(|p| known.contains_key(p))
                {
                    out.insert(target);
                }
            }
        }
    }
    // Ancestors (the module's interface) and the module itself are not edges.
    out.retain(|t| !module.starts_with(t));
    out
}

/// The circles (strongly connected components of two or more modules) of a graph.
fn circles(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    // Modules that reach each other are one circle: reachability by a walk from each module.
    let reach = |from: &Vec<String>| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(m) = stack.pop() {
            for next in edges.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&Vec<String>, BTreeSet<Vec<String>>> =
        edges.keys().map(|m| (m, reach(m))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for (m, from_m) in &reachable {
        if !from_m.contains(*m) {
            continue;
        }
        let mut circle: Vec<String> = from_m
            .iter()
            .filter(|other| reachable[other].contains(*m))
            .map(|p| p.join("::"))
            .collect();
        circle.sort();
        if !out.contains(&circle) {
            out.push(circle);
        }
    }
    out
}

fn crate_sources() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(pipeline_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    out.push(common::repo().join("slurm-hooks/src"));
    out.sort();
    out
}

#[test]
fn no_crate_has_a_circle_between_its_modules() {
    let mut found = Vec::new();
    for src in crate_sources() {
        let known = modules(&src);
        let edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = known
            .iter()
            .map(|(m, path)| {
                let text = std::fs::read_to_string(path).unwrap();
                (m.clone(), uses(m, &text, &known))
            })
            .collect();
        for circle in circles(&edges) {
            found.push(format!("{}: {}", src.display(), circle.join(" <-> ")));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

/// The circle finder finds a circle, and not a parent using its child.
#[test]
fn the_circle_finder_finds_circles() {
    let known: BTreeMap<Vec<String>, PathBuf> =
        [vec![], vec!["a".to_string()], vec!["b".to_string()]]
            .into_iter()
            .map(|m| (m, PathBuf::new()))
            .collect();
    let a = uses(
        &["a".to_string()],
        "use crate::b::Thing;\nuse super::Root;",
        &known,
    );
    let b = uses(
        &["b".to_string()],
        "use super::{\n    a::{self, f},\n};",
        &known,
    );
    let root = uses(&[], "pub use a::f;\nfn g() { crate::a::f() }", &known);
    assert_eq!(a, BTreeSet::from([vec!["b".to_string()]]));
    assert_eq!(b, BTreeSet::from([vec!["a".to_string()]]));
    let edges = BTreeMap::from([
        (vec!["a".to_string()], a),
        (vec!["b".to_string()], b),
        (vec![], root),
    ]);
    assert_eq!(
        circles(&edges),
        vec![vec!["a".to_string(), "b".to_string()]]
    );
}

/// Functions of `text` (before its tests) of more than `limit` lines: a line `fn name(` opens one
/// at some indentation, and the first line `}` at that indentation closes it.
fn long_functions(text: &str, limit: usize) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = before_tests(text).lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let signature = trimmed
            .trim_start_matches("pub ")
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub(super) ")
            .trim_start_matches("async ")
            .trim_start_matches("const ");
        if let Some(rest) = signature.strip_prefix("fn ") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let closing = format!("{}}}", " ".repeat(indent));
            if let Some(end) = (i..lines.len()).find(|&j| lines[j] == closing) {
                let length = end - i + 1;
                if length > limit {
                    out.push((i + 1, name, length));
                }
                i = end + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

#[test]
fn no_file_over_800_lines_and_no_function_over_150() {
    let mut too_long = Vec::new();
    for src in crate_sources() {
        for path in modules(&src).values() {
            let text = std::fs::read_to_string(path).unwrap();
            let lines = before_tests(&text).lines().count();
            if lines > 800 {
                too_long.push(format!(
                    "{}: {lines} lines before its tests",
                    path.display()
                ));
            }
            for (line, name, length) in long_functions(&text, 150) {
                too_long.push(format!(
                    "{}:{line}: fn {name} has {length} lines",
                    path.display()
                ));
            }
        }
    }
    assert!(too_long.is_empty(), "too long:\n{}", too_long.join("\n"));
}

#[test]
fn the_length_check_measures_functions() {
    let body = "    x();\n".repeat(151);
    let text = format!("fn short() {{\n}}\n\npub fn long() {{\n{body}}}\n");
    assert_eq!(
        long_functions(&text, 150),
        vec![(4, "long".to_string(), 153)]
    );
}

/// The README is an introduction (issue 67): under 1,500 words, the status in docs/status.md;
/// and every relative link of the README and docs/ lands on a file of the repository.
#[test]
fn the_readme_is_short_and_every_docs_link_lands() {
    let top = pipeline_dir().parent().unwrap().to_path_buf();
    let readme = std::fs::read_to_string(top.join("README.md")).unwrap();
    let words = readme.split_whitespace().count();
    assert!(words < 1_500, "README.md has {words} words");
    assert!(
        readme.contains("docs/status.md"),
        "the README points at the status page"
    );
    let mut pages = vec![top.join("README.md")];
    pages.extend(
        std::fs::read_dir(top.join("docs"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md")),
    );
    let mut broken = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for link in text.split("](").skip(1) {
            let target = link.split(')').next().unwrap_or_default();
            let path = target.split('#').next().unwrap_or_default();
            if path.is_empty() || path.contains("://") || path.starts_with("mailto:") {
                continue;
            }
            if !page.parent().unwrap().join(path).exists() {
                broken.push(format!("{}: {target}", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "{broken:#?}");
}

/// A page is one folder of the render crate (issue 71): `pipeline/render/src/pages/<page>/` has
/// its `mod.rs`, which declares the page's `PAGE` with the template beside it (`<page>.html`),
/// and `pages/mod.rs` declares the module and lists it in `PAGES`. The render crate has no other
/// HTML template but the layout every page extends (`pages/base.html`) and the emails' (in
/// `src/email/templates/`).
#[test]
fn every_page_is_one_folder_of_the_render_crate() {
    let pages = pipeline_dir().join("render/src/pages");
    let registry = std::fs::read_to_string(pages.join("mod.rs")).unwrap();
    let registry = before_tests(&registry);
    let mut folders = Vec::new();
    let mut wrong = Vec::new();
    for entry in std::fs::read_dir(&pages).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        if path.is_file() {
            if path.extension().is_some_and(|e| e == "html") && name != "base.html" {
                wrong.push(format!("{name}: a page template outside its page's folder"));
            }
            continue;
        }
        if name == "snapshots" {
            continue;
        }
        folders.push(name.clone());
        let Ok(code) = std::fs::read_to_string(path.join("mod.rs")) else {
            wrong.push(format!("{name}/: no mod.rs"));
            continue;
        };
        if !path.join(format!("{name}.html")).is_file() {
            wrong.push(format!("{name}/: no {name}.html"));
        }
        if !code.contains(&format!("include_str!(\"{name}.html\")"))
            || !code.contains(&format!("template: \"{name}.html\""))
            || !code.contains("const PAGE: Page")
        {
            wrong.push(format!(
                "{name}/mod.rs: no PAGE of template \"{name}.html\" with include_str!"
            ));
        }
        // Declared (public only where the application calls into the page), and listed.
        let declared = registry.lines().any(|l| {
            ["mod", "pub(crate) mod", "pub mod"]
                .iter()
                .any(|m| l.trim() == format!("{m} {name};"))
        });
        if !declared {
            wrong.push(format!(
                "{name}: not declared in pages/mod.rs (mod {name};)"
            ));
        }
        if !registry.contains(&format!("{name}::PAGE,")) {
            wrong.push(format!(
                "{name}: not listed in PAGES in pages/mod.rs ({name}::PAGE,)"
            ));
        }
        for other in std::fs::read_dir(&path).unwrap().flatten() {
            let file = other.file_name().to_string_lossy().to_string();
            if file.ends_with(".html") && file != format!("{name}.html") {
                wrong.push(format!("{name}/{file}: a second page in one folder"));
            }
        }
    }
    // Anywhere else in the crate: only the layout and the emails' templates.
    let render = pipeline_dir().join("render");
    let mut stack = vec![render.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "html") {
                let folder = path.parent().unwrap();
                let in_a_page = folder.parent() == Some(pages.as_path());
                let allowed = in_a_page
                    || path == pages.join("base.html")
                    || folder == render.join("src/email/templates");
                if !allowed {
                    wrong.push(format!("{}: a template outside its place", path.display()));
                }
            }
        }
    }
    let listed = registry.matches("::PAGE,").count();
    if listed != folders.len() {
        wrong.push(format!(
            "PAGES lists {listed} pages, there are {} folders",
            folders.len()
        ));
    }
    assert!(folders.len() >= 9, "{folders:?}");
    assert!(wrong.is_empty(), "{wrong:#?}");
}

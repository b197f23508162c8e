//! The generated parameter reference (`docs/config-reference.md`), rendered
//! from the parameter table so it can never disagree with the parser.

use crate::params::{self, IndexKind, ObjectIndex, Shape};

/// The whole parameter table as Markdown.
pub fn reference_markdown() -> String {
    let mut md = String::new();
    md.push_str("# moab.cfg parameter reference\n\n");
    md.push_str(
        "Generated from the parameter table in `crates/arches-config` (`arches_config::reference_markdown`); \
         do not edit by hand.\n\n",
    );
    md.push_str(
        "Syntax: `PARAM value` or `PARAM[index] ATTR=VALUE ...`, one per line; names are case-insensitive; \
         `#` starts a comment; a trailing `\\` continues a line. Durations are `[[[DD:]HH:]MM:]SS`. \
         Unknown names are warnings; invalid values are errors.\n\n",
    );
    md.push_str("## Parameters\n\n");
    md.push_str("| Parameter | Type | Default | Index | Used by | Description |\n");
    md.push_str("|---|---|---|---|---|---|\n");
    for p in params::all() {
        let Shape::Scalar { ty, index, .. } = &p.shape else {
            continue;
        };
        let mut name = format!("`{}`", p.name);
        if !p.aliases.is_empty() {
            name.push_str(&format!(" (alias {})", p.aliases.join(", ")));
        }
        let index = match index {
            IndexKind::None => "—",
            IndexKind::Partition => "partition",
            IndexKind::Bucket => "bucket 0–15",
        };
        md.push_str(&format!(
            "| {name} | {} | {} | {index} | {} | {} |\n",
            cell(&ty.describe()),
            default_cell(p.default),
            cell(p.used_by),
            cell(&with_ignored(p.doc, ty))
        ));
    }
    md.push_str("\n## Objects\n");
    for p in params::all() {
        let Shape::Object { index, attrs } = &p.shape else {
            continue;
        };
        let form = match index {
            ObjectIndex::Name => format!("{}[<name>]", p.name),
            ObjectIndex::OptionalName => format!("{}[<name>] (or {} alone)", p.name, p.name),
            ObjectIndex::Level => format!("{}[1..5]", p.name),
        };
        md.push_str(&format!(
            "\n### `{form}`\n\n{} Used by: {}.\n\n",
            p.doc, p.used_by
        ));
        md.push_str("| Attribute | Type | Default | Description |\n|---|---|---|---|\n");
        for a in attrs.iter() {
            let mut name = format!("`{}`", a.name);
            if !a.aliases.is_empty() {
                name.push_str(&format!(" (alias {})", a.aliases.join(", ")));
            }
            md.push_str(&format!(
                "| {name} | {} | {} | {} |\n",
                cell(&a.ty.describe()),
                default_cell(a.default),
                cell(&with_ignored(a.doc, &a.ty))
            ));
        }
    }
    md
}

/// The doc plus the Moab values that are accepted but ignored, if any.
fn with_ignored(doc: &str, ty: &crate::value::ValueType) -> String {
    match ty.unsupported() {
        [] => doc.to_string(),
        words => format!(
            "{doc} Moab values accepted and ignored: {}.",
            words.join(", ")
        ),
    }
}

fn default_cell(d: Option<&str>) -> String {
    match d {
        Some(d) => format!("`{}`", d.replace('|', "\\|")),
        None => "unset".to_string(),
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_lists_every_parameter_and_attribute() {
        let md = reference_markdown();
        for p in params::all() {
            assert!(md.contains(&format!("`{}", p.name)), "{} missing", p.name);
            if let Shape::Object { attrs, .. } = &p.shape {
                for a in attrs.iter() {
                    assert!(
                        md.contains(&format!("| `{}`", a.name)),
                        "{} missing",
                        a.name
                    );
                }
            }
        }
        assert!(md.contains("| `JOBCPURGETIME` | duration"), "{md}");
        assert!(md.contains("`PRIORITY\\|SHORTESTPREDICTEDFIRST\\|WIDESTWINDOWFIRST`"));
    }
}

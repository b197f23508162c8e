//! Reading never panics: random text, random mixes of real parameter names
//! with random values, and random runtime changes all end in diagnostics.

use arches_config::{check, params, parse, Config, Verbosity};
use proptest::prelude::*;

/// Real names, indices and attributes mixed with noise.
fn config_line() -> impl Strategy<Value = String> {
    let names: Vec<String> = params::all().map(|p| p.name.to_string()).collect();
    (
        proptest::sample::select(names),
        proptest::option::of("[A-Za-z0-9\\[\\]]{0,6}"),
        proptest::collection::vec(
            "[A-Za-z.]{0,10}=?[-0-9A-Za-z:,%&\"'#\\\\\\[\\]. ]{0,12}",
            0..4,
        ),
    )
        .prop_map(|(name, index, rest)| {
            let head = match index {
                Some(i) => format!("{name}[{i}]"),
                None => name,
            };
            format!("{head} {}", rest.join(" "))
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,400}") {
        let p = parse(&text, "fuzz.cfg");
        for d in &p.diagnostics {
            prop_assert!(d.to_string().starts_with("fuzz.cfg:"));
        }
        let report = check(&text, "fuzz.cfg", Verbosity::Verbose);
        prop_assert_eq!(report.ok(), !p.has_errors());
    }

    #[test]
    fn plausible_lines_never_panic(lines in proptest::collection::vec(config_line(), 0..20)) {
        let text = lines.join("\n");
        let p = parse(&text, "fuzz.cfg");
        let _ = p.config.effective();
        let mut c = Config::embedded_default("h", 2, 100);
        for l in &lines {
            let before = c.clone();
            if c.apply_line(l).is_err() {
                prop_assert_eq!(&c, &before);
            }
        }
    }
}

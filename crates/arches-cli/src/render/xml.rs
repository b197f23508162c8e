//! Minimal writer for Moab's one-line XML: attribute-only elements, attributes
//! in ASCII order, values escaped.

use std::collections::BTreeMap;

/// An XML element with sorted attributes and children.
#[derive(Debug, Clone, Default)]
pub struct Element {
    name: String,
    attrs: BTreeMap<String, String>,
    text: Option<String>,
    children: Vec<Element>,
    /// Write `<x ...></x>` instead of `<x .../>` when empty.
    explicit_close: bool,
}

impl Element {
    /// A new element called `name`.
    pub fn new(name: &str) -> Element {
        Element {
            name: name.to_string(),
            ..Element::default()
        }
    }

    /// Sets an attribute (later calls replace earlier ones).
    pub fn attr(mut self, key: &str, value: impl ToString) -> Element {
        self.attrs.insert(key.to_string(), value.to_string());
        self
    }

    /// Sets an attribute only when the value is present.
    pub fn attr_opt<T: ToString>(self, key: &str, value: Option<T>) -> Element {
        match value {
            Some(v) => self.attr(key, v),
            None => self,
        }
    }

    /// Sets the text content.
    pub fn text(mut self, text: &str) -> Element {
        self.text = Some(text.to_string());
        self
    }

    /// Appends a child.
    pub fn child(mut self, child: Element) -> Element {
        self.children.push(child);
        self
    }

    /// Appends a child in place.
    pub fn push(&mut self, child: Element) {
        self.children.push(child);
    }

    /// Always write an explicit closing tag.
    pub fn explicit_close(mut self) -> Element {
        self.explicit_close = true;
        self
    }

    /// The element's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// An attribute's value.
    pub fn attribute(&self, key: &str) -> Option<&str> {
        self.attrs.get(key).map(String::as_str)
    }

    /// The attributes, in ASCII order.
    pub fn attributes(&self) -> impl Iterator<Item = (&str, &str)> {
        self.attrs.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The children, in order.
    pub fn children(&self) -> &[Element] {
        &self.children
    }

    /// Serialises the element on one line.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        out.push('<');
        out.push_str(&self.name);
        for (k, v) in &self.attrs {
            out.push(' ');
            out.push_str(k);
            out.push_str("=\"");
            out.push_str(&escape(v));
            out.push('"');
        }
        if self.children.is_empty() && self.text.is_none() && !self.explicit_close {
            out.push_str("/>");
            return;
        }
        out.push('>');
        if let Some(t) = &self.text {
            out.push_str(&escape(t));
        }
        for c in &self.children {
            c.write(out);
        }
        out.push_str("</");
        out.push_str(&self.name);
        out.push('>');
    }
}

/// Escapes `& < > " '` for attribute values and text.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_sorted_ascii_and_escaped() {
        let e = Element::new("job")
            .attr("index", 0)
            .attr("User", "x")
            .attr("ReqNodeMem", ">=0");
        assert_eq!(
            e.render(),
            r#"<job ReqNodeMem="&gt;=0" User="x" index="0"/>"#
        );
        let n = Element::new("node").attr("NODEID", "n1").explicit_close();
        assert_eq!(n.render(), r#"<node NODEID="n1"></node>"#);
        let d = Element::new("Data").child(Element::new("Object").text("queue"));
        assert_eq!(d.render(), "<Data><Object>queue</Object></Data>");
    }
}

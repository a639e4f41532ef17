//! Lossless storage of bytes that a job controls.
//!
//! Slurm passes job names, working directories and account strings to the epilog as raw bytes:
//! a user can put newlines, terminal escape sequences or invalid UTF-8 into them. [`Text`] keeps
//! those bytes exactly. In JSON it is a plain string when the bytes are valid UTF-8 (JSON escaping
//! then makes newlines and control characters harmless) and `{"b64": "..."}` otherwise, so no byte
//! is ever replaced or dropped. For people, [`Text::escaped`] gives a one-line, printable form.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Bytes from an untrusted source (a Slurm environment variable, a job script), kept verbatim.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Text(Vec<u8>);

impl Text {
    pub fn from_bytes(bytes: impl Into<Vec<u8>>) -> Self {
        Text(bytes.into())
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The text as UTF-8, or `None` when the original bytes are not valid UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn to_os_string(&self) -> OsString {
        OsString::from_vec(self.0.clone())
    }

    /// A single-line, printable rendering for terminals and logs: control characters, backslashes
    /// and invalid UTF-8 become escapes (`\n`, `\x1b`, `\\`), so a job name cannot forge extra
    /// output lines or drive the terminal. Different inputs can never render the same way.
    pub fn escaped(&self) -> String {
        let mut out = String::with_capacity(self.0.len());
        for chunk in self.0.utf8_chunks() {
            for c in chunk.valid().chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if c.is_control() || is_bidi_control(c) => {
                        // Control characters (C0, DEL, C1) and the bidirectional controls as
                        // \u{..}: never interpreted.
                        out.push_str(&format!("\\u{{{:x}}}", c as u32));
                    }
                    c => out.push(c),
                }
            }
            for b in chunk.invalid() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        }
        out
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Self {
        Text(s.as_bytes().to_vec())
    }
}

impl From<&OsStr> for Text {
    fn from(s: &OsStr) -> Self {
        Text(s.as_bytes().to_vec())
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Text(\"{}\")", self.escaped())
    }
}

impl fmt::Display for Text {
    /// Always the escaped form: displaying untrusted bytes raw is never what a caller wants.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.escaped())
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.as_str() {
            Some(s) => serializer.serialize_str(s),
            None => {
                use serde::ser::SerializeMap;
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("b64", &BASE64.encode(&self.0))?;
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(r#"a string or {"b64": "<base64 bytes>"}"#)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(Text::from(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Text, A::Error> {
                let mut encoded: Option<String> = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key != "b64" {
                        return Err(de::Error::unknown_field(&key, &["b64"]));
                    }
                    if encoded.is_some() {
                        return Err(de::Error::duplicate_field("b64"));
                    }
                    encoded = Some(map.next_value()?);
                }
                let encoded = encoded.ok_or_else(|| de::Error::missing_field("b64"))?;
                let bytes = BASE64
                    .decode(encoded.as_bytes())
                    .map_err(|e| de::Error::custom(format!("invalid base64 in text: {e}")))?;
                Ok(Text(bytes))
            }
        }
        deserializer.deserialize_any(TextVisitor)
    }
}

/// The Unicode bidirectional controls (category Cf, not `char::is_control`'s Cc): they reorder
/// the text around them, so `\u{202e}gnp.exe` reads as `exe.png`. Escaped wherever control
/// characters are.
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

#[cfg(test)]
impl schemars::JsonSchema for Text {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Text".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Bytes from Slurm, kept exactly: a string when they are valid UTF-8, otherwise {\"b64\": standard base64 of the bytes}.",
            "oneOf": [
                { "type": "string" },
                {
                    "type": "object",
                    "properties": { "b64": { "type": "string", "contentEncoding": "base64" } },
                    "required": ["b64"],
                    "additionalProperties": false
                }
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn utf8_is_a_plain_json_string_with_escaped_controls() {
        let t = Text::from("line1\nline2\u{1b}[31m");
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            r#""line1\nline2\u001b[31m""#
        );
    }

    #[test]
    fn invalid_utf8_is_base64() {
        let t = Text::from_bytes(vec![0x66, 0xff, 0x0a]);
        assert_eq!(serde_json::to_string(&t).unwrap(), r#"{"b64":"Zv8K"}"#);
        assert_eq!(t.escaped(), r"f\xff\n");
    }

    #[test]
    fn rejects_unknown_keys_and_bad_base64() {
        assert!(serde_json::from_str::<Text>(r#"{"b64":"Zv8K","x":1}"#).is_err());
        assert!(serde_json::from_str::<Text>(r#"{"b64":"%%%"}"#).is_err());
        assert!(serde_json::from_str::<Text>("12").is_err());
    }

    #[test]
    fn escaped_never_contains_raw_controls() {
        let t = Text::from_bytes(b"a\\b\r\x7f\x00\xc2\x85z".to_vec());
        assert_eq!(t.escaped(), r"a\\b\r\u{7f}\u{0}\u{85}z");
    }

    proptest! {
        #[test]
        fn any_bytes_roundtrip_through_json(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let t = Text::from_bytes(bytes.clone());
            let json = serde_json::to_string(&t).unwrap();
            prop_assert!(!json.contains('\n'));
            let back: Text = serde_json::from_str(&json).unwrap();
            prop_assert_eq!(back.as_bytes(), &bytes[..]);
        }

        #[test]
        fn escaped_is_printable_and_injective(a in proptest::collection::vec(any::<u8>(), 0..32),
                                              b in proptest::collection::vec(any::<u8>(), 0..32)) {
            let (ea, eb) = (Text::from_bytes(a.clone()).escaped(), Text::from_bytes(b.clone()).escaped());
            prop_assert!(!ea.chars().any(char::is_control));
            prop_assert_eq!(a == b, ea == eb);
        }
    }
}

//! One table of names per enumeration that has names (a language, a style, a rule edition):
//! the value's name, its parsing, and the list of accepted names in errors all come from it,
//! so that they cannot drift apart.

/// The names of an enumeration's values, in the order they are listed to people.
pub struct Names<T: 'static> {
    /// What a value is called in an error: "language" gives "unknown language 'x' (...)".
    pub what: &'static str,
    pub table: &'static [(T, &'static str)],
}

impl<T: Copy + PartialEq> Names<T> {
    /// The name of `value` (every value is in its table; the tests check it).
    pub fn name(&self, value: T) -> &'static str {
        self.table
            .iter()
            .find(|(v, _)| *v == value)
            .map_or("", |(_, n)| n)
    }

    /// The value named `s`, or an error listing the accepted names:
    /// "unknown language 'fr' (accepted: appendix-f, de, en, ro, sv)".
    pub fn parse(&self, s: &str) -> Result<T, String> {
        self.find(s).ok_or_else(|| {
            format!(
                "unknown {} '{s}' (accepted: {})",
                self.what,
                self.accepted()
            )
        })
    }

    /// The value named `s`.
    pub fn find(&self, s: &str) -> Option<T> {
        self.table.iter().find(|(_, n)| *n == s).map(|(v, _)| *v)
    }

    /// The accepted names, as errors and help list them: "short, long".
    pub fn accepted(&self) -> String {
        self.names().collect::<Vec<_>>().join(", ")
    }

    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.table.iter().map(|(_, n)| *n)
    }

    pub fn values(&self) -> impl Iterator<Item = T> + '_ {
        self.table.iter().map(|(v, _)| *v)
    }
}

/// Implements `FromStr` and `Display` for an enumeration from its `NAMES` table.
#[macro_export]
macro_rules! named {
    ($t:ty) => {
        impl ::std::str::FromStr for $t {
            type Err = String;
            fn from_str(s: &str) -> Result<$t, String> {
                <$t>::NAMES.parse(s)
            }
        }

        impl ::std::fmt::Display for $t {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(<$t>::NAMES.name(*self))
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Copy, Clone, Debug, PartialEq)]
    enum Side {
        Left,
        Right,
    }

    impl Side {
        const NAMES: Names<Side> = Names {
            what: "side",
            table: &[(Side::Left, "left"), (Side::Right, "right")],
        };
    }

    named!(Side);

    #[test]
    fn names_parse_and_print_from_one_table() {
        assert_eq!("right".parse::<Side>(), Ok(Side::Right));
        assert_eq!(Side::Left.to_string(), "left");
        assert_eq!(
            "up".parse::<Side>().unwrap_err(),
            "unknown side 'up' (accepted: left, right)"
        );
    }
}

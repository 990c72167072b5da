//! Comparing secrets: the HTTP bearer token and the web page's token.

/// Constant-time equality, so a token cannot be guessed byte by byte from
/// how long a refusal takes (only its length shows).
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

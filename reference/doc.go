// Package reference is the core of dsh-lsp: it implements the dsh
// session-reference service (0.1.0-rc.8) byte for byte, without any LSP
// dependency.
//
// It covers dsh-session: URIs, @[label](uri) mentions, candidate discovery,
// surface projection, per-reference byte retention and the untrusted
// "## Referenced sessions" context message. Sessions are read through the
// Source interface; in production that is sessionstore.Indexed, the index of
// a dsh store on disk, which also gives the Catalog snapshot candidate
// queries filter (CatalogSource) and the Index and ChangeTracker a front
// end waits on and refreshes by.
//
// Lone UTF-16 surrogates: a JS string may hold an unpaired surrogate (for
// example a session id decoded from dsh-session:Ilx1ZDgwMHgi). Go strings are
// byte sequences, so this package represents such a code unit in WTF-8: the
// three-byte generalized UTF-8 form of the surrogate code point (U+D800 is
// "\xed\xa0\x80"). The tag-safe encoder writes it back as the lowercase
// escape "\ud800", so every accepted URI round-trips exactly, and its length
// (3 bytes) equals what JS TextEncoder counts for it (U+FFFD).
package reference

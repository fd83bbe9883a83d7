// Package jsjson is dsh-lsp's one JS-JSON package: JSON read and written
// exactly as dsh (Node) reads and writes it.
//
//   - Validation (check.go): CheckObjectTape accepts exactly the objects
//     encoding/json's Valid accepts, in one pass, and records in it the
//     members and elements of the record's nested objects and arrays on
//     a reused tape, so that a reader does not walk them again.
//   - The raw reader (read.go): SkipSpace, Members, Elements,
//     ObjectField and KeyIs walk raw bytes without decoding, for the hot
//     paths (store logs, the projection); String, StrictString and
//     StringLen decode one literal with the one string decoder.
//   - The value reader (value.go): Parse builds a JSON.parse Value, for
//     config, URIs and golden data.
//   - The one UTF-8 repair rule (utf8repair.go): WHATWG maximal subparts,
//     as Node decodes the logs dsh reads.
//   - The writers (write.go): AppendJSString (JSON.stringify's string
//     quoting, tag-safe or not), Quote, QuotedLen, AppendValue (numbers
//     as JS Number#toString writes them), and Object (an
//     object written member by member in insertion order).
//
// Strings are WTF-8: an escaped lone UTF-16 surrogate is kept as its 3-byte
// generalized UTF-8 form (U+D800 is ED A0 80), as a JS string keeps it, and
// the writers write it back as \ud800, so ids survive a round trip.
package jsjson

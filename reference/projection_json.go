package reference

import "github.com/dsh-lsp/dsh-lsp/internal/jsjson"

// The projection hot path reads surface events with package rawjson: event
// data can be megabytes per event and a source log can hold tens of
// thousands of events, while the projection only needs a handful of fields
// (source.kind, source.plugin, content[].type, content[].text,
// envelope.displayContent, message.content). Decoding whole events would
// copy and walk every byte several times; rawjson walks each event once and
// decodes only the strings that end up in the conversation. These short
// names keep the projection code readable; they inline away.

func jsonSkipSpace(b []byte, i int) int { return jsjson.SkipSpace(b, i) }

func jsonMembers(b []byte, fn func(key, value []byte)) error { return jsjson.Members(b, fn) }

func jsonElements(b []byte, fn func(value []byte)) (bool, error) { return jsjson.Elements(b, fn) }

func jsonKeyIs(rawKey []byte, name string) bool { return jsjson.KeyIs(rawKey, name) }

func jsonObjectField(b []byte, name string) []byte { return jsjson.ObjectField(b, name) }

func jsonString(v []byte) (string, bool) { return jsjson.String(v) }

func jsonStringLen(v []byte) (int, bool) { return jsjson.StringLen(v) }

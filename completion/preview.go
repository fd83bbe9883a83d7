package completion

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dsh-lsp/dsh-lsp/lsp/wire"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// Message is one model-visible message of a session, for previews.
type Message = reference.Message

// VisibleMessages returns the conversation dsh would show a referencing
// session: reference.Messages, the snapshot's own projection (so previews
// count what retention counts). A surface the projection refuses (an event
// of an unknown type) previews no message.
func VisibleMessages(surf *reference.Surface) []Message {
	msgs, _ := reference.Messages(surf)
	return msgs
}

// oneLine shortens s to at most n runes on one line (whitespace runs become
// one space, other controls are made visible).
func oneLine(s string, n int) string {
	s = OneLine(strings.Join(strings.Fields(s), " "))
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// Documentation renders a candidate's documentation: id, cwd, created time
// and a short preview (the first and last visible messages).
func Documentation(d ItemData, surf *reference.Surface, markdown bool) wire.MarkupContent {
	// Session text is shown on one line: a hostile id or cwd cannot add
	// lines or fake headings to the documentation.
	id, cwd := OneLine(d.SessionID), "no cwd"
	if d.CWD != nil {
		cwd = OneLine(*d.CWD)
	}
	var b strings.Builder
	msgs := VisibleMessages(surf)
	if markdown {
		fmt.Fprintf(&b, "**%s**\n\n", EscapeMarkdown(VisibleLabel(d.Label)))
		fmt.Fprintf(&b, "- id: %s\n- cwd: %s\n- created: %s\n- messages: %d\n", CodeSpan(id), CodeSpan(cwd), FormatTime(d.CreatedAt), len(msgs))
	} else {
		fmt.Fprintf(&b, "%s\n\nid: %s\ncwd: %s\ncreated: %s\nmessages: %d\n", VisibleLabel(d.Label), id, cwd, FormatTime(d.CreatedAt), len(msgs))
	}
	if len(msgs) > 0 {
		show := msgs
		skipped := 0
		if len(msgs) > 4 {
			show = append(append([]Message{}, msgs[:2]...), msgs[len(msgs)-2:]...)
			skipped = len(msgs) - 4
		}
		for i, m := range show {
			if skipped > 0 && i == 2 {
				fmt.Fprintf(&b, "\n… %d more messages …\n", skipped)
			}
			role := m.Role
			if m.Checkpoint {
				role = "summary"
			}
			line := oneLine(m.Text, 160)
			if markdown {
				fmt.Fprintf(&b, "\n> **%s:** %s\n", role, EscapeMarkdown(line))
			} else {
				fmt.Fprintf(&b, "\n%s: %s\n", role, line)
			}
		}
	}
	kind := "plaintext"
	if markdown {
		kind = "markdown"
	}
	return wire.MarkupContent{Kind: kind, Value: strings.TrimRight(b.String(), "\n")}
}

// EscapeMarkdown backslash-escapes markdown punctuation so that session
// text (titles, messages) shows literally in markdown documentation and
// hovers.
func EscapeMarkdown(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	// Byte by byte: the escaped characters are ASCII, and other bytes are
	// copied as they are, so a lone surrogate (WTF-8) stays itself.
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < utf8.RuneSelf && strings.IndexByte("\\`*_{}[]()#+-.!<>|~", c) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// CodeSpan returns s as a markdown code span that shows it literally, even
// when it contains backticks: the fence is one backtick longer than the
// longest run inside, padded with a space where s starts or ends with a
// backtick (CommonMark §6.1).
func CodeSpan(s string) string {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

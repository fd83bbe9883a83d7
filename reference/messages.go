package reference

// Message is one conversation item of a session as a referencing session
// sees it: an item of the snapshot projection (conformance §8), text
// decoded.
type Message struct {
	// Role is "user" or "assistant".
	Role string
	// Text is the item's text blocks joined with "\n" (never empty).
	Text string
	// Checkpoint marks a compaction summary.
	Checkpoint bool
}

// Messages returns the conversation of surf with the one projection the
// snapshot uses (projectSurface, legacy displayContent rule included), so
// a preview or a hover counts exactly the messages retention counts as
// OriginalMessages. A nil surface has no messages; an event of an unknown
// type is dsh's internal error, as in Retain.
func Messages(surf *Surface) ([]Message, error) {
	if surf == nil {
		return nil, nil
	}
	items, err := projectSurface(surf)
	if err != nil {
		return nil, err
	}
	out := make([]Message, len(items))
	for i := range items {
		out[i] = Message{Role: items[i].role, Text: items[i].text(), Checkpoint: items[i].checkpoint}
	}
	return out, nil
}

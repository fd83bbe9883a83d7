package lsp

import (
	"fmt"
	"strings"

	"github.com/dsh-lsp/dsh-lsp/contentindex"
)

// WrapContentSync makes the content index syncs of s read their source
// through wrap. Call it before Serve.
func WrapContentSync(s *Server, wrap func(contentindex.Source) contentindex.Source) {
	s.contentSyncSource = wrap
}

// QueuedReads returns how many session reads wait for a read slot.
func QueuedReads(s *Server) int { return s.reads.waiting() }

// RegisteredMethods returns the registered requests and notifications.
func RegisteredMethods() (requests, notifications []string) {
	for name, h := range methods {
		// The two kinds are the generic types request and notification.
		if strings.HasPrefix(fmt.Sprintf("%T", h), "lsp.request[") {
			requests = append(requests, name)
		} else {
			notifications = append(notifications, name)
		}
	}
	return requests, notifications
}

// waiting returns how many requests wait for a slot.
func (l *limiter) waiting() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.queued
}

// ReturnedAnswers returns how many pooled answer buffers s got back after
// their responses were written.
func ReturnedAnswers(s *Server) int64 { return s.lent.returned.Load() }

// LentAnswers returns how many answer buffers s has lent and not yet got
// back (nor dropped).
func LentAnswers(s *Server) int {
	s.lent.mu.Lock()
	defer s.lent.mu.Unlock()
	n := 0
	for _, sl := range s.lent.slots {
		if sl.buf != nil {
			n++
		}
	}
	return n
}

package lsp

// QueuedReads returns how many requests wait for a read slot.
func QueuedReads(s *Server) int { return s.reads.waiting() }

// RegisteredMethods returns the registered requests and notifications.
func RegisteredMethods() (requests, notifications []string) {
	for name, h := range methods {
		if h.isRequest() {
			requests = append(requests, name)
		} else {
			notifications = append(notifications, name)
		}
	}
	return requests, notifications
}

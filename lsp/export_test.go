package lsp

// QueuedReads returns how many requests wait for a read slot.
func QueuedReads(s *Server) int { return s.reads.waiting() }

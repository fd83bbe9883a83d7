package lsp

import (
	"encoding/json"

	"go.lsp.dev/protocol"
)

// executeCommand runs a command of executeCommandProvider; dsh.prepare takes
// one argument object (CONTRACT §5).
func (s *Server) executeCommand(p *protocol.ExecuteCommandParams) (prepareSnap, error) {
	switch p.Command {
	case CommandPrepare:
		if len(p.Arguments) != 1 {
			return prepareSnap{}, invalidParams("dsh.prepare takes exactly one argument object, got %d arguments", len(p.Arguments))
		}
		in, err := parsePrepareArgs(json.RawMessage(p.Arguments[0]))
		if err != nil {
			return prepareSnap{}, err
		}
		return s.prepareSnapshot(&in)
	}
	return prepareSnap{}, invalidParams("unknown command %q", p.Command)
}

package lsp

import (
	"context"
	"encoding/json"

	"github.com/dsh-lsp/dsh-lsp/lsp/protocol"
)

// executeCommand runs a command of executeCommandProvider; dsh.prepare takes
// one argument object (CONTRACT §5).
func (s *Server) executeCommand(ctx context.Context, params json.RawMessage) (any, error) {
	var p protocol.ExecuteCommandParams
	if err := decodeParams("workspace/executeCommand", params, &p); err != nil {
		return nil, err
	}
	switch p.Command {
	case CommandPrepare:
		if len(p.Arguments) != 1 {
			return nil, invalidParams("dsh.prepare takes exactly one argument object, got %d arguments", len(p.Arguments))
		}
		return s.prepare(ctx, p.Arguments[0])
	}
	return nil, invalidParams("unknown command %q", p.Command)
}

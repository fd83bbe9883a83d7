package mcpserver

import (
	"context"
	"encoding/json"
	"math"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-lsp/dsh-lsp/contentindex"
	"github.com/dsh-lsp/dsh-lsp/internal/jsjson"
	"github.com/dsh-lsp/dsh-lsp/reference"
)

// contentSearch is dsh_search_sessions with content: true (CONTRACT §9):
// the content index synced with the store, then searched.
func (s *Server) contentSearch(ctx context.Context, a args, query *string) (*mcp.CallToolResult, error) {
	src, ok := s.opts.Source.(contentindex.Source)
	if s.opts.Content == nil || !ok {
		return toolError(ctx, argError("%s: content search is off (--no-content-index)", ToolSearch)), nil
	}
	if query == nil || *query == "" {
		return toolError(ctx, argError(`%s: content search needs a non-empty "query"`, ToolSearch)), nil
	}
	limit := int64(contentindex.DefaultLimit)
	if raw, ok := a["limit"]; ok {
		var v float64
		if err := json.Unmarshal(raw, &v); err != nil {
			v = math.NaN()
		}
		var err error
		if limit, err = reference.CheckCandidateLimit(v); err != nil {
			return toolError(ctx, err), nil
		}
	}
	if err := s.waitIndexed(ctx); err != nil {
		return toolError(ctx, err), nil
	}
	items, err := s.opts.Content.Find(ctx, src, s.opts.Target, *query, int(min(limit, contentindex.MaxLimit)))
	if err != nil {
		return toolError(ctx, err), nil
	}
	b, err := jsjson.Marshal(items)
	if err != nil {
		return toolError(ctx, err), nil
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
		StructuredContent: map[string]any{"hits": json.RawMessage(b)},
	}, nil
}

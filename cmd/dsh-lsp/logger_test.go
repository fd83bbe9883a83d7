package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// TestLoggerWritesGroupsAsStructuredFields checks that the logger serve and
// mcp build keeps slog attributes and groups as nested fields of the log
// line, so a grouped record stays machine-readable.
func TestLoggerWritesGroupsAsStructuredFields(t *testing.T) {
	var buf bytes.Buffer
	logger, closeLog, err := newLogger("", "debug", &buf)
	if err != nil {
		t.Fatal(err)
	}
	logger.WithGroup("index").Info("refreshed", "sessions", 3, slog.Group("cache", "path", "/tmp/x"))
	closeLog()
	line := strings.TrimSpace(buf.String())
	if strings.Count(line, "\n") != 0 || !strings.Contains(line, "refreshed") {
		t.Fatalf("want one line with the message, got %q", buf.String())
	}
	var fields struct {
		Index struct {
			Sessions int `json:"sessions"`
			Cache    struct {
				Path string `json:"path"`
			} `json:"cache"`
		} `json:"index"`
	}
	i := strings.IndexByte(line, '{')
	if i < 0 {
		t.Fatalf("no structured fields in %q", line)
	}
	if err := json.Unmarshal([]byte(line[i:]), &fields); err != nil {
		t.Fatalf("fields of %q: %v", line, err)
	}
	if fields.Index.Sessions != 3 || fields.Index.Cache.Path != "/tmp/x" {
		t.Errorf("fields = %+v, want index.sessions 3 and index.cache.path /tmp/x", fields)
	}
}

package main

import (
	"log/slog"
	"testing"

	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestSlogGroupsReachZap checks that the slog→zap bridge the server logs
// through keeps attributes and groups as structured fields.
func TestSlogGroupsReachZap(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	logger := slog.New(zapslog.NewHandler(core))
	logger.WithGroup("index").Info("refreshed", "sessions", 3, slog.Group("cache", "path", "/tmp/x"))
	entries := logs.All()
	if len(entries) != 1 {
		t.Fatalf("got %d log entries, want 1", len(entries))
	}
	m := entries[0].ContextMap()
	index, ok := m["index"].(map[string]any)
	if !ok {
		t.Fatalf("group index missing: %#v", m)
	}
	if index["sessions"] != int64(3) {
		t.Errorf("index.sessions = %#v, want 3", index["sessions"])
	}
	cache, ok := index["cache"].(map[string]any)
	if !ok || cache["path"] != "/tmp/x" {
		t.Errorf("index.cache.path = %#v, want /tmp/x", index["cache"])
	}
}

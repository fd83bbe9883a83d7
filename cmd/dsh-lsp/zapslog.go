package main

import (
	"context"
	"log/slog"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// zapHandler is a slog.Handler writing to a zap logger, so that the server
// and go.lsp.dev/protocol (which logs through protocol.WithLogger's
// *slog.Logger) share the zap sink.
type zapHandler struct {
	logger *zap.Logger
	fields []zap.Field
	group  string
}

func newZapHandler(l *zap.Logger) *zapHandler { return &zapHandler{logger: l} }

func zapLevel(l slog.Level) zapcore.Level {
	switch {
	case l >= slog.LevelError:
		return zapcore.ErrorLevel
	case l >= slog.LevelWarn:
		return zapcore.WarnLevel
	case l >= slog.LevelInfo:
		return zapcore.InfoLevel
	}
	return zapcore.DebugLevel
}

func (h *zapHandler) Enabled(_ context.Context, l slog.Level) bool {
	return h.logger.Core().Enabled(zapLevel(l))
}

func (h *zapHandler) Handle(_ context.Context, r slog.Record) error {
	ce := h.logger.Check(zapLevel(r.Level), r.Message)
	if ce == nil {
		return nil
	}
	fields := append([]zap.Field(nil), h.fields...)
	r.Attrs(func(a slog.Attr) bool {
		fields = append(fields, h.field(a))
		return true
	})
	ce.Time = r.Time
	ce.Write(fields...)
	return nil
}

func (h *zapHandler) field(a slog.Attr) zap.Field {
	key := a.Key
	if h.group != "" {
		key = h.group + "." + key
	}
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return zap.String(key, v.String())
	case slog.KindInt64:
		return zap.Int64(key, v.Int64())
	case slog.KindUint64:
		return zap.Uint64(key, v.Uint64())
	case slog.KindFloat64:
		return zap.Float64(key, v.Float64())
	case slog.KindBool:
		return zap.Bool(key, v.Bool())
	case slog.KindDuration:
		return zap.Duration(key, v.Duration())
	case slog.KindTime:
		return zap.Time(key, v.Time())
	}
	if err, ok := v.Any().(error); ok {
		return zap.NamedError(key, err)
	}
	return zap.Any(key, v.Any())
}

func (h *zapHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := *h
	n.fields = append([]zap.Field(nil), h.fields...)
	for _, a := range attrs {
		n.fields = append(n.fields, h.field(a))
	}
	return &n
}

func (h *zapHandler) WithGroup(name string) slog.Handler {
	n := *h
	if n.group != "" {
		name = n.group + "." + name
	}
	n.group = name
	return &n
}

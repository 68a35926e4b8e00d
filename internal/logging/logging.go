package logging

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2/textlogger"
)

// Formats are the values of --log-format.
const (
	FormatText = "text"
	FormatJSON = "json"
)

// FlagUsage describes --log-format.
const FlagUsage = `log format: "text" (klog's key=value lines) or "json" (one JSON object per line: time, level, msg, logger, then the key/value pairs)`

// New returns a logger writing format to w at verbosity v: V(0) lines
// always, V(1) lines when v >= 1.
func New(format string, v int, w io.Writer) (logr.Logger, error) {
	switch format {
	case FormatText, "":
		return textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(v), textlogger.Output(w))), nil
	case FormatJSON:
		h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.Level(-v), ReplaceAttr: levelName})
		return logr.FromSlogHandler(h), nil
	default:
		return logr.Discard(), fmt.Errorf("--log-format=%q: use %s or %s", format, FormatText, FormatJSON)
	}
}

// levelName writes logr's levels as "error", "info" (V(0)) and "debug"
// (V(1) and above) instead of slog's "INFO-1".
func levelName(_ []string, a slog.Attr) slog.Attr {
	if a.Key != slog.LevelKey {
		return a
	}
	l, ok := a.Value.Any().(slog.Level)
	if !ok {
		return a
	}
	switch {
	case l >= slog.LevelError:
		a.Value = slog.StringValue("error")
	case l >= slog.LevelInfo:
		a.Value = slog.StringValue("info")
	default:
		a.Value = slog.StringValue("debug")
	}
	return a
}

// Package logging builds the logr.Logger of the isamatch binaries from
// their --log-format and -v flags. The entry point is [New].
//
// "text" is klog's text logger, as the binaries always logged; "json" is
// one JSON object per line from the standard library's log/slog, through
// logr.FromSlogHandler: no dependency beyond what the module already has
// (component-base's JSON format and controller-runtime's zap would each
// add zap and more for the same lines).
package logging

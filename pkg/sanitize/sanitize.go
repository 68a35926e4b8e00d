package sanitize

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line returns s as one line of printable, valid UTF-8 of at most max
// bytes, fit for an admission warning or an annotation: invalid bytes
// become U+FFFD, control and other non-printable characters (newlines,
// tabs, escapes) become spaces, runs of spaces collapse into one, and the
// ends are trimmed. A longer text is cut at a character boundary and ends
// with "…" (the result still fits in max bytes). The API server drops a
// warning with a control character in it, and invalid UTF-8 cannot be
// stored in an object.
func Line(s string, max int) string {
	if max <= 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(min(len(s), max+len("…")))
	space := false
	for _, r := range s { // invalid bytes arrive as utf8.RuneError
		if !unicode.IsPrint(r) && r != utf8.RuneError {
			r = ' '
		}
		if r == ' ' {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
		if b.Len() > max {
			break
		}
	}
	out := b.String()
	switch {
	case len(out) <= max:
		return out
	case max <= len("…"):
		return cut(out, max)
	}
	return cut(out, max-len("…")) + "…"
}

// cut returns the longest prefix of s of at most n bytes that ends at a
// character boundary.
func cut(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.TrimRight(s[:n], " ")
}

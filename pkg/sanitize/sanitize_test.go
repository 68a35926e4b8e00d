package sanitize

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestLine(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{name: "plain text unchanged", in: "notFound: MANIFEST_UNKNOWN", max: 100, want: "notFound: MANIFEST_UNKNOWN"},
		{name: "newlines and tabs become one space", in: "boom\n<html>\r\n\t<body>", max: 100, want: "boom <html> <body>"},
		{name: "trailing newline trimmed", in: "boom\n", max: 100, want: "boom"},
		{name: "escape sequences lose their control byte", in: "a\x1b[31mred\x00", max: 100, want: "a [31mred"},
		{name: "invalid UTF-8 replaced", in: "a\xffb", max: 100, want: "a\uFFFDb"},
		{name: "cut at a character boundary", in: "ééééé", max: 8, want: "éé…"},
		{name: "cut fits the ellipsis", in: strings.Repeat("a", 20), max: 10, want: "aaaaaaa…"},
		{name: "exactly max bytes kept", in: "abcdefghij", max: 10, want: "abcdefghij"},
		{name: "tiny max", in: "abcdef", max: 2, want: "ab"},
		{name: "zero max", in: "abc", max: 0, want: ""},
		{name: "non-breaking and line separators", in: "a\u00a0b\u2028c", max: 100, want: "a b c"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Line(tc.in, tc.max)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Line(%q, %d) (-want +got):\n%s", tc.in, tc.max, diff)
			}
			checkPrintable(t, got, tc.max)
		})
	}
}

// checkPrintable fails unless s is valid, printable UTF-8 of at most max
// bytes: what the API server passes on as a warning.
func checkPrintable(t *testing.T, s string, max int) {
	t.Helper()
	if len(s) > max {
		t.Errorf("%q is %d bytes, want at most %d", s, len(s), max)
	}
	if !utf8.ValidString(s) {
		t.Errorf("%q is not valid UTF-8", s)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			t.Errorf("%q holds the non-printable %U", s, r)
		}
	}
}

func BenchmarkLine(b *testing.B) {
	body := "boom\n" + strings.Repeat("<html><body>Internal Server Error</body></html>\n", 1400) // ~64 KiB
	b.ReportAllocs()
	for b.Loop() {
		Line(body, 160) // an error message's bound in pkg/registry
	}
}

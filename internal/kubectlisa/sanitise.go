package kubectlisa

import (
	"strings"
	"unicode"
)

// clean makes an untrusted value (an annotation, a label) safe to print:
// control characters become '?', and it is cut to max runes.
func clean(s string, max int) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == max {
			b.WriteString("…")
			break
		}
		if unicode.IsControl(r) {
			r = '?'
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

package probe

import (
	"bufio"
	"bytes"
	"strings"
)

// marchFromHelpTarget returns the value of the "-march=" line that
// "gcc -Q --help=target" prints ("  -march=        \t\trv64imafdc"), or "".
func marchFromHelpTarget(out []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "-march="); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// withArchFromVersion returns the --with-arch= value of the "Configured
// with:" line that "gcc -v" prints, or "" when gcc was configured without
// one.
func withArchFromVersion(out []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "Configured with:") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(strings.Trim(f, `'"`), "--with-arch="); ok {
				return strings.Trim(v, `'"`)
			}
		}
	}
	return ""
}

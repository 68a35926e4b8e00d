package isa

import (
	"bufio"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestRISCVTableOrder checks the generated table is in LLVM canonical order
// (bit order is print order) and that its closures match implied.tsv.
func TestRISCVTableOrder(t *testing.T) {
	for k := 1; k < len(rvTable); k++ {
		if !llvmLess(rvTable[k-1].name, rvTable[k].name) {
			t.Errorf("table order: %s before %s", rvTable[k-1].name, rvTable[k].name)
		}
	}
	f, err := os.Open("testdata/implied.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	rows := 0
	for sc.Scan() {
		c := strings.Split(sc.Text(), "\t")
		if strings.HasPrefix(c[0], "#") || len(c) < 5 || c[0] == "ext" || c[1] == "-" {
			continue
		}
		rows++
		i, ok := rv.index[c[0]]
		if !ok {
			t.Errorf("%s missing from table", c[0])
			continue
		}
		e := rvTable[i]
		if got := strconv.Itoa(e.major) + "." + strconv.Itoa(e.minor); got != c[1] {
			t.Errorf("%s: version %s, want %s", c[0], got, c[1])
		}
		if e.experimental != (c[2] == "yes") {
			t.Errorf("%s: experimental %t, want %s", c[0], e.experimental, c[2])
		}
		if diff := cmp.Diff(strings.Fields(c[3]), e.implies, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: direct implications (-want +got):\n%s", c[0], diff)
		}
		want := strings.Fields(c[4])
		sort.Slice(want, func(a, b int) bool { return llvmLess(want[a], want[b]) })
		cl := rv.closure[i]
		cl.clear(i)
		if diff := cmp.Diff(want, rv.list(cl), cmp.Transformer("nil", func(s []string) []string {
			if s == nil {
				return []string{}
			}
			return s
		})); diff != "" {
			t.Errorf("closure of %s (-want +got):\n%s", c[0], diff)
		}
	}
	if rows != 285 {
		t.Errorf("implied.tsv rows = %d, want 285", rows)
	}
}

// llvmRank is the rank of RISCVISAUtils::compareExtension for any name;
// multi-letter names with an unknown prefix sort last.
func llvmRank(s string) int {
	single := func(c byte) int {
		switch c {
		case 'i':
			return 0
		case 'e':
			return 1
		}
		if p := strings.IndexByte(allStdExts, c); p >= 0 {
			return p + 2
		}
		return 2 + len(allStdExts) + int(c) - 'a'
	}
	switch {
	case s == "":
		return 1 << 10
	case len(s) == 1:
		return single(s[0])
	case s[0] == 's':
		return 1 << 7
	case s[0] == 'x':
		return 1 << 8
	case s[0] == 'z':
		return 1<<6 | single(s[1])
	}
	return 1 << 9
}

// llvmLess is LLVM's canonical extension order; the tests check the
// generated table and the closures against it.
func llvmLess(a, b string) bool {
	if ra, rb := llvmRank(a), llvmRank(b); ra != rb {
		return ra < rb
	}
	return a < b
}

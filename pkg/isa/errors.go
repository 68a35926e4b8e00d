package isa

// ParseError, the error of every strict parser (RISC-V, x86-64, arm64), and
// the "did you mean" suggestions its hints carry.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ParseError is returned by every strict parser: it names the input, the
// reason (naming the bad token) and what is accepted.
type ParseError struct {
	Input string
	Err   error
	Hint  string
}

func (e *ParseError) Error() string {
	if e.Hint == "" {
		return fmt.Sprintf("isa: %q: %v", e.Input, e.Err)
	}
	return fmt.Sprintf("isa: %q: %v (%s)", e.Input, e.Err, e.Hint)
}

func (e *ParseError) Unwrap() error { return e.Err }

var errEmpty = errors.New("empty ISA string")

// didYouMean puts the suggestions, if any, in front of hint.
func didYouMean(suggestions []string, hint string) string {
	if len(suggestions) == 0 {
		return hint
	}
	return "did you mean " + strings.Join(suggestions, " or ") + "? " + hint
}

// suggest returns up to three known names within edit distance 2 of name,
// closest first.
func suggest(name string, known []string) []string {
	type cand struct {
		name string
		d    int
	}
	if name == "" {
		return nil
	}
	var cs []cand
	for _, k := range known {
		if len(k) > 1 && k[0] == name[0] {
			if d := editDistance(name, k); d <= 2 {
				cs = append(cs, cand{k, d})
			}
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return a.d - b.d })
	var out []string
	for _, c := range cs[:min(3, len(cs))] {
		out = append(out, c.name)
	}
	return out
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

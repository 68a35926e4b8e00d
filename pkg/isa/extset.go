package isa

import (
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strings"
)

func (s *ExtSet) set(i int)     { s[i>>6] |= 1 << (uint(i) & 63) }
func (s *ExtSet) clear(i int)   { s[i>>6] &^= 1 << (uint(i) & 63) }
func (s ExtSet) has(i int) bool { return s[i>>6]&(1<<(uint(i)&63)) != 0 }
func (s ExtSet) or(t ExtSet) ExtSet {
	for k := range s {
		s[k] |= t[k]
	}
	return s
}

func (s ExtSet) and(t ExtSet) ExtSet {
	for k := range s {
		s[k] &= t[k]
	}
	return s
}

func (s ExtSet) andNot(t ExtSet) ExtSet {
	for k := range s {
		s[k] &^= t[k]
	}
	return s
}

func (s ExtSet) count() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}

// subsetOf reports s ⊆ t without allocating.
func (s ExtSet) subsetOf(t ExtSet) bool {
	var d uint64
	for k := range s {
		d |= s[k] &^ t[k]
	}
	return d == 0
}

// each calls fn for every set bit in ascending order (= canonical order).
func (s ExtSet) each(fn func(i int)) {
	for k, w := range s {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			fn(k<<6 | b)
			w &= w - 1
		}
	}
}

// family is the extension table of one architecture family. Bit i of an
// ExtSet is names[i]; the table order is the canonical print order.
type family struct {
	key     string // label key segment: "rv", "x86", "arm64"
	names   []string
	index   map[string]int
	aliases map[string]string
	lookups map[string]int // names and aliases

	closure []ExtSet // reflexive-transitive closure of the direct implications
	direct  []ExtSet
}

func newFamily(key string, names []string, implies map[string][]string, aliases map[string]string) *family {
	f := &family{key: key, names: names, index: make(map[string]int, len(names)), aliases: aliases}
	for i, n := range names {
		if _, dup := f.index[n]; dup {
			panic("isa: duplicate table entry " + n)
		}
		f.index[n] = i
	}
	f.lookups = make(map[string]int, len(names)+len(aliases))
	for n, i := range f.index {
		f.lookups[n] = i
	}
	for a, n := range aliases {
		i, ok := f.index[n]
		if !ok {
			panic("isa: alias " + a + " of unknown " + n)
		}
		f.lookups[a] = i
	}
	f.direct = make([]ExtSet, len(names))
	f.closure = make([]ExtSet, len(names))
	for i, n := range names {
		for _, m := range implies[n] {
			j, ok := f.index[m]
			if !ok {
				panic("isa: " + n + " implies unknown " + m)
			}
			f.direct[i].set(j)
		}
		f.closure[i].set(i)
	}
	for changed := true; changed; {
		changed = false
		for i := range names {
			c := f.closure[i]
			f.direct[i].each(func(j int) { c = c.or(f.closure[j]) })
			if c != f.closure[i] {
				f.closure[i] = c
				changed = true
			}
		}
	}
	return f
}

// lookup resolves a name or alias to its bit.
func (f *family) lookup(name string) (int, bool) {
	i, ok := f.lookups[name]
	return i, ok
}

func (f *family) mustSet(names ...string) ExtSet {
	var s ExtSet
	for _, n := range names {
		i, ok := f.index[n]
		if !ok {
			panic("isa: unknown extension " + n)
		}
		s.set(i)
	}
	return s
}

// close returns s closed under the table implications.
func (f *family) close(s ExtSet) ExtSet {
	out := s
	s.each(func(i int) {
		if i < len(f.closure) {
			out = out.or(f.closure[i])
		}
	})
	return out
}

func (f *family) list(s ExtSet) []string {
	out := make([]string, 0, s.count())
	s.each(func(i int) {
		if i < len(f.names) {
			out = append(out, f.names[i])
		}
	})
	return out
}

// minimal returns the members of s that no other member of s implies.
func (f *family) minimal(s ExtSet) ExtSet {
	out := s
	s.each(func(i int) {
		s.each(func(j int) {
			if i != j && f.closure[j].has(i) && !f.closure[i].has(j) {
				out.clear(i)
			}
		})
	})
	return out
}

// accepted is a short human list of accepted names for error messages.
func (f *family) accepted(max int) string {
	names := slices.Clone(f.names)
	sort.Strings(names)
	if len(names) > max {
		return strings.Join(names[:max], " ") + " ..."
	}
	return strings.Join(names, " ")
}

// addFeatures adds the '+'-separated features of a request ("avx2+aes") to
// set and closes it. An unknown name is a ParseError of in that names it, with
// suggestions; what names the family in the message ("x86-64", "arm64").
func (f *family) addFeatures(in, what string, set ExtSet, feats string) (ExtSet, error) {
	for _, name := range strings.Split(feats, "+") {
		i, ok := f.lookup(name)
		if !ok {
			return ExtSet{}, &ParseError{Input: in, Err: fmt.Errorf("unknown %s feature %q", what, name),
				Hint: didYouMean(suggest(name, f.names), "accepted features: "+f.accepted(200))}
		}
		set.set(i)
	}
	return f.close(set), nil
}

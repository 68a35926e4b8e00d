package probe

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCPUInfo(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []cpuBlock
	}{
		{
			name: "tabs and blank-line separated",
			in:   "processor\t: 0\nisa\t\t: rv64gc\n\nprocessor\t: 1\nisa\t\t: rv64gc\n",
			want: []cpuBlock{{"processor": "0", "isa": "rv64gc"}, {"processor": "1", "isa": "rv64gc"}},
		},
		{
			name: "no blank line between processors, trailing spaces",
			in:   "processor       : 0   \nhart isa        : rv64imac   \nprocessor       : 1\nhart isa        : rv64imac\n",
			want: []cpuBlock{{"processor": "0", "hart isa": "rv64imac"}, {"processor": "1", "hart isa": "rv64imac"}},
		},
		{
			name: "empty values and lines without colon",
			in:   "processor\t: 0\nisa-ext\t\t: \nnsh>\n",
			want: []cpuBlock{{"processor": "0", "isa-ext": ""}},
		},
		{
			name: "arm64 global tail block",
			in:   "processor\t: 0\nFeatures\t: fp asimd\n\nHardware\t: BCM2835\n",
			want: []cpuBlock{{"processor": "0", "Features": "fp asimd"}, {"Hardware": "BCM2835"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, parseCPUInfo([]byte(tc.in))); diff != "" {
				t.Errorf("parseCPUInfo (-want +got):\n%s", diff)
			}
		})
	}
}

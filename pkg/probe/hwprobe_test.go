package probe

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/pkg/isa"
)

func TestHWProbeString(t *testing.T) {
	const ima = 1
	tests := []struct {
		name   string
		pairs  []HWProbePair
		want   string
		wantOK bool
	}{
		{
			name:  "no IMA base behaviour",
			pairs: []HWProbePair{{Key: hwprobeKeyBaseBehavior, Value: 0}, {Key: hwprobeKeyIMAExt0, Value: 0x7}},
		},
		{
			name:  "unknown key comes back as -1",
			pairs: []HWProbePair{{Key: -1, Value: 0}, {Key: hwprobeKeyBaseBehavior, Value: ima}},
			want:  "rv64ima", wantOK: true,
		},
		{
			name: "jh7110: fd c zba zbb",
			pairs: []HWProbePair{{Key: hwprobeKeyMVendorID, Value: 0x489}, {Key: hwprobeKeyBaseBehavior, Value: ima},
				{Key: hwprobeKeyIMAExt0, Value: 1<<0 | 1<<1 | 1<<3 | 1<<4}},
			want: "rv64imafdc_zba_zbb", wantOK: true,
		},
		{
			name: "rvv 1.0 with zve64d and zicond; tree-dependent bits 59+ ignored",
			pairs: []HWProbePair{{Key: hwprobeKeyBaseBehavior, Value: ima},
				{Key: hwprobeKeyIMAExt0, Value: 1<<0 | 1<<1 | 1<<2 | 1<<35 | 1<<41 | 1<<59 | 1<<63}},
			want: "rv64imafdcv_zicond_zve64d", wantOK: true,
		},
		{
			name: "t-head vendor vector bit",
			pairs: []HWProbePair{{Key: hwprobeKeyMVendorID, Value: 0x5b7}, {Key: hwprobeKeyBaseBehavior, Value: ima},
				{Key: hwprobeKeyIMAExt0, Value: 1<<0 | 1<<1}, {Key: hwprobeKeyVendorExtTHead, Value: 1}},
			want: "rv64imafdc_xtheadvector", wantOK: true,
		},
		{
			name: "vendor bit of another vendor ignored",
			pairs: []HWProbePair{{Key: hwprobeKeyMVendorID, Value: 0x710}, {Key: hwprobeKeyBaseBehavior, Value: ima},
				{Key: hwprobeKeyVendorExtTHead, Value: 1}},
			want: "rv64ima", wantOK: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _, ok := HWProbeString(tc.pairs, 64)
			if diff := cmp.Diff([]any{tc.want, tc.wantOK}, []any{got, ok}); diff != "" {
				t.Errorf("HWProbeString (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProbeWithHWProbe(t *testing.T) {
	const n = isa.NativePrefix
	fsys := fstest.MapFS{"proc/cpuinfo": {Data: []byte("processor\t: 0\nhart\t\t: 0\nisa\t\t: rv64imafdc\n")}}
	hw := func() ([]HWProbePair, error) {
		return []HWProbePair{{Key: hwprobeKeyBaseBehavior, Value: 1}, {Key: hwprobeKeyIMAExt0, Value: 1<<0 | 1<<1 | 1<<5}}, nil
	}
	res, err := Probe(t.Context(), Options{FS: fsys, Runner: &fakeRunner{}, HWProbe: hw})
	if err != nil {
		t.Fatalf("Probe(): %v", err)
	}
	want := map[string]string{n + "rv.zbs": "true", n + "rv.c": "true"}
	if diff := cmp.Diff(want, project(res.Labels(), want)); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if !strings.Contains(res.NativeSource, "decided by cpuinfo (isa of 1 hart) and hwprobe") || !strings.Contains(res.NativeSource, "hwprobe: rv64imafdc_zbs") {
		t.Errorf("NativeSource = %q, want cpuinfo and hwprobe named", res.NativeSource)
	}
}

package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
)

func TestFromBuildInfo(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	tests := []struct {
		name              string
		bi                *debug.BuildInfo
		version, revision string
		want              Info
	}{
		{
			name:    "ldflags win",
			bi:      &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-x"}, Settings: vcs("abc", "true")},
			version: "v1.2.3", revision: "0123456",
			want: Info{Version: "v1.2.3", Revision: "0123456", GoVersion: "go1.26.8"},
		},
		{
			name: "toolchain's record of a git build",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.1.1-0.20260101000000-abcdef012345+dirty"}, Settings: vcs("abcdef012345", "true")},
			want: Info{Version: "v0.1.1-0.20260101000000-abcdef012345+dirty", Revision: "abcdef012345-dirty", GoVersion: "go1.26.8"},
		},
		{
			name: "devel build without VCS (-buildvcs=false)",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			want: Info{Version: "unknown", Revision: "unknown", GoVersion: "go1.26.8"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := fromBuildInfo(tc.bi, tc.version, tc.revision)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("fromBuildInfo() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCollector(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(Info{Version: "v1", Revision: "r", GoVersion: "go1.26.8"}.Collector()); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 1 || mfs[0].GetName() != "isamatch_build_info" || len(mfs[0].GetMetric()) != 1 {
		t.Fatalf("gathered %v, want one isamatch_build_info sample", mfs)
	}
	m := mfs[0].GetMetric()[0]
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	want := map[string]string{"version": "v1", "revision": "r", "goversion": "go1.26.8"}
	if diff := cmp.Diff(want, labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if v := m.GetGauge().GetValue(); v != 1 {
		t.Errorf("value = %v, want 1", v)
	}
	if s := Read().String(); !strings.Contains(s, "go1.") {
		t.Errorf("Read().String() = %q, want the Go version in it", s)
	}
}

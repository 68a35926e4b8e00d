package probe

import (
	"errors"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestProbeFailedSources(t *testing.T) {
	const (
		rv    = "processor\t: 0\nhart\t\t: 0\nisa\t\t: rv64imafdc\n"
		cross = "/opt/RISCV/bin/riscv64-unknown-linux-gnu-gcc"
	)
	hwErr := func() ([]HWProbePair, error) { return nil, errors.New("ENOSYS") }
	tests := []struct {
		name       string
		fsys       fstest.MapFS
		out        map[string]string
		errs       map[string]error
		hwprobe    func() ([]HWProbePair, error)
		wantFailed []string
		wantSource string // of the Probe error; "" means no error
	}{
		{
			name: "nothing fails, a missing gcc is no failure",
			fsys: fstest.MapFS{"proc/cpuinfo": {Data: []byte(rv)}},
		},
		{
			name:       "gcc that exits non-zero",
			fsys:       fstest.MapFS{"proc/cpuinfo": {Data: []byte(rv)}},
			errs:       map[string]error{"/usr/bin/gcc": errors.New("exit status 1")},
			wantFailed: []string{SourceGCC},
		},
		{
			name:       "gcc without a -march= line",
			fsys:       fstest.MapFS{"proc/cpuinfo": {Data: []byte(rv)}},
			out:        map[string]string{"/usr/bin/gcc": "nothing useful\n"},
			wantFailed: []string{SourceGCC},
		},
		{
			name:       "cross gcc that fails, hwprobe that errs",
			fsys:       fstest.MapFS{"proc/cpuinfo": {Data: []byte(rv)}},
			errs:       map[string]error{cross: errors.New("signal: killed")},
			hwprobe:    hwErr,
			wantFailed: []string{SourceHWProbe, SourceCrossGCC},
		},
		{
			name:       "unreadable cpuinfo",
			fsys:       fstest.MapFS{},
			wantSource: SourceCPUInfo,
		},
		{
			name:       "no ISA in cpuinfo",
			fsys:       fstest.MapFS{"proc/cpuinfo": {Data: []byte("processor\t: 0\n")}},
			wantSource: SourceCPUInfo,
		},
		{
			name: "binfmt_misc is not a directory",
			fsys: fstest.MapFS{
				"proc/cpuinfo": {Data: []byte(rv)},
				BinfmtDir:      {Data: []byte("not a directory")},
			},
			wantSource: SourceBinfmt,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &fakeRunner{out: tc.out, err: tc.errs}
			res, err := Probe(t.Context(), Options{FS: tc.fsys, Runner: r, HWProbe: tc.hwprobe})
			if diff := cmp.Diff(tc.wantSource, FailedSource(err)); diff != "" {
				t.Errorf("FailedSource(%v) (-want +got):\n%s", err, diff)
			}
			if tc.wantSource != "" {
				return
			}
			if err != nil {
				t.Fatalf("Probe(): %v", err)
			}
			if diff := cmp.Diff(tc.wantFailed, res.Failed); diff != "" {
				t.Errorf("Result.Failed (-want +got):\n%s", diff)
			}
		})
	}
}

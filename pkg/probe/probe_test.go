package probe

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/pkg/isa"
)

const absent = "<absent>"

// probeFixture probes testdata/<machine> with the direct runner.
func probeFixture(t *testing.T, machine string) Result {
	t.Helper()
	root := filepath.Join("testdata", machine)
	res, err := Probe(t.Context(), Options{
		HostRoot: root,
		Runner:   &ExecRunner{Root: root, Timeout: 10 * time.Second},
	})
	if err != nil {
		t.Fatalf("Probe(%s): %v", machine, err)
	}
	return res
}

// project returns, for every key of want, the value labels has (or absent).
func project(labels map[string]string, want map[string]string) map[string]string {
	got := map[string]string{}
	for k := range want {
		v, ok := labels[k]
		if !ok {
			v = absent
		}
		got[k] = v
	}
	return got
}

func TestProbeFixtures(t *testing.T) {
	const n, q = isa.NativePrefix, isa.EmuPrefix
	tests := []struct {
		machine string
		// labels: key -> value, or absent.
		labels map[string]string
		// nativeSource and emuSource must contain these substrings.
		nativeSource []string
		emuSource    []string
	}{
		{
			machine: "x86-64-v3",
			labels: map[string]string{
				n + "arch": "amd64", n + "x86-64-level": "3", n + "x86.avx2": "true", n + "x86.lzcnt": "true",
				n + "x86.avx512f": absent, n + "rv.v": absent,
				// The handlers are not probed without probe programs
				// (TestEmulatorSearch probes them): no qemu. labels.
				q + "riscv64": absent, q + "arm64": absent, q + "amd64": absent, q + "rv.c": absent, q + "rv.v": absent,
			},
			nativeSource: []string{"decided by cpuinfo (flags of 1 processor)", "gcc /usr/bin/gcc -march=x86-64 (within native, not used)"},
			emuSource:    []string{"binfmt qemu-riscv64 enabled: not probed (no probe programs)", "binfmt qemu-x86_64 disabled", "qemu-arm enabled (no isamatch architecture)"},
		},
		{
			machine: "x86-64-v4",
			labels: map[string]string{
				n + "arch": "amd64", n + "x86-64-level": "4", n + "x86.avx512f": "true", n + "x86.avx512vnni": "true",
				n + "x86.sse3": "true", n + "x86.sahf": "true", n + "x86.pni": absent, q + "riscv64": absent,
			},
			nativeSource: []string{"decided by cpuinfo (flags of 8 processors)"},
			emuSource:    []string{"none"},
		},
		{
			machine: "build-host",
			labels:  map[string]string{n + "arch": "amd64", n + "x86-64-level": "4", n + "x86.avx512bw": "true"},
		},
		{
			machine: "arm64-sve",
			labels: map[string]string{
				n + "arch": "arm64", n + "arm64.sve": "true", n + "arm64.asimd": "true", n + "arm64.sve2": absent,
				n + "x86-64-level": absent,
			},
			nativeSource: []string{"decided by cpuinfo (Features of 1 processor)"},
		},
		{
			machine: "paper-node2",
			labels:  map[string]string{n + "arch": "arm64", n + "arm64.asimddp": "true", n + "arm64.sve": absent},
		},
		{
			machine: "visionfive2",
			labels: map[string]string{
				n + "arch": "riscv64", n + "rv.i": "true", n + "rv.m": "true", n + "rv.a": "true", n + "rv.f": "true",
				n + "rv.d": "true", n + "rv.c": "true", n + "rv.zba": "true", n + "rv.zbb": "true", n + "rv.zicntr": "true",
				n + "rv.v": absent, n + "rv.zbs": absent, n + "x86-64-level": absent,
			},
			nativeSource: []string{"decided by cpuinfo (isa of 4 harts)", "gcc /usr/bin/gcc -march=rv64gc (within native, not used)"},
		},
		{
			machine: "visionfive2-old-kernel",
			labels: map[string]string{
				n + "arch": "riscv64", n + "rv.d": "true", n + "rv.c": "true", n + "rv.zba": absent, n + "rv.zbb": absent,
			},
			nativeSource: []string{"decided by cpuinfo (isa of 4 harts)", "gcc: none"},
		},
		{
			machine: "spacemit-k1",
			labels: map[string]string{
				n + "arch": "riscv64", n + "rv.v": "true", n + "rv.zve64d": "true", n + "rv.zvfh": "true",
				n + "rv.zba": "true", n + "rv.zicond": "true", n + "rv.xtheadvector": absent,
			},
			nativeSource: []string{"decided by cpuinfo (hart isa of 8 harts)"},
		},
		{
			machine: "lichee-pi-4a",
			labels: map[string]string{
				n + "arch": "riscv64", n + "rv.xtheadvector": "true", n + "rv.v": absent, n + "rv.zve32x": absent,
				n + "rv.d": "true",
			},
			nativeSource: []string{"decided by cpuinfo (isa of 4 harts)"},
		},
		{
			machine: "lichee-pi-4a-vendor-kernel",
			labels: map[string]string{
				n + "arch": "riscv64", n + "rv.xtheadvector": "true", n + "rv.v": absent, n + "rv.zve32x": absent,
			},
		},
		{
			machine: "milkv-pioneer",
			labels: map[string]string{
				n + "arch": "riscv64", n + "rv.v": absent, n + "rv.zve64d": absent, n + "rv.d": "true", n + "rv.c": "true",
			},
			nativeSource: []string{"decided by cpuinfo (isa of 64 harts)"},
		},
		{
			machine: "qemu-virt-rv64gcv",
			labels: map[string]string{
				n + "arch": "riscv64", n + "rv.v": "true", n + "rv.h": "true", n + "rv.zbs": "true", n + "rv.sstc": "true",
				n + "rv.xtheadvector": absent,
			},
		},
		{
			machine: "paper-node1",
			labels: map[string]string{
				n + "arch": "amd64", n + "x86-64-level": "3", n + "rv.v": absent,
				q + "riscv64": "true", q + "rv.v": "true", q + "rv.d": "true", q + "rv.f": "true", q + "rv.m": "true",
				q + "rv.a": absent, q + "rv.c": absent,
			},
			emuSource: []string{"cross gcc /opt/RISCV/bin/riscv64-unknown-linux-gnu-gcc: --with-arch=rv64imfdv, -march=rv64imfdv"},
		},
		{
			machine: "paper-node3",
			labels: map[string]string{
				n + "arch": "riscv64", n + "rv.m": "true", n + "rv.f": "true", n + "rv.d": "true", n + "rv.v": absent,
				n + "rv.a": absent, n + "rv.c": absent, q + "riscv64": absent,
			},
			nativeSource: []string{"decided by cpuinfo (isa of 8 harts)", "-march=rv64imfd (within native, not used)"},
		},
		{
			// The paper's IMFV: V implies Zve64d implies D, so it normalises to IMFDV.
			machine: "paper-node4",
			labels: map[string]string{
				n + "arch": "riscv64", n + "rv.v": "true", n + "rv.f": "true", n + "rv.d": "true", n + "rv.a": absent,
			},
		},
		{
			machine: "paper-node5",
			labels: map[string]string{
				n + "arch": "riscv64", n + "rv.v": "true", n + "rv.d": "true", n + "rv.zve64d": "true", n + "rv.c": absent,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.machine, func(t *testing.T) {
			res := probeFixture(t, tc.machine)
			labels := res.Labels()
			want := tc.labels
			if diff := cmp.Diff(want, project(labels, want)); diff != "" {
				t.Errorf("labels (-want +got):\n%s\nall labels: %v", diff, labels)
			}
			for _, s := range tc.nativeSource {
				if !strings.Contains(res.NativeSource, s) {
					t.Errorf("NativeSource = %q, want it to contain %q", res.NativeSource, s)
				}
			}
			for _, s := range tc.emuSource {
				if !strings.Contains(res.EmuSource, s) {
					t.Errorf("EmuSource = %q, want it to contain %q", res.EmuSource, s)
				}
			}
			ann := res.Annotations()
			if got, want := ann[isa.NativeISAAnnotation], res.Native.Short(); got != want || got == "" {
				t.Errorf("annotation %s = %q, want %q (non-empty)", isa.NativeISAAnnotation, got, want)
			}
			if ann[isa.NativeSourceAnnotation] != res.NativeSource {
				t.Errorf("annotation %s = %q, want NativeSource %q", isa.NativeSourceAnnotation, ann[isa.NativeSourceAnnotation], res.NativeSource)
			}
			_, hasEmu := ann[isa.EmuISAAnnotation]
			if hasEmu != (len(res.Emulated) > 0) {
				t.Errorf("annotation %s present = %v, want %v (emulated %d)", isa.EmuISAAnnotation, hasEmu, len(res.Emulated) > 0, len(res.Emulated))
			}
			for k, v := range labels {
				if !isa.IsOwnedLabel(k) || len(v) > 63 {
					t.Errorf("label %s=%s: not owned or value longer than 63", k, v)
				}
			}
		})
	}
}

// fakeRunner answers per file; files not in out are not found.
type fakeRunner struct {
	out  map[string]string
	err  map[string]error
	seen []string
}

func (f *fakeRunner) Run(_ context.Context, file string, args ...string) ([]byte, error) {
	f.seen = append(f.seen, file+" "+strings.Join(args, " "))
	if err, ok := f.err[file]; ok {
		return nil, err
	}
	o, ok := f.out[file]
	if !ok {
		return nil, ErrNotFound
	}
	return []byte(o), nil
}

func helpTarget(march string) string {
	return "The following options are target specific:\n  -march=                     \t\t" + march + "\n"
}

func TestProbeDecisionRules(t *testing.T) {
	const n = isa.NativePrefix
	riscvHarts := func(lines ...string) string {
		var b strings.Builder
		for i, l := range lines {
			b.WriteString("processor\t: " + string(rune('0'+i)) + "\nhart\t\t: " + string(rune('0'+i)) + "\n" + l + "\nmmu\t\t: sv39\n\n")
		}
		return b.String()
	}
	tests := []struct {
		name    string
		cpuinfo string
		gcc     string // -Q --help=target -march value, "" = no gcc
		gccErr  error
		labels  map[string]string
		source  []string
		wantErr string
	}{
		{
			name:    "all harts must have an extension (intersection)",
			cpuinfo: riscvHarts("isa\t\t: rv64gc_xtheadvector", "isa\t\t: rv64gc"),
			labels:  map[string]string{n + "arch": "riscv64", n + "rv.xtheadvector": absent, n + "rv.c": "true"},
			source:  []string{"isa of 2 harts"},
		},
		{
			name:    "hart isa preferred over isa",
			cpuinfo: riscvHarts("isa\t\t: rv64imafdc\nhart isa\t: rv64imafdc_zba", "isa\t\t: rv64imafdc\nhart isa\t: rv64imafdc_zba"),
			labels:  map[string]string{n + "rv.zba": "true"},
			source:  []string{"hart isa of 2 harts"},
		},
		{
			name:    "CRLF and space padding tolerated",
			cpuinfo: "processor       : 0\r\nhart            : 0\r\nisa             : rv64imafdc_zbb\r\n\r\n",
			labels:  map[string]string{n + "arch": "riscv64", n + "rv.zbb": "true"},
		},
		{
			name:    "compiler default never widens the hardware",
			cpuinfo: riscvHarts("isa\t\t: rv64imafdc"),
			gcc:     "rv64gcv",
			labels:  map[string]string{n + "rv.v": absent, n + "rv.c": "true"},
			source:  []string{"decided by cpuinfo", "-march=rv64gcv (ignored, hardware decides; would add"},
		},
		{
			name:    "gcc decides only when cpuinfo has no riscv isa",
			cpuinfo: "processor\t: 0\nhart\t\t: 0\nmmu\t\t: sv39\n",
			gcc:     "rv64imafdc_zicsr_zifencei",
			labels:  map[string]string{n + "arch": "riscv64", n + "rv.c": "true"},
			source:  []string{"decided by gcc -march=rv64imafdc_zicsr_zifencei (cpuinfo has no RISC-V isa line)"},
		},
		{
			name:    "failing gcc is reported, not fatal",
			cpuinfo: riscvHarts("isa\t\t: rv64imafdc"),
			gccErr:  errors.New("exit status 1"),
			labels:  map[string]string{n + "arch": "riscv64"},
			source:  []string{"gcc /usr/bin/gcc: exit status 1"},
		},
		{
			name:    "no isa anywhere is an error",
			cpuinfo: "processor\t: 0\nhart\t\t: 0\n",
			wantErr: "no ISA in /proc/cpuinfo",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{"proc/cpuinfo": {Data: []byte(tc.cpuinfo)}}
			r := &fakeRunner{out: map[string]string{}, err: map[string]error{}}
			if tc.gcc != "" {
				r.out["/usr/bin/gcc"] = helpTarget(tc.gcc)
			}
			if tc.gccErr != nil {
				r.err["/usr/bin/gcc"] = tc.gccErr
			}
			res, err := Probe(t.Context(), Options{HostRoot: "/fixture", FS: fsys, Runner: r})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Probe() error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Probe(): %v", err)
			}
			if diff := cmp.Diff(tc.labels, project(res.Labels(), tc.labels)); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			for _, s := range tc.source {
				if !strings.Contains(res.NativeSource, s) {
					t.Errorf("NativeSource = %q, want it to contain %q", res.NativeSource, s)
				}
			}
		})
	}
}

func TestProbeMissingCPUInfo(t *testing.T) {
	_, err := Probe(t.Context(), Options{HostRoot: "/nowhere", FS: fstest.MapFS{}, Runner: &fakeRunner{}})
	if err == nil || !strings.Contains(err.Error(), "read /proc/cpuinfo") {
		t.Fatalf("Probe() error = %v, want a read /proc/cpuinfo error", err)
	}
}

func TestExecRunner(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("usr/bin/gcc", "#!/bin/sh\necho \"gcc $*\"\necho err >&2\n")
	write("usr/bin/slow", "#!/bin/sh\nexec sleep 5\n")
	write("fake-chroot", "#!/bin/sh\necho \"chroot $*\"\n")

	tests := []struct {
		name    string
		runner  *ExecRunner
		file    string
		want    string
		wantErr string
	}{
		{name: "direct", runner: &ExecRunner{Root: dir}, file: "/usr/bin/gcc", want: "gcc -v\nerr\n"},
		{name: "chroot", runner: &ExecRunner{Root: dir, Chroot: true, ChrootPath: filepath.Join(dir, "fake-chroot")}, file: "/usr/bin/gcc", want: "chroot " + dir + " /usr/bin/gcc -v\n"},
		{name: "missing binary", runner: &ExecRunner{Root: dir}, file: "/opt/RISCV/bin/riscv64-unknown-linux-gnu-gcc", wantErr: ErrNotFound.Error()},
		{name: "relative path refused", runner: &ExecRunner{Root: dir}, file: "usr/bin/gcc", wantErr: "must be absolute"},
		{name: "timeout", runner: &ExecRunner{Root: dir, Timeout: 50 * time.Millisecond}, file: "/usr/bin/slow", wantErr: "timed out"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.runner.Run(t.Context(), tc.file, "-v")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Run() error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Run(): %v", err)
			}
			if diff := cmp.Diff(tc.want, string(out)); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
	if !NewRunner("/", 0).Chroot == false || !NewRunner("/host/", 0).Chroot {
		t.Errorf("NewRunner: chroot must be off for / and on for /host")
	}
}

// TestExecRunnerRealChroot runs a binary through the in-process chroot: it
// must see the host root as "/".
func TestExecRunnerRealChroot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root (CAP_SYS_CHROOT)")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "usr", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "usr", "bin", "gcc"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "chroot-marker"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := NewRunner(root, 0).Run(t.Context(), "/usr/bin/gcc", "-v")
	if err != nil {
		t.Fatalf("Run(): %v\n%s", err, out)
	}
	if diff := cmp.Diff("in chroot: wd=/ marker=true args=[-v]\n", string(out)); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

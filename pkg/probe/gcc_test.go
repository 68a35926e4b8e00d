package probe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/pkg/isa"
)

func TestGCCOutputParsers(t *testing.T) {
	tests := []struct {
		name     string
		out      string
		march    string
		withArch string
	}{
		{
			name:     "x86 help target line format",
			out:      "  -mabi=                      \t\tsysv\n  -march=                     \t\tx86-64\n  Known valid arguments for -march= option:\n",
			march:    "x86-64",
			withArch: "",
		},
		{
			name:     "debian riscv64 gcc -v",
			out:      "Target: riscv64-linux-gnu\nConfigured with: ../src/configure -v --disable-multilib --with-arch=rv64gc --with-abi=lp64d --enable-checking=release\n",
			withArch: "rv64gc",
		},
		{
			name:     "quoted with-arch",
			out:      "Configured with: ../configure '--with-arch=rv64imafdc' --with-abi=lp64d\n",
			withArch: "rv64imafdc",
		},
		{
			name: "configured without --with-arch (GCC 15 cross)",
			out:  "Configured with: /home2/vendor/gcc/configure --prefix=/opt/riscv/sysroot --target=riscv64-unknown-linux-gnu\nCOLLECT_GCC_OPTIONS='-v' '-march=rv64imafdc_zicsr_zifencei_zaamo_zalrsc'\n",
		},
		{
			name:  "expanded GCC 15 march",
			out:   "  -march=                     \t\trv64imafdc_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd\n",
			march: "rv64imafdc_zicsr_zifencei_zmmul_zaamo_zalrsc_zca_zcd",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := []string{marchFromHelpTarget([]byte(tc.out)), withArchFromVersion([]byte(tc.out))}
			if diff := cmp.Diff([]string{tc.march, tc.withArch}, got); diff != "" {
				t.Errorf("[march, with-arch] (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProbeGCCOnReadOnlyHostRoot runs real processes: gcc scripts that behave
// as GCC 12 does on a read-only host root, where "-c" makes it write
// help-dummy.o into its working directory and fail with the message it prints
// there. The probe must still read both compilers' -march and write nothing.
func TestProbeGCCOnReadOnlyHostRoot(t *testing.T) {
	root := t.TempDir()
	gccScript := func(march string) string {
		return `#!/bin/sh
for a in "$@"; do
	if [ "$a" = "-c" ]; then
		echo "Assembler messages:" >&2
		echo "Fatal error: can't create help-dummy.o: Read-only file system" >&2
		exit 1
	fi
done
if [ "$1" = "-v" ]; then echo "Configured with: ../configure --with-arch=` + march + `" >&2; exit 0; fi
printf 'The following options are target specific:\n  -march=                     \t\t` + march + `\n'
`
	}
	files := map[string]string{
		"proc/cpuinfo": "processor\t: 0\nhart\t\t: 0\nmmu\t\t: sv39\n",
		"usr/bin/gcc":  gccScript("rv64imafdc_zicsr_zifencei"),
		"opt/RISCV/bin/riscv64-unknown-linux-gnu-gcc": gccScript("rv64imfdv"),
	}
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cwd := t.TempDir()
	t.Chdir(cwd)
	res, err := Probe(t.Context(), Options{HostRoot: root, Runner: &ExecRunner{Root: root}})
	if err != nil {
		t.Fatalf("Probe(): %v", err)
	}
	if !strings.Contains(res.NativeSource, "decided by gcc -march=rv64imafdc_zicsr_zifencei") {
		t.Errorf("NativeSource = %q, want the native gcc to decide", res.NativeSource)
	}
	if got := res.Labels()[isa.EmuPrefix+"rv.v"]; got != "true" {
		t.Errorf("emulated rv.v = %q, want true from the cross gcc; EmuSource = %q", got, res.EmuSource)
	}
	if strings.Contains(res.EmuSource, "failed") {
		t.Errorf("EmuSource = %q, want no failed source", res.EmuSource)
	}
	if entries, _ := os.ReadDir(cwd); len(entries) != 0 {
		t.Errorf("probe left files in the working directory: %v", entries)
	}
}

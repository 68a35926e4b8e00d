package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/isamatch/isamatch/internal/buildinfo"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/probe"
)

func TestParseArgs(t *testing.T) {
	defaults := options{hostRoot: "/host", interval: 10 * time.Minute, metricsAddr: ":8080", healthAddr: ":8081",
		execMode: "auto", commandTimeout: 10 * time.Second, execUID: 65534, execGID: 65534, maxOutput: 1 << 20, hwprobe: true, logFormat: "text", metricsSecure: true, metricsAud: "isamatch-metrics",
		probePrograms: "/probes", emuBudget: 2 * time.Minute}
	with := func(f func(*options)) options { o := defaults; f(&o); return o }
	tests := []struct {
		name string
		env  string
		// config is the body of a --config file (none when empty), args
		// the flags besides.
		config  string
		args    []string
		want    options
		wantErr string
	}{
		{name: "node name from NODE_NAME", env: "n1", want: with(func(o *options) { o.nodeName = "n1" })},
		{name: "flag beats env", env: "n1", args: []string{"--node-name", "n2", "--once", "--kubeconfig", "/k"}, config: "hostRoot: /tmp/root",
			want: with(func(o *options) { o.nodeName, o.once, o.hostRoot, o.kubeconfig = "n2", true, "/tmp/root", "/k" })},
		{name: "print needs no node", args: []string{"--print"}, config: "commands: {exec: direct}\nhostRoot: x",
			want: with(func(o *options) { o.print, o.execMode, o.hostRoot = true, "direct", "x" })},
		{name: "interval and addresses", env: "n1", args: []string{"--v=1"}, config: `interval: 30s
metrics: {bindAddress: "0"}
health: {bindAddress: ":9000"}
hwprobe: false`,
			want: with(func(o *options) {
				o.nodeName, o.interval, o.metricsAddr, o.healthAddr, o.hwprobe, o.verbosity = "n1", 30*time.Second, "0", ":9000", false, 1
			})},
		{name: "exec user and output cap", env: "n1", config: "commands: {uid: 1000, gid: 2000, maxOutputBytes: 4096}",
			want: with(func(o *options) { o.nodeName, o.execUID, o.execGID, o.maxOutput = "n1", 1000, 2000, 4096 })},
		{name: "exec uid 0", env: "n1", config: "commands: {uid: 0}", wantErr: "commands.uid: Invalid value: 0: host commands never run as root"},
		{name: "exec gid 0", env: "n1", config: "commands: {gid: 0}", wantErr: "commands.gid: Invalid value: 0: host commands never run as root"},
		{name: "probe programs elsewhere, emulation not probed", env: "n1", config: "emulation: {probePrograms: /opt/probes, budget: 30s}",
			want: with(func(o *options) { o.nodeName, o.probePrograms, o.emuBudget = "n1", "/opt/probes", 30*time.Second })},
		{name: "no probe programs", env: "n1", config: `emulation: {probePrograms: ""}`, want: with(func(o *options) { o.nodeName, o.probePrograms = "n1", "" })},
		{name: "relative probe programs", env: "n1", config: "emulation: {probePrograms: probes}", wantErr: `emulation.probePrograms: Invalid value: "probes": must be an absolute path`},
		{name: "zero emulation budget", env: "n1", config: "emulation: {budget: 0s}", wantErr: `emulation.budget: Invalid value: "0s": must be positive`},
		{name: "zero output cap", env: "n1", config: "commands: {maxOutputBytes: 0}", wantErr: "commands.maxOutputBytes: Invalid value: 0: must be positive"},
		{name: "version needs nothing else", args: []string{"--version"}, want: with(func(o *options) { o.version = true })},
		{name: "prune needs no node", args: []string{"--prune", "--log-format=json"},
			want: with(func(o *options) { o.prune, o.logFormat = true, "json" })},
		{name: "prune and once", env: "n1", args: []string{"--prune", "--once"}, wantErr: "--prune excludes --print and --once"},
		{name: "plain HTTP metrics for local runs", env: "n1", config: "metrics: {secure: false}",
			want: with(func(o *options) { o.nodeName, o.metricsSecure = "n1", false })},
		{name: "no node name", wantErr: "no node name: pass --node-name or set NODE_NAME"},
		{name: "print and once", args: []string{"--print", "--once"}, wantErr: "exclude each other"},
		{name: "bad exec mode", env: "n1", config: "commands: {exec: ssh}", wantErr: `commands.exec: Invalid value: "ssh": not a mode`},
		{name: "zero interval", env: "n1", config: "interval: 0s", wantErr: `interval: Invalid value: "0s": must be positive`},
		{name: "positional argument", env: "n1", args: []string{"extra"}, wantErr: "unexpected arguments"},
		{name: "unknown flag", env: "n1", args: []string{"--nope"}, wantErr: "flag provided but not defined"},
		{name: "removed flag", env: "n1", args: []string{"--print", "--host-root=/"}, wantErr: "flag --host-root was removed: set hostRoot in the file --config names (docs/configuration.md)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NODE_NAME", tc.env)
			args := tc.args
			if tc.config != "" {
				file := writeConfig(t, header+tc.config+"\n")
				args = append([]string{"--config", file}, args...)
				tc.want.configFile = file
			}
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			got, err := parseArgs(fs, args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseArgs() error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseArgs(): %v", err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(options{})); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

// hostRootConfig writes a configuration probing root with host commands
// run directly, as --print on a fixture needs, and returns its path.
func hostRootConfig(t *testing.T, root string) string {
	t.Helper()
	return writeConfig(t, header+"hostRoot: "+root+"\ncommands: {exec: direct}\n")
}

func TestRunPrintAndExitCodes(t *testing.T) {
	lichee := hostRootConfig(t, "../../pkg/probe/testdata/lichee-pi-4a")
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout []string // lines that must appear, in this order
		absent     []string
		wantStderr string
	}{
		{
			name:       "print lichee pi 4a",
			args:       []string{"--print", "--config", lichee},
			wantCode:   exitOK,
			wantStdout: []string{isa.ArchLabel + "=riscv64", isa.NativePrefix + "rv.c=true", isa.NativePrefix + "rv.xtheadvector=true"},
			absent:     []string{isa.NativePrefix + "rv.v=", isa.GroupDomainPrefix},
		},
		{
			name:       "print with a node name shows the group's domain label",
			args:       []string{"--print", "--config", lichee, "--node-name=lpi4a-1"},
			wantCode:   exitOK,
			wantStdout: []string{isa.ArchLabel + "=riscv64", isa.GroupLabel + "=c4bc389a5c", isa.GroupDomainPrefix + "c4bc389a5c=lpi4a-1"},
		},
		{
			name:       "print paper node1 shows the cross ISA",
			args:       []string{"--print", "--config", hostRootConfig(t, "../../pkg/probe/testdata/paper-node1")},
			wantCode:   exitOK,
			wantStdout: []string{isa.ArchLabel + "=amd64", isa.X86LevelLabel + "=3", isa.EmuPrefix + "riscv64=true", isa.EmuPrefix + "rv.v=true"},
		},
		{
			name:       "probe failure",
			args:       []string{"--print", "--config", hostRootConfig(t, "/nonexistent-host-root")},
			wantCode:   exitFail,
			wantStderr: "labeler: probe host root /nonexistent-host-root: read /proc/cpuinfo of the host root",
		},
		{
			name:       "version",
			args:       []string{"--version"},
			wantCode:   exitOK,
			wantStdout: []string{"labeler " + buildinfo.Read().String()},
		},
		{
			name:       "bad log format",
			args:       []string{"--print", "--log-format=yaml"},
			wantCode:   exitUsage,
			wantStderr: `labeler: --log-format="yaml": use text or json`,
		},
		{
			name:       "usage error",
			args:       []string{"--print", "--config", writeConfig(t, header+"commands: {exec: ssh}\n")},
			wantCode:   exitUsage,
			wantStderr: `commands.exec: Invalid value: "ssh": not a mode`,
		},
		{
			name:       "removed flag",
			args:       []string{"--print", "--exec=direct"},
			wantCode:   exitUsage,
			wantStderr: "labeler: flag --exec was removed: set commands.exec in the file --config names (docs/configuration.md)\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runWith(t.Context(), tc.args, &stdout, &stderr)
			if code != tc.wantCode {
				t.Fatalf("exit code %d, want %d; stderr: %s", code, tc.wantCode, stderr.String())
			}
			out := stdout.String()
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if tc.wantCode == exitOK {
				keys := make([]string, len(lines))
				for i, l := range lines {
					keys[i], _, _ = strings.Cut(l, "=")
				}
				if diff := cmp.Diff(sortedCopy(keys), keys); diff != "" {
					t.Errorf("output not sorted by key (-sorted +got):\n%s", diff)
				}
			}
			pos := 0
			for _, want := range tc.wantStdout {
				i := indexFrom(lines, want, pos)
				if i < 0 {
					t.Errorf("stdout lacks %q after line %d:\n%s", want, pos, out)
					continue
				}
				pos = i
			}
			for _, a := range tc.absent {
				if strings.Contains(out, a) {
					t.Errorf("stdout has %q:\n%s", a, out)
				}
			}
			if !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), tc.wantStderr)
			}
		})
	}
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	for i := 1; i < len(c); i++ {
		for j := i; j > 0 && c[j] < c[j-1]; j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
	return c
}

func indexFrom(lines []string, want string, from int) int {
	for i := from; i < len(lines); i++ {
		if lines[i] == want {
			return i
		}
	}
	return -1
}

func TestProbeOptionsRunner(t *testing.T) {
	o := options{hostRoot: "/host", execMode: "auto", commandTimeout: time.Second, execUID: 1000, execGID: 2000, maxOutput: 4096}
	reaper := probe.NewReaper()
	r, ok := o.probeOptions(reaper).Runner.(*probe.ExecRunner)
	if !ok {
		t.Fatalf("runner is not an *ExecRunner")
	}
	var wantCred *probe.Credential
	if os.Geteuid() == 0 {
		wantCred = &probe.Credential{UID: 1000, GID: 2000}
	}
	want := &probe.ExecRunner{Root: "/host", Chroot: true, Credential: wantCred, Timeout: time.Second, MaxOutput: 4096, Reaper: reaper}
	if diff := cmp.Diff(want, r, cmpopts.IgnoreUnexported(probe.Reaper{})); diff != "" {
		t.Errorf("runner (-want +got):\n%s", diff)
	}
}

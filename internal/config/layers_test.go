package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mountConfigMap lays files out in a new directory as the kubelet mounts
// a ConfigMap: the files in a timestamped directory, ..data linking to
// it, and one link per key.
func mountConfigMap(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	ts := filepath.Join(dir, "..2026_11_27_05_00_00.123456789")
	if err := os.Mkdir(ts, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(ts, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Base(ts), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReadDropIns: a mounted ConfigMap's keys in name order, its links
// and other files skipped; too many files is an error naming the limit.
func TestReadDropIns(t *testing.T) {
	dir := mountConfigMap(t, map[string]string{
		"20-b.yaml": webhookHeader, "10-a.yml": webhookHeader, "30-c.json": "{}", "README.md": "#", "notes.txt": "x",
	})
	layers, err := ReadDropIns(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range layers {
		names = append(names, filepath.Base(l.Path))
	}
	if diff := cmp.Diff([]string{"10-a.yml", "20-b.yaml", "30-c.json"}, names); diff != "" {
		t.Errorf("ReadDropIns() (-want +got):\n%s", diff)
	}

	many := map[string]string{}
	for i := range MaxDropIns + 1 {
		many[fmt.Sprintf("%03d.yaml", i)] = webhookHeader
	}
	_, err = ReadDropIns(mountConfigMap(t, many))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d configuration files, more than the %d", MaxDropIns+1, MaxDropIns)) {
		t.Errorf("ReadDropIns(%d files) error = %v, want one naming the count and the limit", MaxDropIns+1, err)
	}
	big := filepath.Join(t.TempDir(), "big")
	if err := os.Mkdir(big, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(big, "x.yaml"), make([]byte, MaxFileBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDropIns(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("ReadDropIns(a file over MaxFileBytes) error = %v, want larger than", err)
	}
}

// TestSource: the last layer that sets a field, through list indexes and
// map keys; "" for a field no layer sets.
func TestSource(t *testing.T) {
	layers := []Layer{
		{Path: "config.yaml", Data: []byte(webhookHeader + "gate:\n  timeout: 45s\nregistry:\n  mirrors: [a=m1]\n")},
		{Path: "10-x.yaml", Data: []byte(webhookHeader + "gate:\n  timeout: 50s\n")},
		{Path: "20-y.yaml", Data: []byte("not: [yaml")},
	}
	for path, want := range map[string]string{
		"gate.timeout":        "10-x.yaml",
		"registry.mirrors[0]": "config.yaml",
		"registry.mirrors":    "config.yaml",
		"gate.workers":        "",
		"server.port":         "",
		"gate[x].timeout":     "10-x.yaml",
	} {
		if got := Source(layers, path); got != want {
			t.Errorf("Source(%q) = %q, want %q", path, got, want)
		}
	}
}

package testbed

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestStage(t *testing.T) {
	t.Setenv(KeepTmpEnv, "")
	var progress bytes.Buffer
	s, err := NewStage("unit", "", &progress)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir); err != nil {
		t.Fatalf("working directory: %v", err)
	}
	if s.RepoRoot == "" {
		t.Error("no repository root")
	}
	done := s.Step("start a part")
	done()
	if got := progress.String(); !strings.HasPrefix(got, "unit: start a part ...\nunit:   done in ") {
		t.Errorf("progress %q", got)
	}

	var order []string
	boom := errors.New("boom")
	s.OnStop(func() error { order = append(order, "first"); return nil })
	s.OnStop(func() error { order = append(order, "second"); return boom })
	s.OnStop(func() error { order = append(order, "third"); return nil })
	if err := s.Stop(); !errors.Is(err, boom) {
		t.Errorf("Stop: %v, want the failing part's error", err)
	}
	if want := []string{"third", "second", "first"}; !slices.Equal(order, want) {
		t.Errorf("stopped %v, want %v (the reverse of the start)", order, want)
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Errorf("temporary directory left after Stop: %v", err)
	}
	if err := s.Stop(); err != nil || len(order) != 3 {
		t.Errorf("second Stop: %v, stops run %v; want nothing run again", err, order)
	}
	var none *Stage
	if err := none.Stop(); err != nil {
		t.Errorf("Stop of a nil stage: %v", err)
	}

	dir := t.TempDir()
	given, err := NewStage("unit", dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := given.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("a directory the caller gave was removed: %v", err)
	}
}

package testbed

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// KeepTmpEnv, set to "true", keeps the temporary directories of stages,
// control planes and registries after Stop, for reading their logs.
const KeepTmpEnv = "ISAMATCH_KEEP_TMP"

// keepTmp reports whether KeepTmpEnv asks to keep temporary directories.
func keepTmp() bool { return os.Getenv(KeepTmpEnv) == "true" }

// Stage is what every local cluster (the demo's, the bench's, the suites')
// is built on: the repository root, a working directory for binaries, logs
// and certificates, one progress line per step, and the parts started so
// far, which Stop stops in the reverse order of their start. A cluster
// starts its parts (control plane, registry, kube-controller-manager,
// webhook...) one step at a time and registers each part's stop as soon as
// the part exists, so a start that fails halfway stops exactly what it
// started.
type Stage struct {
	// RepoRoot is the module root binaries and fixtures come from.
	RepoRoot string
	// Dir holds what the parts write.
	Dir string

	name      string
	progress  io.Writer
	removeDir bool

	mu    sync.Mutex
	stops []func() error
}

// NewStage returns a stage named name (the prefix of its progress lines
// and of its temporary directory). An empty dir means a new temporary
// directory, removed by Stop unless KeepTmpEnv is "true"; progress nil
// discards the progress lines.
func NewStage(name, dir string, progress io.Writer) (*Stage, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	s := &Stage{RepoRoot: root, Dir: dir, name: name, progress: progress}
	if s.progress == nil {
		s.progress = io.Discard
	}
	if s.Dir == "" {
		if s.Dir, err = os.MkdirTemp("", "isamatch-"+name+"-"); err != nil {
			return nil, fmt.Errorf("%s: create working directory: %w", name, err)
		}
		s.removeDir = true
	}
	return s, nil
}

// Step prints what starts now and returns a func that prints how long it
// took.
func (s *Stage) Step(what string) func() {
	start := time.Now()
	fmt.Fprintf(s.progress, "%s: %s ...\n", s.name, what)
	return func() { fmt.Fprintf(s.progress, "%s:   done in %.1fs\n", s.name, time.Since(start).Seconds()) }
}

// OnStop registers stop to run at Stop, before every stop registered
// earlier.
func (s *Stage) OnStop(stop func() error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stops = append(s.stops, stop)
}

// Stop runs the registered stops, the last registered first, each once,
// then removes a temporary directory. It is safe on a nil stage and when
// called again.
func (s *Stage) Stop() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	stops := s.stops
	s.stops = nil
	s.mu.Unlock()
	var errs []error
	for i := len(stops) - 1; i >= 0; i-- {
		errs = append(errs, stops[i]())
	}
	if s.removeDir && !keepTmp() {
		errs = append(errs, os.RemoveAll(s.Dir))
		s.removeDir = false
	}
	return errors.Join(errs...)
}

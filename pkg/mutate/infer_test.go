package mutate

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/pkg/mutate/internal/testnodes"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/isamatch/isamatch/pkg/imageisa"
	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/registry"
)

// fakeInferrer answers what each digest's binary says (binaries, by
// digest: an ISA string, or "" for a binary that records nothing), and
// remembers what it read as imageisa.Platforms does.
type fakeInferrer struct {
	binaries map[string]string
	mu       sync.Mutex
	read     map[string]bool
	scans    []string
}

func (f *fakeInferrer) result(p registry.Platform) imageisa.Result {
	r := imageisa.Result{Entrypoint: "app", Path: "/usr/bin/app"}
	if s := f.binaries[p.Digest]; s != "" {
		i, err := isa.Parse(s)
		if err != nil {
			panic("test binary ISA " + s + ": " + err.Error())
		}
		r.ISA = &i
	}
	return r
}

func (f *fakeInferrer) Cached(_ string, p registry.Platform) (imageisa.Result, error, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.read[p.Digest] {
		return imageisa.Result{}, nil, false
	}
	return f.result(p), nil, true
}

func (f *fakeInferrer) Infer(_ context.Context, _ string, _ registry.PullAuth, p registry.Platform) (imageisa.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scans = append(f.scans, p.Digest)
	f.read[p.Digest] = true
	return f.result(p), nil
}

// elfImages are images that say nothing but through their binaries: the
// paper's three riscv64 tasks, a multi-platform image whose riscv64 binary
// needs V, a labelled one, one with a variant and one whose binary records
// nothing.
func elfImages() map[string]fakeImage {
	p := func(arch, variant, label, digest string) registry.Platform {
		return registry.Platform{OS: "linux", Architecture: arch, Variant: variant, ISARequest: label, Digest: digest}
	}
	return map[string]fakeImage{
		"imfd:1":     {platforms: []registry.Platform{p("riscv64", "", "", "sha256:imfd")}},
		"imfdv:1":    {platforms: []registry.Platform{p("riscv64", "", "", "sha256:imfdv")}},
		"gcv:1":      {platforms: []registry.Platform{p("riscv64", "", "", "sha256:gcv")}},
		"multi:1":    {platforms: []registry.Platform{p("amd64", "", "", "sha256:amd64"), p("riscv64", "", "", "sha256:imfdv")}},
		"labelled:1": {platforms: []registry.Platform{p("riscv64", "", "rv64imfd", "sha256:imfdv")}},
		"variant:1":  {platforms: []registry.Platform{p("riscv64", "rva23u64", "", "sha256:imfd")}},
		"silent:1":   {platforms: []registry.Platform{p("riscv64", "", "", "sha256:silent")}},
	}
}

func elfBinaries() map[string]string {
	return map[string]string{"sha256:imfd": "rv64imfd", "sha256:imfdv": "rv64imfdv", "sha256:gcv": "rv64gcv_zba_zbb", "sha256:amd64": "x86-64-v3"}
}

// TestInferredRequirements: in gate mode the gate controller reads each
// platform that says nothing itself, and the released pod is placed as if
// the image carried the binary's -march as its label; a pod's request, a
// label or a variant wins and nothing is read for them.
func TestInferredRequirements(t *testing.T) {
	nodes := testnodes.Paper(t)
	tests := []struct {
		name        string
		image       string
		request     string
		wantNodes   []string // nodes the required affinity admits
		wantBest    []string // nodes of the highest preferred score
		wantScans   []string
		wantSummary string // in the release's Event
		wantCount   int    // contract.DecisionCounts.Inferred
	}{
		{name: "rv64imfd binary", image: "imfd:1", wantNodes: []string{"node3", "node4", "node5", "node6"}, wantBest: []string{"node3"},
			wantScans: []string{"sha256:imfd"}, wantSummary: "linux/riscv64 needs rv64imfd", wantCount: 1},
		{name: "rv64imfdv binary", image: "imfdv:1", wantNodes: []string{"node4", "node5", "node6"}, wantBest: []string{"node5", "node6"},
			wantScans: []string{"sha256:imfdv"}, wantSummary: "linux/riscv64 needs rv64imfdv (ELF of /usr/bin/app)", wantCount: 1},
		{name: "rv64gcv_zba_zbb binary fits no node", image: "gcv:1", wantNodes: nil,
			wantScans: []string{"sha256:gcv"}, wantSummary: "(ELF of /usr/bin/app)", wantCount: 1},
		{name: "multi-platform image: each platform its binary", image: "multi:1", wantNodes: []string{"node1", "node4", "node5", "node6"},
			wantScans: []string{"sha256:amd64", "sha256:imfdv"}, wantSummary: "linux/amd64 needs x86-64-v3 (ELF of /usr/bin/app)", wantCount: 2},
		{name: "the pod's request wins: nothing read", image: "imfdv:1", request: "rv64imfd",
			wantNodes: []string{"node3", "node4", "node5", "node6"}, wantBest: []string{"node3"}, wantSummary: `request="rv64imfd"`},
		{name: "an image label wins: nothing read", image: "labelled:1", wantNodes: []string{"node3", "node4", "node5", "node6"},
			wantBest: []string{"node3"}, wantSummary: `needs "rv64imfd" (image label)`},
		{name: "a variant wins: nothing read", image: "variant:1", wantSummary: "[linux/riscv64/rva23u64]"},
		{name: "a binary that records nothing: the architecture alone", image: "silent:1",
			wantNodes: []string{"node3", "node4", "node5", "node6", "node7"}, wantScans: []string{"sha256:silent"}, wantSummary: "[linux/riscv64]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inf := &fakeInferrer{binaries: elfBinaries(), read: map[string]bool{}}
			res := &fakeResolver{images: elfImages()}
			m := NewPodMutator(res, inventory.NewStatic(nodes), Options{Resolve: ResolveGate, Infer: inf})
			ps := podSpec{images: []string{tc.image}}
			if tc.request != "" {
				ps.annotations = map[string]string{isa.BareRequestAnnotation: tc.request}
			}
			_, got, rel, ok := release(t, m, ps.pod())
			if !ok {
				t.Fatal("denied at admission")
			}
			if diff := cmp.Diff(tc.wantScans, sorted(inf.scans)); diff != "" {
				t.Errorf("binaries read (-want +got):\n%s", diff)
			}
			if tc.wantNodes != nil || tc.wantCount > 0 {
				var admitted []string
				for n, l := range nodes {
					if testnodes.Admits(got, n, l) {
						admitted = append(admitted, n)
					}
				}
				if diff := cmp.Diff(tc.wantNodes, sorted(admitted)); diff != "" {
					t.Errorf("nodes admitted (-want +got):\n%s", diff)
				}
			}
			if tc.wantBest != nil {
				if diff := cmp.Diff(tc.wantBest, best(testnodes.Placement(got, nodes))); diff != "" {
					t.Errorf("best nodes (-want +got):\n%s", diff)
				}
			}
			if !strings.Contains(rel.Message, tc.wantSummary) {
				t.Errorf("release event %q does not say %q", rel.Message, tc.wantSummary)
			}
			if c := counts(t, got); c.Inferred != tc.wantCount {
				t.Errorf("decision counts inferred = %d, want %d", c.Inferred, tc.wantCount)
			}
		})
	}
}

// TestInferenceNeverInAdmission: admission never reads a binary. In auto
// mode a pod whose platforms are cached but whose binaries were never read
// is gated; once the gate controller has read them, the next pod is
// answered at once from what was read. Sync mode never infers.
func TestInferenceNeverInAdmission(t *testing.T) {
	inf := &fakeInferrer{binaries: elfBinaries(), read: map[string]bool{}}
	fake := cachingFake{fakeResolver: &fakeResolver{images: elfImages()}, cached: map[string]bool{"imfdv:1": true}}
	nodes := testnodes.Paper(t)
	m := NewPodMutator(fake, inventory.NewStatic(nodes), Options{Resolve: ResolveAuto, Infer: inf})
	pod := podSpec{images: []string{"imfdv:1"}}.pod()

	_, released, _, ok := release(t, m, pod) // fails unless gated
	if !ok {
		t.Fatal("denied")
	}
	if diff := cmp.Diff([]string{"sha256:imfdv"}, inf.scans); diff != "" {
		t.Fatalf("binaries read by the release (-want +got):\n%s", diff)
	}
	req := admissionRequest(t, pod)
	resp := m.Handle(t.Context(), req)
	got := applyPatch(t, req, resp)
	if engine.HasGate(got.Spec.SchedulingGates) {
		t.Fatal("second pod gated, want it answered from what the release read")
	}
	if len(inf.scans) != 1 {
		t.Errorf("admission read binaries: %v", inf.scans)
	}
	if diff := cmp.Diff(testnodes.Placement(released, nodes), testnodes.Placement(got, nodes)); diff != "" {
		t.Errorf("admitted pod placed unlike the released one (-released +admitted):\n%s", diff)
	}

	sync := NewPodMutator(fake, inventory.NewStatic(nodes), Options{Resolve: ResolveSync, Infer: inf})
	req = admissionRequest(t, pod)
	got = applyPatch(t, req, sync.Handle(t.Context(), req))
	if c := counts(t, got); c.Inferred != 0 {
		t.Errorf("sync mode used %d inferred platforms, want none", c.Inferred)
	}
}

func sorted(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// best lists the nodes of the highest score in p.
func best(p map[string]int32) []string {
	var top int32 = -1
	var out []string
	for n, s := range p {
		switch {
		case s > top:
			top, out = s, []string{n}
		case s == top:
			out = append(out, n)
		}
	}
	return sorted(out)
}

// unreachableRegistry is an imageisa.Registry whose every read fails.
type unreachableRegistry struct {
	mu    sync.Mutex
	reads int
}

func (u *unreachableRegistry) Image(context.Context, string, registry.PullAuth, registry.Platform, int64) (v1.Image, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.reads++
	return nil, errors.New("dial tcp 10.0.0.1:443: connect: connection refused")
}

// TestFailedReadAdmitsUngated: in auto mode, once the gate controller's
// read of an image failed for a passing reason, pods of that image are
// admitted without the gate (placed on the architecture alone) and nothing
// is read, until the inferrer's RetryAfter has passed; then one pod is
// gated and its release reads again.
func TestFailedReadAdmitsUngated(t *testing.T) {
	type step struct {
		at        time.Duration // on the inferrer's clock
		wantGated bool
		wantReads int // after the release of a gated pod
	}
	tests := []struct {
		name       string
		retryAfter time.Duration
		steps      []step
	}{
		{name: "default RetryAfter", steps: []step{
			{0, true, 1}, {time.Second, false, 1}, {59 * time.Second, false, 1}, {61 * time.Second, true, 2}, {90 * time.Second, false, 2},
		}},
		{name: "failures not remembered", retryAfter: -1, steps: []step{
			{0, true, 1}, {time.Second, true, 2}, {2 * time.Second, true, 3},
		}},
	}
	dg := "sha256:" + strings.Repeat("ab", 32)
	images := map[string]fakeImage{"flaky:1": {platforms: []registry.Platform{{OS: "linux", Architecture: "riscv64", Digest: dg}}}}
	nodes := testnodes.Paper(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			var mu sync.Mutex
			now := start
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			reg := &unreachableRegistry{}
			ps := imageisa.NewPlatforms(imageisa.NewInferrer(imageisa.Options{CacheBytes: 1 << 20, RetryAfter: tc.retryAfter, Now: clock}), reg)
			fake := cachingFake{fakeResolver: &fakeResolver{images: images}, cached: map[string]bool{"flaky:1": true}}
			m := NewPodMutator(fake, inventory.NewStatic(nodes), Options{Resolve: ResolveAuto, Infer: ps})
			pod := podSpec{images: []string{"flaky:1"}}.pod()
			for i, s := range tc.steps {
				mu.Lock()
				now = start.Add(s.at)
				mu.Unlock()
				req := admissionRequest(t, pod)
				got := applyPatch(t, req, m.Handle(t.Context(), req))
				gated := engine.HasGate(got.Spec.SchedulingGates)
				if gated != s.wantGated {
					t.Errorf("step %d at %s: gated %t, want %t", i, s.at, gated, s.wantGated)
				}
				if gated {
					m.ReleaseGated(t.Context(), got, true)
					if engine.HasGate(got.Spec.SchedulingGates) {
						t.Fatalf("step %d: released pod still carries the gate", i)
					}
				}
				if c := counts(t, got); c.Inferred != 0 {
					t.Errorf("step %d: %d inferred platforms, want none", i, c.Inferred)
				}
				reg.mu.Lock()
				reads := reg.reads
				reg.mu.Unlock()
				if reads != s.wantReads {
					t.Errorf("step %d at %s: %d image reads, want %d", i, s.at, reads, s.wantReads)
				}
			}
		})
	}
}

// blockingInferrer reads nothing until ctx ends, as a read still streaming
// an image's layers.
type blockingInferrer struct{}

func (blockingInferrer) Cached(string, registry.Platform) (imageisa.Result, error, bool) {
	return imageisa.Result{}, nil, false
}

func (blockingInferrer) Infer(ctx context.Context, _ string, _ registry.PullAuth, _ registry.Platform) (imageisa.Result, error) {
	<-ctx.Done()
	return imageisa.Result{}, ctx.Err()
}

// TestReleasePendingOnACutRead: a release whose ELF read the context cut
// short is pending, and leaves the pod as it was, rather than releasing
// the pod on the architecture alone while the read goes on; from the cache
// alone (past the bound) it is released without the requirement.
func TestReleasePendingOnACutRead(t *testing.T) {
	res := cachingFake{fakeResolver: &fakeResolver{images: elfImages()}, cached: map[string]bool{"imfd:1": true}}
	m := NewPodMutator(res, inventory.NewStatic(testnodes.Paper(t)), Options{Resolve: ResolveGate, Infer: blockingInferrer{}})
	pod := podSpec{images: []string{"imfd:1"}}.pod()
	pod.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: isa.ResolveGate}}
	before := pod.DeepCopy()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if rel := m.ReleaseGated(ctx, pod, true); !rel.Pending {
		t.Errorf("release %+v, want pending", rel)
	}
	if diff := cmp.Diff(before, pod); diff != "" {
		t.Errorf("a pending release changed the pod (-want +got):\n%s", diff)
	}
	if rel := m.ReleaseGated(t.Context(), pod, false); rel.Pending || rel.Reason != ReleaseResolved {
		t.Errorf("release from the cache %+v, want reason %q", rel, ReleaseResolved)
	}
	if c := counts(t, pod); c.Inferred != 0 {
		t.Errorf("%d inferred platforms, want none", c.Inferred)
	}
}

package mutate

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/registry"
)

// fakeImage is what the fake resolver answers for one reference.
type fakeImage struct {
	platforms []registry.Platform
	err       error
	block     bool // wait for the context to end
}

// fakeResolver is an in-memory ImageResolver.
type fakeResolver struct {
	images map[string]fakeImage
	calls  atomic.Int64
	mu     sync.Mutex
	auths  []registry.PullAuth
}

func (f *fakeResolver) Resolve(ctx context.Context, ref string, auth registry.PullAuth) ([]registry.Platform, error) {
	f.calls.Add(1)
	f.mu.Lock()
	f.auths = append(f.auths, auth)
	f.mu.Unlock()
	img, ok := f.images[ref]
	if !ok {
		return nil, &registry.Error{Kind: "notFound", Ref: ref, Err: errNotFound}
	}
	if img.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return img.platforms, img.err
}

type constErr string

func (e constErr) Error() string { return string(e) }

const errNotFound = constErr("manifest unknown")

func plat(s ...string) []registry.Platform {
	var out []registry.Platform
	for _, p := range s {
		var os, arch, variant string
		parts := strings.SplitN(p, "/", 3)
		os, arch = parts[0], parts[1]
		if len(parts) == 3 {
			variant = parts[2]
		}
		out = append(out, registry.Platform{OS: os, Architecture: arch, Variant: variant})
	}
	return out
}

// testImages is the registry every handler test sees.
func testImages() map[string]fakeImage {
	return map[string]fakeImage{
		"amd64:1":   {platforms: plat("linux/amd64")},
		"amd64v3:1": {platforms: plat("linux/amd64/v3")},
		"arm64:1":   {platforms: plat("linux/arm64")},
		"riscv:1":   {platforms: plat("linux/riscv64")},
		"rva23:1":   {platforms: plat("linux/riscv64/rva23u64")},
		"multi:1":   {platforms: plat("linux/amd64", "linux/arm64", "linux/riscv64", "unknown/unknown")},
		"armv7:1":   {platforms: plat("linux/arm/v7")},
		"mixed:1":   {platforms: plat("linux/arm/v7", "linux/s390x", "linux/amd64")},
		"labelled:1": {platforms: []registry.Platform{
			{OS: "linux", Architecture: "riscv64", ISARequest: "rv64imfdv"},
			{OS: "linux", Architecture: "amd64"},
		}},
		"badlabel:1": {platforms: []registry.Platform{{OS: "linux", Architecture: "riscv64", ISARequest: "rv64q!"}}},
		"private:1":  {err: &registry.Error{Kind: "unauthorized", Ref: "private:1", Err: constErr("401 Unauthorized")}},
		"slow:1":     {block: true},
	}
}

// podSpec describes a test pod.
type podSpec struct {
	ns           string
	annotations  map[string]string
	labels       map[string]string
	images       []string
	initImages   []string
	nodeName     string
	affinity     *corev1.NodeAffinity
	secrets      []string
	sa           string
	nodeSelector map[string]string
}

func (p podSpec) pod() *corev1.Pod {
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: p.ns, Annotations: p.annotations, Labels: p.labels},
		Spec:       corev1.PodSpec{NodeName: p.nodeName, ServiceAccountName: p.sa, NodeSelector: p.nodeSelector},
	}
	if pod.Namespace == "" {
		pod.Namespace = "default"
	}
	for k, img := range p.images {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "c" + strconv.Itoa(k), Image: img})
	}
	for k, img := range p.initImages {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Name: "i" + strconv.Itoa(k), Image: img})
	}
	for _, s := range p.secrets {
		pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
	}
	if p.affinity != nil {
		pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: p.affinity}
	}
	return pod
}

// Handle serves Admit as cmd/webhook does (a controller-runtime
// admission.Response carrying its AdmissionResponse), with the JSON patch
// decoded into Patches, as the tests read it.
func (p *PodMutator) Handle(ctx context.Context, req admission.Request) admission.Response {
	resp := admission.Response{AdmissionResponse: p.Admit(ctx, &req.AdmissionRequest)}
	if len(resp.Patch) > 0 {
		if err := json.Unmarshal(resp.Patch, &resp.Patches); err != nil {
			panic(fmt.Sprintf("Admit's patch %s: %v", resp.Patch, err))
		}
		resp.Patch = nil
	}
	return resp
}

// admissionRequest wraps a pod as the API server sends it.
func admissionRequest(t testing.TB, pod *corev1.Pod) admission.Request {
	t.Helper()
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	return rawRequest(pod.Namespace, raw)
}

func rawRequest(ns string, raw []byte) admission.Request {
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID:       "uid",
		Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
		Namespace: ns,
		Operation: admissionv1.Create,
		Object:    runtime.RawExtension{Raw: raw},
	}}
}

// summaryOf is the readable line of the decision admission makes for req:
// what the pod's IsamatchDecided Event carries (the pod stores only the
// numbers). It decides again, as Handle does.
func summaryOf(t testing.TB, m *PodMutator, req admission.Request) string {
	t.Helper()
	pod := &podFields{}
	if err := decodePod(req.Object.Raw, pod); err != nil {
		t.Fatal(err)
	}
	d, _ := m.decide(t.Context(), req.Namespace, pod)
	return d.Summary
}

// stored is the decision stored on pod; the test fails when it is not
// one line of JSON of at most maxStored bytes.
func stored(t testing.TB, pod *corev1.Pod) contract.DecisionCounts {
	t.Helper()
	raw := pod.Annotations[isa.DecisionAnnotation]
	if len(raw) > maxStored || strings.ContainsAny(raw, "\n\r") || !strings.HasPrefix(raw, "{") {
		t.Errorf("decision annotation %q: want one line of JSON of at most %d bytes", raw, maxStored)
	}
	if _, ok := pod.Annotations[isa.DecisionCountsAnnotation]; ok {
		t.Errorf("the earlier decision-counts annotation is still written")
	}
	c, err := contract.ParseDecision(pod.Annotations)
	if err != nil {
		t.Fatalf("decision annotation %q: %v", raw, err)
	}
	return c
}

// maxStored is what a test accepts as the size of a stored decision with
// no unresolved image.
const maxStored = 160

// applyPatch returns the pod the API server would store.
func applyPatch(t testing.TB, req admission.Request, resp admission.Response) *corev1.Pod {
	t.Helper()
	raw := req.Object.Raw
	if len(patchJSON(t, resp)) > 0 {
		raw = applyRaw(t, raw, resp)
	}
	pod := &corev1.Pod{}
	if err := json.Unmarshal(raw, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// patchJSON is the response's JSON patch as the API server receives it:
// Patch, or Patches encoded as Response.Complete encodes them.
func patchJSON(t testing.TB, resp admission.Response) []byte {
	t.Helper()
	if len(resp.Patches) == 0 {
		return resp.Patch
	}
	if len(resp.Patch) > 0 {
		t.Fatalf("response has both Patch and Patches")
	}
	b, err := json.Marshal(resp.Patches)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// applyRaw applies the response's JSON patch to a raw object.
func applyRaw(t testing.TB, raw []byte, resp admission.Response) []byte {
	t.Helper()
	ops := patchJSON(t, resp)
	patch, err := jsonpatch.DecodePatch(ops)
	if err != nil {
		t.Fatal(err)
	}
	out, err := patch.Apply(raw)
	if err != nil {
		t.Fatalf("apply %s: %v", ops, err)
	}
	return out
}

package mutate

import (
	"context"
	"encoding/json"
	"slices"
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

// nodeLabels is what the labeler and kubelet put on a node.
func nodeLabels(t testing.TB, arch, native string, emulated ...string) map[string]string {
	t.Helper()
	l := map[string]string{isa.KubeArchLabel: arch}
	if native == "" {
		return l
	}
	emu := make([]isa.ISA, 0, len(emulated))
	for _, e := range emulated {
		emu = append(emu, mustISA(t, e))
	}
	for k, v := range isa.NodeLabels(mustISA(t, native), emu) {
		l[k] = v
	}
	return l
}

// qemuNodeLabels is nodeLabels of a node that executes each emulated ISA's
// programs through a QEMU handler (not a cross compiler alone).
func qemuNodeLabels(t testing.TB, arch, native string, emulated ...string) map[string]string {
	t.Helper()
	l := nodeLabels(t, arch, native, emulated...)
	for _, e := range emulated {
		l[isa.EmuExecLabel(mustISA(t, e).Arch)] = "true"
	}
	return l
}

func mustISA(t testing.TB, s string) isa.ISA {
	t.Helper()
	i, err := isa.Parse(s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return i
}

// paperCluster is the paper's Table 1, plus an unlabelled riscv64 node and
// a second IMFD node, so group sizes differ.
func paperCluster(t testing.TB) map[string]map[string]string {
	t.Helper()
	return map[string]map[string]string{
		"node1": nodeLabels(t, "amd64", "x86-64-v3", "rv64imfdv"),
		"node2": nodeLabels(t, "arm64", "arm64"),
		"node3": nodeLabels(t, "riscv64", "rv64imfd"),
		"node4": nodeLabels(t, "riscv64", "rv64imafdcv"),
		"node5": nodeLabels(t, "riscv64", "rv64imfdv"),
		"node6": nodeLabels(t, "riscv64", "rv64imfdv"),
		"node7": nodeLabels(t, "riscv64", ""),
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

// The node-affinity semantics of the scheduler, written out for tests.

func matchReq(r corev1.NodeSelectorRequirement, labels map[string]string) bool {
	v, ok := labels[r.Key]
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		return ok && slices.Contains(r.Values, v)
	case corev1.NodeSelectorOpNotIn:
		return !ok || !slices.Contains(r.Values, v)
	case corev1.NodeSelectorOpExists:
		return ok
	case corev1.NodeSelectorOpDoesNotExist:
		return !ok
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !ok || len(r.Values) != 1 {
			return false
		}
		n, err1 := strconv.ParseInt(v, 10, 64)
		w, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if r.Operator == corev1.NodeSelectorOpGt {
			return n > w
		}
		return n < w
	}
	return false
}

func matchTerm(t corev1.NodeSelectorTerm, name string, labels map[string]string) bool {
	if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
		return false
	}
	for _, r := range t.MatchExpressions {
		if !matchReq(r, labels) {
			return false
		}
	}
	for _, r := range t.MatchFields {
		if r.Key != "metadata.name" || !matchReq(corev1.NodeSelectorRequirement{Key: r.Key, Operator: r.Operator, Values: r.Values}, map[string]string{"metadata.name": name}) {
			return false
		}
	}
	return true
}

// admits reports whether the pod's nodeSelector and required node affinity
// admit the node.
func admits(pod *corev1.Pod, name string, labels map[string]string) bool {
	for k, v := range pod.Spec.NodeSelector {
		if l, ok := labels[k]; !ok || l != v {
			return false
		}
	}
	if pod.Spec.Affinity == nil || pod.Spec.Affinity.NodeAffinity == nil || pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, t := range pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if matchTerm(t, name, labels) {
			return true
		}
	}
	return false
}

// score is the NodeAffinity plugin's raw score: the sum of the weights of
// the preferred terms the node matches.
func score(pod *corev1.Pod, name string, labels map[string]string) int32 {
	if pod.Spec.Affinity == nil || pod.Spec.Affinity.NodeAffinity == nil {
		return 0
	}
	var s int32
	for _, p := range pod.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		if matchTerm(p.Preference, name, labels) {
			s += p.Weight
		}
	}
	return s
}

// placement lists, for the nodes the pod's required affinity admits, the
// raw preferred score.
func placement(pod *corev1.Pod, nodes map[string]map[string]string) map[string]int32 {
	out := map[string]int32{}
	for name, l := range nodes {
		if admits(pod, name, l) {
			out[name] = score(pod, name, l)
		}
	}
	return out
}

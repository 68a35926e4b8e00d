package mutate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/isamatch/isamatch/pkg/inventory"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/registry"
)

// Pod annotations and labels isamatch reads and writes.
const (
	RequestAnnotation  = "isa.request"
	QEMUAnnotation     = "isa.qemu"
	RequestLabel       = "ARCH"
	QEMULabel          = "QEMU"
	DecisionAnnotation = isa.NativePrefix + "decision"
	IgnoreLabel        = isa.NativePrefix + "ignore"
	MirrorAnnotation   = corev1.MirrorPodAnnotationKey
)

// Grammar is the accepted request syntax, quoted in denials.
const Grammar = `one or more ISAs separated by "|", each a RISC-V ISA string or profile (rv64gc, rv64imafdcv_zba, RV64IMFDV, rva23u64), ` +
	`an x86-64 level with optional +features (x86-64-v3, x86-64-v2+avx512vnni, amd64) or arm64 with optional +features (arm64+sve2)`

// ImageResolver returns the platforms an image reference is built for. It
// must return soon after ctx ends: the admission time budget is ctx's
// deadline.
type ImageResolver interface {
	Resolve(ctx context.Context, ref string, auth registry.PullAuth) ([]registry.Platform, error)
}

// cachedResolver is implemented by resolvers that can answer from memory
// without blocking (registry.Resolver): a pod whose images are all cached
// is then resolved without a goroutine or a timer.
type cachedResolver interface {
	Cached(ref string, auth registry.PullAuth) (platforms []registry.Platform, ok bool, err error)
}

// ImageResolverFunc adapts a function to ImageResolver.
type ImageResolverFunc func(ctx context.Context, ref string, auth registry.PullAuth) ([]registry.Platform, error)

// Resolve calls f.
func (f ImageResolverFunc) Resolve(ctx context.Context, ref string, auth registry.PullAuth) ([]registry.Platform, error) {
	return f(ctx, ref, auth)
}

// Inventory provides the current node inventory.
type Inventory interface {
	Snapshot() *inventory.Snapshot
}

// PodMutator is the admission handler that writes node affinity.
type PodMutator struct {
	res  ImageResolver
	inv  Inventory
	opts Options
	m    *Matcher
	// patches remembers the patch of recent projection pairs.
	patches *patchMemo
}

var _ admission.Handler = (*PodMutator)(nil)

// errBudget marks an image whose resolution did not finish in the budget.
var errBudget = errors.New("registry lookup exceeded the admission time budget")

// NewPodMutator returns a handler resolving images with res and ranking
// nodes from inv.
func NewPodMutator(res ImageResolver, inv Inventory, opts Options) *PodMutator {
	return &PodMutator{
		res:     res,
		inv:     inv,
		opts:    opts.withDefaults(),
		m:       NewMatcher(),
		patches: newPatchMemo(),
	}
}

// Handle implements admission.Handler. A mutation's JSON patch is in the
// response's Patches, or, when the same patch was made recently (a
// workload's replicas), already encoded in Patch with PatchType set;
// Response.Complete accepts both.
func (p *PodMutator) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Kind.Group != "" || req.Kind.Kind != "Pod" {
		return p.skip("not a pod")
	}
	if req.Operation != admissionv1.Create {
		return p.skip("only pod creation is mutated")
	}
	// Only the fields isamatch reads are decoded; the rest of the pod is
	// skipped, and left alone by the patch (see patchedFields).
	pod := &podFields{}
	if err := decodePod(req.Object.Raw, pod); err != nil {
		p.opts.Metrics.decision("error")
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode pod: %w", err))
	}
	ns := req.Namespace
	if ns == "" {
		ns = pod.Namespace
	}
	switch {
	case pod.Spec.NodeName != "":
		return p.skip("pod already names a node")
	case pod.Annotations[MirrorAnnotation] != "":
		return p.skip("mirror pod")
	case slices.Contains(p.opts.SkipNamespaces, ns):
		return p.skip("namespace " + ns + " is skipped")
	case pod.Labels[IgnoreLabel] == "true":
		return p.skip("pod opted out with " + IgnoreLabel + "=true")
	}
	name := pod.Name
	if name == "" {
		name = pod.GenerateName
	}
	log := ctrl.LoggerFrom(ctx).WithValues("pod", klog.KRef(ns, name))

	in, msg := podInput(pod)
	if msg != "" {
		log.V(1).Info("denied malformed request", "reason", msg)
		p.opts.Metrics.decision("denied")
		return admission.Denied(msg)
	}
	in.Images = p.resolve(ctx, ns, pod)
	for _, img := range in.Images {
		if img.Err != nil {
			p.opts.Metrics.imageError(errorKind(img.Err))
			log.Info("image platforms unknown", "image", img.Ref, "error", img.Err.Error())
		}
	}

	d := p.m.Decide(in, p.inv.Snapshot())
	if d.Denied != "" {
		log.V(1).Info("denied", "reason", d.Denied)
		p.opts.Metrics.decision("denied")
		return admission.Denied(d.Denied)
	}
	before, err := json.Marshal(patchedFields(pod))
	if err != nil {
		p.opts.Metrics.decision("error")
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("marshal pod: %w", err))
	}
	na := &corev1.NodeAffinity{}
	if pod.Spec.Affinity != nil && pod.Spec.Affinity.NodeAffinity != nil {
		na = pod.Spec.Affinity.NodeAffinity.DeepCopy()
	}
	required, err := mergeRequired(na.RequiredDuringSchedulingIgnoredDuringExecution, d.Required, p.opts.MaxRequiredTerms)
	if err != nil {
		log.V(1).Info("denied", "reason", err.Error())
		p.opts.Metrics.decision("denied")
		return admission.Denied(err.Error())
	}
	if len(d.Required) > 0 && excludesAll(pod.Spec.NodeSelector, required) {
		var sel []string
		for k, v := range pod.Spec.NodeSelector {
			sel = append(sel, k+"="+v)
		}
		slices.Sort(sel)
		msg := fmt.Sprintf("the pod's spec.nodeSelector %s excludes every node isamatch allows (%s); remove or change it", strings.Join(sel, ","), d.RequiredText)
		log.V(1).Info("denied", "reason", msg)
		p.opts.Metrics.decision("denied")
		return admission.Denied(msg)
	}
	na.RequiredDuringSchedulingIgnoredDuringExecution = required
	na.PreferredDuringSchedulingIgnoredDuringExecution = mergePreferred(na.PreferredDuringSchedulingIgnoredDuringExecution, d.Preferred)
	if na.RequiredDuringSchedulingIgnoredDuringExecution != nil || len(na.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
		if pod.Spec.Affinity == nil {
			pod.Spec.Affinity = &corev1.Affinity{}
		}
		pod.Spec.Affinity.NodeAffinity = na
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[DecisionAnnotation] = d.Summary

	after, err := json.Marshal(patchedFields(pod))
	if err != nil {
		p.opts.Metrics.decision("error")
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("marshal pod: %w", err))
	}
	warnings := make([]string, 0, len(d.Warnings))
	for _, w := range d.Warnings {
		p.opts.Metrics.warning(w.Reason)
		warnings = append(warnings, truncate("isamatch: "+w.Text, maxWarning))
	}
	resp := p.patches.response(before, after)
	if resp.Result != nil {
		p.opts.Metrics.decision("error")
		return resp
	}
	if len(resp.Patch) == 0 && len(resp.Patches) == 0 {
		p.opts.Metrics.decision("unchanged")
	} else {
		p.opts.Metrics.decision("mutated")
	}
	log.V(1).Info("decided", "requiredTerms", len(d.Required), "preferredTerms", len(d.Preferred),
		"matchingNodes", d.MatchingNodes, "warnings", len(d.Warnings))
	return resp.WithWarnings(warnings...)
}

// podFields is what the webhook reads of a pod: its metadata and the few
// fields of its spec that decide or constrain placement.
type podFields struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		NodeName           string                        `json:"nodeName"`
		NodeSelector       map[string]string             `json:"nodeSelector"`
		ServiceAccountName string                        `json:"serviceAccountName"`
		ImagePullSecrets   []corev1.LocalObjectReference `json:"imagePullSecrets"`
		InitContainers     []containerImage              `json:"initContainers"`
		Containers         []containerImage              `json:"containers"`
		Affinity           *corev1.Affinity              `json:"affinity"`
	} `json:"spec"`
}

type containerImage struct {
	Image string `json:"image"`
}

// decodePod decodes an admission request's pod as the API machinery's JSON
// serializer does (sigs.k8s.io/json: case-sensitive, integers kept). The
// fields podFields does not name, most of a real pod, are skipped.
func decodePod(raw []byte, pod *podFields) error {
	if len(raw) == 0 {
		return errors.New("there is no content to decode")
	}
	return utiljson.Unmarshal(raw, pod)
}

// patchedFields is the part of a pod the webhook may change: the decision
// annotation and the node affinity. The patch is the difference of this
// projection before and after the decision, so it names only those paths:
// the pod's other annotations, its pod (anti-)affinity and every field of
// it this webhook does not know (a newer API server's) are never touched,
// and no copy of the whole pod is parsed again.
func patchedFields(pod *podFields) any {
	type metadata struct {
		// A pointer: the pod's annotations exist but hold no decision yet
		// is {}, so the patch adds one key instead of replacing the map.
		Annotations *map[string]string `json:"annotations,omitempty"`
	}
	type affinity struct {
		NodeAffinity *corev1.NodeAffinity `json:"nodeAffinity,omitempty"`
	}
	type spec struct {
		Affinity *affinity `json:"affinity,omitempty"`
	}
	var out struct {
		Metadata metadata `json:"metadata"`
		Spec     spec     `json:"spec"`
	}
	if pod.Annotations != nil {
		ours := map[string]string{}
		if v, ok := pod.Annotations[DecisionAnnotation]; ok {
			ours[DecisionAnnotation] = v
		}
		out.Metadata.Annotations = &ours
	}
	if pod.Spec.Affinity != nil {
		out.Spec.Affinity = &affinity{pod.Spec.Affinity.NodeAffinity}
	}
	return out
}

func (p *PodMutator) skip(reason string) admission.Response {
	p.opts.Metrics.decision("skipped")
	return admission.Allowed(reason)
}

// podInput reads the pod's requests; msg is a denial for malformed ones.
func podInput(pod *podFields) (in Input, msg string) {
	parse := func(annotation, label string) (*isa.Request, string, string, string) {
		from, text := "annotation "+annotation, pod.Annotations[annotation]
		if _, ok := pod.Annotations[annotation]; !ok {
			v, ok := pod.Labels[label]
			if !ok {
				return nil, "", "", ""
			}
			from, text = "label "+label, v
		}
		r, err := isa.ParseRequest(text)
		if err != nil {
			return nil, from, text, fmt.Sprintf("%s %q is malformed: %v; accepted: %s", from, text, err, Grammar)
		}
		return &r, from, text, ""
	}
	in.Request, in.RequestFrom, in.RequestText, msg = parse(RequestAnnotation, RequestLabel)
	if msg != "" {
		return in, msg
	}
	in.QEMU, in.QEMUFrom, in.QEMUText, msg = parse(QEMUAnnotation, QEMULabel)
	return in, msg
}

// resolve looks up every distinct image of the pod's containers and init
// containers in parallel, within the budget; lookups still running when it
// ends are reported as errBudget.
func (p *PodMutator) resolve(ctx context.Context, ns string, pod *podFields) []ImageInfo {
	var refs []string
	for _, cs := range [][]containerImage{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if ref := strings.TrimSpace(c.Image); ref != "" && !slices.Contains(refs, ref) {
				refs = append(refs, ref)
			}
		}
	}
	if len(refs) == 0 {
		return nil
	}
	auth := registry.PullAuth{Namespace: ns, ServiceAccountName: pod.Spec.ServiceAccountName}
	for _, s := range pod.Spec.ImagePullSecrets {
		auth.ImagePullSecrets = append(auth.ImagePullSecrets, s.Name)
	}
	out := make([]ImageInfo, len(refs))
	var pending []int
	cr, _ := p.res.(cachedResolver)
	for k, ref := range refs {
		if cr != nil {
			if ps, ok, err := cr.Cached(ref, auth); ok {
				out[k] = ImageInfo{Ref: ref, Platforms: ps, Err: err}
				continue
			}
		}
		out[k] = ImageInfo{Ref: ref, Err: errBudget}
		pending = append(pending, k)
	}
	if len(pending) == 0 {
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.Budget)
	defer cancel()
	type result struct {
		k         int
		platforms []registry.Platform
		err       error
	}
	done := make(chan result, len(pending)) // buffered: late lookups never block
	for _, k := range pending[1:] {
		go func() {
			ps, err := p.res.Resolve(ctx, refs[k], auth)
			done <- result{k, ps, err}
		}()
	}
	set := func(r result) {
		out[r.k].Platforms, out[r.k].Err = r.platforms, r.err
		if r.err != nil && ctx.Err() != nil && !isClassified(r.err) {
			out[r.k].Err = fmt.Errorf("%w: %w", errBudget, r.err)
		}
	}
	// The first lookup on this goroutine: a pod with one image to look up
	// starts no goroutine.
	ps, err := p.res.Resolve(ctx, refs[pending[0]], auth)
	set(result{pending[0], ps, err})
	for range pending[1:] {
		select {
		case r := <-done:
			set(r)
		case <-ctx.Done():
			for { // take what finished at the same moment
				select {
				case r := <-done:
					set(r)
				default:
					return out
				}
			}
		}
	}
	return out
}

func isClassified(err error) bool {
	var re *registry.Error
	return errors.As(err, &re)
}

// maxWarning keeps a warning within what the API server passes on whole
// (longer ones may be truncated at 256 characters).
const maxWarning = 250

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// excludesAll reports whether nodeSelector contradicts every term.
func excludesAll(nodeSelector map[string]string, sel *corev1.NodeSelector) bool {
	if len(nodeSelector) == 0 || sel == nil {
		return false
	}
	for _, t := range sel.NodeSelectorTerms {
		if isEmptyTerm(t) {
			continue
		}
		withNS := corev1.NodeSelectorTerm{MatchExpressions: slices.Clone(t.MatchExpressions)}
		for k, v := range nodeSelector {
			withNS.MatchExpressions = append(withNS.MatchExpressions, corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpIn, Values: []string{v}})
		}
		if !contradictory(withNS) {
			return false
		}
	}
	return true
}

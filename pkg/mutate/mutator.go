package mutate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/isamatch/isamatch/pkg/contract"
	"github.com/isamatch/isamatch/pkg/isa"
	"github.com/isamatch/isamatch/pkg/mutate/engine"
	"github.com/isamatch/isamatch/pkg/sanitize"
)

// Inventory provides the current node inventory.
type Inventory interface {
	Snapshot() *engine.Snapshot
}

// PodMutator is the admission handler that writes node affinity.
type PodMutator struct {
	res  ImageResolver
	inv  Inventory
	opts Options
	m    *engine.Matcher
}

// NewPodMutator returns a handler resolving images with res and ranking
// nodes from inv.
func NewPodMutator(res ImageResolver, inv Inventory, opts Options) *PodMutator {
	return &PodMutator{res: res, inv: inv, opts: opts.withDefaults(), m: engine.NewMatcher()}
}

// Outcomes of an admission, as the decisions metric counts them.
const (
	outcomeSkipped   = "skipped"
	outcomeMutated   = "mutated"
	outcomeUnchanged = "unchanged"
	outcomeGated     = "gated"
	outcomeDenied    = "denied"
	outcomeWouldDeny = "would_deny"
	outcomeError     = "error"
)

// Admit answers the API server's request to admit a pod: unchanged, with
// a JSON patch (its node affinity, decision and, when gated, the
// scheduling gate), or denied. A webhook server sends the answer as it is
// (controller-runtime: admission.Response{AdmissionResponse: ...}); the
// request's logger is read from ctx (logr.FromContextOrDiscard). The
// outcome is counted in Options.Metrics.
func (p *PodMutator) Admit(ctx context.Context, req *admissionv1.AdmissionRequest) admissionv1.AdmissionResponse {
	resp, outcome := p.handle(ctx, req)
	p.opts.Metrics.decision(outcome)
	return resp
}

// handle allows what isamatch leaves alone, then decides and responds.
func (p *PodMutator) handle(ctx context.Context, req *admissionv1.AdmissionRequest) (admissionv1.AdmissionResponse, string) {
	if req.Kind.Group != "" || req.Kind.Kind != "Pod" {
		return allowed("not a pod"), outcomeSkipped
	}
	if req.Operation != admissionv1.Create {
		return allowed("only pod creation is mutated"), outcomeSkipped
	}
	// In deny mode an oversized request annotation or label is refused
	// before the pod is decoded (warn mode decodes it to annotate it).
	// A skipped namespace's label is never read: its pods are left alone.
	skipped := slices.Contains(p.opts.SkipNamespaces, req.Namespace)
	mode := p.opts.Enforcement
	if !skipped {
		mode = p.enforcement(ctx, req.Namespace)
	}
	if mode == EnforcementDeny && !skipped {
		if msg := precheck(req.Object.Raw); msg != "" {
			return denied(msg), outcomeDenied
		}
	}
	// Only the fields isamatch reads are decoded; the rest of the pod is
	// skipped, and left alone by the patch (see patchedFields).
	pod := &podFields{}
	if err := decodePod(req.Object.Raw, pod); err != nil {
		return errored(http.StatusBadRequest, fmt.Errorf("decode pod: %w", err)), outcomeError
	}
	ns := req.Namespace
	if ns == "" {
		ns = pod.Namespace
	}
	switch {
	case pod.Spec.NodeName != "":
		return allowed("pod already names a node"), outcomeSkipped
	case pod.Annotations[corev1.MirrorPodAnnotationKey] != "":
		return allowed("mirror pod"), outcomeSkipped
	case slices.Contains(p.opts.SkipNamespaces, ns):
		return allowed("namespace " + ns + " is skipped"), outcomeSkipped
	case pod.Labels[isa.IgnoreLabel] == "true":
		return allowed("pod opted out with " + isa.IgnoreLabel + "=true"), outcomeSkipped
	}
	name := pod.Name
	if name == "" {
		name = pod.GenerateName
	}
	log := logr.FromContextOrDiscard(ctx).WithValues("pod", klog.KRef(ns, name))
	ctx = logr.NewContext(ctx, log)

	d, pending := p.decide(ctx, ns, pod)
	if ns != req.Namespace {
		mode = p.enforcement(ctx, ns)
	}
	if d.Denied != "" {
		return p.deny(ctx, pod, mode, d.Denied)
	}
	return p.respondGated(ctx, pod, mode, d, pending)
}

// decide reads the pod's requests, resolves its images and decides. A
// malformed request is a decision too: a denial. When the pod is to be
// gated (see gates), nothing is fetched: the decision is made from what is
// known, and pending names the images left to the gate controller.
func (p *PodMutator) decide(ctx context.Context, ns string, pod *podFields) (d engine.Decision, pending []string) {
	in, warnings, msg := p.podInput(pod)
	if msg != "" {
		return engine.Decision{Denied: msg}, nil
	}
	refs := podImages(pod)
	if len(refs) > MaxImages {
		return engine.Decision{Denied: tooManyImages()}, nil
	}
	auth := pullAuth(ns, pod)
	gateDown := p.opts.Resolve != ResolveSync && !engine.HasGate(pod.Spec.SchedulingGates) && p.opts.GateAlive != nil && !p.opts.GateAlive()
	if gateDown {
		// No gate controller would release the pod: resolve now.
		warnings = append(warnings, engine.Warning{Reason: "gateControllerDown", Text: "no gate controller holds its lease: the images were resolved at admission instead of behind the scheduling gate"})
	}
	if (p.opts.Resolve != ResolveSync && !gateDown) || engine.HasGate(pod.Spec.SchedulingGates) {
		images, missing := p.cached(refs, auth)
		if p.infers(in) {
			// Platforms whose binaries were never read count as not
			// known yet: the gate controller reads them.
			for _, k := range p.infer(ctx, auth, images, false) {
				if !slices.Contains(missing, k) {
					missing = append(missing, k)
				}
			}
			slices.Sort(missing)
		}
		if p.gates(pod, refs, missing) {
			pending = make([]string, 0, len(missing))
			for _, k := range missing {
				pending = append(pending, refs[k])
			}
			images = known(images, missing)
			p.logImageErrors(ctx, images)
			in.Images = engineImages(images)
			d := p.m.Decide(in, p.inv.Snapshot())
			d.Warnings = append(warnings, d.Warnings...)
			d.Emulator = engine.ChooseEmulator(p.opts.Emulators, in.QEMU)
			return d, pending
		}
	}
	images := p.resolve(ctx, auth, refs)
	// A gated pod gets the fallback when it is released, with what is
	// known then.
	in.Fallback = p.opts.FallbackArchitecture
	if p.infers(in) { // auto mode, every platform read before
		p.infer(ctx, auth, images, false)
	}
	p.logImageErrors(ctx, images)
	in.Images = engineImages(images)
	d = p.m.Decide(in, p.inv.Snapshot())
	d.Warnings = append(warnings, d.Warnings...)
	d.Emulator = engine.ChooseEmulator(p.opts.Emulators, in.QEMU)
	return d, nil
}

// logImageErrors logs and counts the images whose platforms are unknown.
func (p *PodMutator) logImageErrors(ctx context.Context, images []resolved) {
	for _, img := range images {
		if img.err != nil {
			p.opts.Metrics.imageError(engine.ErrorKind(img.err))
			logr.FromContextOrDiscard(ctx).Info("image platforms unknown", "image", img.ref, "error", img.err.Error())
		}
	}
}

// respondGated merges the decision into the pod's own node affinity and
// answers with the patch of the projection (patchedFields) before and
// after. The merge may still deny (in the namespace's mode): the pod's own
// affinity or nodeSelector can exclude every node the decision allows.
// When pending is not nil the pod is gated: its required terms are written
// so the gate controller can narrow them (splitByArch), it gets
// isa.ResolveGate and its decision says what is pending.
func (p *PodMutator) respondGated(ctx context.Context, pod *podFields, mode string, d engine.Decision, pending []string) (admissionv1.AdmissionResponse, string) {
	log := logr.FromContextOrDiscard(ctx)
	deny := func(msg string) (admissionv1.AdmissionResponse, string) { return p.deny(ctx, pod, mode, msg) }
	before, err := json.Marshal(patchedFields(pod))
	if err != nil {
		return errored(http.StatusInternalServerError, fmt.Errorf("marshal pod: %w", err)), outcomeError
	}
	na := &corev1.NodeAffinity{}
	if pod.Spec.Affinity != nil && pod.Spec.Affinity.NodeAffinity != nil {
		na = pod.Spec.Affinity.NodeAffinity.DeepCopy()
	}
	required, err := engine.MergeRequired(na.RequiredDuringSchedulingIgnoredDuringExecution, d.Required, p.opts.MaxRequiredTerms)
	if err != nil {
		return deny(err.Error())
	}
	if len(d.Required) > 0 && engine.ExcludesAll(pod.Spec.NodeSelector, required) {
		var sel []string
		for k, v := range pod.Spec.NodeSelector {
			sel = append(sel, k+"="+v)
		}
		slices.Sort(sel)
		return deny(fmt.Sprintf("the pod's spec.nodeSelector %s excludes every node isamatch allows (%s); remove or change it", strings.Join(sel, ","), d.RequiredText))
	}
	if pending != nil {
		required = engine.SplitByArch(required, p.opts.MaxRequiredTerms)
	}
	na.RequiredDuringSchedulingIgnoredDuringExecution = required
	na.PreferredDuringSchedulingIgnoredDuringExecution = engine.MergePreferred(na.PreferredDuringSchedulingIgnoredDuringExecution, d.Preferred)
	if na.RequiredDuringSchedulingIgnoredDuringExecution != nil || len(na.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
		if pod.Spec.Affinity == nil {
			pod.Spec.Affinity = &corev1.Affinity{}
		}
		pod.Spec.Affinity.NodeAffinity = na
	}
	// A pod with tiers, or one whose tiers come at its release, spreads
	// as engine/spread.go explains; a pod's own constraints are left alone.
	if len(pod.Spec.TopologySpreadConstraints) == 0 && (len(d.Preferred) > 0 || pending != nil) {
		pod.Spec.TopologySpreadConstraints = engine.SpreadConstraints(pod.Labels, d.Spread, pending != nil)
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	if pending != nil {
		d.Summary = pendingSummary(pending) + d.Summary
		d.Counts.Gate = contract.GatePending
		if !engine.HasGate(pod.Spec.SchedulingGates) {
			pod.Spec.SchedulingGates = append(pod.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: isa.ResolveGate})
		}
	}
	recordEmulator(pod, &d)
	storeDecision(pod.Annotations, d.Counts)

	after, err := json.Marshal(patchedFields(pod))
	if err != nil {
		return errored(http.StatusInternalServerError, fmt.Errorf("marshal pod: %w", err)), outcomeError
	}
	resp, ops := patched(before, after)
	if !resp.Allowed {
		return resp, outcomeError
	}
	outcome := outcomeMutated
	switch {
	case pending != nil:
		outcome = outcomeGated
	case ops == 0:
		outcome = outcomeUnchanged
	}
	warnings := make([]string, 0, len(d.Warnings))
	for _, w := range d.Warnings {
		p.opts.Metrics.warning(w.Reason)
		warnings = append(warnings, sanitize.Line("isamatch: "+w.Text, maxWarning))
	}
	log.V(1).Info("decided", "requiredTerms", len(d.Required), "preferredTerms", len(d.Preferred),
		"matchingNodes", d.MatchingNodes, "warnings", len(d.Warnings), "decision", sanitize.Line(d.Summary, maxAnnotation))
	resp.Warnings = warnings
	return resp, outcome
}

// deny refuses the pod with msg or, in warn mode (the namespace's mode), admits it with msg as a
// warning. A warned pod gets no affinity from isamatch: every denial means
// the inputs contradict each other (a malformed request, images that cannot
// serve it or share no architecture, the pod's own affinity excluding every
// node isamatch allows), so any constraint would be a guess that could make
// the pod unschedulable; it is placed as it would be without isamatch. Only
// the decision annotations are written, saying it would have been denied.
func (p *PodMutator) deny(ctx context.Context, pod *podFields, mode, msg string) (admissionv1.AdmissionResponse, string) {
	log := logr.FromContextOrDiscard(ctx)
	if mode != EnforcementWarn {
		log.Info("denied", "reason", msg)
		return denied(msg), outcomeDenied
	}
	log.Info("would deny", "reason", msg)
	before, err := json.Marshal(patchedFields(pod))
	if err != nil {
		return errored(http.StatusInternalServerError, fmt.Errorf("marshal pod: %w", err)), outcomeError
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	storeDecision(pod.Annotations, contract.DecisionCounts{WouldDeny: true, Reason: msg})
	after, err := json.Marshal(patchedFields(pod))
	if err != nil {
		return errored(http.StatusInternalServerError, fmt.Errorf("marshal pod: %w", err)), outcomeError
	}
	resp, _ := patched(before, after)
	if !resp.Allowed {
		return resp, outcomeError
	}
	p.opts.Metrics.warning("wouldDeny")
	resp.Warnings = []string{sanitize.Line("isamatch would deny this pod: "+msg, maxWarning)}
	return resp, outcomeWouldDeny
}

// maxWarning keeps a warning within what the API server passes on whole
// (longer ones may be truncated at 256 characters). Warnings and the
// decision annotation go through sanitize.Line: the API server drops a
// warning with a control character, and image references, registry
// messages and request text in them are untrusted.
const maxWarning = 250

// maxAnnotation bounds the readable decision line (Decision.Summary) where
// it is logged or recorded.
const maxAnnotation = 4096

// storeDecision writes c into the decision annotation of a pod's
// annotations and drops the decision-counts annotation of the earlier
// format, which c replaces.
func storeDecision(annotations map[string]string, c contract.DecisionCounts) {
	annotations[isa.DecisionAnnotation] = c.Encode()
	delete(annotations, isa.DecisionCountsAnnotation)
}

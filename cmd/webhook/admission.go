package main

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/isamatch/isamatch/pkg/mutate"
)

// admissionHandler serves a PodMutator's answers from controller-runtime's
// webhook server, which decodes the AdmissionReview, puts the request's
// logger in ctx and sends the AdmissionResponse as Admit built it.
type admissionHandler struct{ m *mutate.PodMutator }

var _ admission.Handler = admissionHandler{}

func (h admissionHandler) Handle(ctx context.Context, req admission.Request) admission.Response {
	return admission.Response{AdmissionResponse: h.m.Admit(ctx, &req.AdmissionRequest)}
}

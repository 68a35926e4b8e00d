package mutate

import (
	"encoding/json"
	"fmt"
	"net/http"

	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The answers of Admit, built as controller-runtime's admission helpers
// (Allowed, Denied, Errored, PatchResponseFromRaw) build them, so that a
// webhook server of any framework sends them unchanged and this package
// links none.

// allowed admits the pod unchanged; msg says why.
func allowed(msg string) admissionv1.AdmissionResponse {
	return admissionv1.AdmissionResponse{Allowed: true, Result: &metav1.Status{Code: http.StatusOK, Message: msg}}
}

// denied refuses the pod with msg.
func denied(msg string) admissionv1.AdmissionResponse {
	return admissionv1.AdmissionResponse{Result: &metav1.Status{Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden, Message: msg}}
}

// errored refuses the request with an HTTP error code.
func errored(code int32, err error) admissionv1.AdmissionResponse {
	return admissionv1.AdmissionResponse{Result: &metav1.Status{Code: code, Message: err.Error()}}
}

// patched admits the pod with the JSON patch from before to after, and
// says how many operations it has (0: the pod is left as it was).
func patched(before, after []byte) (admissionv1.AdmissionResponse, int) {
	ops, err := jsonpatch.CreatePatch(before, after)
	if err != nil {
		return errored(http.StatusInternalServerError, fmt.Errorf("patch pod: %w", err)), 0
	}
	resp := admissionv1.AdmissionResponse{Allowed: true, Result: &metav1.Status{Code: http.StatusOK}}
	if len(ops) == 0 {
		return resp, 0
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return errored(http.StatusInternalServerError, fmt.Errorf("encode patch: %w", err)), 0
	}
	pt := admissionv1.PatchTypeJSONPatch
	resp.Patch, resp.PatchType = patch, &pt
	return resp, len(ops)
}

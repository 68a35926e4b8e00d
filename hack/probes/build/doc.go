// Command build builds the probe programs (package hack/probes) into the
// directory it is given, for image builds that do not use hack/images
// (cmd/labeler/Dockerfile):
//
//	go run ./hack/probes/build /probes
package main

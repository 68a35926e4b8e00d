package bench

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/isamatch/isamatch/pkg/isa"
)

// TestOpenLoop counts what the open-loop generator sent, stored and
// timed against a fake clientset; it asserts no timing.
func TestOpenLoop(t *testing.T) {
	cases := []struct {
		name       string
		pods       int
		rate       float64
		failEvery  int // every failEvery-th create fails; 0: none
		wantSent   int
		wantFailed int
		wantStored int
		wantErr    string
	}{
		{name: "all created", pods: 20, rate: 400, wantSent: 20, wantStored: 20},
		{name: "one pod", pods: 1, rate: 1, wantSent: 1, wantStored: 1},
		{name: "failures counted, first returned", pods: 12, rate: 400, failEvery: 4, wantSent: 12, wantFailed: 3, wantStored: 9, wantErr: "refused"},
		{name: "no rate", pods: 3, rate: 0, wantErr: "open-loop rate 0: want pods per second > 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset()
			if tc.failEvery > 0 {
				n := 0
				cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
					n++ // reactors run one at a time, under the fake's lock
					if n%tc.failEvery == 0 {
						return true, nil, errors.New("refused")
					}
					return false, nil, nil
				})
			}
			res, err := OpenLoop(t.Context(), cs, loadPods("ns", "p", "img", Unscheduled, tc.pods), tc.rate)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			l, lerr := cs.CoreV1().Pods("ns").List(t.Context(), metav1.ListOptions{})
			if lerr != nil {
				t.Fatal(lerr)
			}
			got := []int{res.Sent, res.Failed, len(res.Latencies), len(l.Items)}
			want := []int{tc.wantSent, tc.wantFailed, tc.wantSent - tc.wantFailed, tc.wantStored}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("sent, failed, timed, stored (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRotated(t *testing.T) {
	hs := []Hook{Isamatch, NoHook, Noop}
	for r, want := range [][]Hook{{Isamatch, NoHook, Noop}, {NoHook, Noop, Isamatch}, {Noop, Isamatch, NoHook}, {Isamatch, NoHook, Noop}} {
		t.Run(fmt.Sprintf("run %d", r), func(t *testing.T) {
			if diff := cmp.Diff(want, rotated(hs, r)); diff != "" {
				t.Errorf("rotated (-want +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff([]Hook{Isamatch, NoHook, Noop}, hs); diff != "" {
		t.Errorf("rotated changed its argument (-want +got):\n%s", diff)
	}
}

func TestNamespaceLabels(t *testing.T) {
	cases := []struct {
		h    Hook
		want map[string]string
	}{
		{Isamatch, nil},
		{NoHook, map[string]string{isa.IgnoreLabel: "true"}},
		{Noop, map[string]string{isa.IgnoreLabel: "true", HookLabel: "noop"}},
		{GatePath, map[string]string{isa.IgnoreLabel: "true", HookLabel: "gate"}},
	}
	for _, tc := range cases {
		t.Run(string(tc.h), func(t *testing.T) {
			if diff := cmp.Diff(tc.want, namespaceLabels(tc.h)); diff != "" {
				t.Errorf("namespaceLabels (-want +got):\n%s", diff)
			}
		})
	}
}

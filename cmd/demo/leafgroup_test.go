package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/isamatch/isamatch/internal/leafcluster"
)

func TestBestGroup(t *testing.T) {
	tests := []struct {
		name    string
		request string
		n       int
		want    string
	}{
		{"3 V replicas: rv-a's 4 V nodes", leafcluster.Vector, 3, "rv-a"},
		{"5 V replicas: rv-c's 5 V nodes, not rv-b's 6", leafcluster.Vector, 5, "rv-c"},
		{"6 V replicas: rv-b", leafcluster.Vector, 6, "rv-b"},
		{"7 rv64gc replicas: rv-b's 8 nodes", leafcluster.Plain, 7, "rv-b"},
		{"10 V replicas: no group holds them", leafcluster.Vector, 10, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := bestGroup(leafcluster.Groups, tc.request, tc.n); got != tc.want {
				t.Errorf("bestGroup(%s, %d) = %q, want %q", tc.request, tc.n, got, tc.want)
			}
		})
	}
}

func TestPrintLeaf(t *testing.T) {
	var b strings.Builder
	printLeaf(&b, leafResult{
		Groups: leafcluster.Groups, Request: leafcluster.Vector, Replicas: 5,
		Pods: map[string]int{"rv-c": 5}, Took: 2300 * time.Millisecond,
	})
	want := `leaf groups: one Kueue job of 5 rv64gcv replicas (a pod group, preferred topology network.example.com/leaf-group):
group  nodes  rv64gcv nodes pods
rv-a       4              4    0
rv-b       8              6    0
rv-c      16              5    5
x86        4              0    0
all 5 bound in 2.3s; on a node that cannot run them: 0
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("printLeaf (-want +got):\n%s", diff)
	}
}

func TestLeafVerdict(t *testing.T) {
	tests := []struct {
		name  string
		pods  map[string]int
		wrong []string
		want  []string
	}{
		{name: "whole in the smallest fitting group", pods: map[string]int{"rv-c": 5}},
		{
			name: "in the smallest group by size",
			pods: map[string]int{"rv-b": 5},
			want: []string{"leafgroup: 0 of 5 pods in rv-c, the smallest group whose rv64gcv nodes hold them (placement map[rv-b:5])"},
		},
		{
			name:  "on a node without V",
			pods:  map[string]int{"rv-c": 5},
			wrong: []string{"job-0->rv-c-15"},
			want:  []string{"leafgroup: 1 pods on a node that cannot run rv64gcv: [job-0->rv-c-15]"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := leafVerdict(leafResult{Groups: leafcluster.Groups, Request: leafcluster.Vector, Replicas: 5, Pods: tc.pods, Wrong: tc.wrong})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("leafVerdict (-want +got):\n%s", diff)
			}
		})
	}
}

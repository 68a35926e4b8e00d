package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestImportRules lists both modules' packages with everything they link
// and fails on every import ARCHITECTURE.md forbids, and on an allowance
// no longer needed.
func TestImportRules(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []Package
	for _, dir := range []string{root, filepath.Join(root, "rebalance")} {
		pkgs = append(pkgs, goList(t, dir)...)
	}
	if len(pkgs) < 100 {
		t.Fatalf("go list found %d packages, want the modules' and what they link", len(pkgs))
	}
	violations, used := Check(pkgs, Rules, Allowances)
	for _, v := range violations {
		t.Error(v)
	}
	for _, a := range Allowances {
		found := false
		for _, u := range used {
			found = found || u == a
		}
		if !found {
			t.Errorf("%s no longer imports %s: remove its allowance (%s)", a.From, a.Dep, a.TODO)
		}
	}
}

// goList lists the packages of the module in dir and every package they
// link, outside any workspace (each module with its own go.mod).
func goList(t *testing.T, dir string) []Package {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "list", "-e", "-deps", "-json=ImportPath,Imports,Deps,Error", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v\n%s", dir, err, stderr.String())
	}
	var pkgs []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			Package
			Error *struct{ Err string }
		}
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("go list in %s: %v", dir, err)
		}
		if p.Error != nil {
			t.Fatalf("go list in %s: %s: %s", dir, p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p.Package)
	}
	return pkgs
}

// TestCheck: the checker finds what a rule denies, directly or linked,
// names the import it comes through, honours exceptions, a rule's own
// allowed packages and allowances, and says nothing of what is allowed.
func TestCheck(t *testing.T) {
	const m = Module + "/"
	pkgs := []Package{
		{ImportPath: m + "pkg/isa", Imports: []string{"strings"}, Deps: []string{"strings"}},
		{ImportPath: m + "pkg/isa/internal/gen", Imports: []string{"github.com/some/lib"}, Deps: []string{"github.com/some/lib"}},
		{ImportPath: m + "pkg/probe", Imports: []string{m + "pkg/isa", "k8s.io/api/core/v1"},
			Deps: []string{m + "pkg/isa", "k8s.io/api/core/v1", "k8s.io/apimachinery/pkg/types", "strings"}},
		{ImportPath: m + "internal/helper", Imports: []string{"github.com/onsi/gomega"}, Deps: []string{"github.com/onsi/gomega"}},
		{ImportPath: m + "cmd/tool", Imports: []string{m + "internal/helper"}, Deps: []string{m + "internal/helper", "github.com/onsi/gomega"}},
		{ImportPath: m + "test/suite", Imports: []string{"github.com/onsi/gomega"}, Deps: []string{"github.com/onsi/gomega"}},
		{ImportPath: m + "pkg/mutate", Imports: []string{m + "internal/helper"}, Deps: []string{m + "internal/helper", "github.com/onsi/gomega"}},
		{ImportPath: "github.com/onsi/gomega", Deps: []string{"fmt"}},
		{ImportPath: m + "pkg/engine", Imports: []string{m + "pkg/isa", m + "pkg/registry"}, Deps: []string{m + "pkg/isa", m + "pkg/registry", "strings"}},
	}
	rules := []Rule{
		{From: "pkg/isa", Except: []string{"pkg/isa/internal/gen"}, Deny: []string{NonStandard}, Linked: true, Why: "pure"},
		{From: "pkg/probe", Deny: kubernetes, Linked: true, Why: "no kubernetes"},
		{From: "...", Except: []string{"test/..."}, Deny: []string{"github.com/onsi/"}, Linked: true, Why: "no ginkgo"},
		{From: "pkg/...", Deny: []string{"internal/..."}, Why: "library"},
		{From: "pkg/engine", Deny: []string{"pkg/..."}, Allow: []string{"pkg/isa"}, Linked: true, Why: "pure engine"},
	}
	allow := []Allowance{{From: "pkg/mutate", Dep: "internal/..."}, {From: "cmd/gone", Dep: "k8s.io/"}}
	got, used := Check(pkgs, rules, allow)
	var lines []string
	for _, v := range got {
		lines = append(lines, v.String())
	}
	want := []string{
		`cmd/tool links github.com/onsi/gomega (through github.com/isamatch/isamatch/internal/helper), which the rule "github.com/onsi/" denies: no ginkgo`,
		`internal/helper links github.com/onsi/gomega, which the rule "github.com/onsi/" denies: no ginkgo`,
		`pkg/engine links github.com/isamatch/isamatch/pkg/registry, which the rule "pkg/..." denies: pure engine`,
		`pkg/mutate links github.com/onsi/gomega (through github.com/isamatch/isamatch/internal/helper), which the rule "github.com/onsi/" denies: no ginkgo`,
		`pkg/probe links k8s.io/api/core/v1, k8s.io/apimachinery/pkg/types, which the rule "k8s.io/" denies: no kubernetes`,
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Allowance{{From: "pkg/mutate", Dep: "internal/..."}}, used); diff != "" {
		t.Errorf("allowances used (-want +got):\n%s", diff)
	}
	if strings.Contains(strings.Join(lines, "\n"), "pkg/isa") {
		t.Error("pkg/isa or its excepted generator reported")
	}
}

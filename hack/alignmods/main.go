package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// builds are the module directories aligned: every package and test of the
// first four, the programs tools.go names in the others.
var builds = []build{
	{dir: "."},
	{dir: "rebalance"},
	{dir: "charts"},
	{dir: "hack/release"},
	{dir: "hack/controlplane", tools: true},
	{dir: "hack/node", tools: true},
	{dir: "hack/metrics-server", tools: true},
	{dir: "hack/kueue", tools: true},
}

// maxRounds bounds the raise-and-tidy rounds of -w: tidy can raise a
// module again (a raised module requiring a newer one).
const maxRounds = 6

// build is one module directory and the packages it compiles: its own
// packages and tests, or (tools) the programs its tools.go imports.
type build struct {
	dir   string
	tools bool
}

// packages returns the go list arguments naming what b compiles.
func (b build) packages(root string) ([]string, error) {
	if !b.tools {
		return []string{"-test", "./..."}, nil
	}
	// A tools.go that imports programs does not load as a package (-e),
	// but it names them.
	var out bytes.Buffer
	if err := goCmd(filepath.Join(root, b.dir), &out, "list", "-e", "-tags", "tools", "-f", `{{join .Imports "\n"}}`, "."); err != nil {
		return nil, err
	}
	pkgs := strings.Fields(out.String())
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("%s: tools.go imports no program", b.dir)
	}
	return pkgs, nil
}

func main() {
	write := flag.Bool("w", false, "raise every module to the highest version a build uses, then go mod tidy")
	root := flag.String("C", ".", "the repository's root directory")
	flag.Parse()
	if err := run(*root, *write); err != nil {
		fmt.Fprintln(os.Stderr, "alignmods:", err)
		os.Exit(1)
	}
}

func run(root string, write bool) error {
	for round := 1; ; round++ {
		uses, err := listAll(root)
		if err != nil {
			return err
		}
		skews := findSkews(uses)
		if len(skews) == 0 {
			fmt.Printf("alignmods: %d builds share every module at one version\n", len(builds))
			return nil
		}
		if !write {
			for _, s := range skews {
				fmt.Println(s)
			}
			return fmt.Errorf("%d modules at more than one version across the builds; run `go run ./hack/alignmods -w`", len(skews))
		}
		if round > maxRounds {
			return fmt.Errorf("still %d modules at more than one version after %d rounds of raising and tidying: %v", len(skews), maxRounds, skews)
		}
		for dir, edits := range planEdits(skews) {
			fmt.Printf("alignmods: %s: %s\n", dir, strings.Join(edits, " "))
			if err := goCmd(filepath.Join(root, dir), nil, append([]string{"mod", "edit"}, edits...)...); err != nil {
				return err
			}
			if err := goCmd(filepath.Join(root, dir), nil, "mod", "tidy"); err != nil {
				return err
			}
		}
	}
}

// listAll lists the modules each build compiles a package of.
func listAll(root string) (map[string][]use, error) {
	uses := map[string][]use{}
	for _, b := range builds {
		pkgs, err := b.packages(root)
		if err != nil {
			return nil, err
		}
		var out bytes.Buffer
		args := append([]string{"list", "-deps", "-f", listFormat}, pkgs...)
		if err := goCmd(filepath.Join(root, b.dir), &out, args...); err != nil {
			return nil, err
		}
		mods, err := parseList(out.String())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.dir, err)
		}
		for _, m := range mods {
			m.dir = b.dir
			uses[m.path] = append(uses[m.path], m)
		}
	}
	return uses, nil
}

// goCmd runs the go command in dir as the Makefile's builds do (their own
// module, static), its output to out (stdout when nil).
func goCmd(dir string, out *bytes.Buffer, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0", "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out != nil {
		cmd.Stdout = out
	} else {
		cmd.Stdout = os.Stdout
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s in %s: %w\n%s", strings.Join(args, " "), dir, err, stderr.Bytes())
	}
	return nil
}

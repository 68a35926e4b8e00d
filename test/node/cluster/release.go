package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BuildHelm builds the helm command of the module charts/ (its tools.go
// pins the version) into dir and returns its path: Helm's own code, from
// the Go module proxy, no downloaded binary.
func BuildHelm(ctx context.Context, repoRoot, dir string) (string, error) {
	bin := filepath.Join(dir, "helm")
	cmd := exec.CommandContext(ctx, "go", "-C", filepath.Join(repoRoot, "charts"), "build", "-o", bin, "helm.sh/helm/v4/cmd/helm")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build helm (go -C charts build helm.sh/helm/v4/cmd/helm): %w\n%s", err, out)
	}
	return bin, nil
}

// Checkout makes dir a git worktree of repoRoot at commit (detached), and
// returns a function that removes it. A commit the clone lacks (a shallow
// clone, a fork without it) is a *Missing error naming the fix.
func Checkout(ctx context.Context, repoRoot, commit, dir string) (remove func() error, err error) {
	if out, err := exec.CommandContext(ctx, "git", "-C", repoRoot, "cat-file", "-e", commit+"^{commit}").CombinedOutput(); err != nil {
		return nil, &Missing{
			What: fmt.Sprintf("commit %s (the previous release the upgrade test starts from) is not in the clone at %s (%s)", commit, repoRoot, strings.TrimSpace(string(out))),
			Fix:  "fetch the full history: git fetch --unshallow (or git fetch origin " + commit + ")",
		}
	}
	if out, err := exec.CommandContext(ctx, "git", "-C", repoRoot, "worktree", "add", "--detach", dir, commit).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("git worktree add %s %s: %w\n%s", dir, commit, err, out)
	}
	return func() error {
		out, err := exec.Command("git", "-C", repoRoot, "worktree", "remove", "--force", dir).CombinedOutput()
		if err != nil {
			_ = os.RemoveAll(dir)
			return fmt.Errorf("git worktree remove %s: %w\n%s", dir, err, out)
		}
		return nil
	}, nil
}

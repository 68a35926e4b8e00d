package imageisa

import (
	"fmt"
	"path"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// defaultPATH is what container runtimes use when the config sets none
// (containerd's and Docker's default for Linux).
const defaultPATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// program is one program to look for: the name as the config writes it and
// the absolute paths it may be, in PATH order.
type program struct {
	name       string
	candidates []string
	note       string
}

// programs returns the programs to read, in order: the one the runtime
// executes, and, when it is a wrapper script, the next argument (the
// docker-entrypoint.sh "$@" convention); Infer tries the second only when
// the first is a script.
//
// argv is Entrypoint followed by Cmd, or Cmd alone, as the runtime builds
// it. A shell form (sh -c "cmd ...", what a Dockerfile's shell-form
// ENTRYPOINT or CMD becomes) runs the shell; the shell is the distribution's
// and says nothing about the application, so the first word of the command
// is read instead when it is a plain word (after "exec" and VAR=value
// assignments); otherwise the shell itself is read and the Result says so.
func programs(cfg v1.Config) ([]program, error) {
	argv := append(append([]string{}, cfg.Entrypoint...), cfg.Cmd...)
	if len(cfg.Entrypoint) == 0 {
		argv = cfg.Cmd
	}
	if len(argv) == 0 || argv[0] == "" {
		return nil, ErrNoEntrypoint
	}
	pathVar, hasPATH := "", false
	for _, e := range cfg.Env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			pathVar, hasPATH = v, true
		}
	}
	if !hasPATH {
		pathVar = defaultPATH
	}
	mk := func(name, note string) program {
		return program{name: name, candidates: lookPath(name, pathVar, cfg.WorkingDir), note: note}
	}
	if isShell(argv[0]) && len(argv) >= 3 && argv[1] == "-c" {
		if w := firstWord(argv[2]); w != "" {
			return []program{mk(w, fmt.Sprintf("first word of the shell-form command of %s", sanitize(argv[0])))}, nil
		}
		return []program{mk(argv[0], "the shell of a shell-form command whose first word is not a plain program")}, nil
	}
	out := []program{mk(argv[0], "")}
	if len(argv) > 1 && argv[1] != "" && !strings.HasPrefix(argv[1], "-") {
		out = append(out, mk(argv[1], fmt.Sprintf("argument of the wrapper script %s", sanitize(argv[0]))))
	}
	return out, nil
}

// lookPath lists the absolute paths a program name may be: itself when it
// has a '/', relative ones under the working directory, else one per PATH
// directory (empty entries mean the working directory, as in execvp).
func lookPath(name, pathVar, wd string) []string {
	if wd == "" {
		wd = "/"
	}
	if strings.Contains(name, "/") {
		return []string{path.Join("/", wd, name)}
	}
	var out []string
	seen := map[string]bool{}
	for _, dir := range strings.Split(pathVar, ":") {
		if dir == "" {
			dir = wd
		}
		p := path.Join("/", dir, name)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

func isShell(p string) bool {
	switch path.Base(p) {
	case "sh", "bash", "dash", "ash", "zsh", "ksh":
		return true
	}
	return false
}

// firstWord returns the program a simple shell command starts with, or ""
// when the command is not simple enough to tell without a shell.
func firstWord(cmd string) string {
	for _, w := range strings.Fields(cmd) {
		if w == "exec" {
			continue
		}
		if k, _, ok := strings.Cut(w, "="); ok && k != "" && !strings.ContainsAny(k, "/$") {
			continue
		}
		if strings.ContainsAny(w, "$`'\"\\;|&<>(){}*?[]~#!=") {
			return ""
		}
		return w
	}
	return ""
}

package configflag

import (
	"errors"
	"flag"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheck(t *testing.T) {
	removed := []Removed{{Name: "gate-timeout", Field: "gate.timeout"}, {Name: "pull-secrets", Field: "registry.pullSecrets"}}
	tests := []struct {
		name string
		args []string
		want *RemovedError
	}{
		{name: "none", args: []string{"--config=/etc/c.yaml", "-v", "1"}},
		{name: "two dashes with a value", args: []string{"--config", "/etc/c.yaml", "--gate-timeout=5s"}, want: &RemovedError{removed[0]}},
		{name: "one dash, value apart", args: []string{"-gate-timeout", "5s"}, want: &RemovedError{removed[0]}},
		{name: "a boolean without a value", args: []string{"--pull-secrets", "--config=x"}, want: &RemovedError{removed[1]}},
		{name: "a removed name as a kept flag's value", args: []string{"--config", "--gate-timeout"}},
		{name: "after a boolean kept flag", args: []string{"--version", "--pull-secrets"}, want: &RemovedError{removed[1]}},
		{name: "after the end of the flags", args: []string{"--", "--gate-timeout=5s"}},
		{name: "after a positional argument", args: []string{"serve", "--gate-timeout=5s"}},
		{name: "an unknown flag is left to Parse", args: []string{"--frob", "--pull-secrets"}, want: &RemovedError{removed[1]}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			fs.String("config", "", "")
			fs.Int("v", 0, "")
			fs.Bool("version", false, "")
			err := Check(fs, removed, tc.args)
			var got *RemovedError
			if err != nil && !errors.As(err, &got) {
				t.Fatalf("Check(%q) = %v, want a *RemovedError or nil", tc.args, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Check(%q) (-want +got):\n%s", tc.args, diff)
			}
		})
	}
	want := "flag --gate-timeout was removed: set gate.timeout in the file --config names (docs/configuration.md)"
	if got := (&RemovedError{removed[0]}).Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

package memlimit

import (
	"strings"
	"testing"
)

func TestTarget(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    int64
		wantErr string
	}{
		{name: "the request", env: map[string]string{RequestEnv: "134217728"}, want: 128 << 20},
		{name: "no request variable", env: map[string]string{}},
		{name: "a container without a memory request", env: map[string]string{RequestEnv: "0"}},
		{name: "GOMEMLIMIT set wins", env: map[string]string{"GOMEMLIMIT": "300MiB", RequestEnv: "134217728"}},
		{name: "a quantity, not bytes", env: map[string]string{RequestEnv: "128Mi"}, wantErr: `ISAMATCH_MEMORY_REQUEST="128Mi": want the container's memory request in bytes`},
		{name: "negative", env: map[string]string{RequestEnv: "-1"}, wantErr: `"-1"`},
		{name: "too small", env: map[string]string{RequestEnv: "16777216"}, wantErr: "ISAMATCH_MEMORY_REQUEST=16777216: a memory request under 32 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Target(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Target() error = %v, want one containing %q", err, tc.wantErr)
				}
				if got != 0 {
					t.Errorf("Target() = %d with an error, want 0", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Target(): %v", err)
			}
			if got != tc.want {
				t.Errorf("Target() = %d, want %d", got, tc.want)
			}
		})
	}
}

package netguard

import (
	"strings"
	"testing"
)

func TestParseAllowed(t *testing.T) {
	tests := []struct {
		name    string
		entries []string
		wantErr string
	}{
		{name: "hosts, IPs and CIDRs", entries: []string{"registry.lab", "registry.lab:5000", "10.1.2.3", "192.168.0.0/16", "fd00::/8"}},
		{name: "bad CIDR", entries: []string{"10.0.0.0/33"}, wantErr: `"10.0.0.0/33": not a CIDR`},
		{name: "empty", entries: []string{" "}, wantErr: "empty entry"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ParseAllowed(tc.entries)
			if tc.wantErr == "" && err != nil {
				t.Errorf("ParseAllowed: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("ParseAllowed error = %v, want one mentioning %q", err, tc.wantErr)
			}
		})
	}
}

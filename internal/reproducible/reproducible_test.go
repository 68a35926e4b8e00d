package reproducible

import (
	"strings"
	"testing"
	"time"
)

func TestEpoch(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want time.Time
		err  string
	}{
		{"", time.Unix(0, 0), ""},
		{"1700000000", time.Unix(1700000000, 0), ""},
		{"-1", time.Time{}, `SOURCE_DATE_EPOCH="-1" is not a count of seconds`},
		{"yesterday", time.Time{}, `SOURCE_DATE_EPOCH="yesterday"`},
	} {
		got, err := Epoch(func(string) string { return tc.env })
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Epoch(%q) error %v, want %q", tc.env, err, tc.err)
			}
			continue
		}
		if err != nil || !got.Equal(tc.want) || got.Location() != time.UTC {
			t.Errorf("Epoch(%q) = %v, %v; want %v UTC", tc.env, got, err, tc.want)
		}
	}
}

func TestCheckVersion(t *testing.T) {
	for _, v := range []string{"v0.1.0", "v1.22.333", "v0.0.0-node", "v1.0.0-rc.1"} {
		if err := CheckVersion(v); err != nil {
			t.Errorf("CheckVersion(%q) = %v", v, err)
		}
	}
	for _, v := range []string{"", "0.1.0", "v1.0", "v01.0.0", "v1.0.0+meta", "latest"} {
		if err := CheckVersion(v); err == nil || !strings.Contains(err.Error(), "is not a release version") {
			t.Errorf("CheckVersion(%q) = %v, want an error", v, err)
		}
	}
}

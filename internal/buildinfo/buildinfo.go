package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// Set by the linker (-ldflags -X); empty otherwise.
var (
	version  string
	revision string
)

// Info identifies a build.
type Info struct {
	Version   string
	Revision  string
	GoVersion string
}

// Read returns this binary's build: the -X values where the build set them,
// else what runtime/debug.ReadBuildInfo recorded, else "unknown".
func Read() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuildInfo(bi, version, revision)
}

func fromBuildInfo(bi *debug.BuildInfo, version, revision string) Info {
	i := Info{Version: version, Revision: revision, GoVersion: runtime.Version()}
	if bi != nil {
		if bi.GoVersion != "" {
			i.GoVersion = bi.GoVersion
		}
		if i.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			i.Version = bi.Main.Version
		}
		if i.Revision == "" {
			var rev, modified string
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					modified = s.Value
				}
			}
			if rev != "" && modified == "true" {
				rev += "-dirty"
			}
			i.Revision = rev
		}
	}
	if i.Version == "" {
		i.Version = "unknown"
	}
	if i.Revision == "" {
		i.Revision = "unknown"
	}
	return i
}

// String is what --version prints, after the binary's name.
func (i Info) String() string {
	return fmt.Sprintf("%s (revision %s, %s)", i.Version, i.Revision, i.GoVersion)
}

// Collector is the gauge isamatch_build_info{version,revision,goversion},
// always 1, for joining other series with the build that made them.
func (i Info) Collector() prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "isamatch_build_info",
		Help:        "The isamatch build: version, VCS revision and Go version; always 1.",
		ConstLabels: prometheus.Labels{"version": i.Version, "revision": i.Revision, "goversion": i.GoVersion},
	}, func() float64 { return 1 })
}

package main

import "github.com/isamatch/isamatch/internal/configflag"

// removedFlags are the flags the labeler took before its configuration
// file held every setting, each with the field that replaces it: given on
// the command line, one fails with an error naming that field
// (configflag.Check), and docs/reference/labeler-flags.md lists them as
// the migration table.
var removedFlags = []configflag.Removed{
	{Name: "host-root", Field: "hostRoot"},
	{Name: "interval", Field: "interval"},
	{Name: "metrics-bind-address", Field: "metrics.bindAddress"},
	{Name: "metrics-token-audience", Field: "metrics.tokenAudience"},
	{Name: "metrics-secure", Field: "metrics.secure"},
	{Name: "health-probe-bind-address", Field: "health.bindAddress"},
	{Name: "exec", Field: "commands.exec"},
	{Name: "command-timeout", Field: "commands.timeout"},
	{Name: "exec-uid", Field: "commands.uid"},
	{Name: "exec-gid", Field: "commands.gid"},
	{Name: "command-max-output", Field: "commands.maxOutputBytes"},
	{Name: "hwprobe", Field: "hwprobe"},
	{Name: "probe-programs", Field: "emulation.probePrograms"},
	{Name: "emulation-budget", Field: "emulation.budget"},
}

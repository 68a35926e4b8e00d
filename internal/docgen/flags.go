package docgen

import (
	"flag"
	"fmt"
	"sort"
	"strings"
)

// A Flag is one command-line flag as the reference lists it.
type Flag struct {
	Name      string
	Shorthand string // one letter, pflag only
	Default   string
	Usage     string
}

// FlagsOf lists the flags registered on fs (the standard library's flag
// package, as the labeler and the webhook use it), sorted by name.
func FlagsOf(fs *flag.FlagSet) []Flag {
	var out []Flag
	fs.VisitAll(func(f *flag.Flag) {
		out = append(out, Flag{Name: f.Name, Default: f.DefValue, Usage: f.Usage})
	})
	return out
}

// FlagTable renders flags as a Markdown page: the header, intro, then
// one table row per flag sorted by name.
func FlagTable(title, source, intro string, flags []Flag) []byte {
	sorted := append([]Flag(nil), flags...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var b strings.Builder
	b.WriteString(Header(title, source))
	if intro != "" {
		b.WriteString(intro + "\n\n")
	}
	b.WriteString("| flag | default | meaning |\n|---|---|---|\n")
	for _, f := range sorted {
		name := "`--" + f.Name + "`"
		if f.Shorthand != "" {
			name = "`-" + f.Shorthand + "`, " + name
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", name, code(f.Default), cell(f.Usage))
	}
	return []byte(b.String())
}

// code renders a value as inline code, or "(empty)" for the empty string.
func code(s string) string {
	if s == "" {
		return "(empty)"
	}
	if strings.Contains(s, "`") {
		return "<code>" + cell(s) + "</code>"
	}
	return "`" + strings.ReplaceAll(s, "|", "\\|") + "`"
}

// cell makes s one Markdown table cell: one line, pipes escaped, and <
// escaped so that "<arch>" is shown rather than taken for an HTML tag.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer("|", "\\|", "<", "&lt;").Replace(s)
}

// A Command is one command of a command tree (cobra) and its own flags.
type Command struct {
	Path  string // "kubectl isa explain"
	Short string
	Flags []Flag
}

// CommandsPage renders a command tree as a Markdown page: the header,
// intro, then for each command (sorted by path) its one-line summary and
// a table of its flags sorted by name.
func CommandsPage(title, source, intro string, cmds []Command) []byte {
	sorted := append([]Command(nil), cmds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	var b strings.Builder
	b.WriteString(Header(title, source))
	if intro != "" {
		b.WriteString(intro + "\n\n")
	}
	for _, c := range sorted {
		fmt.Fprintf(&b, "## `%s`\n\n%s\n\n", c.Path, cell(c.Short))
		if len(c.Flags) == 0 {
			b.WriteString("No flags of its own.\n\n")
			continue
		}
		table := FlagTable("", "", "", c.Flags)
		b.Write(table[len(Header("", "")):])
		b.WriteString("\n")
	}
	return []byte(strings.TrimSuffix(b.String(), "\n"))
}

// A RemovedFlag is a flag a binary no longer takes and the configuration
// field that replaces it.
type RemovedFlag struct {
	Name  string
	Field string
}

// RemovedFlagsSection renders the migration table of a flag reference: a
// "Removed flags" heading, intro, then one row per flag, in the given
// order, with the field of file (WebhookConfiguration, say) to set instead.
func RemovedFlagsSection(intro, file string, flags []RemovedFlag) []byte {
	var b strings.Builder
	b.WriteString("\n## Removed flags\n\n")
	if intro != "" {
		b.WriteString(intro + "\n\n")
	}
	fmt.Fprintf(&b, "| removed flag | %s field |\n|---|---|\n", file)
	for _, f := range flags {
		fmt.Fprintf(&b, "| `--%s` | `%s` |\n", f.Name, f.Field)
	}
	return []byte(b.String())
}

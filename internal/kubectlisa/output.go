package kubectlisa

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// Output formats, as kubectl spells them; "" is a table for people.
const (
	outputJSON = "json"
	outputYAML = "yaml"
	outputWide = "wide"
	outputName = "name"
)

// outputFlag is a command's -o/--output, limited to the formats it
// prints.
type outputFlag struct {
	value   string
	allowed []string
}

// add registers -o on cmd with the formats allowed (besides the table),
// checked before the command runs, and completes them.
func (o *outputFlag) add(cmd *cobra.Command, allowed ...string) {
	o.allowed = allowed
	cmd.Flags().StringVarP(&o.value, "output", "o", "", "Output format: one of "+strings.Join(allowed, "|")+" (default: a table)")
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return allowed, cobra.ShellCompDirectiveNoFileComp
	})
	prev := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if o.value != "" && !slices.Contains(o.allowed, o.value) {
			return fmt.Errorf("%w: -o %q: %s prints %s, or a table without -o", ErrUsage, clean(o.value, maxShown), cmd.Name(), strings.Join(o.allowed, "|"))
		}
		if prev != nil {
			return prev(cmd, args)
		}
		return nil
	}
}

// print writes v as the format asks: JSON or YAML of v, names one a line
// (kind/name, as kubectl -o name), or table (wide for -o wide).
func (o *outputFlag) print(w io.Writer, v any, names []string, table func(w io.Writer, wide bool) error) error {
	switch o.value {
	case outputJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "    ")
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("encode JSON: %w", err)
		}
		return nil
	case outputYAML:
		b, err := yaml.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode YAML: %w", err)
		}
		_, err = w.Write(b)
		return err
	case outputName:
		for _, n := range names {
			if _, err := fmt.Fprintln(w, n); err != nil {
				return err
			}
		}
		return nil
	}
	return table(w, o.value == outputWide)
}

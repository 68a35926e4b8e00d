package kubectlisa

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"k8s.io/client-go/kubernetes"
)

// Execute runs o's command against the cluster cs; ns is the namespace of
// the pod explain looks up.
func Execute(ctx context.Context, cs kubernetes.Interface, ns string, o Options, out io.Writer) error {
	if err := o.Validate(); err != nil {
		return err
	}
	var (
		v     any
		table func(io.Writer) error
	)
	switch o.Command {
	case "nodes":
		rows, err := Nodes(ctx, cs)
		if err != nil {
			return err
		}
		v, table = rows, func(w io.Writer) error { return writeNodes(w, rows) }
	case "check":
		res, err := Check(ctx, cs, o.Args[0])
		if err != nil {
			return err
		}
		v, table = res, func(w io.Writer) error { return writeCheck(w, res) }
	case "explain":
		name, err := podName(o.Args[0])
		if err != nil {
			return err
		}
		ex, err := Explain(ctx, cs, ns, name)
		if err != nil {
			return err
		}
		v, table = ex, func(w io.Writer) error { return writeExplanation(w, ex) }
	}
	if o.Output == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("encode %s: %w", o.Command, err)
		}
		return nil
	}
	return table(out)
}

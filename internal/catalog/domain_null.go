package catalog

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// NullValue is how a null entry of a declared domain (values: [0, 1, null])
// is stored: a string that no configured value can be, since values may not
// contain a NUL character.
const NullValue = "\x00NULL"

// DomainValues are a column's declared values as written, a null entry
// stored as NullValue.
type DomainValues []string

// UnmarshalYAML reads a sequence of scalars; null (or ~) is NullValue, and
// a value containing a NUL character is refused.
func (d *DomainValues) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("line %d: values must be a list", n.Line)
	}
	out := make(DomainValues, 0, len(n.Content))
	for _, item := range n.Content {
		if item.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: each value must be a number, a string or null", item.Line)
		}
		if item.Tag == "!!null" {
			out = append(out, NullValue)
			continue
		}
		if strings.ContainsRune(item.Value, 0) {
			return fmt.Errorf("line %d: values must not contain NUL characters", item.Line)
		}
		out = append(out, item.Value)
	}
	*d = out
	return nil
}

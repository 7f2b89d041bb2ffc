package transform

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Examples returns the custom resources of the CSV's alm-examples annotation
// (almExamples, a JSON array) whose kind is one of kinds, in the order of the
// annotation. A kind is written Kind or group/Kind. Each kind must have at
// least one example: the error names every missing kind and lists the
// available ones. A CR without a namespace gets installNs unless the CRD among
// crds that defines it is cluster-scoped (no CRD: assume Namespaced, as most
// are). crds may hold any objects (the whole bundle): only CRDs are read.
//
// JSON key order is kept and the objects print as block-style YAML. Callers
// mark the result with MarkCR.
//
// An example whose kind, namespace and name repeat an earlier one is dropped
// with a warning: CSVs list variants of one object under one name (lws-operator
// has a plain and an infra-node LeaderWorkerSetOperator "cluster"), and a
// cluster can hold only one. The first is the CSV's default; a user who wants
// another variant commits it as an extra manifest.
func Examples(almExamples string, kinds []string, installNs string, crds []*yaml.RNode, warn func(string)) ([]*yaml.RNode, error) {
	kinds = sortedNames(kinds)
	if len(kinds) == 0 {
		return nil, nil
	}
	if strings.TrimSpace(almExamples) == "" {
		return nil, fmt.Errorf("the CSV has no alm-examples annotation (kinds asked for: %s)", strings.Join(kinds, ", "))
	}
	all, err := parseJSONNodes(almExamples)
	if err != nil {
		return nil, fmt.Errorf("alm-examples: %w", err)
	}
	clusterScoped := map[groupKind]bool{}
	for _, c := range crds {
		if !isCRD(c) {
			continue
		}
		group, _ := c.GetString("spec.group")
		kind, _ := c.GetString("spec.names.kind")
		scope, _ := c.GetString("spec.scope")
		clusterScoped[groupKind{group, kind}] = scope == "Cluster"
	}
	want := map[string]bool{}
	for _, k := range kinds {
		want[k] = true
	}
	found := map[string]bool{}
	seen := map[string]int{}
	var available []string
	var out []*yaml.RNode
	for i, n := range all {
		if n.YNode().Kind != yaml.MappingNode {
			return nil, fmt.Errorf("alm-examples[%d]: not an object", i)
		}
		gk := gkOf(n)
		if gk.Kind == "" || n.GetApiVersion() == "" {
			return nil, fmt.Errorf("alm-examples[%d]: apiVersion and kind are required", i)
		}
		available = append(available, gk.Kind)
		var key string
		switch {
		case want[gk.Kind]:
			key = gk.Kind
		case want[gk.String()]:
			key = gk.String()
		default:
			continue
		}
		found[key] = true
		if n.GetName() == "" {
			return nil, fmt.Errorf("alm-examples[%d] (%s): metadata.name is required", i, gk)
		}
		if n.GetNamespace() == "" && !clusterScoped[gk] {
			if err := setNamespace(n, installNs); err != nil {
				return nil, fmt.Errorf("alm-examples[%d]: %w", i, err)
			}
		}
		id := gk.String() + " " + strings.TrimPrefix(n.GetNamespace()+"/"+n.GetName(), "/")
		if first, dup := seen[id]; dup {
			warnf(warn, "alm-examples[%d] (%s) has the same name as alm-examples[%d]: rendered only the first; commit the variant you want as an extra manifest instead", i, id, first)
			continue
		}
		seen[id] = i
		out = append(out, n)
	}
	var missing []string
	for _, k := range kinds {
		if !found[k] {
			missing = append(missing, strconv.Quote(k))
		}
	}
	if len(missing) > 0 {
		slices.Sort(available)
		avail := strings.Join(slices.Compact(available), ", ")
		if avail == "" {
			avail = "none"
		}
		return nil, fmt.Errorf("no alm-examples of kind %s; available kinds: %s", strings.Join(missing, ", "), avail)
	}
	return out, nil
}

// parseJSONNodes decodes a JSON array into one block-style node per element,
// keeping key order (a Go map would not).
func parseJSONNodes(s string) ([]*yaml.RNode, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	root, err := jsonNode(dec)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, errors.New("unexpected end of JSON")
	}
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON array")
	}
	if root.Kind != yaml.SequenceNode {
		return nil, errors.New("not a JSON array")
	}
	out := make([]*yaml.RNode, len(root.Content))
	for i, c := range root.Content {
		out[i] = yaml.NewRNode(c)
	}
	return out, nil
}

// jsonString is a string scalar. Strings YAML 1.1 would read as something
// else ("on", "y", "no") are double-quoted: Argo CD and kubectl read YAML 1.1,
// the encoder only quotes what YAML 1.2 would misread.
func jsonString(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: s}
	if yaml.IsValueNonString(s) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// jsonNode reads one JSON value from dec as a yaml.Node. Scalars carry their
// tag and no style, so the encoder quotes only strings that need it.
func jsonNode(dec *json.Decoder) (*yaml.Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
		if t == '[' {
			n = &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq}
		}
		for dec.More() {
			if n.Kind == yaml.MappingNode {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, jsonString(k.(string)))
			}
			v, err := jsonNode(dec)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, v)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	case string:
		return jsonString(t), nil
	case json.Number:
		tag := yaml.NodeTagInt
		if strings.ContainsAny(t.String(), ".eE") {
			tag = yaml.NodeTagFloat
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: t.String()}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: strconv.FormatBool(t)}, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagNull, Value: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

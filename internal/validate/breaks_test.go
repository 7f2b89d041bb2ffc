package validate_test

// Regression tests from an adversarial review of olm-cmp-check (wt-break):
// each failed on ebd37f0.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/checkproc"
	"github.com/olm-cmp/olm-cmp/internal/validate"
)

// greeterCRD is a CRD whose spec schema has the given extra properties.
func greeterCRD(extraProps int) string {
	var b strings.Builder
	b.WriteString(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: greeters.greeter.example.com
spec:
  group: greeter.example.com
  names: {kind: Greeter, listKind: GreeterList, plural: greeters, singular: greeter}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              message: {type: string}
`)
	for i := range extraProps {
		fmt.Fprintf(&b, "              f%d: {type: string, description: %q}\n", i, strings.Repeat("d", 40))
	}
	return b.String()
}

func parse(t *testing.T, docs ...string) []*yaml.RNode {
	t.Helper()
	var nodes []*yaml.RNode
	for _, d := range docs {
		n, err := yaml.Parse(d)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	return nodes
}

// A custom resource with more problems than a verdict's 64 lines (here 70
// fields its CRD does not define) is one line naming its problems, not
// "olm-cmp-check answered something that is not a verdict: is it the same
// build as olm-cmp?", which sends the user to reinstall olm-cmp.
func TestManyProblemsAreNamedNotBlamedOnTheBuild(t *testing.T) {
	cr := "apiVersion: greeter.example.com/v1\nkind: Greeter\nmetadata:\n  name: g\n  namespace: ns\nspec:\n  message: hi\n"
	for i := range 70 {
		cr += "  typo" + strconv.Itoa(i) + ": x\n"
	}
	_, err := validate.Objects(context.Background(), nil).Filter(parse(t, greeterCRD(0), cr))
	if err == nil {
		t.Fatal("a custom resource with 70 unknown fields passed")
	}
	if !strings.Contains(err.Error(), "typo") || strings.Contains(err.Error(), "same build") {
		t.Errorf("the line does not name the custom resource's problems: %v", err)
	}
}

// The request to olm-cmp-check grows with what the render holds, not with
// custom resources times their CRD's schema: 100 one-line custom resources
// of a 300 KB schema must not make a 30 MB request (a 45 KB repository of
// 330 of them made olm-cmp serve reach 1.7 GB before refusing the request).
func TestCustomResourcesDoNotEachCarryTheirSchema(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell script as the helper")
	}
	dir := t.TempDir()
	size := filepath.Join(dir, "size")
	helper := filepath.Join(dir, checkproc.Executable)
	if err := os.WriteFile(helper, []byte("#!/bin/sh\n/usr/bin/wc -c > "+size+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	defer checkproc.UseExecutable(helper)()
	docs := []string{greeterCRD(3000)}
	input := len(docs[0])
	for i := range 100 {
		cr := fmt.Sprintf("apiVersion: greeter.example.com/v1\nkind: Greeter\nmetadata:\n  name: g%d\n  namespace: ns\nspec:\n  message: hi\n", i)
		docs = append(docs, cr)
		input += len(cr)
	}
	if _, err := validate.Objects(context.Background(), nil).Filter(parse(t, docs...)); err == nil {
		t.Fatal("the render passed though olm-cmp-check failed")
	}
	b, err := os.ReadFile(size)
	if err != nil {
		t.Fatalf("olm-cmp-check was not started: %v", err)
	}
	got, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if got > 4*input {
		t.Errorf("the request is %d bytes for %d bytes of objects: each custom resource carries its CRD's schema", got, input)
	}
}

// The API server evaluates a CRD's x-kubernetes-validations rules on every
// custom resource it creates: one that breaks a rule is refused, so the
// render must refuse it too (olm-cmp-check links CEL already).
func TestCustomResourceBreakingACELRuleIsRefused(t *testing.T) {
	crd := strings.Replace(greeterCRD(0), "            type: object\n            properties:\n",
		"            type: object\n            x-kubernetes-validations:\n            - rule: self.message.size() < 3\n            properties:\n", 1)
	cr := "apiVersion: greeter.example.com/v1\nkind: Greeter\nmetadata:\n  name: g\n  namespace: ns\nspec:\n  message: longer than three\n"
	if _, err := validate.Objects(context.Background(), nil).Filter(parse(t, crd)); err != nil {
		t.Fatalf("the CRD itself is refused: %v", err)
	}
	_, err := validate.Objects(context.Background(), nil).Filter(parse(t, crd, cr))
	if err == nil || !strings.Contains(err.Error(), "self.message.size() < 3") {
		t.Errorf("a custom resource breaking its CRD's rule self.message.size() < 3 was not refused naming the rule: %v", err)
	}
}

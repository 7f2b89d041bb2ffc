package healthcheck

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// HandWritten are the kinds deploy/argocd/health ships hand-written checks for (the seed
// operators'; docs/plugin.md, "Health checks"): they read the conditions those operators
// really write, which a generated check cannot know. A test keeps this list equal to the
// scripts there.
var HandWritten = []string{
	"operator.openshift.io/CertManager",
	"operator.openshift.io/LeaderWorkerSetOperator",
	"sailoperator.io/Istio",
	"sailoperator.io/IstioCNI",
	"sailoperator.io/IstioRevision",
	"sailoperator.io/IstioRevisionTag",
	"sailoperator.io/ZTunnel",
}

// argocdBuiltin lists the group/Kind directories of Argo CD 3.6.1's built-in health checks
// ("_" a wildcard). An argocd-cm key replaces the built-in check of its kind, which knows the
// kind better than a schema does, so those kinds get none.
//
//go:embed argocd-builtin.txt
var argocdBuiltinText string

// ArgoCDBuiltin is argocd-builtin.txt's entries, in file order.
func ArgoCDBuiltin() []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(argocdBuiltinText))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// hasBuiltin: Argo CD 3.6.1 has a check for group/kind, by name or by one of its wildcards.
func hasBuiltin(group, kind string) bool {
	key := group + "/" + kind
	for _, b := range ArgoCDBuiltin() {
		if b == key {
			return true
		}
		if strings.Contains(b, "_") {
			if ok, _ := path.Match(strings.ReplaceAll(b, "_", "*"), key); ok {
				return true
			}
		}
	}
	return false
}

// Source is one rendered bundle: where it came from (for messages), its CSV (the owned and
// internal kinds) and the CRDs the render holds.
type Source struct {
	Name string // e.g. the spec directory
	CSV  *v1alpha1.ClusterServiceVersion
	CRDs []*apiextensionsv1.CustomResourceDefinition
}

// Check is one generated health check.
type Check struct {
	Rule   Rule
	Key    string
	Script string
	Source string // the Source.Name that produced it (the first, when several did)
}

// Outcome is what became of one owned kind that got no check.
type Outcome struct {
	Group, Kind string
	Source      string
	// Verdict is "cannot judge" or "skipped".
	Verdict string
	Why     string
}

// Line is the outcome as health-checks prints it on stderr.
func (o Outcome) Line() string {
	return fmt.Sprintf("%s: %s.%s (%s)", o.Verdict, o.Kind, o.Group, o.Why)
}

// Report is every owned kind of the sources: a check, or why not.
type Report struct {
	Checks   []Check   // sorted by key
	Outcomes []Outcome // sorted by group, kind
}

// internalObjectsAnnotation is OLM's CSV annotation naming the CRDs the operator creates
// itself (not for users to create).
const internalObjectsAnnotation = "operators.operatorframework.io/internal-objects"

// Plan decides every owned CRD of the sources: a check, or an outcome saying why not. Kinds
// are skipped when deploy/argocd has a hand-written check, when Argo CD has a built-in one,
// and when the CSV marks them internal (the operator creates them; an Application never holds
// them, and a check would judge other users' objects of the kind: argocd-cm is global). A kind
// that several sources render gets one check; two different checks for it are an error.
func Plan(sources []Source) (Report, error) {
	var rep Report
	checks := map[string]Check{}
	seen := map[string]bool{}
	for _, s := range sources {
		owned := map[string]bool{}
		for _, d := range s.CSV.Spec.CustomResourceDefinitions.Owned {
			owned[d.Name] = true
		}
		internal, err := internalObjects(s.CSV)
		if err != nil {
			return Report{}, fmt.Errorf("%s: %w", s.Name, err)
		}
		for _, crd := range s.CRDs {
			if !owned[crd.Name] {
				continue // required from another operator, or shipped without being owned
			}
			group, kind := crd.Spec.Group, crd.Spec.Names.Kind
			id := group + "/" + kind
			outcome := func(verdict, why string) {
				if !seen[id] {
					rep.Outcomes = append(rep.Outcomes, Outcome{Group: group, Kind: kind, Source: s.Name, Verdict: verdict, Why: why})
				}
				seen[id] = true
			}
			switch {
			case contains(HandWritten, id):
				outcome("skipped", "olm-cmp ships a hand-written check: deploy/argocd/resource-customizations.yaml")
				continue
			case hasBuiltin(group, kind):
				outcome("skipped", "Argo CD 3.6.1 has a built-in check; an argocd-cm entry would replace it")
				continue
			case internal[crd.Name]:
				outcome("skipped", "internal: the CSV lists it in "+internalObjectsAnnotation+"; the operator creates it, an Application does not")
				continue
			}
			r, err := Decide(crd)
			if cj, ok := err.(*CannotJudge); ok {
				outcome("cannot judge", cj.Why)
				continue
			} else if err != nil {
				return Report{}, err
			}
			key := r.Key()
			if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
				outcome("cannot judge", "its argocd-cm key "+commentText(key)+" is not a valid ConfigMap key")
				continue
			}
			c := Check{Rule: r, Key: key, Script: r.Script(), Source: s.Name}
			if prev, ok := checks[key]; ok {
				if prev.Script != c.Script {
					return Report{}, fmt.Errorf("%s.%s: %s and %s render different schemas for it (version %s and %s), so their checks differ: run health-checks on one of them", kind, group, prev.Source, s.Name, prev.Rule.Version, r.Version)
				}
				continue
			}
			checks[key] = c
			seen[id] = true
		}
	}
	for _, c := range checks {
		rep.Checks = append(rep.Checks, c)
	}
	sort.Slice(rep.Checks, func(i, j int) bool { return rep.Checks[i].Key < rep.Checks[j].Key })
	sort.Slice(rep.Outcomes, func(i, j int) bool {
		a, b := rep.Outcomes[i], rep.Outcomes[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		return a.Kind < b.Kind
	})
	return rep, nil
}

// internalObjects reads the CSV's internal-objects annotation, a JSON list of CRD names.
func internalObjects(csv *v1alpha1.ClusterServiceVersion) (map[string]bool, error) {
	v := csv.Annotations[internalObjectsAnnotation]
	out := map[string]bool{}
	if strings.TrimSpace(v) == "" {
		return out, nil
	}
	var names []string
	if err := json.Unmarshal([]byte(v), &names); err != nil {
		return nil, fmt.Errorf("the CSV's annotation %s is not a JSON list of CRD names: fix the bundle's CSV", internalObjectsAnnotation)
	}
	for _, n := range names {
		out[n] = true
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// Package requirements reports what an operator needs from a cluster without
// OLM or OpenShift: images that cannot be pulled as written, APIs the render
// uses but neither ships nor finds served, OpenShift-only behaviour nothing
// will perform, what the webhook certificate provider needs, and packages that
// must be installed first. It reads the loaded bundle, the effective spec and
// the final rendered objects; it changes nothing.
//
// The report is advice until spec.strict (or --strict) turns it into errors.
// A user states facts about the cluster with spec.clusterAPIs (APIs served
// beyond vanilla Kubernetes) and accepts a finding knowingly with spec.accept
// ("category:subject", globs allowed); accepted findings are still reported,
// marked as accepted, and never fail a render. An accept entry that matches
// no finding is reported by UnmatchedAccept, like every spec entry that
// matches nothing.
package requirements

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/olm-cmp/olm-cmp/internal/bundle"
	"github.com/olm-cmp/olm-cmp/internal/spec"
)

// Category groups findings; it is the part before ":" in spec.accept.
type Category string

const (
	Image        Category = "image"
	API          Category = "api"
	OpenShift    Category = "openshift"
	Certificates Category = "certificates"
	Dependency   Category = "dependency"
	// Signature: an image the trust policy did not verify (in warn mode).
	Signature Category = "signature"
)

// Categories lists every category, in report order.
var Categories = []Category{Image, API, OpenShift, Certificates, Dependency, Signature}

// Severity says how sure the operator is to fail without action. It is not
// the safety report's severity (safety.Severity): a requirement finding never
// fails a render (unless spec.strict), so its words must not say the run
// failed. "required" is what the cluster must have before the operator can
// work; "warning" what may matter, depending on the cluster.
type Severity string

const (
	// Required: the operator (or an object of the render) cannot work as
	// rendered on the cluster described until the cluster has this.
	Required Severity = "required"
	// Warning: likely to fail or to behave differently, depending on the
	// cluster (node credentials, an API installed outside the render, …).
	Warning Severity = "warning"
)

// Finding is one requirement; its JSON form is the `requirements` list of
// `olm-cmp inspect -o json`.
type Finding struct {
	Category Category `json:"category"`
	// Subject is what is needed: an image, an API group (or group/version),
	// an annotation or label, a Secret, a package.
	Subject string `json:"subject"`
	// Source says where in the bundle or render it came from: objects and
	// fields ("Deployment/x container manager"), or a metadata file.
	Source   string   `json:"source"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// Fix names the spec field or the action that resolves it.
	Fix string `json:"fix"`
	// Accepted is true when spec.accept matches the finding; always
	// emitted, false included.
	Accepted bool `json:"accepted"`
	// alias is another key spec.accept entries may name for this finding:
	// the key of a finding it stands for (api:security.openshift.io for
	// openshift:securitycontextconstraints), so entries of either form work.
	alias string
	// level is the Pod Security level an SCC finding asks for (PodSecurityLevel).
	level string
	// rbacOnly marks an api finding on a group only RBAC rules name (RBACOnly).
	rbacOnly bool
}

// RBACOnly reports whether f is an api finding on a group that only the
// operator's RBAC rules name (no object of the render, no required CRD):
// usual for operators, which use such APIs where they are served.
func (f Finding) RBACOnly() bool { return f.rbacOnly }

// PodSecurityLevel is the pod-security.kubernetes.io/enforce level that an
// openshift:securitycontextconstraints or openshift:openshift.io/scc
// finding asks the install namespace for, from the SCCs it names; "" when
// they do not say (a custom SCC, a rule on every SCC) or for other findings.
func (f Finding) PodSecurityLevel() string { return f.level }

// Key is "category:subject", what spec.accept entries match.
func (f Finding) Key() string { return string(f.Category) + ":" + f.Subject }

// Line is the one-line form used for render warnings and errors.
func (f Finding) Line() string {
	return fmt.Sprintf("requirement %s (from %s): %s; fix: %s", f.Key(), f.Source, f.Message, f.Fix)
}

// Printed is the line render, generate and diff print on stderr for a
// finding not accepted, led by its severity word: "required: KEY (from
// SOURCE): MESSAGE; fix: FIX", where "required" already says it is a
// requirement, or "warning: requirement KEY …", told from other warnings.
func (f Finding) Printed() string {
	if f.Severity == Required {
		return fmt.Sprintf("%s: %s (from %s): %s; fix: %s", Required, f.Key(), f.Source, f.Message, f.Fix)
	}
	return string(f.Severity) + ": " + f.Line()
}

// Input is what a report is computed from.
type Input struct {
	Bundle *bundle.Bundle
	Spec   spec.Spec
	// Objects are the final rendered objects (after images, pull secrets,
	// extra manifests, API filtering).
	Objects []*yaml.RNode
	// APIVersions, when non-nil, are the group/versions the cluster serves
	// (Argo CD's KUBE_API_VERSIONS): a missing API is then a fact.
	APIVersions []string
	// Unverified are the images the trust policy did not verify (render's
	// Signatures, in warn mode).
	Unverified []Unverified
}

// Report computes the findings of in, merged (one finding per category and
// subject, its sources listed together), marked accepted where spec.accept
// matches, and sorted by category, subject and source.
func Report(in Input) []Finding {
	var fs []Finding
	fs = append(fs, imageFindings(in)...)
	api := newAPIView(in)
	certs := certificateFindings(in, api)
	openshift := openshiftFindings(in)
	fs = append(fs, api.findings(in, certs, openshift)...)
	fs = append(fs, openshift...)
	fs = append(fs, certs...)
	fs = append(fs, dependencyFindings(in)...)
	fs = append(fs, signatureFindings(in)...)
	fs = merge(fs)
	accept := compileAccept(in.Spec.Accept)
	for i := range fs {
		fs[i].Accepted = accept.matches(fs[i])
	}
	return fs
}

// Pending are the findings not accepted: what strict fails on.
func Pending(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if !f.Accepted {
			out = append(out, f)
		}
	}
	return out
}

// maxSources bounds the sources listed on one merged finding, so a group
// used by forty RBAC rules stays one readable line.
const maxSources = 4

// merge folds findings with the same category and subject into one whose
// source lists theirs (sorted, deduplicated). When their messages differ
// (an image pulled by a ServiceAccount and handed to operands), the kept
// message and fix are the most severe finding's, then the first message in
// sort order, so the choice does not depend on the objects' order. It sorts
// the result.
func merge(in []Finding) []Finding {
	type key struct{ c, s string }
	idx := map[key]int{}
	var out []Finding
	var sources [][]string
	for _, f := range in {
		k := key{string(f.Category), f.Subject}
		i, ok := idx[k]
		if !ok {
			idx[k] = len(out)
			out = append(out, f)
			sources = append(sources, []string{f.Source})
			continue
		}
		sources[i] = append(sources[i], f.Source)
		alias := cmp.Or(out[i].alias, f.alias)
		level := looserLevel(out[i].level, f.level)
		if prefer(f, out[i]) {
			out[i] = f
		}
		out[i].alias, out[i].level = alias, level
	}
	for i := range out {
		s := slices.Compact(slices.Sorted(slices.Values(sources[i])))
		if len(s) > maxSources {
			s = append(s[:maxSources], fmt.Sprintf("%d more", len(s)-maxSources))
		}
		out[i].Source = strings.Join(s, "; ")
	}
	slices.SortFunc(out, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(slices.Index(Categories, a.Category), slices.Index(Categories, b.Category)),
			cmp.Compare(a.Subject, b.Subject),
			cmp.Compare(a.Source, b.Source),
			cmp.Compare(a.Message, b.Message))
	})
	return out
}

// prefer reports whether a's message should replace b's in a merge.
func prefer(a, b Finding) bool {
	if a.Severity != b.Severity {
		return a.Severity == Required
	}
	return a.Message < b.Message
}

// maxListed bounds the findings an unmatched accept entry's message lists.
const maxListed = 10

// UnmatchedAccept returns one line per entry of in.Spec.Accept that matches
// no finding of report (Report(in)): an entry that accepts nothing is a typo
// or outlived its finding, and says so like every spec entry that matches
// nothing (a warning; an error under strict, which render decides). An entry
// counts as matched when it matches a finding of the report for a cluster
// of unknown APIs too (in.APIVersions nil): a spec shared by clusters may
// accept what only some of them lack.
func UnmatchedAccept(in Input, report []Finding) []string {
	unmatched := func(fs []Finding, entries []int) []int {
		var out []int
		for _, i := range entries {
			one := compileAccept(in.Spec.Accept[i : i+1])
			if !slices.ContainsFunc(fs, one.matches) {
				out = append(out, i)
			}
		}
		return out
	}
	all := make([]int, len(in.Spec.Accept))
	for i := range all {
		all[i] = i
	}
	left := unmatched(report, all)
	if len(left) > 0 && in.APIVersions != nil {
		vanilla := in
		vanilla.APIVersions = nil
		left = unmatched(Report(vanilla), left)
	}
	if len(left) == 0 {
		return nil
	}
	var keys []string
	for _, f := range report {
		if !slices.Contains(keys, f.Key()) {
			keys = append(keys, f.Key())
		}
	}
	there := "the report has no findings"
	if len(keys) > 0 {
		there = "findings: " + strings.Join(keys[:min(len(keys), maxListed)], ", ")
		if more := len(keys) - maxListed; more > 0 {
			there += fmt.Sprintf(" (and %d more)", more)
		}
	}
	out := make([]string, len(left))
	for j, i := range left {
		out[j] = fmt.Sprintf("accept %q matched no finding; %s", in.Spec.Accept[i], there)
	}
	return out
}

// Accepts reports whether an entry of spec.accept matches f. An entry is
// "category:subject"; either part may use * (any text, "/" included) and ?;
// "category" alone or "category:*" accepts the whole category. An entry may
// also name a key the finding stands for (its alias).
func Accepts(accept []string, f Finding) bool {
	return compileAccept(accept).matches(f)
}

// acceptList is spec.accept compiled: one regexp per entry, built once per
// report rather than once per entry and finding. Go's regexp runs in time
// linear in the subject, and spec validation bounds the entries' number
// and length (spec.MaxAcceptEntries, spec.MaxAcceptLength).
type acceptList []*regexp.Regexp

func compileAccept(accept []string) acceptList {
	out := make(acceptList, 0, len(accept))
	for _, a := range accept {
		if !strings.Contains(a, ":") {
			a += ":*"
		}
		out = append(out, regexp.MustCompile(globPattern(a)))
	}
	return out
}

func (l acceptList) matches(f Finding) bool {
	for _, re := range l {
		if re.MatchString(f.Key()) || f.alias != "" && re.MatchString(f.alias) {
			return true
		}
	}
	return false
}

// globPattern translates an entry "category:subject" into an anchored
// regexp where * matches any text and ? one character, except ":" (so
// neither crosses from the category into the subject); runs of * are
// collapsed first. path.Match is not used: its * stops at "/", and image
// and API subjects are full of them.
func globPattern(entry string) string {
	c, s, _ := strings.Cut(entry, ":")
	part := func(p string, anything string) string {
		var b strings.Builder
		prevStar := false
		for _, r := range p {
			switch {
			case r == '*' && prevStar:
				continue
			case r == '*':
				b.WriteString(anything + "*")
			case r == '?':
				b.WriteString(anything)
			default:
				b.WriteString(regexp.QuoteMeta(string(r)))
			}
			prevStar = r == '*'
		}
		return b.String()
	}
	// A category has no ":"; a subject may (an image tag, a digest).
	return "^" + part(c, "[^:]") + ":" + part(s, "(?s:.)") + "$"
}

// objectName is "Kind/name" (with the namespace when there is one), the way
// sources name rendered objects.
func objectName(n *yaml.RNode) string {
	return n.GetKind() + "/" + n.GetName()
}

// str is the scalar at path under n, or "" when there is none.
func str(n *yaml.RNode, path ...string) string {
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil {
		return ""
	}
	return yaml.GetValue(v)
}
